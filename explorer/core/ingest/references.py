"""References from one file to others: Markdown links and backtick path mentions.

Markdown is read with markdown-it-py's token stream (never with regexes over Markdown), so a
link inside a code block is no link, and reference-style links are recorded once, at their
definition. Three kinds come from Markdown:

- ``link``: an inline link ``[text](path)``, resolved relative to the file (``/path`` from the
  root);
- ``image``: an image ``![alt](path)``, resolved the same way;
- ``definition``: a reference definition ``[label]: path``; the ``[text][label]`` links that use
  it are not recorded again;

and one from inline code, in Markdown and in any other text (a code comment, a docstring):

- ``mention``: a backtick span that looks like a path with a folder and an extension
  (```guides/install.md```). A mention may name a path relative to the file or to the root, so
  it keeps both candidates; which one it means is judged against the disk when it is read.

URLs with a scheme (``https:``, ``mailto:``...), pure ``#anchors`` and targets that leave the
root are not references to files of the tree. ``#anchor`` and ``?query`` are cut off and
``%20``-style escapes decoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from explorer.core.ingest.markdown_tokens import MarkdownBlocks, markdown_blocks, markdown_parser

if TYPE_CHECKING:
    from markdown_it.token import Token

MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx"})


class ReferenceKind(StrEnum):
    """How a file refers to another."""

    LINK = "link"
    IMAGE = "image"
    DEFINITION = "definition"
    MENTION = "mention"


@dataclass(frozen=True)
class FileReference:
    """One reference found in a file, resolved to a root-relative path."""

    line: int
    """1-based line of the file where the reference stands."""
    kind: ReferenceKind
    raw: str
    """The target as written, ``%xx`` escapes decoded (``../guides/install.md#linux``)."""
    target: str
    """The root-relative path it resolves to (``guides/install.md``); for a mention, the path
    relative to the file's folder."""
    alternative: str = ""
    """For a mention only: the path read from the root, when it differs from ``target``."""


_PATH_MENTION = re.compile(
    r"(?:/|(?:\.{1,2}/)*)(?:(?!\.{1,2}/)[\w.@+-]+/)+[\w.@+-]*\w\.[A-Za-z][A-Za-z0-9]{0,9}"
)
"""Inline code that is a path with at least one named folder and an extension (``src/app.py``,
``../guides/install.md``; not ``./tern.toml``, which is as likely a file of the reader's)."""
_BACKTICK_SPAN = re.compile(r"(?<!`)(`{1,2})([^`\n]+?)\1(?!`)")
"""A backtick span in text that is not Markdown (comments, docstrings, reStructuredText)."""


def extract_references(
    rel_path: str, text: str, body_start: int = 0, blocks: MarkdownBlocks | None = None
) -> list[FileReference]:
    """Every reference in ``text`` (the file at ``rel_path``), in file order.

    ``body_start`` is where the text after any front matter begins: Markdown is parsed from
    there, with line numbers counted in the whole file. ``blocks`` are the Markdown's tokens
    when the caller has them already (``markdown_blocks(text, body_start)``).
    """
    suffix = PurePosixPath(rel_path).suffix.lower().lstrip(".")
    if suffix in MARKDOWN_EXTENSIONS:
        if blocks is None:
            blocks = markdown_blocks(text, body_start)
        found = _markdown_references(rel_path, text, body_start, blocks)
    else:
        found = _text_mentions(rel_path, text)
    return sorted(found, key=lambda ref: (ref.line, ref.kind, ref.raw))


def resolve_target(source: str, raw: str) -> str | None:
    """The root-relative path a link ``raw`` in file ``source`` points at, or None.

    None for a URL with a scheme or host, a pure anchor or query, an empty target and a
    target outside the root. ``/path`` is read from the root, anything else from the folder of
    ``source``.
    """
    target = raw.strip()
    if not target or target.startswith(("#", "?")):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith("//"):
        return None
    path = unquote(parts.path)
    if not path:
        return None
    if path.startswith("/"):
        return _normalise(path.lstrip("/"))
    return _normalise(f"{PurePosixPath(source).parent.as_posix()}/{path}")


def _normalise(path: str) -> str | None:
    """``path`` with ``.`` and ``..`` folded; None when it climbs out of the root."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) if parts else "."


def _may_hold_references(inline: str) -> bool:
    """Whether an inline run can hold a link or image (``](``) or a backtick path."""
    return "](" in inline or ("`" in inline and "/" in inline)


def _markdown_references(
    rel_path: str, text: str, body_start: int, blocks: MarkdownBlocks
) -> list[FileReference]:
    offset = text.count("\n", 0, body_start)
    found: list[FileReference] = []
    parser, env = markdown_parser(), blocks.env
    for token in blocks.tokens:
        if token.map is None:
            continue
        line = offset + token.map[0] + 1
        if token.type == "definition":
            _add_link(found, rel_path, line, ReferenceKind.DEFINITION, token.meta.get("url", ""))
        elif token.type == "inline" and _may_hold_references(token.content):
            children: list[Token] = []
            parser.inline.parse(token.content, parser, env, children)
            _inline_references(found, rel_path, line, children)
    return found


def _inline_references(
    found: list[FileReference], rel_path: str, line: int, children: list[Token]
) -> None:
    """References in one inline run (a paragraph, a heading, a table cell) from ``line`` on."""
    for child in children:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "link_open" and "label" not in child.meta:
            if child.markup not in ("autolink", "linkify"):
                _add_link(found, rel_path, line, ReferenceKind.LINK, str(child.attrs["href"]))
        elif child.type == "image" and "label" not in child.meta:
            _add_link(found, rel_path, line, ReferenceKind.IMAGE, str(child.attrs["src"]))
            line += sum(c.type in ("softbreak", "hardbreak") for c in child.children or [])
        elif child.type == "code_inline":
            _add_mention(found, rel_path, line, child.content)
        elif child.type in ("text", "html_inline"):
            line += child.content.count("\n")


def _add_link(
    found: list[FileReference], source: str, line: int, kind: ReferenceKind, raw: str
) -> None:
    target = resolve_target(source, raw)
    if target is not None:
        found.append(FileReference(line, kind, unquote(raw), target))


def _add_mention(found: list[FileReference], source: str, line: int, code: str) -> None:
    """A backtick span that is a path with a folder and an extension, with both readings."""
    code = code.strip()
    if not _PATH_MENTION.fullmatch(code):
        return
    explicit = code.startswith(("./", "../"))  # relative to the file, and only that
    from_root = None if explicit else _normalise(code.lstrip("/"))
    from_file = None if code.startswith("/") else resolve_target(source, code)
    if from_root is None and from_file is None:
        return
    target = from_file or from_root
    alternative = from_root if from_root and from_root != target else ""
    found.append(FileReference(line, ReferenceKind.MENTION, code, str(target), alternative))


def _text_mentions(rel_path: str, text: str) -> list[FileReference]:
    found: list[FileReference] = []
    line, counted = 1, 0
    for match in _BACKTICK_SPAN.finditer(text):
        if "/" in match.group(2):
            line += text.count("\n", counted, match.start())
            counted = match.start()
            _add_mention(found, rel_path, line, match.group(2))
    return found
