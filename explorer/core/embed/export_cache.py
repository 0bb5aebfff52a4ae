"""Where an index keeps its exported query encoder, and whether that export fits the model.

The export lives in one folder inside the index directory (:data:`EXPORT_DIR_NAME`): the ONNX
graph, its weights, the tokenizer as sentence-transformers configured it, and a manifest. The
manifest names the model and fingerprints its files (:class:`ModelFiles`), so an export made from
another model (or another version of the same one) is never used: a mismatch means "no export".
A copy may also be kept outside any index, for every index of the user (:func:`copy_export`):
a new index takes it rather than loading the model to export it again.

Only the standard library (and the private-file helpers) is imported here: a query checks the
cache before anything heavy loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from explorer.core.private_files import PRIVATE_DIR_MODE
from explorer.core.state_files import UnreadableFile, read_bounded, replace_file

EXPORT_DIR_NAME = "query-encoder"
MANIFEST_NAME = "manifest.json"
GRAPH_NAME = "model.onnx"
WEIGHTS_NAME = "model.onnx.data"
TOKENIZER_NAME = "tokenizer.json"
FORMAT_VERSION = 1

_SAMPLES = 16  # blocks read from each large file for its fingerprint
_BLOCK = 4096
_SMALL_FILE = 1 << 20  # files up to this size are hashed whole


class ExportStatus(Enum):
    """What the last export attempt for a model gave."""

    READY = "ready"
    UNSUPPORTED = "unsupported"  # the export failed or did not match: queries use the model itself


@dataclass(frozen=True)
class TokenizerSettings:
    """How sentence-transformers calls the tokenizer for this model (right-sized for ONNX)."""

    max_length: int
    truncation_side: str = "right"
    padding_side: str = "right"
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"
    prompt: str = ""
    """The model's default prompt, put before every text (sentence-transformers does)."""


@dataclass(frozen=True)
class ExportManifest:
    """What an export folder holds and which model it was made from."""

    model: str
    fingerprint: str
    """:attr:`ModelFiles.fingerprint` of the model it was made from."""
    stamp: str
    """:attr:`ModelFiles.stamp` of the model it was made from."""
    status: ExportStatus
    runtime_version: str = ""
    """The onnxruntime that optimized the graph; another version exports anew."""
    inputs: list[str] = field(default_factory=list)
    dimension: int = 0
    tokenizer: TokenizerSettings | None = None
    max_abs_diff: float = 0.0
    """The largest difference from sentence-transformers measured when the export was made."""
    reason: str = ""
    format: int = FORMAT_VERSION

    def to_json(self) -> str:
        data = asdict(self)
        data["status"] = self.status.value
        return json.dumps(data, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ExportManifest:
        data = json.loads(text)
        tokenizer = data.pop("tokenizer", None)
        data["status"] = ExportStatus(data["status"])
        settings = TokenizerSettings(**tokenizer) if tokenizer else None
        return cls(tokenizer=settings, **data)


class ModelFiles:
    """A model's name and folder, and two ways to tell whether an export was made from it.

    The *stamp* is cheap (about a millisecond): each file's name, size and modification time,
    and for a large file (the weights) :data:`_SAMPLES` blocks spread over it. The *fingerprint*
    hashes every byte (a few hundred milliseconds for 100 MB): it is computed when exporting,
    and at query time only when the stamp differs, so a model reinstalled or copied unchanged
    keeps its export and a changed one never uses it.
    """

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.folder = folder
        self._stamp: str | None = None
        self._fingerprint: str | None = None

    @property
    def stamp(self) -> str:
        if self._stamp is None:
            self._stamp = self._digest(whole=False)
        return self._stamp

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = self._digest(whole=True)
        return self._fingerprint

    def made(self, manifest: ExportManifest) -> bool:
        """Whether ``manifest`` describes an export (or a failed one) of this model as it is."""
        if manifest.format != FORMAT_VERSION or manifest.model != self.name:
            return False
        return manifest.stamp == self.stamp or manifest.fingerprint == self.fingerprint

    def _files(self) -> list[tuple[str, Path]]:
        files = []
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder)
            if not any(part.startswith(".") for part in relative.parts) and path.is_file():
                files.append((relative.as_posix(), path))
        return files

    def _digest(self, whole: bool) -> str:
        digest = hashlib.sha256()
        for relative, path in self._files():
            status = path.stat()
            stamp = "" if whole else f"{status.st_mtime_ns}"
            digest.update(f"{relative}\0{status.st_size}\0{stamp}\0".encode())
            with path.open("rb") as handle:
                if whole or status.st_size <= _SMALL_FILE:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                    continue
                step = (status.st_size - _BLOCK) // (_SAMPLES + 1)
                for i in range(_SAMPLES + 2):
                    handle.seek(min(step * i, status.st_size - _BLOCK))
                    digest.update(handle.read(_BLOCK))
        return digest.hexdigest()


def read_manifest(export_dir: Path) -> ExportManifest | None:
    """The manifest in ``export_dir``, or None when there is none or it cannot be read."""
    try:  # never a pipe's wait or a huge file's read; nested JSON is one more unreadable kind
        data = read_bounded(export_dir / MANIFEST_NAME)
        return None if data is None else ExportManifest.from_json(data.decode("utf-8"))
    except (UnreadableFile, OSError, ValueError, TypeError, KeyError, RecursionError):
        return None


def write_manifest(export_dir: Path, manifest: ExportManifest) -> None:
    """Replace the manifest of an export in place (a reader sees the old one or the new one)."""
    replace_file(export_dir / MANIFEST_NAME, manifest.to_json())


def is_writable(export_dir: Path) -> bool:
    """Whether an export can be published at ``export_dir`` (its parent must be writable)."""
    parent = export_dir.parent
    return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)


def staging_dir(export_dir: Path) -> Path:
    """A new empty folder beside ``export_dir`` to write an export into before publishing it."""
    staged = export_dir.with_name(f".{export_dir.name}-new-{uuid.uuid4().hex}")
    staged.mkdir(mode=PRIVATE_DIR_MODE)  # private, like the index's other files
    return staged


def copy_export(source: Path, target: Path) -> None:
    """Publish at ``target`` a copy of the export in ``source``, its files hard-linked where
    the two folders share a file system (no second copy on disk; an export's files are never
    changed in place, only replaced whole), else copied. Raises OSError when ``source`` is
    missing or replaced during the copy (a copy of one export, never a mix of two) or ``target``
    cannot be written."""
    target.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    before = source.stat()
    staged = staging_dir(target)
    try:
        for path in sorted(source.iterdir()):
            if path.is_file():
                try:
                    os.link(path, staged / path.name)
                except OSError:
                    shutil.copyfile(path, staged / path.name)
        after = source.stat()
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise FileNotFoundError(f"{source} was replaced while it was copied")
        publish(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


def publish(staged: Path, export_dir: Path) -> None:
    """Put a finished export in place of whatever ``export_dir`` held, in two renames.

    A reader that opened the old files keeps them (they are unlinked, not overwritten); one that
    looks between the renames finds no export and falls back for that query. Concurrent
    exporters each publish a whole folder: the last one wins.
    """
    retired = export_dir.with_name(f".{export_dir.name}-old-{uuid.uuid4().hex}")
    try:
        export_dir.rename(retired)
    except FileNotFoundError:
        pass  # the first export
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    try:
        staged.rename(export_dir)
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(retired, ignore_errors=True)
