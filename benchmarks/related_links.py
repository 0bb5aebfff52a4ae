"""The link graph of a Hugo documentation folder: each page's links to other pages of the folder.

Used by ``benchmarks/related.py`` as the stand-in for "related": a page's own links to other
pages of the corpus. Nothing here feeds the related-files method; it only judges it.

Links are read with a real Markdown parser (markdown-it-py) after Hugo's own first step:
``{{< ref "X" >}}`` and ``{{< relref "X" >}}`` shortcodes become their target, as Hugo expands
them before the Markdown is rendered. Inline, reference-style and autolinks all come out of the
parser as ``link_open`` tokens; links inside code are not links. ``{{< link "X" ... >}}``
shortcodes and ``titleUrl`` of ``{{< card >}}`` shortcodes are links a reader sees too.
Images are not links.

A target resolves to a file of the folder in this order:

- a ``ref``/``relref`` target is a *content path*: relative to the page's folder, then to the
  content root, then to the page's top folder (a product's root), then (a bare file name) the
  one file of that name;
- a link is a *URL*: ``https://docs.nginx.com/...`` counts as site-absolute; a relative URL is
  taken against the page's URL the way a browser does (``a/b/c.md`` is served at ``/a/b/c/``),
  then against the page's folder (links written to ``.md`` files);
- a URL is looked up among every page's URL: the path without ``.md`` (``_index.md`` and
  ``index.md`` are served at their folder), front matter ``url:`` and ``aliases:``, and a
  section's ``url:`` as the prefix of its pages (``/nginx-ingress-controller/x`` is ``nic/x``).

Anchors (``#...``), queries and trailing slashes are ignored. Links to the page itself are dropped.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

SITE_HOSTS = {"docs.nginx.com"}
"""Hosts whose absolute URLs are pages of this corpus."""

_REF = re.compile(r"\{\{<\s*(?:ref|relref)\s*\"([^\"]*)\"\s*>\}\}")
_LINK_SHORTCODE = re.compile(r"\{\{<\s*link\s+\"([^\"]*)\"")
_CARD_URL = re.compile(r"\{\{<\s*card\b[^>]*?\btitleUrl=\"([^\"]*)\"")
_INDEX_NAMES = ("_index.md", "index.md")


@dataclass
class LinkGraph:
    """Each page's resolvable links to other pages, and counts of what did not resolve."""

    links: dict[str, set[str]]
    """Page (path relative to the root) → the other pages it links to."""
    kinds: Counter = field(default_factory=Counter)
    """How many internal link targets were found, by kind (ref, markdown, shortcode)."""
    unresolved: Counter = field(default_factory=Counter)
    """Internal link targets that name no page of the folder, by kind."""


def page_url(path: str) -> str:
    """The URL Hugo serves a content file at, from its path: ``a/b.md`` → ``/a/b``."""
    stem = path[: -len(".md")] if path.endswith(".md") else path
    for name in ("_index", "index"):
        if stem == name:
            return "/"
        if stem.endswith("/" + name):
            stem = stem[: -len(name) - 1]
    return _normal("/" + stem)


def _normal(url: str) -> str:
    """A URL path without anchor, query, trailing slash or ``.md``; lower case; ``/`` kept."""
    url = unquote(url.split("#", 1)[0].split("?", 1)[0]).strip()
    url = posixpath.normpath(url) if url else url
    url = url.rstrip("/") or "/"
    if url.endswith(".md"):
        url = page_url(url.lstrip("/"))
    return url.lower()


