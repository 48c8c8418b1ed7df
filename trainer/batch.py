"""From transitions to what the backend trains on.

Each transition becomes one sample: ``input_ids = prompt_ids + response_ids``; the loss covers
the response positions whose ``response_mask`` is 1 (the tokens the model generated; observation
tokens inside a merged trajectory have mask 0). Advantages are computed per rollout
(`algorithms.rollout_advantages`) and broadcast to the samples; loss weights make each rollout
weigh the same (`algorithms.loss_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import algorithms


@dataclass
class Sample:
    input_ids: list  # prompt + response
    prompt_len: int
    response_mask: list  # 0/1 per response token
    old_logprobs: list | None  # per response token, from the serving engine (None: not recorded)
    advantage: float
    weights: list  # loss weight per response token
    rollout: int  # index of its rollout in the batch


@dataclass
class Batch:
    samples: list
    n_rollouts: int

    @property
    def tokens(self) -> int:
        """Trained (masked-in) response tokens."""
        return int(sum(sum(s.response_mask) for s in self.samples))

    @property
    def has_old_logprobs(self) -> bool:
        return all(s.old_logprobs is not None for s in self.samples)


def make_batch(transitions: list, algorithm) -> Batch:
    """``transitions``: the builder's records of the step's rollouts (any order)."""
    rollout_ids = sorted({t.trace_id for t in transitions})
    index = {trace_id: i for i, trace_id in enumerate(rollout_ids)}
    scores = torch.zeros(len(rollout_ids), dtype=torch.float64)
    groups = [""] * len(rollout_ids)
    for t in transitions:
        scores[index[t.trace_id]] = float(t.reward)
        groups[index[t.trace_id]] = t.group_id
    baseline, scale = algorithms.rollout_advantages(algorithm.advantage, scores, groups, algorithm.eps)
    rollout_of_sample = torch.tensor([index[t.trace_id] for t in transitions], dtype=torch.long)
    credits = torch.tensor([float(t.credit) for t in transitions], dtype=torch.float64)
    advantages = algorithms.sample_advantages(credits, rollout_of_sample, baseline, scale)

    width = max((len(t.response_ids) for t in transitions), default=0)
    mask = torch.zeros(len(transitions), max(width, 1), dtype=torch.float64)
    for row, t in enumerate(transitions):
        mask[row, :len(t.response_mask)] = torch.tensor(list(t.response_mask), dtype=torch.float64)
    weights = algorithms.loss_weights(algorithm.loss_weighting, mask, rollout_of_sample, len(rollout_ids))

    samples = []
    for row, t in enumerate(transitions):
        n = len(t.response_ids)
        logprobs = list(t.logprobs) if len(t.logprobs) == n and "retokenized" not in (t.flags or []) else None
        samples.append(Sample(list(t.prompt_ids) + list(t.response_ids), len(t.prompt_ids),
                              [int(m) for m in t.response_mask], logprobs, float(advantages[row]),
                              weights[row, :n].tolist(), int(rollout_of_sample[row])))
    return Batch(samples, len(rollout_ids))


def micro_batches(samples: list, token_budget: int) -> list[list]:
    """Group samples (longest first) so that rows x longest row <= token_budget per micro-batch
    (padding counts); a sample longer than the budget gets a micro-batch of its own."""
    ordered = sorted(samples, key=lambda s: -len(s.input_ids))
    groups, current, longest = [], [], 0
    for sample in ordered:
        length = len(sample.input_ids)
        if current and max(longest, length) * (len(current) + 1) > token_budget:
            groups.append(current)
            current, longest = [], 0
        current.append(sample)
        longest = max(longest, length)
    if current:
        groups.append(current)
    return groups
