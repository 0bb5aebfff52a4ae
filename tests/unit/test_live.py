"""LiveIndex: FakeEmbedder, real Chroma, real watchdog; every wait polls against a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer.core.live.writer import (
    ErrorEvent,
    FilesChangedEvent,
    LiveEvent,
    LiveIndex,
    ModelStateEvent,
    ProgressEvent,
    VectorsReadyEvent,
    WriterEvent,
)
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder

# watchdog warns (harmlessly) when a new folder's watch is added twice in a race with its walk.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

CHANGE_SECONDS = 2.0
"""How soon a change on disk must show in search."""


class SlowEmbedder(FakeEmbedder):
    """A FakeEmbedder that takes a while per model batch, like a real model on a CPU."""

    def __init__(self, seconds_per_batch: float) -> None:
        super().__init__()
        self.seconds_per_batch = seconds_per_batch

    def embed_documents(self, texts):
        time.sleep(self.seconds_per_batch)
        return super().embed_documents(texts)


class BrokenEmbedder(FakeEmbedder):
    """A model that cannot be loaded."""

    def load_document_model(self, chunks: int | None = None) -> None:
        raise RuntimeError("no weights here")


class Events:
    """Collects a LiveIndex's events (called on its writer thread)."""

    def __init__(self) -> None:
        self.items: list[LiveEvent] = []
        self._lock = threading.Lock()

    def __call__(self, event: LiveEvent) -> None:
        with self._lock:
            self.items.append(event)

    def of(self, cls: type) -> list:
        with self._lock:
            return [e for e in self.items if isinstance(e, cls)]

    def kinds(self) -> list[str]:
        with self._lock:
            return [e.kind for e in self.items]


CORPUS = {
    "guides/install.md": "# Install\n\nRun the installer with pelican flags.\n",
    "guides/usage.md": "# Usage\n\nOpen the explorer and type a query about walruses.\n",
    "notes/todo.txt": "Remember the narwhal meeting on Tuesday.\n",
    "src/app.py": '"""The app."""\n\ndef main():\n    return "octopus"\n',
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_files(tmp_path / "root", CORPUS)


@pytest.fixture
def live_for(settings_for):
    """Start LiveIndexes; all are stopped at teardown."""
    made: list[LiveIndex] = []

    def make(root: Path, embedder=None, settings: Settings | None = None, **options):
        events = Events()
        live = LiveIndex(
            settings or settings_for(root),
            events,
            embedder=embedder or FakeEmbedder(),
            debounce_seconds=options.pop("debounce_seconds", 0.1),
            **options,
        )
        made.append(live)
        live.start()
        return live, events

    yield make
    for live in made:
        live.stop()


def paths_for(live: LiveIndex, query: str, mode: str = "keyword") -> set[str]:
    response = search(live.index, SearchRequest(query, mode=mode, limit=200))
    return {hit.path for hit in response.results}


def shows(live: LiveIndex, query: str, expected: set[str], gone: str = "") -> Callable[[], bool]:
    """True once search reflects a change: keyword search gives exactly ``expected``; hybrid
    search ranks one of them first (its vector leg adds every other file too) and no longer
    lists ``gone``."""

    def check() -> bool:
        if paths_for(live, query) != expected:
            return False
        hybrid = search(live.index, SearchRequest(query, mode="hybrid")).results
        if expected and (not hybrid or hybrid[0].path not in expected):
            return False
        return not gone or all(hit.path != gone for hit in hybrid)

    return check


def consistent(settings: Settings) -> bool:
    """Reopen the index: the keyword store's chunk ids are exactly Chroma's."""
    index = Index(settings, FakeEmbedder())
    try:
        return set(index.keywords.chunk_ids()) == index.vectors.chunk_ids()
    finally:
        index.close()


def test_start_reports_and_searches(corpus, live_for):
    live, events = live_for(corpus)
    assert live.wait_idle(20)
    kinds = events.kinds()
    assert kinds[0] == "progress" and kinds[-1] == "progress"
    assert kinds.index("files_changed") < kinds.index("model_state") < kinds.index("vectors_ready")
    initial = events.of(FilesChangedEvent)[0]
    assert initial.initial and initial.paths == set(CORPUS)
    assert [e.state for e in events.of(ModelStateEvent)] == ["loading", "ready"]
    assert events.of(VectorsReadyEvent)[0].paths == set(CORPUS)
    assert events.of(ProgressEvent)[-1].phase == "done"
    assert any(e.phase == "embed" and e.chunks_total for e in events.of(ProgressEvent))
    assert not events.of(ErrorEvent)
    assert not live.busy
    assert paths_for(live, "walruses") == {"guides/usage.md"}
    assert paths_for(live, "narwhal meeting", "hybrid") >= {"notes/todo.txt"}
    assert paths_for(live, "octopus", "semantic")


def test_changes_on_disk_reach_search(corpus, live_for):
    live, events = live_for(corpus)
    assert live.wait_idle(20)
    (corpus / "new.md").write_text("# New\n\nA note about capybaras.\n")
    assert wait_until(shows(live, "capybaras", {"new.md"}), CHANGE_SECONDS)
    (corpus / "guides/usage.md").write_text("# Usage\n\nNow about axolotls instead.\n")
    assert wait_until(shows(live, "axolotls", {"guides/usage.md"}), CHANGE_SECONDS)
    assert wait_until(shows(live, "walruses", set()), CHANGE_SECONDS)
    (corpus / "new.md").rename(corpus / "renamed.md")
    assert wait_until(shows(live, "capybaras", {"renamed.md"}, gone="new.md"), CHANGE_SECONDS)
    (corpus / "notes/todo.txt").unlink()
    assert wait_until(shows(live, "narwhal", set(), gone="notes/todo.txt"), CHANGE_SECONDS)
    assert live.wait_idle(10)
    assert paths_for(live, "capybaras", "semantic") >= {"renamed.md"}
    assert {"new.md", "renamed.md"} <= set().union(*(e.paths for e in events.of(VectorsReadyEvent)))
    assert not events.of(ErrorEvent)
    live.stop()
    assert consistent(live.settings)


def test_folder_move_and_delete(corpus, live_for):
    live, _ = live_for(corpus)
    assert live.wait_idle(20)
    (corpus / "guides").rename(corpus / "manual")
    assert wait_until(
        shows(live, "pelican", {"manual/install.md"}, gone="guides/install.md"), CHANGE_SECONDS
    )
    assert wait_until(shows(live, "walruses", {"manual/usage.md"}), CHANGE_SECONDS)
    for path in (corpus / "manual").iterdir():
        path.unlink()
    (corpus / "manual").rmdir()
    assert wait_until(shows(live, "pelican", set(), gone="manual/install.md"), CHANGE_SECONDS)
    assert live.wait_idle(10)
    assert set(live.index.keywords.files()) == {"notes/todo.txt", "src/app.py"}


def test_editor_style_save(corpus, live_for):
    live, _ = live_for(corpus)
    assert live.wait_idle(20)
    temp = corpus / "guides" / ".install.md.swp"
    temp.write_text("# Install\n\nUse the flamingo installer.\n")
    temp.replace(corpus / "guides" / "install.md")
    assert wait_until(shows(live, "flamingo", {"guides/install.md"}), CHANGE_SECONDS)
    assert wait_until(shows(live, "pelican", set(), gone="manual/install.md"), CHANGE_SECONDS)


def test_burst_with_deletions_does_not_crash(corpus, live_for):
    live, events = live_for(corpus)
    assert live.wait_idle(20)
    for number in range(120):
        path = corpus / "burst" / f"b{number}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# Burst {number}\n\nquokka number {number}\n")
        if number % 3 == 0:
            path.unlink()  # gone before (or while) the writer reads it
    expected = {f"burst/b{n}.md" for n in range(120) if n % 3}
    assert wait_until(lambda: len(paths_for(live, "quokka")) == len(expected), 5)
    assert live.wait_idle(10)
    assert paths_for(live, "quokka") == expected
    assert not events.of(ErrorEvent)
    live.stop()
    assert consistent(live.settings)


