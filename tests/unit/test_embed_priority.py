"""What is embedded first: the queue's order, the indexer and live index following the user's
focus, the rest still progressing, and ``explorer related`` on a file without vectors."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing import embed_priority
from explorer.core.indexing.embed_priority import (
    BASE_EVERY,
    WINDOW_BATCHES,
    EmbeddingPriority,
    EmbeddingQueue,
    Focus,
    KeywordPasses,
    ModelSteps,
    Tier,
    keyword_neighbours,
)
from explorer.core.indexing.indexer import Indexer
from explorer.core.indexing.report import IndexReport
from explorer.core.indexing.vector_phase import VectorPhase
from explorer.core.live.writer import (
    FilesChangedEvent,
    FilesEmbeddedEvent,
    LiveIndex,
    VectorsReadyEvent,
)
from explorer.core.models import FileState
from explorer.core.store.index import Index
from explorer.core.store.manifest_records import FileRecord, PendingChunk
from explorer.settings.config import Settings
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder

BATCH = 2


def chunks_of(files: dict[str, int]) -> list[PendingChunk]:
    """``{path: number of chunks}`` as pending chunks (chunk i of a file is i+1 words long)."""
    return [
        PendingChunk(f"{path}#{i}", path, len("word " * (i + 1)))
        for path, count in files.items()
        for i in range(count)
    ]


def records_of(mtimes: dict[str, int]) -> dict[str, FileRecord]:
    return {
        p: FileRecord(p, 1, m, "h", FileState.PENDING, "", "", 1, 0.0) for p, m in mtimes.items()
    }


def drain(queue: EmbeddingQueue, after_batch=None) -> list[list[PendingChunk]]:
    batches = []
    while queue.remaining:
        batch = queue.next_batch()
        assert batch, "a queue with chunks left handed out an empty batch"
        batches.append(batch)
        if after_batch is not None:
            after_batch(len(batches))
    return batches


def completion_order(batches: list[list[PendingChunk]], files: dict[str, int]) -> list[str]:
    """The files in the order their last chunk was handed out."""
    left = dict(files)
    done = []
    for batch in batches:
        for chunk in batch:
            left[chunk.path] -= 1
            if left[chunk.path] == 0:
                done.append(chunk.path)
    return done


def make_queue(files, mtimes=None, priority=None, neighbours=None) -> EmbeddingQueue:
    mtimes = mtimes or dict.fromkeys(files, 0)
    return EmbeddingQueue(chunks_of(files), records_of(mtimes), BATCH, priority, neighbours)


# -- the queue ------------------------------------------------------------------------------------
def test_without_a_focus_the_newest_files_come_first_and_every_chunk_once():
    files = {f"f{n}.md": 3 for n in range(8)}
    mtimes = {f"f{n}.md": n for n in range(8)}  # f7 is the newest
    batches = drain(make_queue(files, mtimes))
    handed = [c.id for batch in batches for c in batch]
    assert sorted(handed) == sorted(c.id for c in chunks_of(files))
    assert all(len(batch) <= BATCH for batch in batches)
    order = completion_order(batches, files)
    # Windows of whole files, newest first: a window never finishes an older file before a
    # newer one of an earlier window.
    window_files = (WINDOW_BATCHES * BATCH + 2) // 3
    assert set(order[:window_files]) == {f"f{n}.md" for n in range(7, 7 - window_files, -1)}
    assert order.index("f7.md") < order.index("f0.md")


def test_focus_orders_open_file_neighbours_results_folder_then_rest():
    files = {
        "rest/old.md": 2,
        "rest/new.md": 2,
        "docs/a.md": 2,
        "docs/b.md": 2,
        "hit.md": 2,
        "near.md": 2,
        "open.md": 5,
    }
    mtimes = dict.fromkeys(files, 0) | {"rest/new.md": 10}
    priority = EmbeddingPriority()
    priority.set_focus(Focus(open_file="open.md", results=("hit.md",), folder="docs"))
    queue = make_queue(files, mtimes, priority, neighbours=lambda path: ["near.md"])
    first = queue.next_batch()
    assert {c.path for c in first} == {"open.md"}
    assert queue.tier_of("open.md") == Tier.OPEN
    assert queue.tier_of("near.md") == Tier.NEIGHBOUR
    assert queue.tier_of("hit.md") == Tier.RESULT
    assert queue.tier_of("docs/a.md") == Tier.FOLDER
    assert queue.tier_of("rest/old.md") == Tier.REST
    batches = [first, *drain(queue)]
    # The open file makes a window of its own: it is complete before any other chunk goes.
    assert [c.path for b in batches[:3] for c in b] == ["open.md"] * 5
    order = completion_order(batches, files)
    assert order[0] == "open.md"
    assert order.index("near.md") < order.index("rest/new.md")
    assert order.index("hit.md") < order.index("rest/old.md")


def test_a_browsed_folder_of_thousands_of_waiting_files_hands_out_batches_at_once():
    """The kernel's docs while the user browses a folder: each batch sorted every waiting file
    again (9 ms a batch for 10,000 files, on the thread that shares the interpreter with the
    keys typed). Now the order is worked out once per focus; the batches are the same."""
    files = {f"docs/f{n:05}.rst": 8 for n in range(10_000)}
    priority = EmbeddingPriority()
    priority.set_focus(Focus(folder="docs"))
    queue = make_queue(files, priority=priority)
    started = time.perf_counter()
    batches = [queue.next_batch() for _ in range(2_000)]
    assert time.perf_counter() - started < 2.0
    order = completion_order(batches, files)
    assert order[:3] == ["docs/f00000.rst", "docs/f00001.rst", "docs/f00002.rst"]
    assert all(queue.tier_of(path) == Tier.FOLDER for path in files)


def test_a_new_focus_takes_over_at_the_next_batch():
    files = {f"f{n:02d}.md": 4 for n in range(12)}
    priority = EmbeddingPriority()
    queue = make_queue(files, priority=priority)
    queue.next_batch()
    priority.set_focus(Focus(open_file="f09.md"))
    assert {c.path for c in queue.next_batch()} == {"f09.md"}
    assert {c.path for c in queue.next_batch()} == {"f09.md"}
    priority.set_focus(Focus(open_file="f03.md"))
    assert {c.path for c in queue.next_batch()} == {"f03.md"}
    rest = drain(queue)
    handed = [c.id for b in rest for c in b]
    assert len(handed) == len(set(handed)) == sum(files.values()) - 4 * BATCH


def test_a_focus_that_never_ends_does_not_starve_the_rest():
    # Forty focused files (the results) and two newer files outside the focus: the base order
    # (newest first) gets every BASE_EVERY-th window, so the two are done long before the focus.
    results = tuple(f"hit{n:02d}.md" for n in range(40))
    files = dict.fromkeys(results, 4) | {"other1.md": 4, "other2.md": 4}
    mtimes = dict.fromkeys(results, 0) | {"other1.md": 5, "other2.md": 6}
    priority = EmbeddingPriority()
    priority.set_focus(Focus(results=results))
    batches = drain(make_queue(files, mtimes, priority))
    order = completion_order(batches, files)
    # While the focus waits, a window is one batch's worth (here one file): three focused
    # windows, then one from the base order.
    assert order[: BASE_EVERY - 1] == ["hit00.md", "hit01.md", "hit02.md"]
    assert order.index("other2.md") == BASE_EVERY - 1
    assert order.index("other1.md") == 2 * BASE_EVERY - 1


def test_the_root_folder_is_no_hint():
    files = {"a.md": 2, "b.md": 2}
    priority = EmbeddingPriority()
    priority.set_focus(Focus(folder=""))
    queue = make_queue(files, {"a.md": 0, "b.md": 1}, priority)
    assert queue.tier_of("a.md") == Tier.REST
    assert completion_order(drain(queue), files)[0] == "b.md"


def test_set_focus_is_safe_from_many_threads():
    priority = EmbeddingPriority()
    threads = [
        threading.Thread(
            target=lambda n=n: [priority.set_focus(Focus(open_file=f"{n}-{i}")) for i in range(200)]
        )
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    generation, focus = priority.snapshot()
    assert generation >= 200 and focus.open_file.endswith("-199")


# -- with real stores -----------------------------------------------------------------------------
CORPUS = {
    "astro/telescope.md": "# Telescope\n\nTelescope lenses, mirrors and eyepieces for stars.\n",
    "astro/stars.md": "# Stars\n\nStars seen through a telescope with good lenses at night.\n",
    "astro/planets.md": "# Planets\n\nPlanets and their moons through a small telescope.\n",
    "kitchen/bread.md": "# Bread\n\nFlour, water, salt and yeast make bread dough.\n",
    "kitchen/soup.md": "# Soup\n\nA soup of leeks and potatoes, with salt.\n",
    "garden/roses.md": "# Roses\n\nPrune roses in spring; water them at dawn.\n",
    "garden/tulips.md": "# Tulips\n\nPlant tulip bulbs in autumn.\n",
    "notes/todo.md": "# Todo\n\nBuy flour and a new telescope eyepiece.\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "root", CORPUS)
    for age, rel in enumerate(sorted(CORPUS)):  # astro/planets.md oldest ... notes/todo newest
        stamp = 1_700_000_000 + age * 100
        os.utime(root / rel, (stamp, stamp))
    return root


def keywords_only(settings: Settings) -> None:
    index = Index(settings, FakeEmbedder())
    index.acquire_write_lock()
    try:
        Indexer(index).sync(embed=False)
    finally:
        index.close()


def test_keyword_neighbours_share_words(root, settings_for):
    settings = settings_for(root)
    keywords_only(settings)
    index = Index(settings, FakeEmbedder())
    try:
        near = keyword_neighbours(index.keywords, "astro/telescope.md", 3)
        assert "astro/telescope.md" not in near
        assert near[0] == "astro/stars.md"
        assert "astro/planets.md" in near and "kitchen/soup.md" not in near
        assert keyword_neighbours(index.keywords, "no/such.md") == []
    finally:
        index.close()


def test_index_embeds_the_newest_files_first(root, settings_for):
    settings = settings_for(root, embed_batch=1)
    index = Index(settings, FakeEmbedder())
    index.acquire_write_lock()
    finished: list[str] = []
    try:
        indexer = Indexer(index)
        indexer.sync(embed=False)
        indexer.vector_phase.embed_pending(IndexReport(), lambda _p: None, finished=finished.extend)
        newest_first = sorted(CORPUS, key=lambda p: -(root / p).stat().st_mtime_ns)
        assert sorted(finished) == sorted(CORPUS)
        # Whole files per window, newest first: the newest window is done before the oldest.
        assert finished.index(newest_first[0]) < finished.index(newest_first[-1])
        assert set(finished[:4]) == set(newest_first[:4])
        assert all(r.state == FileState.FRESH for r in index.keywords.files().values())
    finally:
        index.close()


def test_after_a_batch_only_the_files_it_embedded_are_looked_at_for_finishing(
    root, settings_for, monkeypatch
):
    """Which pending files are complete was asked of every pending file after each model batch
    (10 ms a batch with 10,000 of them); after the first batch only the batch's files can be."""
    settings = settings_for(root, embed_batch=1)
    index = Index(settings, FakeEmbedder())
    index.acquire_write_lock()
    asked: list[list[str] | None] = []
    real = index.keywords.ledger.files_ready_to_finish

    def ready(among=None):
        asked.append(None if among is None else sorted(among))
        return real() if among is None else real(among)

    monkeypatch.setattr(index.keywords.ledger, "files_ready_to_finish", ready)
    finished: list[str] = []
    try:
        indexer = Indexer(index)
        indexer.sync(embed=False)
        indexer.vector_phase.embed_pending(IndexReport(), lambda _p: None, finished=finished.extend)
        assert sorted(finished) == sorted(CORPUS)
        assert asked[0] is None and asked[-1] is None  # the first batch and the end: every file
        assert all(among is not None and len(among) == 1 for among in asked[1:-1])
        assert len(asked) > 2
        assert all(r.state == FileState.FRESH for r in index.keywords.files().values())
    finally:
        index.close()


