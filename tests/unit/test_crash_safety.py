"""An interrupted sync never leaves an index that the next sync cannot repair.

The issue: "killing `explorer index` at any moment and running it again yields a consistent index
(no orphan or duplicate chunks, every file fresh) without a full rebuild". Two proofs:

1. Deterministic fault injection: a store method raises on its n-th call (before or after doing its
   work), several times with corpus edits in between; then one normal sync must repair everything
   and embed only the chunks whose vectors are really missing.
2. Real kills: a worker process syncing with a slowed-down fake embedder is SIGKILLed at seeded
   random moments, with edits in between; a sync in this process then repairs the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.indexing.embed_priority import EmbeddingPriority, Focus
from explorer.core.indexing.indexer import Indexer
from explorer.core.models import FileState
from explorer.core.retrieval.query import fts_expression
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.embedding_ledger import EmbeddingLedger
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndex
from explorer.core.store.vectors import VectorStore, file_vector_id
from explorer.settings.config import Settings
from tests.fakes import FakeEmbedder

REPO = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("crash_worker.py")


class Corpus:
    """Markdown files whose every version holds its own unique words, so stale text is visible."""

    def __init__(self, root: Path, files: int, sections: int = 3) -> None:
        self.root = root
        self.sections = sections
        self.serial = 0
        self.versions: dict[str, int] = {}
        """path -> serial of the version on disk."""
        self.dead: list[int] = []
        """Serials of versions no longer on disk anywhere."""
        for number in range(files):
            self.write(f"docs/file{number:02d}.md")

    def words(self, serial: int) -> list[str]:
        return [f"zz{serial}w{part}" for part in range(self.sections)]

    def text(self, serial: int) -> str:
        body = [f"# Title {serial}\n\nIntro mentions {self.words(serial)[0]} and shared words.\n"]
        for part, word in enumerate(self.words(serial)[1:], start=1):
            body.append(f"\n## Part {part}\n\nSection about {word} with more shared words.\n")
        return "".join(body)

    def write(self, rel: str) -> None:
        if rel in self.versions:
            self.dead.append(self.versions[rel])
        self.serial += 1
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(self.text(self.serial), encoding="utf-8")
        if path.stat().st_mtime_ns == before:  # coarse clocks: make the change visible
            os.utime(path, ns=(before + 1_000_000, before + 1_000_000))
        self.versions[rel] = self.serial

    def mutate(self, rng: random.Random, edits: int = 2) -> None:
        """Edit some files, delete one, rename one (same content) and add one."""
        paths = sorted(self.versions)
        for rel in rng.sample(paths, edits):
            self.write(rel)
        gone = rng.choice(sorted(self.versions))
        (self.root / gone).unlink()
        self.dead.append(self.versions.pop(gone))
        moved = rng.choice(sorted(self.versions))
        target = f"moved/{self.serial}-{Path(moved).name}"
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        (self.root / moved).rename(self.root / target)
        self.versions[target] = self.versions.pop(moved)
        self.write(f"docs/new{self.serial:03d}.md")


def assert_repaired(index: Index, corpus: Corpus, embedder: FakeEmbedder) -> None:
    """The index matches the files on disk, both stores agree, and no old text is findable."""
    keywords, vectors = index.keywords, index.vectors
    files = keywords.files()
    assert set(files) == set(corpus.versions)
    for rel, record in files.items():
        assert record.state == FileState.FRESH, (rel, record.state, record.reason)
        disk = (corpus.root / rel).read_text(encoding="utf-8")
        assert record.hash == hashlib.sha256(disk.encode()).hexdigest(), rel
        assert record.chunk_count == len(keywords.chunk_ids(rel)) > 0

    sqlite_ids = keywords.chunk_ids()
    assert len(sqlite_ids) == len(set(sqlite_ids)), "duplicate chunk ids in SQLite"
    chroma_ids = vectors.chunk_ids()
    assert vectors.count_chunks() == len(chroma_ids), "duplicate chunk ids in Chroma"
    assert set(sqlite_ids) == chroma_ids, "orphan or missing vectors"
    expected_files = {file_vector_id(rel, record.hash): rel for rel, record in files.items()}
    assert vectors.file_entries() == expected_files, "file vectors differ from the fresh files"

    status = index.status()
    assert status.stale == 0 and status.failed == 0
    assert status.chunks == status.vectors == len(sqlite_ids)

    for rel, serial in corpus.versions.items():
        for word in corpus.words(serial):
            hits = keywords.search(fts_expression(word), 10)
            assert {path for _id, path, _s in hits} == {rel}, word
    for serial in corpus.dead:
        for word in corpus.words(serial):
            assert keywords.search(fts_expression(word), 10) == [], f"stale text {word} found"

    # The vector leg: every neighbour is a live chunk, and the newest text is found by meaning.
    newest = max(corpus.versions, key=corpus.versions.get)
    query = " ".join(corpus.words(corpus.versions[newest]))
    nearest = vectors.query_chunks(embedder.embed_query(query), 1000)
    assert {cid for cid, _s in nearest} <= set(sqlite_ids)
    response = search(index, SearchRequest(query, limit=1))
    assert [hit.path for hit in response.results] == [newest]
    assert response.results[0].passages[0].vector_rank is not None


def repair(settings: Settings, embedder: FakeEmbedder, corpus: Corpus) -> None:
    """One normal sync; it must embed exactly the chunks Chroma lacks, nothing more."""
    index = Index(settings, embedder=embedder)
    try:
        index.acquire_write_lock()  # a killed writer must not keep the lock
        in_chroma = index.vectors.chunk_ids()
        before = embedder.documents_embedded
        report = Indexer(index).sync()
        assert not report.cancelled
        needed = set(index.keywords.chunk_ids()) - in_chroma
        assert embedder.documents_embedded - before == len(needed), (
            "the repair re-embedded chunks whose vectors were already stored"
        )
        assert_repaired(index, corpus, embedder)
        # And the repaired index is stable: a further sync has nothing to do.
        again = Indexer(index).sync()
        assert again.changed == again.chunks_embedded == again.orphans_removed == 0
    finally:
        index.close()


# -- 1. fault injection -------------------------------------------------------------------------
class Crash(Exception):
    """The injected failure."""


@contextlib.contextmanager
def failing(monkeypatch, owner: type, name: str, nth: int, when: str):
    """Make ``owner.name`` raise on its ``nth`` call (1-based), before or after its work."""
    original = getattr(owner, name)
    state = {"calls": 0, "fired": 0}

    def wrapper(self, *args, **kwargs):
        if args and not isinstance(args[0], str) and len(args[0]) == 0:
            return original(self, *args, **kwargs)  # a call with nothing to do does not count
        state["calls"] += 1
        if state["calls"] == nth and when == "before":
            state["fired"] += 1
            raise Crash(f"{name} #{nth} before")
        result = original(self, *args, **kwargs)
        if state["calls"] == nth and when == "after":
            state["fired"] += 1
            raise Crash(f"{name} #{nth} after")
        return result

    with monkeypatch.context() as patch:
        patch.setattr(owner, name, wrapper)
        yield state


FAULTS = [
    (VectorStore, "upsert_chunks", 1, "before"),
    (VectorStore, "upsert_chunks", 3, "after"),
    (EmbeddingLedger, "mark_embedded", 1, "before"),
    (EmbeddingLedger, "mark_embedded", 2, "after"),
    (VectorStore, "delete_chunks", 1, "before"),
    (VectorStore, "delete_chunks", 1, "after"),
    (KeywordIndex, "replace_file", 1, "before"),
    (KeywordIndex, "replace_file", 4, "after"),
    (VectorStore, "upsert_files", 2, "before"),
    (VectorStore, "upsert_files", 1, "after"),
    (EmbeddingLedger, "mark_fresh", 3, "before"),
    (EmbeddingLedger, "mark_fresh", 1, "after"),
    (KeywordIndex, "remove_file", 1, "after"),
    (VectorStore, "delete_files", 1, "after"),
]


@pytest.mark.parametrize(
    ("owner", "name", "nth", "when"),
    FAULTS,
    ids=[f"{owner.__name__}.{name}-{nth}-{when}" for owner, name, nth, when in FAULTS],
)
def test_sync_recovers_from_a_failure_at_any_step(tmp_path, monkeypatch, owner, name, nth, when):
    settings = Settings.for_root(
        tmp_path / "root", tmp_path / "index", model=FakeEmbedder.name, embed_batch=3
    )
    corpus = Corpus(tmp_path / "root", files=6)
    embedder = FakeEmbedder()
    rng = random.Random(f"{name}-{nth}-{when}")
    fired = 0
    for _round in range(2):
        with failing(monkeypatch, owner, name, nth, when) as state:
            index = Index(settings, embedder=embedder)
            try:
                Indexer(index).sync()
            except Crash:
                pass
            finally:
                index.close()
        fired += state["fired"]
        corpus.mutate(rng)
    assert fired >= 1, "the injected failure never happened: the scenario tests nothing"
    repair(settings, embedder, corpus)


def test_repair_keeps_vectors_written_just_before_a_crash(tmp_path, monkeypatch):
    """Vectors stored in Chroma but not yet recorded in SQLite are kept, not embedded again."""
    settings = Settings.for_root(
        tmp_path / "root", tmp_path / "index", model=FakeEmbedder.name, embed_batch=100
    )
    corpus = Corpus(tmp_path / "root", files=4)
    embedder = FakeEmbedder()
    with failing(monkeypatch, VectorStore, "upsert_chunks", 1, "after") as state:
        index = Index(settings, embedder=embedder)
        with pytest.raises(Crash):
            Indexer(index).sync()
        index.close()
    assert state["fired"] == 1
    stored = embedder.documents_embedded
    assert stored > 0
    index = Index(settings, embedder=embedder)
    try:
        assert index.vectors.count_chunks() == stored
        report = Indexer(index).sync()
        assert report.chunks_embedded == 0
        assert embedder.documents_embedded == stored
        assert_repaired(index, corpus, embedder)
    finally:
        index.close()


# -- 2. real kills --------------------------------------------------------------------------------
def _start_worker(root: Path, index_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(root), str(index_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO),
    )


def _expect(worker: subprocess.Popen, word: str) -> None:
    line = worker.stdout.readline().strip()
    if line != word:
        worker.kill()
        _out, err = worker.communicate()
        pytest.fail(f"crash worker said {line!r}, not {word!r}: {err}")


KILLS = 5


def test_sigkill_at_random_moments_then_sync_repairs(tmp_path):
    root, index_dir = tmp_path / "root", tmp_path / "index"
    corpus = Corpus(root, files=24, sections=4)
    rng = random.Random(20260517)
    interrupted = 0
    # Every worker does its slow imports at once; each opens the index only when told "go".
    workers = [_start_worker(root, index_dir) for _kill in range(KILLS)]
    try:
        for worker in workers:
            _expect(worker, "imported")
            worker.stdin.write("go\n")
            worker.stdin.flush()
            _expect(worker, "ready")
            time.sleep(rng.uniform(0.0, 0.6))
            worker.send_signal(signal.SIGKILL)
            out, err = worker.communicate(timeout=30)
            assert worker.returncode in (0, -signal.SIGKILL), err
            if worker.returncode == -signal.SIGKILL and "done" not in out:
                interrupted += 1
            corpus.mutate(rng, edits=6)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
    assert interrupted >= 2, f"only {interrupted} of {KILLS} kills landed inside a sync"

    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name)
    repair(settings, FakeEmbedder(), corpus)


class FocusHopper(FakeEmbedder):
    """A fake model whose every batch moves the user's focus to another file, as if they were
    opening files while it embeds."""

    def __init__(self, priority: EmbeddingPriority, root: Path) -> None:
        super().__init__()
        self.priority = priority
        self.root = root
        self.hops = 0

    def embed_documents(self, texts):
        paths = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*.md"))
        self.hops += 1
        if paths:
            self.priority.set_focus(
                Focus(open_file=paths[(7 * self.hops) % len(paths)], results=tuple(paths[:2]))
            )
        return super().embed_documents(texts)


PRIORITY_FAULTS = [
    (EmbeddingLedger, "mark_embedded", 3, "after"),
    (VectorStore, "upsert_chunks", 2, "before"),
    (VectorStore, "upsert_files", 2, "after"),
    (EmbeddingLedger, "mark_fresh", 2, "after"),
]


@pytest.mark.parametrize(
    ("owner", "name", "nth", "when"),
    PRIORITY_FAULTS,
    ids=[f"{owner.__name__}.{name}-{nth}-{when}" for owner, name, nth, when in PRIORITY_FAULTS],
)
def test_a_sync_that_follows_a_moving_focus_recovers_too(
    tmp_path, monkeypatch, owner, name, nth, when
):
    """Embedding in the user's order (refocused at every batch) keeps the same guarantees."""
    settings = Settings.for_root(
        tmp_path / "root", tmp_path / "index", model=FakeEmbedder.name, embed_batch=2
    )
    corpus = Corpus(tmp_path / "root", files=8)
    priority = EmbeddingPriority()
    embedder = FocusHopper(priority, corpus.root)
    fired = 0
    for _round in range(2):
        with failing(monkeypatch, owner, name, nth, when) as state:
            index = Index(settings, embedder=embedder)
            try:
                Indexer(index, priority).sync()
            except Crash:
                pass
            finally:
                index.close()
        fired += state["fired"]
        corpus.mutate(random.Random(f"{name}-{nth}"))
    assert fired >= 1 and embedder.hops > 2
    repair(settings, embedder, corpus)
