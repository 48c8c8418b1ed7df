"""The model servers behind the gateway, and which one serves a call.

A rollout sticks to one upstream so that the server's prefix cache (the conversation so far) is
reused from call to call. The choice is rendezvous hashing of the rollout key: each upstream
scores ``hash(key, url)`` and the highest wins, so adding or removing an upstream moves only
the rollouts that hashed to it. The rest of the ranking is the failover order: when the chosen
upstream refuses the connection, the call goes to the next one (the request never reached the
first, so nothing runs twice). Calls without a rollout are spread round-robin.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Address:
    """What the OpenAI-client instrumentation reads from a client's ``base_url`` for
    ``server.address`` / ``server.port`` (the port only when the URL names one)."""

    host: str
    port: int | None


class Upstream:
    def __init__(self, url: str):
        url = url.strip().rstrip("/")
        parts = urlsplit(url if "://" in url else "http://" + url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--upstream {url!r}: expected an http(s) URL such as http://127.0.0.1:8000/v1")
        path = parts.path.rstrip("/")
        if path.endswith("/v1"):
            path = path[: -len("/v1")]
        self.url = url
        # the gateway forwards /v1/... paths, so the root is the URL without its /v1
        self.root = f"{parts.scheme}://{parts.netloc}{path}"
        self.base_url = Address(parts.hostname, parts.port)
        self.calls = 0

    def target(self, path_qs: str) -> str:
        """The upstream URL of a gateway path such as ``/v1/chat/completions?x=1``."""
        return self.root + path_qs

    def __repr__(self) -> str:
        return f"Upstream({self.url})"


def _score(key: str, upstream: Upstream) -> int:
    digest = hashlib.blake2b(f"{key}\x00{upstream.root}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class Upstreams:
    def __init__(self, urls: list[str]):
        if not urls:
            raise ValueError("at least one --upstream is needed")
        self.all = [Upstream(u) for u in urls]
        self._next = itertools.count()

    def ranked(self, key: str | None) -> list[Upstream]:
        """Upstreams in the order to try them: sticky for a rollout key, round-robin without."""
        if len(self.all) == 1:
            return self.all
        if key is None:
            start = next(self._next) % len(self.all)
            return self.all[start:] + self.all[:start]
        return sorted(self.all, key=lambda u: _score(key, u), reverse=True)