def test_indexer_embeds_the_focused_file_and_its_neighbours_first(root, settings_for):
    settings = settings_for(root, embed_batch=1)
    keywords_only(settings)
    index = Index(settings, FakeEmbedder())
    index.acquire_write_lock()
    finished: list[str] = []
    try:
        priority = EmbeddingPriority()
        priority.set_focus(Focus(open_file="astro/telescope.md"))
        VectorPhase(index, priority).embed_pending(
            IndexReport(), lambda _p: None, finished=finished.extend
        )
        assert finished[0] == "astro/telescope.md"
        # The oldest files, yet the keyword neighbours come right after the open file.
        assert {"astro/stars.md", "astro/planets.md"} <= set(finished[1:5])
        assert sorted(finished) == sorted(CORPUS)  # and the rest still gets its vectors
    finally:
        index.close()


class GatedEmbedder(FakeEmbedder):
    """Embeds one model batch per ``step`` call (a slow model that the test paces)."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = threading.Semaphore(0)

    def embed_documents(self, texts):
        if not self.turn.acquire(timeout=20):
            raise TimeoutError("the test stopped pacing the model")
        return super().embed_documents(texts)


def test_live_index_follows_the_focus_and_reports_files_as_they_are_embedded(root, settings_for):
    events: list = []
    embedder = GatedEmbedder()
    live = LiveIndex(settings_for(root, embed_batch=1), events.append, embedder=embedder)
    live.start()
    try:
        assert wait_until(lambda: live.index.keywords.counts()["chunks"] > 0, 10)
        live.focus(Focus(open_file="garden/tulips.md"))
        embedder.turn.release(2)  # the first batch may have been picked before the focus

        def fresh(path: str) -> bool:
            return any(isinstance(e, FilesEmbeddedEvent) and path in e.paths for e in events)

        assert wait_until(lambda: fresh("garden/tulips.md"), 10)
        assert not any(isinstance(e, VectorsReadyEvent) for e in events)
        embedded = set().union(*(e.paths for e in events if isinstance(e, FilesEmbeddedEvent)))
        assert len(embedded) <= 2, embedded
        record = live.index.keywords.file("garden/tulips.md")
        assert record is not None and record.state == FileState.FRESH
        # The rest still progresses once the user's file is done.
        embedder.turn.release(1000)
        assert wait_until(lambda: any(isinstance(e, VectorsReadyEvent) for e in events), 20)
        assert all(r.state == FileState.FRESH for r in live.index.keywords.files().values())
    finally:
        embedder.turn.release(1000)
        live.stop()


class TimedEmbedder(FakeEmbedder):
    """Records when each model batch starts."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[float] = []

    def embed_documents(self, texts):
        self.starts.append(time.monotonic())
        return super().embed_documents(texts)


