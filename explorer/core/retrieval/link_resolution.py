"""Where a reference leads: resolved the way the folder's publisher resolves it.

The index stores what each file writes (:mod:`explorer.core.ingest.references`); which file a
reference means depends on every other file (a note found by name, a page by its URL), so it is
decided here, over a :class:`SiteRoutes` table built from the index (never by asking the disk
link by link). Each reference gets one :class:`LinkState`:

- **resolved**: it leads to a file (or folder) of the tree;
- **missing**: it leads into the tree, but nothing is there;
- **outside the root**: it leads into the site or folder around the root (``/blog/`` when the
  root is the site's ``docs``, ``../../elsewhere.md``), which the index does not hold.

The rules, by how the reference is written:

- **A path** (``[text](path)``, an image, a definition): on a static site (see
  :mod:`explorer.core.ingest.site_layout`), a page is served at its own URL, so a relative link
  resolves from there: ``../api/`` in ``languages/java/sdk.md`` (served at
  ``/languages/java/sdk/``) is ``languages/java/api.md``, while ``_index.md``, ``index.md`` and
  ``README.md`` pages are served at their folder's URL. A link to a ``.md`` file is read from
  the file's folder (as MkDocs, Docusaurus and Hugo's link hook do). A site-absolute link
  (``/docs/collector/``) is read under the URL the root is served at. In a plain folder a link
  is relative to its file, ``/path`` to the root. Either way ``page/`` (or ``page``) is
  ``page.md``, ``page/_index.md``, ``page/index.md`` or ``page/README.md``; front matter
  ``url``, ``slug`` and ``aliases`` give a page its other URLs (and a Hugo section's ``url``
  moves the pages under it, as docs.nginx.com does).
- **A wikilink** (``[[Note]]``): as Obsidian does, by name anywhere in the vault, in any case,
  the shortest path on a tie (``[[folder/Note]]``: the notes whose path ends so); then by front
  matter ``aliases``; an attachment (``![[diagram.png]]``) by its file name.
- **A Hugo ref** (``{{< ref "path" >}}``): a content path, relative to the page's folder,
  then to the content root, then (a bare name) the page of that name.
- **A mention** (```guides/install.md```) means the file that exists, relative to its file or
  to the root; when neither does, it is missing only if the folder of one of them exists
  (otherwise it is prose about some other tree, and not a reference at all).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath

from explorer.core.ingest.references import (
    FileReference,
    LinkSyntax,
    ReferenceKind,
    link_path,
    normalise_path,
)
from explorer.core.ingest.root_paths import OutsideRoot, resolve_inside_root
from explorer.core.ingest.site_layout import Mount, SiteKind, SiteLayout

PAGE_EXTENSIONS = frozenset({"md", "markdown", "mdx"})
"""Files that are pages: a link may name them without their extension."""
INDEX_STEMS = ("_index", "index", "README", "readme")
"""A page with one of these names is served at its folder's URL, in this order of preference."""
_NUMBER_PREFIX = re.compile(r"^\d+[-_. ]")
"""Docusaurus leaves a leading number out of a page's URL (``01-intro.md`` is ``intro``)."""
_PRUNED_FOLDERS = frozenset({"node_modules", "__pycache__"})
"""Folders whose files no attachment link means (hidden folders are skipped too)."""


class LinkState(StrEnum):
    """Where a reference leads."""

    RESOLVED = "resolved"
    MISSING = "missing"
    OUTSIDE_ROOT = "outside-root"


@dataclass(frozen=True)
class Resolution:
    """A reference's state and the root-relative path it leads to (or would)."""

    state: LinkState
    target: str
    """The file or folder (resolved); the path nothing is at (missing); the URL or path as it
    reads outside the root."""


