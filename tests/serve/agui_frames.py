"""Reading AG-UI SSE frames in the tests: each frame split into its `id:` and its `data:`
payload, and each payload validated against ag-ui-protocol 1.0.0's own event models (pydantic is
a test-only dependency), with no field the schema does not name (its models keep unknown fields,
so a misspelled key would otherwise pass)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import orjson
from ag_ui.core import Event as AgUiEvent
from pydantic import BaseModel, TypeAdapter

from reactloop._core import Event
from reactloop._serve._agui import AgUiEncoder
from reactloop._serve._contracts import StreamContext

EVENTS: TypeAdapter[Any] = TypeAdapter(AgUiEvent)


def _no_extra(model: BaseModel, where: str) -> None:
    extra = model.model_extra or {}
    assert not extra, f"{where} has fields the AG-UI schema does not define: {sorted(extra)}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for n, item in enumerate(items):
            if isinstance(item, BaseModel):
                _no_extra(item, f"{where}.{name}[{n}]")


def split(data: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """The frames of an SSE byte string as (id, payload), each payload checked against the
    AG-UI event schema."""
    text = data.decode()
    assert text == "" or text.endswith("\n\n"), f"a frame is not terminated: {text[-40:]!r}"
    frames = []
    for block in filter(None, text.split("\n\n")):
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) <= {"id", "data"}, f"unexpected SSE fields in {block!r}"
        payload = orjson.loads(fields["data"])
        _no_extra(EVENTS.validate_python(payload), payload["type"])
        frames.append((fields.get("id"), payload))
    return frames


def payloads(data: bytes) -> list[dict[str, Any]]:
    """The checked payloads of an SSE byte string."""
    return [payload for _, payload in split(data)]


def context(
    run_id: str = "run-1", *, thread: str = "thread-1", client_run_id: str | None = None
) -> StreamContext:
    """The context of a stream of run `run_id` on `thread` (its AG-UI run id `client_run_id`,
    the run's own by default)."""
    return StreamContext(run_id=run_id, session_id=thread, client_run_id=client_run_id or run_id)


def encode_all(encoder: AgUiEncoder, events: Iterable[Event], *, start: int = 1) -> bytes:
    """The opening, then every event's frames with ids `e-{seq}`."""
    out = [encoder.opening()]
    out += [encoder.encode(event, f"e-{seq}") for seq, event in enumerate(events, start=start)]
    return b"".join(out)


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    """All the events of a stream."""
    return [event async for event in events]
