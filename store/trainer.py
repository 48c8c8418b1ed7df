"""The trainer's part of the store: the `tracerl_train_steps` table and the trainer's queries.

Like the rest of the schema, the SQL is in ``sql/``; creation is idempotent (``IF NOT EXISTS``).
"""

from __future__ import annotations

from string import Template
from typing import Callable

from .queries import named_query
from .schema import DEFAULT_DATABASE, DEFAULT_TRACES_TABLE, check_identifier, load_sql

TRAIN_STEPS_TABLE = "tracerl_train_steps"
TRAIN_STEP_COLUMNS = ("run_id", "step", "policy_version", "time", "rollouts", "rollouts_failed", "reward_mean",
                      "reward_std", "success_rate", "eval_success_rate", "samples", "tokens", "loss", "kl", "entropy",
                      "clip_fraction", "grad_norm", "rollout_s", "build_s", "update_s", "step_s")


def ensure_trainer_schema(execute: Callable[[str], object], database: str = DEFAULT_DATABASE) -> None:
    """Create `tracerl_train_steps` where missing."""
    execute(Template(load_sql("tracerl_train_steps.sql")).substitute(database=check_identifier(database, "database")))


def trace_status_query(database: str = DEFAULT_DATABASE, traces_table: str = DEFAULT_TRACES_TABLE) -> str:
    """(trace_id, has_root, spans) for ``{trace_ids:Array(String)}``."""
    return named_query("trainer_trace_status", database, traces_table)


def train_steps_query(database: str = DEFAULT_DATABASE) -> str:
    """Every column of `tracerl_train_steps` for ``{run_id:String}``, by step."""
    return named_query("trainer_steps", database)


def rollout_rewards_query(database: str = DEFAULT_DATABASE) -> str:
    """(trace_id, final_reward) from `tracerl_rollouts` for ``{trace_ids:Array(String)}``."""
    return named_query("trainer_rollout_rewards", database)


def write_train_step(client, row: dict, database: str = DEFAULT_DATABASE) -> None:
    client.insert(TRAIN_STEPS_TABLE, [[row.get(name) for name in TRAIN_STEP_COLUMNS]],
                  column_names=list(TRAIN_STEP_COLUMNS), database=check_identifier(database, "database"))