class DiskPaths:
    """Existence of root-relative paths on disk, asked once each; and, for attachments, the
    files of the tree by name, listed once when first needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._exists: dict[str, bool] = {}
        self._names: dict[str, list[str]] | None = None

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file or folder of the tree. A path that a symbolic link
        leads out of the root is not of the tree: it counts as missing whether or not
        something exists out there, so a link never tells what lies outside the root."""
        if path not in self._exists:
            if path in (".", ""):
                self._exists[path] = True
            else:
                try:
                    self._exists[path] = resolve_inside_root(self.root, path).exists()
                except (OutsideRoot, OSError):
                    self._exists[path] = False
        return self._exists[path]

    def folder_exists(self, path: str) -> bool:
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        return self.exists(folder)

    def by_name(self, name: str) -> list[str]:
        """Files of the tree called ``name`` (in any case), shortest path first; hidden
        folders and symbolic links to folders are not entered."""
        if self._names is None:
            self._names = {}
            for folder, folders, files in os.walk(self.root):
                folders[:] = [
                    f for f in folders if not f.startswith(".") and f not in _PRUNED_FOLDERS
                ]
                rel = Path(folder).relative_to(self.root).as_posix()
                for file in files:
                    path = file if rel == "." else f"{rel}/{file}"
                    self._names.setdefault(file.casefold(), []).append(path)
        return sorted(self._names.get(name.casefold(), []), key=_shortest)


def _shortest(path: str) -> tuple[int, int, str]:
    return (path.count("/"), len(path), path)


def _strip_page_extension(path: str) -> str:
    stem, dot, extension = path.rpartition(".")
    if dot and "/" not in extension and extension.lower() in PAGE_EXTENSIONS | {"html", "htm"}:
        return stem
    return path


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rpartition(".")[2].lower() if "." in name[1:] else ""


def _route_key(path: str) -> str:
    """A root-relative path as a route: no extension of a page, no index name, any case."""
    path = _strip_page_extension("" if path == "." else path.strip("/"))
    folder, _slash, name = path.rpartition("/")
    if name in INDEX_STEMS:
        path = folder
    return path.casefold()


