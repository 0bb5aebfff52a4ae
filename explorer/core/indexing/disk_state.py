"""How the folder on disk differs from the manifest, found by a stat walk (nothing is read).

``explorer status`` uses it to count files edited, created or deleted since the last index run
as stale. A file is *edited* when its size or modification time differs from the manifest's,
*new* when the index would take it but the manifest does not know it, *deleted* when the
manifest knows it and the folder no longer holds it. The walk uses the indexer's own rules, so
it sees exactly the files an ``explorer index`` would.
"""

from __future__ import annotations

from explorer.core.ingest.scanner import DEFAULT_EXTENSIONS, ScanRules, scan
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index, Status
from explorer.core.store.manifest_records import DiskChanges, FileRecord


def scan_rules(settings: IndexSettings) -> ScanRules:
    """The rules the indexer applies to the root of ``settings``."""
    return ScanRules(
        settings.root,
        extensions=settings.extensions or DEFAULT_EXTENSIONS,
        exclude=settings.exclude,
        extra_ignored_dirs=(settings.index_dir,),
        allow_outside_links=settings.allow_outside_links,
    )


def compare_with_disk(settings: IndexSettings, records: dict[str, FileRecord]) -> DiskChanges:
    """Compare the manifest ``records`` with the folder by size and modification time."""
    rules = scan_rules(settings)
    result = scan(settings.root, rules, settings.max_file_bytes, count_other_types=True)
    edited, new = [], []
    for scanned in result.files:
        record = records.get(scanned.rel_path)
        if record is None:
            new.append(scanned.rel_path)
        elif (record.size, record.mtime_ns) != (scanned.size, scanned.mtime_ns):
            edited.append(scanned.rel_path)
    on_disk = {f.rel_path for f in result.files} | {s.rel_path for s in result.skipped}
    deleted = sorted(path for path in records if path not in on_disk)
    states = {path: records[path].state for path in (*edited, *deleted)}
    return DiskChanges(
        edited=edited, new=new, deleted=deleted, states=states, other_types=result.other_types
    )


def status_against_disk(index: Index) -> Status:
    """The index's status with the files edited, created or deleted since the last run
    counted as stale."""
    return index.status(disk=compare_with_disk(index.settings, index.keywords.files()))
