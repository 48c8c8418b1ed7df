-- One row per training step of `tracerl train`: what the rollouts earned, what the update did,
-- where the time went. `run_id` tells runs apart (one output_dir = one run; a resumed run keeps
-- its id); the latest row of a (run_id, step) wins (`FINAL`).
CREATE TABLE IF NOT EXISTS `${database}`.`tracerl_train_steps` (
    run_id String,
    step UInt32,
    policy_version UInt32,
    time DateTime64(3),
    rollouts UInt32,
    rollouts_failed UInt32,
    reward_mean Float64,
    reward_std Float64,
    success_rate Float64,
    eval_success_rate Nullable(Float64),
    samples UInt32,
    tokens UInt64,
    loss Float64,
    kl Float64,
    entropy Float64,
    clip_fraction Float64,
    grad_norm Float64,
    rollout_s Float64,
    build_s Float64,
    update_s Float64,
    step_s Float64
) ENGINE = ReplacingMergeTree(time)
ORDER BY (run_id, step)
