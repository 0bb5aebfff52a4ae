"""References from one file to others: Markdown links, wikilinks, Hugo refs, backtick paths.

Markdown is read with markdown-it-py's token stream (never with regexes over Markdown), so a
link inside a code span or block is no link, and reference-style links are recorded once, at
their definition. From Markdown come:

- ``link``: an inline link ``[text](path)``, a wikilink ``[[Note]]`` (``[[Note|text]]``,
  ``[[Note#Heading]]``, ``[[Note#^block]]``, ``[[folder/Note]]``) or a Hugo shortcode
  ``{{< ref "path" >}}`` / ``{{< relref "path" >}}``;
- ``image``: an image ``![alt](path)``;
- ``embed``: an Obsidian embed ``![[picture.png]]`` or ``![[Note]]``;
- ``definition``: a reference definition ``[label]: path``; the ``[text][label]`` links that use
  it are not recorded again;

and one from inline code, in Markdown and in any other text (a code comment, a docstring):

- ``mention``: a backtick span that looks like a path with a folder and an extension
  (```guides/install.md```). A mention may name a path relative to the file or to the root, so
  it keeps both candidates; which one it means is judged against the disk when it is read.

Each reference keeps the :class:`LinkSyntax` it was written in, because each is resolved its own
way (by the rules of the folder's publisher: see
:mod:`explorer.core.retrieval.link_resolution`). What is stored here depends on the file alone.

URLs with a scheme (``https:``, ``mailto:``...) and pure ``#anchors`` are not references to
files of the tree. A path is stored as written; where it is read, ``#anchor`` and ``?query`` are
cut off first and then every ``%xx`` escape decoded, once (``C%23.md`` is ``C#.md``,
``tab%09name.md`` holds a TAB, ``a%2541.md`` is ``a%41.md``; an escape that is no UTF-8 names
the bytes of a file name that is not UTF-8 either, an invalid one stays as it is).

In MyST Markdown (a Sphinx project's Markdown) come Sphinx's links too: ``{doc}`` and ``{ref}``
roles, ``(label)=`` targets, ``{toctree}`` and ``{include}`` fenced blocks; the same as
reStructuredText writes them (:mod:`explorer.core.ingest.formats.restructured_text`), read with
the helpers below.

Markdown also gives inline ``#tags`` (Obsidian's grammar: ``#`` after a space or at the start,
then letters, digits, ``_``, ``-`` and ``/``, not digits only; never in code, never a heading's
``#``, never a URL's fragment): :func:`extract_link_facts` returns them with the references.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from explorer.core.ingest.markdown_tokens import (
    MarkdownBlocks,
    markdown_blocks,
    markdown_parser,
    parse_hugo_ref,
)
from explorer.core.ingest.root_paths import path_key

if TYPE_CHECKING:
    from markdown_it.token import Token


class ReferenceKind(StrEnum):
    """How a file refers to another."""

    LINK = "link"
    IMAGE = "image"
    EMBED = "embed"
    DEFINITION = "definition"
    MENTION = "mention"


class LinkSyntax(StrEnum):
    """How a reference was written, which says how it resolves."""

    PATH = "path"
    """A URL or path: a Markdown link, image or definition, an HTML ``href``, a backtick
    path. Relative to the page (its file, or its URL on a static site), or site-absolute."""
    WIKILINK = "wikilink"
    """``[[Note]]``: a note's name (or a path's end), found anywhere in the vault."""
    HUGO_REF = "ref"
    """``{{< ref "path" >}}``: a content path, relative to the page or to the content root."""
    MAN_PAGE = "man"
    """``ls(1)`` in a manual page: another page by its name and section, in the same tree."""
    SPHINX_DOC = "sphinx"
    """A Sphinx project's page by its name (``:doc:`install```, a ``toctree`` entry; the
    suffix left out), or a file from the project's source folder (``/images/a.png``): relative
    to the page, or with ``/`` to the folder that holds the project's ``conf.py``."""
    SPHINX_LABEL = "sphinx-label"
    """``.. _label:`` in a Sphinx page: not a link, but the place a ``:ref:`` leads to."""
    SPHINX_REF = "sphinx-ref"
    """``:ref:`label``` in a Sphinx page: the place ``.. _label:`` marks, in any page of the
    project (labels are one namespace, without case)."""
    ASCIIDOC = "asciidoc"
    """``xref:install.adoc[]``, ``include::partial.adoc[]``, ``image::a.png[]`` in AsciiDoc: a
    path from the page's folder, or in an Antora site from its module's ``pages/`` folder (an
    ``include`` from ``partials/``, an ``image`` from ``images/``)."""
    TEX_INPUT = "tex"
    """``\\input{chapters/intro}`` in a LaTeX source: a file by its path from the folder TeX
    runs in, the main file's: the source's own folder or one above it."""


