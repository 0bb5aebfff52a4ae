"""Keep an index in step with the files of its root.

A sync runs in two phases. First every new or changed file is read, chunked and written to the
keyword index with its manifest row (state ``pending``): from then on it is keyword-searchable.
Then the pending chunks are embedded in batches and written to Chroma; a file becomes ``fresh``
once all its chunks are there. Chunk ids derive from the path, the content hash and the chunk's
position, so redoing any step is idempotent. Before each sync the two stores are reconciled, so a
run killed at any moment is repaired by the next one without a full rebuild.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from explorer.core.embed.embedder import ModelUnavailable
from explorer.core.indexing.cpu_share import lower_this_thread
from explorer.core.indexing.disk_state import scan_rules
from explorer.core.indexing.embed_priority import EmbeddingPriority
from explorer.core.indexing.read_ahead import ReadAhead, Reading
from explorer.core.indexing.report import IndexReport, Progress, ProgressCallback, chunk_id
from explorer.core.indexing.vector_phase import VectorPhase
from explorer.core.ingest.chunker import chunk_document
from explorer.core.ingest.documents import Chunk, ScannedFile, SkippedFile, SkipReason
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats import FORMATS, DocumentFormat, format_for
from explorer.core.ingest.formats.reading import SourceFile, load_source
from explorer.core.ingest.formats.sandbox import ExtractionCancelled
from explorer.core.ingest.front_matter import FileMetadata, with_inline_tags
from explorer.core.ingest.root_paths import disk_path, path_key
from explorer.core.ingest.scanner import scan, scan_path
from explorer.core.models import FileState, SyncPhase
from explorer.core.store.file_facts import ROUTE_FIELDS
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndexDamaged
from explorer.core.store.manifest_records import FileRecord
from explorer.core.store.vectors import VectorStoreDamaged, VectorStoreUnavailable

__all__ = ["Indexer", "IndexReport", "Progress", "ProgressCallback", "chunk_id"]


TEXT_DECODING_KEY = "text_decoding"
TEXT_DECODING = "2"
"""How this explorer decodes text, kept in the index's meta: 2 reads a legacy encoding that
charset-normalizer names (Latin-1, Shift_JIS, GBK…). An index whose files were decoded
otherwise reads its files skipped as undecodable again, once, though they did not change."""
FORMAT_READINGS_KEY = "format_readings"
"""Each format's :attr:`~explorer.core.ingest.formats.DocumentFormat.reading` when the index's
files were read (JSON; absent: 1 each). A format that reads otherwise now reads the index's
files of it again, once: the chunks whose text and heading came out the same keep their ids
and vectors; a file whose passages changed gets ids of the new reading, and is embedded again."""


def format_readings() -> dict[str, int]:
    """Each format's reading in this explorer."""
    return {fmt.name: fmt.reading for fmt in FORMATS}


