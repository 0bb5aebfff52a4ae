"""The help screen (``?``): what explorer shows and every key, grouped by pane (the table
comes from the widgets' bindings, :mod:`explorer.tui.keys`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

HELP = """\
# explorer

Search a folder of docs, notes and code by **keyword** (BM25) and by **meaning** (embeddings),
and see each file's links, backlinks and related files. The index follows the folder live:
edit, add, move or delete files and the tree, the results and the sidebar follow.

## Keys

{keys}

## Searching

- Type to search; results follow every keystroke.
- `path:guides/` in the query (or the filter field) keeps only files under `guides/`;
  globs work too: `path:**/*.py`.
- `tag:backup` and `version:1.5` keep only files whose front matter says so; quote a value
  with spaces: `tag:"Data, AI"`.
- While the model loads, keyword results show first; hybrid results replace them when it is
  ready. The status bar says which mode answered.
- What a score means depends on the mode (the results' border says it): in hybrid, 0.5 is an
  average match for this query; in semantic, closeness in meaning (cosine); in keyword, BM25
  divided by the best. Scores compare within one query and mode, not across modes.
- A full page ends with "more results": moving past it brings the next page.

## Keys you can trust

- Esc from any pane leads back to the search box (a find, a picker or a zoom closes first);
  there typing searches, and Esc stays.
- Every key goes to the pane focused when it was pressed, even several in one go.
- Handing the file to another program takes a control key: `ctrl+o` opens it with the
  system's application, `ctrl+e` in `$EDITOR`; `ctrl+q` quits.

## Reading and coming back

- The preview reads like a pager: `j`/`k`, space/`b`, `g`/`G`; `/` finds in the page and
  `n`/`N` step *down or up from where you are*, as in less and vim. Its border tells the
  lines in view.
- `f` lists the page's links (type to narrow, Enter follows one, to its heading or block).
- `alt+left`/`alt+right` (or `[`/`]`) go back and forward over the places you read, also
  after a restart; `ctrl+y` lists the recent files.
- Each folder reopens where you left it: the query, the mode, the filters, the open file and
  the place in it. Up in the search box brings back earlier queries. "Stop remembering
  sessions" in the command palette (or `EXPLORER_NO_SESSION=1`) turns this off.
- Narrow terminals hide the tree (below 120 columns), then the sidebar (below 80); `F2` and
  `ctrl+r` show them again, and `z` gives the focused pane the whole screen.

## File marks

`●` indexed (fresh) · `◌` pending (keyword-searchable, vectors coming) · `⊘` skipped · `✗` failed

Press `Escape` or `?` to close.
"""


class HelpScreen(ModalScreen[None]):
    """A modal page of help."""

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", show=True),
    ]

    def __init__(self, key_tables: str) -> None:
        super().__init__()
        self.key_tables = key_tables
        """Every key, one table per pane (:func:`explorer.tui.keys.markdown_tables`)."""

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # its parser is slow to import: only when asked

        with VerticalScroll(id="help-dialog"):
            yield Markdown(HELP.format(keys=self.key_tables), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-dialog").border_title = "Help"

    def action_close(self) -> None:
        self.dismiss(None)
