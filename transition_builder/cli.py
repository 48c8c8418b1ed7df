"""`tracerl build` and `tracerl reward`. Heavy imports (store client, transformers) happen inside
the commands, so `tracerl --help` stays fast on the agent-side install."""

from __future__ import annotations

from typing import List, Optional

import typer

_STORE = typer.Option(None, "--store", envvar="TRACERL_STORE", help="Store DSN (default ./.tracerl/store).")
_TOKEN = typer.Option(None, "--token", envvar="TRACERL_TOKEN", help="Token for a collector's query endpoint.")


def build(
    trace: Optional[List[str]] = typer.Option(None, "--trace", help="Build this trace (repeatable)."),
    since: Optional[str] = typer.Option(None, "--since", help="Only rollouts started in the last DURATION (90s, 15m, 2h, 7d)."),
    where: Optional[str] = typer.Option(None, "--where", help="SQL condition on tracerl_rollouts columns, e.g. \"mode = 'train'\"."),
    agents: Optional[str] = typer.Option(None, "--agents", help="Regex (full match) of the agents to train; others are environment."),
    credit: str = typer.Option("identical", "--credit", help="identical | discounted | stepwise."),
    gamma: float = typer.Option(1.0, "--gamma", help="Discount per step back from the end (--credit discounted)."),
    aggregate: str = typer.Option("transition", "--aggregate", help="transition (one per LLM call) | trajectory."),
    tokenizer: Optional[str] = typer.Option(None, "--tokenizer", help="Local HF tokenizer folder to re-tokenize calls without token ids."),
    out: Optional[str] = typer.Option(None, "--out", help="Also write the transitions to FILE.parquet or FILE.jsonl."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Replace the transitions of selected traces built before."),
    store: Optional[str] = _STORE,
    token: Optional[str] = _TOKEN,
    traces_table: str = typer.Option("otel_traces", "--traces-table", help="The spans table."),
) -> None:
    """Build training transitions from finished rollouts into tracerl_transitions (and --out)."""
    from tracerl.store import StoreError

    from .build import build as run_build

    try:
        result = run_build(store=store, token=token, traces_table=traces_table, traces=trace or None, since=since,
                           where=where, agents=agents, credit=credit, gamma=gamma, aggregate=aggregate,
                           tokenizer=tokenizer, rebuild=rebuild, out=out)
    except (StoreError, ValueError) as exc:
        typer.echo(f"tracerl build: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(result.report.summary())


def reward(
    trace_id: str = typer.Argument(..., help="The rollout's trace id (32 hex digits)."),
    value: float = typer.Argument(..., help="The reward."),
    name: str = typer.Option("reward", "--name", help="Reward name; 'reward' is the primary (final) reward."),
    component: Optional[List[str]] = typer.Option(None, "--component", help="NAME=VALUE reward component (repeatable)."),
    store: Optional[str] = _STORE,
    token: Optional[str] = _TOKEN,
    traces_table: str = typer.Option("otel_traces", "--traces-table", help="The spans table."),
) -> None:
    """Score a trace after the fact: write a reward span into it (offline verifiers)."""
    from tracerl.store import StoreError, connect

    from .offline_reward import TraceNotFound, write_reward

    components = {}
    for item in component or ():
        key, sep, number = item.partition("=")
        try:
            components[key] = float(number)
        except ValueError:
            sep = ""
        if not sep or not key:
            raise typer.BadParameter(f"{item!r}: expected NAME=NUMBER", param_hint="--component")
    try:
        client = connect(store, token=token)
        span_id = write_reward(client, trace_id, value, name, components, traces_table=traces_table)
    except (StoreError, TraceNotFound) as exc:
        typer.echo(f"tracerl reward: {exc}", err=True)
        raise typer.Exit(2) from None
    except Exception as exc:  # noqa: BLE001 - a database error (e.g. a missing token) is the answer
        typer.echo(f"tracerl reward: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"reward {value} ({name}) written to trace {trace_id} as span {span_id}")
