"""Write the toy model (random weights, word-level tokenizer) and the task files of the example:
`python make_toy.py` -> ./model, ./tasks.jsonl, ./heldout.jsonl."""

import json
import random
import sys
from pathlib import Path

from tracerl.trainer.toy import make_toy_model

WORDS = ["red", "green", "blue", "cat", "dog", "sun"]
FILLERS = ["the", "word", "is", "ok", "yes", "no", "tree", "moon"]


def tasks(n: int, seed: int, prefix: str) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        filler = " ".join(rng.choice(FILLERS) for _ in range(2))
        out.append({"id": f"{prefix}{i}", "word": word, "prompt": f"{filler} say {word}", "max_tokens": 1})
    return out


def main(folder: str = ".") -> None:
    folder = Path(folder)
    make_toy_model(folder / "model", WORDS + FILLERS + ["say"])
    heldout = [dict(t, temperature=0.0) for t in tasks(24, 2, "h")]  # judged by the greedy answer
    for name, rows in (("tasks.jsonl", tasks(48, 1, "t")), ("heldout.jsonl", heldout)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main(*sys.argv[1:])
