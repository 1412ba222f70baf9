"""Credentials never show nor get stored: database passwords (URL userinfo, `?password=`, libpq
`password=`) and a model base URL's `user:pass@` and `?api-key=` stay out of reprs, error
messages, stored run ends and the CLI; a base URL's query stays after the endpoint's path."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from reactloop._core._messages import ModelRequest, ModelResponse, UserMessage
from reactloop._core._records import RunEnded
from reactloop._durable._leases import StoreTimeouts
from reactloop._durable._stores import PostgresStore, SqliteStore, store_from_url
from reactloop._errors import ConfigurationError, ProviderUnavailableError, ReactLoopError
from reactloop._loop._loop import ReActLoop
from reactloop._policies._retry import RetryPolicy
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop._redact import redacted
from reactloop._stored_errors import StoreError
from reactloop.testing import ScriptedModel
from tests.helpers.postgres_server import free_port
from tests.providers.wire_server import WireServer, json_reply

SECRET = "hunter2-SECRET-9f8e7d"
KEY = "azure-KEY-SECRET-31415"
PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("postgresql://app:pw@db/app", "postgresql://app:***@db/app"),
        ("postgresql://app:p%40ss@w@db:5432/app", "postgresql://app:***@db:5432/app"),
        (
            "postgresql://app@db/app?password=pw&sslmode=require",
            "postgresql://app@db/app?password=***&sslmode=require",
        ),
        ("host=db password=pw dbname=app", "host=db password=*** dbname=app"),
        ("host=db password = 'p w\\' x' dbname=app", "host=db password = *** dbname=app"),
        ("host=db sslpassword=pw", "host=db sslpassword=***"),
        (
            "https://u:pw@h/v1?api-version=2024&api-key=k",
            "https://u:***@h/v1?api-version=2024&api-key=***",
        ),
        (
            "https://h/o?X-Amz-Signature=s&X-Amz-Credential=c&n=1",
            "https://h/o?X-Amz-Signature=***&X-Amz-Credential=***&n=1",
        ),
        (
            "https://h/?key=k&token=t&access_token=a&secret=s&sig=g&apikey=p",
            "https://h/?key=***&token=***&access_token=***&secret=***&sig=***&apikey=***",
        ),
        ("https://h/cb#access_token=t", "https://h/cb#access_token=***"),
        (
            "store 'postgresql://a:pw@h/x' failed: PASSWORD=pw",
            "store 'postgresql://a:***@h/x' failed: PASSWORD=***",
        ),
    ],
)
def test_every_credential_form_is_masked(given: str, shown: str) -> None:
    assert redacted(given) == shown


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://app@db:5432/app",
        "https://h:8443/v1?api-version=2024-06-01&limit=5",
        "max_tokens=5, temperature=0.2, key: value",
        "mail ann@example.com about host:5432",
    ],
)
def test_text_without_credentials_is_left_alone(text: str) -> None:
    assert redacted(text) == text


def test_configuration_errors_quoting_a_url_mask_it() -> None:
    cases: list[Callable[[], object]] = [
        lambda: store_from_url(f"postgresqll://app:{SECRET}@db/app"),
        lambda: store_from_url(f"host=db password={SECRET}"),
        lambda: PostgresStore(f"mysql://app:{SECRET}@db/app"),
        lambda: OpenAIModel("m", api_key="k", base_url=f"ftp://u:{SECRET}@h/v1"),
        lambda: AnthropicModel("m", api_key="k", base_url=f"h/v1?api-key={SECRET}"),
    ]
    for make in cases:
        with pytest.raises(ConfigurationError) as caught:
            make()
        error = caught.value
        shown = f"{error} {error!r} {error.value!r}"
        assert SECRET not in shown and "***" in shown


def test_the_cli_never_prints_a_store_password() -> None:
    for url in (f"postgresqll://app:{SECRET}@db/app", f"host=db password={SECRET}"):
        done = subprocess.run(
            [sys.executable, "-m", "reactloop", "runs", "list", "--store", url],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0 and "***" in done.stderr
        assert SECRET not in done.stdout + done.stderr


def _conninfo(server: str, **parts: str) -> str:
    """A libpq key=value string for the test server, with `parts` added or replaced."""
    url = urlsplit(server)
    fields = {"host": url.hostname, "port": str(url.port), "user": url.username, **parts}
    return " ".join(f"{key}={value}" for key, value in fields.items())


def _failing_urls(server: str) -> list[str]:
    """Store URLs whose connection fails for real, each with a password in another form."""
    url = urlsplit(server)
    base = f"postgresql://{url.username}"
    unreachable, reachable = f"127.0.0.1:{free_port()}", f"{url.hostname}:{url.port}"
    return [
        f"postgresql://{url.username}:{SECRET}@{unreachable}/postgres",
        f"{base}@{unreachable}/postgres?password={SECRET}",
        f"{base}@{reachable}/no_such_database?password={SECRET}",
        f"postgresql://{url.username}:{SECRET}@{reachable}/no_such_database",
        f"postgresql://{url.username}:%zz{SECRET}@{reachable}/postgres",  # echoed by libpq
        _conninfo(server, dbname="no_such_database", password=SECRET),
        _conninfo(server, dbname="postgres", password=f"'{SECRET} x'", port=str(free_port())),
    ]


async def _error_of(loop: ReActLoop[Any]) -> ReactLoopError:
    """The error a run on a failing store ends with: raised, or its result's."""
    try:
        result = await loop.run("go")
    except StoreError as raised:
        return raised
    assert result.error is not None
    return result.error


