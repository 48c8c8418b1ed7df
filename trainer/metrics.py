"""What a step did, as one row of `tracerl_train_steps` (and of ``metrics.jsonl`` in the output
folder), and the console display (rich)."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

from tracerl.store.trainer import TRAIN_STEP_COLUMNS, rollout_rewards_query, write_train_step


def rollout_rewards(client, trace_ids: list[str], database: str = "default") -> dict:
    """trace id -> final reward (None: no reward recorded)."""
    if not trace_ids:
        return {}
    rows = client.query(rollout_rewards_query(database), parameters={"trace_ids": list(trace_ids)}).result_rows
    return {trace_id: (None if reward is None else float(reward)) for trace_id, reward in rows}


def reward_stats(rewards: list, launched: int, threshold: float) -> dict:
    """Mean and std (population) of the rewards received; success rate over every launched
    rollout (a failed rollout is not a success)."""
    got = [r for r in rewards if r is not None]
    mean = sum(got) / len(got) if got else 0.0
    std = math.sqrt(sum((r - mean) ** 2 for r in got) / len(got)) if got else 0.0
    success = sum(1 for r in got if r >= threshold) / launched if launched else 0.0
    return {"reward_mean": mean, "reward_std": std, "success_rate": success}


def step_row(run_id: str, step: int, policy_version: int, **values) -> dict:
    row = {name: 0 for name in TRAIN_STEP_COLUMNS}
    row.update(run_id=run_id, step=step, policy_version=policy_version, time=datetime.now(timezone.utc),
               eval_success_rate=None)
    row.update({k: v for k, v in values.items() if k in row})
    return row


def record(client, row: dict, output_dir: str | Path, database: str = "default") -> None:
    write_train_step(client, row, database)
    with open(Path(output_dir) / "metrics.jsonl", "a") as f:
        f.write(json.dumps({**row, "time": row["time"].isoformat()}) + "\n")


def read_jsonl(output_dir: str | Path) -> list[dict]:
    """The steps of a run from its ``metrics.jsonl``; the latest row of a step wins (a resumed
    run may repeat a step)."""
    rows = {}
    path = Path(output_dir) / "metrics.jsonl"
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["step"]] = row
    return [rows[k] for k in sorted(rows)]


class Console:
    """One line per step, and a status line while a step runs."""

    def __init__(self, enabled: bool = True, total_steps: int = 0):
        self.enabled = enabled
        self.total = total_steps
        self._progress = None
        if enabled:
            from rich.console import Console as RichConsole
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.console = RichConsole(stderr=True)
            self._progress = Progress(TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.description}"), TimeElapsedColumn(),
                                      console=self.console, transient=True)
            self._task = self._progress.add_task("starting", total=total_steps)
            self._progress.start()

    def status(self, text: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=text)

    def step(self, row: dict) -> None:
        if not self.enabled:
            return
        evaluation = "" if row.get("eval_success_rate") is None else f"  eval {row['eval_success_rate']:.2f}"
        self.console.log(
            f"step {row['step']}/{self.total}  v{row['policy_version']}  reward {row['reward_mean']:.3f}"
            f"±{row['reward_std']:.3f}  success {row['success_rate']:.2f}{evaluation}  failed {row['rollouts_failed']}"
            f"  loss {row['loss']:+.4f}  kl {row['kl']:.4f}  ent {row['entropy']:.3f}  clip {row['clip_fraction']:.3f}"
            f"  tokens {row['tokens']}  time {row['rollout_s']:.1f}/{row['build_s']:.1f}/{row['update_s']:.1f}s")
        if self._progress is not None:
            self._progress.update(self._task, completed=row["step"])

    def note(self, text: str) -> None:
        if self.enabled:
            self.console.log(text)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
