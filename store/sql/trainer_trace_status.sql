-- How far each given rollout has arrived: its root span (a stored span has ended) and how many
-- spans are in. The trainer calls a rollout complete when the root is in and the count stopped
-- changing for a quiet period.
SELECT TraceId AS trace_id,
       countIf(SpanName = 'tracerl.rollout' AND ParentSpanId = '') > 0 AS has_root,
       count() AS spans
FROM `${database}`.`${table}`
WHERE TraceId IN {trace_ids:Array(String)}
GROUP BY TraceId
