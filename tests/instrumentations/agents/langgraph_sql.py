"""A LangGraph text-to-SQL workflow in the shape of Agent Lightning's Spider example.

writer (LLM writes a query) -> execute (a LangChain tool runs it on a SQLite database) ->
checker (LLM judges query and result) -> rewriter (LLM fixes the query) -> execute -> checker
... -> answer. Nothing in it knows about tracing except the rollout around each task: the
tracerl LangChain plugin finds the nodes, the tool and the model calls by itself.

Importable (`run`) and runnable as a script: ``OPENAI_BASE_URL``, ``SQL_DB`` (path of the
SQLite file), ``AGENT_TASKS`` (JSON list of ``{"id", "question", "gold"}``), ``AGENT_INIT=1`` to
call ``tracerl.init()`` instead of running under ``opentelemetry-instrument``. Prints one JSON
line per task with its trace id.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from typing import TypedDict

import tracerl

MAX_REWRITES = 2
CORRECT = "THE QUERY IS CORRECT"


class State(TypedDict, total=False):
    question: str
    query: str
    result: str
    feedback: str
    correct: bool
    rewrites: int
    answer: str


def make_database(path: str) -> None:
    """The small Spider-like database the tasks ask about."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE IF NOT EXISTS singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INT)")
        db.execute("DELETE FROM singer")
        db.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)",
                       [(1, "Joe Sharp", "Netherlands", 52), (2, "Timbaland", "United States", 32),
                        (3, "Justin Brown", "France", 29), (4, "Rose White", "France", 41)])


def _schema(path: str) -> str:
    with sqlite3.connect(path) as db:
        return "\n".join(row[0] for row in db.execute("SELECT sql FROM sqlite_master WHERE type = 'table'"))


def _sql_of(text: str) -> str:
    match = re.search(r"```(?:sql)?\s*(.*?)```", text, re.S)
    return (match.group(1) if match else text).strip()


def build_graph(base_url: str, db_path: str):
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, StateGraph

    llm = ChatOpenAI(model="policy", base_url=base_url, api_key="sk-test-" + "x" * 24, max_retries=0,
                     temperature=1.0)
    schema = _schema(db_path)

    @tool
    def run_sql(query: str) -> str:
        """Run a SQLite query on the task's database and return its rows (or the error)."""
        try:
            with sqlite3.connect(db_path) as db:
                return json.dumps(db.execute(query).fetchall())
        except sqlite3.Error as exc:
            return f"Error: {exc}"

    def writer(state: State) -> State:
        reply = llm.invoke([SystemMessage(f"Write one SQLite query for the question. Schema:\n{schema}"),
                            HumanMessage(state["question"])])
        return {"query": _sql_of(reply.content), "rewrites": 0}

    def execute(state: State) -> State:
        return {"result": run_sql.invoke({"query": state["query"]})}

    def checker(state: State) -> State:
        reply = llm.invoke([SystemMessage(f"Check the query. Answer with '{CORRECT}' if it answers the question."),
                            HumanMessage(f"Question: {state['question']}\nQuery: {state['query']}\n"
                                         f"Result: {state['result']}")])
        return {"feedback": reply.content, "correct": CORRECT in reply.content}

    def rewriter(state: State) -> State:
        reply = llm.invoke([SystemMessage(f"Rewrite the query using the feedback. Schema:\n{schema}"),
                            HumanMessage(f"Question: {state['question']}\nQuery: {state['query']}\n"
                                         f"Feedback: {state['feedback']}")])
        return {"query": _sql_of(reply.content), "rewrites": state.get("rewrites", 0) + 1}

    def answer(state: State) -> State:
        return {"answer": state["result"]}

    def after_check(state: State) -> str:
        if state.get("correct") or state.get("rewrites", 0) >= MAX_REWRITES:
            return "answer"
        return "rewriter"

    graph = StateGraph(State)
    for node in (writer, execute, checker, rewriter, answer):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "writer")
    graph.add_edge("writer", "execute")
    graph.add_edge("execute", "checker")
    graph.add_conditional_edges("checker", after_check, ["rewriter", "answer"])
    graph.add_edge("rewriter", "execute")
    graph.add_edge("answer", END)
    return graph.compile()


def run(base_url: str, db_path: str, tasks: list[dict]) -> list[dict]:
    graph = build_graph(base_url, db_path)
    out = []
    for task in tasks:
        with tracerl.rollout(task_id=task["id"], task={"question": task["question"]}) as r:
            state = graph.invoke({"question": task["question"]})
            with sqlite3.connect(db_path) as db:
                gold = json.dumps(db.execute(task["gold"]).fetchall())
            tracerl.emit_reward(float(state["answer"] == gold))
        out.append({"task": task["id"], "trace_id": r.trace_id, "answer": state["answer"], "query": state["query"]})
    return out


if __name__ == "__main__":
    if os.environ.get("AGENT_INIT") == "1":
        tracerl.init()
    for line in run(os.environ["OPENAI_BASE_URL"], os.environ["SQL_DB"], json.loads(os.environ["AGENT_TASKS"])):
        print(json.dumps(line), flush=True)
