"""A plain agent for the end-to-end tests: the openai client plus tracerl's rollout helpers.

Run as a script. ``AGENT_INIT=1`` makes it call ``tracerl.init()`` itself; otherwise it expects to
run under ``opentelemetry-instrument``. ``AGENT_TASKS`` is a JSON list of ``{"id", "question",
"expected"}``; each task is one rollout of two model calls (answer, then check). Prints one JSON
line per rollout with its trace id. ``AGENT_MODE=identity`` runs no rollouts: the process is the
rollout (TRACEPARENT / OTEL_RESOURCE_ATTRIBUTES), with one call on the main thread and one on
another thread.
"""

import json
import os
import threading

import openai

import tracerl

if os.environ.get("AGENT_INIT") == "1":
    tracerl.init(endpoint=os.environ.get("AGENT_ENDPOINT") or None)

client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="sk-test-" + "x" * 24, max_retries=0)


def ask(messages):
    return client.chat.completions.create(model="policy", messages=messages, temperature=1.0)


def solve(task):
    with tracerl.rollout(task_id=task["id"], task={"question": task["question"]}, attempt=0, mode="train") as r:
        with tracerl.agent("solver"):
            messages = [{"role": "user", "content": task["question"]}]
            answer = ask(messages).choices[0].message.content
            tracerl.emit_variable("answer", {"text": answer})
            messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": "Sure?"}]
            final = ask(messages).choices[0].message.content
        correct = float(final.strip() == task["expected"])
        tracerl.emit_reward(correct, correct=correct, brevity=0.5)
        print(json.dumps({"task": task["id"], "trace_id": r.trace_id}), flush=True)


def identity_mode():
    ask([{"role": "user", "content": "main thread"}])
    worker = threading.Thread(target=ask, args=([{"role": "user", "content": "worker thread"}],))
    worker.start()
    worker.join()
    print(json.dumps({"done": True}), flush=True)


if os.environ.get("AGENT_MODE") == "identity":
    identity_mode()
else:
    for task in json.loads(os.environ["AGENT_TASKS"]):
        solve(task)
    if os.environ.get("AGENT_PRINT_STATS") == "1":
        from opentelemetry import trace

        trace.get_tracer_provider().force_flush()
        print(json.dumps({"stats": tracerl.export_stats()}), flush=True)
