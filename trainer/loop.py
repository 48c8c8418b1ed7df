"""The training loop, top to bottom.

    for each step:
        1. launch group_size rollouts of each of tasks_per_step tasks (the runner), stamped with
           the current policy version, against the policy endpoint;
        2. wait until their traces are complete in the store;
        3. build their transitions (the transition builder: credit, aggregation, token ids);
        4. advantages per rollout, loss weights per rollout, one update (the backend);
        5. publish the new weights to the serving endpoint (policy version + 1);
        6. record the step's metrics (`tracerl_train_steps`, metrics.jsonl, the console);
           checkpoint every K steps and at the end; evaluate on held-out tasks when due.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from . import metrics, tracing
from .batch import make_batch
from .config import TrainConfig, as_dict
from .runner import AgentEndpoints, RolloutSpec, make_runner
from .tasks import load_tasks, tasks_for_step
from .traces import wait_for_traces

log = logging.getLogger("tracerl.trainer")


@dataclass
class StoreAccess:
    client: object  # clickhouse-connect client
    otlp_endpoint: str  # host:port (gRPC) the agents export to
    database: str = "default"
    collector: object = None  # the in-process collector, when the trainer started one

    def close(self) -> None:
        if self.collector is not None:
            self.collector.stop()


def open_store(config: TrainConfig) -> StoreAccess:
    """The collector already serving the store, or one started in this process."""
    import clickhouse_connect

    from tracerl.store import connect, resolve_dsn
    from tracerl.store.owner import read_owner

    dsn = resolve_dsn(config.store)
    if config.collector:
        client = connect(config.store)
        return StoreAccess(client, config.collector, client.database or "default")
    owner = read_owner(dsn.path) if dsn.embedded else None
    if owner is not None and owner.otlp_grpc:
        client = connect(config.store)
        return StoreAccess(client, owner.otlp_grpc, client.database or "default")
    from tracerl.collector.server import Collector, CollectorConfig

    collector = Collector(CollectorConfig(store=config.store, grpc="127.0.0.1:0", http=None,
                                          query="127.0.0.1:0")).start()
    database = dsn.database or "default"
    if dsn.embedded:  # this process owns the store now: query it through the endpoint it serves
        client = clickhouse_connect.get_client(host="127.0.0.1", port=collector.query_port, database=database)
    else:
        client = connect(config.store)
    return StoreAccess(client, f"127.0.0.1:{collector.grpc_port}", database, collector)


@dataclass
class RunState:
    run_id: str
    step: int = 0  # the last finished step
    history: list = field(default_factory=list)  # metric rows of this process's steps


def latest_checkpoint(output_dir: Path) -> Path | None:
    found = sorted((p for p in (output_dir / "checkpoints").glob("step-*") if (p / "trainer_state.json").exists()),
                   key=lambda p: int(p.name.split("-")[1]))
    return found[-1] if found else None


def evaluate(config: TrainConfig, runner, endpoints, store: StoreAccess, tasks: list, version: int) -> float:
    """Success rate on held-out tasks, in mode "val" (never trained on); appended to eval.jsonl."""
    specs = [RolloutSpec(task, f"eval/{task['id']}/v{version}", 0, "val", version, i)
             for i, task in enumerate(t for t in tasks for _ in range(config.eval.group_size))]
    results = runner.run(specs, endpoints)
    tracing.flush()
    ids = [r.trace_id for r in results if r.ok]
    wait_for_traces(store.client, ids, quiet_s=config.traces.quiet_s, timeout_s=config.traces.timeout_s,
                    poll_s=config.traces.poll_s, database=store.database)
    rewards = metrics.rollout_rewards(store.client, ids, store.database)
    rate = metrics.reward_stats([rewards.get(i) for i in ids], len(specs), config.success_threshold)["success_rate"]
    with open(Path(config.output_dir) / "eval.jsonl", "a") as f:
        f.write(json.dumps({"policy_version": version, "rollouts": len(specs), "success_rate": rate}) + "\n")
    return rate


def train(config: TrainConfig) -> RunState:
    from tracerl.store.trainer import ensure_trainer_schema
    from tracerl.transition_builder import build

    from .backends.base import make_backend

    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_file = out / "run.json"
    run_id = json.loads(run_file.read_text())["run_id"] if (config.resume and run_file.exists()) else uuid.uuid4().hex
    run_file.write_text(json.dumps({"run_id": run_id, "store": config.store, "config": as_dict(config)}, indent=2))
    state = RunState(run_id)

    store = open_store(config)
    tracing.setup(store.otlp_endpoint)
    ensure_trainer_schema(store.client.command, store.database)
    tasks = load_tasks(config.tasks)
    eval_tasks = load_tasks(config.eval.tasks)[:config.eval.limit] if config.eval.tasks else []
    backend = make_backend(config)
    runner = None
    console = metrics.Console(config.console, config.steps)
    try:
        checkpoint = latest_checkpoint(out) if config.resume else None
        if checkpoint is not None:
            state.step = int(backend.load_checkpoint(str(checkpoint))["step"])
            console.note(f"resumed from {checkpoint} (step {state.step}, policy version {backend.policy_version})")
        base_url = backend.start_serving()
        endpoints = AgentEndpoints(config.policy_server.agent_url or base_url, store.otlp_endpoint)
        runner = make_runner(config, log_dir=str(out / "logs"))

        eval_rate = None
        if eval_tasks and state.step == 0:
            console.status("evaluating the starting policy")
            eval_rate = evaluate(config, runner, endpoints, store, eval_tasks, backend.policy_version)
            console.note(f"held-out success rate before training: {eval_rate:.3f}")
            state.history.append({"step": 0, "eval_success_rate": eval_rate})

        for step in range(state.step + 1, config.steps + 1):
            started = time.monotonic()
            # 1. rollouts: group_size per task, each group its own id
            drawn = tasks_for_step(tasks, step, config.tasks_per_step, config.seed)
            specs = [RolloutSpec(task, f"{task['id']}/step{step}/{j}", 0, "train", backend.policy_version, 0)
                     for j, task in enumerate(drawn) for _ in range(config.group_size)]
            for i, spec in enumerate(specs):
                spec.index = i
            console.status(f"step {step}: {len(specs)} rollouts (policy v{backend.policy_version})")
            results = runner.run(specs, endpoints)
            tracing.flush()
            # 2. wait for their traces
            console.status(f"step {step}: waiting for traces")
            finished = [r.trace_id for r in results if r.ok]
            complete = wait_for_traces(store.client, finished, quiet_s=config.traces.quiet_s,
                                       timeout_s=config.traces.timeout_s, poll_s=config.traces.poll_s,
                                       database=store.database)
            ready = [t for t in finished if complete.get(t)]
            rollout_s = time.monotonic() - started
            # 3. transitions
            clock = time.monotonic()
            built = build(store.client, traces=ready, agents=config.agents, credit=config.algorithm.credit,
                          gamma=config.algorithm.gamma, aggregate=config.aggregate, database=store.database)
            transitions = [t for t in built.transitions if t.mode == "train"]
            trained = {t.trace_id for t in transitions}
            rewards = metrics.rollout_rewards(store.client, ready, store.database)
            build_s = time.monotonic() - clock
            # 4-5. update and publish
            clock = time.monotonic()
            update = {"loss": 0.0, "kl": 0.0, "entropy": 0.0, "clip_fraction": 0.0, "grad_norm": 0.0, "tokens": 0}
            if transitions:
                batch = make_batch(transitions, config.algorithm)
                update = backend.update(batch)
                console.status(f"step {step}: publishing policy v{backend.policy_version}")
                backend.publish()
            else:
                console.note(f"step {step}: no transitions to train on ({dict(built.report.skipped)}); no update")
            update_s = time.monotonic() - clock
            # 6. record, checkpoint, evaluate
            if config.checkpoint_every and step % config.checkpoint_every == 0 or step == config.steps:
                backend.save_checkpoint(str(out / "checkpoints" / f"step-{step}"), {"step": step, "run_id": run_id})
            eval_rate = None
            if eval_tasks and (step == config.steps or (config.eval.every and step % config.eval.every == 0)):
                console.status(f"step {step}: evaluating")
                eval_rate = evaluate(config, runner, endpoints, store, eval_tasks, backend.policy_version)
            row = metrics.step_row(
                run_id, step, backend.policy_version, rollouts=len(specs), rollouts_failed=len(specs) - len(trained),
                samples=len(transitions), eval_success_rate=eval_rate,
                **metrics.reward_stats([rewards.get(t) for t in ready], len(specs), config.success_threshold),
                **update, rollout_s=rollout_s, build_s=build_s, update_s=update_s,
                step_s=time.monotonic() - started)
            metrics.record(store.client, row, out, store.database)
            console.step(row)
            state.step = step
            state.history.append(row)
    finally:
        console.close()
        if runner is not None and hasattr(runner, "close"):
            runner.close()
        backend.close()
        tracing.flush()
        store.close()
    return state
