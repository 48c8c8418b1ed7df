"""The `tracerl` command: one app that mounts each component's commands.

Component modules import their heavy dependencies inside the command functions, so
``tracerl --help`` stays fast and works on the agent-side install.
"""

from __future__ import annotations

import typer

from tracerl import __version__
from tracerl.collector.cli import collector
from tracerl.gateway.cli import gateway
from tracerl.store.cli import sql
from tracerl.trainer.cli import report, serve_policy, train
from tracerl.transition_builder.cli import build, reward

app = typer.Typer(
    name="tracerl",
    help="Train existing AI agents with reinforcement learning from their OpenTelemetry traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command(help=collector.__doc__)(collector)
app.command(help=sql.__doc__)(sql)
app.command(help=gateway.__doc__)(gateway)
app.command(help=build.__doc__)(build)
app.command(help=reward.__doc__)(reward)
app.command(help=train.__doc__)(train)
app.command(name="serve-policy", help=serve_policy.__doc__)(serve_policy)
app.command(help=report.__doc__)(report)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(__version__)
        raise typer.Exit()


def main() -> None:
    app()
