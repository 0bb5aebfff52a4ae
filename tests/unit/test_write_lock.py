"""The write lock: one writer at a time, and no ``write.lock`` left behind after it quits."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from explorer.core.live.writer import LiveIndex
from explorer.core.store.index import LOCK_NAME, Index, IndexBusy
from explorer.core.store.write_lock import LockBusy, WriteLock
from explorer.settings.config import Settings
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder
from tests.mcp_client import call, index_with_fake_model, server_params, wait_for, with_session

HOLDER_SCRIPT = """
import sys
from pathlib import Path
from explorer.core.store.write_lock import WriteLock

lock = WriteLock(Path(sys.argv[1]))
lock.acquire("the other process")
print("held", flush=True)
sys.stdin.readline()
lock.release()
"""


def test_released_lock_leaves_no_file(tmp_path):
    index = Index(Settings.for_root(tmp_path, tmp_path / "index", model=FakeEmbedder.name))
    index.acquire_write_lock()
    lock_file = tmp_path / "index" / LOCK_NAME
    assert "explorer index (pid" in lock_file.read_text()
    index.close()
    assert not lock_file.exists()
    again = Index(Settings.for_root(tmp_path, tmp_path / "index", model=FakeEmbedder.name))
    again.acquire_write_lock()  # and the next writer gets it at once
    again.close()
    assert not lock_file.exists()


def test_another_process_holds_then_hands_over(tmp_path):
    path = tmp_path / LOCK_NAME
    other = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "held"
        mine = WriteLock(path)
        with pytest.raises(LockBusy) as busy:
            mine.acquire("this test")
        assert busy.value.holder == "the other process"
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(timeout=30) == 0
        assert not path.exists()  # the other process took its file with it
        mine.acquire("this test")
        assert path.read_text() == "this test"
        mine.release()
    finally:
        other.kill()
        other.wait()


def test_an_index_busy_error_names_the_holder(tmp_path):
    settings = Settings.for_root(tmp_path, tmp_path / "index", model=FakeEmbedder.name)
    first, second = Index(settings), Index(settings)
    first.acquire_write_lock("explorer index")
    try:
        with pytest.raises(IndexBusy, match="being written by explorer index"):
            second.acquire_write_lock()
    finally:
        first.close()
        second.close()


def test_removing_the_file_never_lets_two_writers_in(tmp_path):
    """Writers that take and release the lock as fast as they can: a writer that opened the
    old file just before it was removed must not hold the lock beside one that made a new
    file. Every lock must be the only one held at its moment."""
    path = tmp_path / LOCK_NAME
    holders: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    taken = [0]
    guard = threading.Lock()
    stop = time.monotonic() + 3.0

    def writer(name: str) -> None:
        lock = WriteLock(path)
        while time.monotonic() < stop:
            try:
                lock.acquire(name)
            except LockBusy:
                continue
            with guard:
                holders.append(name)
                if len(holders) > 1:
                    overlaps.append(tuple(holders))
                taken[0] += 1
            time.sleep(0.0005)
            with guard:
                holders.remove(name)
            lock.release()

    threads = [threading.Thread(target=writer, args=(f"writer {n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert taken[0] > 100, "the writers hardly ever got the lock"
    assert overlaps == []
    assert not path.exists()


@pytest.mark.parametrize("holder", ["the explorer MCP server", "the explorer TUI"])
def test_a_live_holder_is_named_and_the_advice_is_not_to_wait(tmp_path, holder):
    """``explorer index`` once said "the explorer TUI" of any live index, the MCP server's too."""
    root = tmp_path / "root"
    root.mkdir()
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    live = LiveIndex(settings, lambda event: None, FakeEmbedder(), watch=False, holder=holder)
    live.start()
    try:
        assert wait_until(lambda: live.index.holds_write_lock, 20)
        with pytest.raises(IndexBusy) as busy:
            Index.open_for_writing(settings)
    finally:
        live.stop()
    message = str(busy.value)
    assert f"is being written by {holder} (pid {os.getpid()}); " in message
    assert message.endswith("it keeps the index up to date while it runs")
    assert "wait" not in message


def test_the_mcp_server_names_itself_to_explorer_index(tmp_path):
    root = write_files(tmp_path / "root", {"notes/stars.md": "# Stars\n\nA telescope.\n"})
    index_dir = tmp_path / "index"
    index_with_fake_model(root, index_dir)

    async def body(session):
        async def live() -> bool:
            return (await call(session, "status"))[1]["upkeep"] == "live"

        await wait_for(live, 10)
        return fake_model_cli("index", root, "--index-dir", index_dir)

    done = with_session(server_params(root, index_dir), body)
    assert done.returncode != 0
    assert "is being written by the explorer MCP server (pid" in done.stderr
    assert "it keeps the index up to date while it runs" in done.stderr


def fake_model_cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.fake_model_cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
