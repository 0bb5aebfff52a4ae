"""A PDF in the TUI: its result line says the page, and Enter opens the preview on the text
the index read, page-break lines included, at the passage's lines."""

from __future__ import annotations

import pytest

from explorer.tui.app import make_app
from explorer.tui.widgets.results import hit_lines
from explorer.tui.widgets.text_view import TextView
from tests.documents import make_pdf, write
from tests.fakes import FakeEmbedder
from tests.ui.conftest import type_query, wait_for

MANUAL = make_pdf(
    [
        ["Introduction", "Explorer reads folders of documents."],
        ["Install", "Run the installer with the kettle flag."],
        ["Quasar mode", "Search while you type in quasar mode."],
    ],
    outline=[(0, "Introduction", 0), (0, "Install", 1), (1, "Quasar mode", 2)],
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_pdf_result_shows_its_page_and_opens_at_its_passage(tmp_path):
    root = tmp_path / "docs"
    write(root / "manual.pdf", MANUAL)
    write(root / "notes.md", "# Notes\n\nNothing about stars here.\n")
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen

        def indexed() -> bool:
            return screen.index is not None and screen.index.keywords.file("manual.pdf") is not None

        await wait_for(pilot, indexed, 20, "the PDF to be indexed")
        await type_query(pilot, "quasar")
        [hit] = [hit for hit in screen.results.hits if hit.path == "manual.pdf"]
        passage = hit.passages[0]
        assert passage.page == 3
        assert "Quasar mode  p. 3 L" in hit_lines(hit, 100)[0].plain
        screen.results.highlighted = screen.results.hits.index(hit)
        screen.results.open_highlighted()  # what Enter on the result does: its best passage
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.preview.kind == "text"
        view = screen.preview.query_one(TextView)
        lines = [view._lines[number].plain for number in range(view.line_count)]
        assert "─── page 3 ───" in lines
        assert lines[passage.start_line - 1] == "Quasar mode"
        assert screen.preview.passage == (passage.start_line, passage.end_line)
        await wait_for(pilot, screen.preview.passage_visible, 5, "the passage in view")
