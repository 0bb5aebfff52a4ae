"""The help screen (``?``): what explorer shows and every key."""

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

| Key | What it does |
| :-- | :-- |
| `/` | Focus the search box |
| `Escape` / `Down` | Leave the search box for the results |
| `ctrl+t` | Cycle the search mode: hybrid → semantic → keyword |
| `ctrl+f` | Focus the path filter field |
| `ctrl+p` | Go to a file by name (fuzzy) |
| `Enter` | Open the highlighted file or result |
| `n` / `N` | Next / previous matched passage in the preview |
| `e` | Edit the open file in `$EDITOR` |
| `ctrl+r` | Show or hide the sidebar (links and related files) |
| `Tab` / `shift+Tab` | Move between panes |
| `F1` | Command palette (every action, themes) |
| `?` | This help |
| `ctrl+q` | Quit |

## Searching

- Type to search; results follow every keystroke.
- `path:guides/` in the query (or the filter field) keeps only files under `guides/`;
  globs work too: `path:**/*.py`.
- `tag:backup` and `version:1.5` keep only files whose front matter says so; quote a value
  with spaces: `tag:"Data, AI"`.
- While the model loads, keyword results show first; hybrid results replace them when it is
  ready. The status bar says which mode answered.

## File marks

`●` indexed (fresh) · `◌` pending (keyword-searchable, vectors coming) · `⊘` skipped · `✗` failed

Press `Escape` or `?` to close.
"""


class HelpScreen(ModalScreen[None]):
    """A modal page of help."""

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", show=True),
    ]

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # its parser is slow to import: only when asked

        with VerticalScroll(id="help-dialog"):
            yield Markdown(HELP, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-dialog").border_title = "Help"

    def action_close(self) -> None:
        self.dismiss(None)