def embed_while_typing(root, settings_for, typing_seconds: float) -> tuple[TimedEmbedder, list]:
    """Embed the corpus (one chunk per batch) while a thread types a key every 50 ms for
    ``typing_seconds``; returns the embedder and the times of the keys."""
    settings = settings_for(root, embed_batch=1)
    keywords_only(settings)
    embedder = TimedEmbedder()
    index = Index(settings, embedder)
    index.acquire_write_lock()
    priority = EmbeddingPriority()
    keys: list[float] = []

    def type_keys() -> None:
        while not keys or time.monotonic() - keys[0] < typing_seconds:
            keys.append(time.monotonic())
            priority.note_typing()
            time.sleep(0.05)

    priority.note_typing()
    typist = threading.Thread(target=type_keys)
    typist.start()
    try:
        VectorPhase(index, priority).embed_pending(IndexReport(), lambda _p: None)
        assert all(r.state == FileState.FRESH for r in index.keywords.files().values())
    finally:
        typist.join()
        index.close()
    return embedder, keys


def test_no_model_batch_starts_while_the_user_types(root, settings_for, monkeypatch):
    monkeypatch.setattr(embed_priority, "TYPING_PAUSE", 0.3)
    embedder, keys = embed_while_typing(root, settings_for, 0.8)
    assert len(embedder.starts) == len(CORPUS)
    # Not one batch while the keys came, nor until the user had paused after the last one.
    assert min(embedder.starts) >= keys[-1] + 0.25


