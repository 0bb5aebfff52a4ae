"""Who publishes a folder, and at which URLs: the layout links are resolved by.

A folder of Markdown may be the content of a static site, whose pages link to one another by
their URLs (``/docs/collector/``, ``../api/``), an Obsidian vault, whose notes link by name
(``[[Note]]``), or plain files linking by path. :func:`detect_layout` tells them apart from
the files a generator leaves at or above the root, reading nothing but their names (and, for
Hugo and MkDocs, the one setting that moves the content folder):

- **Hugo**: ``hugo.toml|yaml|json`` (or ``config.*`` beside ``content/``, ``layouts/`` or
  ``archetypes/``); without any config, a ``content/`` folder holding ``_index.md`` (the root
  is the site) or a ``content`` folder above the root; and a root that holds ``_index.md``
  section pages itself, with nothing of its site around it (docs copied or vendored out of
  their site: *detached*). Pages are served at ``/section/page/``; ``static/`` is served at
  ``/``.
- **Jekyll**: ``_config.yml`` (above the root: beside ``_posts/``, ``_layouts/``...). Pages are
  served at ``/folder/page.html``.
- **MkDocs**: ``mkdocs.yml``; ``docs/`` (or its ``docs_dir``) is served at ``/``.
- **Docusaurus**: ``docusaurus.config.*``; ``docs/`` at ``/docs/``, ``blog/`` at ``/blog/``,
  ``src/pages/`` at ``/``.
- **Obsidian**: a ``.obsidian`` folder at or above the root (a vault; wikilinks are read in any
  Markdown anyway).

A :class:`Mount` ties a URL path to a folder under the root: ``/`` to ``content/`` when the root
is a Hugo site, ``/docs/`` to the root itself when the root is a site's ``content/en/docs``.
When the root lies below the content folder, the URL depends on settings the folder may not
hold (``content/en`` is the English content of a multilingual site, served at ``/``, or a
section ``en``): the layout then carries each reading, and the resolver keeps the one under
which most of the folder's own site-absolute links resolve. ``link_base`` (the config file)
says it outright: the URL path the root is served at. A detached Hugo folder says nothing of
its URL: its readings are its own folder's name (``/docs/`` for ``docs``) and ``/``, and the
resolver adds the URLs its site-absolute links lead under most often (:func:`linked_bases`).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

MAX_LEVELS_UP = 12
"""How far above the root a generator's config file is looked for."""
MAX_CONFIG_BYTES = 256_000
"""A config file larger than this is not read for its content folder (its name still counts)."""
_JEKYLL_FOLDERS = frozenset({"_posts", "_layouts", "_includes", "_data", "_sass", "Gemfile"})
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?$")
"""A folder name that may be a language's content (``en``, ``pt-br``, ``zh-CN``)."""


class SiteKind(StrEnum):
    """The publisher whose rules links follow."""

    PLAIN = "plain"
    """Files linking by path, relative to the file or (``/path``) to the root."""
    HUGO = "hugo"
    JEKYLL = "jekyll"
    MKDOCS = "mkdocs"
    DOCUSAURUS = "docusaurus"

    @property
    def pretty_urls(self) -> bool:
        """Whether a page ``a/b.md`` is served as the folder ``/a/b/`` (not ``/a/b.html``)."""
        return self in (SiteKind.HUGO, SiteKind.MKDOCS, SiteKind.DOCUSAURUS)


@dataclass(frozen=True)
class Mount:
    """URL paths under ``url`` are files under ``folder`` (root-relative, ``""`` for the root)."""

    url: str
    """A URL path that starts and ends with ``/``."""
    folder: str
    """A root-relative folder, ending with ``/`` unless it is the root (``""``)."""


@dataclass(frozen=True)
class SiteLayout:
    """How the folder is published: the generator, and where its URLs lead under the root."""

    kind: SiteKind
    readings: tuple[tuple[Mount, ...], ...]
    """Each possible set of mounts, most likely first (more than one only when the root's URL
    cannot be told from the folder; see the module's docstring)."""
    vault: bool = False
    """An Obsidian vault: a ``.obsidian`` folder at or above the root."""
    site_root: str = ""
    """The folder that holds the generator's files, relative to the root (``..`` above it);
    for messages only."""
    from_setting: bool = False
    """The mounts come from ``link_base``."""
    detached: bool = False
    """A Hugo content folder without its site: where it is served is read from its links."""

    @property
    def mounts(self) -> tuple[Mount, ...]:
        """The most likely reading."""
        return self.readings[0]

    def describe(self) -> str:
        """One line: ``hugo site: / is content/`` or ``plain folder``."""
        if self.kind is SiteKind.PLAIN and not self.from_setting:
            name = "Obsidian vault" if self.vault else "plain folder"
            return f"{name}: links by path" + (" and by note name" if self.vault else "")
        places = ", ".join(f"{m.url} is {m.folder or './'}" for m in self.mounts)
        source = " (link_base)" if self.from_setting else ""
        if self.detached:
            source = " (section pages without their site; the URL read from their links)"
        vault = " in an Obsidian vault" if self.vault else ""
        return f"{self.kind} site{vault}: {places}{source}"


