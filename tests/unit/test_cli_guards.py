"""The CLI refuses what it cannot honour in one line, and reads a read-only index without writing.

- ``--path`` globs it cannot translate (a reversed range, POSIX classes) name ``--path`` and the
  pattern, with no Python warning; the TUI's ``path:`` words share the same parser.
- A ROOT that is not the folder an ``--index-dir`` was built for is refused, naming both.
- A plain deletion is reported as a deletion, not as the repair of an interrupted run.
- ``search`` and ``status`` work on an index directory nobody may write (tested as processes
  without the capabilities that let root ignore file modes).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.query import PathPatternError
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import EXPLORER_PROCESS, write_files
from tests.fakes import FakeEmbedder

CORPUS = {
    "guides/install.md": "# Install\n\nInstall explorer with pip.\n",
    "guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def one_line_error(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    [line] = result.stderr.splitlines()
    assert line.startswith("explorer: error: ") and "Traceback" not in result.output
    return line


@pytest.fixture
def indexed(tmp_path):
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    result = invoke("index", root, "--index-dir", index_dir)
    assert result.exit_code == 0, result.output
    return root, index_dir


# -- --path --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("[z-a]", "bad character range z-a"),
        ("[[:alpha:]]*", "POSIX classes such as [:alpha:] are not supported"),
    ],
)
def test_a_bad_path_glob_names_the_option_and_the_pattern(indexed, pattern, problem):
    root, index_dir = indexed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning from the re module would fail here
        result = invoke("search", "telescope", root, "--index-dir", index_dir, "--path", pattern)
    line = one_line_error(result)
    assert line.startswith(f"explorer: error: --path {pattern!r}: {problem}")
    assert "error: error" not in line


def test_a_bad_path_glob_as_a_process_prints_no_python_warning(indexed):
    root, index_dir = indexed
    done = subprocess.run(
        [*EXPLORER_PROCESS, "search", "telescope", str(root), "--index-dir", str(index_dir)]
        + ["--mode", "keyword", "--path", "[[:alpha:]]*"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert done.returncode == 2
    assert "Warning" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def test_globs_with_classes_still_filter(indexed):
    root, index_dir = indexed
    result = invoke(
        "search",
        "telescope",
        root,
        "--index-dir",
        index_dir,
        "--json",
        "--mode",
        "keyword",
        "--path",
        "[f-h]*/*",
    )
    assert result.exit_code == 0, result.output
    paths = {hit["path"] for hit in json.loads(result.stdout)["results"]}
    assert paths == {"guides/telescope.md"}
    result = invoke(
        "search",
        "telescope",
        root,
        "--index-dir",
        index_dir,
        "--json",
        "--mode",
        "keyword",
        "--path",
        "[!g]*/**",
    )
    assert {hit["path"] for hit in json.loads(result.stdout)["results"]} == {"notes/stars.md"}


def test_the_tui_path_words_share_the_parser(indexed):
    """The TUI passes ``path:`` words as SearchRequest.paths and shows a QueryError's text."""
    root, index_dir = indexed
    index = Index.open_existing(Settings.for_root(root, index_dir), FakeEmbedder())
    try:
        with pytest.raises(PathPatternError) as caught:
            search(index, SearchRequest("telescope", mode="keyword", paths=("[z-a]",)))
    finally:
        index.close()
    assert str(caught.value) == "path filter '[z-a]': bad character range z-a"


# -- ROOT and the index's root --------------------------------------------------------------------
def test_a_root_that_is_not_the_indexed_one_is_refused(indexed, tmp_path):
    root, index_dir = indexed
    other = write_files(tmp_path / "other", {"a.md": "# A\n\ntelescope\n"})
    for args in (
        ("search", "telescope", other),
        ("status", other),
        ("index", other),
        ("related", root / "notes/stars.md", "--root", other),
    ):
        line = one_line_error(invoke(*args, "--index-dir", index_dir))
        assert str(root) in line and str(other) in line, line
    # Nothing was changed: the index still answers for its own root.
    result = invoke("search", "telescope", "--index-dir", index_dir, "--json", "--mode", "keyword")
    assert {hit["path"] for hit in json.loads(result.stdout)["results"]} <= set(CORPUS)