class SiteRoutes:
    """Every file the index knows, by the paths, URLs and names a link may give it."""

    def __init__(
        self,
        layout: SiteLayout,
        mounts: tuple[Mount, ...],
        pages: Mapping[str, Mapping[str, object]],
    ) -> None:
        """``pages``: each file of the index and its front matter (aliases, slug, url)."""
        self.layout = layout
        self.mounts = mounts
        self.files = frozenset(pages)
        self.routes: dict[str, str] = {}
        """Route key (:func:`_route_key` of a root-relative path) → file."""
        self.names: dict[str, list[str]] = {}
        """A file's name in any case (and a page's name without extension) → files, shortest
        path first."""
        self.aliases: dict[str, list[str]] = {}
        """An alias of a note (front matter ``aliases`` that are names, not URLs) → files."""
        self.bases: dict[str, str] = {}
        """A page served at a URL other than its path's: the URL, as a root-relative folder
        (``content/a/b``) that its relative links resolve from."""
        explicit: list[tuple[str, str]] = []
        sections: list[tuple[str, str]] = []
        for path in sorted(pages, key=_shortest):
            metadata = pages[path]
            name = path.rsplit("/", 1)[-1]
            self.names.setdefault(name.casefold(), []).append(path)
            if _extension(path) in PAGE_EXTENSIONS:
                stem = _strip_page_extension(name).casefold()
                if stem != name.casefold():
                    self.names.setdefault(stem, []).append(path)
            for alias in _strings(metadata.get("aliases")):
                if "/" in alias:
                    explicit.extend((key, path) for key in self._url_keys(path, alias))
                else:
                    self.aliases.setdefault(alias.casefold(), []).append(path)
            served = self._served_at(path, metadata)
            if served is not None:
                explicit.append((served, path))
                self.bases[path] = served
                if name.rpartition(".")[0] in INDEX_STEMS and _extension(path) in PAGE_EXTENSIONS:
                    natural = _route_key(path)
                    if natural and natural != served:
                        sections.append((natural, served))
        for key, path in explicit:
            self.routes.setdefault(key, path)
        keys = {path: _route_key(path) for path in pages}
        pages_first = sorted(
            pages, key=lambda p: (p.rsplit("/", 1)[-1].startswith(("README", "readme")), p)
        )
        for path in pages_first:
            self.routes.setdefault(keys[path], path)
            if layout.kind is SiteKind.DOCUSAURUS:
                folder, _slash, name = keys[path].rpartition("/")
                plain = _NUMBER_PREFIX.sub("", name)
                if plain != name:
                    self.routes.setdefault(f"{folder}/{plain}".lstrip("/"), path)
        self._move_sections(sections, keys)

    def _move_sections(self, sections: list[tuple[str, str]], keys: dict[str, str]) -> None:
        """A section served at another URL moves the pages under it (docs.nginx.com does so):
        ``sections`` are (its route key, the URL it is served at); ``keys``, each page's route
        key. Each page looks its own folders up among the sections (not every section at every
        page: 800 sections of a site of 8,000 pages took 13 s); the routes are claimed in the
        same order, section by section and page by page."""
        if not sections:
            return
        numbers: dict[str, list[int]] = {}
        for number, (natural, _served) in enumerate(sections):
            numbers.setdefault(natural, []).append(number)
        moved: list[tuple[int, int, str, str]] = []
        for order, (path, key) in enumerate(keys.items()):
            end = key.find("/")
            while end != -1:
                for number in numbers.get(key[:end], ()):
                    moved.append((number, order, sections[number][1] + key[end:], path))
                end = key.find("/", end + 1)
        for _number, _order, key, path in sorted(moved):
            self.routes.setdefault(key, path)

    # -- URLs and folders ---------------------------------------------------------------------
    def folders_of_url(self, url: str) -> list[str] | None:
        """The root-relative paths a site URL path may be (one per mount that serves it,
        longest URL first); None when no mount serves it: it lies outside the root."""
        with_slash = _normal_url(url).rstrip("/") + "/"
        found = []
        for mount in sorted(self.mounts, key=lambda m: -len(m.url)):
            if with_slash.startswith(mount.url):
                rest = with_slash[len(mount.url) :].strip("/")
                found.append((mount.folder + rest).strip("/") or ".")
        return found or None

    def url_of_folder(self, path: str) -> str | None:
        """The URL path of a root-relative folder (``content/a`` → ``/a/``), if it is
        published."""
        path = "" if path == "." else path.strip("/")
        for mount in sorted(self.mounts, key=lambda m: -len(m.folder)):
            if not mount.folder:
                rest = path
            elif f"{path}/".startswith(mount.folder):
                rest = path[len(mount.folder) :]
            else:
                continue
            rest = rest.strip("/")
            return f"{mount.url}{rest}/" if rest else mount.url
        return None

    def page_base(self, source: str) -> str | None:
        """The root-relative folder a page's relative links resolve from on a site: its own
        URL (``content/a/b`` for ``content/a/b.md``), its folder for an index page or on a site
        without pretty URLs; None when ``source`` is no page of the site."""
        if source in self.bases:
            return self.bases[source]
        if _extension(source) not in PAGE_EXTENSIONS | {"html", "htm"}:
            return None
        if self.url_of_folder(source.rpartition("/")[0]) is None:
            return None
        folder, _slash, name = source.rpartition("/")
        stem = name.rpartition(".")[0]
        if (
            stem in INDEX_STEMS
            or not self.layout.kind.pretty_urls
            or _extension(source) in ("html", "htm")
        ):
            return folder or "."
        return f"{folder}/{stem}".lstrip("/")

    def _served_at(self, path: str, metadata: Mapping[str, object]) -> str | None:
        """The route key of a page whose front matter moves it (``url``, ``slug``)."""
        url = metadata.get("url")
        if isinstance(url, str) and url.strip():
            keys = self._url_keys(path, url)
            return keys[0] if keys else None
        slug = metadata.get("slug")
        if isinstance(slug, str) and slug.strip():
            if slug.startswith("/"):
                keys = self._url_keys(path, slug)
                return keys[0] if keys else None
            folder = _route_key(path).rpartition("/")[0]
            return f"{folder}/{slug.strip('/').casefold()}".lstrip("/")
        return None

    def _url_keys(self, path: str, url: str) -> list[str]:
        """The route keys of a URL written in ``path``'s front matter (absolute, or relative
        to the page's section)."""
        url = url.strip().split("#", 1)[0].split("?", 1)[0]
        if not url.startswith("/"):
            section = self.url_of_folder(path.rpartition("/")[0]) or "/"
            url = section + url
        folders = self.folders_of_url(url) or []
        return [_route_key(folder) for folder in folders[:1]]

    # -- lookups ------------------------------------------------------------------------------
    def page(self, path: str) -> str | None:
        """The file a root-relative path means: the file itself, else (for a path without an
        extension, or ``.html``) the page served there."""
        if path in self.files:
            return path
        if _extension(path) not in ("", "html", "htm") and not path.endswith("/"):
            return None
        return self.routes.get(_route_key(path))

    def named(self, name: str) -> list[str]:
        return self.names.get(name.casefold(), [])