PLAIN = SiteLayout(SiteKind.PLAIN, ((Mount("/", ""),),))


def detect_layout(root: Path, link_base: str | None = None) -> SiteLayout:
    """The layout of the folder ``root`` (absolute), from the files at and above it.

    ``link_base``, when given, is the URL path the root is served at (``/docs/``).
    """
    vault = any((folder / ".obsidian").is_dir() for folder in _upwards(root))
    found = _find_generator(root)
    if found is None:
        layout = _detached_hugo(root) or PLAIN
    else:
        kind, site = found
        readings = _readings(root, site, _content_mounts(kind, site))
        depth = len(root.relative_to(site).parts) if root.is_relative_to(site) else 0
        layout = SiteLayout(kind, readings or PLAIN.readings, site_root="/".join([".."] * depth))
    if link_base is not None:
        mount = (Mount(normalise_base(link_base), ""),)
        layout = SiteLayout(layout.kind, (mount,), site_root=layout.site_root, from_setting=True)
    return SiteLayout(
        layout.kind,
        layout.readings,
        vault,
        layout.site_root,
        layout.from_setting,
        layout.detached and not layout.from_setting,
    )


def _detached_hugo(root: Path) -> SiteLayout | None:
    """The layout of a Hugo content folder out of its site: the root holds ``_index.md``
    section pages (its own, or its folders'), which only Hugo writes."""
    if not ((root / "_index.md").is_file() or any(root.glob("*/_index.md"))):
        return None
    own_name = (Mount(normalise_base(root.name), ""),)
    return SiteLayout(SiteKind.HUGO, (own_name, (Mount("/", ""),)), detached=True)


def linked_bases(urls: Iterable[str], most: int = 4) -> list[str]:
    """The URL paths a detached folder may be served at, from its site-absolute links
    (``/docs/concepts/``): the first one and two parts of their paths, most common first."""
    counts: Counter[str] = Counter()
    for url in urls:
        parts = [part for part in url.split("#", 1)[0].split("?", 1)[0].split("/") if part]
        for size in (1, 2):
            if len(parts) > size:  # a page below the base, not the base itself
                counts[normalise_base("/".join(parts[:size]))] += 1
    return [base for base, _count in counts.most_common(most)]


def normalise_base(base: str) -> str:
    """A URL path as a mount's ``url``: one leading and one trailing slash."""
    inner = "/".join(part for part in unquote(base.strip()).split("/") if part)
    return f"/{inner}/" if inner else "/"


def link_base_problem(base: str) -> str | None:
    """What is wrong with ``base`` as a ``link_base`` (a URL path such as ``/docs/``), in a
    few words; None when it is one. A ``.`` or ``..`` part, a scheme or host, a query or
    fragment, a backslash or a control character would move the root's URL somewhere its
    links cannot be read under (``../../etc/`` turned every missing link into one outside
    the root)."""
    base = base.strip()
    decoded = unquote(base)
    if not base:
        return "is empty (the site's root is /)"
    if any(ord(char) < 32 or ord(char) == 127 for char in decoded) or "\\" in decoded:
        return "holds a control character or a backslash"
    parts = urlsplit(base)
    if parts.scheme or parts.netloc or base.startswith("//"):
        return "is a URL with a scheme or host; give its path only"
    if "?" in base or "#" in base:
        return "holds a query or a fragment; give a path only"
    if any(part in (".", "..") for part in decoded.split("/")):
        return "holds a '.' or '..' part"
    return None


def _upwards(root: Path) -> list[Path]:
    return [root, *list(root.parents)[:MAX_LEVELS_UP]]


def _find_generator(root: Path) -> tuple[SiteKind, Path] | None:
    """The generator and its site folder: config files first, then Hugo's ``content/``."""
    for folder in _upwards(root):
        kind = _generator_at(folder, at_root=folder == root)
        if kind is not None:
            return kind, folder
    content = root / "content"
    if (content / "_index.md").is_file() or any(content.glob("*/_index.md")):
        return SiteKind.HUGO, root
    for folder in _upwards(root):
        if folder.name == "content" and (
            (folder / "_index.md").is_file() or any(folder.glob("*/_index.md"))
        ):
            return SiteKind.HUGO, folder.parent
    return None


