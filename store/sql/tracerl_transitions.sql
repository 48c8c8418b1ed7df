-- The training samples the transition builder writes: one row per transition (one LLM call, or
-- one merged trajectory with --aggregate trajectory) of a built rollout. A rebuild deletes a
-- trace's rows before writing new ones; ReplacingMergeTree also folds rows that two concurrent
-- builds wrote for the same (trace_id, step), so `FINAL` always reads one build.
CREATE TABLE IF NOT EXISTS `${database}`.`tracerl_transitions` (
    trace_id String,
    step UInt32,
    group_id String,
    task_id String,
    attempt Int64,
    mode LowCardinality(String),
    agent LowCardinality(String),
    span_ids Array(String),
    prompt_ids Array(UInt32),
    response_ids Array(UInt32),
    response_mask Array(UInt8),
    logprobs Array(Float32),
    reward Float64,
    step_reward Float64,
    credit Float64,
    credit_strategy LowCardinality(String),
    flags Array(LowCardinality(String)),
    policy_version String,
    built_at DateTime64(3)
) ENGINE = ReplacingMergeTree(built_at)
ORDER BY (trace_id, step)