def man_page_paths(source: str, target: str) -> list[str]:
    """Where the page ``target`` (``ls(1)``) named in the manual page ``source`` would be, most
    likely first: beside it, or in its section's folder of the same tree (``man1/``, under the
    same language), as ``source`` is stored (gzipped or not)."""
    name, _, section = target.rstrip(")").partition("(")
    folder, _, own = source.rpartition("/")
    packed = own.endswith(".gz")
    files = [f"{name}.{section}.gz", f"{name}.{section}"]
    if not packed:
        files.reverse()
    parent, _, here = folder.rpartition("/")
    folders = [folder]
    if here.startswith("man") and section[:1].isdigit():
        folders.insert(0, f"{parent}/man{section[0]}" if parent else f"man{section[0]}")
    seen: dict[str, None] = {}
    for place in folders:
        for file in files:
            seen[f"{place}/{file}" if place else file] = None
    return list(seen)


SPHINX_SUFFIXES = (".rst", ".md", ".txt")
"""The source suffixes a Sphinx page's name is tried with (reStructuredText, MyST Markdown)."""


def sphinx_paths(source: str, target: str, roots: Sequence[str]) -> list[str]:
    """Where the page or file ``target`` named in the Sphinx page ``source`` would be, most
    likely first: from the page's folder, or for a name from ``/``, from each of ``roots``;
    a name without a suffix with each of :data:`SPHINX_SUFFIXES` first, then as it is; a
    page as built (``usage.html``) as it is, then as its source."""
    name = target.strip()
    if name.startswith("/"):
        bases = [f"{root}/{name.lstrip('/')}" if root else name.lstrip("/") for root in roots]
    else:
        folder = source.rpartition("/")[0]
        bases = [f"{folder}/{name}" if folder else name]
    seen: dict[str, None] = {}
    for base in bases:
        path = normalise_path(base)
        if path is None or path == ".":
            continue
        suffix = PurePosixPath(path).suffix.lower()
        if not suffix:  # a page's name
            seen.update(dict.fromkeys([path + each for each in SPHINX_SUFFIXES] + [path]))
        elif suffix in SPHINX_SUFFIXES:  # a page's file
            seen[path] = None
        elif suffix == ".html":  # a page as built: the file, else its source
            stem = path[: -len(suffix)]
            seen.update(dict.fromkeys([path] + [stem + each for each in SPHINX_SUFFIXES]))
        else:  # a file, or a name with a dot (``release/3.25``)
            seen.update(dict.fromkeys([path] + [path + each for each in SPHINX_SUFFIXES]))
    return list(seen)


