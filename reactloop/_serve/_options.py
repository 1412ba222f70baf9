"""How a `ChatServer` is configured: who the user is and what they may do (hooks), the limits
a hostile client meets, CORS, and what a dropped connection does to its run. Grouped here
because the serving package owns them (ADR-0024)."""

from __future__ import annotations

import enum
import time
from collections.abc import Awaitable, Callable, Mapping

from attrs import field, frozen

from reactloop._serve._contracts import AccessRequest
from reactloop._validate import (
    boolean,
    checked_arguments,
    fail,
    function,
    integer,
    member,
    number,
    optional_function,
    optional_instance,
    sequence_of,
    text,
)

Identify = Callable[[Mapping[str, str]], "str | Awaitable[str | None] | None"]
"""Who sent a request, from its headers (lower-cased names): a user id, or None to refuse it
(401). May be async."""

Authorize = Callable[[AccessRequest], "bool | Awaitable[bool]"]
"""Whether a user may do an action to a run or session: False refuses it (403). May be async."""

ANONYMOUS = "anonymous"
"""The user id of every request when no `identify` hook is given (a local, single-user server)."""


class DisconnectPolicy(enum.StrEnum):
    """What a run does when the last client streaming it goes away."""

    KEEP_RUNNING = "keep_running"  # it goes on; a client reconnects to the rest (durable runs)
    INTERRUPT = "interrupt"  # it stops at the next safe point (StopReason.INTERRUPTED)


@checked_arguments
@frozen
class CorsOptions:
    """Which other origins' pages may call the endpoints (browsers enforce it; `allow_origins`
    of `("*",)` allows any, without credentials)."""

    allow_origins: tuple[str, ...] = ()
    allow_credentials: bool = False
    allow_headers: tuple[str, ...] = ("content-type", "authorization", "last-event-id")
    max_age: int = 600

    def __attrs_post_init__(self) -> None:
        origins = sequence_of("CorsOptions.allow_origins", self.allow_origins, text, "origins")
        object.__setattr__(self, "allow_origins", origins)
        allowed = boolean("CorsOptions.allow_credentials", self.allow_credentials)
        if allowed and "*" in origins:
            rule = "the origins named, not '*', when credentials are allowed (browsers refuse both)"
            fail("CorsOptions.allow_origins", origins, rule)
        headers = sequence_of("CorsOptions.allow_headers", self.allow_headers, text, "headers")
        object.__setattr__(self, "allow_headers", headers)
        integer("CorsOptions.max_age", self.max_age, minimum=0)


@checked_arguments
@frozen
class ServeOptions:
    """A server's settings; every one has a default fit for a local, single-user server.

    `identify` names the request's user (default: everyone is `"anonymous"`); `authorize`
    decides each action (default: a user may touch only the runs and sessions they started);
    `max_body_bytes` caps a request body and `body_timeout` how long it may take to arrive (a
    client declaring more than it sends holds a connection no longer); `max_runs_per_user`
    caps a user's runs streaming at once; `on_disconnect` says what a dropped client does to
    its run (default: keep running when the loop has a store, else interrupt);
    `keep_events_seconds` how long a finished run's events stay in memory for reconnects;
    `follow_interval` how often a run another worker drives is read from the store; `clock`
    is the monotonic clock (injected by tests).
    """

    identify: Identify | None = None
    authorize: Authorize | None = None
    max_body_bytes: int = 1_048_576
    body_timeout: float = 30.0
    max_runs_per_user: int = 4
    cors: CorsOptions | None = None
    on_disconnect: DisconnectPolicy | None = None
    keep_events_seconds: float = 300.0
    follow_interval: float = 0.5
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def __attrs_post_init__(self) -> None:
        optional_function("ServeOptions.identify", self.identify, 1)
        optional_function("ServeOptions.authorize", self.authorize, 1)
        integer("ServeOptions.max_body_bytes", self.max_body_bytes)
        number("ServeOptions.body_timeout", self.body_timeout)
        integer("ServeOptions.max_runs_per_user", self.max_runs_per_user)
        optional_instance("ServeOptions.cors", self.cors, CorsOptions, "a CorsOptions")
        if self.on_disconnect is not None:
            policy = member("ServeOptions.on_disconnect", self.on_disconnect, DisconnectPolicy)
            object.__setattr__(self, "on_disconnect", policy)
        number("ServeOptions.keep_events_seconds", self.keep_events_seconds, inclusive=True)
        number("ServeOptions.follow_interval", self.follow_interval)
        function("ServeOptions.clock", self.clock, 0)
