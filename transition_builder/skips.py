"""Why a rollout cannot be trained on. Each reason is counted in the build summary and stored in
`tracerl_builds` (``status = 'skipped'``), so ``SELECT reason, count() FROM tracerl_builds FINAL
WHERE status = 'skipped' GROUP BY reason`` answers "why did my rollouts not train"."""

SCHEMA_VERSION_MISMATCH = "schema_version_mismatch"  # declares a tracerl.schema.version we do not read
UNFINISHED_ROOT = "unfinished_root"  # its root span has not arrived (the rollout is still running)
NO_REWARD = "no_reward"  # no reward span named 'reward' (score it later with `tracerl reward`)
NO_SELECTED_LLM_CALL = "no_llm_call_of_selected_agent"  # no LLM call, or none of the --agents
MISSING_TOKEN_IDS = "missing_token_ids"  # a call without token ids, and no --tokenizer to fall back on

REASONS = (SCHEMA_VERSION_MISMATCH, UNFINISHED_ROOT, NO_REWARD, NO_SELECTED_LLM_CALL, MISSING_TOKEN_IDS)


class Skip(Exception):
    """Raised while reconstructing a rollout that cannot be trained on."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
