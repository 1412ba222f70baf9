"""A loop's toolsets (MCP servers) on Temporal: their listing and their calls are activities.

In the workflow, each of the loop's toolsets is a `ListedToolset` whose tools come from the
loop's toolsets activity (one activity lists every toolset, at most once per workflow task, so
the listing a run makes when it opens and its first step's share one); each listed tool checks
its arguments against its input schema in the workflow, as an MCP tool does, and is called by
the loop's tool activity (`ActivityTool`). On the worker, the listing and the calls use the
connections the worker holds open (`temporal_worker` opens the loops' toolsets for its life, as
`async with loop:` does), else a connection opened for that one activity.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from attrs import frozen
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from reactloop._core import RunContext, Tool, ToolSource, ToolSpec
from reactloop._errors import ToolsetConnectionError, ToolsetError
from reactloop._schema import compile_input, schema_arguments
from reactloop._temporal._contracts import toolsets_activity
from reactloop._temporal._options import ToolActivity
from reactloop._temporal._payloads import decode, encode
from reactloop._tools import LoopToolsets

if TYPE_CHECKING:
    from reactloop._loop import ReActLoop

TOOLSET_ERROR = "reactloop.ToolsetError"
"""The `ApplicationError` type of a listing the toolset refused or could not make (its details:
the error's class name, the toolset's name and the problem)."""

_LISTING_ATTEMPTS = 3  # a listing changes nothing: Temporal may retry it


@frozen
class ListedTool:
    """A toolset's tool as the workflow knows it: its spec and the traits the loop reads."""

    spec: ToolSpec
    timeout: float | None = None
    requires_approval: bool = False
    external: bool = False
    idempotent: bool = False
    exclusive: bool = False


@frozen
class ToolsetListing:
    """The toolsets activity's result: each toolset's tools, in the loop's order of toolsets."""

    toolsets: tuple[tuple[ListedTool, ...], ...]


@frozen
class ListingRequest:
    """The toolsets activity's input: the loop's name and the run it lists for."""

    loop: str
    run_id: str


def listed(tool: Tool) -> ListedTool:
    """What the workflow needs of a listed tool (its traits read with the loop's defaults)."""
    return ListedTool(
        tool.spec,
        tool.timeout,
        bool(getattr(tool, "requires_approval", False)),
        bool(getattr(tool, "external", False)),
        getattr(tool, "idempotent", False) is True,
        bool(tool.exclusive),
    )


# --- the workflow's side -------------------------------------------------------------------


class SpecTool:
    """A listed tool in the workflow: its spec and traits, its arguments checked against its
    input schema as the MCP tool checks them; the call itself is the tool activity's
    (`ActivityTool` wraps it), so `invoke` here is never reached."""

    def __init__(self, tool: ListedTool) -> None:
        self.listed = tool
        self.spec = tool.spec
        self.timeout = tool.timeout
        self.exclusive = tool.exclusive
        self.idempotent = tool.idempotent
        self.requires_approval = tool.requires_approval
        self.external = tool.external
        self._convert = compile_input(tool.spec.parameters)

    @property
    def name(self) -> str:
        """The name the model uses."""
        return self.spec.name

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Parse the model's JSON and validate it against the tool's input schema."""
        return schema_arguments(self.name, arguments, self._convert)

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Never called: the workflow's `ActivityTool` sends the call to the worker."""
        raise RuntimeError(f"tool {self.name!r} runs on the worker, by the tool activity")


class Listing:
    """The listing of one workflow run's toolsets: the toolsets activity, asked at most once
    per workflow task (the time is the task's: one listing serves a run's opening and its first
    step, and every toolset of a step), its tools rebuilt only for a toolset whose list changed
    (the same tuple otherwise: the loop reuses what it built from it). Deterministic on replay:
    the listing is the activity's recorded result."""

    def __init__(self, name: str, calls: Calls, options: ToolActivity, count: int) -> None:
        self._name = name
        self._calls = calls
        self._options = options
        self._at: float | None = None
        self._specs: tuple[tuple[ListedTool, ...], ...] = ((),) * count
        self._tools: list[tuple[Tool, ...]] = [()] * count

    async def tools(self, index: int) -> tuple[Tool, ...]:
        """Toolset `index`'s tools as the latest listing gives them."""
        if self._at != workflow.time():
            self._update(await self._list())
            self._at = workflow.time()
        return self._tools[index]

    async def _list(self) -> ToolsetListing:
        options = self._options
        request = ListingRequest(self._name, workflow.info().workflow_id)
        try:
            data = await self._calls.execute(
                toolsets_activity(self._name),
                encode(request),
                start_to_close_timeout=timedelta(seconds=options.start_to_close),
                heartbeat_timeout=timedelta(seconds=options.heartbeat),
                retry_policy=RetryPolicy(maximum_attempts=_LISTING_ATTEMPTS),
                task_queue=options.task_queue,
                summary="toolsets listing",
            )
        except ActivityError as failure:
            raise toolset_error_of(failure) from None
        return decode(data, ToolsetListing)

    def _update(self, listing: ToolsetListing) -> None:
        for index, specs in enumerate(listing.toolsets[: len(self._specs)]):
            if specs != self._specs[index]:
                self._tools[index] = tuple(self._calls.wrap(SpecTool(spec)) for spec in specs)
        self._specs = listing.toolsets


