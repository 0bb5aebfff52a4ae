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