def test_typing_without_end_still_lets_a_batch_through(root, settings_for, monkeypatch):
    monkeypatch.setattr(embed_priority, "TYPING_PAUSE", 0.3)
    monkeypatch.setattr(embed_priority, "LONGEST_WAIT", 0.4)
    embedder, keys = embed_while_typing(root, settings_for, 1.2)
    # The first batch waited its longest wait, then ran while the keys still came.
    assert keys[0] + 0.35 <= embedder.starts[0] < keys[-1]


def test_a_cancelled_writer_does_not_wait_for_the_typing_to_stop():
    priority = EmbeddingPriority()
    priority.note_typing()
    assert priority.typing_pause_left() > 0.5
    cancel = threading.Event()
    cancel.set()
    assert priority.wait_while_typing(cancel) < 0.1
    assert EmbeddingPriority().wait_while_typing(None) < 0.01  # nobody typed: no wait


def test_no_folder_embeds_while_another_folder_of_the_window_reads_its_keywords(tmp_path):
    """Two live indexes in one process, as a window of two folders: the small folder is
    keyword-searchable at once, but its first model batch waits until the large folder's
    keyword pass is over (the model would take the cores the pass needs)."""
    small = write_files(tmp_path / "small", CORPUS)
    large = write_files(
        tmp_path / "large",
        {
            f"part{n // 50}/page{n}.md": f"# Page {n}\n\n" + f"Word{n} and more words. " * 40
            for n in range(400)
        },
    )
    embedder = TimedEmbedder()
    changed: dict[str, float] = {}

    def heard(name: str):
        def on_event(event) -> None:
            if isinstance(event, FilesChangedEvent) and event.initial:
                changed.setdefault(name, time.monotonic())

        return on_event

    def settings(root: Path, name: str) -> Settings:
        return Settings.for_root(root, tmp_path / f"index-{name}", model="fake-hash-64")

    first = LiveIndex(settings(small, "small"), heard("small"), embedder=embedder, watch=False)
    other = FakeEmbedder()
    second = LiveIndex(settings(large, "large"), heard("large"), embedder=other, watch=False)
    second.start()
    first.start()
    try:
        assert wait_until(lambda: first.index.keywords.counts()["chunks"] > 0, 20)
        assert wait_until(lambda: "large" in changed and embedder.starts, 60)
        assert changed["small"] < changed["large"]  # its own pass did not wait
        assert min(embedder.starts) >= changed["large"]
        assert first.wait_idle(20)
        assert all(r.state == FileState.FRESH for r in first.index.keywords.files().values())
    finally:
        first.stop()
        second.stop()


