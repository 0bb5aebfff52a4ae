"""A tree bigger than the system's inotify watch limit: explorer says so once, naming the
setting, and keeps the tree current by polling (issue 32). The limit is really lowered, in a
user namespace of the test's own (``unshare``), so the rest of the machine is untouched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TREE


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            "echo 5 > /proc/sys/user/max_inotify_watches",
        ],
        capture_output=True,
    )
    return done.returncode == 0


@pytest.mark.skipif(not _namespaces_work(), reason="needs unshare --user and per-namespace limits")
def test_a_tree_over_the_watch_limit_is_polled_and_said_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(TREE)}
    done = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            sys.executable,
            str(TREE / "tests" / "unit" / "watch_limit_worker.py"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=TREE,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    limit_notes = [m for m in report["messages"] if "fs.inotify.max_user_watches" in m]
    assert len(limit_notes) == 1, report["messages"]
    assert "polling" in limit_notes[0]
    # Not silently stale: the new file is found, within a polling interval and a sync.
    assert report["found_after"] is not None
    assert report["found_after"] < 15
