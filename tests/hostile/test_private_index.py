"""An index holds the full text of every file it indexed: other users of the machine must not
read it. Every file and folder explorer makes for an index has no group or other permission
bit from birth (checked here by walking them, with the usual umask 022 in force), the default
location included; an index made with open modes is made private by the next writer, and
``status`` says which of the two it is."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.embed.embedder import SentenceTransformerEmbedder
from explorer.core.embed.export_cache import (
    EXPORT_DIR_NAME,
    MANIFEST_NAME,
    ExportStatus,
    publish,
    staging_dir,
)
from explorer.core.settings import DEFAULT_MODEL
from explorer.core.store.damaged_store import DAMAGED_PREFIX
from explorer.core.store.index import CHROMA_DIR_NAME, DATABASE_NAME, LOCK_NAME, Index
from explorer.settings.config import Settings
from explorer.settings.locations import cache_dir, default_index_dir, query_encoder_cache
from tests.conftest import EXPLORER_PROCESS, write_files
from tests.fakes import FakeEmbedder
from tests.hostile.damage import Damage, damage_file

CORPUS = {
    f"notes/note{n}.md": f"# Note {n}\n\nTelescope mirrors, lens w{n}x.\n\n## Sky\n\nStars h{n}y.\n"
    for n in range(4)
}


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask most users have (022): files 0644 and folders 0755 unless made otherwise."""
    saved = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(saved)


@pytest.fixture
def cli(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    runner = CliRunner()

    def invoke(*args: object):
        result = runner.invoke(main, [str(a) for a in args], catch_exceptions=True)
        assert result.exit_code == 0, (result.output, result.exception)
        return result

    return invoke


def open_to_others(top: Path) -> list[str]:
    """Every file and folder under ``top`` (itself included) with a group or other bit."""
    found = []
    for folder, dirnames, filenames in os.walk(top):
        for path in [Path(folder), *(Path(folder, n) for n in (*dirnames, *filenames))]:
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                found.append(f"{path} {stat.S_IMODE(mode):o}")
    return sorted(set(found))


def walked(top: Path) -> list[Path]:
    return [Path(folder, name) for folder, _dirs, files in os.walk(top) for name in files]


def test_a_fresh_index_in_the_default_location_is_private_from_birth(tmp_path, cli):
    """Nothing under the data directory (which explorer creates) can be read by another user:
    the keyword index, Chroma's database and segment files, after writes and reads alike."""
    data_dir = Path(os.environ["EXPLORER_DATA_DIR"])
    assert not data_dir.exists()
    root = write_files(tmp_path / "root", CORPUS)
    cli("index", root)
    index_dir = default_index_dir(root)
    files = walked(data_dir)
    assert index_dir / DATABASE_NAME in files
    assert any(p.parent.parent == index_dir / CHROMA_DIR_NAME for p in files), "no segment file"
    assert open_to_others(data_dir) == []
    # readers and later writers create files too (SQLite's -wal and -shm, new segments)
    write_files(root, {"notes/late.md": "# Late\n\nComets over the lake.\n"})
    cli("search", "telescope", root)
    cli("status", root)
    cli("related", root / "notes/note1.md")
    cli("index", root)
    cli("check-refs", root)
    assert open_to_others(data_dir) == []
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700


def test_the_write_lock_and_a_given_index_dir_and_its_new_parents_are_private(tmp_path):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "new" / "parents" / "index"
    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name)
    index = Index.open_for_writing(settings, FakeEmbedder())
    try:
        assert stat.S_IMODE((index_dir / LOCK_NAME).stat().st_mode) == 0o600
        assert open_to_others(tmp_path / "new") == []
    finally:
        index.close()


def test_an_open_index_is_reported_by_status_and_made_private_by_the_next_writer(tmp_path, cli):
    root = write_files(tmp_path / "root", CORPUS)
    cli("index", root)
    data_dir = Path(os.environ["EXPLORER_DATA_DIR"])
    for path in [data_dir, *(Path(f) for f, _d, _f in os.walk(data_dir))]:
        path.chmod(0o755)  # the modes an older explorer left
    for path in walked(data_dir):
        path.chmod(0o644)
    text = cli("status", root).stdout
    opened = open_to_others(data_dir)  # a reader's -wal and -shm take the database's mode
    [line] = [x for x in text.splitlines() if x.startswith("permissions")]
    assert f"other users can read {len(opened)} files and folders" in line
    assert f"{data_dir} 0755, " in line and f"run `explorer index {root}`" in line
    data = json.loads(cli("status", root, "--json").stdout)["permissions"]
    assert data["private"] is False and data["open"] == len(opened)
    assert len(data["examples"]) == 5 and any(x.endswith("/index.sqlite 644") for x in opened)
    assert open_to_others(data_dir) == opened, "status only reads"

    result = cli("index", root)
    assert f"permissions: made {len(opened)} files and folders of the index private" in (
        result.stdout
    )
    assert open_to_others(data_dir) == []
    text = cli("status", root).stdout
    assert "permissions private (folders 0700, files 0600); tightened " in text
    data = json.loads(cli("status", root, "--json").stdout)["permissions"]
    assert data["private"] is True and f"{len(opened)} files and folders" in data["tightened"]