def test_a_keyword_pass_holds_embedding_until_it_ends_or_the_writer_is_cancelled():
    passes = KeywordPasses()
    assert passes.wait_for_none(None) < 0.01  # no pass: no wait
    cancel = threading.Event()
    with passes.running():
        ended = threading.Timer(0.3, cancel.set)
        ended.start()
        assert 0.25 <= passes.wait_for_none(cancel) < 2.0
    assert not passes.any_running
    released = threading.Event()

    def one_pass() -> None:
        with passes.running():
            released.wait(5)

    reader = threading.Thread(target=one_pass)
    reader.start()
    assert wait_until(lambda: passes.any_running, 5)
    threading.Timer(0.3, released.set).start()
    assert 0.25 <= EmbeddingPriority(keyword_passes=passes).wait_for_turn(None) < 2.0
    reader.join()


class OverlapEmbedder(FakeEmbedder):
    """Counts the model steps running at once (each takes 20 ms)."""

    def __init__(self, counter: dict[str, int], lock: threading.Lock) -> None:
        super().__init__()
        self.counter, self.lock = counter, lock

    def embed_documents(self, texts):
        with self.lock:
            self.counter["now"] += 1
            self.counter["most"] = max(self.counter["most"], self.counter["now"])
        time.sleep(0.02)
        try:
            return super().embed_documents(texts)
        finally:
            with self.lock:
                self.counter["now"] -= 1