class Indexer:
    """Brings an :class:`Index` up to date with its root, fully or for a few paths.

    The keyword phase is here; the vector phase is the :class:`VectorPhase` it holds.
    """

    def __init__(self, index: Index, priority: EmbeddingPriority | None = None) -> None:
        """``priority``: what the user looks at, embedded first (see
        :mod:`explorer.core.indexing.embed_priority`); without it, the most recently modified
        first."""
        self.index = index
        self.rules = scan_rules(index.settings)
        self.vector_phase = VectorPhase(index, priority)
        """Phase 2: embeds what this indexer's keyword phase left pending."""
        self._missing_chunks: set[str] = set()
        """Files whose chunks are missing from the database: read again even if unchanged."""
        self._decoded_otherwise: set[str] = set()
        """Files skipped as undecodable by an explorer that decoded text otherwise: read again
        even if unchanged (once: see :data:`TEXT_DECODING`)."""
        self._read_otherwise: set[str] = set()
        """Files indexed when their format read otherwise: read again even if unchanged (once:
        see :data:`FORMAT_READINGS_KEY`)."""

    # -- entry points -------------------------------------------------------------------------
    def sync(
        self,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        embed: bool = True,
    ) -> IndexReport:
        """Bring the whole root up to date: scan, keywords, then (optionally) vectors.

        A writer that finds a store damaged on the way sets it aside, opens a fresh one and
        runs the sync once more (see :meth:`Index.repair`); a reader raises the damage.
        """
        try:
            return self._sync(progress, cancel, embed)
        except (KeywordIndexDamaged, VectorStoreDamaged) as damage:
            self.index.repair(damage)
            return self._sync(progress, cancel, embed)

    def _sync(
        self,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        embed: bool,
    ) -> IndexReport:
        report = IndexReport()
        self.vector_phase.forget_stale()
        notify = progress or (lambda _p: None)
        notify(Progress(SyncPhase.SCAN))
        started = time.perf_counter()
        settings = self.index.settings
        self._missing_chunks = set(self.index.keywords.files_missing_chunks())
        if self._missing_chunks:
            self.index.keywords.drop_orphan_keyword_rows()
        result = scan(settings.root, self.rules, settings.max_file_bytes, cancel)
        if result.cancelled:  # an incomplete walk must not remove the files it did not reach
            report.cancelled = True
            return report
        known = self.index.keywords.files()
        decoding = self.index.keywords.get_meta(TEXT_DECODING_KEY)
        self._decoded_otherwise = set()
        if decoding != TEXT_DECODING:
            self._decoded_otherwise = {
                path
                for path, record in known.items()
                if record.state == FileState.SKIPPED
                and record.reason.startswith(f"{SkipReason.UNDECODABLE}:")
            }
        readings = self._readings_otherwise(known)
        on_disk = {f.rel_path for f in result.files} | {s.rel_path for s in result.skipped}
        gone = [path for path in known if path not in on_disk]
        self._remove(gone, report)
        for skipped in result.skipped:
            self._mark_skipped(skipped, known.get(skipped.rel_path), report)
        total = len(result.files)
        ahead = ReadAhead(settings.max_file_bytes, self._needs_reading, self._same_content, cancel)
        with ahead:
            files = ((scanned, known.get(scanned.rel_path)) for scanned in result.files)
            for done, (scanned, record, reading) in enumerate(ahead.readings(files), start=1):
                if cancel is not None and cancel.is_set():
                    report.cancelled = True
                    break
                self._update_file(scanned, record, report, cancel, reading)
                if done % 25 == 0 or done == total:
                    notify(Progress(SyncPhase.KEYWORDS, files_done=done, files_total=total))
        if not report.cancelled and decoding != TEXT_DECODING:
            self.index.keywords.set_meta(TEXT_DECODING_KEY, TEXT_DECODING)
        if not report.cancelled and readings is not None:
            self.index.keywords.set_meta(FORMAT_READINGS_KEY, readings)
        self._read_otherwise = set()  # read once (a cancelled sync's next run asks again)
        if not report.cancelled and not self.index.keywords.facts.links_complete():
            self._extract_missing_links(cancel)
        report.keyword_seconds = time.perf_counter() - started
        # Chroma is opened only now: the keyword phase never waits for it. Reconciling removes
        # the vectors of every chunk the keyword phase replaced (or removed), and any an
        # earlier run left; only the latter count as repaired.
        try:
            self.vector_phase.reconcile_vectors(report)
        except VectorStoreUnavailable as error:
            if embed:
                raise
            report.vectors_unavailable = str(error)  # the keyword phase is done all the same
        if embed and not report.cancelled:
            self.keep_rankings(cancel)
            self.vector_phase.embed_pending(report, notify, cancel)
        self.index.touch_last_update()
        notify(Progress(SyncPhase.DONE, files_done=total, files_total=total))
        return report

    def keep_rankings(self, cancel: threading.Event | None = None) -> int | None:
        """Rank the index's most frequent words and prefixes again, if the keyword table
        changed since they were kept (see :mod:`explorer.core.store.kept_rankings`), at the
        embedding's low priority: seconds of CPU on a kernel-sized tree, none on a small
        folder. How many were ranked; None if ``cancel`` came first."""
        keywords = self.index.keywords
        if keywords.read_only or keywords.rankings.current():
            return 0
        lower_this_thread()
        return keywords.keep_rankings(cancel)

    def update_paths(
        self,
        rel_paths: Iterable[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        embed: bool = True,
    ) -> IndexReport:
        """Bring just these paths up to date (created, changed, deleted or moved files/folders).

        A path that is a folder stands for every file under it; a path that no longer exists
        also stands for every manifest entry under it (a deleted or moved-away folder). A file
        that vanishes while it is read is removed as deleted. With ``embed=False`` only the
        keyword phase runs; the new chunks wait for :meth:`embed_pending`.
        """
        report = IndexReport()
        notify = progress or (lambda _p: None)
        max_bytes = self.index.settings.max_file_bytes
        expanded = self._expand_paths(rel_paths)
        self._missing_chunks = set(self.index.keywords.files_missing_chunks()) & expanded
        if self._missing_chunks:
            self.index.keywords.drop_orphan_keyword_rows()
        for rel_path in sorted(expanded):
            record = self.index.keywords.file(rel_path)
            found: ScannedFile | SkippedFile | None
            folder, _slash, name = rel_path.rpartition("/")
            if name == ".gitignore":  # a fifo or device one is counted as the full scan does
                pruned = bool(folder) and self.rules.prunes_dir(folder)
                found = None if pruned else self.rules.gitignore_problem(folder)
            else:
                found = scan_path(self.rules, rel_path, max_bytes)
            if found is None:
                if record is not None:
                    self._remove([rel_path], report)
                continue
            if isinstance(found, SkippedFile):
                self._mark_skipped(found, record, report)
                continue
            self._update_file(found, record, report, cancel)
            if not found.abs_path.exists() and self.index.keywords.file(rel_path) is not None:
                self._remove([rel_path], report)  # deleted while it was being read
        if embed:
            self.vector_phase.embed_pending(report, notify, cancel)
        else:
            # keep the stores in step until the embedding catches up
            self.vector_phase.flush_deletions()
        self.index.touch_last_update()
        return report

    def _expand_paths(self, rel_paths: Iterable[str]) -> set[str]:
        """File paths that ``rel_paths`` stand for: folders become the files under them.

        An existing folder gives itself (a file it replaced leaves the index; one that cannot
        be listed is counted), every file under it that the scan rules do not prune, plus the
        manifest's paths under it (to drop those gone from disk); a path that does not exist
        gives itself plus the manifest's paths under it (a deleted folder). An existing file
        the manifest does not know yet gives the manifest's paths under it too (a folder it
        replaced).
        """
        root = self.index.settings.root
        known: list[str] | None = None
        expanded: set[str] = set()
        for raw in rel_paths:
            rel = path_key(raw).replace(os.sep, "/").strip("/")
            while rel.startswith("./"):
                rel = rel[2:]
            if ".." in rel.split("/"):
                expanded.add(rel)  # never walk outside the root; the rules reject it
                continue
            absolute = root / disk_path(rel) if rel else root
            is_dir = absolute.is_dir() and not absolute.is_symlink()
            if rel and not is_dir and absolute.exists() and self.index.keywords.file(rel):
                expanded.add(rel)  # an indexed file: the common case, no manifest listing
                continue
            if known is None:
                known = sorted(self.index.keywords.files())
            prefix = f"{rel}/" if rel else ""
            start = bisect.bisect_left(known, prefix)
            for path in known[start:]:
                if not path.startswith(prefix):
                    break
                expanded.add(path)
            if rel:
                expanded.add(rel)
            if not is_dir:
                continue
            if rel and self.rules.prunes_dir(rel):
                continue
            for dirpath, dirnames, filenames in os.walk(absolute):
                rel_dir = path_key(Path(dirpath).relative_to(root).as_posix())
                rel_dir = "" if rel_dir == "." else rel_dir
                dirnames[:] = sorted(
                    d
                    for d in dirnames
                    if not self.rules.prunes_dir(f"{rel_dir}/{path_key(d)}".lstrip("/"))
                )
                expanded.update(f"{rel_dir}/{path_key(name)}".lstrip("/") for name in filenames)
        return expanded

    # -- phase 1: keywords --------------------------------------------------------------------
    def _readings_otherwise(self, known: dict[str, FileRecord]) -> str | None:
        """Fill :attr:`_read_otherwise` with the indexed files whose format reads otherwise
        than when they were read; the readings to keep once the sync is through (None: the
        same as kept)."""
        current = format_readings()
        kept = self.index.keywords.get_meta(FORMAT_READINGS_KEY)
        try:
            stored = json.loads(kept) if kept else {}
        except ValueError:
            stored = {}
        if not isinstance(stored, dict):
            stored = {}
        changed = {name for name, reading in current.items() if stored.get(name, 1) != reading}
        self._read_otherwise = (
            {
                path
                for path, record in known.items()
                if record.state in (FileState.FRESH, FileState.PENDING)
                and format_for(path).name in changed
            }
            if changed
            else set()  # the usual sync: no file's format is asked
        )
        return json.dumps(current, sort_keys=True) if stored != current else None

    def _needs_reading(self, scanned: ScannedFile, record: FileRecord | None) -> bool:
        """Whether ``scanned`` must be read: new, its size or time changed, failed before (a
        failure is never final), its chunks are missing from the database, or it was skipped
        as undecodable by an explorer that decoded text otherwise."""
        return (
            record is None
            or record.size != scanned.size
            or record.mtime_ns != scanned.mtime_ns
            or record.state == FileState.FAILED
            or scanned.rel_path in self._missing_chunks
            or scanned.rel_path in self._decoded_otherwise
            or scanned.rel_path in self._read_otherwise
        )

    def _same_content(self, loaded: SourceFile, record: FileRecord | None) -> bool:
        """Whether the bytes read are those the index holds (only the file's time changed)."""
        return (
            record is not None
            and record.hash == loaded.content_hash
            and record.state in (FileState.FRESH, FileState.PENDING)
            and loaded.rel_path not in self._missing_chunks
            and loaded.rel_path not in self._read_otherwise
        )

    def _update_file(
        self,
        scanned: ScannedFile,
        record: FileRecord | None,
        report: IndexReport,
        cancel: threading.Event | None = None,
        reading: Reading | None = None,
    ) -> None:
        """Bring one file's rows up to date; ``reading``: the file as :class:`ReadAhead` read
        it (None: read it here)."""
        keywords = self.index.keywords
        restore = scanned.rel_path in self._missing_chunks
        if not self._needs_reading(scanned, record):
            assert record is not None
            if record.state == FileState.SKIPPED:  # still skipped, for the same reason: count it so
                kind = record.reason.split(":")[0]
                report.skipped[kind] = report.skipped.get(kind, 0) + 1
            else:
                report.unchanged += 1
            return
        if reading is None:
            max_bytes = self.index.settings.max_file_bytes
            reading = Reading(load_source(scanned.abs_path, scanned.rel_path, max_bytes))
        loaded = reading.loaded
        if isinstance(loaded, tuple):
            reason, detail = loaded
            self.vector_phase.drop_chunk_vectors(
                keywords.mark_skipped(
                    scanned.rel_path,
                    scanned.size,
                    scanned.mtime_ns,
                    FileState.SKIPPED,
                    f"{reason}: {detail}",
                )
            )
            report.skipped[reason] = report.skipped.get(reason, 0) + 1
            return
        content_hash = loaded.content_hash
        if self._same_content(loaded, record):
            assert record is not None
            keywords.touch(scanned.rel_path, scanned.size, scanned.mtime_ns)
            report.unchanged += 1
            return
        try:
            chunked = chunk_document(
                scanned.rel_path,
                loaded.format,
                reading.document(cancel),  # a PDF, a DOCX...: parsed in the worker process
                self.index.embedder.token_spans,
                max_tokens=self.index.settings.chunk_tokens,
                overlap_tokens=self.index.settings.chunk_overlap,
            )
        except ModelUnavailable:
            raise  # no file's fault: the run stops, and no file is marked failed
        except ExtractionCancelled:  # stopped while a worker read it: judged next time
            report.cancelled = True
            return
        except FileRefused as refused:  # an encrypted PDF, a zip bomb, a parser out of time
            self.vector_phase.drop_chunk_vectors(
                keywords.mark_skipped(
                    scanned.rel_path,
                    scanned.size,
                    scanned.mtime_ns,
                    FileState.SKIPPED,
                    f"{refused.reason}: {refused.detail}",
                )
            )
            report.skipped[refused.reason] = report.skipped.get(refused.reason, 0) + 1
            return
        # Parsing runs third-party parsers over arbitrary files: whatever one raises marks this
        # file failed (with the error) and the sync goes on.
        except Exception as error:  # noqa: BLE001 - see above
            reason = f"chunking failed: {type(error).__name__}: {error}"
            self.vector_phase.drop_chunk_vectors(
                keywords.mark_skipped(
                    scanned.rel_path, scanned.size, scanned.mtime_ns, FileState.FAILED, reason
                )
            )
            report.failed += 1
            report.failures[scanned.rel_path] = reason
            return
        title = chunked.metadata.get("title") or _title_from_path(scanned.rel_path)
        metadata = chunked.metadata.copy()
        if chunked.notes:  # kept with the metadata, so what was dropped can be looked up
            metadata["notes"] = "; ".join(chunked.notes)
        path, passages = scanned.rel_path, chunked.chunks
        if record is not None and path in self._read_otherwise:
            ids = self._ids_read_again(path, content_hash, loaded.format, passages)
        else:
            ids = [chunk_id(path, content_hash, n) for n in range(len(passages))]
        chunks = list(zip(ids, chunked.chunks, strict=True))
        old_ids = keywords.replace_file(
            scanned.rel_path,
            scanned.size,
            scanned.mtime_ns,
            content_hash,
            chunks,
            metadata,
            title,
            chunked.references,
        )
        self.vector_phase.drop_chunk_vectors(old_ids, keep={cid for cid, _ in chunks})
        self.vector_phase.drop_file_vector(scanned.rel_path, record)
        if restore:
            report.files_restored += 1
        elif record is None or record.state in (FileState.SKIPPED, FileState.FAILED):
            report.added += 1
        else:
            report.updated += 1
        report.chunks_written += len(chunks)

    def _ids_read_again(
        self, path: str, content_hash: str, fmt: DocumentFormat, chunks: list[Chunk]
    ) -> list[str]:
        """The chunk ids of a file read again because its format reads otherwise now: the ids
        it had when its passages came out the same (their vectors are kept), else ids of this
        reading (the same bytes give other passages, embedded again: ids of the bytes alone
        would name the old passages' vectors)."""
        old = self.index.keywords.chunk_ids(path)
        stored = self.index.keywords.chunks_by_id(old)
        before = [(stored[cid].text, stored[cid].heading) for cid in old if cid in stored]
        if len(before) == len(old) and before == [(c.text, c.heading_path) for c in chunks]:
            return old
        salt = f"{fmt.name} reading {fmt.reading}"
        return [chunk_id(path, f"{content_hash}\0{salt}", n) for n in range(len(chunks))]

    def _extract_missing_links(self, cancel: threading.Event | None) -> None:
        """An index whose references were read by an older explorer (or never): read every
        file's references, inline tags and link names (aliases, slug, url) once, its chunks
        and vectors kept."""
        keywords = self.index.keywords
        root = self.index.settings.root
        for path, record in keywords.files().items():
            if cancel is not None and cancel.is_set():
                return
            if record.state not in (FileState.FRESH, FileState.PENDING):
                continue
            loaded = load_source(root / disk_path(path), path, self.index.settings.max_file_bytes)
            if isinstance(loaded, tuple):
                continue
            try:
                document = loaded.document(cancel=cancel)
            except (FileRefused, ExtractionCancelled):
                continue
            facts = loaded.format.link_facts(path, document)
            metadata = cast(FileMetadata, keywords.facts.metadata(path))
            for key in ROUTE_FIELDS:
                if key in document.metadata:
                    metadata[key] = document.metadata[key]  # type: ignore[literal-required]
            metadata = with_inline_tags(metadata, facts.tags)
            keywords.replace_link_facts(path, metadata, facts.references)
        keywords.facts.set_links_complete()

    def _mark_skipped(
        self, skipped: SkippedFile, record: FileRecord | None, report: IndexReport
    ) -> None:
        """Record ``skipped`` in the manifest (unless it is already, for the same reason)."""
        reason = skipped.manifest_reason
        if record is None or record.state != FileState.SKIPPED or record.reason != reason:
            self.vector_phase.drop_file_vector(skipped.rel_path, record)
            self.vector_phase.drop_chunk_vectors(
                self.index.keywords.mark_skipped(skipped.rel_path, 0, 0, FileState.SKIPPED, reason)
            )
        kind = str(skipped.reason)
        report.skipped[kind] = report.skipped.get(kind, 0) + 1

    def _remove(self, paths: list[str], report: IndexReport) -> None:
        for path in paths:
            self.vector_phase.drop_file_vector(path, self.index.keywords.file(path))
            self.vector_phase.drop_chunk_vectors(self.index.keywords.remove_file(path))
            report.removed += 1


def _title_from_path(rel_path: str) -> str:
    """A readable title for a file without one: its name without extension, words spaced."""
    name = rel_path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem.replace("-", " ").replace("_", " ").strip() or name
