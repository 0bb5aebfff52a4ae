"""Jupyter notebooks: Markdown cells as Markdown, code cells as fenced code, outputs left out.

A notebook (JSON, nbformat 4, or 3 with worksheets) becomes one Markdown document: each Markdown
cell's source as written, each code cell's source in a block fenced with the kernel's language,
raw cells in plain fenced blocks; outputs (results, images, tracebacks) are not read. That
document is chunked as Markdown, so the Markdown cells' headings give the sections' heading
paths and their links are references, and the preview renders it. The notebook's
``metadata.title``, when it has one, is the title.

The JSON is parsed by Python's ``json`` in the worker process, like every extracted format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, ClassVar

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused, decode_leniently
from explorer.core.ingest.formats.contract import (
    Document,
    DocumentFormat,
    Limits,
    PreviewKind,
    Structure,
)
from explorer.core.ingest.formats.markdown import MarkdownFormat
from explorer.core.ingest.front_matter import FIELD_CAPS, FileMetadata
from explorer.core.ingest.references import LinkFacts, extract_link_facts
from explorer.core.ingest.windows import Chunker


class NotebookFormat(DocumentFormat):
    """Jupyter notebooks."""

    name = "notebook"
    extensions = frozenset({"ipynb"})
    extracted = True
    limits = Limits(max_bytes=50_000_000, seconds=30.0, max_chars=10_000_000)
    preview_kind = PreviewKind.MARKDOWN
    markdown_text: ClassVar[bool] = True
    summary = "Markdown cells with their headings, code cells as code, no outputs"
    reading = 2
    """2: a heading's title as rendered, as Markdown's reading 2."""

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        try:
            notebook = json.loads(decode_leniently(data))
        except ValueError as error:
            raise FileRefused(
                SkipReason.UNREADABLE, f"not a notebook (bad JSON: {error})"
            ) from None
        except RecursionError:
            raise FileRefused(
                SkipReason.UNREADABLE, "not a notebook (JSON nested too deep)"
            ) from None
        if not isinstance(notebook, dict):
            raise FileRefused(SkipReason.UNREADABLE, "not a notebook (no cells)")
        cells = _cells(notebook)
        language = _language(notebook)
        blocks: list[str] = []
        size = 0
        notes: tuple[str, ...] = ()
        for cell in cells:
            block = _block(cell, language)
            if not block:
                continue
            if size + len(block) + 2 > limits.max_chars:
                notes = (f"text cut at {limits.max_chars:,} characters",)
                break
            blocks.append(block)
            size += len(block) + 2
        metadata = FileMetadata()
        title = _dig(notebook, "metadata", "title")
        if isinstance(title, str) and title.strip():
            metadata["title"] = " ".join(title.split())[: FIELD_CAPS["title"]]
        text = "\n\n".join(blocks) + ("\n" if blocks else "")
        return Document(text, metadata=metadata, notes=notes)

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        structure = MarkdownFormat().structure(_as_markdown(rel_path), document, chunker)
        return structure

    def link_facts(self, rel_path: str, document: Document) -> LinkFacts:
        return extract_link_facts(_as_markdown(rel_path), document.text, markdown=True)

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "markdown"


def _as_markdown(rel_path: str) -> str:
    """The notebook's path as a Markdown file's in the same folder: the references reader
    takes the kind of text from the extension, and resolves links from the folder."""
    return PurePosixPath(rel_path).with_suffix(".md").as_posix()


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _cells(notebook: Mapping[str, Any]) -> list[Any]:
    cells = notebook.get("cells")
    if isinstance(cells, list):
        return cells
    worksheets = notebook.get("worksheets")  # nbformat 3
    if isinstance(worksheets, list):
        found: list[Any] = []
        for sheet in worksheets:
            if isinstance(sheet, Mapping) and isinstance(sheet.get("cells"), list):
                found.extend(sheet["cells"])
        return found
    raise FileRefused(SkipReason.UNREADABLE, "not a notebook (no cells)")


def _language(notebook: Mapping[str, Any]) -> str:
    for keys in (("metadata", "kernelspec", "language"), ("metadata", "language_info", "name")):
        value = _dig(notebook, *keys)
        if isinstance(value, str) and value.strip().isidentifier():
            return value.strip().lower()
    return "python"


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", cell.get("input", ""))  # nbformat 3 code cells: "input"
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _block(cell: Any, language: str) -> str:
    """A cell as Markdown: its source as written, or fenced as code."""
    if not isinstance(cell, Mapping):
        return ""
    kind = cell.get("cell_type")
    source = _source(cell).replace("\r\n", "\n").strip("\n")
    if not source.strip():
        return ""
    if kind in ("markdown", "heading"):
        if kind == "heading":  # nbformat 3 heading cells
            level = cell.get("level")
            depth = level if isinstance(level, int) and 1 <= level <= 6 else 1
            return "#" * depth + " " + " ".join(source.split())
        return source
    # longer than any run of backticks in the cell (grown a backtick at a time, a cell ending in
    # 20,000 of them was searched 20,000 times)
    fence = "`" * max(3, max(map(len, re.findall("`+", source)), default=0) + 1)
    tag = language if kind == "code" else ""
    return f"{fence}{tag}\n{source}\n{fence}"