def test_two_folders_embedding_on_two_threads_take_model_steps_one_at_a_time(tmp_path):
    """Two live indexes of a window embed on a thread each; their model steps at once would
    split the cores between two model calls and hold two sets of activations."""
    counter, lock = {"now": 0, "most": 0}, threading.Lock()
    indexes = []
    for name in ("one", "two"):
        root = write_files(tmp_path / name, CORPUS)
        settings = Settings.for_root(
            root, tmp_path / f"index-{name}", model="fake-hash-64", embed_batch=1
        )
        keywords_only(settings)
        index = Index(settings, OverlapEmbedder(counter, lock))
        index.acquire_write_lock()
        indexes.append(index)
    try:
        threads = [
            threading.Thread(
                target=VectorPhase(index, EmbeddingPriority()).embed_pending,
                args=(IndexReport(), lambda _p: None),
            )
            for index in indexes
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for index in indexes:
            assert all(r.state == FileState.FRESH for r in index.keywords.files().values())
        assert counter["most"] == 1
    finally:
        for index in indexes:
            index.close()


def test_a_model_step_waiting_for_its_turn_gives_up_when_the_writer_is_cancelled():
    steps = ModelSteps()
    with steps.turn(None) as held:
        assert held
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        began = time.monotonic()
        answers = []

        def wait() -> None:
            with steps.turn(cancel) as turn:
                answers.append(turn)

        waiter = threading.Thread(target=wait)
        waiter.start()
        waiter.join(5)
        assert answers == [False] and 0.25 <= time.monotonic() - began < 2.0
    with steps.turn(None) as held:  # given back: the next step takes it at once
        assert held


# -- explorer related on a file without vectors ---------------------------------------------------
@pytest.fixture
def cli_fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


def related_json(root: Path, index_dir: Path, rel: str, *extra: str):
    result = CliRunner().invoke(
        main,
        ["related", str(root / rel), "--root", str(root), "--index-dir", str(index_dir), "--json"]
        + list(extra),
        catch_exceptions=True,
    )
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return json.loads(result.stdout), result.stderr


def test_related_embeds_a_file_without_vectors_and_its_candidates(root, tmp_path, cli_fake_model):
    index_dir = tmp_path / "cli-index"
    settings = Settings.for_root(root, index_dir)
    keywords_only(settings)
    data, stderr = related_json(root, index_dir, "astro/telescope.md", "--limit", "1")
    lines = stderr.splitlines()
    assert len(lines) == 1 and "astro/telescope.md had no vectors yet: embedding it" in lines[0]
    assert [item["path"] for item in data["related"]] == ["astro/stars.md"]
    index = Index(settings, FakeEmbedder())
    try:
        states = {p: r.state for p, r in index.keywords.files().items()}
        assert states["astro/telescope.md"] == FileState.FRESH
        # Enough to answer, not the whole folder: the file and 2 x limit candidates.
        assert sum(state == FileState.FRESH for state in states.values()) == 3
    finally:
        index.close()
    # The second time it has its vectors: nothing on stderr, the same answer.
    again, stderr = related_json(root, index_dir, "astro/telescope.md", "--limit", "1")
    assert stderr == "" and again == data


def test_related_while_another_process_writes_computes_in_memory_and_writes_nothing(
    root, tmp_path, cli_fake_model
):
    index_dir = tmp_path / "cli-index"
    settings = Settings.for_root(root, index_dir)
    keywords_only(settings)
    holder = Index(settings, FakeEmbedder())
    priority = EmbeddingPriority()
    priority.set_focus(Focus(open_file="astro/stars.md"))
    holder.acquire_write_lock("explorer index")
    try:
        VectorPhase(holder, priority).embed_pending(
            IndexReport(), lambda _p: None, only={"astro/stars.md", "kitchen/bread.md"}
        )
        data, stderr = related_json(root, index_dir, "astro/telescope.md")
        lines = stderr.splitlines()
        assert len(lines) == 1 and "astro/telescope.md: vectors pending" in lines[0]
        assert "being written by explorer index" in lines[0]
        paths = [item["path"] for item in data["related"]]
        assert paths[0] == "astro/stars.md" and set(paths) == {"astro/stars.md", "kitchen/bread.md"}
        assert holder.keywords.file("astro/telescope.md").state == FileState.PENDING
        counts = holder.keywords.counts()
        assert counts[FileState.FRESH] == 2 and counts["embedded"] == 2
    finally:
        holder.close()


def test_live_focus_is_only_a_hint_from_any_thread(root, settings_for):
    """Many threads post focus while the writer embeds: every file still ends fresh."""
    live = LiveIndex(settings_for(root, embed_batch=1), lambda _e: None, embedder=FakeEmbedder())
    live.start()
    stop = time.monotonic() + 1.0

    def spam(n: int) -> None:
        paths = sorted(CORPUS)
        i = 0
        while time.monotonic() < stop:
            live.focus(Focus(open_file=paths[(i + n) % len(paths)], results=tuple(paths[:n])))
            i += 1

    threads = [threading.Thread(target=spam, args=(n,)) for n in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert live.wait_idle(20)
        assert all(r.state == FileState.FRESH for r in live.index.keywords.files().values())
        index = live.index
        assert set(index.keywords.chunk_ids()) == index.vectors.chunk_ids()
    finally:
        live.stop()