def toolset_error_of(failure: ActivityError) -> Exception:
    """The error a failed listing stands for: the toolset's own (`ToolsetError`, or its
    `ToolsetConnectionError`), else a connection error naming the worker's failure."""
    cause = failure.cause
    if isinstance(cause, ApplicationError) and cause.type == TOOLSET_ERROR and cause.details:
        kind, toolset, problem = cause.details
        if kind == ToolsetConnectionError.__name__:
            return ToolsetConnectionError(str(toolset), str(problem))
        return ToolsetError(str(toolset), str(problem))
    why = cause if cause is not None else failure
    return ToolsetConnectionError("(the worker)", f"the toolsets activity failed: {why}")


@frozen
class Calls:
    """How the workflow's listing reaches the worker: `execute` runs an activity (as
    `_proxies.executed` does, cancel-safe) and `wrap` makes a listed tool the loop's
    activity-backed tool."""

    execute: Callable[..., Awaitable[bytes]]
    wrap: Callable[[Tool], Tool]


@frozen
class _ListedSource:
    listing: Listing
    index: int

    async def list_tools(self) -> Sequence[Tool]:
        return await self.listing.tools(self.index)


class ListedToolset:
    """One of the loop's toolsets in the workflow: open for every run (its source reads the
    run's listing), never connected from workflow code."""

    def __init__(self, name: str, source: ToolSource) -> None:
        self._name = name
        self._source = source

    @property
    def name(self) -> str:
        """The real toolset's name (messages name it as a local run does)."""
        return self._name

    @property
    def open_source(self) -> ToolSource:
        """The listing's source: always open."""
        return self._source

    def connect(self) -> AbstractAsyncContextManager[ToolSource]:
        """Never needed (the source is always open); refused, since it would be I/O."""
        raise ToolsetError(self._name, "a workflow never connects to it: its worker does")


def listed_toolsets(
    host: LoopToolsets, name: str, calls: Calls, options: ToolActivity
) -> LoopToolsets:
    """The workflow's stand-ins for the loop's toolsets, sharing one listing per run."""
    listing = Listing(name, calls, options, len(host.toolsets))
    return LoopToolsets(
        tuple(
            ListedToolset(toolset.name, _ListedSource(listing, index))
            for index, toolset in enumerate(host.toolsets)
        )
    )


# --- the worker's side ---------------------------------------------------------------------


async def _source(host: LoopToolsets, index: int, stack: AsyncExitStack) -> ToolSource:
    """The open connection of toolset `index`, else one opened for this activity."""
    source = host.shared(index)
    if source is None:
        source = await stack.enter_async_context(host.toolsets[index].connect())
    return source


async def listing_of(loop: ReActLoop[Any]) -> ToolsetListing:
    """Every toolset's tools now; a toolset's failure fails the activity for good, carrying it
    (the workflow raises the same error, as the local run would)."""
    host = loop.config.toolsets
    if host is None:
        return ToolsetListing(())
    found: list[tuple[ListedTool, ...]] = []
    try:
        async with AsyncExitStack() as stack:
            for index in range(len(host.toolsets)):
                tools = await (await _source(host, index, stack)).list_tools()
                found.append(tuple(listed(tool) for tool in tools))
    except ToolsetError as error:
        details = (type(error).__name__, error.toolset, error.problem)
        raise ApplicationError(
            error.message, *details, type=TOOLSET_ERROR, non_retryable=True
        ) from None
    return ToolsetListing(tuple(found))


@asynccontextmanager
async def held_open(loops: Sequence[ReActLoop[Any]]) -> AsyncIterator[None]:
    """The loops' toolsets opened for the block (a worker's life), as `async with loop:` opens
    them: one connection per server, shared by every listing and call the worker runs. A loop
    already entered keeps the connections its owner opened (and closes them)."""
    hosts = {id(host): host for loop in loops if (host := loop.config.toolsets) is not None}
    async with AsyncExitStack() as stack:
        for host in hosts.values():
            if not host.opened:
                await host.open()
                stack.push_async_callback(host.close)
        yield


@asynccontextmanager
async def toolset_tool(loop: ReActLoop[Any], name: str) -> AsyncIterator[Tool | None]:
    """The toolset tool `name` for one call, on an open connection (held for the block when
    it was opened for this call); None when no toolset lists it now."""
    host = loop.config.toolsets
    if host is None:
        yield None
        return
    async with AsyncExitStack() as stack:
        for index in range(len(host.toolsets)):
            for tool in await (await _source(host, index, stack)).list_tools():
                if tool.name == name:
                    yield tool
                    return
        yield None
