"""A model call a phase makes for itself (a plan, a critique), under the loop's rules."""

from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING

import anyio

from reactloop._core import Model, ModelRequest, ModelResponse
from reactloop._errors import ContractError, ModelTimeoutError
from reactloop._phases.reasoning import announce_retry
from reactloop._policies import call_with_retry

if TYPE_CHECKING:
    from reactloop._loop import Run


async def ask_model(
    run: Run, request: ModelRequest, *, model: Model | None = None
) -> ModelResponse:
    """Ask a model for a phase of your own, as the reasoning phase asks it: the loop's retry
    policy (each retry a `ModelRetrying` event), its `model_timeout`, the lease check of a
    durable run, telemetry's chat span, and the tokens counted on the run (the open step's, or
    `setup_usage` before the first step; priced when the loop has a price table). `model`
    defaults to the loop's. The answer is not streamed as the run's text, nor journaled: a
    resumed run asks again.
    """
    chosen = run.config.model if model is None else _traced(run, model)
    await run.journal.check_lease()
    response = await call_with_retry(
        run.config.retry,
        partial(_once, run, chosen, request),
        sleep=run.config.sleep,
        on_retry=partial(announce_retry, run),
    )
    pricing = run.config.pricing
    spent = response.usage if pricing is None else pricing.priced(chosen, response, response.usage)
    run.state.record_usage(spent)
    return response


def _traced(run: Run, model: Model) -> Model:
    tracing = run.config.tracing
    return model if tracing is None else tracing.model(model)


async def _once(run: Run, model: Model, request: ModelRequest) -> ModelResponse:
    """One plain request within the loop's `model_timeout`; a broken model is a ContractError."""
    timeout = run.config.model_timeout
    try:
        with anyio.fail_after(timeout):
            pending = model.request(request)
            if not inspect.isawaitable(pending):
                raise _broke(model, "is async: it returns an awaitable", pending)
            response = await pending
    except TimeoutError:
        raise ModelTimeoutError(f"model call exceeded its model_timeout of {timeout:g} s") from None
    if not isinstance(response, ModelResponse):
        raise _broke(model, "returns a ModelResponse", response)
    return response


def _broke(model: Model, rule: str, value: object) -> ContractError:
    return ContractError(f"model {type(model).__name__}", f"Model.request {rule}", value)
