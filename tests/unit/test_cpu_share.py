"""Embedding shares the machine (issue 32): it runs at a low priority, the threads it starts
inherit it, the model's thread count is a setting, and progress says how long is left."""

from __future__ import annotations

import os
import threading
import types
from pathlib import Path

import pytest

from explorer.core.indexing.cpu_share import EMBED_NICE, limit_model_threads
from explorer.core.indexing.indexer import Indexer
from explorer.core.indexing.report import Progress
from explorer.core.live.events import ProgressEvent
from explorer.core.models import SyncPhase
from explorer.core.store.index import Index
from explorer.tui.index_state import IndexState
from tests.conftest import write_files
from tests.fakes import FakeEmbedder


class PriorityRecorder(FakeEmbedder):
    """Notes the CPU priority of the thread each model batch runs on, and of a thread that
    batch starts (as a model's worker pool would)."""

    def __init__(self) -> None:
        super().__init__()
        self.batch_nice: list[int] = []
        self.started_nice: list[int] = []

    def embed_documents(self, texts):
        self.batch_nice.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

        def worker() -> None:
            self.started_nice.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

        helper = threading.Thread(target=worker)
        helper.start()
        helper.join()
        return super().embed_documents(texts)


def _sync_on_a_thread(root: Path, settings_for, embedder, progress=None) -> None:
    """Index ``root`` on a thread of its own, as a live writer does (the test's own thread
    keeps its priority)."""
    index = Index(settings_for(root), embedder)
    try:
        worker = threading.Thread(target=lambda: Indexer(index).sync(progress=progress))
        worker.start()
        worker.join()
    finally:
        index.close()


@pytest.mark.skipif(
    os.getpriority(os.PRIO_PROCESS, 0) >= EMBED_NICE,
    reason="the tests run at a priority as low as embedding's already (under nice)",
)
def test_embedding_runs_below_normal_priority_and_the_threads_it_starts_too(tmp_path, settings_for):
    root = write_files(
        tmp_path / "root", {f"note{i}.md": f"# Note {i}\n\nText {i}.\n" for i in range(5)}
    )
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    embedder = PriorityRecorder()
    _sync_on_a_thread(root, settings_for, embedder)
    assert embedder.batch_nice and min(embedder.batch_nice) >= EMBED_NICE
    assert embedder.started_nice and min(embedder.started_nice) >= EMBED_NICE
    # The caller's thread (the TUI's, a test's) is left as it was.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def test_progress_says_how_long_is_left_once_it_can_tell(tmp_path, settings_for):
    files = {
        f"notes/n{i:03}.md": f"# Note {i}\n\n" + f"Para {i} about walruses.\n\n" * 3
        for i in range(400)
    }
    root = write_files(tmp_path / "root", files)
    updates: list[Progress] = []
    _sync_on_a_thread(root, settings_for, FakeEmbedder(), progress=updates.append)
    embedding = [u for u in updates if u.phase is SyncPhase.EMBED and u.chunks_done]
    assert embedding, "no embedding progress"
    told = [u for u in embedding if u.seconds_left is not None]
    assert told, "no update said how long is left"
    assert all(u.seconds_left >= 0 and u.chunks_done < u.chunks_total for u in told)
    # The status bar says it as a person would.
    last = told[-1]
    event = ProgressEvent(
        SyncPhase.EMBED,
        chunks_done=last.chunks_done,
        chunks_total=last.chunks_total,
        seconds_left=125.0,
    )
    summary = IndexState(opened=True, progress=event).summary()
    assert "about 2 min left" in summary


def test_the_model_thread_count_is_the_setting(monkeypatch):
    calls: list[int] = []
    torch = types.SimpleNamespace(get_num_threads=lambda: 2, set_num_threads=calls.append)
    monkeypatch.setitem(__import__("sys").modules, "torch", torch)
    limit_model_threads(0)
    assert calls == []  # 0 leaves torch's own choice
    limit_model_threads(1)
    assert calls == [1]


def test_embed_threads_is_a_config_key(tmp_path, monkeypatch):
    from explorer.settings.config import Settings

    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text("embed_threads = 1\n")
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(config_dir))
    settings = Settings.for_root(tmp_path, tmp_path / "index")
    assert settings.embed_threads == 1
    (config_dir / "config.toml").write_text("embed_threads = -1\n")
    with pytest.raises(Exception, match="embed_threads"):
        Settings.for_root(tmp_path, tmp_path / "index")
