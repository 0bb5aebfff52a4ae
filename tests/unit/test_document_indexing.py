"""Folders of documents that are not plain text, indexed and searched: PDFs with their pages,
HTML without markup, DOCX and notebooks, through the extraction worker process; ``page`` in
the index, in ``--json`` and as ``p. N`` in the CLI's text; the preview's document."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.indexer import Indexer
from explorer.core.ingest.formats import PreviewKind
from explorer.core.ingest.formats.preview import preview_document
from explorer.core.models import FileState, SearchMode
from explorer.core.retrieval.links import file_links
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndex
from tests.documents import encrypt_pdf, make_docx, make_notebook, make_pdf, write
from tests.fakes import FakeEmbedder

MANUAL = make_pdf(
    [
        ["Introduction", "Explorer reads folders of documents."],
        ["Install", "Run the installer with the kettle flag."],
        ["Quasar mode", "Search while you type in quasar mode."],
    ],
    outline=[(0, "Introduction", 0), (0, "Install", 1), (1, "Quasar mode", 2)],
    info={"Title": "Field Manual"},
)


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "docs"
    write(root / "manual.pdf", MANUAL)
    write(
        root / "site/page.html",
        "<html><head><title>Lanterns</title><script>var zebra_script = 1;</script></head>"
        "<body><nav>menu words</nav><main><h1>Lanterns</h1><p>Amber lanterns glow.</p>"
        '<p>See <a href="../manual.pdf">the manual</a>.</p></main></body></html>',
    )
    write(
        root / "letters/note.docx", make_docx([("heading1", "Orchard"), ("para", "Pears ripen.")])
    )
    write(
        root / "nb/study.ipynb",
        make_notebook([("markdown", "# Study\n\nComets observed."), ("code", "x = 1")]),
    )
    write(root / "readme.md", "# Readme\n\nPlain markdown about comets.\n")
    return root


@pytest.fixture
def index(folder, settings_for):
    opened = Index(settings_for(folder), embedder=FakeEmbedder())
    yield opened
    opened.close()


def keyword_hits(index, query):
    request = SearchRequest(query, mode=SearchMode.KEYWORD, limit=10)
    return search(index, request).results


def test_a_folder_of_documents_is_indexed_and_searchable_by_their_text(index):
    report = Indexer(index).sync()
    assert report.added == 5 and not report.skipped and not report.failed
    files = index.keywords.files()
    assert {path for path, record in files.items() if record.state == FileState.FRESH} == {
        "manual.pdf",
        "site/page.html",
        "letters/note.docx",
        "nb/study.ipynb",
        "readme.md",
    }
    assert [hit.path for hit in keyword_hits(index, "kettle")] == ["manual.pdf"]
    assert [hit.path for hit in keyword_hits(index, "amber lanterns")] == ["site/page.html"]
    assert [hit.path for hit in keyword_hits(index, "pears ripen")] == ["letters/note.docx"]
    assert keyword_hits(index, "zebra_script") == []  # scripts are not text
    assert keyword_hits(index, "menu words") == []  # nor is navigation
    assert {hit.path for hit in keyword_hits(index, "comets")} == {"nb/study.ipynb", "readme.md"}
    assert files["manual.pdf"].title == "Field Manual"
    assert files["site/page.html"].title == "Lanterns"


def test_pdf_passages_carry_their_page_and_heading(index):
    Indexer(index).sync()
    [hit] = keyword_hits(index, "quasar")
    [passage] = hit.passages
    assert (passage.page, passage.heading) == (3, "Install > Quasar mode")
    [other] = keyword_hits(index, "pears")
    assert other.passages[0].page is None


def test_html_links_are_references_of_the_page(index):
    Indexer(index).sync()
    found = file_links(index, "site/page.html")
    assert [(link.target, link.raw, link.exists) for link in found.outgoing] == [
        ("manual.pdf", "../manual.pdf", True)
    ]
    assert [link.source for link in file_links(index, "manual.pdf").backlinks] == ["site/page.html"]


def test_an_encrypted_pdf_is_skipped_with_its_reason_and_the_rest_is_indexed(index, folder):
    write(folder / "locked.pdf", encrypt_pdf(MANUAL))
    report = Indexer(index).sync()
    assert report.skipped == {"unreadable": 1} and report.added == 5
    record = index.keywords.file("locked.pdf")
    assert (record.state, record.reason) == (FileState.SKIPPED, "unreadable: encrypted PDF")
    assert index.status().skip_reasons == {"unreadable": 1}
    again = Indexer(index).sync()  # unchanged: not extracted again
    assert again.skipped == {"unreadable": 1} and again.unchanged == 5


def test_a_replaced_pdf_is_extracted_again(index, folder):
    indexer = Indexer(index)
    indexer.sync()
    write(folder / "manual.pdf", make_pdf([["A new edition about nebulae."]]))
    indexer.update_paths(["manual.pdf"])
    assert [hit.path for hit in keyword_hits(index, "nebulae")] == ["manual.pdf"]
    assert keyword_hits(index, "kettle") == []


def test_an_index_made_before_pages_gains_the_column_and_keeps_its_chunks(index, folder):
    Indexer(index).sync()
    database = index.keywords.path
    index.close()
    with sqlite3.connect(database) as db:  # the chunks table as explorer made it before pages
        db.execute("UPDATE chunks SET page = NULL")
        db.execute("ALTER TABLE chunks DROP COLUMN page")
        db.execute("ALTER TABLE chunks DROP COLUMN entries")
    reader = KeywordIndex(database, read_only=True)
    try:
        [chunk] = reader.chunks_by_id(reader.chunk_ids("readme.md")).values()
        assert chunk.page is None and chunk.entries == () and "comets" in chunk.text
    finally:
        reader.close()
    writer = KeywordIndex(database)
    try:
        columns = [row[1] for row in writer._db.execute("PRAGMA table_info(chunks)")]
        assert columns.count("page") == 1 and columns.count("entries") == 1
        assert len(writer.chunk_ids("readme.md")) == 1
    finally:
        writer.close()


# -- the command line ----------------------------------------------------------------------------
@pytest.fixture
def cli_folder(folder, tmp_path, monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    index_dir = tmp_path / "cli-index"
    result = CliRunner().invoke(main, ["index", str(folder), "--index-dir", str(index_dir)])
    assert result.exit_code == 0, result.output
    return folder, index_dir


def test_search_json_and_text_show_the_page(cli_folder):
    folder, index_dir = cli_folder
    args = ["search", "kettle installer", str(folder), "--index-dir", str(index_dir)]
    data = json.loads(CliRunner().invoke(main, [*args, "--mode", "keyword", "--json"]).stdout)
    passage = data["results"][0]["passages"][0]
    assert (data["results"][0]["path"], passage["page"]) == ("manual.pdf", 2)
    text = CliRunner().invoke(main, [*args, "--mode", "keyword"]).stdout
    assert "Install  p. 2 L" in text


# -- the preview ---------------------------------------------------------------------------------
def test_the_preview_shows_a_pdf_as_the_index_read_it(index, folder):
    Indexer(index).sync()
    document = preview_document("manual.pdf", folder / "manual.pdf")
    assert document.kind == PreviewKind.TEXT and document.format == "pdf"
    lines = document.text.split("\n")
    assert [lines[line - 1] for line in document.page_lines] == [
        "Introduction",
        "Install",
        "Quasar mode",
    ]
    assert lines[document.page_lines[1] - 3] == "─── page 2 ───"
    [hit] = keyword_hits(index, "quasar")
    passage = hit.passages[0]
    assert lines[passage.start_line - 1] == "Quasar mode"


def test_the_preview_of_a_pdf_gives_its_outline_and_the_page_of_each_line(folder):
    """Issue 30: the preview's data name the page of any line (its page-break line included)
    and where each page starts, and carry the PDF's bookmarks with their lines."""
    document = preview_document("manual.pdf", folder / "manual.pdf")
    lines = document.text.split("\n")
    assert document.page_count == 3
    assert [(entry.level, entry.title) for entry in document.outline] == [
        (0, "Introduction"),
        (0, "Install"),
        (1, "Quasar mode"),
    ]
    assert [lines[entry.line - 1] for entry in document.outline] == [
        "Introduction",
        "Install",
        "Quasar mode",
    ]
    for page in (1, 2, 3):
        start = document.page_start(page)
        assert start is not None and lines[start - 1] == f"─── page {page} ───"
        assert document.page_at(start) == page
        assert document.page_at(document.page_lines[page - 1]) == page
    assert document.page_at(1) == 1  # the property lines before page 1
    assert document.page_at(len(lines)) == 3
    assert document.page_start(4) is None and document.page_start(0) is None
    write(folder / "notes.md", "# Notes\n\nText.\n")
    notes = preview_document("notes.md", folder / "notes.md")
    assert notes.kind == PreviewKind.MARKDOWN
    assert notes.outline == () and notes.page_count == 0 and notes.page_at(3) is None


