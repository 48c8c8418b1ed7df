"""The rewards of one rollout: the final reward, its components, and intermediate rewards.

- Final reward: the latest reward span named ``reward`` (the primary name). A reward written
  after the fact (`tracerl reward`) is the latest, so an offline verifier's verdict wins.
- Intermediate rewards: reward spans (of any name) that a later LLM call of the trainable agents
  follows. Each is attached to the LLM call that precedes it (the latest one ended by then).
- Other reward spans after the last trainable call (an agent's own score superseded by the
  final one, or extra named scores) stay in the trace and in `tracerl_rewards`; they earn no credit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracerl import semconv

from .conventions import LLMCall
from .spans import Span


@dataclass(slots=True)
class Reward:
    span: Span
    name: str
    value: float
    components: dict = field(default_factory=dict)


@dataclass(slots=True)
class Rewards:
    final: Reward | None
    step: list[float]  # per call (same order as the calls given): sum of attached intermediate rewards
    unattached: int = 0  # intermediate rewards with no call before them


def reward_of(span: Span) -> Reward | None:
    """A reward span's name, value and components; None for a span that is no reward (or whose
    value is not a number)."""
    if span.name != semconv.SPAN_REWARD:
        return None
    try:
        value = float(span.attrs.get(semconv.REWARD_VALUE, ""))
    except ValueError:
        return None
    components = {}
    prefix = semconv.REWARD_COMPONENT_PREFIX
    for key, text in span.attrs.items():
        if key.startswith(prefix):
            try:
                components[key[len(prefix):]] = float(text)
            except ValueError:
                pass
    return Reward(span, span.attrs.get(semconv.REWARD_NAME) or semconv.REWARD_PRIMARY, value, components)


def collect_rewards(reward_spans: list[Span], calls: list[LLMCall]) -> Rewards:
    """``calls`` are the trainable calls in time order."""
    rewards = sorted((r for r in map(reward_of, reward_spans) if r is not None), key=lambda r: r.span.start_ns)
    primary = [r for r in rewards if r.name == semconv.REWARD_PRIMARY]
    final = primary[-1] if primary else None
    step = [0.0] * len(calls)
    unattached = 0
    last_call_start = calls[-1].span.start_ns if calls else None
    for reward in rewards:
        if reward is final or last_call_start is None or reward.span.start_ns >= last_call_start:
            continue  # not followed by another call: final, superseded, or extra
        index = _preceding(calls, reward.span.start_ns)
        if index is None:
            unattached += 1
        else:
            step[index] += reward.value
    return Rewards(final, step, unattached)


def _preceding(calls: list[LLMCall], at_ns: int) -> int | None:
    """Index of the latest call that ended at or before ``at_ns``."""
    found, found_end = None, -1
    for i, call in enumerate(calls):
        if found_end <= call.span.end_ns <= at_ns:
            found, found_end = i, call.span.end_ns
    return found