@dataclass(frozen=True)
class FileReference:
    """One reference found in a file, with the target it names read from the file alone."""

    line: int
    """1-based line of the file where the reference stands."""
    kind: ReferenceKind
    raw: str
    """The target as written (``../guides/install.md#linux``, ``caf%C3%A9.md``,
    ``[[Note#Heading]]``, ``{{< ref "/waf" >}}``); :attr:`shown` decodes a path's escapes."""
    target: str
    """For a path: the root-relative file path it reads as from the file's folder
    (``guides/install.md``; ``""`` when that reading leaves the root), for a mention the path
    relative to the file's folder; for a wikilink, the note named (``folder/Note``); for a Hugo
    ref, the content path (``/waf/policies``)."""
    alternative: str = ""
    """For a mention only: the path read from the root, when it differs from ``target``."""
    syntax: LinkSyntax = LinkSyntax.PATH

    @property
    def shown(self) -> str:
        """The target as a reader reads it: a path's ``%xx`` escapes decoded (``café.md`` of
        ``caf%C3%A9.md``); any other reference as written."""
        if self.syntax is LinkSyntax.PATH and self.kind is not ReferenceKind.MENTION:
            return unquote(self.raw)
        return self.raw


@dataclass
class LinkFacts:
    """What a file's text says about links: its references and its inline tags."""

    references: list[FileReference] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    """Inline ``#tags``, without the ``#``, in order of first appearance (each once)."""


_PATH_MENTION = re.compile(
    r"(?:/|(?:\.{1,2}/)*)(?:(?!\.{1,2}/)[\w.@+-]+/)+[\w.@+-]*\w\.[A-Za-z][A-Za-z0-9]{0,9}"
)
"""Inline code that is a path with at least one named folder and an extension (``src/app.py``,
``../guides/install.md``; not ``./tern.toml``, which is as likely a file of the reader's)."""
_BACKTICK_SPAN = re.compile(r"(?<!`)(`{1,2})([^`\n]+?)\1(?!`)")
"""A backtick span in text that is not Markdown (comments, docstrings, reStructuredText)."""
_INLINE_TAG = re.compile(r"(?<!\S)#([\w/-]+)")
"""An Obsidian tag in a run of text: ``#`` at the start or after a space, then word
characters (any script), ``-`` and ``/``."""
MAX_INLINE_TAGS = 100


def extract_references(
    rel_path: str,
    text: str,
    body_start: int = 0,
    blocks: MarkdownBlocks | None = None,
    *,
    markdown: bool,
) -> list[FileReference]:
    """Every reference in ``text`` (the file at ``rel_path``), in file order.

    ``markdown``: the text is Markdown (its format says so; otherwise only backtick paths are
    read). ``body_start`` is where the text after any front matter begins: Markdown is parsed
    from there, with line numbers counted in the whole file. ``blocks`` are the Markdown's
    tokens when the caller has them already (``markdown_blocks(text, body_start)``).
    """
    return extract_link_facts(rel_path, text, body_start, blocks, markdown=markdown).references


def extract_link_facts(
    rel_path: str,
    text: str,
    body_start: int = 0,
    blocks: MarkdownBlocks | None = None,
    *,
    markdown: bool,
) -> LinkFacts:
    """The references of :func:`extract_references` and, for Markdown, the inline tags."""
    if markdown:
        if blocks is None:
            blocks = markdown_blocks(text, body_start)
        facts = _markdown_facts(rel_path, text, body_start, blocks)
    else:
        facts = LinkFacts(_text_mentions(rel_path, text))
    facts.references.sort(key=_file_order)
    return facts