class _Site:
    """Every page's URLs and content paths, for resolving links."""

    def __init__(self, root: Path, pages: dict[str, str]) -> None:
        self.root = root
        self.pages = pages
        self.by_url: dict[str, str] = {}
        self.prefixes: list[tuple[str, str]] = []
        self.by_name: dict[str, list[str]] = {}
        self.lower = {path.lower(): path for path in pages}
        for path in pages:
            self.by_url.setdefault(page_url(path), path)
            self.by_name.setdefault(posixpath.basename(path).lower(), []).append(path)
        for path, text in pages.items():
            meta = _front_matter(text)
            own = [meta.get("url")] + _as_list(meta.get("aliases"))
            for url in own:
                if isinstance(url, str) and url.strip():
                    self.by_url.setdefault(_normal(url if url.startswith("/") else "/" + url), path)
            section_url = meta.get("url")
            if posixpath.basename(path) in _INDEX_NAMES and isinstance(section_url, str):
                folder = page_url(path)
                declared = _normal("/" + section_url.strip("/"))
                if declared != folder and folder != "/":
                    self.prefixes.append((declared, folder))

    def by_content_path(self, target: str, source: str) -> str | None:
        """A ``ref`` target: a content path relative to the page's folder or to the root."""
        clean = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
        if not clean:
            return None
        folder = posixpath.dirname(source)
        section = source.split("/", 1)[0] if "/" in source else ""
        # a product's pages also write refs from the product's root (its own Hugo module)
        bases = ["", section] if clean.startswith("/") else [folder, "", section]
        for base in bases:
            joined = posixpath.normpath(posixpath.join(base, clean.lstrip("/")))
            found = self._file(joined)
            if found:
                return found
        if "/" not in clean.strip("/"):
            named = self.by_name.get(clean.strip("/").lower(), [])
            if len(named) == 1:
                return named[0]
        return self.by_url_path(clean if clean.startswith("/") else "/" + clean)

    def _file(self, content_path: str) -> str | None:
        """The page at a content path: the file itself, ``X.md`` or the folder's index page."""
        content_path = content_path.strip("/").lower()
        candidates = [content_path, content_path + ".md"]
        candidates += [posixpath.join(content_path, name) for name in _INDEX_NAMES]
        for candidate in candidates:
            if candidate in self.lower:
                return self.lower[candidate]
        return None

    def by_url_path(self, url: str) -> str | None:
        """A site-absolute URL path: a page's URL, or a section URL's prefix."""
        normal = _normal(url)
        if normal in self.by_url:
            return self.by_url[normal]
        for declared, folder in self.prefixes:
            if normal == declared or normal.startswith(declared + "/"):
                rewritten = folder + normal[len(declared) :]
                if rewritten in self.by_url:
                    return self.by_url[rewritten]
        return None

    def by_link(self, href: str, source: str) -> str | None | bool:
        """A link's page; ``False`` for a link that does not point inside the site at all."""
        parts = urlsplit(href.strip())
        if parts.scheme or parts.netloc:
            if parts.scheme not in ("http", "https") or parts.netloc.lower() not in SITE_HOSTS:
                return False
            return self.by_url_path(parts.path or "/")
        if not parts.path:  # "#anchor": this page
            return False
        if parts.path.startswith("/"):
            return self.by_url_path(parts.path)
        # relative: against the page's URL (a page is a folder on the site), then its folder
        page_base = page_url(source) + "/"
        found = self.by_url_path(posixpath.join(page_base, parts.path))
        if found:
            return found
        return self._file(posixpath.normpath(posixpath.join(posixpath.dirname(source), parts.path)))


def _front_matter(text: str) -> dict:
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def _link_targets(parser: MarkdownIt, text: str) -> list[tuple[str, str]]:
    """(kind, target) of every link of a page, in order."""
    found: list[tuple[str, str]] = []
    expanded = _REF.sub(lambda m: "HUGOREF:" + m.group(1).replace(" ", "%20"), text)
    for kind, pattern in (("shortcode", _LINK_SHORTCODE), ("shortcode", _CARD_URL)):
        found.extend((kind, m.group(1)) for m in pattern.finditer(text))

    def walk(tokens) -> None:
        for token in tokens:
            if token.type == "link_open":
                href = str(token.attrGet("href") or "")
                if href.startswith("HUGOREF:"):
                    found.append(("ref", unquote(href[len("HUGOREF:") :])))
                else:
                    found.append(("markdown", href))
            if token.children:
                walk(token.children)

    walk(parser.parse(expanded))
    return found


def link_graph(root: Path, paths: list[str] | None = None) -> LinkGraph:
    """The links between the Markdown pages under ``root`` (or only among ``paths``)."""
    every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if p.is_file())
    wanted = set(every if paths is None else paths)
    pages = {path: (root / path).read_text(encoding="utf-8", errors="replace") for path in every}
    site = _Site(root, pages)
    parser = _markdown()
    graph = LinkGraph(links={})
    for source in every:
        if source not in wanted:
            continue
        targets: set[str] = set()
        for kind, target in _link_targets(parser, pages[source]):
            found = (
                site.by_content_path(target, source)
                if kind == "ref"
                else site.by_link(target, source)
            )
            if found is False:
                continue
            graph.kinds[kind] += 1
            if found is None:
                graph.unresolved[kind] += 1
            elif found != source and found in wanted:
                targets.add(found)
        graph.links[source] = targets
    return graph
