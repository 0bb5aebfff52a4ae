"""HTML: the text a reader sees, without tags, scripts, styles or the site's navigation.

A page is parsed by lxml (libxml2's HTML parser: fast, and it recovers from broken markup; see
``benchmarks/RESULTS.md`` for the parsers measured), then walked once, without recursion:

- what is not content is left out: scripts, styles, templates, forms, the ``<head>``, and the
  navigation chrome (``nav``, ``aside``, a page's own ``header`` and ``footer``, ARIA
  navigation/banner/search roles, hidden elements, and the sidebars, related bars and heading
  permalinks of Sphinx, MkDocs and Read the Docs themes), and a manual's bar of next, previous
  and up links (a block of little text holding links marked ``rel="next"``, ``"up"``...: the
  panels Texinfo and texi2html write atop and below every page of a GNU manual);
- when the page marks its main content (``<main>``, ``role="main"``, a single ``<article>``),
  only that is read;
- ``h1``-``h6`` become heading lines (``## Title``) and so the sections' heading paths; a
  term with an anchor in a list of some kind (``<dl class="py function"><dt id="os.walk">``:
  an API manual's functions and classes, a glossary's terms, as Sphinx writes them) is an
  *entry* under its section, which the outline lists and the chunker does not cut at;
  paragraphs are wrapped, list items start with ``-``, ``<pre>`` becomes a fenced block,
  table rows ``| a | b |`` lines, but a table that only sets long lists side by side (a
  general index's columns) is read as its lists;
- ``<title>`` gives the title, ``<meta name="description">`` the description and
  ``<meta name="keywords">`` the tags (front matter, as Hugo writes it atop an HTML page,
  takes precedence);
- ``<a href>`` and ``<img src>`` that point into the folder are references, resolved as a
  Markdown link is (relative to the page, ``/path`` from the root), on the line where they land.

A page nested deeper than libxml2 builds (2,048 levels) is read again into a tree of its own
making, its deep containers' tags left out (:mod:`explorer.core.ingest.formats.html_depth`),
so the text in and after the nest is kept; a note says so, and a page that still cannot be
read says why.

Extraction runs in the worker process (:mod:`explorer.core.ingest.formats.sandbox`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, ClassVar

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused, decode_leniently
from explorer.core.ingest.formats.contract import Document, DocumentFormat, Limits, PreviewKind
from explorer.core.ingest.formats.html_depth import DeepRole, shallow_tree
from explorer.core.ingest.formats.text_builder import TextBuilder
from explorer.core.ingest.front_matter import FileMetadata, read_front_matter
from explorer.core.ingest.markup import Heading, PageEntries, entry_title
from explorer.core.ingest.references import FileReference, ReferenceKind, resolve_target

if TYPE_CHECKING:
    from lxml.html import HtmlElement

SKIPPED_TAGS = frozenset(
    "script style noscript template head nav aside svg iframe object embed canvas button "
    "select input textarea form dialog map area link meta base".split()
)
"""Elements whose content is never text of the page."""
PAGE_CHROME_TAGS = frozenset({"header", "footer"})
"""Left out when they belong to the page (not to an article or a section inside it)."""
CHROME_ROLES = frozenset(
    "navigation banner contentinfo search complementary menu menubar toolbar dialog".split()
)
CHROME_CLASSES = frozenset(
    "sphinxsidebar sphinxsidebarwrapper related headerlink footer navbar sidebar breadcrumb "
    "breadcrumbs skip-link wy-nav-side wy-nav-top rst-versions rst-footer-buttons md-sidebar "
    "md-header md-footer md-nav md-search site-header site-footer cookie-banner "
    "visually-hidden sr-only nav_table nav-panel navheader navfooter".split()
)
"""Classes of navigation chrome in common themes (Sphinx, Read the Docs, MkDocs Material,
texi2html, Texinfo 7, DocBook)."""
NAVIGATION_RELS = frozenset("next prev previous up start first last contents index top".split())
"""Link relations that move through a manual rather than cite a page."""
NAVIGATION_LINKS = 2
"""A block holding at least this many such links ..."""
NAVIGATION_CHARS = 300
"""... and at most this many characters of text is a navigation bar."""
NAVIGATION_BLOCKS = frozenset({"table", "div", "p", "ul", "ol"})
"""The elements a navigation bar is (the nearest of them around its links) ..."""
NAVIGATION_DEPTH = 6
"""... within this many levels of a link (a cell's link: ``td``, ``tr``, ``tbody``, ``table``);
a link nested deeper in inline markup is in no bar (and a page of thousands of them, each
under hundreds of ``<span>``, is not walked up to its root once per link)."""
BLOCK_TAGS = frozenset(
    "p div section article main body li ul ol dl dt dd blockquote figure figcaption hr br "
    "address details summary center caption header footer fieldset legend tr td th".split()
)
"""(A table's rows and cells are blocks where its cells are read as blocks: see
:func:`_lays_out_lists`.)"""
LAYOUT_ROWS = 2
"""A table of at most this many rows ..."""
LAYOUT_ITEMS = 10
"""... a cell of which holds a list of at least this many items lays lists out side by side."""
HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
DEEP_KEPT_TAGS = frozenset(
    {*HEADING_TAGS, *PAGE_CHROME_TAGS}
    | set("p a pre code ul ol li dl dt dd blockquote".split())
    | set("table caption thead tbody tfoot tr td th".split())
)
"""Elements built in a page nested too deep to read whole (see :data:`FLAT_DEPTH`), with the
skipped ones and chrome; the others (``div``, ``span``...) only contain."""
ENTRY_NAME_CLASSES = frozenset({"sig-prename", "sig-name", "descclassname", "descname", "def-name"})
"""The parts of a signature that name its object: Sphinx's (``csv.`` and ``DictReader``),
Texinfo 7's (``ffi_call``)."""
NOT_ENTRY_LISTS = frozenset({"footnote", "citation", "field-list"})
"""Kinds of ``<dl>`` whose anchored terms are no entries (a footnote's number)."""
_CHARSET = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?[A-Za-z0-9_-]+""", re.I)
_LANGUAGE_CLASS = re.compile(r"(?:highlight|language|lang)-([A-Za-z0-9_+-]+)")
_LIBXML_HINT = re.compile(r",? *(?:use|try) XML_PARSE_HUGE.*$", re.S)
FLAT_DEPTH = 1_000
"""Below this depth, in a page that libxml2 cannot read whole, only the elements of
:data:`DEEP_KEPT_TAGS`, the skipped ones and chrome are built (see
:mod:`explorer.core.ingest.formats.html_depth`)."""
MAX_KEPT_DEPTH = 2_000
"""Below this depth no element is built (a tree as deep as the ordinary parse gives)."""


class HtmlFormat(DocumentFormat):
    """Web pages and HTML manuals (Sphinx, MkDocs, Hugo output)."""

    name = "html"
    extensions = frozenset({"html", "htm", "xhtml"})
    extracted = True
    limits = Limits(max_bytes=20_000_000, seconds=30.0, max_chars=10_000_000)
    preview_kind = PreviewKind.CODE
    markdown_text: ClassVar[bool] = True
    summary = "text without markup or navigation, sections at h1-h6, <title>, links"
    reading = 3
    """2: a manual's bars of next, previous and up links left out, lists laid out in a table
    read as lists; 3: the API entries each passage holds, and where each ends (the same text:
    an index keeps its vectors)."""

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        front_metadata = FileMetadata()
        notes: tuple[str, ...] = ()
        source: bytes | str = data
        if data.lstrip()[:3] in (b"---", b"+++"):
            text = decode_leniently(data)
            front = read_front_matter(text)
            front_metadata, notes = front.metadata, front.notes
            source = text[front.fence_end :]
        elif not _CHARSET.search(data[:4096]):
            source = decode_leniently(data)  # libxml2 would read it as Latin-1
        if not (source.strip() if isinstance(source, str) else source.strip()):
            return Document("", metadata=front_metadata, notes=notes, headings=())
        root, stopped = _parse(source)
        if stopped is not None:  # nested past libxml2's depth: read again, the deep tags left out
            root, stopped = _parse(source, shallow=True)
            notes += (f"markup nested over {FLAT_DEPTH:,} levels deep was read flat",)
        metadata = _page_metadata(root)
        metadata.update(front_metadata)
        walker = _PageWalker(rel_path, limits.max_chars)
        _hide_navigation_bars(root)
        walker.walk(_content_root(root))
        text = walker.builder.text()
        if stopped is not None:
            if not text.strip():
                raise FileRefused(SkipReason.UNREADABLE, f"the HTML parser stopped: {stopped}")
            notes += (f"read up to where the HTML parser stopped ({stopped})",)
        if walker.builder.full:
            notes += (f"text cut at {limits.max_chars:,} characters",)
        return Document(
            text,
            metadata=metadata,
            notes=notes,
            headings=tuple(walker.builder.headings),
            references=tuple(walker.references),
            entries=tuple(walker.entries.found),
        )

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "markdown"


def _parse(source: str | bytes, shallow: bool = False) -> tuple[HtmlElement, str | None]:
    """The page's tree, and why libxml2 stopped before the end (None when it did not).

    ``huge_tree`` lifts libxml2's caps on a text node's size (10 MB) and on depth (256, to
    2,048): the file is already bounded by the format's size cap and the worker's memory cap,
    and without it a page holding a run of text over 10 MB gives no text at all. Past a cap
    libxml2 halts without raising: its error log says so. ``shallow``: the tree is built with
    the deep tags left out (:func:`~explorer.core.ingest.formats.html_depth.shallow_tree`).
    """
    import lxml.html
    from lxml.etree import ParserError

    try:
        if shallow:
            root, stopped = shallow_tree(source, FLAT_DEPTH, MAX_KEPT_DEPTH, _deep_role)
        else:
            parser = lxml.html.HTMLParser(huge_tree=True)
            root = lxml.html.document_fromstring(source, parser=parser)
            stopped = [e.message for e in parser.error_log if e.type_name == "ERR_RESOURCE_LIMIT"]
    except (ParserError, ValueError) as error:
        raise FileRefused(SkipReason.UNREADABLE, f"not HTML ({error})") from None
    return root, _LIBXML_HINT.sub("", stopped[0].strip()) if stopped else None


def _page_metadata(root: HtmlElement) -> FileMetadata:
    """Title, description and tags from the page's ``<head>``."""
    metadata = FileMetadata()
    title = root.find(".//title")
    if title is not None and (words := " ".join(title.text_content().split())):
        metadata["title"] = words[:300]
    for meta in root.iter("meta"):
        name = str(meta.get("name") or meta.get("property") or "").lower()
        content = " ".join(str(meta.get("content") or "").split())
        if not content:
            continue
        if name in ("description", "og:description") and "description" not in metadata:
            metadata["description"] = content[:2000]
        elif name == "keywords" and "tags" not in metadata:
            tags = [tag.strip() for tag in content.split(",") if tag.strip()]
            metadata["tags"] = tags[:100]
    return metadata


def _lays_out_lists(table: HtmlElement) -> bool:
    """Whether ``table`` sets long lists side by side rather than rows of values: at most
    ``LAYOUT_ROWS`` rows of its own, a cell holding ``LAYOUT_ITEMS`` list items or more
    (Sphinx's general index: one row, columns of hundreds of entries, which read as rows made
    one line of 9,000 characters)."""
    rows = []
    for row in _own_rows(table):
        rows.append(row)
        if len(rows) > LAYOUT_ROWS:
            return False
    return any(
        next(islice(cell.iter("li"), LAYOUT_ITEMS - 1, None), None) is not None
        for row in rows
        for cell in row
        if cell.tag in ("td", "th")
    )


def _own_rows(table: HtmlElement) -> Iterator[HtmlElement]:
    """The rows of ``table`` itself (in its body, head and foot), not of a table nested in it."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child if row.tag == "tr")


def _hide_navigation_bars(root: HtmlElement) -> None:
    """Mark hidden each block of little text holding ``NAVIGATION_LINKS`` links or more of a
    navigation relation (Texinfo's ``Next: … Up: …`` line, texi2html's bar of ``[ << ] [ Up ]``
    cells), so that they are read as chrome: every page of a manual holds them. A block of the
    same text elsewhere on the page is its copy (Texinfo repeats the bar below the text with
    fewer relations marked), hidden too."""
    links: dict[HtmlElement, int] = {}
    for anchor in root.iter("a"):
        relations = str(anchor.get("rel") or "").lower().split()
        if NAVIGATION_RELS.isdisjoint(relations):
            continue
        near = islice(anchor.iterancestors(), NAVIGATION_DEPTH)
        block = next((up for up in near if up.tag in NAVIGATION_BLOCKS), None)
        if block is not None:
            links[block] = links.get(block, 0) + 1
    bars = set()
    for block, count in links.items():
        if count >= NAVIGATION_LINKS and _short(block.itertext(), NAVIGATION_CHARS):
            block.set("hidden", "hidden")
            bars.add(" ".join(block.text_content().split()))
    if not bars:
        return
    for block in root.iter(*NAVIGATION_BLOCKS):
        if (
            block.get("hidden") is None
            and _short(block.itertext(), NAVIGATION_CHARS)
            and " ".join(block.text_content().split()) in bars
        ):
            block.set("hidden", "hidden")


def _short(pieces: Iterable[str], limit: int) -> bool:
    """Whether the text of ``pieces``, its white space collapsed, is at most ``limit``
    characters (read no further than that)."""
    size = 0
    for piece in pieces:
        size += len(" ".join(piece.split())) + 1
        if size > limit + 1:
            return False
    return True


def _content_root(root: HtmlElement) -> HtmlElement:
    """The element holding the page's main content: ``<main>``, ``role="main"``, a single
    ``<article>``, else the body."""
    for path in (".//main", ".//*[@role='main']"):
        found = root.find(path)
        if found is not None:
            return found
    articles = root.findall(".//article")
    if len(articles) == 1:
        return articles[0]
    body = root.find(".//body")
    return body if body is not None else root


def _chrome_attributes(attributes: Mapping[str, str]) -> bool:
    """Whether an element's attributes make it hidden or navigation chrome."""
    if "hidden" in attributes or attributes.get("aria-hidden") == "true":
        return True
    if attributes.get("role") in CHROME_ROLES:
        return True
    classes = attributes.get("class")
    return bool(classes) and not CHROME_CLASSES.isdisjoint(str(classes).split())


def _deep_role(tag: str, attributes: Mapping[str, str]) -> DeepRole:
    """What an element nested past :data:`FLAT_DEPTH` does to the text: whether it is built
    (see :mod:`explorer.core.ingest.formats.html_depth`)."""
    if tag in SKIPPED_TAGS or (attributes and _chrome_attributes(attributes)):
        return DeepRole.HIDES
    return DeepRole.SHAPES if tag in DEEP_KEPT_TAGS else DeepRole.CONTAINS


def _is_chrome(element: HtmlElement) -> bool:
    """Whether an element is navigation chrome or hidden, not content."""
    tag = element.tag
    if tag in SKIPPED_TAGS or _chrome_attributes(element.attrib):
        return True
    if tag in PAGE_CHROME_TAGS:
        return not any(
            parent.tag in ("article", "section", "main") for parent in element.iterancestors()
        )
    return False


def _language(element: HtmlElement) -> str:
    """The language a ``<pre>`` block declares (``highlight-python3``, ``language-go``)."""
    candidates = [element, *element.iterchildren("code")]
    parent = element.getparent()
    for _ in range(2):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.getparent()
    for candidate in candidates:
        match = _LANGUAGE_CLASS.search(str(candidate.get("class") or ""))
        if match:
            return match.group(1)
    return ""


def _text_of(element: HtmlElement) -> str:
    """An element's text, chrome inside it (a heading's permalink) left out."""
    pieces: list[str] = []
    stack: list[tuple[HtmlElement, bool]] = [(element, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            pieces.append(node.tail or "")
            continue
        if not isinstance(node.tag, str) or (node is not element and _is_chrome(node)):
            if node is not element:
                pieces.append(node.tail or "")
            continue
        pieces.append(node.text or "")
        if node is not element:
            stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return "".join(pieces)


@dataclass
class _Paragraph:
    """Inline text gathered until the next block boundary, with the links in it."""

    pieces: list[str] = field(default_factory=list)
    links: list[tuple[int, ReferenceKind, str]] = field(default_factory=list)
    """(index of the piece the link starts at, kind, target as written)."""


def _entry_title(term: HtmlElement) -> str:
    """What a ``<dt>`` names when it is an entry of a reference page (an anchor in a ``<dl>``
    of a kind: ``csv.DictReader``, ``PYTHONPATH``, a glossary's term), else ``""``."""
    parent = term.getparent()
    if not term.get("id") or parent is None or parent.tag != "dl":
        return ""
    kinds = set(str(parent.get("class") or "").split())
    if not kinds or kinds & NOT_ENTRY_LISTS:
        return ""
    parts = [
        _text_of(part)
        for part in term.iter()
        if isinstance(part.tag, str)
        and not ENTRY_NAME_CLASSES.isdisjoint(str(part.get("class") or "").split())
    ]
    named = "".join(parts).strip() or _text_of(term)
    title = entry_title(named.rstrip("¶ \n\t"))  # a permalink's mark (Texinfo's)
    return title if any(ch.isalnum() for ch in title) else ""


class _PageWalker:
    """Walks a page's content element by element (no recursion) into a :class:`TextBuilder`."""

    def __init__(self, rel_path: str, max_chars: int) -> None:
        self.rel_path = rel_path
        self.builder = TextBuilder(max_chars)
        self.references: list[FileReference] = []
        self.entries = PageEntries()
        """The page's entries, each at the ``<dd>`` depth of its term."""
        self.entry: tuple[int, str] | None = None
        """The level and name of the entry whose term is being read."""
        self.definitions = 0
        """How many ``<dd>`` enclose the element being read (an entry in a class's is its
        member)."""
        self.paragraph = _Paragraph()
        self.lists: list[list[int]] = []
        """Open lists, innermost last: [next number] for ``<ol>``, [] for ``<ul>``."""
        self.items: list[tuple[str, list[bool]]] = []
        """Open list items, innermost last: the prefix of the item's first line, and whether
        that line was written (its other paragraphs are indented under it)."""

    def walk(self, root: HtmlElement) -> None:
        stack: list[tuple[HtmlElement, bool]] = [(root, False)]
        while stack and not self.builder.full:
            element, closing = stack.pop()
            if closing:
                self._end(element)
                self.paragraph.pieces.append(element.tail or "")
                continue
            if not isinstance(element.tag, str) or _is_chrome(element):
                self.paragraph.pieces.append(element.tail or "")  # comments, chrome
                continue
            if self._start(element):
                stack.append((element, True))
                stack.extend((child, False) for child in reversed(element))
            else:
                self.paragraph.pieces.append(element.tail or "")
        self.flush()
        self._close_entries(0)

    def _start(self, element: HtmlElement) -> bool:
        """Open an element; False when it was read whole (its children are not walked)."""
        tag = element.tag
        if tag in HEADING_TAGS:
            self.flush()
            self.builder.heading(HEADING_TAGS[tag], _text_of(element))
            return False
        if tag == "pre":
            self.flush()
            self.builder.preformatted(_text_of(element), _language(element))
            return False
        if tag == "table":
            self.flush()
            if _lays_out_lists(element):
                return True  # its cells are read as the blocks they hold
            self._table(element)
            return False
        if tag == "img":
            self._link(ReferenceKind.IMAGE, element.get("src"))
            alt = " ".join(str(element.get("alt") or "").split())
            if alt:
                self.paragraph.pieces.append(f" {alt} ")
            return False
        if tag in BLOCK_TAGS:
            self.flush()
        if tag in ("ul", "ol"):
            start = str(element.get("start") or "1")
            self.lists.append([int(start) if start.isdigit() else 1] if tag == "ol" else [])
        elif tag == "li":
            self.items.append((self._item_prefix(), [False]))
        elif tag == "a":
            self._link(ReferenceKind.LINK, element.get("href"))
        elif tag == "dd":
            self.definitions += 1
        elif tag == "dt" and (title := _entry_title(element)):
            section = self.builder.headings[-1].level if self.builder.headings else 0
            self.entry = (min(6, section + 1 + self.definitions), title)
        self.paragraph.pieces.append(element.text or "")
        return True

    def _end(self, element: HtmlElement) -> None:
        tag = element.tag
        if tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif tag == "li":
            self.flush()
            if self.items:
                self.items.pop()
        elif tag == "dt":
            self.flush()
            self.entry = None  # a term without text names nothing
        elif tag == "dd":
            self.flush()
            self.definitions -= 1
            self._close_entries(self.definitions)
        elif tag in BLOCK_TAGS:
            self.flush()

    def _item_prefix(self) -> str:
        if not self.lists:
            return "- "
        depth = "  " * (len(self.lists) - 1)
        counter = self.lists[-1]
        if counter:
            counter[0] += 1
            return f"{depth}{counter[0] - 1}. "
        return f"{depth}- "

    def _link(self, kind: ReferenceKind, raw: str | None) -> None:
        if raw:
            self.paragraph.links.append((len(self.paragraph.pieces), kind, str(raw)))

    def flush(self) -> None:
        """Write the gathered inline text as a paragraph (a list item's first line with its
        bullet), and its links at their lines; an entry's term, where it starts."""
        paragraph, self.paragraph = self.paragraph, _Paragraph()
        prefix = indent = ""
        if self.items:
            bullet, written = self.items[-1]
            indent = " " * len(bullet)
            prefix = indent if written[0] else bullet
        lines = self.builder.paragraph(paragraph.pieces, prefix, indent, tight=bool(self.items))
        if lines is not None and self.items:
            self.items[-1][1][0] = True
        line = self.builder.line
        for index, kind, raw in paragraph.links:
            if lines is not None and index < len(lines):
                line = lines[index]
            self._reference(line, kind, raw)
        if lines is not None and self.entry is not None:
            (level, title), self.entry = self.entry, None
            self._close_entries(self.definitions)  # a term before it had no definition
            entry = Heading(self.builder.block_start, level, title, self.builder.length)
            self.entries.begin(entry, self.definitions)

    def _close_entries(self, depth: int) -> None:
        """End, where the text stands now, the entries of terms at ``depth`` ``<dd>`` or
        deeper: their definitions have been read."""
        self.entries.end(depth, self.builder.length)

    def _table(self, table: HtmlElement) -> None:
        rows: list[list[str]] = []
        links: list[tuple[int, str]] = []
        for row in table.iter("tr"):
            if next(row.iterancestors("table"), None) is not table:
                continue  # a row of a nested table: read with the cell that holds it
            cells = [cell for cell in row if cell.tag in ("td", "th")]
            links.extend(
                (len(rows), str(a.get("href")))
                for cell in cells
                for a in cell.iter("a")
                if a.get("href")
            )
            rows.append([_text_of(cell) for cell in cells])
        lines = self.builder.table(rows)
        for row_number, raw in links:
            line = lines[row_number]
            if line is not None:
                self._reference(line, ReferenceKind.LINK, raw)

    def _reference(self, line: int, kind: ReferenceKind, raw: str) -> None:
        target = resolve_target(self.rel_path, raw)
        if target is not None:
            self.references.append(FileReference(line, kind, raw, target))