_ANTORA_FAMILIES = {ReferenceKind.EMBED: "partials", ReferenceKind.IMAGE: "images"}
"""The folder of an Antora module an ``include`` (a partial) or an ``image`` is read from; a
page's ``xref`` is read from ``pages``."""
_ANTORA_NAMED = {
    "page": "pages",
    "partial": "partials",
    "image": "images",
    "example": "examples",
    "attachment": "attachments",
}
"""A resource's family as Antora names it (``partial$linux.adoc``), and its folder."""


def asciidoc_paths(source: str, target: str, kind: ReferenceKind) -> list[str]:
    """Where the file an AsciiDoc page ``source`` names would be, most likely first: from the
    page's folder (Asciidoctor), then, in an Antora module (``modules/NAME/pages/...``), from
    the module's folder of its kind (``pages``, ``partials``, ``images``) or of the family it
    names (``partial$linux.adoc``)."""
    path = link_path(target) or ""
    named, dollar, rest = path.partition("$")
    family = _ANTORA_NAMED.get(named) if dollar else None
    folder = source.rpartition("/")[0]
    seen: dict[str, None] = {}
    own = normalise_path(f"{folder}/{path}" if folder else path)
    if own is not None and family is None:
        seen[own] = None
    parts = folder.split("/")
    if "pages" in parts:
        module = "/".join(parts[: len(parts) - 1 - parts[::-1].index("pages")])
        path = rest if family is not None else path
        family = family or _ANTORA_FAMILIES.get(kind, "pages")
        antora = normalise_path(f"{module}/{family}/{path}" if module else f"{family}/{path}")
        if antora is not None:
            seen[antora] = None
    return list(seen) or [own if own is not None else path]


def tex_input_paths(source: str, target: str) -> list[str]:
    """Where the file ``target`` pulled in by the LaTeX source ``source`` would be, most likely
    first: read from the source's folder, then from each folder above it (TeX reads from the
    main file's, and a chapter in a folder of its own names files by the main file's path)."""
    folder = source.rpartition("/")[0]
    seen: dict[str, None] = {}
    while True:
        path = normalise_path(f"{folder}/{target}" if folder else target)
        if path is not None:
            seen[path] = None
        if not folder:
            return list(seen)
        folder = folder.rpartition("/")[0]


def _normal_url(url: str) -> str:
    """A URL path with ``.`` and ``..`` folded (never above ``/``), its trailing slash kept."""
    if not url.strip("/"):
        return "/"
    normal = posixpath.normpath("/" + url.lstrip("/"))
    normal = "/" + normal.lstrip("/")  # normpath keeps a leading "//"
    return normal + "/" if url.endswith("/") and normal != "/" else normal


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value if isinstance(item, str) and item.strip()]
    return []


