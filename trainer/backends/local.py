"""The local backend: a transformers causal LM on CPU or one GPU, served by the CPU policy
server in the same process.

An update is one optimizer step over the whole batch: samples are packed into micro-batches
by token budget (`batch.micro_batches`) and their gradients accumulate. The per-token loss
weights already make the sum over all micro-batches the batch loss (each rollout weighing the
same), so accumulation is exact whatever the packing. Weights are fp32; on a GPU with bf16 the
forward and backward run under bf16 autocast.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import torch

from .. import algorithms
from ..batch import Batch, micro_batches

log = logging.getLogger("tracerl.trainer")


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class LocalBackend:
    name = "local"

    def __init__(self, config):
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.config = config
        self.algorithm = config.algorithm
        self.device = resolve_device(config.device)
        use_bf16 = config.dtype == "bfloat16" or (
            config.dtype == "auto" and self.device.type == "cuda" and torch.cuda.is_bf16_supported())
        self.autocast_dtype = torch.bfloat16 if use_bf16 else None
        self.tokenizer = AutoTokenizer.from_pretrained(config.model, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(config.model, local_files_only=True, dtype=torch.float32)
        self.model.to(self.device)
        opt = config.optimizer
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=opt.lr, betas=tuple(opt.betas),
                                           weight_decay=opt.weight_decay)
        self.reference = None
        if self.algorithm.kl_coef > 0:  # the starting weights, frozen
            self.reference = AutoModelForCausalLM.from_pretrained(config.model, local_files_only=True,
                                                                  dtype=torch.float32).to(self.device).eval()
            self.reference.requires_grad_(False)
        self.policy_version = 0
        self.server = None
        self.external_url = config.policy_server.url

    # --- serving ----------------------------------------------------------------------------------
    def start_serving(self) -> str:
        if self.external_url:
            return self.external_url.rstrip("/")
        from ..policy_server import Gateway, PolicyModel, PolicyServer

        ps = self.config.policy_server
        served = PolicyModel(self.config.model, device=str(self.device), dtype=self.config.dtype)
        gateway = Gateway(ps.gateway, ps.admin_token) if ps.gateway else None
        self.server = PolicyServer(served, ps.host, ps.port, max_batch=ps.max_batch, batch_wait_ms=ps.batch_wait_ms,
                                   gateway=gateway, admin_token=ps.admin_token).start()
        self.publish()  # a resumed run serves its checkpoint, not the starting weights
        return self.server.url

    def publish(self) -> None:
        if self.server is not None:
            self.server.reload(state_dict=self.model.state_dict(), version=self.policy_version)
            return
        if self.external_url:  # through a checkpoint folder the external server can read
            import urllib.request

            path = Path(self.config.output_dir) / "published"
            self.model.save_pretrained(path, safe_serialization=True)
            base = self.external_url.rstrip("/").removesuffix("/v1")
            headers = {"content-type": "application/json"}
            if self.config.policy_server.admin_token:
                headers["authorization"] = f"Bearer {self.config.policy_server.admin_token}"
            body = json.dumps({"path": str(path.resolve()), "version": self.policy_version}).encode()
            request = urllib.request.Request(base + "/admin/reload_weights", data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=300) as response:
                response.read()

    # --- the update -------------------------------------------------------------------------------
    def _forward(self, model, rows: list) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Right-padded batch -> (logits at the positions that predict the next token, targets,
        attention mask), each [B, L-1]."""
        width = max(len(s.input_ids) for s in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for r, s in enumerate(rows):
            ids[r, :len(s.input_ids)] = torch.tensor(s.input_ids)
            attention[r, :len(s.input_ids)] = 1
        ids, attention = ids.to(self.device), attention.to(self.device)
        with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None):
            logits = model(input_ids=ids, attention_mask=attention).logits
        return logits[:, :-1].float(), ids[:, 1:], attention

    def _response_tensors(self, rows: list, length: int):
        """Per-position tensors [B, L-1] aligned with the predicting logits: loss weights, the
        trained-token mask, old logprobs, advantages."""
        weights = torch.zeros(len(rows), length, dtype=torch.float32)
        mask = torch.zeros(len(rows), length, dtype=torch.float32)
        old = torch.zeros(len(rows), length, dtype=torch.float32)
        adv = torch.zeros(len(rows), length, dtype=torch.float32)
        for r, s in enumerate(rows):
            start, n = s.prompt_len - 1, len(s.input_ids) - s.prompt_len
            weights[r, start:start + n] = torch.tensor(s.weights, dtype=torch.float32)
            mask[r, start:start + n] = torch.tensor(s.response_mask, dtype=torch.float32)
            if s.old_logprobs is not None:
                old[r, start:start + n] = torch.tensor(s.old_logprobs, dtype=torch.float32)
            adv[r] = s.advantage
        to = self.device
        return weights.to(to), mask.to(to), old.to(to), adv.to(to)

    @torch.no_grad()
    def _recompute_old_logprobs(self, batch: Batch) -> None:
        self.model.eval()
        for rows in micro_batches(batch.samples, self.config.micro_batch_tokens):
            logits, targets, _ = self._forward(self.model, rows)
            logp = algorithms.token_logprobs(logits, targets)
            for r, s in enumerate(rows):
                start = s.prompt_len - 1
                s.old_logprobs = logp[r, start:start + len(s.input_ids) - s.prompt_len].tolist()

    def update(self, batch: Batch) -> dict:
        a = self.algorithm
        if a.old_logprobs == "recompute" or not batch.has_old_logprobs:
            self._recompute_old_logprobs(batch)
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        loss_fn = algorithms.LOSSES[a.loss]
        totals = {"loss": 0.0, "kl": 0.0, "entropy": 0.0, "clipped": 0.0, "tokens": 0.0}
        for rows in micro_batches(batch.samples, self.config.micro_batch_tokens):
            logits, targets, _ = self._forward(self.model, rows)
            weights, mask, old, adv = self._response_tensors(rows, logits.shape[1])
            logp = algorithms.token_logprobs(logits, targets)
            per_token, clipped = loss_fn(logp, old, adv, clip_low=a.clip_ratio, clip_high=a.clip_ratio_high,
                                         clip_c=a.dual_clip)
            if self.reference is not None:
                with torch.no_grad():
                    ref_logits, _, _ = self._forward(self.reference, rows)
                    ref_logp = algorithms.token_logprobs(ref_logits, targets)
                kl = algorithms.kl_k3(logp, ref_logp)
                per_token = per_token + a.kl_coef * kl
            else:
                kl = algorithms.kl_k3(logp.detach(), old)  # drift from the policy that generated the rollouts
            if a.entropy_coef > 0:
                entropy = algorithms.entropy_from_logits(logits)
                per_token = per_token - a.entropy_coef * entropy
            else:
                with torch.no_grad():
                    entropy = algorithms.entropy_from_logits(logits)
            loss = (weights * per_token).sum()
            loss.backward()
            totals["loss"] += float(loss.detach())
            totals["kl"] += float((weights * kl.detach()).sum())
            totals["entropy"] += float((weights * entropy.detach()).sum())
            totals["clipped"] += float((mask * clipped.float()).sum())
            totals["tokens"] += float(mask.sum())
        max_norm = self.config.optimizer.max_grad_norm or math.inf
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm))
        self.optimizer.step()
        self.policy_version += 1
        weight_sum = sum(sum(s.weights) for s in batch.samples) or 1.0  # 1, unless rollouts had no tokens
        return {"loss": totals["loss"], "kl": totals["kl"] / weight_sum, "entropy": totals["entropy"] / weight_sum,
                "clip_fraction": totals["clipped"] / max(totals["tokens"], 1.0), "grad_norm": grad_norm,
                "tokens": int(totals["tokens"])}

    # --- checkpoints ------------------------------------------------------------------------------
    def save_checkpoint(self, path: str, state: dict) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(path, safe_serialization=True)
        self.tokenizer.save_pretrained(path)
        torch.save(self.optimizer.state_dict(), path / "optimizer.pt")
        (path / "trainer_state.json").write_text(json.dumps({**state, "policy_version": self.policy_version}))

    def load_checkpoint(self, path: str) -> dict:
        from safetensors.torch import load_file

        path = Path(path)
        weights = {}
        for f in sorted(path.glob("*.safetensors")):
            weights.update(load_file(str(f)))
        missing, _ = self.model.load_state_dict(weights, strict=False)
        missing = [m for m in missing if m != "lm_head.weight"]  # tied to the embeddings
        if missing:
            raise ValueError(f"checkpoint {path} lacks {missing[:3]}")
        self.model.tie_weights()
        self.optimizer.load_state_dict(torch.load(path / "optimizer.pt", map_location=self.device))
        state = json.loads((path / "trainer_state.json").read_text())
        self.policy_version = int(state["policy_version"])
        return state

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
