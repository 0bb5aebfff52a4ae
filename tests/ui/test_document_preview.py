"""A PDF in the TUI: its result line says the page, and Enter opens the preview on the text
the index read, page-break lines included, at the passage's lines."""

from __future__ import annotations

import time

import pytest

from explorer.tui.app import make_app
from explorer.tui.widgets.results import hit_lines
from explorer.tui.widgets.text_view import TextView
from tests.documents import make_pdf, write
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds
from tests.ui.conftest import type_query, wait_for, wait_settled

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


BOOK = make_pdf(
    [
        [f"Chapter {page} line {n} of the long manual" for n in range(1, 46)]
        for page in range(1, 13)
    ],
    outline=[(0, "Chapter 1 line 1", 0), (0, "Chapter 7 line 1", 6), (1, "Chapter 9 line 1", 8)],
)


def _book_app(tmp_path):
    root = tmp_path / "docs"
    write(root / "book.pdf", BOOK)
    return make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)


async def _open_book(pilot, screen) -> TextView:
    screen.open_file("book.pdf")
    await wait_for(pilot, lambda: screen.preview.path == "book.pdf" and screen.preview.loaded)
    screen.preview.focus_content()
    await pilot.pause()
    return screen.preview.query_one(TextView)


@pytest.mark.anyio
async def test_a_pdf_border_names_its_pages_and_a_key_goes_to_a_page(tmp_path):
    """Issue 30: the border says ``p. N of M`` for the lines in view (not only ``L7113–7121``),
    follows the reader down the pages, and ``:`` then a number goes to that page."""
    app = _book_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        view = await _open_book(pilot, screen)
        assert str(screen.preview.border_subtitle).startswith("p. 1 of 12")
        await pilot.press(":")
        assert screen.focused is screen.preview.query_one("#go-to")
        await pilot.press("7", "enter")
        await pilot.pause()
        assert view.line_text(view.top_line) == "─── page 7 ───"
        assert str(screen.preview.border_subtitle).startswith("p. 7 of 12")
        assert screen.focused is view  # back to reading
        await pilot.press(*["space"] * 6)
        await pilot.pause()
        top = view.line_text(view.top_line)  # "Chapter 8 line 20 of the long manual"
        assert top.startswith("Chapter 8 ")
        assert str(screen.preview.border_subtitle).startswith("p. 8 of 12")  # it followed
        await pilot.press(":", "4", "0", "enter")
        await pilot.pause()
        assert str(screen.preview.border_subtitle).startswith("p. 8 of 12")  # no page 40
        await pilot.press(":", "escape")
        assert screen.focused is view


@pytest.mark.anyio
async def test_the_outline_of_a_pdf_lists_its_bookmarks_with_their_pages(tmp_path):
    """Issue 30: ``t`` on a PDF said "no headings in this file"; it lists the bookmarks, and
    Enter on one shows its page."""
    from textual.widgets import OptionList

    from explorer.tui.widgets.outline import OutlineScreen

    app = _book_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        view = await _open_book(pilot, screen)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen), 5, "the outline")
        options = app.screen.query_one("#outline-list", OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [line.split("  p. ")[0].strip() for line in shown] == [
            "Chapter 1 line 1",
            "Chapter 7 line 1",
            "Chapter 9 line 1",
        ]
        assert shown[1].endswith("p. 7")
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.screen is screen, 5, "the outline to close")
        await pilot.pause()
        assert "Chapter 7 line 1" in view.line_text(view.top_line)
        assert str(screen.preview.border_subtitle).startswith("p. 7 of 12")


def screen_lines(app) -> list[str]:
    """The screen's text, row by row (Textual's compositor: private, so this fails loudly if
    it changes)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


HUGO_PAGE = """---
title: Install
---
# Install

{{< call-out class="note" title="Before you begin" >}}
You need a licence.
{{< /call-out >}}