@pytest.mark.anyio
async def test_store_errors_and_reprs_never_show_the_database_password(
    postgres_server: str,
) -> None:
    for url in _failing_urls(postgres_server):
        store = PostgresStore(url, worker_id="w1", timeouts=StoreTimeouts(reconnect=0.001))
        error = await _error_of(ReActLoop(ScriptedModel(["hi"]), store=store))
        assert isinstance(error, StoreError)
        shown = f"{store!r} {error} {error!r} {error.message}"
        assert SECRET not in shown, shown
        assert "run store" in str(error) and "***" in str(error)


class _LeakyModel(ScriptedModel):
    """A model whose calls fail with an error quoting credentials it was configured with."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise ProviderUnavailableError(
            f"cannot reach postgresql://app:{SECRET}@db/cache nor https://h/v1?api-key={KEY}",
            provider="custom",
        )


async def _ended(store: SqliteStore, run_id: str) -> RunEnded:
    ended = (await store.load(run_id)).records[-1]
    assert isinstance(ended, RunEnded)
    return ended


def _file_text(path: Path) -> str:
    """Every byte the SQLite store wrote (its file and any journal beside it), as text."""
    files = sorted(path.parent.glob(f"{path.name}*"))
    assert path in files
    return "".join(file.read_bytes().decode("latin-1") for file in files)


@pytest.mark.anyio
async def test_a_stored_run_end_never_holds_a_credential(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    loop = ReActLoop(_LeakyModel([]), store=store, retry=RetryPolicy(max_retries=0))
    result = await loop.run("go")
    assert result.error is not None and "cannot reach" in result.error.message
    ended = await _ended(store, result.run_id)
    shown = f"{result.error} {result.stop_detail} {ended}"
    assert SECRET not in shown and KEY not in shown and "***" in shown
    await store.aclose()
    assert SECRET not in _file_text(tmp_path / "runs.db")


def _echo(status: int) -> Any:
    """A handler answering `status` with a message that quotes the request's query and the
    key out of place, as some servers do."""

    def answer(request: Any) -> Any:
        message = f"key {KEY} refused for {request.path} (user app, password {SECRET})"
        return json_reply({"error": {"message": message, "type": "invalid_request_error"}}, status)

    return answer


def _model(kind: str, base_url: str) -> OpenAIModel | AnthropicModel:
    if kind == "openai":
        return OpenAIModel("m", api_key="sk-test-0123456789", base_url=base_url)
    return AnthropicModel("m", api_key="sk-test-0123456789", base_url=base_url)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [401, 404, 500])
async def test_a_base_url_with_credentials_never_shows_them(
    kind: str, status: int, tmp_path: Path
) -> None:
    path = "/v1/chat/completions" if kind == "openai" else "/v1/messages"
    async with WireServer.running() as server:
        server.handler = _echo(status)
        host = urlsplit(server.url).netloc
        prefix = "/v1/" if kind == "openai" else "/"
        base_url = f"http://app:{SECRET}@{host}{prefix}?api-version=2024-06-01&api-key={KEY}"
        store = SqliteStore(tmp_path / "runs.db")
        async with _model(kind, base_url) as model:
            loop = ReActLoop(model, store=store, retry=RetryPolicy(max_retries=0))
            result = await loop.run("hi")
        [request] = server.requests
    assert request.path == f"{path}?api-version=2024-06-01&api-key={KEY}"
    error = result.error
    assert error is not None and "***" in error.message
    ended = await _ended(store, result.run_id)
    shown = f"{model!r} {error} {error!r} {vars(error)} {result.stop_detail} {ended}"
    assert SECRET not in shown and KEY not in shown, shown
    await store.aclose()
    assert SECRET not in _file_text(tmp_path / "runs.db")
    assert KEY not in _file_text(tmp_path / "runs.db")


@pytest.mark.anyio
async def test_a_base_url_query_goes_after_the_endpoint_path() -> None:
    async with WireServer.running() as server:
        server.reply_with(json_reply({"error": {"message": "no", "type": "x"}}, 400))
        base_url = f"{server.url}/openai/deployments/d1?api-version=2024-06-01"
        async with OpenAIModel("m", api_key="k", base_url=base_url) as model:
            with pytest.raises(ReactLoopError) as caught:
                await model.request(ModelRequest((UserMessage("hi"),)))
    [request] = server.requests
    assert request.path == "/openai/deployments/d1/chat/completions?api-version=2024-06-01"
    assert "/d1/chat/completions?api-version=2024-06-01" in str(caught.value)
