"""Consistent snapshots of a Tern data directory.

A snapshot is a ``.tar.zst`` file with the database copy (made with SQLite's online backup
API), the archive blobs written since the last full snapshot, the encrypted secrets and a
``MANIFEST.json``. See ``guides/backups.md`` for the operator's view and
``runbooks/restore-from-backup.md`` for restoring.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator

log = logging.getLogger("tern.backup")

MANIFEST_NAME = "MANIFEST.json"
PAGES_PER_STEP = 256
MAX_COPY_RESTARTS = 50


class BackupError(RuntimeError):
    """A snapshot could not be created or verified."""


class ChainError(BackupError):
    """An incremental snapshot's parent is missing (TERN-E1072)."""


@dataclass
class Manifest:
    name: str
    kind: str                      # "full" or "incremental"
    parent: str | None
    created_at: str
    tern_version: str
    schema_version: int
    files: dict[str, str] = field(default_factory=dict)   # path -> sha256
    label: str | None = None

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> "Manifest":
        return cls(**json.loads(raw))


def snapshot_name(now: datetime | None = None, label: str | None = None) -> str:
    """``tern-YYYYMMDD-HHMM.tar.zst`` in UTC, or ``<label>.tar.zst`` for labelled snapshots."""
    if label:
        return f"{label}.tar.zst"
    now = now or datetime.now(timezone.utc)
    return now.strftime("tern-%Y%m%d-%H%M.tar.zst")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def copy_database(src: Path, dest: Path) -> int:
    """Copy a live database with the online backup API; return the number of restarts.

    ``sqlite3.Connection.backup`` copies ``PAGES_PER_STEP`` pages at a time and starts over
    when another connection writes to the source in between. A constantly busy database can
    therefore keep it from finishing; we give up after ``MAX_COPY_RESTARTS``.
    """
    restarts = 0
    last_remaining = None

    def progress(status: int, remaining: int, total: int) -> None:
        nonlocal restarts, last_remaining
        if last_remaining is not None and remaining > last_remaining:
            restarts += 1
            if restarts > MAX_COPY_RESTARTS:
                raise BackupError(f"online copy restarted {MAX_COPY_RESTARTS} times, giving up")
        last_remaining = remaining

    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    target = sqlite3.connect(dest)
    try:
        source.backup(target, pages=PAGES_PER_STEP, progress=progress)
    finally:
        target.close()
        source.close()
    return restarts


def blobs_since(archive_dir: Path, since: datetime | None) -> Iterator[Path]:
    """Archive blobs modified after ``since`` (all of them for a full snapshot).

    Blobs are immutable and content-addressed, so modification time is a reliable
    "created after" marker.
    """
    cutoff = since.timestamp() if since else 0.0
    for path in archive_dir.rglob("*.html.zst"):
        if path.parent.name == "tmp":
            continue
        if path.stat().st_mtime > cutoff:
            yield path


def create_snapshot(data_dir: Path, backup_dir: Path, *, full: bool, parent: Manifest | None,
                    tern_version: str, schema_version: int, encrypt_secrets,
                    label: str | None = None) -> Path:
    """Write one snapshot and return its path.

    ``encrypt_secrets`` is a callable taking the secrets directory and returning encrypted
    bytes; it raises if no passphrase is configured.
    """
    if not full and parent is None:
        raise ChainError("incremental snapshot requested but no full parent exists")
    name = snapshot_name(label=label)
    final = backup_dir / name
    partial = backup_dir / (name + ".partial")
    since = None if full else datetime.fromisoformat(parent.created_at)

    with tempfile.TemporaryDirectory(dir=backup_dir) as tmp:
        tmpdir = Path(tmp)
        restarts = copy_database(data_dir / "tern.db", tmpdir / "tern.db")
        if restarts:
            log.info("database copy restarted %d times", restarts)
        (tmpdir / "secrets.enc").write_bytes(encrypt_secrets(data_dir / "secrets"))

        manifest = Manifest(
            name=name,
            kind="full" if full else "incremental",
            parent=None if full else parent.name,
            created_at=datetime.now(timezone.utc).isoformat(),
            tern_version=tern_version,
            schema_version=schema_version,
            label=label,
        )
        manifest.files["tern.db"] = sha256_file(tmpdir / "tern.db")
        manifest.files["secrets.enc"] = sha256_file(tmpdir / "secrets.enc")

        blobs = list(blobs_since(data_dir / "archive", since))
        for blob in blobs:
            # The blob's name is already its sha256; no need to hash it again.
            manifest.files[f"archive/{blob.relative_to(data_dir / 'archive')}"] = blob.name.split(".")[0]
        (tmpdir / MANIFEST_NAME).write_bytes(manifest.to_json())

        with tarfile.open(partial, "w") as tar:   # zstd is applied by the stream wrapper
            tar.add(tmpdir / MANIFEST_NAME, arcname=MANIFEST_NAME)
            tar.add(tmpdir / "tern.db", arcname="tern.db")
            tar.add(tmpdir / "secrets.enc", arcname="secrets.enc")
            for blob in blobs:
                tar.add(blob, arcname=f"archive/{blob.relative_to(data_dir / 'archive')}")
    partial.rename(final)
    log.info("snapshot %s written (%s, %d blobs)", name, manifest.kind, len(blobs))
    return final


def resolve_chain(name: str, manifests: dict[str, Manifest]) -> list[Manifest]:
    """Return the snapshots needed to restore ``name``, oldest (the full one) first."""
    chain: list[Manifest] = []
    current = manifests.get(name)
    if current is None:
        raise ChainError(f"unknown snapshot {name}")
    while current is not None:
        chain.append(current)
        if current.kind == "full":
            return list(reversed(chain))
        parent = manifests.get(current.parent or "")
        if parent is None:
            raise ChainError(f"TERN-E1072 backup chain incomplete: {current.parent} is missing")
        current = parent
    raise ChainError("chain ended without a full snapshot")


def select_for_pruning(manifests: Iterable[Manifest], keep_daily: int, keep_weekly: int,
                       keep_monthly: int) -> set[str]:
    """Names of snapshots that the retention rules allow deleting.

    Labelled snapshots are never selected, and a full snapshot is kept as long as any kept
    incremental depends on it.
    """
    ordered = sorted(manifests, key=lambda m: m.created_at, reverse=True)
    keep: set[str] = set()
    daily, weekly, monthly = [], [], []
    for m in ordered:
        if m.label:
            keep.add(m.name)
            continue
        created = datetime.fromisoformat(m.created_at)
        if len(daily) < keep_daily:
            daily.append(m.name)
        if m.kind == "full" and len(weekly) < keep_weekly:
            weekly.append(m.name)
        if created.day == 1 and len(monthly) < keep_monthly:
            monthly.append(m.name)
    keep.update(daily, weekly, monthly)

    by_name = {m.name: m for m in ordered}
    for name in list(keep):
        parent = by_name[name].parent
        while parent and parent in by_name:
            keep.add(parent)
            parent = by_name[parent].parent
    return {m.name for m in ordered} - keep
