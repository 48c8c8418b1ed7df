-- Of the given traces, those whose latest build wrote transitions.
SELECT trace_id FROM `${database}`.`tracerl_builds` FINAL
WHERE status = 'built' AND trace_id IN {trace_ids:Array(String)}
