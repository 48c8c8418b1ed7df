"""The trainer: run the agent on tasks, wait for its traces, build transitions, update the
policy, serve the new weights to the next rollouts (`tracerl train CONFIG.yaml`).

Modules, one idea each: `config` (YAML -> validated dataclasses), `tasks` (tasks.jsonl),
`runner/` (command, python, kubernetes), `traces` (waiting until rollouts are in the store),
`algorithms` (advantage estimators, losses), `batch` (transitions -> tensors), `backends/`
(the local torch backend and the interface the verl backend implements), `policy_server`
(`tracerl serve-policy`), `toy` (a tiny model made from scratch), `metrics` (the
`tracerl_train_steps` table and the console), `report` (`tracerl report`), `loop` (the loop).
"""