def test_damaged_files_set_aside_stay_private(tmp_path, cli):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    cli("index", root, "--index-dir", index_dir)
    damage_file(index_dir / DATABASE_NAME, Damage.GARBAGE)
    damage_file(index_dir / CHROMA_DIR_NAME / "chroma.sqlite3", Damage.GARBAGE)
    cli("index", root, "--index-dir", index_dir)
    damaged = sorted(index_dir.glob(f"{DAMAGED_PREFIX}*"))
    assert len(damaged) == 2
    assert open_to_others(index_dir) == []


def test_a_rebuild_builds_its_new_index_privately(tmp_path, cli, monkeypatch):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    cli("index", root, "--index-dir", index_dir)
    import explorer.core.indexing.rebuild as rebuild_module

    real_sync = rebuild_module.Indexer.sync
    seen: list[list[str]] = []

    def sync_and_look(self, *args, **kwargs):
        report = real_sync(self, *args, **kwargs)
        aside = index_dir / rebuild_module.REBUILD_DIR_NAME
        assert (aside / DATABASE_NAME).exists() and (aside / CHROMA_DIR_NAME).exists()
        seen.append(open_to_others(aside))
        return report

    monkeypatch.setattr(rebuild_module.Indexer, "sync", sync_and_look)
    cli("index", root, "--index-dir", index_dir, "--rebuild")
    assert seen == [[]]
    assert open_to_others(index_dir) == []


def test_the_query_encoder_export_is_written_privately(tmp_path, monkeypatch):
    """The exporter (torch and onnx in real life) writes with the process's umask: files it
    creates while exporting, and the folder it publishes, are private."""
    index_dir = tmp_path / "index"
    index_dir.mkdir(mode=0o700)

    def export(model, files, export_dir):
        staged = staging_dir(export_dir)
        (staged / "model.onnx").write_bytes(b"graph")  # as a library would: plain open()
        (staged / "tokenizer.json").write_text("{}")
        publish(staged, export_dir)
        return type("Manifest", (), {"status": ExportStatus.UNSUPPORTED, "reason": "test"})()

    monkeypatch.setattr("explorer.core.embed.onnx_export.export_query_encoder", export)
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    embedder.keep_query_encoder_in(index_dir / EXPORT_DIR_NAME)
    embedder._export(model=None)  # what loading the model does first
    assert (index_dir / EXPORT_DIR_NAME / "model.onnx").exists()
    assert open_to_others(index_dir) == []
    assert os.umask(0o022) == 0o022, "the umask is the user's again"


@pytest.mark.e2e
def test_an_index_made_with_the_real_model_is_private(tmp_path, monkeypatch):
    """The real model: torch and onnx write the query encoder's export, Chroma its segments,
    each with its own code, in a process whose umask is the usual 022."""
    root = write_files(tmp_path / "root", dict(list(CORPUS.items())[:2]))
    monkeypatch.setenv("EXPLORER_DATA_DIR", str(tmp_path / "data"))
    env = {**os.environ, "EXPLORER_NO_DAEMON": "1"}
    for args in (("index", root), ("search", "telescope lens", root), ("status", root)):
        done = subprocess.run(
            [*EXPLORER_PROCESS, *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            preexec_fn=lambda: os.umask(0o022),
        )
        assert done.returncode == 0, (args, done.stderr)
    assert "permissions private (folders 0700, files 0600)" in done.stdout
    export = default_index_dir(root) / EXPORT_DIR_NAME
    assert any(path.suffix == ".onnx" for path in walked(export)), "no query encoder exported"
    assert open_to_others(tmp_path / "data") == []
    # kept for the user's next index too: the same files (linked), as private
    kept = query_encoder_cache(DEFAULT_MODEL) / MANIFEST_NAME
    assert kept.stat().st_ino == (export / MANIFEST_NAME).stat().st_ino
    assert open_to_others(cache_dir()) == []
