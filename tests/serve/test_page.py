"""The built-in chat page in headless Chromium (Debian's `chromium`, driven by playwright) against
`reactloop serve` in a child process, whose loop's tool needs approval: a question streams its
answer, the call shows with its arguments, Approve runs it and the answer follows (Deny: it does
not run), the run's trace page opens from its link; no console errors, nothing fetched but the
server's own endpoints. Screenshots are kept outside the repo."""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli_trace import CHROMIUM, ENABLE, _browser_missing, artifacts
from tests.serve.loops import FORECAST, REFUSED, THOUGHT

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 30.0
QUESTION = "What is the weather in Paris?"


@contextmanager
def serving(spec: str, backend: str) -> Iterator[str]:
    """`reactloop serve SPEC --port 0` (on trio with `--trio`) in a child process; its URL.
    Stopped with Ctrl-C (SIGINT) after the block, which it must obey."""
    command = [sys.executable, "-m", "reactloop", "serve", spec, "--port", "0"]
    command += ["--trio"] if backend == "trio" else []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            ready, _, _ = select.select([child.stdout], [], [], HANG_GUARD)
            line = child.stdout.readline() if ready else ""
            assert line.startswith("reactloop serve: http://"), f"no URL from the server: {line!r}"
            yield line.split()[2]
            child.send_signal(signal.SIGINT)
            assert child.wait(timeout=HANG_GUARD) == 0
        finally:
            if child.poll() is None:
                child.kill()


@pytest.fixture(params=["asyncio", "trio"])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The weather loop (its tool needs approval) served on each backend."""
    with serving("tests.serve.loops:weather_loop", request.param) as url:
        yield url


@pytest.fixture
def page() -> Iterator[Any]:
    """A fresh page in headless Chromium; skipped only outside CI, saying how to enable it."""
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("REACTLOOP_CI") == "1":
            pytest.fail(f"the chat page test must run in CI: {missing}")
        pytest.skip(f"{missing}: {ENABLE} to run the chat page test")
    sync_playwright = importlib.import_module("playwright.sync_api").sync_playwright
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield browser.new_page(viewport={"width": 1100, "height": 900})
        finally:
            browser.close()


def expect(locator: Any) -> Any:
    """playwright's retrying assertions (imported only when the browser runs)."""
    return importlib.import_module("playwright.sync_api").expect(locator)


