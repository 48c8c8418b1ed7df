"""A test agent: one chat call; the reward is a hash of the answer in [0, 1), so rewards within a
group differ (a random model rarely says the same thing four times) and the update has a
gradient. `agent(task)` for the python runner; run as a script for the command runner."""

import json
import os
import zlib

import openai

import tracerl


def agent(task: dict) -> None:
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"],
                           max_retries=0)
    reply = client.chat.completions.create(model=os.environ.get("TRACERL_MODEL", "policy"),
                                           messages=[{"role": "user", "content": task["prompt"]}],
                                           max_tokens=3, temperature=1.0)
    text = reply.choices[0].message.content or ""
    tracerl.emit_reward(zlib.crc32(text.encode()) % 1000 / 1000)


if __name__ == "__main__":
    tracerl.init()
    agent(json.loads(os.environ["TRACERL_TASK"]))
