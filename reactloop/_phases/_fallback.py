"""A `FallbackModel` driven by the reasoning phase: each of its models retried per the loop's
policy, a switch announced as a `ModelSwitched` event, and a run's steps started on the model
that answered its last one (so a resumed run goes on where it left off)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from reactloop._core import Model, ModelResponse, ModelSwitched
from reactloop._errors import ModelError
from reactloop._phases._interrupt import Heard
from reactloop._providers import FallbackModel

if TYPE_CHECKING:
    from reactloop._loop import Run
    from reactloop._telemetry._otel import Tracing


def last_answered_by(run: Run) -> str | None:
    """The model of a `FallbackModel` that answered the run's latest step that says so."""
    for step in reversed(run.state.steps):
        if step.response is not None and step.response.answered_by is not None:
            return step.response.answered_by
    return None


async def ask_fallback(
    run: Run, chain: FallbackModel, ask: Callable[[Model], Awaitable[ModelResponse]], heard: Heard
) -> ModelResponse:
    """`ask(model)` (one model, with its retries) down the chain from the model that answered
    last, until one answers."""

    async def switched(from_model: str, to_model: str, error: ModelError) -> None:
        heard.clear()
        if run.listening:
            await run.emit(ModelSwitched(from_model, to_model, error))

    start = chain.start(last_answered_by(run))
    return await chain.answer(ask, start=start, on_switch=switched)


def traced_model(tracing: Tracing, model: Model) -> Model:
    """The loop's model with a span per call: each of a `FallbackModel`'s models its own (named
    by `reactloop.fallback.model`), so that its retries and switches stay visible."""
    if isinstance(model, FallbackModel):
        return model.with_models(lambda name, inner: tracing.model(inner, name))
    return tracing.model(model)
