"""The preview's Markdown parser: Textual's own, plus Obsidian's wikilinks shown as links.

CommonMark leaves ``[[Note|text]]`` as bracketed text, so a vault's notes would read with their
brackets and nothing to click. Here a wikilink becomes a link whose text is what Obsidian shows
(the display text, else the note's name) and whose destination is the link as the index stores
it (``[[Note#Heading]]``): a click asks the screen to follow it like any other link, resolved by
name as ``explorer links`` does (:mod:`explorer.tui.link_following`). An embed (``![[x]]``) is
shown the same way. Nothing inside a code span or block changes: the rule is an inline rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.core.ingest.markdown_tokens import match_wikilink

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline


def preview_parser() -> MarkdownIt:
    """Textual's parser (``gfm-like``) with wikilinks as links."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("gfm-like")
    parser.inline.ruler.before("link", "wikilink", _wikilink_as_link)
    return parser


def _wikilink_as_link(state: StateInline, silent: bool) -> bool:
    found = match_wikilink(state.src, state.pos, state.posMax)
    if found is None:
        return False
    if not silent:
        opened = state.push("link_open", "a", 1)
        opened.attrs = {"href": found.markup}
        state.push("text", "", 0).content = found.text
        state.push("link_close", "a", -1)
    state.pos = found.end
    return True
