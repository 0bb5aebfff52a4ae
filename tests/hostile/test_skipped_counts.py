"""Every skipped thing counted (issue 21): a fifo, a device, a socket, a link to ``/dev/zero`` and
a folder that cannot be listed each show in ``status`` (text and ``--json``) with its reason.

The commands run as processes. Run as root, permission bits do not stop a listing, so the
commands then run with the two capabilities that bypass them dropped (``setpriv``): the folder
of mode 000 is unreadable to them as it is to any other user.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXPLORER_PROCESS, write_files

CAPABILITIES = "-dac_override,-dac_read_search"


def as_a_user(args: list[str]) -> list[str]:
    """``args`` run so that file permissions apply (root drops what bypasses them)."""
    if os.geteuid() != 0:
        return args
    return ["setpriv", f"--inh-caps={CAPABILITIES}", f"--bounding-set={CAPABILITIES}", *args]


def explorer(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        as_a_user([*EXPLORER_PROCESS, *map(str, args)]),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def hostile_root(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("run as root without setpriv: permission bits cannot be tested")
    root = write_files(tmp_path / "root", {"good.md": "# Good\n\nA good file.\n"})
    os.mkfifo(root / "pipe.md")
    (root / "zero.txt").symlink_to("/dev/zero")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(root / "sock.md"))
    locked = root / "locked"
    locked.mkdir()
    (locked / "inside.md").write_text("# Inside\n\nNever seen.\n")
    locked.chmod(0)
    try:
        yield root
    finally:
        locked.chmod(0o755)
        listening.close()


def test_status_counts_every_skipped_thing_with_its_reason(hostile_root: Path, tmp_path: Path):
    index_dir = tmp_path / "index"
    expected = {"not-regular": 3, "unreadable": 1}
    device = hostile_root / "device.md"
    try:
        os.mknod(device, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # the device of /dev/zero
        expected["not-regular"] += 1
    except PermissionError:
        pass  # no CAP_MKNOD here: the link to /dev/zero stands for devices
    done = explorer("index", hostile_root, "--index-dir", index_dir, "--keywords-only", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == expected and report["added"] == 1
    status = explorer("status", "--index-dir", index_dir, "--json")
    assert status.returncode == 0, status.stderr
    counted = json.loads(status.stdout)
    assert counted["skip_reasons"] == expected
    assert counted["files"]["skipped"] == sum(expected.values())
    changes = counted["stale"]
    assert changes["edited"] == changes["new"] == changes["deleted"] == 0  # no false change
    text = explorer("status", "--index-dir", index_dir).stdout
    skipped = sum(expected.values())
    assert f"{skipped} skipped, 0 failed ({expected['not-regular']} not-regular, 1 unreadable)" in (
        text
    )
    again = explorer("index", hostile_root, "--index-dir", index_dir, "--keywords-only", "--json")
    assert json.loads(again.stdout)["removed"] == 0 and json.loads(again.stdout)["added"] == 0


def test_each_skipped_thing_says_what_it_is(hostile_root: Path, tmp_path: Path) -> None:
    """The reason each one is stored with (the file tree shows it beside the name)."""
    index_dir = tmp_path / "index"
    done = explorer("index", hostile_root, "--index-dir", index_dir, "--keywords-only")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(index_dir / "index.sqlite") as db:
        rows = db.execute("SELECT path, reason FROM files").fetchall()
    assert dict(rows) == {
        "good.md": "",
        "locked": "unreadable: a folder that cannot be listed (permission denied)",
        "pipe.md": "not-regular: a named pipe",
        "sock.md": "not-regular: a socket",
        "zero.txt": "not-regular: a link to a device",
    }
