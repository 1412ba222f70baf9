"""The provider kit used from outside, as docs/adding-a-provider.md tells a third-party author:
its example provider and harness, copied into a package of their own that imports only public
names, pass under pytest with the parametrization the page shows (asyncio and trio); the same
provider broken fails exactly the checks it breaks, each saying which check, what was expected
and what came, and the fields that differ."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from reactloop.testing import CONFORMANCE_CHECKS
from tests.helpers.doc_blocks import PROJECT

PAGE = PROJECT / "docs" / "adding-a-provider.md"
PUBLIC = {"errors", "messages", "models", "testing", "events", "providers"}
BROKEN = '''
from reactloop.messages import Usage
from reactloop.models import ModelRequest, ModelResponse
from tiny_json import TinyHarness, TinyJsonModel


class SwappedUsage(TinyJsonModel):
    """Reads a whole answer's usage with input and output swapped."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        got = await super().request(request)
        usage = Usage(
            input_tokens=got.usage.output_tokens,
            output_tokens=got.usage.input_tokens,
            cache_read_tokens=got.usage.cache_read_tokens,
            reasoning_tokens=got.usage.reasoning_tokens,
        )
        return ModelResponse(got.message, usage, got.finish_reason)


class MyHarness(TinyHarness):
    name = "broken"

    def build(self, base_url: str, *, idle_timeout: float) -> SwappedUsage:
        return SwappedUsage("tiny-1", base_url=base_url, idle_timeout=idle_timeout)
'''


def fenced(language: str, containing: str) -> str:
    """The page's one block of `language` that contains `containing`."""
    blocks = re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    (found,) = [block for block in blocks if containing in block]
    return str(found)


def suite(harness_from: str) -> str:
    """The page's test over every check, for the harness `MyHarness` of `harness_from`."""
    head = "import pytest\nfrom reactloop.testing import CONFORMANCE_CHECKS, ConformanceCheck\n"
    return f"{head}from {harness_from} import MyHarness\n\n\n{fenced('text', 'MyHarness()')}"


def third_party(root: Path) -> Path:
    """The page's example as a package of its own, with the page's conftest and suite."""
    example = fenced("python", "class TinyHarness")
    (root / "tiny_json.py").write_text(example, encoding="utf-8")
    (root / "tiny_ok.py").write_text("from tiny_json import TinyHarness as MyHarness\n")
    (root / "tiny_broken.py").write_text(BROKEN, encoding="utf-8")
    conftest = "import pytest\n\n\n" + fenced("text", "def anyio_backend")
    (root / "conftest.py").write_text(conftest, encoding="utf-8")
    (root / "test_tiny_ok.py").write_text(suite("tiny_ok"), encoding="utf-8")
    (root / "test_tiny_broken.py").write_text(suite("tiny_broken"), encoding="utf-8")
    return root


def test_the_example_imports_only_public_modules() -> None:
    imported = set(
        re.findall(r"^from reactloop\.?(\w*) import", fenced("python", "class Tiny"), re.M)
    )
    assert imported and imported <= PUBLIC, imported


def test_a_third_party_suite_passes_and_a_broken_provider_fails_by_check(tmp_path: Path) -> None:
    root = third_party(tmp_path)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-W", "error", "-p", "no:cacheprovider",
         "-p", "no:randomly", "--rootdir", str(root), str(root)],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    checks = len(CONFORMANCE_CHECKS)
    assert f"4 failed, {4 * checks - 4} passed" in out, out
    failed = sorted(set(re.findall(r"FAILED test_tiny_(\w+)\.py::\w+\[(\w+)-(\w+)\]", out)))
    assert failed == [
        ("broken", backend, check)
        for backend in ("asyncio", "trio")
        for check in ("stream_matches_whole", "usage_decoded")
    ], out
    said = (
        "usage_decoded (broken): expected request: the usage: input_tokens 1234, output_tokens"
        " 567; got input_tokens 567, output_tokens 1234"
    )
    assert said in out, out
    assert "expected the streamed response equal to the whole call's: usage.input_tokens" in out
