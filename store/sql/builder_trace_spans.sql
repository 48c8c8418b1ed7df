-- Every span of the selected traces, with the columns the builder reads. Resource attributes
-- are cut to tracerl's own keys (rollout identity, schema version): the rest is never read.
SELECT
    TraceId, SpanId, ParentSpanId, SpanName,
    toUnixTimestamp64Nano(Timestamp) AS StartNs, Duration, StatusCode, ServiceName,
    mapFilter((k, v) -> startsWith(k, 'tracerl.'), ResourceAttributes) AS ResourceAttributes,
    SpanAttributes
FROM `${database}`.`${table}`
WHERE TraceId IN {trace_ids:Array(String)}
