"""`tracerl train`, `tracerl serve-policy`, `tracerl report` (heavy imports inside each command)."""

from __future__ import annotations

import typer


def train(config: str = typer.Argument(..., help="The training config (YAML)."),
          steps: int = typer.Option(None, "--steps", help="Override `steps`."),
          resume: bool = typer.Option(False, "--resume", help="Continue from the latest checkpoint in output_dir."),
          quiet: bool = typer.Option(False, "--quiet", help="No progress display.")) -> None:
    """Train the agent's policy with RL from its traces: rollouts, transitions, updates."""
    from .config import ConfigError, load_config
    from .tasks import TaskError

    overrides = {}
    if steps is not None:
        overrides["steps"] = steps
    if resume:
        overrides["resume"] = True
    if quiet:
        overrides["console"] = False
    try:
        cfg = load_config(config, overrides)
        from .loop import train as run

        state = run(cfg)
    except (ConfigError, TaskError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except NotImplementedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"done: {state.step} steps, run {state.run_id}, output in {cfg.output_dir}")


def serve_policy(model_dir: str = typer.Argument(..., help="A local Hugging Face model folder."),
                 host: str = typer.Option("127.0.0.1", "--host"),
                 port: int = typer.Option(8000, "--port"),
                 device: str = typer.Option("cpu", "--device", help="cpu, cuda, cuda:N"),
                 dtype: str = typer.Option("auto", "--dtype", help="auto, float32, bfloat16, float16"),
                 max_batch: int = typer.Option(32, "--max-batch", help="Most requests decoded together."),
                 batch_wait_ms: float = typer.Option(5.0, "--batch-wait-ms",
                                                     help="How long the first request waits for others."),
                 gateway: str = typer.Option(None, "--gateway", help="A tracerl gateway to pause around reloads."),
                 admin_token: str = typer.Option("", "--admin-token", envvar="TRACERL_ADMIN_TOKEN",
                                                 help="Required by POST /admin/reload_weights when set.")) -> None:
    """Serve a local model with an OpenAI-compatible API in vLLM's shape (CPU stand-in for vLLM)."""
    import signal
    import threading

    from .policy_server import serve

    server = serve(model_dir, host, port, device, dtype, max_batch, batch_wait_ms, gateway, admin_token)
    typer.echo(f"serving {model_dir} at {server.url}", err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    server.stop()


def report(output_dir: str = typer.Argument(..., help="A training run's output_dir.")) -> None:
    """Write the reward curve (PNG) and the step table (HTML) of a training run."""
    from .report import write_report

    try:
        png, page = write_report(output_dir)
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {png} and {page}")
