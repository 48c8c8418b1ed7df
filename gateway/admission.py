"""Pause and resume around a weight update.

While the trainer swaps the policy's weights, the model server must not start new generations
(they would mix old and new weights), but the ones already running should finish. So the gate
stops admitting model calls while paused: a new call waits for `resume`, up to a timeout after
which it is answered 503 with ``Retry-After`` (OpenAI clients retry that by themselves). Calls
already admitted run to the end; `drained` lets the trainer wait for them before it swaps.
"""

from __future__ import annotations

import asyncio
import time


class Gate:
    def __init__(self, wait_timeout_s: float):
        self.wait_timeout_s = wait_timeout_s
        self.paused = False
        self.in_flight = 0
        self.waiting = 0
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._idle = asyncio.Event()
        self._idle.set()

    async def enter(self) -> bool:
        """Admit one call; False when it waited out the timeout while paused."""
        deadline = time.monotonic() + self.wait_timeout_s
        while self.paused:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.waiting += 1
            try:
                await asyncio.wait_for(self._resumed.wait(), remaining)
            except asyncio.TimeoutError:
                return False
            finally:
                self.waiting -= 1
        self.in_flight += 1
        self._idle.clear()
        return True

    def leave(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    def pause(self) -> None:
        self.paused = True
        self._resumed.clear()

    def resume(self) -> None:
        self.paused = False
        self._resumed.set()

    async def drained(self, timeout_s: float) -> bool:
        """Wait until no admitted call is running; False if some still are after ``timeout_s``."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    def status(self) -> dict:
        return {"paused": self.paused, "in_flight": self.in_flight, "waiting": self.waiting}
