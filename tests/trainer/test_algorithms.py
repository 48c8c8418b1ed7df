"""Every advantage estimator, weighting and loss on small tensors, with values worked out by
hand in the comments; then agreement with verl's core_algos where both compute the same thing."""

import math

import pytest
import torch

from tracerl.trainer import algorithms as alg


def advantages(name, scores, groups):
    scores = torch.tensor(scores, dtype=torch.float64)
    b, s = alg.rollout_advantages(name, scores, groups)
    return ((scores - b) / s).tolist()


def test_grpo_by_hand():
    # group a: [1, 0, 1, 0] -> mean 0.5, unbiased std sqrt(4 * 0.25 / 3) = 0.57735 -> +-0.866025
    # group b: [1, 1] -> equal rewards, zero advantage; group c: one rollout -> b = 0, s = 1 -> 2.0
    got = advantages("grpo", [1, 0, 1, 0, 1, 1, 2], list("aaaabbc"))
    assert got == pytest.approx([0.866025, -0.866025, 0.866025, -0.866025, 0, 0, 2.0], abs=1e-5)


def test_group_with_equal_rewards_has_zero_advantage_for_every_estimator():
    for name in ("grpo", "grpo_no_std", "rloo"):
        assert advantages(name, [0.7, 0.7, 0.7], ["g"] * 3) == pytest.approx([0, 0, 0], abs=1e-9), name
    # REINFORCE++ whitens over the batch: an all-equal group still maps to zero before the shift
    # by the batch mean of the deviations, which is zero when every group is all-equal.
    assert advantages("reinforce_pp_baseline", [0.7, 0.7, 0.2, 0.2], list("ggHH")) == pytest.approx([0] * 4, abs=1e-9)


def test_grpo_without_std_by_hand():
    # [3, 1] -> mean 2 -> [1, -1]; [5] -> alone, no baseline -> 5
    assert advantages("grpo_no_std", [3, 1, 5], list("xxy")) == pytest.approx([1, -1, 5])


def test_rloo_by_hand():
    # [1, 0, 0]: baselines (0+0)/2 = 0, (1+0)/2 = 0.5, 0.5 -> [1, -0.5, -0.5]
    assert advantages("rloo", [1, 0, 0], ["g"] * 3) == pytest.approx([1, -0.5, -0.5])


def test_reinforce_pp_baseline_by_hand():
    # group x [1, 0] -> d = [0.5, -0.5]; group y [3, 1] -> d = [1, -1]; mean d = 0,
    # unbiased std = sqrt((0.25 + 0.25 + 1 + 1) / 3) = 0.912871 -> d / 0.912871
    got = advantages("reinforce_pp_baseline", [1, 0, 3, 1], list("xxyy"))
    assert got == pytest.approx([0.547723, -0.547723, 1.095445, -1.095445], abs=1e-5)


def test_advantage_is_per_rollout_and_broadcast_to_samples():
    # rollout 0 (reward 1) has 3 samples, rollout 1 (reward 0) has 1: one group of two rollouts.
    # Per rollout: mean 0.5, std sqrt(0.5) -> +-0.707107. Were the statistics taken over the four
    # samples instead, the mean would be 0.75 and the advantages different.
    scores = torch.tensor([1.0, 0.0])
    b, s = alg.rollout_advantages("grpo", scores, ["g", "g"])
    rollout_of_sample = torch.tensor([0, 0, 0, 1])
    credits = torch.tensor([1.0, 1.0, 1.0, 0.0])
    got = alg.sample_advantages(credits, rollout_of_sample, b, s)
    assert got.tolist() == pytest.approx([0.707107, 0.707107, 0.707107, -0.707107], abs=1e-5)


def test_discounted_credit_keeps_the_rollout_baseline():
    # credits 0.81, 0.9, 1.0 (gamma 0.9, R = 1) against the group baseline 0.5 and no std scaling
    b, s = alg.rollout_advantages("grpo_no_std", torch.tensor([1.0, 0.0]), ["g", "g"])
    got = alg.sample_advantages(torch.tensor([0.81, 0.9, 1.0, 0.0]), torch.tensor([0, 0, 0, 1]), b, s)
    assert got.tolist() == pytest.approx([0.31, 0.4, 0.5, -0.5])


