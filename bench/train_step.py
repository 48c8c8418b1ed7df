"""Time of one local-backend update step (tokens/s) next to a plain forward+backward of the
same tokens, in the same run; prints the overhead ratio (aim: under 1.2x).

Both sides train the same model on the same samples, packed into the same micro-batches by
the same token budget, with an AdamW step at the end. The plain side is a masked token-mean
negative log-likelihood: what any fine-tuning loop does with these tokens. The update side is
`LocalBackend.update`: per-rollout advantages, per-rollout loss weights, PPO-clip, clip
fraction, KL drift and entropy metrics. Old logprobs come from the "serving engine" (here:
made up), as in a run whose transitions carry them, so no extra forward pass is needed.

    .venv/bin/python bench/train_step.py                 # hidden 256, 4 layers, 8k vocab
    .venv/bin/python bench/train_step.py --hidden 512 --layers 8 --rollouts 64 --repeat 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from types import SimpleNamespace

import torch


def make_transitions(n_rollouts: int, group_size: int, vocab: int, prompt_len: int, response_len: int, seed: int):
    rng = random.Random(seed)
    transitions = []
    for r in range(n_rollouts):
        samples = rng.choice([1, 1, 2, 3])  # some rollouts are split into several samples
        reward = float(rng.random() < 0.5)
        for s in range(samples):
            n = rng.randint(response_len // 2, response_len)
            transitions.append(SimpleNamespace(
                trace_id=f"{r:032x}", group_id=f"g{r // group_size}", reward=reward, credit=reward,
                prompt_ids=[rng.randrange(8, vocab) for _ in range(rng.randint(prompt_len // 2, prompt_len))],
                response_ids=[rng.randrange(8, vocab) for _ in range(n)], response_mask=[1] * n,
                logprobs=[-rng.random() * 5 for _ in range(n)], flags=[]))
    return transitions


def plain_step(backend, samples, budget: int) -> None:
    from tracerl.trainer.batch import micro_batches

    model = backend.model
    model.train()
    backend.optimizer.zero_grad(set_to_none=True)
    total = sum(sum(s.response_mask) for s in samples)
    for rows in micro_batches(samples, budget):
        logits, targets, _ = backend._forward(model, rows)
        _, mask, _, _ = backend._response_tensors(rows, logits.shape[1])
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                                reduction="none").view_as(mask)
        ((nll * mask).sum() / total).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    backend.optimizer.step()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--rollouts", type=int, default=32)
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--prompt-len", type=int, default=96)
    p.add_argument("--response-len", type=int, default=64)
    p.add_argument("--micro-batch-tokens", type=int, default=4096)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    from tracerl.trainer.backends.local import LocalBackend
    from tracerl.trainer.batch import make_batch
    from tracerl.trainer.config import parse_config
    from tracerl.trainer.toy import make_toy_model

    folder = tempfile.mkdtemp(prefix="tracerl-bench-")
    make_toy_model(folder, [f"w{i}" for i in range(args.vocab)], hidden_size=args.hidden, layers=args.layers,
                   heads=max(1, args.hidden // 64))
    config = parse_config({"model": folder, "tasks": "unused.jsonl", "runner": {"command": "true"},
                           "optimizer": {"lr": 1e-5}, "micro_batch_tokens": args.micro_batch_tokens,
                           "output_dir": folder, "console": False})
    backend = LocalBackend(config)
    transitions = make_transitions(args.rollouts, args.group_size, len(backend.tokenizer), args.prompt_len,
                                   args.response_len, seed=0)
    batch = make_batch(transitions, config.algorithm)
    tokens = sum(len(s.input_ids) for s in batch.samples)
    print(f"model: {sum(p.numel() for p in backend.model.parameters()) / 1e6:.1f}M parameters, device "
          f"{backend.device}, {torch.get_num_threads()} threads; batch: {args.rollouts} rollouts, "
          f"{len(batch.samples)} samples, {tokens} tokens ({batch.tokens} trained)")

    plain_step(backend, batch.samples, args.micro_batch_tokens)  # warm-up, both paths
    backend.update(batch)
    plain, update = [], []
    for _ in range(args.repeat):  # interleaved, so drift affects both alike
        clock = time.perf_counter()
        plain_step(backend, batch.samples, args.micro_batch_tokens)
        plain.append(time.perf_counter() - clock)
        clock = time.perf_counter()
        backend.update(batch)
        update.append(time.perf_counter() - clock)
    p_s, u_s = statistics.median(plain), statistics.median(update)
    print(f"plain forward+backward+step: {p_s * 1000:8.1f} ms  {tokens / p_s:10.0f} tokens/s")
    print(f"tracerl update step:         {u_s * 1000:8.1f} ms  {tokens / u_s:10.0f} tokens/s")
    print(f"overhead ratio (update / plain): {u_s / p_s:.3f}x")


if __name__ == "__main__":
    main()
