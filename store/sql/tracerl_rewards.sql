-- One row per reward span (tracerl.reward): its name, value, components, and whether it was
-- supplied after the fact (`tracerl reward`, source = 'offline').
CREATE VIEW IF NOT EXISTS `${database}`.`tracerl_rewards` AS
SELECT
    TraceId AS trace_id,
    SpanId AS span_id,
    ParentSpanId AS parent_span_id,
    Timestamp AS time,
    ServiceName AS service,
    SpanAttributes['tracerl.reward.name'] AS name,
    toFloat64OrNull(SpanAttributes['tracerl.reward.value']) AS value,
    CAST(mapApply((k, v) -> (substring(k, 26), toFloat64OrZero(v)),
                  mapFilter((k, v) -> startsWith(k, 'tracerl.reward.component.'), SpanAttributes))
         AS Map(String, Float64)) AS components,
    SpanAttributes['tracerl.reward.source'] AS source
FROM `${database}`.`${table}`
WHERE SpanName = 'tracerl.reward'
