"""The preview draws a Markdown page's lists and tables as text: the page a reader saw with
Textual's widget, with a widget per run of items instead of four per item and one per table
instead of one per cell, and links still clicked."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from explorer.tui.app import make_app
from explorer.tui.widgets.markdown_blocks import ListItemsBlock, PreviewMarkdown, TableBlock
from explorer.tui.widgets.markdown_parser import preview_parser
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds
from tests.ui.conftest import wait_for, wait_indexed
from tests.ui.test_document_preview import screen_lines

LISTS = """# Lists

A paragraph before the lists, with a [link](other.md).

- First item with `code`, **bold**, *emphasis* and a sentence long enough to wrap \
under its own first word, not under the bullet, when the pane is narrow
- Second item
  - nested one
  - nested two

    9. deep, numbered from nine
    10. deep ten, its number right-aligned with nine's
- Third item

  Its second paragraph, under the text.
-
- [ ] a task
- [x] a task done

1. Step one
2. Step two, with code:

   ```sh
   make run
   ```

3. Step three, after the code
4.  - a list straight after the number
    - and its second item

Closing paragraph.
"""


class OneMarkdown(App[None]):
    def __init__(self, widget: type[Markdown], text: str) -> None:
        super().__init__()
        self.widget, self.text = widget, text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.widget(self.text, open_links=False, parser_factory=preview_parser)


async def drawn(widget: type[Markdown], text: str, width: int) -> list[str]:
    app = OneMarkdown(widget, text)
    async with app.run_test(size=(width, 60)) as pilot:
        await pilot.pause()
        await pilot.pause()
        return [line.rstrip() for line in screen_lines(app)]


@pytest.mark.anyio
@pytest.mark.parametrize("width", [40, 100])
async def test_lists_read_as_textuals_widget_draws_them(width):
    ours = await drawn(PreviewMarkdown, LISTS, width)
    assert ours == await drawn(Markdown, LISTS, width)
    text = "\n".join(ours)
    assert "• First item" in text and "▪ nested two" in text and "10. deep ten" in text
    if width == 40:  # the first item wraps, its second row under its first word
        first = next(i for i, line in enumerate(ours) if "• First item" in line)
        assert ours[first + 1].startswith(" " * (ours[first].index("•") + 2))
        assert ours[first + 1].strip()


@pytest.mark.anyio
async def test_a_long_list_is_one_widget_not_four_per_item():
    items = "\n".join(f"- item {n} with [a link](page{n}.md)" for n in range(200))
    app = OneMarkdown(PreviewMarkdown, f"# Changelog\n\n{items}\n\n1. one\n2. two\n")
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        markdown = app.query_one(PreviewMarkdown)
        assert len(markdown.query("*")) <= 6  # the heading, two lists, a block of items each
        items = markdown.query(ListItemsBlock).first()
        assert items.size.height == 200  # an item a row


@pytest.mark.anyio
async def test_a_link_in_a_list_item_or_a_table_cell_is_followed_with_the_mouse(tmp_path):
    root = write_files(
        tmp_path / "notes",
        {
            "index.md": (
                "# Index\n\n- the first note\n- read [the second note](second.md) next\n\n"
                "| note | why |\n|---|---|\n| [the third note](third.md) | later |\n"
            ),
            "second.md": "# Second\n\nThe second note.\n",
            "third.md": "# Third\n\nThe third note.\n",
        },
    )
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_indexed(pilot, screen, "index.md")
        screen.open_file("index.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await pilot.pause()
        rows = screen_lines(app)
        row = next(i for i, line in enumerate(rows) if "read the second note next" in line)
        column = rows[row].index("the second note") + 4
        await pilot.click(offset=(column, row))
        await wait_for(pilot, lambda: screen.current_path == "second.md", what="the link")

        screen.action_back()
        await wait_for(pilot, lambda: screen.current_path == "index.md", what="back")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await pilot.pause()
        rows = screen_lines(app)
        row = next(i for i, line in enumerate(rows) if "the third note" in line)
        await pilot.click(offset=(rows[row].index("the third note") + 4, row))
        await wait_for(pilot, lambda: screen.current_path == "third.md", what="the cell's link")


TABLES = """# Tables

