"""What the gateway is told on its command line, in one record."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_LISTEN = "127.0.0.1:8090"


@dataclass
class GatewayConfig:
    upstreams: list[str] = field(default_factory=list)  # base URLs, with or without a trailing /v1
    host: str = "127.0.0.1"
    port: int = 8090
    token: str = ""  # required by /admin/* when set (Authorization: Bearer)
    capture_tokens: bool = False  # inject return_token_ids / logprobs (vLLM-style upstreams)
    # LLM calls can be long, so the read timeout is the longest silence between two bytes of a
    # reply (the first one included), not a limit on the whole call.
    upstream_timeout_s: float = 600.0
    connect_timeout_s: float = 10.0
    pause_timeout_s: float = 60.0  # how long a new call waits while paused before a 503
    retry_after_s: int = 5  # Retry-After of that 503
    rollout_idle_s: float = 900.0  # an open rollout with no call for this long is ended; 0: never
    end_wait_s: float = 30.0  # how long ending a rollout waits for its calls still in flight
    max_body_bytes: int = 64 << 20
