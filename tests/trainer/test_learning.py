"""RL on a CPU in about a minute: a random tiny model learns to say the word the prompt names.

Task: "<filler> say <word>" -> reward 1 when the answer's first word is <word>; 4 words, 4
fillers. Training uses half of the (filler, word) prompts, the held-out half is only evaluated
(before training and after) with greedy decoding, so the measure has no sampling noise. A random
policy's greedy answer is right about 1 time in 16; after 30 GRPO steps it is far above that.
"""

import json
import subprocess
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "examples" / "toy_word" / "agent.py"
WORDS = ["red", "green", "blue", "cat"]
FILLERS = ["the", "is", "ok", "no"]


def test_heldout_success_rate_rises(collector, tmp_path):
    from tracerl.trainer.toy import make_toy_model

    make_toy_model(tmp_path / "model", WORDS + FILLERS + ["say"], seed=0)
    split = {"train": [], "heldout": []}
    for f, filler in enumerate(FILLERS):
        for w, word in enumerate(WORDS):
            split["train" if (f + w) % 2 == 0 else "heldout"].append(
                {"id": f"learn-{f}{w}", "word": word, "prompt": f"{filler} say {word}", "max_tokens": 1})
    for task in split["heldout"]:
        task["temperature"] = 0.0  # evaluate the policy's greedy answer: no sampling noise
    for name, tasks in split.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    config = {"model": str(tmp_path / "model"), "tasks": str(tmp_path / "train.jsonl"), "group_size": 8,
              "tasks_per_step": 8, "steps": 30, "optimizer": {"lr": 1.0e-2},
              "algorithm": {"advantage": "grpo", "credit": "identical", "clip_ratio": 0.2},
              "runner": {"kind": "python", "function": f"{AGENT}:agent", "concurrency": 8, "timeout_s": 60},
              "store": collector.store_dsn, "output_dir": str(tmp_path / "out"),
              "eval": {"tasks": str(tmp_path / "heldout.jsonl"), "group_size": 4},
              "traces": {"quiet_s": 0.2, "poll_s": 0.1}, "console": False}
    (tmp_path / "config.yaml").write_text(json.dumps(config))
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli", "train", str(tmp_path / "config.yaml")],
                          capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    evals = [json.loads(line) for line in (tmp_path / "out" / "eval.jsonl").read_text().splitlines()]
    before, after = evals[0], evals[-1]
    print(f"held-out success rate: before {before['success_rate']:.3f} (policy v{before['policy_version']}), "
          f"after {after['success_rate']:.3f} (policy v{after['policy_version']})")
    assert (before["policy_version"], after["policy_version"]) == (0, 30)
    assert after["success_rate"] >= before["success_rate"] + 0.3
