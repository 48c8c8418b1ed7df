"""The transition builder: from the spans of each rollout (one trace) to training transitions.

    from tracerl.transition_builder import build
    result = build(store="chdb:///path/to/store", credit="discounted", gamma=0.9)
    result.transitions  # list[Transition]: prompt ids, response ids, mask, logprobs, reward, credit
    print(result.report.summary())

Modules, one idea each: `spans` (rows -> spans, duplicates dropped), `tree` (span tree, orphan
repair, root), `conventions` (GenAI / flattened GenAI / OpenInference -> `LLMCall`),
`double_recording`, `rollout` (the MDP: agents, selection, skips), `rewards`, `credit` (strategy
registry), `tokens` (captured ids, re-tokenization), `aggregate` (trajectory merge and masks),
`transitions` (the record), `export` (table, Parquet, JSONL), `skips` (reasons), `build`,
`offline_reward` (`tracerl reward`), `cli`.
"""

from .build import BuildReport, BuildResult, build
from .credit import STRATEGIES, assign_credit
from .transitions import COLUMNS, Transition

__all__ = ["COLUMNS", "STRATEGIES", "BuildReport", "BuildResult", "Transition", "assign_credit", "build"]
