"""`tracerl sql`: run SQL against the store and print the result."""

from __future__ import annotations

from typing import Optional

import typer


def sql(
    statement: str = typer.Argument(..., help="The SQL to run (ClickHouse dialect)."),
    store: Optional[str] = typer.Option(None, "--store", envvar="TRACERL_STORE",
                                        help="Store DSN (default ./.tracerl/store)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json (one object per row) or csv."),
    token: Optional[str] = typer.Option(None, envvar="TRACERL_TOKEN", help="Token for a collector's endpoint."),
) -> None:
    """Run SQL on the store: through the running collector's query endpoint if one owns the
    embedded store, else on the store directly."""
    from .client import connect
    from .dsn import StoreError
    from .statements import is_read_only

    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter("expected table, json or csv", param_hint="--format")
    try:
        client = connect(store, token=token)
    except StoreError as exc:
        typer.echo(f"tracerl sql: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        if not is_read_only(statement):
            result = client.command(statement)
            typer.echo(result if isinstance(result, str) else "Ok.")
            return
        if fmt == "json":
            typer.echo(client.raw_query(statement, fmt="JSONEachRow").decode(), nl=False)
            return
        if fmt == "csv":
            typer.echo(client.raw_query(statement, fmt="CSVWithNames").decode(), nl=False)
            return
        result = client.query(statement)
    except Exception as exc:  # noqa: BLE001 - a database error is the user's answer, not a crash
        typer.echo(f"tracerl sql: {exc}", err=True)
        raise typer.Exit(1) from None
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    for name in result.column_names:
        table.add_column(name, overflow="fold")
    for row in result.result_rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    Console().print(table)
    typer.echo(f"{len(result.result_rows)} rows", err=True)
