"""(e, first half) Milliseconds per trim of a long history that is 50% over its token budget.

Token costs are known beforehand (a run's ledger has them from earlier steps), so the figure is
the cost of choosing what to drop and building the trimmed tuple.
"""

from __future__ import annotations

import math
import time

from benchmarks._figures import Figure, Target
from benchmarks._measure import median
from reactloop import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from reactloop._policies._context import ContextBudget, trim
from reactloop._policies._tokens import TokenLedger

OVER_BUDGET = 1.5


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
    messages = agent_history(length)
    ledger = TokenLedger()
    total = ledger.sync(messages)
    budget = ContextBudget(window=math.ceil(total / OVER_BUDGET))
    samples: list[float] = []
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        kept = trim(messages, ledger.costs, budget)
        samples.append((time.perf_counter() - started) * 1e3)
    note = f"kept {len(kept)} of {length} messages; token costs known (ledger synced once)"
    return Figure("e", metric, "ms", median(samples), target=Target(20.0), note=note)
