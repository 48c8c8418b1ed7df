"""From token-level calls to training samples: one per call, or merged trajectories.

``transition``: every call is its own sample; the response mask is all ones.

``trajectory``: within one agent's calls in time order, a call whose prompt ids start with the
previous call's prompt + response ids continues the same conversation, so it joins the previous
sample. The tokens between (the tool results and user turns the agent was shown, i.e. the
observation) enter the response with mask 0 and logprob 0.0; the model's own tokens keep mask 1
and their logprobs. A call that does not extend the previous prompt starts a new sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tokens import FLAG_NO_LOGPROBS, CallTokens

FLAG_MERGED = "merged"
AGGREGATIONS = ("transition", "trajectory")


@dataclass(slots=True)
class Sample:
    agent: str
    call_indexes: list  # positions of its calls in the rollout's trainable calls
    prompt_ids: list
    response_ids: list
    response_mask: list
    logprobs: list
    flags: set = field(default_factory=set)


def single(index: int, agent: str, tokens: CallTokens) -> Sample:
    """The call as its own sample. Its id lists are shared, not copied: `merge` builds new lists."""
    return Sample(agent, [index], tokens.prompt_ids, tokens.response_ids,
                  [1] * len(tokens.response_ids), tokens.logprobs, set(tokens.flags))


def extends(sample: Sample, tokens: CallTokens) -> bool:
    """True when the call's prompt is the sample's full sequence so far, then more."""
    full = len(sample.prompt_ids) + len(sample.response_ids)
    prompt = tokens.prompt_ids
    return (len(prompt) >= full and prompt[:len(sample.prompt_ids)] == sample.prompt_ids
            and prompt[len(sample.prompt_ids):full] == sample.response_ids)


def merge(sample: Sample, index: int, tokens: CallTokens) -> None:
    full = len(sample.prompt_ids) + len(sample.response_ids)
    observation = tokens.prompt_ids[full:]
    had_logprobs = bool(sample.logprobs) or not sample.response_ids
    sample.response_ids = sample.response_ids + observation + tokens.response_ids
    sample.response_mask = sample.response_mask + [0] * len(observation) + [1] * len(tokens.response_ids)
    if had_logprobs and tokens.logprobs and FLAG_NO_LOGPROBS not in sample.flags:
        sample.logprobs = sample.logprobs + [0.0] * len(observation) + tokens.logprobs
    else:
        sample.logprobs = []
        sample.flags.add(FLAG_NO_LOGPROBS)
    sample.flags |= set(tokens.flags)
    sample.flags.add(FLAG_MERGED)
    sample.call_indexes.append(index)


def aggregate(agents: list[str], tokens: list[CallTokens], how: str) -> list[Sample]:
    """Samples in the order of their first call. ``agents[i]`` and ``tokens[i]`` describe the
    i-th trainable call of the rollout (time order)."""
    if how not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {how!r}; one of {AGGREGATIONS}")
    samples: list[Sample] = []
    open_by_agent: dict[str, Sample] = {}
    for i, (agent, call_tokens) in enumerate(zip(agents, tokens)):
        current = open_by_agent.get(agent)
        if how == "trajectory" and current is not None and extends(current, call_tokens):
            merge(current, i, call_tokens)
            continue
        sample = single(i, agent, call_tokens)
        samples.append(sample)
        open_by_agent[agent] = sample
    return samples