def test_a_moved_folder_may_take_its_index_along(indexed, tmp_path):
    root, index_dir = indexed
    moved = tmp_path / "moved"
    root.rename(moved)
    result = invoke("index", moved, "--index-dir", index_dir)
    assert result.exit_code == 0, result.output
    assert "0 added, 0 updated, 0 removed, 3 unchanged" in result.stdout


# -- deletions are not repairs --------------------------------------------------------------------
def test_a_deleted_file_is_reported_as_removed_not_repaired(indexed):
    root, index_dir = indexed
    (root / "notes/stars.md").unlink()
    result = invoke("index", root, "--index-dir", index_dir)
    assert result.exit_code == 0, result.output
    assert "0 added, 0 updated, 1 removed, 2 unchanged" in result.stdout
    assert "repaired" not in result.stdout
    write_files(root, {"guides/install.md": "# Install\n\nNow with uv instead of pip.\n"})
    result = invoke("index", root, "--index-dir", index_dir)
    assert "1 updated" in result.stdout and "repaired" not in result.stdout


def test_vectors_left_by_an_interrupted_run_are_still_reported_as_repaired(indexed):
    root, index_dir = indexed
    index = Index.open_for_writing(Settings.for_root(root, index_dir), FakeEmbedder())
    try:  # what a run killed between writing vectors and recording their chunks leaves
        vectors = np.eye(2, 64, dtype=np.float32)
        index.vectors.upsert_chunks(["left-1", "left-2"], vectors, ["gone.md", "gone.md"])
    finally:
        index.close()
    result = invoke("index", root, "--index-dir", index_dir)
    assert "repaired: removed 2 vectors left by an interrupted run" in result.stdout


# -- a read-only index directory ------------------------------------------------------------------
def _without_write_override() -> list[str]:
    """A prefix that runs a command as this user but bound by file modes: root normally
    ignores them (CAP_DAC_OVERRIDE), so a read-only test as root would prove nothing."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes would not be enforced")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


def _make_read_only(top: Path) -> None:
    for folder, _dirs, files in os.walk(top):
        for name in files:
            path = Path(folder, name)
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        Path(folder).chmod(0o555)


def _make_writable(top: Path) -> None:
    for folder, _dirs, files in os.walk(top):
        Path(folder).chmod(0o755)
        for name in files:
            Path(folder, name).chmod(0o644)


def _listing(top: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(top)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(top.rglob("*"))
    }


def test_search_and_status_work_on_a_read_only_index_directory(tmp_path):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name)
    index = Index.open_for_writing(settings, FakeEmbedder())
    try:
        Indexer(index).sync()
        index.keywords.set_meta("root", str(root))
    finally:
        index.close()
    before = _listing(index_dir)
    _make_read_only(index_dir)
    prefix = _without_write_override()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    try:
        probe = subprocess.run([*prefix, "touch", str(index_dir / "probe")], capture_output=True)
        assert probe.returncode != 0, "the index directory is still writable: test is void"
        for args in (
            ["status", str(root), "--json"],
            ["search", "telescope", str(root), "--mode", "keyword", "--json"],
            ["search", "telescope", str(root), "--mode", "keyword", "--path", "guides/"],
        ):
            done = subprocess.run(
                [*prefix, sys.executable, "-m", "explorer", *args, "--index-dir", str(index_dir)]
                + ["--model", FakeEmbedder.name],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            assert done.returncode == 0, (args, done.stderr)
            assert "readonly" not in done.stderr and "unable to open" not in done.stderr
            if args[0] == "status":
                data = json.loads(done.stdout)
                assert data["files"]["indexed"] == 3
                assert data["vector_store"]["available"], data["vector_store"]
                assert data["vectors"] == data["chunks"] > 0
            else:
                assert "telescope" in done.stdout.lower()
    finally:
        _make_writable(index_dir)
    assert _listing(index_dir) == before, "a read-only command changed the index directory"
    assert not list(tmp_path.glob("explorer-vectors-*")), "the private copy was left behind"
