"""The interface between the training loop and whatever updates the policy and serves it.

The loop (`loop.py`) knows nothing of torch devices, vLLM or FSDP: it asks its backend to
serve the current policy at an OpenAI-compatible URL, to update on a `Batch`, to publish the new
weights to what serves them, and to save or restore checkpoints. The local backend
(`backends/local.py`: one process, CPU or one GPU, the CPU policy server) implements it; the verl
backend (vLLM rollouts, FSDP/Megatron updates on a cluster) is to implement the same methods.
"""

from __future__ import annotations

from typing import Protocol


class Backend(Protocol):
    policy_version: int  # 0 for the starting weights; +1 with each update

    def start_serving(self) -> str:
        """Serve the current policy; return the OpenAI-compatible base URL (``.../v1``)."""

    def update(self, batch) -> dict:
        """One policy update on a `batch.Batch`; returns metrics (loss, kl, entropy,
        clip_fraction, grad_norm, tokens). Increments ``policy_version``."""

    def publish(self) -> None:
        """Make the serving endpoint answer with the latest weights (in place)."""

    def save_checkpoint(self, path: str, state: dict) -> None:
        """Weights loadable by transformers (safetensors), optimizer, and ``state`` (step...)."""

    def load_checkpoint(self, path: str) -> dict:
        """Restore weights and optimizer from ``path``; returns the saved ``state``."""

    def close(self) -> None:
        """Stop serving and free what the backend holds."""


def make_backend(config) -> Backend:
    if config.backend == "local":
        from .local import LocalBackend

        return LocalBackend(config)
    if config.backend == "verl":
        raise NotImplementedError("backend: verl is not built yet (it has its own issue); it will implement "
                                  "tracerl.trainer.backends.base.Backend with vLLM rollouts. Use backend: local.")
    raise ValueError(f"backend: unknown backend {config.backend!r}")
