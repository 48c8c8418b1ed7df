-- The steps of one training run, in order (`tracerl report`).
SELECT * FROM `${database}`.`tracerl_train_steps` FINAL
WHERE run_id = {run_id:String}
ORDER BY step