| Directive | Context | Default | Description |
|---|---|---|---|
| `proxy_pass` | location, if in location | none | Sets the protocol and address of a \
proxied server and an optional URI to which a location should be mapped. |
| `proxy_buffering` | http, server, location | on | Enables or disables buffering. |
| `x` | | | |

| only a header |
|---|

| name | size | kind |
|:---|---:|:---:|
| a | 1 | x |
| longer name | 1000 | wide kind |
"""


def table_rows(lines: list[str]) -> list[list[str]]:
    """Each table drawn on the screen, as its lines (from a top corner to a bottom one)."""
    tables, table = [], None
    for line in lines:
        text = line.strip()
        if text.startswith("┌"):
            table = [text]
        elif table is not None:
            table.append(text)
            if text.startswith("└"):
                tables.append(table)
                table = None
    return tables


@pytest.mark.anyio
async def test_a_table_whose_cells_fit_reads_as_textuals_widget_draws_it():
    plain = TABLES.split("| name |")[0]  # Textual ignores a column's alignment
    assert await drawn(PreviewMarkdown, plain, 220) == await drawn(Markdown, plain, 220)


@pytest.mark.anyio
@pytest.mark.parametrize("width", [34, 60, 100])
async def test_a_narrowed_table_wraps_its_cells_inside_lined_up_columns(width):
    lines = await drawn(PreviewMarkdown, TABLES, width)
    tables = table_rows(lines)
    assert len(tables) == 3
    for table in tables:
        bars = {tuple(i for i, char in enumerate(row) if char in "│┌┐└┘├┤┬┴┼") for row in table}
        assert len(bars) == 1  # every row's lines stand in the same columns
        assert all(len(row) <= width - 4 for row in table)  # inside the pane
    cells = [row.split("│") for row in tables[0] if "│" in row]
    description = " ".join(" ".join(row[4].split()) for row in cells)
    if width >= 60:  # every column as wide as its longest word: every word whole
        assert "Sets the protocol and address of a proxied server" in description
    else:  # not even the longest words fit: a word too long for its cell is cut short
        assert "Sets the pro… and" in description
    if width < 100:  # the description wraps in its column
        assert sum(bool(row[4].strip()) for row in cells) > 4
    name, size, kind = zip(*[row.split("│")[1:4] for row in tables[2] if "│" in row], strict=True)
    assert all(cell.startswith(" ") and cell.endswith(" ") for cell in size + kind)
    assert size[1].endswith("1 ") and size[2].endswith("1000 ")  # right-aligned
    assert size[0].endswith("size ")
    assert kind[1].strip() == "x" and abs(kind[1].index("x") - len(kind[1]) // 2) <= 1


@pytest.mark.anyio
async def test_a_table_is_one_widget_not_one_per_cell():
    rows = "\n".join(f"| row {n} | {n * n} | [link](p{n}.md) |" for n in range(100))
    app = OneMarkdown(PreviewMarkdown, f"| a | b | c |\n|---|---|---|\n{rows}\n")
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        markdown = app.query_one(PreviewMarkdown)
        assert len(markdown.query("*")) == 1
        assert markdown.query_one(TableBlock).size.height == 3 + 2 * 100  # a line between rows


@pytest.mark.anyio
async def test_a_large_table_opens_and_narrows_in_bounded_work():
    """A grid of 40 columns and 150 rows (under the preview's limits for the widget): Textual's
    table took 17.6 s of it here, drawing 6,040 cells as widgets."""
    grid = "|" + "h|" * 40 + "\n|" + "-|" * 40 + "\n" + ("|" + "c|" * 40 + "\n") * 150
    with at_most_cpu_seconds(6, "a 40 x 150 table opened and laid out at two widths"):
        app = OneMarkdown(PreviewMarkdown, grid)
        async with app.run_test(size=(100, 40)) as pilot:
            await pilot.pause()
            await pilot.resize_terminal(60, 40)
            await pilot.pause()
            assert app.query_one(TableBlock).size.height == 3 + 2 * 150


@pytest.mark.anyio
async def test_a_narrowed_cell_of_chinese_or_japanese_wraps_between_characters():
    """A run of Japanese has no spaces: cut short at its cell's edge, a reader lost the rest of
    the sentence (Textual's table cuts it so). It breaks between characters, as a line does."""
    sentence = "このオプションはサーバーの動作を変更します。長い説明文がここに入ります。"
    text = f"| 名前 | 説明 |\n|---|---|\n| 設定ファイル | {sentence} |\n"
    lines = await drawn(PreviewMarkdown, text, 50)
    cells = [row.split("│") for row in table_rows(lines)[0] if "│" in row]
    assert "".join(row[2].strip() for row in cells) == "説明" + sentence
    assert "".join(row[1].strip() for row in cells) == "名前設定ファイル"
    assert all(cell_len(row) <= 46 for row in table_rows(lines)[0])


WRAPS = "and a sentence after it, long enough to wrap in the preview's column"
REFERENCE = (
    "# Reference\n\nEvery setting, one a row.\n\n| setting | meaning |\n|---|---|\n"
    + "".join(f"| `setting_{n}` | what setting {n} does, {WRAPS} |\n" for n in range(100))
    + "\n## Flags\n\n"
    + "".join(f"- `--flag-{n}`: what flag {n} does\n" for n in range(150))
)


def background(app, text: str):
    """The background of the screen under ``text`` (Textual's compositor: private, so this
    fails loudly if it changes)."""
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            if text in segment.text:
                return segment.style.bgcolor
    raise AssertionError(f"not on screen: {text}")


@pytest.mark.anyio
async def test_a_passage_deep_in_a_long_table_or_list_is_shown_on_its_own_row(tmp_path):
    """A result in the 80th row of a table, or the 130th item of a list, is on screen when
    the page opens at it (the table's top was: the row itself lay 300 rows below), the border
    names its line, its own rows are marked, ``n`` steps from row to row, and find goes to the
    row it found."""
    root = write_files(tmp_path / "docs", {"reference.md": REFERENCE})
    lines = REFERENCE.split("\n")
    row = lines.index(f"| `setting_80` | what setting 80 does, {WRAPS} |") + 1
    item = lines.index("- `--flag-130`: what flag 130 does") + 1
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    # At this size the preview's scrollbar comes with the layout after the page is shown,
    # narrowing the table: its rows wrap again and the row moves after the scroll.
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        preview = screen.preview
        await wait_indexed(pilot, screen, "reference.md")
        for line, shown, after in (
            (row, "what setting 80 does", "what setting 81 does"),
            (item, "what flag 130 does", "what flag 131 does"),
        ):
            screen.open_file("reference.md", passages=[(line, line)])
            await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
            await pilot.pause()
            assert any(shown in text for text in screen_lines(app))
            assert preview.position() == line  # the view's top line is the passage's
            assert f"L{line}" in str(preview.border_subtitle)
            # Its rows are marked, not the whole table or list: the next row is not.
            assert background(app, shown) != background(app, after)
            assert len(preview.marked_blocks()) == 1

        first = lines.index(f"| `setting_20` | what setting 20 does, {WRAPS} |") + 1
        screen.open_file("reference.md", passages=[(first, first), (row, row)])
        await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
        assert preview.position() == first
        preview.action_next_passage()  # n: to the next passage, 60 rows down the same table
        await pilot.pause()
        assert preview.position() == row and preview.passage_visible()
        assert any("what setting 80 does" in text for text in screen_lines(app))

        preview.focus_content()
        preview.action_ends(-1)
        await pilot.pause()
        preview.find("setting 90 does")
        await pilot.pause()
        assert preview.found == [
            lines.index(f"| `setting_90` | what setting 90 does, {WRAPS} |") + 1
        ]
        assert any("what setting 90 does" in text for text in screen_lines(app))


RULED = """Before the answer.

> The answer's first part.
>
> ---
>
> Its second part, after a rule.

- An item.

  ---

  The item's text after its rule.

After the answer.
"""


@pytest.mark.anyio
async def test_a_rule_inside_a_quote_or_a_list_item_stays_where_it_is():
    """Textual draws every rule at the top of the page: a quote holding one (an answer pasted
    into a note, its parts between rules) was drawn below its own rule, out of order."""
    rows = await drawn(PreviewMarkdown, RULED, 60)

    def row_of(text: str) -> int:
        return next(n for n, row in enumerate(rows) if text in row)

    rules = [n for n, row in enumerate(rows) if "────" in row]
    assert len(rules) == 2
    assert row_of("first part") < rules[0] < row_of("second part") < row_of("An item")
    assert "▌" in rows[rules[0]]  # drawn inside the quote, with its border
    assert row_of("An item") < rules[1] < row_of("after its rule") < row_of("After the answer")


QUOTED = (
    "# Collected notes\n\nCopied from a course, the whole of it quoted.\n\n"
    + "\n>\n".join(
        f"> Paragraph {n} opens on this line, about subject {n} of the course notes,\n"
        f"> goes on over a second line of the same paragraph {n},\n"
        f"> and ends on a third line of paragraph {n}."
        for n in range(60)
    )
    + "\n\n"
    + " \n".join(
        f"Sentence {n} of one long paragraph, hard-wrapped like the rest" for n in range(90)
    )
    + ".\n\nAfter.\n"
)


@pytest.mark.anyio
async def test_a_passage_deep_in_a_long_quote_or_paragraph_is_shown_where_it_is(tmp_path):
    """A note quoted whole (a vault's copied course notes: 2,100 lines in one quote) opened
    every result at the quote's top and marked all of it; a long paragraph, at its top."""
    root = write_files(tmp_path / "docs", {"notes.md": QUOTED})
    lines = QUOTED.split("\n")
    quoted = lines.index("> Paragraph 45 opens on this line, about subject 45 of the course notes,")
    first = lines.index("> Paragraph 10 opens on this line, about subject 10 of the course notes,")
    sentence = next(n for n, text in enumerate(lines) if text.startswith("Sentence 80 of"))
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        preview = screen.preview
        await wait_indexed(pilot, screen, "notes.md")
        for line, shown in ((quoted + 1, "Paragraph 45 opens"), (sentence + 1, "Sentence 80 of")):
            screen.open_file("notes.md", passages=[(line, line + 1)])
            await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
            await pilot.pause()
            text = screen_lines(app)
            assert any(shown in row for row in text)
            assert not any("Paragraph 3 " in row for row in text)  # the quote's top
            assert line - 1 <= preview.position() <= line  # the view's top line
        # Only the quoted paragraph is marked, not the whole quote.
        screen.open_file("notes.md", passages=[(quoted + 1, quoted + 3)])
        await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
        await pilot.pause()
        assert len(preview.marked_blocks()) == 1
        assert background(app, "Paragraph 45 opens") != background(app, "Paragraph 46 opens")

        screen.open_file("notes.md", passages=[(first + 1, first + 3), (quoted + 1, quoted + 3)])
        await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
        assert any("Paragraph 10 opens" in row for row in screen_lines(app))
        preview.action_next_passage()  # n: to the next passage, 35 paragraphs down the quote
        await pilot.pause()
        assert preview.passage_visible()
        assert any("Paragraph 45 opens" in row for row in screen_lines(app))


@pytest.mark.anyio
async def test_each_line_of_a_quote_reads_back_from_the_row_it_starts_on():
    """Where a line of a long quote is drawn and which line a row shows agree: the border's
    range of lines and a return to a place read the rows back as lines."""
    app = OneMarkdown(PreviewMarkdown, QUOTED)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        markdown = app.query_one(PreviewMarkdown)
        lines = QUOTED.split("\n")
        opening = [n for n, text in enumerate(lines) if text.startswith("> Paragraph")]
        rows = [markdown.y_of(line) for line in opening]
        assert all(row is not None for row in rows[1:])
        assert rows[1:] == sorted(rows[1:]) and len(set(rows[1:])) == len(rows) - 1
        assert [markdown.line_at(row) for row in rows[1:]] == opening[1:]


@pytest.mark.anyio
async def test_the_rows_between_a_quotes_blocks_read_as_the_next_ones_line():
    """The blank rows around a heading inside a quote are no block's: they read as the line
    of the block below them (as between the page's own blocks), not as a line somewhere in
    the quote (a page's top row there set where a zoom came back to)."""
    page = "Intro.\n\n" + "\n>\n".join(
        f"> ## Part {n}\n>\n> Text of part {n}, one line." for n in range(6)
    )
    app = OneMarkdown(PreviewMarkdown, page + "\n")
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        markdown = app.query_one(PreviewMarkdown)
        lines = page.split("\n")
        for n in range(1, 6):
            heading = lines.index(f"> ## Part {n}")
            row = markdown.y_of(heading)
            assert row is not None and markdown.line_at(row) == heading
            assert markdown.line_at(row - 1) == heading  # the heading's margin above it
            assert markdown.line_at(row - 2) == heading


@pytest.mark.anyio
async def test_a_passage_deep_in_a_long_code_block_is_shown_on_its_line(tmp_path):
    """A configuration example of 120 lines: a result on its 100th line opened at the code
    block's first line, the line itself off screen, and the whole block was marked."""
    code = "".join(f"setting_{n} value_{n};\n" for n in range(120))
    page = f"# Example\n\nThe whole file:\n\n```nginx\n{code}```\n\nAfter it.\n"
    root = write_files(tmp_path / "docs", {"example.md": page})
    line = page.split("\n").index("setting_100 value_100;") + 1
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        preview = screen.preview
        await wait_indexed(pilot, screen, "example.md")
        screen.open_file("example.md", passages=[(line, line)])
        await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
        await pilot.pause()
        assert any("setting_100 value_100;" in text for text in screen_lines(app))
        assert preview.position() == line
        # Its line is marked, not the whole block: the next line is not.
        assert background(app, "value_100") != background(app, "value_101")
        assert len(preview.marked_blocks()) == 1


@pytest.mark.anyio
async def test_the_rows_around_a_code_blocks_lines_read_as_its_first_and_last_line():
    """The blank rows a code block draws above and below its code belong to it: the border's
    range of lines in view ended at the block's first line when its last row was one."""
    page = "Text.\n\n```\none\ntwo\nthree\n```\n\nAfter.\n"
    app = OneMarkdown(PreviewMarkdown, page)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        markdown = app.query_one(PreviewMarkdown)
        first, last = 3, 5  # "one" and "three", 0-based
        assert markdown.line_at(markdown.y_of(first)) == first
        assert markdown.line_at(markdown.y_of(first) - 1) == first  # the row above the code
        assert markdown.line_at(markdown.y_of(last) + 1) == last  # the row below it


@pytest.mark.anyio
async def test_a_heading_opened_from_a_result_is_the_views_top_row(tmp_path):
    """Opening sample_docs' webhooks page at its retries section showed the end of the
    paragraph above the heading at the top while the border said the view began at the
    heading: the page's rows moved once it was laid out (its scrollbar came), after the scroll."""
    text = (Path(__file__).parents[2] / "sample_docs" / "api" / "webhooks.md").read_text()
    lines = text.split("\n")
    heading = lines.index("## Responding, retries and ordering") + 1
    root = write_files(tmp_path / "docs", {"webhooks.md": text})
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        preview = screen.preview
        await wait_indexed(pilot, screen, "webhooks.md")
        screen.open_file("webhooks.md", passages=[(heading, heading + 11)])
        await wait_for(pilot, lambda: preview.loaded and preview.passage_visible(), 10)
        await pilot.pause()
        await pilot.pause()
        shown = screen_lines(app)
        assert any("Responding, retries and ordering" in row for row in shown)
        assert not any("timestamps older than five minutes" in row for row in shown)
        assert preview.position() == heading


@pytest.mark.anyio
async def test_a_page_opened_at_a_line_between_blocks_shows_the_block_before_it(tmp_path):
    """A line between two blocks (a link or a place that names a blank line) belongs to no
    block: the page opened at its top. It opens at the block before the line now."""
    page = "# Long\n\n" + "".join(f"## Part {n}\n\nText of part {n}.\n\n" for n in range(80))
    lines = page.split("\n")
    heading = lines.index("## Part 49") + 1
    assert lines[heading] == ""  # the line after the heading is blank
    root = write_files(tmp_path / "docs", {"long.md": page})
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await wait_indexed(pilot, screen, "long.md")
        screen.open_file("long.md", line=heading + 1)
        await wait_for(pilot, lambda: screen.preview.loaded, 10)
        await pilot.pause()
        assert screen.preview.position() == heading
        assert any("Part 49" in row for row in screen_lines(app))
