"""Provider test fixtures: the loopback wire server and a model of each provider aimed at it."""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import AsyncIterator, Generator, Mapping
from pathlib import Path
from typing import Any

import pytest

import reactloop._providers
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel, OpenAIResponsesModel
from tests.helpers.vendor_schemas import VendorSchemaError, wire_problems
from tests.providers.protocol import OpenAIRequestSchema
from tests.providers.wire_server import Reply, Request, WireServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WIRE = FIXTURES / "wire"
OPENAPI = FIXTURES / "openai" / "create_chat_completion_request.json"
API_KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    """A wire server running in the test's task group."""
    async with WireServer.running() as running:
        yield running


@pytest.fixture
async def openai(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """An OpenAI model talking to the wire server."""
    async with OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


@pytest.fixture
async def anthropic(server: WireServer) -> AsyncIterator[AnthropicModel]:
    """An Anthropic model talking to the wire server."""
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.fixture
async def responses(server: WireServer) -> AsyncIterator[OpenAIResponsesModel]:
    """An OpenAI Responses model (a reasoning family) talking to the wire server."""
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=url) as model:
        yield model


@pytest.fixture
async def gemini(server: WireServer) -> AsyncIterator[GeminiModel]:
    """A Gemini model (the native API) talking to the wire server."""
    async with GeminiModel("gemini-2.5-flash", api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.fixture(scope="session")
def openai_schema() -> OpenAIRequestSchema:
    """The published request schema (the subset kept in tests/fixtures/openai)."""
    return OpenAIRequestSchema(OPENAPI)


VIOLATIONS = pytest.StashKey[list[str]]()
AZURE_MODELS = ("AzureOpenAIModel", "AzureOpenAIResponsesModel")

OVERRIDDEN = (
    "a profile override (`profile=attrs.evolve(..., sampling=True)`) sends `temperature` to"
    " Anthropic by the user's choice, a field the anthropic SDK's MessageCreateParams (2.14.0)"
    " does not define: reactloop refuses it by default for that reason"
)
KNOWN_VIOLATIONS = {
    "test_profiles.py::test_an_override_sends_what_the_family_would_refuse": OVERRIDDEN,
}
"""Tests whose requests break a vendor's definition today, by `file::test[params]` (`*`: any
parameter): each is a strict xfail that only a `VendorSchemaError` satisfies, so that another
failure still fails and the fix shows as an unexpected pass."""


def _known(item: pytest.Item) -> str | None:
    where = f"{item.path.name}::{item.name}"
    for pattern, reason in KNOWN_VIOLATIONS.items():
        literal = pattern.replace("[", "[[]")  # brackets are the test's parameters, not a class
        if fnmatch.fnmatchcase(where, literal) or where.split("[", 1)[0] == pattern:
            return reason
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the known violations (only the items of this folder: the hook sees the session's)."""
    here = Path(__file__).parent
    for item in items:
        reason = _known(item) if item.path.parent == here else None
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, raises=VendorSchemaError, reason=reason))


def _noting_extra_body(cls: type, exempt: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrap `cls.__init__` so that the keys of every `extra_body` given to it are noted."""
    original = cls.__init__  # type: ignore[misc]

    @functools.wraps(original)
    def init(self: object, *args: Any, **kwargs: Any) -> None:
        extra = kwargs.get("extra_body")
        if isinstance(extra, Mapping):
            exempt.update(extra)
        original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", init)


@pytest.fixture(autouse=True)
def vendor_checked_bodies(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request body sent to a wire server in these tests is checked against the vendor's
    own definition (tests/helpers/vendor_schemas.py: the official SDK's request types, and for
    OpenAI the OpenAPI document), by the path it goes to; a violation fails the test
    (`pytest_runtest_call` below). Exempt: the top-level fields the test's models were given
    through `extra_body`, nothing else."""
    violations: list[str] = []
    exempt: set[str] = set()
    request.node.stash[VIOLATIONS] = violations
    models = ("OpenAIModel", "AnthropicModel", "OpenAIResponsesModel", "GeminiModel")
    for name in (*models, *AZURE_MODELS):
        provider = getattr(reactloop._providers, name, None)
        if isinstance(provider, type):
            _noting_extra_body(provider, exempt, monkeypatch)
    answer = WireServer._answer

    async def checked(self: WireServer, incoming: Request) -> Reply:
        if incoming.method == "POST":
            violations.extend(wire_problems(incoming.path, incoming.body, exempt))
        return await answer(self, incoming)

    monkeypatch.setattr(WireServer, "_answer", checked)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test whose requests broke a vendor's definition, even when it passed otherwise."""
    result = yield
    violations = item.stash.get(VIOLATIONS, [])
    if violations:
        raise VendorSchemaError("\n".join(violations))
    return result
