"""Credit assignment: how a rollout's rewards become each transition's credit.

A small registry; each strategy maps (step rewards r_0..r_{T-1}, final reward R, gamma) to one
credit per step, where the steps are the rollout's samples in time order (T of them): single LLM
calls, or merged trajectories under ``--aggregate trajectory``; r_t is the sum of the
intermediate rewards attached to step t. The trainer turns credits into advantages per rollout.
"""

from __future__ import annotations

from typing import Callable

Strategy = Callable[[list[float], float, float], list[float]]
STRATEGIES: dict[str, Strategy] = {}


def strategy(name: str):
    def register(fn: Strategy) -> Strategy:
        STRATEGIES[name] = fn
        return fn
    return register


@strategy("identical")
def identical(step_rewards: list[float], final: float, gamma: float) -> list[float]:
    """credit_t = R. Every transition gets the final reward (LightningRL's default): each call
    is judged by the outcome of the whole rollout."""
    return [final] * len(step_rewards)


@strategy("discounted")
def discounted(step_rewards: list[float], final: float, gamma: float) -> list[float]:
    """credit_t = gamma^(T-1-t) * R. The last step gets R, each step further back one more
    factor gamma: earlier decisions are held less responsible for the outcome."""
    steps = len(step_rewards)
    return [final * gamma ** (steps - 1 - t) for t in range(steps)]


@strategy("stepwise")
def stepwise(step_rewards: list[float], final: float, gamma: float) -> list[float]:
    """credit_t = r_t + R. Each step keeps its own intermediate reward (a verifier's score of
    that step) on top of the final reward of the rollout."""
    return [r + final for r in step_rewards]


def assign_credit(name: str, step_rewards: list[float], final: float, gamma: float = 1.0) -> list[float]:
    try:
        fn = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown credit strategy {name!r}; one of {sorted(STRATEGIES)}") from None
    return fn(step_rewards, final, gamma)
