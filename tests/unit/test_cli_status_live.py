"""``explorer status`` while a live writer (the TUI, ``explorer mcp``) keeps the index current
(issue 29): it says so, rather than telling the user to run ``explorer index`` to catch up."""

from __future__ import annotations

import json
import os

import pytest

from explorer.core.store.index import LIVE_MARK, LOCK_NAME, Index
from explorer.settings.config import Settings
from tests.conftest import invoke_cli as invoke
from tests.conftest import write_files

pytestmark = pytest.mark.usefixtures("fake_model")


@pytest.fixture
def stale(tmp_path):
    """An indexed folder with one file edited since."""
    root = write_files(tmp_path / "root", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    assert invoke("index", root).exit_code == 0
    (root / "a.md").write_text("# A\n\nalpha, edited\n", encoding="utf-8")
    os.utime(root / "a.md", (1, 1))
    return root


def test_status_names_the_live_writer_instead_of_the_command(stale):
    index = Index.open_existing(Settings.for_root(stale))
    try:
        index.acquire_write_lock("explorer mcp", live=True)
        text = invoke("status", stale)
        data = invoke("status", stale, "--json")
    finally:
        index.close()
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    stale_line = next(line for line in lines if line.startswith("stale"))
    assert "explorer index" not in stale_line and "live writer" in stale_line, stale_line
    assert f"writer      explorer mcp (pid {os.getpid()}) keeps the index current" in lines
    assert json.loads(data.stdout)["writer"] == f"explorer mcp (pid {os.getpid()})"


def test_a_writer_that_is_not_live_or_is_gone_is_no_keeper(stale, tmp_path):
    settings = Settings.for_root(stale)
    index = Index.open_existing(settings)
    try:
        index.acquire_write_lock("explorer index")  # finishes, keeps nothing current
        text = invoke("status", stale)
    finally:
        index.close()
    assert "to catch up" in text.stdout and "\nwriter " not in text.stdout
    # a live holder killed without releasing the lock leaves its file behind
    (settings.index_dir / LOCK_NAME).write_text(f"explorer mcp (pid 999999999){LIVE_MARK}")
    text = invoke("status", stale)
    assert "to catch up" in text.stdout and "\nwriter " not in text.stdout
    assert "writer" not in json.loads(invoke("status", stale, "--json").stdout)
