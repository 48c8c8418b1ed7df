"""Advantage estimators and policy losses: small functions, each with its formula.

Notation. A step trains on R rollouts. Rollout i belongs to group g(i) (the GRPO group: the
rollouts of one task) and has score R_i, its final reward. The transition builder split it into
samples t = 0..T_i-1 (one per LLM call, or per merged trajectory), each with credit c_{i,t}
(with the default `identical` credit, c_{i,t} = R_i).

Advantages are computed per rollout, never per sample (DESIGN.md, "The math the trainer must
get right"): an estimator turns the R scores into a baseline b_i and a scale s_i per rollout, and
every sample of rollout i gets

    A_{i,t} = (c_{i,t} - b_i) / s_i

so a rollout that happens to be split into more samples does not move its group's statistics.
With identical credit this is the rollout's advantage (R_i - b_i) / s_i broadcast to its samples.

Losses are per token; `rollout_token_weights` makes each rollout weigh the same in the batch
whatever its number of samples and tokens. Where verl's `core_algos` computes the same thing,
tests/trainer/test_algorithms.py checks that the numbers agree.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Hashable, Sequence

import torch

Estimator = Callable[[torch.Tensor, Sequence[Hashable], float], tuple[torch.Tensor, torch.Tensor]]
ADVANTAGES: dict[str, Estimator] = {}


def estimator(name: str):
    def register(fn: Estimator) -> Estimator:
        ADVANTAGES[name] = fn
        return fn
    return register


def _group_members(groups: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    return members


@estimator("grpo")
def grpo(scores: torch.Tensor, groups: Sequence[Hashable], eps: float = 1e-6):
    """GRPO: b_i = mean_{j in g(i)} R_j, s_i = std_{j in g(i)} R_j + eps (unbiased std, n-1).

    A group of one rollout has no baseline: b_i = 0, s_i = 1 (as verl does). A group whose
    rewards are all equal gets A = 0 for every rollout: nothing to learn from it.
    """
    baseline, scale = torch.zeros_like(scores), torch.ones_like(scores)
    for idx in _group_members(groups).values():
        if len(idx) > 1:
            group = scores[idx]
            baseline[idx] = group.mean()
            scale[idx] = group.std() + eps
    return baseline, scale


@estimator("grpo_no_std")
def grpo_no_std(scores: torch.Tensor, groups: Sequence[Hashable], eps: float = 1e-6):
    """GRPO without std normalization (Dr. GRPO): b_i = mean_{j in g(i)} R_j, s_i = 1.

    A group of one rollout: b_i = 0.
    """
    baseline, _ = grpo(scores, groups, eps)
    return baseline, torch.ones_like(scores)


@estimator("rloo")
def rloo(scores: torch.Tensor, groups: Sequence[Hashable], eps: float = 1e-6):
    """RLOO (leave one out): b_i = (sum_{j in g(i)} R_j - R_i) / (n - 1), s_i = 1, n = |g(i)|.

    Equivalently A_i = n/(n-1) * (R_i - mean_g R). A group of one rollout: b_i = 0.
    """
    baseline, scale = torch.zeros_like(scores), torch.ones_like(scores)
    for idx in _group_members(groups).values():
        n = len(idx)
        if n > 1:
            group = scores[idx]
            baseline[idx] = (group.sum() - group) / (n - 1)
    return baseline, scale


@estimator("reinforce_pp_baseline")
def reinforce_pp_baseline(scores: torch.Tensor, groups: Sequence[Hashable], eps: float = 1e-6):
    """REINFORCE++ with baseline: d_i = R_i - mean_{j in g(i)} R_j, then whitened over the batch
    of rollouts: A_i = (d_i - mean_k d_k) / (std_k d_k + eps) (unbiased std over rollouts).

    So b_i = mean_g R + mean_k d_k and s_i = std_k d_k + eps. (verl whitens over tokens, which
    weighs long responses more; here each rollout counts once. The two agree when every rollout
    is one sample of equal length.) A group of one rollout: d_i = R_i.
    """
    group_mean, _ = grpo(scores, groups, eps)
    d = scores - group_mean
    if len(scores) > 1:
        shift, spread = d.mean(), d.std() + eps
    else:
        shift, spread = torch.zeros(()), torch.ones(())
    return group_mean + shift, torch.full_like(scores, float(spread))


def rollout_advantages(name: str, scores: torch.Tensor, groups: Sequence[Hashable], eps: float = 1e-6):
    """(baseline, scale) per rollout from the estimator ``name``."""
    try:
        fn = ADVANTAGES[name]
    except KeyError:
        raise ValueError(f"unknown advantage estimator {name!r}; one of {sorted(ADVANTAGES)}") from None
    return fn(scores.to(torch.float64), groups, eps)


def sample_advantages(credits: torch.Tensor, rollout_of_sample: torch.Tensor, baseline: torch.Tensor,
                      scale: torch.Tensor) -> torch.Tensor:
    """A_{i,t} = (c_{i,t} - b_i) / s_i for every sample, where i = rollout_of_sample[sample]."""
    return (credits.to(torch.float64) - baseline[rollout_of_sample]) / scale[rollout_of_sample]


# --- loss weights ------------------------------------------------------------------------------

def rollout_token_weights(mask: torch.Tensor, rollout_of_sample: torch.Tensor, n_rollouts: int) -> torch.Tensor:
    """Per-token weights w (same shape as ``mask``, [samples, tokens]) for the loss sum(w * l):

        w_{i,t,k} = mask_{t,k} / (R * N_i),   N_i = number of trained tokens of rollout i

    Each rollout's weights sum to 1/R, whether its N_i tokens are in one sample or in many: a
    rollout split into 3 samples weighs the same as one split into 1. Within a rollout every
    trained token weighs the same. A rollout without trained tokens weighs nothing.
    """
    mask = mask.to(torch.float64)
    per_sample = mask.sum(dim=-1)
    per_rollout = torch.zeros(n_rollouts, dtype=torch.float64).index_add_(0, rollout_of_sample, per_sample)
    denominator = (per_rollout * n_rollouts)[rollout_of_sample].clamp(min=1.0)
    return mask / denominator.unsqueeze(-1)


def token_mean_weights(mask: torch.Tensor) -> torch.Tensor:
    """w_k = mask_k / sum(mask): every trained token of the batch weighs the same, so long
    rollouts weigh more (verl's `token-mean`; here for comparison, not the default)."""
    mask = mask.to(torch.float64)
    return mask / mask.sum().clamp(min=1.0)


WEIGHTINGS = {"rollout": "rollout_token_weights", "token": "token_mean_weights"}


def loss_weights(how: str, mask: torch.Tensor, rollout_of_sample: torch.Tensor, n_rollouts: int) -> torch.Tensor:
    if how == "rollout":
        return rollout_token_weights(mask, rollout_of_sample, n_rollouts)
    if how == "token":
        return token_mean_weights(mask)
    raise ValueError(f"unknown loss weighting {how!r}; one of {sorted(WEIGHTINGS)}")


# --- per-token losses --------------------------------------------------------------------------

Loss = Callable[..., tuple[torch.Tensor, torch.Tensor]]
LOSSES: dict[str, Loss] = {}


def policy_loss(name: str):
    def register(fn: Loss) -> Loss:
        LOSSES[name] = fn
        return fn
    return register


@policy_loss("ppo_clip")
def ppo_clip(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, clip_low: float = 0.2,
             clip_high: float | None = None, clip_c: float | None = 3.0):
    """PPO-clip, per token, with ratio r = exp(logp - old_logp) (log-ratio clamped to [-20, 20]):

        l = max(-A r, -A clip(r, 1 - eps_low, 1 + eps_high))
        and, for A < 0 with dual clip c > 1: l = min(l, -A c)

    Returns (l, clipped) where clipped marks tokens whose clipped term was the larger one
    (the clip fraction metric).
    """
    clip_high = clip_low if clip_high is None else clip_high
    ratio = torch.exp(torch.clamp(logp - old_logp, -20.0, 20.0))
    unclipped = -advantages * ratio
    clipped_term = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped_term)
    if clip_c is not None:
        loss = torch.where(advantages < 0, torch.minimum(loss, -advantages * clip_c), loss)
    return loss, (clipped_term > unclipped)


@policy_loss("reinforce")
def reinforce(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, **_):
    """Plain policy gradient: l = -A logp (no ratio, no clip)."""
    return -advantages * logp, torch.zeros_like(logp, dtype=torch.bool)


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """KL(pi || pi_ref) per token, Schulman's k3 estimator (unbiased, never negative):

        kl = exp(ref_logp - logp) - (ref_logp - logp) - 1

    with the log-ratio clamped to [-20, 20] and the result to [-10, 10], as verl's low_var_kl.
    """
    d = torch.clamp(ref_logp - logp, -20.0, 20.0)
    return torch.clamp(torch.exp(d) - d - 1.0, -10.0, 10.0)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """H = logsumexp(z) - sum softmax(z) z, per position (nats)."""
    p = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (p * logits).sum(dim=-1)


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log softmax(z)[target] per position, without materializing the full log-softmax twice."""
    return torch.gather(logits.log_softmax(dim=-1), -1, targets.unsqueeze(-1)).squeeze(-1)
