"""The trace page in headless Chromium (Debian's `chromium`, driven by playwright over the
DevTools protocol): it renders without console errors and shows the run's steps, parallel tool
calls side by side, the error, messages on click, the model's reasoning (collapsed, never
its opaque values), and images as thumbnails (documents and big images described). A screenshot
is kept outside the repo."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from reactloop import ReActLoop, tool
from reactloop._cli import run_cli
from reactloop._cli._runs import export_document
from reactloop._cli._trace import read_export, stored_trace, write_trace
from reactloop._durable._stores import SqliteStore
from reactloop.examples.demo import QUESTION, convert_currency, get_weather, scripted_model
from reactloop.examples.planning import PlanningPhase
from reactloop.examples.reflection import ReflectionPhase
from reactloop.messages import DocumentPart, ImagePart
from reactloop.phases import default_phases, default_start_phases
from reactloop.testing import ScriptedModel, call
from tests.cli.test_cli_reasoning import SECRETS, THOUGHT, reasoned_run
from tests.helpers.images import png

CHROMIUM = Path("/usr/bin/chromium")
ENABLE = (
    "install Debian's chromium (apt-get install chromium) and playwright (pip install -e '.[dev]')"
)


def _browser_missing() -> str | None:
    """Why the page cannot be checked here, or None when it can."""
    if not CHROMIUM.exists():
        return f"no {CHROMIUM}"
    if importlib.util.find_spec("playwright") is None:
        return "no playwright"
    return None


@pytest.fixture
def watched(tmp_path: Path) -> Path:
    """The trace page of a demo run the command line watched (`demo --html`)."""
    html = tmp_path / "watched.html"
    assert run_cli(["demo", "--plain", "--html", str(html)]) == 0
    return html


@pytest.fixture
def traced(tmp_path: Path) -> tuple[str, Path]:
    """The demo's run in a SQLite store and its trace page, made before the browser starts
    (playwright's sync driver holds an event loop in this thread)."""
    run_id = demo_run(tmp_path / "runs.db")
    html = tmp_path / "trace.html"
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    assert run_cli(["trace", run_id, "--store", store, "--html", str(html)]) == 0
    return run_id, html


@pytest.fixture
def reasoned(tmp_path: Path) -> Path:
    """The trace page of an exported run whose model reasoned (readable thinking with its
    signature, a redacted block, encrypted content), made before the browser starts."""

    async def export() -> bytes:
        store = SqliteStore(tmp_path / "reasoned.db")
        try:
            return export_document(await reasoned_run(store))
        finally:
            await store.aclose()

    html = tmp_path / "reasoned.html"
    stored = read_export(anyio.run(export), "run.json")
    html.write_text(write_trace(stored_trace(stored)), encoding="utf-8")
    return html


BIG_IMAGE = ImagePart(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 1_100)  # over the cap


@tool
def snapshot() -> list[object]:
    """A caption, a small image, one too big for a thumbnail, and a PDF."""
    return ["the camera sees", ImagePart(png(64, 48)), BIG_IMAGE, DocumentPart(b"%PDF-1.4 x")]


@pytest.fixture
def pictured(tmp_path: Path) -> Path:
    """The trace page of an exported run whose input and tool result hold images."""

    async def export() -> bytes:
        store = SqliteStore(tmp_path / "pictured.db")
        try:
            loop = ReActLoop(
                ScriptedModel([call("snapshot"), "a red square"]), tools=[snapshot], store=store
            )
            await loop.run(["what is on camera?", ImagePart(png(20, 10, (0, 0, 255)))])
            (summary,) = await store.list_runs()
            stored = await store.load(summary.run_id)
            assert stored is not None
            return export_document(stored)
        finally:
            await store.aclose()

    html = tmp_path / "pictured.html"
    html.write_text(write_trace(stored_trace(read_export(anyio.run(export), "run.json"))), "utf-8")
    return html


@pytest.fixture
def page(traced: tuple[str, Path], watched: Path) -> Iterator[Any]:
    """A fresh page in headless Chromium; skipped only outside CI, saying how to enable it."""
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("REACTLOOP_CI") == "1":
            pytest.fail(f"the trace page test must run in CI: {missing}")
        pytest.skip(f"{missing}: {ENABLE} to run the trace page test")
    sync_playwright = importlib.import_module("playwright.sync_api").sync_playwright
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            browser.close()


def demo_run(path: Path) -> str:
    """The demo agent's run, journaled in a SQLite store at `path`; its id."""

    async def run() -> str:
        store = SqliteStore(path)
        loop = ReActLoop(
            scripted_model(),
            tools=[get_weather, convert_currency],
            start_phases=[*default_start_phases(), PlanningPhase()],
            phases=[*default_phases(), ReflectionPhase()],
            store=store,
        )
        async with loop:
            result = await loop.run(QUESTION)
        await store.aclose()
        return result.run_id

    return anyio.run(run)


def artifacts(tmp_path: Path) -> Path:
    """Where the screenshot goes: $REACTLOOP_ARTIFACTS, else the test's temporary folder."""
    folder = Path(os.environ.get("REACTLOOP_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_trace_page_renders_the_run_without_console_errors(
    traced: tuple[str, Path], page: Any, tmp_path: Path
) -> None:
    run_id, html = traced
    problems: list[str] = []
    page.on(
        "console",
        lambda message: (
            problems.append(message.text) if message.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(html.as_uri())
    page.wait_for_selector(".step")
    assert problems == []
    assert requests == [html.as_uri()]  # self-contained: nothing fetched but the page

    steps = page.locator(".step")
    assert [steps.nth(i).get_attribute("data-index") for i in range(steps.count())] == [
        "1",
        "2",
        "3",
        "4",
    ]
    assert page.locator(".bar.model").count() == 4
    first = page.locator('.step[data-index="1"] .bar.tool')
    assert first.count() == 2
    one, two = first.nth(0).bounding_box(), first.nth(1).bounding_box()
    assert one is not None and two is not None
    assert one["x"] == pytest.approx(two["x"], abs=1) and two["y"] > one["y"]  # side by side
    assert page.locator(".bar.tool.error").all_inner_texts()[0].startswith("get_exchange_rate")
    assert run_id in page.locator("h1").inner_text()

    first.nth(1).click()
    assert "Tokyo: 24°C, sunny" in page.locator("#details").inner_text()
    page.locator('.step[data-index="1"] .bar.model').click()
    assert "Checking both cities at once." in page.locator("#details").inner_text()
    page.locator('.step[data-index="3"] .step-label').click()
    assert '"amount":80600.0' in page.locator("#details").inner_text()
    assert "Paris or Tokyo this weekend?" in page.locator("#messages").inner_text()
    page.screenshot(path=str(artifacts(tmp_path) / "trace-page.png"), full_page=True)
    assert problems == []


def test_without_the_browser_the_skip_says_how_to_enable_it() -> None:
    assert "apt-get install chromium" in ENABLE and shutil.which("python3") is not None


def test_a_watched_runs_page_shows_its_phases_and_measured_times(
    watched: Path, page: Any, tmp_path: Path
) -> None:
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(watched.as_uri())
    page.wait_for_selector(".step")
    start = page.locator(".start-row .bar.phase").all_inner_texts()
    assert start == ["RunStart", "HookDecisionApplier", "PlanningPhase"]
    first = page.locator('.step[data-index="1"] .bar.phase').all_inner_texts()
    assert first[:2] == ["IterationGuards", "ReasoningPhase"] and "ToolPhase" in first
    models = page.locator(".bar.model").all_inner_texts()
    assert len(models) == 4 and not any("derived" in text for text in models)
    page.locator('.step[data-index="1"] .bar.phase', has_text="ToolPhase").click()
    assert "decided" in page.locator("#details").inner_text()
    assert "measured" in page.locator("#notes").inner_text()
    page.screenshot(path=str(artifacts(tmp_path) / "trace-page-watched.png"), full_page=True)
    assert problems == []


def test_the_models_reasoning_is_shown_collapsed_and_its_opaque_values_nowhere(
    reasoned: Path, page: Any, tmp_path: Path
) -> None:
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(reasoned.as_uri())
    page.wait_for_selector("#messages .reasoning")
    thought, said = page.locator("#messages details.reasoning"), THOUGHT.text
    assert thought.count() == 1
    assert thought.locator("summary").inner_text() == f"thinking: {said}"
    assert not thought.locator("pre").is_visible()  # collapsed until clicked
    thought.locator("summary").click()
    assert thought.locator("pre").inner_text() == said
    hidden = page.locator("#messages .reasoning.hidden").all_inner_texts()
    assert hidden == ["thinking (redacted)", "reasoning (encrypted)"]
    page.locator('.step[data-index="1"] .bar.model').click()
    assert page.locator("#details .reasoning").count() == 3
    shown = page.content()
    assert not any(secret in shown for secret in SECRETS)
    page.screenshot(path=str(artifacts(tmp_path) / "trace-page-reasoning.png"), full_page=True)
    assert problems == []


def test_images_show_as_thumbnails_and_other_parts_as_descriptions(
    pictured: Path, page: Any, tmp_path: Path
) -> None:
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(str(error)))
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(pictured.as_uri())
    page.wait_for_selector("#messages img.thumb")
    thumbs = page.locator("#messages img.thumb")
    assert thumbs.count() == 2  # the input's image and the tool's small one
    sizes = [thumbs.nth(i).evaluate("img => [img.naturalWidth, img.naturalHeight]") for i in (0, 1)]
    assert sizes == [[20, 10], [64, 48]]  # drawn: the browser decoded both
    assert thumbs.nth(1).get_attribute("src").startswith("data:image/png;base64,")
    described = page.locator("#messages .part").all_inner_texts()
    assert described == ["[image image/png, 281,608 bytes]", "[document application/pdf, 10 bytes]"]
    page.locator('.step[data-index="1"] .bar.tool').click()
    assert page.locator("#details img.thumb").count() == 1
    assert "the camera sees" in page.locator("#details").inner_text()
    assert all(url.startswith(("file:", "data:")) for url in fetched)  # nothing from the network
    page.screenshot(path=str(artifacts(tmp_path) / "trace-page-images.png"), full_page=True)
    assert problems == []
