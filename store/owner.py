"""The owner file: who holds an embedded store open, and where it serves queries.

chdb lets one process open a given path. The process that owns it (the collector) writes
``<store>.owner.json`` beside the store with its pid and endpoints; every other tracerl process
reads it to decide between that endpoint and opening the path itself. A file whose process is
dead is stale and ignored.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field


@dataclass
class OwnerInfo:
    pid: int
    query_url: str = ""  # ClickHouse-compatible HTTP endpoint, e.g. http://127.0.0.1:8123
    otlp_grpc: str = ""  # host:port
    otlp_http: str = ""  # http://host:port
    token_required: bool = False
    extra: dict = field(default_factory=dict)


def owner_path(store_path: str) -> str:
    return store_path.rstrip("/") + ".owner.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_owner(store_path: str) -> OwnerInfo | None:
    """The live owner of ``store_path``, or None (no file, unreadable file, or dead process)."""
    try:
        with open(owner_path(store_path)) as f:
            data = json.load(f)
        info = OwnerInfo(**data)
    except (OSError, ValueError, TypeError):
        return None
    if info.pid != os.getpid() and not _alive(info.pid):
        return None
    return info


def write_owner(store_path: str, info: OwnerInfo) -> None:
    """Atomically publish ``info`` (write a temp file, then rename)."""
    target = owner_path(store_path)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(info), f)
    os.replace(tmp, target)


def remove_owner(store_path: str) -> None:
    """Remove the owner file if it is ours."""
    info = read_owner(store_path)
    if info is not None and info.pid == os.getpid():
        try:
            os.remove(owner_path(store_path))
        except OSError:
            pass
