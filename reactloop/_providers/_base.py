"""`HttpModel`: what every HTTP provider shares (its channel, name, base URL, closing), and the
settings check a loop makes when it is built."""

from __future__ import annotations

from typing import Self

from reactloop._core import JsonObject, ModelRequest, ModelSettings, UserMessage
from reactloop._providers._http import HttpChannel
from reactloop._providers._profiles import PERMISSIVE, ModelProfile, check_profile


class HttpModel:
    """What every HTTP provider shares: its channel, name, base URL, and closing (`async with`)."""

    _channel: HttpChannel
    profile: ModelProfile
    supports_native_output: bool
    supports_forced_tool_choice: bool

    def _use_profile(
        self, owner: str, profile: object, model: str, unknown: ModelProfile = PERMISSIVE
    ) -> None:
        """Take `profile=` (None: the model's family's, `unknown` for a model of no known family)
        and what the loop reads from it: native output, forced tool choice."""
        self.profile = check_profile(owner, profile, model, unknown)
        self.supports_native_output = self.profile.native_output
        self.supports_forced_tool_choice = self.profile.forced_tool_choice

    @property
    def provider(self) -> str:
        """The provider name errors carry."""
        return self._channel.provider

    @property
    def base_url(self) -> str:
        """The server's base URL (without the endpoint's path)."""
        return self._channel.base_url

    def _body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        """The request body this provider sends (each provider encodes its own)."""
        raise NotImplementedError

    def check_settings(self, settings: ModelSettings) -> None:
        """Refuse settings this model does not take, with the error a request would raise,
        without sending anything (a loop calls it when it is built)."""
        self._body(ModelRequest((UserMessage("."),), settings=settings), stream=False)

    async def aclose(self) -> None:
        """Close the connection pool (unless the caller passed its own `http_client`)."""
        await self._channel.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