def test_the_preview_of_an_unreadable_pdf_says_why(folder):
    write(folder / "locked.pdf", encrypt_pdf(MANUAL))
    document = preview_document("locked.pdf", folder / "locked.pdf")
    assert document.kind == PreviewKind.MESSAGE
    assert document.note == "Cannot show this pdf: unreadable: encrypted PDF"


def test_the_preview_of_html_is_its_text_and_a_notebook_renders_as_markdown(folder):
    page = preview_document("site/page.html", folder / "site/page.html")
    assert page.kind == PreviewKind.CODE and page.language == "markdown"
    assert page.text.startswith("# Lanterns\n\nAmber lanterns glow.")
    notebook = preview_document("nb/study.ipynb", folder / "nb/study.ipynb")
    assert notebook.kind == PreviewKind.MARKDOWN
    assert notebook.text == "# Study\n\nComets observed.\n\n```python\nx = 1\n```\n"


def test_the_preview_reads_a_pdf_by_another_name_as_the_index_does(tmp_path):
    write(tmp_path / "notes.md", MANUAL)
    document = preview_document("notes.md", tmp_path / "notes.md")
    assert document.format == "pdf" and "Quasar mode" in document.text


def test_a_cancelled_preview_stops_reading_at_once(tmp_path):
    cancel = threading.Event()
    cancel.set()  # another file was opened before this one was read
    write(tmp_path / "manual.pdf", MANUAL)
    started = time.monotonic()
    document = preview_document("manual.pdf", tmp_path / "manual.pdf", cancel=cancel)
    assert document.kind == PreviewKind.MESSAGE
    assert document.note == "Reading this document was cancelled."
    assert time.monotonic() - started < 1.0
