"""Reading ahead of the keyword phase: files come in their order, read once, ahead of the
indexer; extracted formats are parsed ahead, text formats and unchanged bytes are not; what
parsing raised is raised where the indexer asks for the document."""

from __future__ import annotations

import threading
import time

import pytest

from explorer.core.indexing import read_ahead
from explorer.core.indexing.read_ahead import AHEAD, ReadAhead
from explorer.core.ingest.documents import ScannedFile
from explorer.core.ingest.file_reading import FileRefused
from tests.conftest import wait_until
from tests.documents import encrypt_pdf, make_pdf, write

MAX_BYTES = 2_000_000


def page(number: int) -> str:
    return (
        f"<html><head><title>Page {number}</title></head><body><main><h1>Page {number}</h1>"
        f"<p>Lanterns and kettles, note {number}.</p></main></body></html>"
    )


def scanned(root, rel: str) -> ScannedFile:
    path = root / rel
    stat = path.stat()
    return ScannedFile(rel_path=rel, abs_path=path, size=stat.st_size, mtime_ns=stat.st_mtime_ns)


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The files read, in the order they were read."""
    done: list[str] = []
    real = read_ahead.load_source

    def load_source(path, rel_path, max_bytes):
        done.append(rel_path)
        return real(path, rel_path, max_bytes)

    monkeypatch.setattr(read_ahead, "load_source", load_source)
    return done


def test_files_come_in_order_read_once_and_ahead_of_the_indexer(tmp_path, reads):
    names = [f"site/page{n:02}.html" for n in range(12)]
    for number, name in enumerate(names):
        write(tmp_path / name, page(number))
    files = [(scanned(tmp_path, name), None) for name in names]
    unchanged = {names[3], names[4]}  # the indexer will not read these: no reading given
    with ReadAhead(
        MAX_BYTES, lambda file, _record: file.rel_path not in unchanged, lambda *_: False
    ) as ahead:
        given = []
        for number, (file, _record, reading) in enumerate(ahead.readings(files)):
            if number == 0:  # while the indexer works on the first, the next ones are read
                assert wait_until(lambda: len(reads) >= 1 + AHEAD, 5), reads
            given.append(file.rel_path)
            assert (reading is None) == (file.rel_path in unchanged)
            if reading is not None:
                assert reading.parsed is not None  # HTML: parsed by the worker, ahead
                assert f"Page {names.index(file.rel_path)}" in reading.parsed.text
    assert given == names
    assert reads == [name for name in names if name not in unchanged]  # each once, in order


def test_text_files_and_unchanged_bytes_are_not_parsed_ahead(tmp_path, reads):
    write(tmp_path / "note.md", "# Note\n\nA kettle of lanterns.\n")
    write(tmp_path / "same.html", page(1))
    files = [(scanned(tmp_path, "note.md"), None), (scanned(tmp_path, "same.html"), None)]
    with ReadAhead(
        MAX_BYTES, lambda *_: True, lambda source, _record: source.rel_path == "same.html"
    ) as ahead:
        readings = {file.rel_path: reading for file, _record, reading in ahead.readings(files)}
    note, same = readings["note.md"], readings["same.html"]
    assert note is not None and note.parsed is None  # parsed on the indexer's thread...
    assert "kettle" in note.document(None).text  # ...when it asks
    assert same is not None and same.parsed is None and same.error is None


def test_what_parsing_raised_is_raised_where_the_document_is_asked(tmp_path, reads):
    write(tmp_path / "locked.pdf", encrypt_pdf(make_pdf([["A locked kettle."]])))
    with ReadAhead(MAX_BYTES, lambda *_: True, lambda *_: False) as ahead:
        [(_file, _record, reading)] = list(
            ahead.readings([(scanned(tmp_path, "locked.pdf"), None)])
        )
    assert reading is not None and reading.error is not None
    with pytest.raises(FileRefused):
        reading.document(None)


def test_a_cancelled_sync_stops_reading_ahead(tmp_path, reads):
    names = [f"page{n:02}.html" for n in range(40)]
    for number, name in enumerate(names):
        write(tmp_path / name, page(number))
    cancel = threading.Event()
    with ReadAhead(MAX_BYTES, lambda *_: True, lambda *_: False, cancel) as ahead:
        for _file, _record, _reading in ahead.readings((scanned(tmp_path, n), None) for n in names):
            cancel.set()
            break
    # Closing dropped what was queued: only the files already handed out or in hand were read.
    assert len(reads) <= 2 + AHEAD


def test_a_tree_of_unchanged_files_goes_by_in_a_moment(tmp_path, reads):
    """A re-open of a kernel-sized tree: tens of thousands of files the indexer will not read.
    They are handed on at once (the queue of them was counted again for each one: 2 s of a
    3,607-page tree's catch-up, minutes for this one), and the one changed file is read."""
    write(tmp_path / "changed.html", page(1))
    files = [
        (ScannedFile(rel_path=f"old/{n}.html", abs_path=tmp_path / "old", size=1, mtime_ns=1), None)
        for n in range(50_000)
    ]
    files.append((scanned(tmp_path, "changed.html"), None))
    started = time.perf_counter()
    with ReadAhead(
        MAX_BYTES, lambda file, _: file.rel_path == "changed.html", lambda *_: False
    ) as ahead:
        given = [(file.rel_path, reading) for file, _record, reading in ahead.readings(files)]
    assert time.perf_counter() - started < 2.0
    assert len(given) == 50_001 and given[-1][0] == "changed.html"
    assert all(reading is None for _path, reading in given[:-1])
    assert given[-1][1] is not None and reads == ["changed.html"]
