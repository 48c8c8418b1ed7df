"""Listen addresses, shared by the servers tracerl runs (collector, gateway).

Both bind to loopback unless told otherwise and warn when told otherwise without a token, so
they parse ``HOST:PORT`` and judge loopback the same way.
"""

from __future__ import annotations

import ipaddress
import socket


def split_hostport(value: str, what: str) -> tuple[str, int]:
    """``"127.0.0.1:4317"`` -> ``("127.0.0.1", 4317)``; ``what`` names the option in the error."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{what} {value!r}: expected HOST:PORT, e.g. 127.0.0.1:4317")
    return host.strip("[]") or "127.0.0.1", int(port)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False
