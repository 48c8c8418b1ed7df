"""An OpenAI Agents SDK triage agent that looks up an order with a function tool, then hands
off to a refunds agent that answers.

Three model calls per task: triage calls ``lookup_order``, triage hands off to ``refunds``,
refunds answers. Each task runs once with ``Runner.run`` (async) and once with
``Runner.run_sync``. Nothing in it knows about tracing but the rollout around each run.

Importable (`run`) and runnable as a script: ``OPENAI_BASE_URL``, ``AGENT_TASKS`` (JSON list of
``{"id", "question"}``), ``AGENT_INIT=1`` to call ``tracerl.init()`` instead of running under
``opentelemetry-instrument``. Prints one JSON line per run with its trace id.
"""

from __future__ import annotations

import asyncio
import json
import os

import tracerl

ORDERS = {"A17": {"item": "kettle", "status": "delivered", "paid": 39.0}}


def make_agents(base_url: str):
    from agents import Agent, OpenAIResponsesModel, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="sk-test-" + "x" * 24, max_retries=0)
    model = OpenAIResponsesModel(model="policy", openai_client=client)

    @function_tool
    def lookup_order(order_id: str) -> str:
        """Look up an order by id."""
        return json.dumps(ORDERS.get(order_id, {"error": "no such order"}))

    refunds = Agent(name="refunds", instructions="Decide on refunds for delivered orders.", model=model)
    triage = Agent(name="triage", instructions="Look up the order, then hand refund requests to refunds.",
                   model=model, tools=[lookup_order], handoffs=[refunds])
    return triage


async def run_async(base_url: str, task: dict) -> dict:
    from agents import Runner

    with tracerl.rollout(task_id=task["id"], task={"question": task["question"]}, attempt=0) as r:
        result = await Runner.run(make_agents(base_url), task["question"])
    return {"task": task["id"], "runner": "run", "trace_id": r.trace_id, "answer": result.final_output,
            "last_agent": result.last_agent.name}


def run_sync(base_url: str, task: dict) -> dict:
    from agents import Runner

    with tracerl.rollout(task_id=task["id"], task={"question": task["question"]}, attempt=1) as r:
        result = Runner.run_sync(make_agents(base_url), task["question"])
    return {"task": task["id"], "runner": "run_sync", "trace_id": r.trace_id, "answer": result.final_output,
            "last_agent": result.last_agent.name}


def run(base_url: str, tasks: list[dict]) -> list[dict]:
    out = []
    for task in tasks:
        out.append(asyncio.run(run_async(base_url, task)))
        out.append(run_sync(base_url, task))
    return out


if __name__ == "__main__":
    if os.environ.get("AGENT_INIT") == "1":
        tracerl.init()
    for line in run(os.environ["OPENAI_BASE_URL"], json.loads(os.environ["AGENT_TASKS"])):
        print(json.dumps(line), flush=True)
