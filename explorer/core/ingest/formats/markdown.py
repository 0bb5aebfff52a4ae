"""Markdown: front matter for metadata, sections at its headings, links read from its tokens.

The document parsed once by markdown-it (:mod:`explorer.core.ingest.markdown_tokens`) gives
both the headings (``#`` and underlined ones, never a ``#`` line in fenced code) and the links
(:mod:`explorer.core.ingest.references`). The text before the first heading is headed by the
front matter's title.
"""

from __future__ import annotations

from typing import ClassVar

from explorer.core.ingest.formats.contract import (
    Document,
    DocumentFormat,
    PreviewKind,
    Structure,
)
from explorer.core.ingest.front_matter import read_front_matter
from explorer.core.ingest.markdown_tokens import markdown_blocks
from explorer.core.ingest.markup import heading_sections, markdown_headings
from explorer.core.ingest.references import extract_link_facts
from explorer.core.ingest.windows import Chunker


class MarkdownFormat(DocumentFormat):
    """Markdown (CommonMark with tables), with YAML or TOML front matter."""

    name = "markdown"
    extensions = frozenset({"md", "markdown", "mdx", "mdown", "mkd"})
    preview_kind = PreviewKind.MARKDOWN
    markdown_text: ClassVar[bool] = True
    summary = "front matter, sections at headings, links and images"
    reading = 3
    """2: a heading's title as rendered (``**Bold**`` reads ``Bold``, a code span without its
    backticks): a file with markup in a heading is embedded again, the others keep theirs.
    3: MyST's links (``{doc}``, ``{ref}``, ``(label)=``, a ``{toctree}`` block)."""

    def from_text(self, rel_path: str, text: str) -> Document:
        front = read_front_matter(text)
        return Document(
            text,
            metadata=front.metadata,
            notes=front.notes,
            body_start=front.body_start,
            fence_end=front.fence_end,
        )

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        text, body = document.text, document.body_start
        # The structure starts after the fence even when the block was not read as metadata.
        blocks = markdown_blocks(text, document.fence_end)
        headings = markdown_headings(chunker, document.fence_end, blocks.tokens)
        sections = heading_sections(text, body, document.metadata.get("title", ""), headings)
        facts = extract_link_facts(rel_path, text, document.fence_end, blocks, markdown=True)
        return Structure(sections, facts.references, facts.tags)

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "markdown"
