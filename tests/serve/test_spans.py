"""A served loop with telemetry: each request is a SERVER span, and the run a request starts
opens its spans under it (one trace from the HTTP request to the model and tool calls); a
`traceparent` header puts the request in the caller's trace."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from reactloop import ReActLoop
from reactloop._serve._app import ChatServer
from reactloop._serve._routes import ag_ui_routes
from reactloop.serve import ServeOptions
from reactloop.telemetry import Telemetry
from reactloop.testing import ScriptedModel
from tests.serve.plain import PlainAdapter
from tests.serve.server import served

pytestmark = pytest.mark.anyio


def traced_server(exporter: InMemorySpanExporter, options: ServeOptions | None = None) -> Any:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    loop = ReActLoop(ScriptedModel(["Hi."]), telemetry=Telemetry(tracer_provider=provider))
    server = ChatServer(loop, options)
    return server._app_of(ag_ui_routes(server, PlainAdapter(), ""))


def server_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.kind is SpanKind.SERVER]


async def test_a_turn_is_a_server_span_with_the_run_under_it() -> None:
    exporter = InMemorySpanExporter()
    async with served(traced_server(exporter)) as url, httpx.AsyncClient(base_url=url) as client:
        response = await client.post("/", json={"text": "hi", "run_id": "t1"})
    assert response.status_code == 200
    (request,) = server_spans(exporter)
    assert request.name == "POST /" and request.attributes is not None
    assert request.attributes["http.response.status_code"] == 200
    assert request.attributes["reactloop.run.id"] == "t1"
    (run,) = [
        span for span in exporter.get_finished_spans() if span.name.startswith("invoke_agent")
    ]
    assert request.context is not None and run.parent is not None
    assert run.parent.span_id == request.context.span_id


async def test_a_traceparent_header_puts_the_request_in_the_callers_trace() -> None:
    exporter = InMemorySpanExporter()
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
    async with served(traced_server(exporter)) as url, httpx.AsyncClient(base_url=url) as client:
        await client.post("/", json={"text": "hi"}, headers=parent)
    (request,) = server_spans(exporter)
    assert request.context is not None and f"{request.context.trace_id:032x}" == trace_id


async def test_a_refused_request_is_a_span_with_its_status_not_an_error() -> None:
    exporter = InMemorySpanExporter()
    async with served(traced_server(exporter)) as url, httpx.AsyncClient(base_url=url) as client:
        refused = await client.post("/", content=b"{not json")
        unknown = await client.get("/runs/nope/events")
    assert (refused.status_code, unknown.status_code) == (400, 404)
    statuses = {
        span.name: (span.attributes or {}).get("http.response.status_code")
        for span in server_spans(exporter)
    }
    assert statuses == {"POST /": 400, "GET /runs/{run_id}/events": 404}
    assert all(span.status.status_code is not StatusCode.ERROR for span in server_spans(exporter))
