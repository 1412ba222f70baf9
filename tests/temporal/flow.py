"""What the single-process Temporal tests share: the workflows a replay needs, a scripted loop
wrapped for Temporal, and the events of a run as a comparable list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reactloop import ReActLoop
from reactloop._temporal._session import SessionWorkflow
from reactloop._temporal._workflow import RunWorkflow
from reactloop.events import Event, TextStreamed, ToolCallFinished
from reactloop.models import ModelResponse
from reactloop.temporal import TemporalLoop
from reactloop.testing import ScriptedModel

WORKFLOWS = [RunWorkflow, SessionWorkflow]


def wrapped(script: Sequence[ModelResponse], name: str, **options: Any) -> TemporalLoop:
    """A loop answering `script`, wrapped for Temporal as `name`."""
    return TemporalLoop(ReActLoop(ScriptedModel(list(script)), **options), name=name)


def shown(events: Sequence[Event]) -> list[object]:
    """The events as comparable values: their kinds, texts and tool results."""
    seen: list[object] = []
    for event in events:
        if isinstance(event, TextStreamed):
            seen.append(("text", event.text))
        elif isinstance(event, ToolCallFinished):
            seen.append(("result", event.result.name, event.result.content))
        else:
            seen.append(type(event).__name__)
    return seen
