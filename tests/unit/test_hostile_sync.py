"""A sync of a hostile folder (fake embedder): every good file indexed, every bad case counted,
and the same for the live index when the bad case appears while it runs."""

from __future__ import annotations

import os
import threading

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.live.writer import LiveIndex
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from explorer.settings.user_config import ConfigError, load_user_config
from tests.conftest import wait_until
from tests.fakes import FakeEmbedder
from tests.hostile.corpus import add_non_utf8_name, add_outside_symlink, build_hostile_folder


def found_in(index: Index, word: str) -> set[str]:
    response = search(index, SearchRequest(word, mode="keyword", limit=50))
    return {hit.path for hit in response.results}


def sync_in_time(indexer: Indexer, seconds: float = 20):
    """Run a full sync on a thread; fail instead of hanging if it takes longer than ``seconds``."""
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(indexer.sync()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the sync did not finish"
    return outcome[0]


def test_a_hostile_folder_syncs_every_good_file_and_counts_each_bad_case(tmp_path, settings_for):
    corpus = build_hostile_folder(tmp_path)
    index = Index(settings_for(corpus.root), FakeEmbedder())
    try:
        report = sync_in_time(Indexer(index))
        assert report.failed == 0
        assert report.skipped == {"binary": 1, "not-regular": 3, "outside-root": 1}
        for rel, word in corpus.good.items():
            key = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            assert key in found_in(index, word), (rel, word)
        for word in corpus.forbidden_words:
            assert found_in(index, word) == set()
        counts = index.keywords.counts()
        assert counts["chunks"] == counts["embedded"] > 0  # embedding went through
        assert set(index.keywords.chunk_ids()) == index.vectors.chunk_ids()
        status = index.status()
        assert status.skip_reasons == {"binary": 1, "not-regular": 3, "outside-root": 1}
        again = sync_in_time(Indexer(index))  # a second run is stable: nothing churns
        assert (again.added, again.updated, again.removed) == (0, 0, 0)
    finally:
        index.close()


def test_a_name_that_is_not_utf8_never_stops_the_sync(tmp_path, settings_for):
    root = tmp_path / "root"
    root.mkdir()
    add_non_utf8_name(root)
    (root / "zz.md").write_text("# After\n\nafterword\n")
    index = Index(settings_for(root), FakeEmbedder())
    try:
        indexer = Indexer(index)
        sync_in_time(indexer)
        assert found_in(index, "saffronkettle") == {"bad\\xff\\xfename.md"}
        assert found_in(index, "afterword") == {"zz.md"}
        # The watcher hands over names as os.fsdecode spells them (with surrogates).
        raw = os.path.join(os.fsencode(root), b"bad\xff\xfename.md")
        with open(raw, "wb") as handle:
            handle.write(b"# Changed\n\nchangedword\n")
        indexer.update_paths([os.fsdecode(b"bad\xff\xfename.md")])
        assert found_in(index, "changedword") == {"bad\\xff\\xfename.md"}
        os.unlink(raw)
        indexer.update_paths(["bad\\xff\\xfename.md"])
        assert "bad\\xff\\xfename.md" not in index.keywords.files()
    finally:
        index.close()


def test_links_out_of_a_root_are_read_only_when_the_config_allows_it(tmp_path, isolated_locations):
    root = tmp_path / "root"
    root.mkdir()
    add_outside_symlink(root, tmp_path / "outside")
    config = isolated_locations / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    assert not Settings.for_root(root).allow_outside_links
    config.write_text(f'allow_links_outside = ["{tmp_path}/other", "{root}"]\n')
    settings = Settings.for_root(root, tmp_path / "index", model="fake-hash-64")
    assert settings.allow_outside_links
    assert not Settings.for_root(tmp_path / "outside").allow_outside_links
    index = Index(settings, FakeEmbedder())
    try:
        sync_in_time(Indexer(index))
        assert found_in(index, "outsidesecretword") == {"notes/passwd.txt"}
    finally:
        index.close()
    config.write_text('allow_links_outside = "everywhere"\n')
    with pytest.raises(ConfigError, match="allow_links_outside must be a list"):
        load_user_config(config)


def test_the_live_index_never_reads_a_link_out_made_while_it_runs(tmp_path, settings_for):
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha\n")
    live = LiveIndex(settings_for(root), lambda _event: None, embedder=FakeEmbedder())
    live.start()
    try:
        assert live.wait_idle(20)
        add_outside_symlink(root, tmp_path / "outside", rel="late.txt")
        (root / "b.md").write_text("# B\n\nbravo\n")
        assert wait_until(lambda: found_in(live.index, "bravo") == {"b.md"}, timeout=20)
        assert wait_until(lambda: live.index.keywords.file("late.txt") is not None, timeout=20)
        record = live.index.keywords.file("late.txt")
        assert record.state == "skipped" and record.reason.startswith("outside-root")
        assert found_in(live.index, "outsidesecretword") == set()
    finally:
        live.stop()
