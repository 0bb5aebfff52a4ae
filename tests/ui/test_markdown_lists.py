"""The preview draws a Markdown page's lists as text: the same page a reader saw with Textual's
widget, with a widget per run of items instead of four per item, and links still clicked."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from explorer.tui.app import make_app
from explorer.tui.widgets.markdown_blocks import ListItemsBlock, PreviewMarkdown
from explorer.tui.widgets.markdown_parser import preview_parser
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.ui.conftest import wait_for
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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
async def test_a_link_in_a_list_item_is_followed_with_the_mouse(tmp_path):
    root = write_files(
        tmp_path / "notes",
        {
            "index.md": "# Index\n\n- the first note\n- read [the second note](second.md) next\n",
            "second.md": "# Second\n\nThe second note.\n",
        },
    )
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_for(
            pilot,
            lambda: screen.index is not None and screen.index.keywords.file("index.md"),
            20,
            "the folder to be indexed",
        )
        screen.open_file("index.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await pilot.pause()
        rows = screen_lines(app)
        row = next(i for i, line in enumerate(rows) if "read the second note next" in line)
        column = rows[row].index("the second note") + 4
        await pilot.click(offset=(column, row))
        await wait_for(pilot, lambda: screen.current_path == "second.md", what="the link")