def _generator_at(folder: Path, at_root: bool) -> SiteKind | None:
    """The generator whose files ``folder`` holds. Above the root, a Jekyll ``_config.yml``
    counts only beside another of Jekyll's folders (a home folder may hold a stray one)."""
    try:
        names = {entry.name for entry in folder.iterdir()}
    except OSError:
        return None
    if any(name.startswith("docusaurus.config.") for name in names):
        return SiteKind.DOCUSAURUS
    if names & {"mkdocs.yml", "mkdocs.yaml"}:
        return SiteKind.MKDOCS
    if names & {"hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json"}:
        return SiteKind.HUGO
    configs = names & {"config.toml", "config.yaml", "config.yml", "config.json"}
    if (configs or "config" in names) and names & {"content", "layouts", "archetypes"}:
        return SiteKind.HUGO
    if names & {"_config.yml", "_config.yaml"} and (at_root or names & _JEKYLL_FOLDERS):
        return SiteKind.JEKYLL
    return None


def _content_mounts(kind: SiteKind, site: Path) -> list[tuple[str, str]]:
    """(URL, folder relative to the site) of each folder the generator publishes."""
    if kind is SiteKind.HUGO:
        content = _config_value(site, ("hugo", "config"), "contentDir") or "content"
        return [("/", content), ("/", "static")]
    if kind is SiteKind.MKDOCS:
        return [("/", _config_value(site, ("mkdocs",), "docs_dir") or "docs")]
    if kind is SiteKind.DOCUSAURUS:
        return [("/docs/", "docs"), ("/blog/", "blog"), ("/", "src/pages"), ("/", "static")]
    return [("/", ".")]


def _config_value(site: Path, stems: tuple[str, ...], key: str) -> str | None:
    """A top-level string setting of the generator's config file, if it has one."""
    for stem in stems:
        for suffix in (".toml", ".yaml", ".yml"):
            path = site / f"{stem}{suffix}"
            try:
                if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
                    continue
                text = path.read_text(encoding="utf-8")
                data = tomllib.loads(text) if suffix == ".toml" else _load_config_yaml(text)
            except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
                continue
            value = data.get(key) if isinstance(data, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip().strip("/")
    return None


class _ConfigLoader(yaml.SafeLoader):
    """Safe YAML that reads a tag it does not know (MkDocs' ``!!python/name:...``, ``!ENV``)
    as no value, instead of failing the whole file."""


_ConfigLoader.add_multi_constructor("", lambda _loader, _suffix, _node: None)


def _load_config_yaml(text: str) -> object:
    """A generator's YAML config; None when it uses aliases (``*name``: a few hundred bytes
    of them can expand into gigabytes, and no setting read here needs one)."""
    if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, _ConfigLoader)):
        return None
    return yaml.load(text, _ConfigLoader)  # a SafeLoader: builds no Python object


def _readings(
    root: Path, site: Path, published: list[tuple[str, str]]
) -> tuple[tuple[Mount, ...], ...]:
    """Each reading of the mounts, seen from ``root``."""
    above: list[Mount] = []  # published folders at or below the root
    languages: list[Mount] = []  # content/en/ and the like, when the root holds content/
    below: list[list[Mount]] = []  # the root lies inside a published folder
    for url, folder in published:
        published_path = (site / folder).resolve() if folder != "." else site
        if published_path == root or published_path.is_relative_to(root):
            if not published_path.is_dir():
                continue
            rel = published_path.relative_to(root).as_posix()
            above.append(Mount(url, "" if rel == "." else f"{rel}/"))
            if not above[-1].folder or (published_path / "_index.md").is_file():
                continue
            for language in sorted(_language_folders(published_path), key=lambda n: n != "en"):
                languages.append(Mount(url, f"{above[-1].folder}{language}/"))
        elif root.is_relative_to(published_path):
            parts = root.relative_to(published_path).parts
            options = [Mount(normalise_base(url + "/".join(parts)), "")]
            if _LANGUAGE.match(parts[0]):  # content/en/docs: English, served at /docs/
                options.append(Mount(normalise_base(url + "/".join(parts[1:])), ""))
            below.append(options)
    if not below:
        if not above:
            return ()
        first = above[0]
        # content/ without an _index.md of its own but content/en/_index.md: one per language
        with_language = [(language, *above[1:]) for language in languages if first.url == "/"]
        return (tuple(above), *with_language) if languages else (tuple(above),)
    # the root is one published folder's inside: each reading of its URL, longest first
    return tuple((option, *above) for option in below[0])


def _language_folders(content: Path) -> list[str]:
    """Subfolders of a content folder that look like languages and hold a home page."""
    try:
        names = [entry.name for entry in content.iterdir() if entry.is_dir()]
    except OSError:
        return []
    return [
        name for name in names if _LANGUAGE.match(name) and (content / name / "_index.md").is_file()
    ]
