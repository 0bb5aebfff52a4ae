"""A file's extension as explorer means it: the formats' claim and the scopes' filter agree.

This module stays light (no format, no parser): a scope's filter is applied where nothing else
of ingestion is loaded.
"""

from __future__ import annotations

COMPRESSED = frozenset({"gz"})
"""Extensions of a compression: the extension is then the last two (``ls.1.gz``: ``1.gz``), so
a format claims the compressed files it reads and nothing else (``.tar.gz`` stays unclaimed)."""


def extension_of(rel_path: str) -> str:
    """The lower-case extension of a path, without the dot (``""`` for ``Makefile``; ``1.gz``
    for ``ls.1.gz``)."""
    name = rel_path.rstrip("/").rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    if not (dot and stem):
        return ""
    ext = ext.lower()
    if ext in COMPRESSED:
        inner_stem, inner_dot, inner = stem.rpartition(".")
        if inner_dot and inner_stem and inner:
            return f"{inner.lower()}.{ext}"
    return ext


def extension_names(rel_path: str) -> frozenset[str]:
    """Every extension a filter may name to keep the path: its extension and, when compressed,
    each of its two parts (``ls.1.gz``: ``1.gz``, ``1`` and ``gz``)."""
    ext = extension_of(rel_path)
    if not ext:
        return frozenset()
    return frozenset({ext, *ext.split(".")})
