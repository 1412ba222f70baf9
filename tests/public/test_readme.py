"""Every Python block of the README runs as written and passes `mypy --strict`, each on its own.

A user copies one block, so each block runs in a fresh namespace and is type-checked as its own
module: every name it uses must be defined or imported in it, from public modules only. After a
block runs, its `async def main()` is run, and so are its `test_*` functions (async ones on
asyncio and trio). Errors point at README lines. The docs pages' blocks: tests/public/test_docs.py.
"""

from __future__ import annotations

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

README = PROJECT / "README.md"
BLOCKS = blocks_of(README)


def test_the_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 1, "the README's ```python blocks were not found"


def test_readme_blocks_import_only_public_modules() -> None:
    private = {f"{block.where}:{block.line}": block.private_imports() for block in BLOCKS}
    assert {where: names for where, names in private.items() if names} == {}


@pytest.mark.parametrize(("block", "backend"), runs(BLOCKS))
def test_a_readme_block_runs_on_its_own(block: Block, backend: str) -> None:
    run_block(block, backend)


@pytest.mark.slow
def test_every_readme_block_passes_mypy_strict(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    passed, report = mypy_strict(BLOCKS, tmp_path, cache_dir(request.config, "mypy-readme"))
    assert passed, report
