-- One row per trace the builder looked at: built (with how many transitions) or skipped (with
-- the reason), plus what it had to repair. The latest row per trace wins (`FINAL`). Skipped
-- traces are looked at again by the next build (a reward may arrive after the fact).
CREATE TABLE IF NOT EXISTS `${database}`.`tracerl_builds` (
    trace_id String,
    status LowCardinality(String),
    reason LowCardinality(String),
    transitions UInt32,
    duplicate_spans UInt32,
    orphans_repaired UInt32,
    double_recorded UInt32,
    built_at DateTime64(3)
) ENGINE = ReplacingMergeTree(built_at)
ORDER BY trace_id
