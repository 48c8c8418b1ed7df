-- Rollouts the builder should look at: every rollout of `tracerl_rollouts` matching the
-- selection (${conditions}), oldest first. `${built_filter}` leaves out traces already built.
SELECT trace_id
FROM `${database}`.`tracerl_rollouts`
WHERE ${conditions} ${built_filter}
ORDER BY start_time, trace_id
