"""Hostile documents: encrypted, truncated, looping, oversized and slow PDFs, a zip-bomb DOCX and
HTML full of scripts. Each is skipped with its reason (or read as far as it is sound), nothing
else in the folder is lost, no extraction outlives its time cap, and the TUI stays responsive
while a slow PDF is being extracted."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats import format_named
from explorer.core.ingest.formats.docx import DocxFormat
from explorer.core.ingest.formats.pdf import PdfFormat
from explorer.core.ingest.formats.sandbox import (
    ExtractionCancelled,
    ExtractionWorker,
    shared_pool,
)
from explorer.core.live.writer import LiveIndex
from explorer.core.models import FileState, SearchMode
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.tui.app import make_app
from tests.documents import (
    encrypt_pdf,
    looping_pdf,
    make_docx,
    make_pdf,
    page_tree_loop_pdf,
    write,
    zip_bomb_docx,
)
from tests.fakes import FakeEmbedder
from tests.ui.conftest import type_query, wait_for

TIME_CAP = 0.5
"""The PDF time cap in these tests; the slow PDF needs several times longer."""
SIZE_CAP = 12_000_000


def slow_pdf() -> bytes:
    """3,000 pages of 45 lines: PDFium takes about 2 s on it, 4x the test's time cap."""
    lines = [f"line {n} of a long page with some words in it" for n in range(45)]
    return make_pdf([lines] * 3_000)


GOOD_PDF = make_pdf([["A sound page about saffron kettles."]])


@pytest.fixture
def tight_caps(monkeypatch):
    """PDFs capped at half a second and 12 MB, and no page cap (so the slow one is slow)."""
    limits = replace(PdfFormat.limits, seconds=TIME_CAP, max_bytes=SIZE_CAP, max_pages=None)
    monkeypatch.setattr(PdfFormat, "limits", limits)