def with_mentions(rel_path: str, text: str, links: Iterable[FileReference]) -> LinkFacts:
    """The ``links`` a text format's own syntax wrote (reStructuredText's, AsciiDoc's) and the
    paths its ``text`` mentions in backticks, in file order; a mention on a link's line written
    as the link is (`` `x <a/b.rst>`_ ``) counts once, as the link."""
    links = list(links)
    written = {(link.line, link.raw) for link in links}
    mentions = [ref for ref in _text_mentions(rel_path, text) if (ref.line, ref.raw) not in written]
    return LinkFacts(sorted([*mentions, *links], key=_file_order))


def _file_order(ref: FileReference) -> tuple[int, str, str]:
    return (ref.line, ref.kind, ref.raw)


def resolve_target(source: str, raw: str) -> str | None:
    """The root-relative path a link ``raw`` in file ``source`` points at, or None.

    None for a URL with a scheme or host, a pure anchor or query, an empty target and a
    target outside the root. ``/path`` is read from the root, anything else from the folder of
    ``source``.
    """
    path = link_path(raw)
    if path is None:
        return None
    if path.startswith("/"):
        return normalise_path(path.lstrip("/"))
    return normalise_path(f"{PurePosixPath(source).parent.as_posix()}/{path}")


def link_path(raw: str) -> str | None:
    """The path part of a link as written, decoded (``../a b.md`` of ``../a%20b.md#x``), as
    the index spells paths (:func:`~explorer.core.ingest.root_paths.path_key`); None for a URL
    with a scheme or host, a pure anchor or query, or nothing."""
    target = raw.strip()
    if not target or target.startswith(("#", "?")):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith("//"):
        return None
    return path_key(unquote(parts.path, errors="surrogateescape")) or None


def normalise_path(path: str) -> str | None:
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


