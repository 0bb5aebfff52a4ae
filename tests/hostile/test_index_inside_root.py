"""An index folder inside the root (issue 21) is never scanned or watched: neither the index's
own folder nor any other explorer index, recognised by its files (its query encoder's
``tokenizer.json`` became 1,253 chunks)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from explorer.core.ingest.scanner import INDEX_MARKS
from explorer.core.live.writer import LiveIndex
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import CHROMA_DIR_NAME, DATABASE_NAME
from tests.conftest import EXPLORER_PROCESS, wait_until, write_files
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

TOKENIZER = '{"model": {"vocab": {"tokenizerword": 1}}}\n'
"""What a query encoder's tokenizer.json looks like to the scanner: JSON, an indexed kind."""


def explorer(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXPLORER_PROCESS, *map(str, args)], capture_output=True, text=True, timeout=120
    )


def indexed_paths(index_dir: Path) -> set[str]:
    done = explorer("status", "--index-dir", index_dir, "--json")
    assert done.returncode == 0, done.stderr
    found = explorer(
        "search", "tokenizerword pagewords", "--index-dir", index_dir, "--mode", "keyword",
        "--json", "--limit", "50",
    )  # fmt: skip
    return {hit["path"] for hit in json.loads(found.stdout)["results"]}


def add_index(root: Path, index_dir: Path) -> None:
    """An explorer index at ``index_dir`` (keywords only) with a query encoder's tokenizer."""
    done = explorer("index", root, "--index-dir", index_dir, "--keywords-only")
    assert done.returncode == 0, done.stderr
    (index_dir / "query-encoder").mkdir()
    (index_dir / "query-encoder" / "tokenizer.json").write_text(TOKENIZER)


def test_the_marks_are_the_files_every_index_has() -> None:
    assert INDEX_MARKS == (DATABASE_NAME, CHROMA_DIR_NAME)


def test_neither_its_own_index_nor_another_one_inside_the_root_is_indexed(tmp_path: Path):
    root = write_files(tmp_path / "root", {"page.md": "# Page\n\npagewords\n"})
    inside = root / "idx"
    add_index(root, inside)
    again = explorer("index", root, "--index-dir", inside, "--keywords-only", "--json")
    assert json.loads(again.stdout)["added"] == 0
    assert indexed_paths(inside) == {"page.md"}
    elsewhere = tmp_path / "elsewhere"  # a second index of the same root
    done = explorer("index", root, "--index-dir", elsewhere, "--keywords-only", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 1
    assert indexed_paths(elsewhere) == {"page.md"}
    check = explorer("check-refs", root, "--index-dir", elsewhere, "--json")
    assert check.returncode == 0, check.stderr


def test_the_live_index_ignores_an_index_made_inside_its_root(tmp_path: Path, settings_for):
    root = write_files(tmp_path / "root", {"page.md": "# Page\n\npagewords\n"})
    live = LiveIndex(settings_for(root), lambda _event: None, FakeEmbedder(), debounce_seconds=0.1)
    live.start()
    try:
        assert live.wait_idle(20)
        add_index(root, root / "other-index")
        (root / "later.md").write_text("# Later\n\npagewords again\n")

        def paths() -> set[str]:
            request = SearchRequest("tokenizerword pagewords", mode="keyword", limit=50)
            return {hit.path for hit in search(live.index, request).results}

        assert wait_until(lambda: paths() == {"page.md", "later.md"}, 10), paths()
        assert live.wait_idle(10)
        assert not any(p.startswith("other-index/") for p in live.index.keywords.files())
    finally:
        live.stop()