def test_rollout_split_in_three_samples_weighs_the_same_as_one_in_one():
    # rollout 0: three samples with 2 + 1 + 3 = 6 trained tokens; rollout 1: one sample, 2 tokens.
    mask = torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 0]])
    w = alg.rollout_token_weights(mask, torch.tensor([0, 0, 0, 1]), n_rollouts=2)
    # R = 2: rollout 0 tokens get 1 / (2 * 6) = 1/12, rollout 1 tokens 1 / (2 * 2) = 1/4
    assert w[0].tolist() == pytest.approx([1 / 12, 1 / 12, 0])
    assert w[3].tolist() == pytest.approx([1 / 4, 1 / 4, 0])
    assert float(w[:3].sum()) == pytest.approx(0.5)
    assert float(w[3].sum()) == pytest.approx(0.5)
    # The same per-token loss of 1 everywhere: each rollout contributes exactly half.
    loss = torch.ones(4, 3)
    assert float((w[:3] * loss[:3]).sum()) == pytest.approx(float((w[3:] * loss[3:]).sum()))
    # Token-mean weighting, for contrast, gives the split rollout 6/8 of the weight.
    t = alg.token_mean_weights(mask)
    assert float(t[:3].sum()) == pytest.approx(0.75)


def test_rollout_without_trained_tokens_weighs_nothing():
    mask = torch.tensor([[0, 0], [1, 1]])
    w = alg.rollout_token_weights(mask, torch.tensor([0, 1]), n_rollouts=2)
    assert w.flatten().tolist() == pytest.approx([0, 0, 0.25, 0.25])


def test_ppo_clip_by_hand():
    logp = torch.log(torch.tensor([1.5, 0.5, 5.0, 1.0]))
    old = torch.zeros(4)
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0])
    loss, clipped = alg.ppo_clip(logp, old, adv, clip_low=0.2, clip_c=3.0)
    # r=1.5, A=1: max(-1.5, -1.2) = -1.2 (clipped); r=0.5, A=-1: max(0.5, 0.8) = 0.8 (clipped);
    # r=5, A=-1: max(5, 1.2) = 5, dual clip min(5, 3) = 3; r=1, A=1: -1, not clipped
    assert loss.tolist() == pytest.approx([-1.2, 0.8, 3.0, -1.0])
    assert clipped.tolist() == [True, True, False, False]


def test_ppo_clip_gradient_vanishes_once_clipped():
    logp = torch.log(torch.tensor([1.5])).requires_grad_()
    loss, _ = alg.ppo_clip(logp, torch.zeros(1), torch.tensor([1.0]))
    loss.sum().backward()
    assert logp.grad.tolist() == [0.0]


def test_reinforce_loss_by_hand():
    loss, _ = alg.reinforce(torch.tensor([-0.5]), torch.tensor([0.0]), torch.tensor([2.0]))
    assert loss.tolist() == [1.0]


def test_kl_k3_by_hand():
    # pi = 0.5, pi_ref = 0.25: d = ln 0.5; exp(d) - d - 1 = 0.5 + 0.693147 - 1 = 0.193147
    got = alg.kl_k3(torch.log(torch.tensor([0.5, 0.3])), torch.log(torch.tensor([0.25, 0.3])))
    assert got.tolist() == pytest.approx([0.193147, 0.0], abs=1e-6)


def test_entropy_and_token_logprobs_by_hand():
    logits = torch.tensor([[0.0, 0.0], [0.0, math.log(3.0)]])
    assert alg.entropy_from_logits(logits).tolist() == pytest.approx(
        [math.log(2), -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))], abs=1e-6)
    assert alg.token_logprobs(logits, torch.tensor([0, 1])).tolist() == pytest.approx(
        [math.log(0.5), math.log(0.75)], abs=1e-6)


def test_unknown_names_are_errors():
    with pytest.raises(ValueError, match="unknown advantage estimator 'gae'"):
        alg.rollout_advantages("gae", torch.tensor([1.0]), ["g"])
    with pytest.raises(ValueError, match="unknown loss weighting"):
        alg.loss_weights("seq", torch.ones(1, 1), torch.tensor([0]), 1)


# --- agreement with verl -----------------------------------------------------------------------