{{< tabs name="install" >}}
{{% tab name="Properties" %}}
Set the properties file.
{{% /tab %}}
{{< /tabs >}}

{{% include "env-var-note.md" %}}

> [!note] Vertical bars in tables
> If you want a bar, escape it.

![Architecture](arch.png)

```shell
kubectl apply --set controller.service.name=cart --set controller.kind=daemonset --wait
```
"""


@pytest.mark.anyio
async def test_shortcodes_callouts_and_images_read_as_their_content(tmp_path):
    """Issue 30: no raw ``{{< >}}``; a note, a tab and an include say what they are; a callout's
    title stands on its own line; an image is a line naming it; a code line is never cut inside
    a word at 80 columns (it scrolls sideways)."""
    root = tmp_path / "docs"
    write(root / "install.md", HUGO_PAGE)
    write(root / "arch.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 2000)
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        screen.open_file("install.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        screen.preview.focus_content()
        await pilot.press("z")
        await pilot.pause()
        shown = "\n".join(screen_lines(app))
        for _ in range(3):
            await pilot.press("space")
            await pilot.pause()
            shown += "\n" + "\n".join(screen_lines(app))
        assert "{{" not in shown and "[!note]" not in shown
        assert "Note: Before you begin" in shown
        assert "▸ Properties" in shown
        assert "included here: env-var-note.md" in shown
        rows = [row.strip(" ▌▎│┃") for row in shown.split("\n")]
        assert "Note: Vertical bars in tables" in rows  # the title alone on its row
        assert any(row.startswith("If you want a bar") for row in rows)
        assert "🖼 Architecture (arch.png)" in shown
        assert "kubectl apply --set controller.service" in shown
        assert not any(row.startswith(("ice.name=cart", "vice.name", "name=cart")) for row in rows)
        assert "controller.kind=daemonset" not in shown  # past the edge: scrolled, not wrapped
        # Following the image's link opens it: a line naming it and how to see it.
        from textual.widgets import Static

        from explorer.tui.messages import FollowLink

        screen.post_message(FollowLink("install.md", "arch.png"))
        await wait_for(pilot, lambda: screen.preview.path == "arch.png" and screen.preview.loaded)
        message = str(screen.preview.query_one("#preview-message", Static).render())
        assert "Image arch.png (PNG, 2 KB): ctrl+o opens it" in message


def counted_reads(monkeypatch, seconds: float = 0.0) -> list[str]:
    """The paths the preview reads from disk, in order (each read taking ``seconds`` more)."""
    from explorer.tui.widgets import preview as preview_module

    reads: list[str] = []
    real_load = preview_module.load_file

    def counted(path, absolute, highlight=True):
        reads.append(path)
        time.sleep(seconds)
        return real_load(path, absolute, highlight)

    monkeypatch.setattr(preview_module, "load_file", counted)
    return reads


@pytest.mark.anyio
async def test_a_long_page_is_drawn_by_the_text_view_and_files_read_are_kept(tmp_path, monkeypatch):
    """Issue 30 (speed): a long Markdown page goes to the text view, which draws only the rows
    on screen (Textual's Markdown widget made a widget per block: seconds per zoom), its
    shortcodes still rewritten; back and forward show a file read before without reading it
    again."""

    NOTE_OPEN, NOTE_CLOSE = '{{< call-out class="note" >}}', "{{< /call-out >}}"
    sections = "".join(
        f"## Step {n}\n\n{NOTE_OPEN}\nMind step {n}.\n{NOTE_CLOSE}\n\n" for n in range(1, 120)
    )
    root = tmp_path / "docs"
    write(root / "long.md", "# Long guide\n\n" + sections)
    write(root / "short.md", "# Short\n\nA short page.\n")
    reads = counted_reads(monkeypatch)
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        preview = screen.preview
        screen.open_file("long.md")
        await wait_for(pilot, lambda: preview.path == "long.md" and preview.loaded)
        assert preview.kind == "code"
        view = preview.query_one(TextView)
        text = "\n".join(view.line_text(n) for n in range(1, view.line_count + 1))
        assert "{{" not in text and "**" not in text and "##" not in text
        assert "\nStep 7\n\n▌ Note:\n▌ Mind step 7.\n" in text  # rendered, line for line
        headings = preview.headings()  # the outline (t) still lists the page's headings
        assert [(h.title, h.line) for h in headings[:3]] == [
            ("Long guide", 1),
            ("Step 1", 3),
            ("Step 2", 9),
        ]
        assert view.line_text(9) == "Step 2"
        screen.open_file("short.md")
        await wait_for(pilot, lambda: preview.path == "short.md" and preview.loaded)
        assert preview.kind == "markdown"
        assert reads == ["long.md", "short.md"]
        await pilot.press("escape")
        screen.action_back()
        await wait_for(pilot, lambda: preview.path == "long.md" and preview.loaded)
        screen.action_forward()
        await wait_for(pilot, lambda: preview.path == "short.md" and preview.loaded)
        assert reads == ["long.md", "short.md"]  # neither read again
        (root / "short.md").write_text("# Short\n\nChanged.\n")
        screen.open_file("short.md")
        await wait_for(pilot, lambda: preview.path == "short.md" and preview.loaded)
        assert reads[-1] == "short.md" and len(reads) == 3  # changed on disk: read again


def test_markdown_rendered_line_for_line_reads_as_a_page():
    """The text view's Markdown: one line per source line, marks gone, code as written."""
    from explorer.tui.widgets.markdown_lines import markdown_lines

    source = (
        "# Guide\n\nSome **bold** and a [link](x.md) and `code`.\n\n- one\n- two\n\n"
        "> quoted *text*\n\n```shell\nkubectl --set controller.service.name=cart\n```\n\n"
        "| a | b |\n|---|---|\n| [[Note\\|label]] | 2 |\n\n"
        "| name | kind | size |\n|:--|:-:|--:|\n| x | yy | 1 |\n| longer | z | 1000 |\n"
    )
    lines = [line.plain for line in markdown_lines(source)]
    assert len(lines) == len(source.split("\n"))
    assert lines[0] == "Guide"
    assert lines[2] == "Some bold and a link and code."
    assert lines[4:6] == ["• one", "• two"]
    assert lines[7] == "▌ quoted text"
    assert lines[9:12] == ["```shell", "kubectl --set controller.service.name=cart", "```"]
    assert lines[13:16] == ["│ a     │ b │", "├───────┼───┤", "│ label │ 2 │"]  # lined up
    assert lines[17:21] == [  # aligned left, centred and right, as the delimiter row says
        "│ name   │ kind │ size │",
        "├────────┼──────┼──────┤",
        "│ x      │  yy  │    1 │",
        "│ longer │  z   │ 1000 │",
    ]


def test_a_long_cell_runs_past_its_column_instead_of_widening_the_table():
    """A column is as wide as nine in ten of its cells: one paragraph in a cell is written as it
    is, and the other rows keep their bars lined up; a table in a quote stays behind its bar, and
    one that opens a list item is lined up after its bullet."""
    from explorer.tui.widgets.markdown_lines import markdown_lines

    rows = [f"| key{n} | value {n} |" for n in range(19)] + ["| long | " + "word " * 100 + "|"]
    source = "| key | value |\n|---|---|\n" + "\n".join(rows) + "\n\n> | q | r |\n> |---|---|\n"
    lines = [line.plain for line in markdown_lines(source)]
    assert len(lines) == len(source.split("\n"))
    rows_drawn = [lines[0], *lines[2:21]]
    assert {line.index("│", 1) for line in rows_drawn} == {8} and lines[1][8] == "┼"
    assert {len(line) for line in rows_drawn} == {20}
    assert lines[21].startswith("│ long  │ word word") and len(lines[21]) > 500
    # Behind the quote's bar, its cells between bars as in any table (its delimiter row too).
    assert lines[23].startswith("▌") and lines[23].count("│") == 3 and "|" not in lines[23]
    assert lines[24].startswith("▌") and ">" not in lines[24]
    in_a_list = "- | a | b |\n  |---|---|\n  | label | 2 |\n"  # a table opening a list item
    assert [line.plain for line in markdown_lines(in_a_list)][:3] == [
        "• │ a     │ b │",
        "  ├───────┼───┤",
        "  │ label │ 2 │",
    ]
    hostile = "| a | b |\n|---|---|\n" + "|" * 20_000 + "\n" + "| x | y |\n" * 20_000
    with at_most_cpu_seconds(5):  # a row of 20,000 bars: the rows are not padded to it
        assert len(markdown_lines(hostile)) == 20_004


def test_a_heading_holding_a_long_run_of_spaces_is_drawn_at_once():
    """A heading's title was found lazily before an optional closing ``#`` run, tried at every
    character of a run of spaces: 20,000 spaces in one heading took 1.7 s to draw."""
    from explorer.tui.widgets.markdown_lines import markdown_lines

    source = "# Left" + " " * 20_000 + "right ##\n## Closed ##\n### Kept#\n"
    with at_most_cpu_seconds(0.5):
        lines = [line.plain.strip() for line in markdown_lines(source)]
    assert lines[0].startswith("Left") and lines[0].endswith("right")
    assert lines[1:3] == ["Closed", "Kept#"]


@pytest.mark.anyio
async def test_the_open_file_reported_by_the_index_unchanged_keeps_its_page_and_find(
    tmp_path, monkeypatch
):
    """The index reports a file it saw for the first time (the initial sync) while the reader
    has it open: unchanged on disk, it is not read again, in the middle of its reading or
    after, and the find in it goes on. Changed on disk, it is read again (the CI of stop 58 saw
    a page read twice when the sync's report came while it loaded)."""
    from explorer.core.live.events import FilesChangedEvent
    from explorer.tui import messages

    root = tmp_path / "docs"
    write(root / "steps.md", "# Steps\n\n" + "".join(f"Step {n} is here.\n\n" for n in range(60)))
    reads = counted_reads(monkeypatch, seconds=0.3)  # a long page: reports come meanwhile
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        preview = screen.preview
        reported = messages.LiveIndexEvent(FilesChangedEvent(frozenset({"steps.md"}), initial=True))
        await wait_settled(pilot)  # the sync's own reports come before the test's
        screen.open_file("steps.md")
        screen.post_message(reported)  # while it is being read
        await wait_for(pilot, lambda: preview.path == "steps.md" and preview.loaded)
        await pilot.pause()
        assert reads == ["steps.md"]
        preview.focus_content()
        await pilot.press("slash", *"step 4", "enter")
        assert preview.finding and len(preview.found) == 11  # 4 and 40-49
        await pilot.press("n")
        marked = preview.found_index
        screen.post_message(reported)  # once shown
        await pilot.pause()
        await pilot.pause()
        assert reads == ["steps.md"]
        assert preview.finding and preview.found_index == marked
        (root / "steps.md").write_text("# Steps\n\nOne step left.\n")
        screen.post_message(messages.LiveIndexEvent(FilesChangedEvent(frozenset({"steps.md"}))))
        await wait_for(pilot, lambda: len(reads) == 2 and preview.loaded)
        assert not preview.finding  # a new page: the find in the old one has ended
        assert "One step left." in preview.text_of(1, 3)


@pytest.mark.anyio
async def test_lines_shown_again_are_not_wrapped_again(monkeypatch):
    """Issue 30 (speed): back and forward show a file's very lines again; the text view keeps
    their wrapped rows (a 345-page PDF took a second to wrap anew at each move)."""
    from textual.app import App
    from textual.content import Content

    class OneView(App):
        def compose(self):
            yield TextView()

    first = [Content("word " * 40) for _ in range(50)]
    second = [Content("other " * 40) for _ in range(50)]
    wraps: list[str] = []
    real_wrap = Content.wrap
    shown = {id(line) for line in first + second}

    def counted(self, width, **kwargs):
        if id(self) in shown:  # a line of the file wrapped (not a row being drawn)
            wraps.append(self.plain[:5])
        return real_wrap(self, width, **kwargs)

    monkeypatch.setattr(Content, "wrap", counted)
    app = OneView()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(TextView)
        view.set_lines(first, first[0].cell_length)
        await pilot.pause()
        assert view.top_line == 1  # laid out at the width left by the scrollbar
        assert wraps and set(wraps) == {"word "}
        view.set_lines(second, second[0].cell_length)
        await pilot.pause()
        assert view.top_line == 1
        wraps.clear()
        view.set_lines(first, first[0].cell_length)  # back
        view.set_lines(second, second[0].cell_length)  # forward
        await pilot.pause()
        assert wraps == []
        assert view.virtual_size.height > 50  # still wrapped


def test_a_result_deep_in_folders_keeps_its_file_name():
    """A vault note four folders deep: the result line cut at its end showed only folders
    ("04. Organized Knowledge - Old Format/Science and Engineering/Mathematics/Comp…"); the
    middle folders give way and the note's name stays."""
    from explorer.core.retrieval.search import FileHit, Passage

    path = (
        "04. Organized Knowledge - Old Format/Science and Engineering/Mathematics/"
        "Computer Science/Artificial Intelligence/Types of Neural Networks.md"
    )
    passage = Passage("c1", "Types", 11, 14, 0, 90, 0.98, "GANs and transformers", [])
    hit = FileHit(path, "Types of Neural Networks", 0.98, [passage])
    for width in (60, 80, 120):
        first = hit_lines(hit, width)[0].plain
        assert first.startswith("0.98 ") and "…/" in first, first
        assert first.endswith("Types of Neural Networks.md"), first
        assert len(first) <= width
    assert hit_lines(hit, 120)[0].plain.startswith("0.98 04. Organized Knowledge - Old Format/…/")


def test_a_result_in_an_api_manual_names_its_entry_and_keeps_it_when_cut():
    """A passage of a manual's page of functions names the entry its words stand in after its
    section; on a narrow pane the sections give way first, and an entry too long alone (a
    Texinfo signature) is cut at its end, so the name stays."""
    from explorer.core.retrieval.search import FileHit, Passage
    from explorer.tui.text_fit import fit_label

    heading = "os — Miscellaneous operating system interfaces > Files and Directories"
    passage = Passage("c1", heading, 2588, 2602, 0, 90, 0.91, "Generate the file names", [])
    passage.entry = "os.walk"
    title = "os — Miscellaneous operating system interfaces"
    hit = FileHit("library/os.html", title, 0.91, [passage])
    wide = [line.plain for line in hit_lines(hit, 120)]
    assert "Files and Directories > os.walk  L2588" in wide[0], wide
    hit.passages.append(Passage("c2", heading, 2600, 2620, 0, 90, 0.8, "Walk the tree", []))
    for width in (40, 50, 60, 80):
        lines = [line.plain for line in hit_lines(hit, width)]
        where = next(line for line in lines if "L2588" in line)
        assert "os.walk  L2588" in where and len(where) <= width, lines
        assert where.endswith(("L2588", "(also L2600)")), lines  # its line whole, not cut
    assert [line.plain for line in hit_lines(hit, 50)][1] == (
        "  Files and Directories > os.walk  L2588"
    )
    assert [line.plain for line in hit_lines(hit, 30)][1] == "  os.walk  L2588  (also L2600)"
    deep = "Library > os > Files and Directories"
    assert fit_label(deep, "os.walk", 36) == "… > Files and Directories > os.walk"
    assert fit_label(deep, "os.walk", 20) == "os.walk"

    signature = "Function: ffi_status ffi_prep_cif (ffi_cif *cif, ffi_abi abi, unsigned int nargs)"
    passage.entry = signature
    lines = [line.plain for line in hit_lines(hit, 60)]
    where = next(line for line in lines if "L2588" in line)
    assert where.startswith("  Function: ffi_status ffi_prep_cif") and "…  L2588" in where, lines
    assert len(where) <= 60


@pytest.mark.anyio
async def test_a_heading_with_markup_reads_as_rendered_in_results_outline_and_title(tmp_path):
    """``### **5. Karma, Determinism**`` (a vault note's heading) showed its asterisks in the
    result's breadcrumb, the outline and the preview's title; a code span its backticks."""
    root = tmp_path / "docs"
    filler = "".join(f"Line {n} of the introduction.\n\n" for n in range(30))
    write(
        root / "religion.md",
        "# The Chat\n\n" + filler + "### **5. Karma, Determinism, and Free Will**\n\n"
        "Karma suggests a balance of cause and effect, like zanzibarian determinism.\n\n"
        + filler
        + "## The `proxy_pass` directive\n\nPasses requests on.\n",
    )
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "zanzibarian")
        [hit] = screen.results.hits
        first = hit_lines(hit, 110)[0].plain
        assert "The Chat > 5. Karma, Determinism, and Free Will  L" in first
        assert "*" not in first
        screen.results.highlighted = 0
        screen.results.open_highlighted()
        preview = screen.preview
        await wait_for(pilot, lambda: preview.loaded, what="the preview")
        await wait_for(pilot, preview.passage_visible, 5, "the passage in view")
        titles = [h.title for h in preview.headings()]
        assert titles == [
            "The Chat",
            "5. Karma, Determinism, and Free Will",
            "The proxy_pass directive",
        ]
        karma = next(h for h in preview.headings() if h.title.startswith("5."))
        preview.go_to_line(karma.line)  # its section at the top: the title names it
        titled = "religion.md › 5. Karma, Determinism, and Free Will"
        await wait_for(pilot, lambda: str(preview.border_title) == titled, 15, "the section")


