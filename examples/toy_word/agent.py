"""A toy agent: asked to say a word, it answers with one model call and is rewarded 1 when the
first word of the answer is that word.

Both runner kinds use it: `runner: {kind: python, function: "agent.py:agent"}` calls `agent(task)`
in the trainer's process; `runner: {kind: command, command: "python agent.py"}` runs this file
once per rollout, with the task in TRACERL_TASK.
"""

import json
import os
import threading

import openai

import tracerl

_local = threading.local()


def _client() -> openai.OpenAI:
    if getattr(_local, "client", None) is None:
        _local.client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"],
                                      api_key=os.environ.get("OPENAI_API_KEY", "unused"), max_retries=0)
    return _local.client


def agent(task: dict) -> None:
    reply = _client().chat.completions.create(
        model=os.environ.get("TRACERL_MODEL", "policy"),
        messages=[{"role": "user", "content": task["prompt"]}],
        max_tokens=int(task.get("max_tokens", 2)), temperature=float(task.get("temperature", 1.0)))
    words = (reply.choices[0].message.content or "").split()
    tracerl.emit_reward(1.0 if words and words[0] == task["word"] else 0.0)


if __name__ == "__main__":
    tracerl.init()
    agent(json.loads(os.environ["TRACERL_TASK"]))
