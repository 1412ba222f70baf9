"""(e, first half) Milliseconds per trim of a long history that is 50% over its token budget.

TO COMPLETE AFTER MERGING the context branch: context trimming lives in `reactloop._context` and
`reactloop._tokens`, which are not on this branch. `trim_cost` is written against their API as
of the context branch's commit 09fb07f (`TokenLedger.sync`, `ContextBudget`, `trim`); check those
names after the merge, then import them statically. Until the module exists the scenario is
skipped and reports no figure.
"""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

from benchmarks._figures import Figure, Target
from benchmarks._measure import median
from reactloop import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

CONTEXT_MODULE = "reactloop._context"
TOKENS_MODULE = "reactloop._tokens"
OVER_BUDGET = 1.5
SKIPPED = f"skipped: needs {CONTEXT_MODULE}"


def context_modules() -> tuple[Any, Any] | None:
    """`reactloop._context` and `reactloop._tokens`, or None when this build has no trimming."""
    try:
        return importlib.import_module(CONTEXT_MODULE), importlib.import_module(TOKENS_MODULE)
    except ModuleNotFoundError:
        return None


def agent_history(length: int) -> list[Message]:
    """An agent transcript of `length` messages: turns with a tool call, its result, an answer.

    It ends with the current user message, as a run's transcript does before its first step.
    """
    messages: list[Message] = []
    turn = 0
    while len(messages) < length - 1:
        call = ToolCall("echo", f'{{"n": {turn}}}', f"call_{turn}")
        messages += [
            UserMessage(f"question {turn}: what is the weather like in city number {turn}?"),
            AssistantMessage("", (call,)),
            ToolMessage(call.id, call.name, f"ok {turn}: sunny, 21 degrees, light wind"),
            AssistantMessage(f"answer {turn}: it is sunny and 21 degrees in city {turn}."),
        ]
        turn += 1
    return [*messages[: length - 1], UserMessage("and now?")]


def trim_cost(length: int, repeats: int) -> Figure:
    """Median milliseconds of one `trim` of `length` messages, 50% over the budget."""
    metric = f"trim of a {length}-message history, 50% over budget"
    modules = context_modules()
    if modules is None:
        return Figure("e", metric, "ms", None, target=Target(20.0), note=SKIPPED)
    context, tokens = modules
    messages = agent_history(length)
    ledger = tokens.TokenLedger()
    total = ledger.sync(messages)
    budget = context.ContextBudget(window=math.ceil(total / OVER_BUDGET))
    samples: list[float] = []
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        kept = context.trim(messages, ledger.costs, budget)
        samples.append((time.perf_counter() - started) * 1e3)
    note = f"kept {len(kept)} of {length} messages; token costs known (ledger synced once)"
    return Figure("e", metric, "ms", median(samples), target=Target(20.0), note=note)