@pytest.mark.anyio
async def test_the_title_names_the_section_once_the_headings_are_asked_for(tmp_path, monkeypatch):
    """The headings' thread leaves the title to whoever worked them out first: the outline (or
    anything else asking) named no section until the reader scrolled."""
    from explorer.tui.widgets import preview as preview_module

    monkeypatch.setattr(preview_module, "HEADINGS_AFTER", 60)  # the thread never gets there
    root = tmp_path / "docs"
    write(root / "a.md", "# Alpha\n\nSome text.\n\n## Beta\n\nMore text.\n")
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        screen.open_file("a.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await pilot.pause()
        assert not screen.preview.headings_known and str(screen.preview.border_title) == "a.md"
        assert [heading.title for heading in screen.preview.headings()] == ["Alpha", "Beta"]
        assert str(screen.preview.border_title) == "a.md › Alpha"


def test_a_long_pages_front_matter_is_no_heading(tmp_path):
    """A long Markdown page is shown line for line: its front matter, closed by ``---``, read
    as an underlined heading ("title: Policy resources weight: 500 …" named the section in
    the title and led the outline)."""
    from explorer.tui.widgets.preview import file_headings
    from explorer.tui.widgets.preview_loading import load_file

    body = "".join(f"## Part {n}\n\n" + "A line of the part.\n" * 8 + "\n" for n in range(60))
    page = tmp_path / "policy.md"
    page.write_text("---\ntitle: Policy resources\nweight: 500\n---\n\nIntro.\n\n" + body)
    loaded = load_file("policy.md", page)
    assert loaded.kind == "code"  # long: drawn by the text view
    headings = file_headings(loaded)
    assert headings[0].title == "Part 0" and headings[0].line == 8
    assert not any("title" in heading.title for heading in headings)
