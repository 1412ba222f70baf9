"""(h) The same durable work on LangGraph's prebuilt ReAct agent with its SQLite checkpointer.

A fake chat model answers from the same script as (g) (one `echo` call per step, then a text
answer), stamping each call, so per-step cost reads the same way on both sides: reactloop with
`SqliteStore` (synchronous NORMAL) in the first column, LangGraph with `SqliteSaver` in the
second, at a short and a long history. LangGraph's agent is synchronous here (its async saver
needs asyncio); it runs in a worker thread so the scenario works on trio too. Needs the `bench`
extra (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import importlib.util
import sqlite3
import tempfile
import time
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from benchmarks._durable import _rig
from benchmarks._fakes import history
from benchmarks._figures import Figure, Target
from benchmarks._measure import median, per_step_us
from benchmarks._scenarios import Sizes, _each, _measure
from reactloop._durable._stores import SqliteStore

NAME = "LangGraph"


def available() -> bool:
    """True when the `bench` extra (langgraph and its SQLite checkpointer) is installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("langgraph", "langgraph.checkpoint.sqlite", "langchain_core")
    )


def _from(module: str, name: str) -> Any:
    """A name from the `bench` extra (imported late, and untyped: the extra is optional)."""
    return getattr(importlib.import_module(module), name)


def _fake_model(steps: int, base: int, stamps: list[float]) -> Any:
    """A LangChain chat model answering like `Script`: `steps` tool calls, then text."""
    ai_message = _from("langchain_core.messages", "AIMessage")
    generation = _from("langchain_core.outputs", "ChatGeneration")
    result = _from("langchain_core.outputs", "ChatResult")

    def generate(self: Any, messages: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
        stamps.append(time.perf_counter())
        step = (len(messages) - base) // 2
        if step < steps:
            call = {"name": "echo", "args": {"n": step}, "id": f"call_{step}"}
            message = ai_message(content="", tool_calls=[call])
        else:
            message = ai_message(content="done")
        return result(generations=[generation(message=message)])

    methods = {
        "_llm_type": property(lambda self: "scripted"),
        "bind_tools": lambda self, tools, **kwargs: self,
        "_generate": generate,
    }
    return type("Scripted", (_from("langchain_core.language_models", "BaseChatModel"),), methods)()


def echo(n: int) -> str:
    """Return the number as text."""
    return f"ok {n}"


class LangGraphRun:
    """LangGraph's prebuilt agent over a SQLite checkpointer, one fresh thread per run."""

    def __init__(self, path: Path, steps: int, size: int) -> None:
        human, ai = (
            _from("langchain_core.messages", name) for name in ("HumanMessage", "AIMessage")
        )
        saver = _from("langgraph.checkpoint.sqlite", "SqliteSaver")
        self.stamps: list[float] = []
        self.steps = steps
        self.connection = sqlite3.connect(path, check_same_thread=False)
        model = _fake_model(steps, size + 1, self.stamps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
            create = _from("langgraph.prebuilt", "create_react_agent")
            tool = _from("langchain_core.tools", "tool")
            self.agent = create(model, [tool(echo)], checkpointer=saver(self.connection))
        turns = [
            (human if i % 2 == 0 else ai)(getattr(m, "content", None) or getattr(m, "text", ""))
            for i, m in enumerate(history(size))
        ]
        self.messages = [*turns, human("go")]

    def run(self) -> list[float]:
        """One run on a new thread; the model-call stamps."""
        self.stamps.clear()
        self.thread = uuid.uuid4().hex
        config: dict[str, Any] = {
            "configurable": {"thread_id": self.thread},
            "recursion_limit": 10_000,
        }
        self.agent.invoke({"messages": self.messages}, config)
        return list(self.stamps)

    def bytes_per_step(self) -> float:
        """Checkpoint and pending-write bytes the last run saved, per step."""
        total = 0
        for query in (
            "SELECT sum(length(checkpoint) + length(metadata)) FROM checkpoints",
            "SELECT sum(length(value)) FROM writes",
        ):
            (found,) = self.connection.execute(
                f"{query} WHERE thread_id = ?", (self.thread,)
            ).fetchone()
            total += found or 0
        return total / (self.steps + 1)

    async def sample(self) -> list[float]:
        return await anyio.to_thread.run_sync(self.run)


async def langgraph_steps(sizes: Sizes) -> list[Figure]:
    """(h) Per-step cost with a SQLite journal: reactloop's (its default, and with
    `commit_on_loop=True`) against LangGraph's checkpointer."""
    folder = Path(tempfile.mkdtemp(prefix="reactloop-bench-lg-"))
    figures: list[Figure] = []
    ratios: dict[str, float] = {}
    for size in (sizes.small_history, sizes.big_history):
        cost = await _costs(sizes, folder, size)
        for label, name in (("", "reactloop"), (", commit_on_loop", "on loop")):
            figures.append(Figure("h", f"per step, {size} messages{label}, vs LangGraph", "us",
                                  cost[name], cost[NAME]))  # fmt: skip
            ratios[label] = cost[name] / cost[NAME]
        figures.append(Figure("h", f"LangGraph bytes per step, {size} messages", "B",
                              cost["bytes"]))  # fmt: skip
    for label, ratio in ratios.items():  # the last size: the 1,000-message history
        figures.append(Figure("h", f"reactloop{label} / LangGraph per step, {sizes.big_history}"
                              " messages", "x", ratio, target=Target(0.05)))  # fmt: skip
    return figures


async def _costs(sizes: Sizes, folder: Path, size: int) -> dict[str, float]:
    """Median per-step microseconds of each contender at one history size, and LangGraph's
    bytes per step."""
    steps = sizes.history_steps
    ours = _rig(steps, size, SqliteStore(folder / f"ours-{size}.db"))
    fast = _rig(steps, size, SqliteStore(folder / f"fast-{size}.db", commit_on_loop=True))
    theirs = LangGraphRun(folder / f"theirs-{size}.db", steps, size)
    contenders = {
        "reactloop": ours.stamped(history(size))["reactloop"],
        "on loop": fast.stamped(history(size))["reactloop"],
        NAME: theirs.sample,
    }
    samples = _each(await _measure(sizes, contenders), per_step_us)
    cost = {name: median(values) for name, values in samples.items()}
    cost["bytes"] = theirs.bytes_per_step()
    theirs.connection.close()
    return cost
