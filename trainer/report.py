"""`tracerl report OUTDIR`: the reward curve as a PNG and the step table as an HTML page.

Reads the run's ``metrics.jsonl`` (written next to every `tracerl_train_steps` row), so a
report needs no running collector.
"""

from __future__ import annotations

import html
from pathlib import Path

from .metrics import read_jsonl

COLUMNS = ("step", "policy_version", "rollouts", "rollouts_failed", "reward_mean", "reward_std", "success_rate",
           "eval_success_rate", "samples", "tokens", "loss", "kl", "entropy", "clip_fraction", "grad_norm",
           "rollout_s", "build_s", "update_s", "step_s")


def write_report(output_dir: str | Path) -> tuple[Path, Path]:
    output_dir = Path(output_dir)
    rows = read_jsonl(output_dir)
    if not rows:
        raise ValueError(f"{output_dir}: metrics.jsonl has no steps")
    png = output_dir / "reward.png"
    page = output_dir / "report.html"
    _plot(rows, png)
    page.write_text(_html(rows, output_dir, png.name))
    return png, page


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    mean = [r["reward_mean"] for r in rows]
    std = [r["reward_std"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(steps, mean, marker="o", label="reward (mean)")
    ax.fill_between(steps, [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)], alpha=0.2,
                    label="± std")
    ax.plot(steps, [r["success_rate"] for r in rows], linestyle="--", label="success rate")
    evals = [(r["step"], r["eval_success_rate"]) for r in rows if r.get("eval_success_rate") is not None]
    if evals:
        ax.plot(*zip(*evals), marker="s", linestyle=":", label="held-out success")
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.set_title("tracerl training")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _html(rows: list[dict], output_dir: Path, png_name: str) -> str:
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = "\n".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in COLUMNS) + "</tr>" for r in rows)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>tracerl run {html.escape(output_dir.name)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}th{{background:#eee}}</style></head>
<body><h1>tracerl run {html.escape(str(output_dir))}</h1>
<p>run id {html.escape(str(rows[-1].get('run_id', '')))}; {len(rows)} steps</p>
<img src="{png_name}" alt="reward curve">
<table><tr>{head}</tr>
{body}
</table></body></html>
"""
