"""UI test fixtures: corpora with a ready index, an app factory, and waiting helpers.

Building an index (Chroma included) takes seconds, so each corpus is indexed once per session in
a subprocess (every store cleanly closed) and copied per test with its index; the copies keep
the files' mtimes, so the app's start-up sync finds nothing to do.
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer.tui.app import ExplorerApp, make_app
from tests.fakes import FakeEmbedder

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "sample_docs"
SNAPSHOT_CORPUS = Path(__file__).resolve().parent / "corpus"
FAKE_MODEL = FakeEmbedder.name

BUILD_SCRIPT = """
import sys
from explorer.settings.config import Settings
from explorer.core.store.index import Index
from explorer.core.indexing.indexer import Indexer
from tests.fakes import FakeEmbedder

root, index_dir = sys.argv[1], sys.argv[2]
index = Index(Settings.for_root(root, index_dir, model=FakeEmbedder.name), FakeEmbedder())
index.acquire_write_lock()
Indexer(index).sync()
index.close()
"""


def _build(source: Path, base: Path) -> tuple[Path, Path]:
    docs, index_dir = base / "docs", base / "index"
    shutil.copytree(source, docs)
    subprocess.run(
        [sys.executable, "-c", BUILD_SCRIPT, str(docs), str(index_dir)],
        cwd=REPO,
        check=True,
        timeout=300,
    )
    return docs, index_dir


@pytest.fixture(autouse=True)
def rare_garbage_collection():
    """A UI test's worker collects cyclic garbage every 50,000 allocations instead of 700: a
    Textual app under test allocates (and frees) objects by the hundred thousand, and collecting
    every 700 took a fifth of the UI tests' CPU. Only how often the worker pauses to collect
    changes, not what is freed; the worker's own setting is back for the next test."""
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 20)
    yield
    gc.set_threshold(*before)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (through anyio's pytest plugin)."""
    return "asyncio"


@pytest.fixture(scope="session")
def built_sample_docs(tmp_path_factory) -> tuple[Path, Path]:
    """sample_docs and its full index (fake embedder), built once per session."""
    return _build(SAMPLE_DOCS, tmp_path_factory.mktemp("built-sample"))


@pytest.fixture(scope="session")
def built_snapshot_corpus(tmp_path_factory) -> tuple[Path, Path]:
    return _build(SNAPSHOT_CORPUS, tmp_path_factory.mktemp("built-snapshot"))


def _copy(built: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    docs, index_dir = tmp_path / "docs", tmp_path / "index"
    shutil.copytree(built[0], docs)
    shutil.copytree(built[1], index_dir)
    (index_dir / "write.lock").unlink(missing_ok=True)
    return docs, index_dir


@pytest.fixture
def sample_copy(built_sample_docs, tmp_path) -> tuple[Path, Path]:
    """A private copy of sample_docs and its index: (docs folder, index dir)."""
    return _copy(built_sample_docs, tmp_path)


@pytest.fixture
def snapshot_copy(built_snapshot_corpus, tmp_path) -> tuple[Path, Path]:
    return _copy(built_snapshot_corpus, tmp_path)


@pytest.fixture
def app_for() -> Callable[..., ExplorerApp]:
    """Make the app for (docs, index_dir) with the fake embedder."""

    def build(copy: tuple[Path, Path], **kwargs) -> ExplorerApp:
        docs, index_dir = copy
        kwargs.setdefault("embedder", FakeEmbedder())
        return make_app(docs, index_dir=index_dir, **kwargs)

    return build


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 15.0, what: str = ""):
    """Let the app run until ``predicate()`` holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        await pilot.pause(0.02)


async def wait_indexed(pilot, screen, path: str, timeout: float = 20.0) -> None:
    """Let the app run until ``path`` is in the folder's keyword index (its links resolved)."""
    await wait_for(
        pilot,
        lambda: screen.index is not None and screen.index.keywords.file(path) is not None,
        timeout,
        f"{path} to be indexed",
    )


def settled(screen) -> bool:
    """The index is open and idle, the query model warm, and the manifest read."""
    live = screen.live
    return (
        screen.index is not None
        and screen.state.semantic_ready
        and live is not None
        and not live.busy
        and bool(screen.state.counts)
        and screen.state.counts.get("pending", 0) == 0
        and bool(screen.file_tree.paths)
        and screen.status.index_text.endswith("chunks")
    )


async def wait_settled(pilot, timeout: float = 20.0) -> None:
    await wait_for(pilot, lambda: settled(pilot.app.screen), timeout, "the index to settle")


async def type_query(pilot, text: str, timeout: float = 10.0) -> None:
    """Type ``text`` into the search box and wait until the results and the status bar show
    its answer."""
    screen = pilot.app.screen
    screen.search_box.focus_query()
    await pilot.press(*text)

    def answered() -> bool:
        typed = screen.search_box.text
        summary = screen.status.search
        return screen.results.shown_query == typed and (summary is None or summary.text == typed)

    await wait_for(pilot, answered, timeout, "results")
