"""HTML nested deeper than libxml2 builds, read into a tree shallow enough to walk.

libxml2's HTML parser stops building a tree at a fixed depth (256 elements, 2,048 with
``huge_tree``): it halts there, and everything after the nest (its own text, the rest of the
page) is lost without an exception. Its event interface has no such cap, so
:func:`shallow_tree` parses the page again into a tree of its own making: past a depth, the
tags of elements that only contain (a ``<div>``, a ``<span>``) are left out, their text kept
in place, so the deep levels read as one while paragraphs, links and headings in them stay
what they are; past a second, deeper limit no element is built, and the content of those that
hide it (a script, a sidebar) is left out with them. What :class:`DeepRole` each element plays
is the caller's to say.

The events come from libxml2 itself (lxml's parser *target* interface), so the shallow part of
the page is the tree the ordinary parse gives, and the cost is a Python call per tag: a page of
a million nested ``<div>`` (11 MB) took 1.8 s of CPU here, 2.3 s in the extraction worker (the
stdlib's tokenizer took 7.6 s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml.html import HtmlElement


class DeepRole(Enum):
    """What an element does to the text, which says whether it is built when nested deep."""

    CONTAINS = "contains"
    """Only holds the rest (``div``, ``span``): left out past the flat depth."""
    SHAPES = "shapes"
    """Makes its text a paragraph, a link, a heading...: built down to the limit."""
    HIDES = "hides"
    """Its content is no text (a script, navigation): built down to the limit, its content
    left out below it."""


RoleOf = Callable[[str, Mapping[str, str]], DeepRole]


def shallow_tree(
    source: str | bytes, depth: int, limit: int, role_of: RoleOf
) -> tuple[HtmlElement, list[str]]:
    """The tree of the page ``source``, elements nested over ``depth`` levels deep built only
    when ``role_of`` says they do more than contain, none over ``limit`` (counting the
    elements built); and the messages of the resource limits the parser still ran into."""
    import lxml.html
    from lxml import etree

    builder = _ShallowBuilder(depth, limit, role_of)
    parser = etree.HTMLParser(target=builder, huge_tree=True)
    root = etree.fromstring(source, parser)
    stopped = [e.message for e in parser.error_log if e.type_name == "ERR_RESOURCE_LIMIT"]
    if root is None:  # nothing but white space and comments
        root = lxml.html.fromstring("<html></html>")
    return root, stopped


class _ShallowBuilder:
    """A parser target: passes the events to lxml's tree builder, the deep tags left out."""

    def __init__(self, depth: int, limit: int, role_of: RoleOf) -> None:
        import lxml.html
        from lxml import etree

        self.builder = etree.TreeBuilder(parser=lxml.html.HTMLParser())
        self.depth = depth
        self.limit = limit
        self.role_of = role_of
        self.built: list[bool] = []
        """Whether each open element was built, outermost first."""
        self.depth_built = 0
        self.hidden = 0
        """How many open elements left out below the limit hide their content."""

    def start(self, tag: str, attributes: Mapping[str, str]) -> None:
        if self.hidden:  # inside the content of a hiding element left out: all of it stays out
            self.hidden += 1
            self.built.append(False)
            return
        deep = self.depth_built >= self.depth
        role = self.role_of(tag, attributes) if deep else DeepRole.SHAPES
        built = role is not DeepRole.CONTAINS and self.depth_built < self.limit
        if not built and role is DeepRole.HIDES:
            self.hidden = 1
        self.built.append(built)
        if built:
            self.depth_built += 1
            self.builder.start(tag, dict(attributes))

    def end(self, tag: str) -> None:
        if not self.built:
            return
        if self.built.pop():
            self.depth_built -= 1
            self.builder.end(tag)
        elif self.hidden:
            self.hidden -= 1

    def data(self, data: str) -> None:
        if not self.hidden:
            self.builder.data(data)

    def comment(self, text: str) -> None:
        if not self.hidden:
            self.builder.comment(text)

    def close(self) -> HtmlElement | None:
        root: HtmlElement | None = self.builder.close()
        return root
