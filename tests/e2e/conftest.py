"""End-to-end fixtures: sample_docs indexed with the real model once per run, copied per module.

Embedding sample_docs' ~590 chunks with the real model takes some 20 s, and several modules need
the very same index (an unmodified copy of sample_docs, default settings, the local Chroma
store). So each such index is built once per test run, for all pytest-xdist workers
(:func:`tests.conftest.built_once`), by ``explorer index`` as a process, the way a user builds
it, and every module gets a private copy of the folder and its index: copying takes well under
a second. The copies keep the files' mtimes, so a sync of a copy finds nothing
to embed (``test_second_index_run_embeds_nothing_and_says_so`` checks it), and the copied index
records its new folder as its root, as if it had been built there. A module that edits files or
the index edits its own copy; the built originals are never opened again after their build.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from explorer.core.store.index_files import ROOT_META
from explorer.core.store.keywords import KeywordIndex
from explorer.settings.locations import DATA_DIR_ENV, default_index_dir
from tests.conftest import built_once, run_explorer

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "sample_docs"
SPLIT = {
    "handbook": ("guides", "api", "README.md", "CHANGELOG.txt", "CONTRIBUTING.rst"),
    "ops": ("runbooks", "notes", "design", "src"),
}
"""sample_docs split in two folders: its guides, API pages and top-level files; its runbooks,
notes, design records and source. Together they hold the whole of it, so sample_docs itself is
the folder holding both (:func:`built_split_sample_docs`)."""


def in_split(path: str) -> str:
    """A path relative to sample_docs as the two folders name it: ``COLLECTION/PATH``."""
    top = path.split("/", 1)[0]
    return next(f"{name}/{path}" for name, parts in SPLIT.items() if top in parts)


VECTOR_LOCATION_META = "vector_location"


def build_env(base: Path) -> dict[str, str]:
    """The environment of a build: its own data and config folders, the bundled model offline,
    the local Chroma store."""
    env = {
        **os.environ,
        "EXPLORER_DATA_DIR": str(base / "data"),
        "EXPLORER_CONFIG_DIR": str(base / "config"),
        "EXPLORER_STATE_DIR": str(base / "state"),
        "EXPLORER_CACHE_DIR": str(base / "cache"),
        "HF_HUB_OFFLINE": "1",
    }
    for name in ("EXPLORER_MODEL", "EXPLORER_CHROMA_URL", "EXPLORER_INDEX_DIR"):
        env.pop(name, None)
    return env


def index_dir_under(data_dir: Path, root: Path) -> Path:
    """Where ``explorer`` keeps the index of ``root`` by default when its data folder is
    ``data_dir`` (the path depends on the environment, so it is asked under that one)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_DIR_ENV, str(data_dir))
        return default_index_dir(root)


@dataclass(frozen=True)
class BuiltIndex:
    """A folder and the index ``explorer index`` built of it; never changed after the build."""

    root: Path
    index_dir: Path

    def copy(self, root: Path, index_dir: Path) -> tuple[Path, Path]:
        """A private copy of the folder at ``root`` and of its index at ``index_dir``, the
        index recording ``root`` as its folder. Returns (root, index_dir)."""
        shutil.copytree(self.root, root, symlinks=True)  # copy2: mtimes kept
        for folder in reversed([p for p in index_dir.parents if not p.exists()]):
            folder.mkdir(mode=0o700)  # private from birth, as explorer makes an index's parents
        shutil.copytree(self.index_dir, index_dir, symlinks=True)
        keywords = KeywordIndex(index_dir / "index.sqlite")
        try:
            keywords.set_meta(ROOT_META, str(root.resolve()))
            if keywords.get_meta(VECTOR_LOCATION_META) == str(self.index_dir / "chroma"):
                keywords.set_meta(VECTOR_LOCATION_META, str(index_dir.resolve() / "chroma"))
        finally:
            keywords.close()
        return root, index_dir


@dataclass(frozen=True)
class BuiltSampleDocs:
    """A copy of the whole of sample_docs indexed by ``explorer index ROOT --json``."""

    index: BuiltIndex
    report: dict
    """The build's ``--json`` report."""


@pytest.fixture(scope="session")
def built_sample_docs(tmp_path_factory) -> BuiltSampleDocs:
    """sample_docs indexed with the real model and the local store, once per test run. Use
    :meth:`BuiltIndex.copy` of its ``index``; never change the original."""

    def build(base: Path) -> dict:
        shutil.copytree(SAMPLE_DOCS, base / "docs")
        done = run_explorer(
            "index", base / "docs", "--index-dir", base / "index", "--json", env=build_env(base)
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    base, report = built_once(tmp_path_factory, "built-sample-docs-real", build)
    return BuiltSampleDocs(BuiltIndex(base / "docs", (base / "index").resolve()), report)


@dataclass(frozen=True)
class BuiltSplitSampleDocs:
    """sample_docs split in two folders (:data:`SPLIT`), both indexed by one
    ``explorer index HANDBOOK OPS --json``, and the folder holding both: sample_docs itself,
    indexed alone (the session's :func:`built_sample_docs`). A path ``P`` of the union is
    ``in_split(P)`` in the two."""

    handbook: BuiltIndex
    ops: BuiltIndex
    union: BuiltIndex
    report: dict
    """The ``--json`` report of indexing the two folders together."""


@pytest.fixture(scope="session")
def built_split_sample_docs(request, tmp_path_factory) -> BuiltSplitSampleDocs:
    """The two folders indexed with the real model, once per test run, each index in its
    default place under the build's data folder, and their union. Use :meth:`BuiltIndex.copy`.

    The union is the session's build of sample_docs: the two folders hold all of it, so a
    folder holding copies of both would be sample_docs again and its build the same work."""
    assert sorted(p.name for p in SAMPLE_DOCS.iterdir()) == sorted(
        part for parts in SPLIT.values() for part in parts
    ), "every entry of sample_docs goes to one of the two folders"

    def build(base: Path) -> dict:
        for name, parts in SPLIT.items():
            for part in parts:
                source, target = SAMPLE_DOCS / part, base / "apart" / name / part
                if source.is_dir():
                    shutil.copytree(source, target)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target)
        handbook, ops = base / "apart" / "handbook", base / "apart" / "ops"
        together = run_explorer("index", handbook, ops, "--json", env=build_env(base), check=True)
        return json.loads(together.stdout)

    # Built before the union is asked for: under pytest-xdist, one worker builds these two while
    # the other builds sample_docs.
    base, report = built_once(tmp_path_factory, "built-split-sample-docs-real", build)
    union = request.getfixturevalue("built_sample_docs").index

    def built(root: Path) -> BuiltIndex:
        index_dir = index_dir_under(base / "data", root)
        assert (index_dir / "index.sqlite").is_file(), f"no index of {root} at {index_dir}"
        return BuiltIndex(root, index_dir)

    handbook, ops = base / "apart" / "handbook", base / "apart" / "ops"
    return BuiltSplitSampleDocs(built(handbook), built(ops), union, report)
