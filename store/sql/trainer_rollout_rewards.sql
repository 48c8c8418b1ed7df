-- The final reward of each given rollout (NULL when it has none), for the trainer's metrics.
SELECT trace_id, final_reward FROM `${database}`.`tracerl_rollouts`
WHERE trace_id IN {trace_ids:Array(String)}
