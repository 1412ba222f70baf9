"""A SERVER span per HTTP request, when the served loop has telemetry: the request's trace (a
`traceparent` header continues the caller's), under which the run a request starts or resumes
opens its own spans (the run's task inherits the request's context). Imports OpenTelemetry:
loaded only for a loop with telemetry, so a server without it does no tracing work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from starlette.types import Scope

RUN_ID = "reactloop.run.id"
CONVERSATION_ID = "gen_ai.conversation.id"


@contextmanager
def server_span(tracer: trace.Tracer, scope: Scope, route: str) -> Iterator[Span]:
    """The request's SERVER span, current while the block runs (its response included)."""
    method = str(scope.get("method", "GET"))
    template = f"{scope.get('root_path', '')}{route}" or "/"
    carrier = {
        name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", [])
    }
    attributes = {
        "http.request.method": method,
        "http.route": template,
        "url.path": str(scope.get("path", "")),
        "url.scheme": str(scope.get("scheme", "http")),
    }
    span = tracer.start_span(
        f"{method} {template}",
        context=propagate.extract(carrier),
        kind=SpanKind.SERVER,
        attributes=attributes,
    )
    with trace.use_span(
        span, end_on_exit=True, record_exception=False, set_status_on_exception=False
    ):
        yield span


def answered(span: Span, status: int, run_id: str | None, session_id: str | None) -> None:
    """Record the response's status and the run it streams; a 5xx marks the span failed."""
    span.set_attribute("http.response.status_code", status)
    if run_id is not None:
        span.set_attribute(RUN_ID, run_id)
    if session_id is not None:
        span.set_attribute(CONVERSATION_ID, session_id)
    if status >= 500:
        span.set_attribute("error.type", str(status))
        span.set_status(Status(StatusCode.ERROR))
