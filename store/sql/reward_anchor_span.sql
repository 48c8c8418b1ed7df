-- Where an after-the-fact reward span hangs: the rollout root, else the trace's parentless span,
-- else its earliest span. Also the trace's service and rollout resource (copied to the reward).
SELECT SpanId, ServiceName, mapFilter((k, v) -> startsWith(k, 'tracerl.'), ResourceAttributes) AS Resource
FROM `${database}`.`${table}`
WHERE TraceId = {trace_id:String}
ORDER BY SpanName = 'tracerl.rollout' DESC, ParentSpanId = '' DESC, Timestamp
LIMIT 1
