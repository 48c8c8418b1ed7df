-- A rebuild replaces a trace's transitions: the old rows go first.
DELETE FROM `${database}`.`tracerl_transitions` WHERE trace_id IN {trace_ids:Array(String)}
