"""The documentation site (docs/, mkdocs.yml): every Python block of every page runs as written
and passes `mypy --strict`, each on its own, exactly as the README's do
(tests/helpers/doc_blocks.py), and the site builds with warnings as errors (`make docs`: broken
links and anchors fail it).

The blocks import only public modules (`reactloop`, `reactloop.stores`, ...), never a private
`reactloop._x`: the private modules may move. Running the blocks needs no mkdocs; the build does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.doc_blocks import (
    PROJECT,
    Block,
    blocks_of,
    cache_dir,
    mypy_strict,
    run_block,
    runs,
)

DOCS = PROJECT / "docs"
PAGES = sorted(path for path in DOCS.rglob("*.md") if "adr" not in path.relative_to(DOCS).parts)
BLOCKS = [block for page in PAGES for block in blocks_of(page)]
PUBLIC = (
    "reactloop",
    "approval",
    "context",
    "costs",
    "errors",
    "events",
    "hooks",
    "messages",
    "models",
    "output",
    "phases",
    "providers",
    "serve",
    "stopping",
    "stores",
    "telemetry",
    "temporal",
    "testing",
    "tools",
)


def test_the_docs_have_pages_with_python_blocks() -> None:
    assert len(PAGES) >= 10 and len(BLOCKS) >= 10, (len(PAGES), len(BLOCKS))


def test_docs_blocks_import_only_public_modules() -> None:
    private = {f"{block.where}:{block.line}": block.private_imports() for block in BLOCKS}
    assert {where: names for where, names in private.items() if names} == {}


def test_every_public_module_has_a_reference_page_showing_its_all() -> None:
    for name in PUBLIC:
        module = "reactloop" if name == "reactloop" else f"reactloop.{name}"
        page = (DOCS / "reference" / f"{name}.md").read_text(encoding="utf-8")
        assert re.search(rf"^::: {re.escape(module)}$", page, re.MULTILINE), module
    listed = sorted(path.stem for path in (DOCS / "reference").glob("*.md") if path.stem != "index")
    assert listed == sorted(PUBLIC)


@pytest.mark.parametrize(("block", "backend"), runs(BLOCKS))
def test_a_docs_block_runs_on_its_own(block: Block, backend: str) -> None:
    run_block(block, backend)


@pytest.mark.slow
def test_every_docs_block_passes_mypy_strict(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    passed, report = mypy_strict(BLOCKS, tmp_path, cache_dir(request.config, "mypy-docs"))
    assert passed, report


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs is not None, "mkdocs is missing: pip install -e '.[dev]' (or the docs extra)"
    command = [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        command, cwd=PROJECT, capture_output=True, text=True, env=env, check=False
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "index.html").exists()