def watched(page: Any) -> tuple[list[str], list[str]]:
    """The page's console errors and warnings (and uncaught errors), and every URL it fetches."""
    problems: list[str] = []
    page.on(
        "console",
        lambda message: (
            problems.append(f"{message.type}: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    return problems, fetched


def ask(page: Any, server: str) -> Any:
    """Open the page, send the question, wait for the approval buttons; the tool call's box."""
    page.goto(server)
    page.fill("#question", QUESTION)
    page.keyboard.press("Enter")
    tool = page.locator(".msg.assistant .tool")
    expect(tool.locator("button.approve")).to_be_visible()
    expect(page.locator("#status")).to_have_text("ready")
    return tool


def test_a_question_streams_its_answer_and_an_approved_call_runs(
    page: Any, server: str, tmp_path: Path
) -> None:
    problems, fetched = watched(page)
    tool = ask(page, server)
    assert page.locator(".msg.user").inner_text().endswith(QUESTION)
    assert page.locator(".msg.assistant .text").first.inner_text() == "Let me check the weather."
    assert tool.locator(".name").inner_text() == "get_weather"
    assert json.loads(tool.locator("pre.args").inner_text()) == {"city": "Paris"}
    assert "waiting for your approval" in tool.inner_text()
    reasoning = page.locator(".msg.assistant details.reasoning")
    assert not reasoning.locator("pre").is_visible()  # collapsed until opened
    reasoning.locator("summary").click()
    assert reasoning.locator("pre").inner_text() == THOUGHT
    page.screenshot(path=str(artifacts(tmp_path) / "chat-page-approval.png"), full_page=True)

    tool.locator("button.approve").click()
    expect(tool.locator("pre.result")).to_have_text(f"Paris: {FORECAST}")
    answer = page.locator(".msg.assistant .text").last
    expect(answer).to_have_text(f"The forecast for Paris: {FORECAST}.")
    expect(page.locator("#status")).to_have_text("ready")
    assert page.locator(".msg.assistant").count() == 1  # the approval continued the same answer
    assert page.locator("#log b").count() == 0  # the run's markup is text, never HTML
    assert reasoning.locator("pre").is_visible()  # still open after the answer streamed
    page.screenshot(path=str(artifacts(tmp_path) / "chat-page-answer.png"), full_page=True)
    assert problems == []
    assert all(url.startswith(server) for url in fetched)  # nothing but its own server

    link = page.locator(".msg.assistant a.trace")
    run_id = link.inner_text().removeprefix("trace of run ")
    page.goto(server + link.get_attribute("href"))
    page.wait_for_selector(".step")
    assert run_id in page.locator("h1").inner_text()
    assert page.locator(".bar.tool").count() == 1  # the approved call ran once
    assert problems == []


def test_a_denied_call_does_not_run_and_the_answer_says_so(
    page: Any, server: str, tmp_path: Path
) -> None:
    problems, _ = watched(page)
    tool = ask(page, server)
    tool.locator("button.deny").click()
    expect(tool).to_have_class("tool output-denied")
    expect(tool.locator(".state")).to_have_text("denied")
    assert tool.locator("pre.result").count() == 0
    answer = page.locator(".msg.assistant .text").last
    expect(answer).to_have_text("I could not check the weather: the call was not run.")
    expect(page.locator("#status")).to_have_text("ready")
    page.screenshot(path=str(artifacts(tmp_path) / "chat-page-denied.png"), full_page=True)
    assert problems == []


def test_a_failed_run_shows_its_error_as_text(page: Any, tmp_path: Path) -> None:
    problems, _ = watched(page)
    with serving("tests.serve.loops:failing_loop", "asyncio") as url:
        page.goto(url)
        page.fill("#question", QUESTION)
        page.locator("button.send").click()
        failure = page.locator(".msg.assistant .failure")
        expect(failure).to_contain_text(REFUSED)
        expect(page.locator("#status")).to_have_text("ready")
        assert not page.locator("#error").is_visible()  # for requests that fail: this one did not
        assert page.locator("#log script").count() == 0  # its markup is text
        page.screenshot(path=str(artifacts(tmp_path) / "chat-page-error.png"), full_page=True)
    assert problems == []


def test_a_structured_answer_shows_as_its_value(page: Any) -> None:
    problems, _ = watched(page)
    with serving("tests.serve.loops:weather_report_loop", "asyncio") as url:
        page.goto(url)
        page.fill("#question", QUESTION)
        page.locator("button.send").click()
        output = page.locator(".msg.assistant pre.output")
        expect(output).to_contain_text('"city": "Paris"')
        expect(output).to_contain_text('"degrees": 21')
        expect(page.locator("#status")).to_have_text("ready")
        assert page.locator(".msg.assistant .tool").count() == 0  # no output-tool part
    assert problems == []


def test_stop_stops_the_run_on_the_server_and_the_chat_goes_on(page: Any) -> None:
    problems, _ = watched(page)
    with serving("tests.serve.loops:stalling_loop", "asyncio") as url:
        page.goto(url)
        page.fill("#question", QUESTION)
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant")).to_have_count(1)  # the run started: it stalls
        page.locator("#stop").click()
        expect(page.locator("#status")).to_have_text("ready")
        assert not page.locator("#error").is_visible()
        page.fill("#question", "Are you there?")  # a session's run still going would refuse it
        page.keyboard.press("Enter")
        expect(page.locator(".msg.assistant .text").last).to_have_text("Back again.")
        expect(page.locator("#status")).to_have_text("ready")
        assert not page.locator("#error").is_visible()
    assert problems == []
