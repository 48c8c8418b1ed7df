-- Keeps `${table}_trace_id_ts` filled on every insert into `${table}`.
CREATE MATERIALIZED VIEW IF NOT EXISTS `${database}`.`${table}_trace_id_ts_mv`
TO `${database}`.`${table}_trace_id_ts`
AS SELECT
    TraceId,
    min(Timestamp) AS Start,
    max(Timestamp) AS End
FROM `${database}`.`${table}`
WHERE TraceId != ''
GROUP BY TraceId
