"""Links clicked in the preview lead where the folder's publisher sends them: on a Hugo site a
page's relative link is read from the page's URL, as `explorer links` reads it."""

from __future__ import annotations

import pytest
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock

from explorer.tui.app import make_app
from explorer.tui.widgets.markdown_parser import preview_parser
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.ui.conftest import wait_for, wait_indexed

SITE = {
    "hugo.toml": 'baseURL = "https://example.org/"\n',
    "content/_index.md": "# Home\n",
    "content/docs/languages/java/sdk.md": (
        "# SDK\n\nSee [the API](../api/), [the collector](/docs/collector/) "
        "and [a page that is gone](../gone/).\n"
    ),
    "content/docs/languages/java/api.md": "# Java API\n",
    "content/docs/languages/api.md": "# Not this one\n",
    "content/docs/collector/_index.md": "# Collector\n",
}


async def click(pilot, screen, href: str) -> None:
    """A click on the link written ``href`` in the rendered page: Textual's Markdown widget
    posts LinkClicked with the destination as written."""
    markdown = screen.preview.query_one(Markdown)
    markdown.post_message(Markdown.LinkClicked(markdown, href))
    await pilot.pause()


async def open_when_indexed(pilot, screen, path: str) -> None:
    """Open ``path`` in the preview once the folder is indexed (its links resolved)."""
    await wait_indexed(pilot, screen, path)
    screen.open_file(path)
    await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")


@pytest.mark.anyio
async def test_a_clicked_link_opens_the_page_its_route_serves(tmp_path):
    root = write_files(tmp_path / "site", SITE)
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        sdk = "content/docs/languages/java/sdk.md"
        await open_when_indexed(pilot, screen, sdk)

        await click(pilot, screen, "../api/")  # the page is served at /docs/languages/java/sdk/
        await wait_for(pilot, lambda: screen.current_path == "content/docs/languages/java/api.md")

        screen.action_back()
        await wait_for(pilot, lambda: screen.current_path == sdk, what="back to the SDK page")
        await click(pilot, screen, "/docs/collector/")
        await wait_for(pilot, lambda: screen.current_path == "content/docs/collector/_index.md")

        screen.action_back()
        await wait_for(pilot, lambda: screen.current_path == sdk, what="back to the SDK page")
        await click(pilot, screen, "../gone/")
        await wait_for(
            pilot,
            lambda: any("leads nowhere: ../gone/" in str(n.message) for n in app._notifications),
            what="the note that the link leads nowhere",
        )
        assert screen.current_path == sdk


VAULT = {
    ".obsidian/app.json": "{}\n",
    "Home.md": "# Home\n\nStart with [[Daily notes|the dailies]] or [[Recipes#Bread]].\n",
    "journal/Daily notes.md": "# Daily notes\n\nWhat happened today.\n",
    "kitchen/Recipes.md": "# Recipes\n\n## Bread\n\nFlour and water.\n",
}


@pytest.mark.anyio
async def test_a_vaults_wikilinks_read_as_links_and_open_their_notes(tmp_path):
    root = write_files(tmp_path / "vault", VAULT)
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await open_when_indexed(pilot, screen, "Home.md")
        markdown = screen.preview.query_one(Markdown)
        shown = " ".join(block._content.plain for block in markdown.query(MarkdownBlock))
        assert "Start with the dailies or Recipes#Bread." in shown  # as Obsidian shows them
        assert "[[" not in shown

        await click(pilot, screen, "[[Daily notes]]")  # the link as the page now carries it
        await wait_for(pilot, lambda: screen.current_path == "journal/Daily notes.md")
        screen.action_back()
        await wait_for(pilot, lambda: screen.current_path == "Home.md", what="back home")
        await click(pilot, screen, "[[Recipes#Bread]]")
        await wait_for(pilot, lambda: screen.current_path == "kitchen/Recipes.md")


def test_the_preview_parser_gives_a_wikilink_its_stored_form_as_destination():
    """The destination a click hands back is the reference as the index stores it, so the
    screen finds it among the note's links; code keeps its brackets."""
    tokens = preview_parser().parseInline("See [[Daily notes|the dailies]], ![[cat.png]], `[[x]]`.")
    children = tokens[0].children
    links = [
        (t.attrs["href"], children[i + 1].content)
        for i, t in enumerate(children)
        if t.type == "link_open"
    ]
    assert links == [("[[Daily notes]]", "the dailies"), ("![[cat.png]]", "cat.png")]
    assert [t.content for t in children if t.type == "code_inline"] == ["[[x]]"]