def test_edit_during_long_embedding_is_searchable_at_once(corpus, live_for, settings_for):
    files = {f"bulk/doc{n}.md": f"# Doc {n}\n\nfiller text {n}\n" for n in range(40)}
    write_files(corpus, files)
    settings = settings_for(corpus, embed_batch=2)  # 22 model batches of 0.15 s each
    live, events = live_for(corpus, SlowEmbedder(0.15), settings)
    assert wait_until(
        lambda: (
            events.of(VectorsReadyEvent)
            or any(e.phase == "embed" and e.chunks_done for e in events.of(ProgressEvent))
        ),
        10,
    )
    (corpus / "guides/install.md").write_text("# Install\n\nNow with lemurs.\n")
    started = time.monotonic()
    assert wait_until(lambda: paths_for(live, "lemurs") == {"guides/install.md"}, 2.0)
    assert time.monotonic() - started < CHANGE_SECONDS
    assert live.busy, "the initial embedding should still be running"
    assert live.wait_idle(30)
    assert paths_for(live, "lemurs", "semantic") >= {"guides/install.md"}
    live.stop()
    assert consistent(live.settings)


def test_stop_is_fast_even_mid_embedding(corpus, live_for, settings_for):
    write_files(corpus, {f"bulk/doc{n}.md": f"# Doc {n}\n\nfiller {n}\n" for n in range(30)})
    live, events = live_for(corpus, SlowEmbedder(0.2), settings_for(corpus, embed_batch=2))
    assert wait_until(lambda: any(e.phase == "embed" for e in events.of(ProgressEvent)), 10)
    started = time.monotonic()
    live.stop()
    assert time.monotonic() - started < 1.0
    live.stop()  # idempotent
    index = Index(live.settings, FakeEmbedder())
    try:  # what is embedded is consistent; the rest is still pending and searchable by keyword
        pending = {c.id for c in index.keywords.ledger.pending()}
        embedded = set(index.keywords.chunk_ids()) - pending
        assert index.vectors.chunk_ids() == embedded
        assert len(index.keywords.paths()) == len(CORPUS) + 30
    finally:
        index.close()


