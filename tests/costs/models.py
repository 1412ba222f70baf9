"""Scripted models that name a provider and model, as an HTTP model does, so a loop can price
their calls; and one that lists several (provider, model) pairs, as a fallback model does."""

from __future__ import annotations

from collections.abc import Iterable

from reactloop.models import ModelResponse
from reactloop.testing import ScriptedModel

Script = Iterable[ModelResponse | str]


class NamedModel(ScriptedModel):
    """A scripted model answering as `provider`'s `model`."""

    def __init__(self, script: Script, provider: str, model: str) -> None:
        super().__init__(script)
        self.provider = provider
        self.model = model


class ChoosingModel(ScriptedModel):
    """A scripted model that may answer as any of `keys`; each response's `model` names which."""

    def __init__(self, script: Script, keys: Iterable[tuple[str, str]]) -> None:
        super().__init__(script)
        self.keys = tuple(keys)

    def price_keys(self) -> tuple[tuple[str, str], ...]:
        return self.keys

    def price_key(self, response: ModelResponse) -> tuple[str, str] | None:
        return next((key for key in self.keys if key[1] == response.model), None)
