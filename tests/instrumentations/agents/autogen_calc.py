"""An AutoGen AgentChat AssistantAgent with a calculator tool, solving math questions.

Each question takes two model calls: the model asks for the calculator, AutoGen runs it, and
the model answers from the result (``reflect_on_tool_use``). Nothing in it knows about tracing
but the rollout around each task.

Importable (`run`) and runnable as a script: ``OPENAI_BASE_URL``, ``AGENT_TASKS`` (JSON list of
``{"id", "question", "expected"}``), ``AGENT_INIT=1`` to call ``tracerl.init()`` instead of
running under ``opentelemetry-instrument``. Prints one JSON line per task with its trace id.
"""

from __future__ import annotations

import ast
import asyncio
import json
import operator
import os

import tracerl

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.USub: operator.neg}


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression (+, -, *, /, parentheses) and return the value."""
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.operand))
        raise ValueError(f"unsupported expression: {expression}")
    return str(value(ast.parse(expression, mode="eval").body))


def make_agent(base_url: str):
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(
        model="policy", base_url=base_url, api_key="sk-test-" + "x" * 24, max_retries=0, temperature=1.0,
        model_info={"vision": False, "function_calling": True, "json_output": False, "family": "unknown",
                    "structured_output": False})
    return AssistantAgent("math_solver", model_client=client, tools=[calculator], reflect_on_tool_use=True,
                          system_message="Solve the problem. Use the calculator for arithmetic.")


async def solve(base_url: str, task: dict) -> dict:
    with tracerl.rollout(task_id=task["id"], task={"question": task["question"]}) as r:
        agent = make_agent(base_url)
        result = await agent.run(task=task["question"])
        answer = result.messages[-1].content
        tracerl.emit_reward(float(task["expected"] in answer))
    return {"task": task["id"], "trace_id": r.trace_id, "answer": answer}


def run(base_url: str, tasks: list[dict]) -> list[dict]:
    return [asyncio.run(solve(base_url, task)) for task in tasks]


if __name__ == "__main__":
    if os.environ.get("AGENT_INIT") == "1":
        tracerl.init()
    for line in run(os.environ["OPENAI_BASE_URL"], json.loads(os.environ["AGENT_TASKS"])):
        print(json.dumps(line), flush=True)