@pytest.fixture
def hostile_documents(tmp_path):
    root = tmp_path / "docs"
    write(root / "good.pdf", GOOD_PDF)
    write(root / "good.md", "# Fine\n\nA note about quince jelly.\n")
    write(root / "good.docx", make_docx([("heading1", "Orchard"), ("para", "Lantern orchard.")]))
    write(root / "bad/locked.pdf", encrypt_pdf(GOOD_PDF))
    write(root / "bad/truncated.pdf", GOOD_PDF[: len(GOOD_PDF) // 3])
    write(root / "bad/looping.pdf", page_tree_loop_pdf())
    write(root / "bad/outline-loop.pdf", looping_pdf())  # a loop, but a page to read
    write(root / "bad/huge.pdf", GOOD_PDF + b"%" + b"x" * SIZE_CAP)
    write(root / "bad/slow.pdf", slow_pdf())
    write(root / "bad/bomb.docx", zip_bomb_docx())
    scripts = "<script>var wombat_token = 1;</script>" * 20_000
    styles = "<style>.numbat_style { color: red }</style>" * 5_000
    write(
        root / "bad/scripts.html",
        f"<html><head>{styles}</head><body>{scripts}<p>Visible meadow text.</p>{scripts}"
        "</body></html>",
    )
    return root


EXPECTED_SKIPS = {
    "bad/locked.pdf": r"unreadable: encrypted PDF",
    "bad/truncated.pdf": r"unreadable: damaged PDF \(not a valid PDF structure\)",
    "bad/looping.pdf": r"unreadable: damaged PDF \(no page can be loaded\)",
    "bad/huge.pdf": r"too-large: 12\.0 MB > 12\.0 MB cap",
    "bad/slow.pdf": rf"unreadable: took longer than {TIME_CAP:g} s to read",
    "bad/bomb.docx": r"unreadable: zip bomb: \d+\.\d KB inflating to 300\.0 MB",
}
"""The reason ``status`` gives for each hostile file (a regular expression)."""


def keyword_paths(index, query):
    response = search(index, SearchRequest(query, mode=SearchMode.KEYWORD, limit=20))
    return {hit.path for hit in response.results}


@contextmanager
def indexed_whole(root, settings_for, name: str, page: str) -> Iterator[Index]:
    """``page`` written as ``root/name`` and indexed alone: the file is fresh, nothing is
    skipped, and the words before, in and after its hostile part (cormorant, pelican, heron)
    each find it. Yields the open index."""
    write(root / name, page)
    index = Index(settings_for(root), embedder=FakeEmbedder())
    try:
        report = Indexer(index).sync()
        record = index.keywords.file(name)
        assert (record.state, record.reason, report.skipped) == (FileState.FRESH, "", {})
        for word in ("cormorant", "pelican", "heron"):
            assert keyword_paths(index, word) == {name}, word
        yield index
    finally:
        index.close()


def test_each_hostile_document_is_skipped_with_its_reason_and_nothing_else_is_lost(
    hostile_documents, settings_for, tight_caps
):
    index = Index(settings_for(hostile_documents), embedder=FakeEmbedder())
    try:
        started = time.monotonic()
        report = Indexer(index).sync()
        seconds = time.monotonic() - started
        files = index.keywords.files()
        skipped = {
            path: record.reason
            for path, record in files.items()
            if record.state in (FileState.SKIPPED, FileState.FAILED)
        }
        assert skipped.keys() == EXPECTED_SKIPS.keys()
        for path, reason in EXPECTED_SKIPS.items():
            assert re.fullmatch(reason, skipped[path]), (path, skipped[path])
        assert report.skipped == {"unreadable": 5, "too-large": 1}
        assert seconds < 20  # the slow PDF cost its time cap, not its full extraction
        assert keyword_paths(index, "saffron kettles") == {"good.pdf"}
        assert keyword_paths(index, "quince jelly") == {"good.md"}
        assert keyword_paths(index, "lantern orchard") == {"good.docx"}
        assert keyword_paths(index, "loop") == {"bad/outline-loop.pdf"}
        assert keyword_paths(index, "meadow") == {"bad/scripts.html"}
        assert keyword_paths(index, "wombat_token") == set()
        assert keyword_paths(index, "numbat_style") == set()
        status = index.status()
        assert dict(status.skipped_files) == skipped
        assert status.skip_reasons == {"unreadable": 5, "too-large": 1}
    finally:
        index.close()


def test_html_nested_half_a_million_levels_deep_is_indexed_before_in_and_after_the_nest(
    tmp_path, settings_for
):
    levels = 500_000
    page = (
        "<html><body><p>Cormorant before the nest.</p>"
        + "<div>" * levels
        + "<p>Pelican inside the nest.</p>"
        + "</div>" * levels
        + "<p>Heron after the nest.</p></body></html>"
    )
    with indexed_whole(tmp_path / "docs", settings_for, "nested.html", page) as index:
        assert index.keywords.facts.metadata("nested.html")["notes"] == (
            "markup nested over 1,000 levels deep was read flat"
        )


def test_a_pre_block_of_a_million_blank_lines_is_read_at_once(tmp_path, settings_for):
    """The blank lines a preformatted block starts with were dropped one at a time from the
    front of a list: a million of them ran past the format's 30 s cap and the page was skipped."""
    page = (
        "<html><body><p>Cormorant before the block.</p><pre>"
        + "\n" * 1_500_000
        + "pelican = 1\n\n\n</pre><p>Heron after the block.</p></body></html>"
    )
    with indexed_whole(tmp_path / "docs", settings_for, "blank.html", page):
        pass  # indexed whole: the checks of indexed_whole are the test


def test_a_worker_killed_for_its_time_is_replaced(hostile_documents, settings_for, tight_caps):
    pool = shared_pool()
    index = Index(settings_for(hostile_documents), embedder=FakeEmbedder())
    try:
        indexer = Indexer(index)
        indexer.update_paths(["bad/slow.pdf"])
        assert index.keywords.file("bad/slow.pdf").reason.startswith("unreadable: took longer")
        stopped = [worker for worker in pool.workers() if worker.pid is None]
        assert stopped, "the worker stuck on the slow PDF was not stopped"
        write(hostile_documents / "fresh.pdf", make_pdf([["A fresh page about walnuts."]]))
        indexer.update_paths(["fresh.pdf"])
        assert keyword_paths(index, "walnuts") == {"fresh.pdf"}
    finally:
        index.close()


def test_a_zip_bomb_is_refused_before_anything_is_inflated(hostile_documents):
    fmt = DocxFormat()
    data = (hostile_documents / "bad/bomb.docx").read_bytes()
    started = time.process_time()
    with pytest.raises(FileRefused, match="zip bomb"):
        fmt.extract(data, "bomb.docx", fmt.limits)
    assert time.process_time() - started < 0.5  # 300 MB were never inflated


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_tui_answers_typing_while_a_slow_pdf_is_extracted(tmp_path, monkeypatch):
    """The live index extracts a PDF that takes seconds; the search box answers meanwhile."""
    limits = replace(PdfFormat.limits, seconds=60.0, max_pages=None)
    monkeypatch.setattr(PdfFormat, "limits", limits)
    root = tmp_path / "docs"
    write(root / "a-notes.md", "# Notes\n\nThe heron lands on the pier.\n")
    write(root / "z/slow.pdf", make_pdf([[f"heron line {n}" for n in range(45)]] * 8_000))
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen

        def recorded(path: str) -> bool:
            return screen.index is not None and screen.index.keywords.file(path) is not None

        await wait_for(pilot, lambda: recorded("a-notes.md"), 20, "the note to be indexed")
        assert not recorded("z/slow.pdf"), "the PDF was read too fast to test anything"
        started = time.monotonic()
        await type_query(pilot, "heron pier")
        assert [hit.path for hit in screen.results.hits] == ["a-notes.md"]
        assert time.monotonic() - started < 5
        assert not recorded("z/slow.pdf"), "the PDF was done before the search answered"
        await wait_for(pilot, lambda: recorded("z/slow.pdf"), 60, "the PDF to be indexed")


def test_a_cancelled_extraction_stops_at_once_and_judges_nothing(tmp_path, monkeypatch):
    """Quitting while a slow PDF is read: the worker is stopped within a fraction of a second
    and the file is not recorded as skipped (it is read again next time)."""
    monkeypatch.setattr(
        PdfFormat, "limits", replace(PdfFormat.limits, seconds=60.0, max_pages=None)
    )
    worker = ExtractionWorker()
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(ExtractionCancelled):
        worker.extract(PdfFormat(), slow_pdf(), "slow.pdf", PdfFormat.limits, cancel)
    assert time.monotonic() - started < 2.0
    assert worker.pid is None  # stopped, not left reading


def test_stopping_the_live_index_while_a_slow_pdf_is_read_returns_at_once(
    tmp_path, settings_for, monkeypatch
):
    monkeypatch.setattr(
        PdfFormat, "limits", replace(PdfFormat.limits, seconds=60.0, max_pages=None)
    )
    root = tmp_path / "docs"
    write(root / "a.md", "# A\n\nfirst\n")
    write(root / "slow.pdf", make_pdf([[f"line {n}" for n in range(45)]] * 20_000))
    live = LiveIndex(settings_for(root), lambda _event: None, FakeEmbedder(), watch=False)
    live.start()
    deadline = time.monotonic() + 20
    while live.index.keywords.file("a.md") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # into the PDF's extraction
    started = time.monotonic()
    live.stop()
    assert time.monotonic() - started < 2.0  # reading the PDF whole takes about 5 s
    index = Index(settings_for(root), embedder=FakeEmbedder())
    try:
        assert index.keywords.file("slow.pdf") is None  # not judged: read again next time
    finally:
        index.close()


def test_a_document_that_needs_too_much_memory_is_skipped_and_the_next_one_is_read():
    """The worker's address space is capped: a page whose tree outgrows it is refused with
    that reason (never the parent's memory), and a fresh worker reads the next file."""
    html = format_named("html")
    huge = b"<html><body>" + b"<p>word <b>bold</b> text</p>" * 600_000 + b"</body></html>"
    worker = ExtractionWorker(memory_bytes=150 * 2**20)
    try:
        with pytest.raises(FileRefused) as refused:
            worker.extract(html, huge, "huge.html", html.limits)
        assert refused.value.detail == "needs more than the reader's 150 MB of memory"
        small = worker.extract(html, b"<p>a small page</p>", "small.html", html.limits)
        assert small.text == "a small page\n"
        assert worker.starts == 2  # the worker that ran out was replaced
    finally:
        worker.stop()
