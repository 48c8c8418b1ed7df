"""The MDP of one rollout, reconstructed from the spans of its trace.

Who acted (each LLM call, attributed to its nearest agent ancestor), in what order (start
time), with what tokens, and what it earned. The calls of the agents selected for training are
the actions; everything else in the trace (tools, other agents, the user) is the environment,
whose effect shows up as observation tokens in the next prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracerl import semconv

from . import skips
from .conventions import LLMCall, agent_name_of, convention_of, normalize
from .double_recording import drop_double_recordings
from .rewards import Rewards, collect_rewards
from .spans import TraceSpans
from .tokens import CallTokens, Retokenizer, captured_tokens
from .tree import SpanTree

NO_AGENT = ""  # the agent of a call made outside any agent span


@dataclass(slots=True)
class Identity:
    task_id: str = ""
    group_id: str = ""
    attempt: int = 0
    mode: str = ""
    policy_version: str = ""


@dataclass(slots=True)
class Rollout:
    trace_id: str
    identity: Identity
    calls: list[LLMCall]  # trainable calls, time order
    tokens: list[CallTokens]
    rewards: Rewards
    stats: dict = field(default_factory=dict)


def identity_of(tree: SpanTree) -> Identity:
    """From the `tracerl.rollout` root span, else from the resource (one process = one rollout)."""
    source: dict = {}
    if tree.root is not None and tree.root.name == semconv.SPAN_ROLLOUT:
        source = tree.root.attrs
    else:
        for span in tree.spans:
            if semconv.ROLLOUT_TASK_ID in span.resource:
                source = span.resource
                break
    task_id = source.get(semconv.ROLLOUT_TASK_ID, "")
    try:
        attempt = int(source.get(semconv.ROLLOUT_ATTEMPT, 0) or 0)
    except ValueError:
        attempt = 0
    policy = source.get(semconv.POLICY_VERSION, "")
    if not policy:
        policy = next((s.resource[semconv.POLICY_VERSION] for s in tree.spans
                       if semconv.POLICY_VERSION in s.resource), "")
    return Identity(task_id, source.get(semconv.ROLLOUT_GROUP_ID) or task_id, attempt,
                    source.get(semconv.ROLLOUT_MODE, ""), policy)


def check_schema_version(tree: SpanTree) -> None:
    declared = set()
    if tree.root is not None and semconv.SCHEMA_VERSION_ATTR in tree.root.attrs:
        declared.add(tree.root.attrs[semconv.SCHEMA_VERSION_ATTR])
    for span in tree.spans:
        if semconv.SCHEMA_VERSION_ATTR in span.resource:
            declared.add(span.resource[semconv.SCHEMA_VERSION_ATTR])
    wrong = declared - {semconv.SCHEMA_VERSION}
    if wrong:
        raise skips.Skip(skips.SCHEMA_VERSION_MISMATCH,
                         f"declares {sorted(wrong)}, this builder reads {semconv.SCHEMA_VERSION}")


def check_finished(tree: SpanTree) -> None:
    """Finished: the root is there (spans are exported when they end, so a stored root has
    ended), or the process itself is the rollout (resource identity: no root span exists)."""
    if tree.root is None and not any(semconv.ROLLOUT_TASK_ID in s.resource for s in tree.spans):
        raise skips.Skip(skips.UNFINISHED_ROOT)


def attribute_agent(call: LLMCall, tree: SpanTree, cache: dict) -> str:
    """The name of the nearest agent span above the call."""
    walked = []
    name = NO_AGENT
    for above in tree.ancestors(call.span):
        if above.span_id in cache:
            name = cache[above.span_id]
            break
        walked.append(above.span_id)
        found = agent_name_of(above)
        if found is not None:
            name = found
            break
    for span_id in walked:
        cache[span_id] = name
    return name


def reconstruct(trace: TraceSpans, agents: re.Pattern | None = None,
                retokenizer: Retokenizer | None = None) -> Rollout:
    """The rollout of one trace, or `skips.Skip` with the reason it cannot be trained on."""
    tree = SpanTree(trace.spans)
    stats = {"duplicate_spans": trace.duplicates, "orphans_repaired": tree.orphans_repaired, "double_recorded": 0}
    check_schema_version(tree)
    check_finished(tree)

    calls, reward_spans = [], []
    for span in tree.spans:  # time order
        if span.name == semconv.SPAN_REWARD:
            reward_spans.append(span)
            continue
        convention = convention_of(span)
        if convention is not None:
            calls.append(normalize(span, convention))
    calls, stats["double_recorded"] = drop_double_recordings(calls, tree)

    cache: dict = {}
    for call in calls:
        call.agent = attribute_agent(call, tree, cache)
    trainable = [c for c in calls if agents is None or agents.fullmatch(c.agent)]

    rewards = collect_rewards(reward_spans, trainable)
    if rewards.final is None:
        raise skips.Skip(skips.NO_REWARD)
    if not trainable:
        raise skips.Skip(skips.NO_SELECTED_LLM_CALL,
                         f"{len(calls)} LLM calls, agents {sorted({c.agent for c in calls})}")

    tokens = []
    for call in trainable:
        found = captured_tokens(call)
        if found is None:
            if retokenizer is None:
                raise skips.Skip(skips.MISSING_TOKEN_IDS, f"span {call.span.span_id}")
            found = retokenizer.tokens(call)
        tokens.append(found)
    stats["unattached_rewards"] = rewards.unattached
    return Rollout(trace.trace_id, identity_of(tree), trainable, tokens, rewards, stats)