SPHINX_BUILT_IN_LABELS = frozenset({"genindex", "modindex", "search", "py-modindex"})
"""Labels of the pages Sphinx makes itself, never a source file."""
_GLOB = re.compile(r"[*?\[]")
_MYST_ROLE = re.compile(r"\{(doc|ref|numref|download)\}$")
"""A MyST role's name, right before its code span (``{doc}`install```)."""
_LABEL_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)*(?:\.\.\s+_(`[^`]+`|[^:`\s][^:`]*):|\(([^()\s][^()]*)\)=)\s*$"
)
"""A line that marks a label: ``.. _label:`` alone (reStructuredText; with a target after it,
it names a hyperlink), also as a list item (a row of a ``list-table``), or ``(label)=`` (MyST)."""
_MYST_FILE_BLOCKS = {"include": ReferenceKind.EMBED, "literalinclude": ReferenceKind.EMBED}


def sphinx_label_marked(line: str) -> str | None:
    """The label ``line`` marks (see :data:`_LABEL_LINE`), or None."""
    found = _LABEL_LINE.match(line)
    if found is None:
        return None
    return (found.group(1) or found.group(2)).strip("`")


def sphinx_label_key(name: str) -> str:
    """A label as Sphinx files it: its white space collapsed, lowercase."""
    return " ".join(name.split()).lower()


def sphinx_role_target(inner: str) -> str:
    """The target of a role's or a ``toctree`` entry's text: ``title <target>``, or the text
    itself."""
    text = inner.strip()
    if text.endswith(">") and "<" in text:
        return text[text.rindex("<") + 1 : -1].strip()
    return text


def sphinx_toctree_entry(text: str) -> str | None:
    """The page a ``toctree`` entry names (``Title <page>`` or ``page``); None for ``self``,
    a glob or a URL."""
    entry = sphinx_role_target(text)
    if not entry or entry == "self" or _GLOB.search(entry) or link_path(entry) is None:
        return None
    return entry


def sphinx_doc(line: int, name: str) -> FileReference:
    """A link to a page of the project by its name (``:doc:``, a ``toctree`` entry)."""
    return FileReference(line, ReferenceKind.LINK, name, name, "", LinkSyntax.SPHINX_DOC)


def sphinx_ref(line: int, inner: str) -> FileReference | None:
    """A ``:ref:`` to a label (None for a page Sphinx makes itself)."""
    name = sphinx_role_target(inner).lstrip("~")
    key = sphinx_label_key(name)
    if not key or key in SPHINX_BUILT_IN_LABELS:
        return None
    return FileReference(line, ReferenceKind.LINK, name, key, "", LinkSyntax.SPHINX_REF)


def sphinx_label(line: int, name: str) -> FileReference:
    """The place ``.. _label:`` (``(label)=``) marks: where a ``:ref:`` leads."""
    key = sphinx_label_key(name)
    return FileReference(line, ReferenceKind.DEFINITION, name, key, "", LinkSyntax.SPHINX_LABEL)


def sphinx_file(rel_path: str, line: int, raw: str, kind: ReferenceKind) -> FileReference | None:
    """A reference to a file by its path (relative to the page; from the project's source
    folder when it starts with ``/``; a page the project builds, ``usage.html``, as its
    source's); None for a URL or nothing."""
    path = link_path(raw) if raw else None
    if path is None or (raw.startswith("<") and raw.endswith(">")):
        return None  # nothing, a URL, or docutils' own (``.. include:: <isonum.txt>``)
    if raw.startswith("/") or path.lower().endswith(".html"):
        return FileReference(line, kind, raw, path, "", LinkSyntax.SPHINX_DOC)
    return FileReference(line, kind, raw, resolve_target(rel_path, raw) or "")


def _may_hold_references(inline: str) -> bool:
    """Whether an inline run can hold a link, an image, a wikilink, a shortcode, a backtick
    path, a MyST role or a tag. A run that cannot is not parsed: markdown-it's inline rules
    cost about 15 µs a bracket (1.6 MB of ``[`` took 24 s), linear in the run's length whether
    it is one line or many."""
    return (
        "](" in inline
        or ("[[" in inline and "]]" in inline)
        or "{{" in inline
        or "#" in inline
        or ("`" in inline and "/" in inline)
        or "}`" in inline
    )


def _markdown_facts(rel_path: str, text: str, body_start: int, blocks: MarkdownBlocks) -> LinkFacts:
    offset = text.count("\n", 0, body_start)
    facts = LinkFacts()
    parser, env = markdown_parser(), blocks.env
    previous = ""
    for token in blocks.tokens:
        if token.map is None:
            previous = token.type
            continue
        line = offset + token.map[0] + 1
        if token.type == "definition":
            _add_link(facts, rel_path, line, ReferenceKind.DEFINITION, token.meta.get("url", ""))
        elif token.type == "fence" and token.info.startswith("{"):
            _myst_block(facts, rel_path, line, token.info, token.content)
        elif token.type == "inline" and (label := sphinx_label_marked(token.content)):
            facts.references.append(sphinx_label(line, label))
        elif token.type == "inline" and _may_hold_references(token.content):
            # Read whole, however long its lines: the cost is linear in its length.
            children: list[Token] = []
            parser.inline.parse(token.content, parser, env, children)
            _inline_facts(facts, rel_path, line, children, previous != "heading_open")
        previous = token.type
    return facts


def _inline_facts(
    facts: LinkFacts, rel_path: str, line: int, children: list[Token], tags: bool
) -> None:
    """References (and, unless ``tags`` is False, tags) in one inline run (a paragraph, a
    heading, a table cell) from ``line`` on."""
    before = " "  # what precedes the next text token: a tag must follow a space or a start
    role = None  # a MyST role's name, when the text before a code span ends with it
    for child in children:
        if child.type == "code_inline" and role is not None:
            _add_myst_role(facts, rel_path, line, role, child.content)
            role = None
            before = "x"
            continue
        role = None
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "link_open" and "label" not in child.meta:
            if child.markup not in ("autolink", "linkify"):
                _add_link(facts, rel_path, line, ReferenceKind.LINK, str(child.attrs["href"]))
        elif child.type == "image" and "label" not in child.meta:
            _add_link(facts, rel_path, line, ReferenceKind.IMAGE, str(child.attrs["src"]))
            line += sum(c.type in ("softbreak", "hardbreak") for c in child.children or [])
        elif child.type == "wikilink":
            _add_wikilink(facts, line, child.meta)
        elif child.type == "hugo_ref":
            _add_hugo_ref(facts, line, child.meta["target"], child.meta["markup"])
        elif child.type == "code_inline":
            _add_mention(facts, rel_path, line, child.content)
        elif child.type == "text":
            if tags:
                _add_tags(facts, before + child.content)
            line += child.content.count("\n")
            found = _MYST_ROLE.search(child.content)
            role = found.group(1) if found else None
        elif child.type == "html_inline":
            line += child.content.count("\n")
        before = " " if child.type in ("softbreak", "hardbreak") else (child.content[-1:] or "x")


def _add_myst_role(facts: LinkFacts, source: str, line: int, role: str, inner: str) -> None:
    """``{doc}`page```, ``{ref}`label```, ``{download}`file```."""
    if role == "doc":
        target = sphinx_role_target(inner)
        if target:
            facts.references.append(sphinx_doc(line, target))
        return
    if role == "download":
        found = sphinx_file(source, line, sphinx_role_target(inner), ReferenceKind.LINK)
    else:
        found = sphinx_ref(line, inner)
    if found is not None:
        facts.references.append(found)


def _myst_block(facts: LinkFacts, source: str, line: int, info: str, content: str) -> None:
    """A MyST directive written as a fence: a ``toctree``'s entries (its lines after the
    fence's, options aside), the file an ``include`` or ``literalinclude`` names."""
    name, _, argument = info[1:].partition("}")
    if name == "toctree":
        for number, text in enumerate(content.split("\n"), start=line + 1):
            entry = None if text.strip().startswith(":") else sphinx_toctree_entry(text)
            if entry is not None:
                facts.references.append(sphinx_doc(number, entry))
    elif name in _MYST_FILE_BLOCKS:
        found = sphinx_file(source, line, argument.strip(), _MYST_FILE_BLOCKS[name])
        if found is not None:
            facts.references.append(found)


def _add_link(facts: LinkFacts, source: str, line: int, kind: ReferenceKind, raw: str) -> None:
    decoded = unquote(raw)
    ref = parse_hugo_ref(decoded) if decoded.startswith("{{") else None
    if ref is not None:  # [text](<{{< ref "x" >}}>): the destination is the shortcode
        _add_hugo_ref(facts, line, ref.target, ref.markup)
        return
    if link_path(raw) is None:
        return
    target = resolve_target(source, raw) or ""
    facts.references.append(FileReference(line, kind, raw, target))


def _add_wikilink(facts: LinkFacts, line: int, meta: dict[str, object]) -> None:
    target = str(meta["target"])
    if not target:  # [[#Heading]]: a heading of this note
        return
    kind = ReferenceKind.EMBED if meta["embed"] else ReferenceKind.LINK
    reference = FileReference(line, kind, str(meta["markup"]), target, "", LinkSyntax.WIKILINK)
    facts.references.append(reference)


def _add_hugo_ref(facts: LinkFacts, line: int, target: str, markup: str) -> None:
    if target.strip():
        reference = FileReference(
            line, ReferenceKind.LINK, markup, target.strip(), "", LinkSyntax.HUGO_REF
        )
        facts.references.append(reference)


def _add_tags(facts: LinkFacts, text: str) -> None:
    """The tags of a run of text (prefixed with the character before it)."""
    if "#" not in text or len(facts.tags) >= MAX_INLINE_TAGS:
        return
    folded = {known.casefold() for known in facts.tags}
    for match in _INLINE_TAG.finditer(text):
        tag = match.group(1).strip("/")
        if tag and not tag.replace("/", "").isdigit() and tag.casefold() not in folded:
            facts.tags.append(tag)
            folded.add(tag.casefold())
            if len(facts.tags) >= MAX_INLINE_TAGS:
                return


def _add_mention(facts: LinkFacts, source: str, line: int, code: str) -> None:
    """A backtick span that is a path with a folder and an extension, with both readings."""
    code = code.strip()
    if not _PATH_MENTION.fullmatch(code):
        return
    explicit = code.startswith(("./", "../"))  # relative to the file, and only that
    from_root = None if explicit else normalise_path(code.lstrip("/"))
    from_file = None if code.startswith("/") else resolve_target(source, code)
    if from_root is None and from_file is None:
        return
    target = from_file or from_root
    alternative = from_root if from_root and from_root != target else ""
    facts.references.append(
        FileReference(line, ReferenceKind.MENTION, code, str(target), alternative)
    )


def _text_mentions(rel_path: str, text: str) -> list[FileReference]:
    facts = LinkFacts()
    line, counted = 1, 0
    for match in _BACKTICK_SPAN.finditer(text):
        if "/" in match.group(2):
            line += text.count("\n", counted, match.start())
            counted = match.start()
            _add_mention(facts, rel_path, line, match.group(2))
    return facts.references
