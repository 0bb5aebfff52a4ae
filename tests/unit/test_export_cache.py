"""The query encoder's cache: which export speaks for which model, and publishing one safely."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.core.embed.export_cache import (
    EXPORT_DIR_NAME,
    MANIFEST_NAME,
    ExportManifest,
    ExportStatus,
    ModelFiles,
    TokenizerSettings,
    copy_export,
    publish,
    read_manifest,
    staging_dir,
)


def _model(folder: Path, weights: bytes) -> Path:
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def _weights(size: int = 5_000_000) -> bytearray:
    return bytearray((i * 7919) % 251 for i in range(size))


def _made_from(files: ModelFiles) -> ExportManifest:
    return _manifest(model=files.name, fingerprint=files.fingerprint, stamp=files.stamp)


def test_an_export_speaks_for_an_unchanged_model_even_when_copied_or_touched(
    tmp_path: Path,
) -> None:
    weights = bytes(_weights())
    manifest = _made_from(ModelFiles("m", _model(tmp_path / "a", weights)))
    assert ModelFiles("m", tmp_path / "a").made(manifest)
    os.utime(tmp_path / "a" / "model.safetensors", (1_000_000, 1_000_000))
    copy = ModelFiles("m", tmp_path / "a")  # other times, same bytes
    assert copy.stamp != manifest.stamp and copy.made(manifest)


def test_changed_weights_anywhere_make_the_export_stale(tmp_path: Path) -> None:
    weights = _weights()
    folder = _model(tmp_path / "m", bytes(weights))
    manifest = _made_from(ModelFiles("m", folder))
    for offset in (10, 123_457, len(weights) // 2 + 3, len(weights) - 10):
        changed = bytearray(weights)
        changed[offset] ^= 0xFF
        (folder / "model.safetensors").write_bytes(changed)
        assert not ModelFiles("m", folder).made(manifest), offset


def test_changed_configs_make_the_export_stale_and_hidden_files_do_not(tmp_path: Path) -> None:
    folder = _model(tmp_path / "m", b"weights")
    manifest = _made_from(ModelFiles("m", folder))
    (folder / ".gitattributes").write_text("*.bin filter=lfs")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "lock").write_text("x")
    assert ModelFiles("m", folder).made(manifest)
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert not ModelFiles("m", folder).made(manifest)


def test_an_export_of_another_model_name_never_fits(tmp_path: Path) -> None:
    folder = _model(tmp_path / "m", b"weights")
    manifest = _made_from(ModelFiles("m", folder))
    assert not ModelFiles("other/model", folder).made(manifest)


def _manifest(**changes: object) -> ExportManifest:
    fields: dict = {
        "model": "all-MiniLM-L6-v2",
        "fingerprint": "abc",
        "stamp": "def",
        "status": ExportStatus.READY,
        "runtime_version": "1.32.0",
        "inputs": ["input_ids", "attention_mask"],
        "dimension": 384,
        "tokenizer": TokenizerSettings(max_length=256, prompt="query: "),
    }
    return ExportManifest(**{**fields, **changes})


def test_manifest_round_trips_through_json() -> None:
    manifest = _manifest(max_abs_diff=2e-7)
    assert ExportManifest.from_json(manifest.to_json()) == manifest


def test_unreadable_manifests_read_as_none(tmp_path: Path) -> None:
    assert read_manifest(tmp_path / "missing") is None
    (tmp_path / MANIFEST_NAME).write_text("{not json")
    assert read_manifest(tmp_path) is None
    (tmp_path / MANIFEST_NAME).write_text('{"model": "m"}')
    assert read_manifest(tmp_path) is None


def test_publish_replaces_the_old_export_whole(tmp_path: Path) -> None:
    export_dir = tmp_path / "query-encoder"
    first = staging_dir(export_dir)
    (first / MANIFEST_NAME).write_text(_manifest(fingerprint="one").to_json())
    (first / "stale.bin").write_text("old weights")
    publish(first, export_dir)
    second = staging_dir(export_dir)
    (second / MANIFEST_NAME).write_text(_manifest(fingerprint="two").to_json())
    publish(second, export_dir)
    manifest = read_manifest(export_dir)
    assert manifest is not None and manifest.fingerprint == "two"
    assert not (export_dir / "stale.bin").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["query-encoder"]  # nothing left over


def test_a_failed_publish_leaves_no_staging_folder(tmp_path: Path) -> None:
    export_dir = tmp_path / "query-encoder"
    staged = staging_dir(export_dir)
    (staged / MANIFEST_NAME).write_text("{}")
    with pytest.raises(OSError):
        publish(staged, tmp_path / "no-such-folder" / "query-encoder")
    assert not staged.exists()


def test_a_touched_model_keeps_its_export_and_the_new_stamp_is_remembered(
    tmp_path: Path,
) -> None:
    """Reinstalling a model changes its files' times, not its bytes: the export still fits,
    and the manifest learns the new stamp so the next process need not hash every byte."""
    from explorer.core.embed.embedder import SentenceTransformerEmbedder

    folder = _model(tmp_path / "model", bytes(_weights()))
    export_dir = tmp_path / "index" / EXPORT_DIR_NAME
    export_dir.mkdir(parents=True)
    files = ModelFiles(str(folder), folder)
    verdict = _made_from(files)
    verdict = replace(verdict, status=ExportStatus.UNSUPPORTED)
    (export_dir / MANIFEST_NAME).write_text(verdict.to_json())
    os.utime(folder / "model.safetensors", (1_000_000, 1_000_000))

    embedder = SentenceTransformerEmbedder(str(folder))
    embedder.keep_query_encoder_in(export_dir)
    assert not embedder.uses_export  # the recorded verdict holds: no export attempted
    kept = read_manifest(export_dir)
    assert kept is not None and kept.status is ExportStatus.UNSUPPORTED
    assert kept.stamp == ModelFiles(str(folder), folder).stamp != verdict.stamp
    assert kept.fingerprint == verdict.fingerprint


def _published(export_dir: Path, manifest: ExportManifest, weights: bytes = b"weights") -> Path:
    export_dir.parent.mkdir(parents=True, exist_ok=True)
    staged = staging_dir(export_dir)
    (staged / MANIFEST_NAME).write_text(manifest.to_json())
    (staged / "model.onnx.data").write_bytes(weights)
    publish(staged, export_dir)
    return export_dir


def test_a_copied_export_shares_the_files_on_disk_and_is_published_whole(tmp_path: Path) -> None:
    shared = _published(tmp_path / "cache" / "m", _manifest())
    target = tmp_path / "index" / EXPORT_DIR_NAME
    copy_export(shared, target)
    assert read_manifest(target) == _manifest()
    for name in (MANIFEST_NAME, "model.onnx.data"):  # linked, not a second copy
        assert (target / name).stat().st_ino == (shared / name).stat().st_ino
    assert sorted(p.name for p in target.parent.iterdir()) == [EXPORT_DIR_NAME]


def test_an_export_replaced_while_it_is_copied_is_not_taken(tmp_path, monkeypatch) -> None:
    """Files of two exports are never mixed: an exporter that publishes a new one meanwhile
    leaves the copy unmade (and no folder behind)."""
    shared = _published(tmp_path / "cache" / "m", _manifest(fingerprint="one"), b"one")
    target = tmp_path / "index" / EXPORT_DIR_NAME
    real_link = os.link

    def link_then_replace(source, destination):
        real_link(source, destination)
        if not (shared.parent / "replaced").exists():
            (shared.parent / "replaced").touch()
            _published(shared, _manifest(fingerprint="two"), b"two")

    monkeypatch.setattr(os, "link", link_then_replace)
    with pytest.raises(OSError):
        copy_export(shared, target)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def _embedder_of(folder: Path, index_dir: Path, shared: Path):
    from explorer.core.embed.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(str(folder))
    index_dir.mkdir(parents=True, exist_ok=True)
    embedder.keep_query_encoder_in(index_dir / EXPORT_DIR_NAME, shared)
    return embedder


def test_a_new_index_takes_only_a_shared_export_of_its_model_as_it_is(tmp_path: Path) -> None:
    """The shared export is taken when it is ready and was made from these very model files by
    this onnxruntime; another model's, a stale one, a failed one or another runtime's is not."""
    from explorer.core.embed.onnx_encoder import runtime_version

    folder = _model(tmp_path / "model", bytes(_weights()))
    files = ModelFiles(str(folder), folder)
    fits = replace(_made_from(files), runtime_version=runtime_version())
    refused = {
        "another model": replace(fits, model="other-model"),
        "stale": replace(fits, stamp="old", fingerprint="old"),
        "failed": replace(fits, status=ExportStatus.UNSUPPORTED),
        "another runtime": replace(fits, runtime_version="0.0.1"),
    }
    for why, manifest in refused.items():
        shared = _published(tmp_path / why / "shared", manifest)
        embedder = _embedder_of(folder, tmp_path / why / "index", shared)
        assert not embedder._took_shared_export(), why
        assert not (tmp_path / why / "index" / EXPORT_DIR_NAME).exists(), why
    shared = _published(tmp_path / "shared", fits)
    embedder = _embedder_of(folder, tmp_path / "index", shared)
    assert embedder._took_shared_export()
    assert read_manifest(tmp_path / "index" / EXPORT_DIR_NAME) == fits
    assert embedder._model is None  # nothing loaded to take it