@dataclass
class LinkResolver:
    """Resolves the references of one index against its routes and its disk."""

    routes: SiteRoutes
    disk: DiskPaths
    labels: Mapping[str, str] = field(default_factory=dict)
    """The file each Sphinx label (``.. _label:``) is defined in, by its key."""

    @property
    def site(self) -> bool:
        return self.routes.layout.kind is not SiteKind.PLAIN or self.routes.layout.from_setting

    def resolve(self, source: str, reference: FileReference) -> Resolution | None:
        """Where ``reference`` (written in ``source``) leads; None when it means no file of
        the tree (a mention whose folders exist nowhere)."""
        if reference.kind is ReferenceKind.MENTION:
            return self._mention(reference)
        if reference.syntax is LinkSyntax.WIKILINK:
            return self._wikilink(source, reference.target)
        if reference.syntax is LinkSyntax.HUGO_REF:
            return self._hugo_ref(source, reference.target)
        if reference.syntax is LinkSyntax.MAN_PAGE:
            return self._first(man_page_paths(source, reference.target))
        if reference.syntax is LinkSyntax.SPHINX_LABEL:
            return None  # a place, not a link
        if reference.syntax is LinkSyntax.SPHINX_REF:
            return self._sphinx_ref(source, reference)
        if reference.syntax is LinkSyntax.SPHINX_DOC:
            return self._first(sphinx_paths(source, reference.target, self._sphinx_roots(source)))
        if reference.syntax is LinkSyntax.ASCIIDOC:
            return self._first(asciidoc_paths(source, reference.target, reference.kind))
        if reference.syntax is LinkSyntax.TEX_INPUT:
            return self._first(tex_input_paths(source, reference.target))
        return self._path(source, reference.raw)

    # -- the forms ----------------------------------------------------------------------------
    def _found(self, path: str) -> Resolution | None:
        """``path`` as a file the index knows, or a file or folder on disk."""
        page = self.routes.page(path)
        if page is not None:
            return Resolution(LinkState.RESOLVED, page)
        if self.disk.exists(path):
            return Resolution(LinkState.RESOLVED, path)
        return None

    def _sphinx_ref(self, source: str, reference: FileReference) -> Resolution:
        """The page of the label a ``:ref:`` names; else, for ``page:Title`` (a section as
        Sphinx's autosectionlabel names it), that page; else missing, as ``#label``."""
        found = self.labels.get(reference.target)
        if found is not None:
            return Resolution(LinkState.RESOLVED, found)
        page, colon, _title = reference.raw.partition(":")
        if colon and page:
            wanted = sphinx_paths(source, "/" + page.lstrip("/"), self._sphinx_roots(source))
            if any(self._found(path) is not None for path in wanted):
                return self._first(wanted)
        return Resolution(LinkState.MISSING, f"#{reference.target}")

    def _sphinx_roots(self, source: str) -> list[str]:
        """The folders a Sphinx path from ``/`` may be read from: those above ``source`` that
        hold a ``conf.py``, nearest first, then the root."""
        roots: list[str] = []
        folder = source.rpartition("/")[0]
        while folder:
            if self.disk.exists(f"{folder}/conf.py"):
                roots.append(folder)
            folder = folder.rpartition("/")[0]
        return [*roots, ""]

    def _first(self, candidates: Iterable[str]) -> Resolution:
        """The first candidate that resolves, or the first one as missing."""
        wanted = list(candidates)
        for candidate in wanted:
            found = self._found(candidate)
            if found is not None:
                return found
        return Resolution(LinkState.MISSING, wanted[0] if wanted else ".")

    def _path(self, source: str, raw: str) -> Resolution | None:
        path = link_path(raw)
        if path is None:
            return None
        folder = source.rpartition("/")[0]
        relative = not path.startswith("/")
        in_file = normalise_path(path.lstrip("/") if not relative else f"{folder}/{path}")
        base = self.routes.page_base(source) if self.site else None
        if base is None and not (self.site and not relative):  # by path, from the file
            if in_file is None:
                return Resolution(LinkState.OUTSIDE_ROOT, path)
            if PurePosixPath(in_file).suffix:
                return self._first([in_file])
            # A page by its name (MyST Markdown in a Sphinx project: [the pip page](pip)).
            return self._first([in_file, *(in_file + suffix for suffix in SPHINX_SUFFIXES)])
        if relative and in_file is not None and _extension(path.rstrip("/")) in PAGE_EXTENSIONS:
            found = self._found(in_file)  # a link to a .md file: from the file's folder first
            if found is not None:
                return found
        url = (
            posixpath.join(self.routes.url_of_folder(base or ".") or "/", path)
            if relative
            else path
        )
        folders = self.routes.folders_of_url(url)
        if folders is None:
            return Resolution(LinkState.OUTSIDE_ROOT, _normal_url(url))
        resolution = self._first(folders)
        if (
            resolution.state is LinkState.MISSING
            and relative
            and in_file is not None
            and (_extension(path.rstrip("/")) in PAGE_EXTENSIONS)
        ):
            return Resolution(LinkState.MISSING, in_file)  # a .md link means the file beside
        return resolution

    def _wikilink(self, source: str, target: str) -> Resolution:
        target = target.strip().strip("/")
        if target.startswith(("./", "../")):
            joined = normalise_path(f"{source.rpartition('/')[0]}/{target}")
            if joined is None:
                return Resolution(LinkState.OUTSIDE_ROOT, target)
            return self._first([joined, f"{joined}.md"])
        name = target.rsplit("/", 1)[-1]
        wanted = target.casefold()
        candidates = self.routes.named(name)
        if "/" in target:  # [[folder/Note]]: the notes whose path ends so
            candidates = [path for path in candidates if _ends_with(path, target)]
        if candidates:
            return Resolution(LinkState.RESOLVED, min(candidates, key=_shortest))
        if aliased := self.routes.aliases.get(target.casefold()):
            return Resolution(LinkState.RESOLVED, min(aliased, key=_shortest))
        if _extension(target) not in ("", *PAGE_EXTENSIONS):  # an attachment the index lacks
            on_disk = [
                path
                for path in self.disk.by_name(name)
                if "/" not in target or f"/{path.casefold()}".endswith("/" + wanted)
            ]
            if on_disk:
                return Resolution(LinkState.RESOLVED, on_disk[0])
        wanted_path = target if _extension(target) else f"{target}.md"
        return Resolution(LinkState.MISSING, wanted_path)

    def _hugo_ref(self, source: str, target: str) -> Resolution:
        # Hugo finds a page by its path without extension: "/a/b.md" is also the section
        # "a/b/_index.md" or the bundle "a/b/index.md".
        target = _strip_page_extension(target.strip())
        clean = target.strip("/")
        if target.startswith("/"):
            folders = self.routes.folders_of_url(target) if self.site else [clean or "."]
            if folders is None:
                return Resolution(LinkState.OUTSIDE_ROOT, target)
            return self._first(folders)
        relative = normalise_path(f"{source.rpartition('/')[0]}/{clean}")
        from_content = self.routes.folders_of_url("/" + clean) if self.site else [clean]
        candidates = ([relative] if relative is not None else []) + (from_content or [])
        for candidate in candidates:
            found = self._found(candidate)
            if found is not None:
                return found
        if "/" not in clean:
            named = [p for p in self.routes.named(clean) if _extension(p) in PAGE_EXTENSIONS]
            if named:
                nearest = min(named, key=lambda path: _nearest(source, path))
                return Resolution(LinkState.RESOLVED, nearest)
        if from_content is None:  # not beside the page, and the content root's is elsewhere
            return Resolution(LinkState.OUTSIDE_ROOT, "/" + clean)
        return Resolution(LinkState.MISSING, candidates[0])

    def _mention(self, reference: FileReference) -> Resolution | None:
        candidates = [c for c in (reference.target, reference.alternative) if c]
        for candidate in candidates:
            if candidate in self.routes.files or self.disk.exists(candidate):
                return Resolution(LinkState.RESOLVED, candidate)
        for candidate in candidates:
            if self.disk.folder_exists(candidate):
                return Resolution(LinkState.MISSING, candidate)
        return None


def _ends_with(path: str, target: str) -> bool:
    """Whether ``path`` ends with the folders and name of ``target`` (a page's extension
    optional), in any case."""
    path, target = path.casefold(), target.casefold().strip("/")
    for whole, end in (
        (path, target),
        (_strip_page_extension(path), _strip_page_extension(target)),
    ):
        if whole == end or whole.endswith("/" + end):
            return True
    return False


def _nearest(source: str, path: str) -> tuple[int, int, str]:
    """Order of preference among pages of the same name: the most folders shared with the
    page that links, then the shortest path."""
    shared = len(os.path.commonprefix([source.split("/"), path.split("/")]))
    return (-shared, path.count("/"), path)
