"""`FallbackModel`: an ordered list of models, the next one asked when a call to the current one
fails with an error that says the provider cannot answer now.

Inside a `ReActLoop` the loop drives the list: each model gets the loop's `RetryPolicy` (its
retries are `ModelRetrying` events), a model whose retries gave up with a switching error hands
over to the next (a `ModelSwitched` event), and the step's response names the configured model
that answered (`ModelResponse.answered_by`, kept in the journal). A run's later steps, resumed or
not, start with the model that answered last. Outside a loop, `request` and `stream` make one
attempt per model, in order. Another vendor's reasoning (signatures, encrypted reasoning) is never
sent: each provider replays only its own (ADR-0026).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Self

from attrs import evolve

from reactloop._core import DeltaSink, Model, ModelRequest, ModelResponse
from reactloop._costs import price_keys
from reactloop._errors import (
    ConfigurationError,
    ErrorCode,
    ModelError,
    ModelTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._validate import checked_arguments, fail, items

SwitchOn = type[ModelError] | ErrorCode | int
"""What makes a fallback switch: an error class, an error code, or an HTTP status."""

DEFAULT_SWITCH_ON: tuple[SwitchOn, ...] = (
    ProviderUnavailableError,
    RateLimitedError,
    ModelTimeoutError,
)
"""Unavailable or overloaded providers, rate limits past the retry budget, and timeouts."""

Attempt = Callable[[Model], Awaitable[ModelResponse]]
OnSwitch = Callable[[str, str, ModelError], Awaitable[None]]


def _resolved(index: int, model: object) -> tuple[str, Model]:
    """A model of the list and its key: the model string as given, else `provider:model` when
    the model says both (the HTTP providers do), else its class name."""
    if isinstance(model, str):
        from reactloop._providers._registry import model_from_string  # httpx: only when used

        return model.strip(), model_from_string(model)
    if not isinstance(model, Model):
        fail(f"FallbackModel.models[{index}]", model, "a model string or a Model")
    provider, name = getattr(model, "provider", None), getattr(model, "model", None)
    if isinstance(provider, str) and isinstance(name, str) and name:
        return f"{provider}:{name}", model
    return type(model).__name__, model


def _unique(keys: list[str]) -> tuple[str, ...]:
    """The keys, a repeated one suffixed `#2`, `#3`, ... so that each names one position."""
    seen: dict[str, int] = {}
    unique = []
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        unique.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return tuple(unique)


def _switch_rule(index: int, value: object) -> SwitchOn:
    option = f"FallbackModel.switch_on[{index}]"
    if isinstance(value, ErrorCode):
        return value
    if isinstance(value, type) and issubclass(value, ModelError):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
        return value
    rule = "a ModelError subclass, an ErrorCode or an HTTP status in 400..599"
    raise ConfigurationError.invalid(option, value, rule)


@checked_arguments
class FallbackModel:
    """Tries `models` in order, switching to the next when one fails with an error `switch_on`
    names (by class, `ErrorCode` or HTTP status; by default unavailable or overloaded
    providers, rate limits and timeouts). Any other error, and cancellation, is never a switch.

    `models` are the resolved models, in order (a string is resolved as `ReActLoop` does);
    `names` their keys, which `ModelResponse.answered_by` and `ModelSwitched` use.
    """

    def __init__(
        self, models: Sequence[Model | str], *, switch_on: Sequence[SwitchOn] = DEFAULT_SWITCH_ON
    ) -> None:
        given = items("FallbackModel.models", models, "models or model strings")
        if len(given) < 2:
            fail("FallbackModel.models", models, "at least two models, the first tried first")
        pairs = [_resolved(index, model) for index, model in enumerate(given)]
        rules = items("FallbackModel.switch_on", switch_on, "error classes, codes or statuses")
        self.models: tuple[Model, ...] = tuple(model for _, model in pairs)
        self.names: tuple[str, ...] = _unique([key for key, _ in pairs])
        self.switch_on: tuple[SwitchOn, ...] = tuple(
            _switch_rule(index, rule) for index, rule in enumerate(rules)
        )
        owned = zip(given, self.models, strict=True)
        self._owned = tuple(model for spec, model in owned if isinstance(spec, str))

    def __repr__(self) -> str:
        return f"FallbackModel({list(self.names)!r})"

    def with_models(self, wrap: Callable[[str, Model], Model]) -> FallbackModel:
        """A copy whose models are `wrap(name, model)`, names, order and rules kept (how
        tracing gives each model its own span)."""
        copy = object.__new__(FallbackModel)
        copy.__dict__.update(self.__dict__)
        copy.models = tuple(wrap(*pair) for pair in zip(self.names, self.models, strict=True))
        return copy

    def switches(self, error: BaseException) -> bool:
        """Whether `error` hands the call to the next model (never a cancellation)."""
        if not isinstance(error, ModelError):
            return False
        for rule in self.switch_on:
            if isinstance(rule, ErrorCode):
                if error.code is rule:
                    return True
            elif isinstance(rule, int):
                if error.status == rule:
                    return True
            elif isinstance(error, rule):
                return True
        return False

    def start(self, answered_by: str | None) -> int:
        """Where a call starts: the model named `answered_by` (the run's last answer), else the
        first."""
        if answered_by is None or answered_by not in self.names:
            return 0
        return self.names.index(answered_by)

    async def answer(
        self, attempt: Attempt, *, start: int = 0, on_switch: OnSwitch | None = None
    ) -> ModelResponse:
        """`attempt(model)` for each model from `start` on (then those before it), until one
        answers; a switching failure calls `on_switch(from, to, error)` first. The last error is
        raised as it is, noted with every model's failure."""
        count = len(self.models)
        failures: list[str] = []
        for offset in range(count):
            index = (start + offset) % count
            try:
                response = await attempt(self.models[index])
            except ModelError as error:
                failures.append(f"{self.names[index]}: {error.code.value}: {error.message}")
                if not self.switches(error):
                    _note(error, failures, "it does not switch")
                    raise
                if offset == count - 1:
                    _note(error, failures, "every fallback model failed")
                    raise
                if on_switch is not None:
                    await on_switch(self.names[index], self.names[(index + 1) % count], error)
                continue
            return evolve(response, answered_by=self.names[index])
        raise AssertionError("unreachable: the last model's failure is raised")  # pragma: no cover

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One attempt per model, in order, until one answers."""
        return await self.answer(lambda model: model.request(request))

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed attempt per model, in order (a failed model's deltas are void)."""
        return await self.answer(lambda model: model.stream(request, on_delta))

    def price_keys(self) -> tuple[tuple[str, str], ...] | None:
        """Every (provider, model) the list may answer with, for a loop's price table (a cost
        budget checks each when the loop is built); None when one of its models names none."""
        keys = [price_keys(model) for model in self.models]
        return None if None in keys else tuple(key for listed in keys if listed for key in listed)

    def price_key(self, response: ModelResponse) -> tuple[str, str] | None:
        """The (provider, model) of the model that gave `response` (its `answered_by`), so the
        call is priced as that model's."""
        if response.answered_by not in self.names:
            return None
        keys = price_keys(self.models[self.names.index(response.answered_by)])
        return keys[0] if keys is not None and len(keys) == 1 else None

    def check_settings(self, settings: object) -> None:
        """Refuse settings any of the models refuses (each model that checks its settings)."""
        for model in self.models:
            check = getattr(model, "check_settings", None)
            if callable(check):
                check(settings)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the models this one made from strings (the others belong to the caller)."""
        for model in self._owned:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def _note(error: ModelError, failures: list[str], verdict: str) -> None:
    """Name every model's failure on the error raised, once more than one model was asked."""
    if len(failures) > 1:
        error.add_note(f"reactloop: FallbackModel gave up, {verdict}: " + "; ".join(failures))
