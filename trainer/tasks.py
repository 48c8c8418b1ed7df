"""Tasks: ``tasks.jsonl``, one JSON object per line, each with an ``"id"``; and the order in
which the steps draw them (shuffled epochs, seeded, so a resumed run draws what it would have)."""

from __future__ import annotations

import json
import random
from pathlib import Path


class TaskError(ValueError):
    pass


def load_tasks(path: str | Path) -> list[dict]:
    tasks, seen = [], set()
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise TaskError(f"{path}: cannot read ({exc.strerror})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except ValueError as exc:
            raise TaskError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(task, dict) or "id" not in task:
            raise TaskError(f"{path}:{number}: each task must be a JSON object with an \"id\"")
        if str(task["id"]) in seen:
            raise TaskError(f"{path}:{number}: duplicate task id {task['id']!r}")
        seen.add(str(task["id"]))
        tasks.append(task)
    if not tasks:
        raise TaskError(f"{path}: no tasks")
    return tasks


def tasks_for_step(tasks: list[dict], step: int, per_step: int, seed: int = 0) -> list[dict]:
    """The tasks of step ``step`` (1-based): consecutive slices of a sequence of shuffled epochs."""
    start = (step - 1) * per_step
    chosen = []
    for position in range(start, start + per_step):
        epoch, offset = divmod(position, len(tasks))
        order = list(range(len(tasks)))
        random.Random(seed * 1_000_003 + epoch).shuffle(order)
        chosen.append(tasks[order[offset]])
    return chosen