def test_second_live_index_reads_then_takes_over_when_the_first_stops(corpus, live_for):
    first, first_events = live_for(corpus, holder="the explorer TUI")
    assert first.wait_idle(20)
    second, events = live_for(corpus, settings=first.settings)
    assert wait_until(lambda: events.of(WriterEvent))
    waiting = events.of(WriterEvent)[0]
    assert waiting.state == "waiting"
    assert "being written by the explorer TUI (pid" in waiting.message
    assert second.read_only and second.wait_idle(5)
    assert paths_for(second, "walruses") == {"guides/usage.md"}  # reads still work
    (corpus / "late.md").write_text("gazelles\n")
    assert wait_until(lambda: paths_for(second, "gazelles") == {"late.md"}, CHANGE_SECONDS)
    assert not first_events.of(ErrorEvent)

    first.stop()  # the writer goes away: the reader becomes the writer
    assert wait_until(lambda: [e.state for e in events.of(WriterEvent)] == ["waiting", "writing"])
    assert not second.read_only
    (corpus / "later.md").write_text("capybaras\n")
    assert wait_until(lambda: paths_for(second, "capybaras") == {"later.md"}, CHANGE_SECONDS)
    assert second.wait_idle(20)
    assert not events.of(ErrorEvent)


def test_model_failure_keeps_keyword_search(corpus, live_for):
    live, events = live_for(corpus, BrokenEmbedder())
    assert wait_until(lambda: events.of(ModelStateEvent) and not live.busy, 20)
    assert [e.state for e in events.of(ModelStateEvent)] == ["loading", "failed"]
    assert "no weights here" in events.of(ModelStateEvent)[-1].message
    (corpus / "fresh.md").write_text("iguanas everywhere\n")
    assert wait_until(lambda: paths_for(live, "iguanas") == {"fresh.md"}, CHANGE_SECONDS)


def test_index_inside_root_and_listener_errors(corpus):
    seen: list[LiveEvent] = []

    def failing(event: LiveEvent) -> None:
        seen.append(event)
        raise RuntimeError("listener bug")

    settings = Settings.for_root(corpus, corpus / ".explorer", model="fake-hash-64")
    live = LiveIndex(settings, failing, embedder=FakeEmbedder(), debounce_seconds=0.05)
    try:
        live.start()
        assert live.wait_idle(20)
        (corpus / "inside.md").write_text("pangolins\n")
        assert wait_until(lambda: paths_for(live, "pangolins") == {"inside.md"}, CHANGE_SECONDS)
        assert live.wait_idle(10)
    finally:
        live.stop()
    batches = [e.paths for e in seen if isinstance(e, FilesChangedEvent) and not e.initial]
    assert batches and all(not p.startswith(".explorer") for b in batches for p in b), batches


def test_update_paths_handles_folders_and_vanishing_files(corpus, settings_for, monkeypatch):
    from explorer.core.indexing import indexer as indexer_module
    from explorer.core.indexing.indexer import Indexer

    index = Index(settings_for(corpus), FakeEmbedder())
    try:
        indexer = Indexer(index)
        indexer.update_paths(["guides"], embed=False)  # a folder: every file under it
        assert set(index.keywords.files()) == {"guides/install.md", "guides/usage.md"}
        write_files(corpus, {"guides/deep/more.md": "more\n", "guides/.hidden/x.md": "x\n"})
        indexer.update_paths(["guides"])
        assert "guides/deep/more.md" in index.keywords.files()
        assert not any(".hidden" in p for p in index.keywords.files())
        (corpus / "guides").rename(corpus / "manual")
        indexer.update_paths(["guides", "manual"])  # a vanished folder drops its entries
        assert all(p.startswith("manual/") for p in index.keywords.files())
        real_load = indexer_module.load_source

        def vanish_then_load(path, *args):
            Path(path).unlink()
            return real_load(path, *args)

        monkeypatch.setattr(indexer_module, "load_source", vanish_then_load)
        (corpus / "notes" / "todo.txt").write_text("changed\n")
        indexer.update_paths(["notes/todo.txt"])  # deleted mid-read: treated as deleted
        assert "notes/todo.txt" not in index.keywords.files()
        assert set(index.keywords.chunk_ids()) == index.vectors.chunk_ids()
    finally:
        index.close()


class CountingEmbedder(FakeEmbedder):
    """Records how many chunks were waiting when the live index asked for the model."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int | None] = []

    def load_document_model(self, chunks: int | None = None) -> None:
        self.asked.append(chunks)


def test_the_model_is_asked_for_with_the_number_of_chunks_waiting(corpus, live_for):
    """The live index says how many chunks wait when it loads the model, so that a real model
    with an export embeds a few without loading torch (``load_document_model``)."""
    embedder = CountingEmbedder()
    live, events = live_for(corpus, embedder)
    assert live.wait_idle(20)
    chunks = live.index.keywords.counts()["chunks"]
    assert embedder.asked and set(embedder.asked) == {chunks} and chunks > 0
    assert [e.state for e in events.of(ModelStateEvent)] == ["loading", "ready"]