class _VerlActorConfig:
    """The fields verl's compute_policy_loss_vanilla reads from its ActorConfig."""

    def __init__(self, clip_ratio):
        self.clip_ratio, self.clip_ratio_low, self.clip_ratio_high = clip_ratio, clip_ratio, clip_ratio
        self.global_batch_info = {}

    def get(self, key, default=None):
        return {"clip_ratio_c": 3.0}.get(key, default)


@pytest.fixture(scope="module")
def verl_algos():
    pytest.importorskip("verl")
    from verl.trainer.ppo import core_algos

    return core_algos


def _outcome_batch():
    # 7 rollouts, one sample each, responses of 4 tokens with different lengths
    scores = torch.tensor([1.0, 0.0, 0.5, 1.0, 0.2, 0.9, 0.3])
    index = ["a", "a", "a", "b", "b", "b", "c"]
    lengths = [4, 2, 3, 1, 4, 4, 2]
    mask = torch.tensor([[1.0] * n + [0.0] * (4 - n) for n in lengths])
    token_rewards = torch.zeros(7, 4)
    for i, n in enumerate(lengths):
        token_rewards[i, n - 1] = scores[i]
    return scores, index, mask, token_rewards


@pytest.mark.parametrize("ours,theirs,kwargs", [
    ("grpo", "compute_grpo_outcome_advantage", {"norm_adv_by_std_in_grpo": True}),
    ("grpo_no_std", "compute_grpo_outcome_advantage", {"norm_adv_by_std_in_grpo": False}),
    ("rloo", "compute_rloo_outcome_advantage", {}),
])
def test_advantages_agree_with_verl(verl_algos, ours, theirs, kwargs):
    import numpy as np

    scores, index, mask, token_rewards = _outcome_batch()
    expected, _ = getattr(verl_algos, theirs)(token_rewards, mask, np.array(index), **kwargs)
    b, s = alg.rollout_advantages(ours, scores, index)
    got = alg.sample_advantages(scores, torch.arange(7), b, s).unsqueeze(-1) * mask
    assert got.float().flatten().tolist() == pytest.approx(expected.flatten().tolist(), abs=1e-5)


def test_reinforce_pp_baseline_agrees_with_verl_on_one_token_responses(verl_algos):
    import numpy as np

    scores = torch.tensor([1.0, 0.0, 0.5, 1.0, 0.2, 0.9])
    index = np.array(list("aaabbb"))
    mask = torch.ones(6, 1)
    expected, _ = verl_algos.compute_reinforce_plus_plus_baseline_outcome_advantage(scores.unsqueeze(-1), mask, index)
    b, s = alg.rollout_advantages("reinforce_pp_baseline", scores, list(index))
    got = (scores - b) / s
    assert got.float().tolist() == pytest.approx(expected.squeeze(-1).tolist(), abs=1e-4)


def test_ppo_clip_loss_and_aggregation_agree_with_verl(verl_algos):
    torch.manual_seed(0)
    logp, old = -torch.rand(5, 6) * 3, -torch.rand(5, 6) * 3
    adv = torch.randn(5, 1).expand(5, 6).contiguous()
    mask = (torch.rand(5, 6) > 0.3).float()
    mask[:, 0] = 1.0
    loss, clipped = alg.ppo_clip(logp, old, adv, clip_low=0.2, clip_c=3.0)
    one_sample_per_rollout = torch.arange(5)
    for mode, weights in (("token-mean", alg.token_mean_weights(mask)),
                          ("seq-mean-token-mean", alg.rollout_token_weights(mask, one_sample_per_rollout, 5))):
        expected, metrics = verl_algos.compute_policy_loss_vanilla(
            old, logp, adv, mask, loss_agg_mode=mode, config=_VerlActorConfig(0.2))
        assert float((weights * loss).sum()) == pytest.approx(float(expected), abs=1e-5), mode
    clipfrac = float((clipped.float() * mask).sum() / mask.sum())
    assert clipfrac == pytest.approx(metrics["actor/pg_clipfrac"], abs=1e-6)


def test_kl_agrees_with_verl_low_var_kl(verl_algos):
    torch.manual_seed(1)
    logp, ref = -torch.rand(3, 5) * 4, -torch.rand(3, 5) * 4
    expected = verl_algos.kl_penalty_forward(logp, ref, "low_var_kl")
    assert alg.kl_k3(logp, ref).flatten().tolist() == pytest.approx(expected.flatten().tolist(), abs=1e-6)
