"""The training record: one `Transition` per sample of a rollout, with its reward and credit.

Columns match `tracerl_transitions` one to one, so the Python API, the table and the Parquet /
JSONL files hold the same records.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .aggregate import aggregate
from .credit import assign_credit
from .rollout import Rollout


@dataclass(slots=True)
class Transition:
    trace_id: str
    step: int
    group_id: str
    task_id: str
    attempt: int
    mode: str
    agent: str
    span_ids: list
    prompt_ids: list
    response_ids: list
    response_mask: list
    logprobs: list
    reward: float  # the rollout's final reward
    step_reward: float  # the intermediate rewards attached to this sample's calls
    credit: float  # what the credit strategy gives this sample
    credit_strategy: str
    flags: list
    policy_version: str
    built_at: object  # datetime (UTC)

    def as_row(self) -> tuple:
        """The table row (no copies: dataclasses.astuple would deep-copy every id list)."""
        return tuple(getattr(self, name) for name in COLUMNS)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


COLUMNS = tuple(f.name for f in fields(Transition))


def to_transitions(rollout: Rollout, *, credit: str, gamma: float, how: str, built_at) -> list[Transition]:
    samples = aggregate([c.agent for c in rollout.calls], rollout.tokens, how)
    step_rewards = [sum(rollout.rewards.step[i] for i in s.call_indexes) for s in samples]
    final = rollout.rewards.final.value
    credits = assign_credit(credit, step_rewards, final, gamma)
    ident = rollout.identity
    return [
        Transition(rollout.trace_id, step, ident.group_id, ident.task_id, ident.attempt, ident.mode, sample.agent,
                   [rollout.calls[i].span.span_id for i in sample.call_indexes],
                   sample.prompt_ids, sample.response_ids, sample.response_mask, sample.logprobs,
                   final, step_reward, value, credit, sorted(sample.flags), ident.policy_version, built_at)
        for step, (sample, step_reward, value) in enumerate(zip(samples, step_rewards, credits))
    ]
