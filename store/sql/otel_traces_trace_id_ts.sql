-- First and last span time of each trace: lets a reader find one trace's partitions fast.
-- Same definition as the contrib exporter's lookup table.
CREATE TABLE IF NOT EXISTS `${database}`.`${table}_trace_id_ts` (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = AggregatingMergeTree
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId)
${ttl_start_clause}
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1
