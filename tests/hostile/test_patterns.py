"""Patterns that cannot hang (issue 21): a ``.gitignore``, the ``exclude`` setting or a
``--path`` filter full of stars is matched in time linear in the path.

Each check runs in a process of its own with a timeout, so a matcher that backtracks fails the
test instead of hanging it (a regular expression holds the interpreter while it runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXPLORER_PROCESS, write_files

PATTERNS = {
    "5 stars": "*" * 5 + "a",
    "10 stars": "*" * 10 + "a",
    "16 stars": "*" * 16 + "a",
    "100,000 stars": "*" * 99_999 + "a",
    "50,000 star-letter pairs": "*a" * 50_000,
}
"""The issue's lines (5 stars took 0.9 s, 10 took 15.6 s, 16 and 100,000 hung) and a worse one."""

FILES = {
    "documentation/reference/a-rather-long-file-name-for-the-matcher.md": "# Kept\n\nkeptword\n",
    "src/tool.java": "class Tool { /* ignoredword */ }\n",  # "java" ends in "a"
}

SCAN_SCRIPT = """
import json, sys, time
from pathlib import Path
from explorer.core.indexing.disk_state import compare_with_disk
from explorer.core.ingest.scanner import ScanRules, scan
from explorer.core.settings import IndexSettings
root, exclude = Path(sys.argv[1]), json.loads(sys.argv[2])
started = time.perf_counter()
files = [f.rel_path for f in scan(root, ScanRules(root, exclude=exclude), 10**6).files]
settings = IndexSettings(root=root, index_dir=root.parent / "unused", exclude=tuple(exclude))
compare_with_disk(settings, {})
print(json.dumps({"files": files, "seconds": time.perf_counter() - started}))
"""


def scan_in_process(root: Path, exclude: list[str]) -> dict:
    """Scan ``root`` (and compare it with an empty manifest, as ``status`` does) in a process
    of its own; fails after 30 s instead of hanging."""
    done = subprocess.run(
        [sys.executable, "-c", SCAN_SCRIPT, str(root), json.dumps(exclude)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def explorer(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXPLORER_PROCESS, *map(str, args)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=PATTERNS.keys())
def test_a_gitignore_of_stars_is_matched_at_once(tmp_path: Path, pattern: str) -> None:
    root = write_files(tmp_path / "root", {**FILES, ".gitignore": pattern + "\n"})
    found = scan_in_process(root, [])
    assert found["seconds"] < 1.0
    kept = set(found["files"])
    assert "documentation/reference/a-rather-long-file-name-for-the-matcher.md" in kept
    assert ("src/tool.java" in kept) == pattern.startswith("*a")  # "*a" pairs need many "a"s


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=PATTERNS.keys())
def test_an_exclude_of_stars_is_matched_at_once(tmp_path: Path, pattern: str) -> None:
    root = write_files(tmp_path / "root", FILES)
    found = scan_in_process(root, [pattern])
    assert found["seconds"] < 1.0
    assert "documentation/reference/a-rather-long-file-name-for-the-matcher.md" in found["files"]


def test_index_status_and_check_refs_finish_on_sixteen_stars(tmp_path: Path) -> None:
    """The issue's case end to end: each command used to hang on this one-line .gitignore."""
    root = write_files(tmp_path / "root", {**FILES, ".gitignore": "*" * 16 + "a\n"})
    index_dir = tmp_path / "index"
    for args in (
        ("index", root, "--index-dir", index_dir, "--keywords-only", "--json"),
        ("status", "--index-dir", index_dir, "--json"),
        ("check-refs", root, "--index-dir", index_dir, "--json"),
    ):
        started = time.monotonic()
        done = explorer(*args)
        assert done.returncode == 0, (args[0], done.stderr)
        assert time.monotonic() - started < 20, args[0]
    status = json.loads(explorer("status", "--index-dir", index_dir, "--json").stdout)
    assert status["files"]["indexed"] + status["files"]["stale"] == 1  # only the kept file
    assert status["stale"]["new"] == status["stale"]["edited"] == 0


def test_a_path_filter_of_stars_answers_at_once(tmp_path: Path) -> None:
    """``--path`` globs went through the same kind of regular expression (17 s for one path)."""
    root = write_files(tmp_path / "root", FILES)
    index_dir = tmp_path / "index"
    done = explorer("index", root, "--index-dir", index_dir, "--keywords-only")
    assert done.returncode == 0, done.stderr
    for glob, expected in (
        ("*" * 16 + "x", []),
        ("*" * 16 + "r.md", ["documentation/reference/a-rather-long-file-name-for-the-matcher.md"]),
        ("*e" * 30, []),
    ):
        started = time.monotonic()
        done = explorer(
            "search", "keptword", "--index-dir", index_dir, "--mode", "keyword",
            "--path", glob, "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 20
        assert [hit["path"] for hit in json.loads(done.stdout)["results"]] == expected
