"""Fitting names, paths and passages into narrow panes: cut in the middle with an ellipsis,
never inside a word where a break is possible, and Markdown shown as the words it renders to.

Pure functions (no widget), shared by the sidebar lists, the tree and the results.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

from explorer.core.ingest.formats import format_for
from explorer.core.ingest.formats.preview_markup import wikilink_labels

ELLIPSIS = "…"
_SHORTCODE = re.compile(r"\{\{[<%].*?[%>]\}\}", re.DOTALL)
"""A Hugo shortcode, opening or closing: ``{{% note %}}``, ``{{< /tab >}}``."""
_REFERENCE_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")
"""A reference-style link whose definition is not in the passage: ``[Authenticators][]``."""
_FENCE = re.compile(r"^[ \t]*(```|~~~).*$", re.MULTILINE)
"""A fence line, with the spaces before it on its line (not ``\\s*``: from each blank line it ran
on across all those below, 3 s for a passage of 16,000 blank lines)."""


def fit_name(name: str, width: int) -> str:
    """``name`` cut in the middle (``2026-03-…review.md``) to at most ``width`` cells."""
    if cell_len(name) <= width or width < 3:
        return name
    keep = width - 1
    head, tail = name[: (keep + 1) // 2], name[len(name) - keep // 2 :]
    while cell_len(head) + cell_len(tail) + 1 > width and (head or tail):
        head, tail = (head[:-1], tail) if len(head) >= len(tail) else (head, tail[1:])
    return f"{head}{ELLIPSIS}{tail}"


def fit_label(heading: str, entry: str, width: int) -> str:
    """``heading > entry`` in at most ``width`` cells: the heading gives up its outer
    sections first (``… > Files and Directories > os.walk``), then goes; an entry too long
    alone (a Texinfo signature) is cut at its end."""
    label = f"{heading} > {entry}" if heading else entry
    if cell_len(label) <= width:
        return label
    parts = heading.split(" > ") if heading else []
    for first in range(1, len(parts)):
        label = f"{ELLIPSIS} > {' > '.join(parts[first:])} > {entry}"
        if cell_len(label) <= width:
            return label
    if cell_len(entry) <= width:
        return entry
    cut = entry[: max(width - 1, 0)]
    while cut and cell_len(cut) > width - 1:
        cut = cut[:-1]
    return f"{cut}{ELLIPSIS}"


def middle_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` cells, shortened in the middle: the first folder, then
    as many of the folders next to the file as fit (``nginx/…/http/proxy.md``), whole names
    only; without room for the first folder ``…/http/proxy.md``; a name too long for the width
    is itself cut in the middle."""
    if cell_len(path) <= width:
        return path
    parts = path.split("/")
    if len(parts) == 1:
        return fit_name(path, width)
    for head in (f"{parts[0]}/{ELLIPSIS}/", f"{ELLIPSIS}/"):
        tail = parts[-1]
        if cell_len(head + tail) > width:
            continue
        for folder in reversed(parts[1:-1] if head != f"{ELLIPSIS}/" else parts[:-1]):
            if cell_len(f"{head}{folder}/{tail}") > width:
                break
            tail = f"{folder}/{tail}"
        return head + tail
    return fit_name(parts[-1], width)


def distinct_paths(paths: list[str], width: int) -> list[str]:
    """Each of ``paths`` shortened like :func:`middle_path`, except where two would read alike:
    those keep the first folder that tells them apart (``nginxaas/…/google/…/rules.md`` and
    ``nginxaas/…/overview/…/rules.md``) when it fits the width."""
    plain = [middle_path(path, width) for path in paths]
    shown = list(plain)
    for number, path in enumerate(paths):
        alike = [
            other for i, other in enumerate(paths) if i != number and plain[i] == plain[number]
        ]
        if not alike:
            continue
        folders = path.split("/")[:-1]
        theirs = [set(other.split("/")[:-1]) for other in alike]
        telling = next((f for f in folders if any(f not in them for them in theirs)), None)
        if telling is None:  # its folders are all in the other's too: where they part
            telling = _where_they_part(folders, [other.split("/")[:-1] for other in alike])
        if telling is None:
            continue
        name = path.rsplit("/", 1)[-1]
        for head in (f"{folders[0]}/{ELLIPSIS}/", f"{ELLIPSIS}/", ""):
            if telling == folders[0] and head:
                continue
            candidate = f"{head}{telling}/{ELLIPSIS}/{name}"
            if cell_len(candidate) <= width:
                shown[number] = candidate
                break
        else:  # no room for the whole name beside the telling folder: the name is cut
            prefix = f"{ELLIPSIS}/{fit_name(telling, max(3, width // 3))}/{ELLIPSIS}/"
            if width - cell_len(prefix) >= 5:
                shown[number] = prefix + fit_name(name, width - cell_len(prefix))
    return shown


def _where_they_part(folders: list[str], others: list[list[str]]) -> str | None:
    """The folder of ``folders`` at the first place where one of ``others`` differs."""
    for position, folder in enumerate(folders):
        if any(position >= len(other) or other[position] != folder for other in others):
            return folder
    return None


def wrap_path(path: str, width: int) -> list[str]:
    """``path`` on lines of at most ``width`` cells, broken only after a ``/``; a folder or
    name too long for a line of its own is cut in the middle."""
    parts = [part + "/" for part in path.split("/")[:-1]] + [path.rsplit("/", 1)[-1]]
    lines: list[str] = []
    line = ""
    for part in parts:
        part = fit_name(part, width)
        if line and cell_len(line + part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return lines


def plain_passage(text: str, path: str) -> str:
    """A passage as plain words on one line.

    Markdown (of a file whose text is Markdown, or written like it: a notebook, an HTML page's
    or a DOCX's text, as the format registry says) is rendered to its text, so ``**bold**``,
    ``[links](url)``, ``[references][]`` and ``#`` marks do not show, and Hugo shortcodes and
    fence markers are taken out (a passage may hold half a fence). Code is kept as it is.
    """
    if format_for(path).markdown_text:
        text = wikilink_labels(text)
        text = _SHORTCODE.sub(" ", text)
        text = _FENCE.sub(" ", text)
        text = _markdown_text(text)
        text = _REFERENCE_LINK.sub(r"\1", text)
    return " ".join(text.split())


def _markdown_text(text: str) -> str:
    from markdown_it import MarkdownIt  # comes with Textual; imported on first use

    words: list[str] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "inline":
            for child in token.children or []:
                if child.type in ("text", "code_inline"):
                    words.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    words.append(" ")
                elif child.type == "image":
                    words.append(child.content)  # its alt text
        elif token.type in ("fence", "code_block"):
            words.append(f" {token.content} ")
        elif token.block and token.nesting <= 0:
            words.append(" ")
    return "".join(words)
