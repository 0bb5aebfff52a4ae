"""Split a file's text into chunks that follow its structure and fit the embedding model.

Markdown is cut at its headings (``#`` and underlined ones, read by markdown-it), Python at its
top-level definitions (found with ``ast``), other code at the definitions tree-sitter finds in
it (see :mod:`explorer.core.ingest.code_grammars`), reStructuredText at its underlined titles,
and anything else into token windows that prefer paragraph breaks. A section longer than
``max_tokens`` is split further (a class at its methods, a namespace at its classes) and, when
still too long, into overlapping windows cut at line boundaries.

Every chunk's text is ``text[start_char:end_char]`` of the original text (front matter included
in the offsets but never in a chunk), so a hit can be shown exactly where it stands in the file.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from explorer.core.ingest.code_grammars import GRAMMARS, grammar_sections
from explorer.core.ingest.code_sections import python_sections
from explorer.core.ingest.documents import ChunkedFile
from explorer.core.ingest.front_matter import (
    FrontMatter,
    parse_front_matter,
    read_front_matter,
    with_inline_tags,
)
from explorer.core.ingest.markdown_tokens import MarkdownBlocks, markdown_blocks
from explorer.core.ingest.markup import heading_sections, markdown_headings, rst_headings
from explorer.core.ingest.references import FileReference, extract_link_facts, extract_references
from explorer.core.ingest.windows import Chunker, Section, TokenSpans

__all__ = ["MARKDOWN_EXTENSIONS", "PYTHON_EXTENSIONS", "chunk_file", "parse_front_matter"]

MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx"})
PYTHON_EXTENSIONS = frozenset({"py", "pyi"})
_FRONT_MATTER_EXTENSIONS = MARKDOWN_EXTENSIONS | {"html", "htm"}


def file_references(rel_path: str, text: str) -> list[FileReference]:
    """The references of a file without chunking it (for an index made before links)."""
    ext = PurePosixPath(rel_path).suffix.lower().lstrip(".")
    front = read_front_matter(text) if ext in _FRONT_MATTER_EXTENSIONS else FrontMatter()
    return extract_references(rel_path, text, front.fence_end)


def chunk_file(
    rel_path: str,
    text: str,
    token_spans: TokenSpans,
    max_tokens: int = 240,
    overlap_tokens: int = 32,
) -> ChunkedFile:
    """Split ``text`` (the file at ``rel_path``) into chunks of at most ``max_tokens`` tokens.

    The kind of split follows the extension of ``rel_path``; windows of a long section overlap by
    ``overlap_tokens`` tokens (at most half a window). Chunks come in file order, hold
    ``text[start_char:end_char]`` and never include front matter (its fields are the metadata).
    The references the file makes to others (links, path mentions) come along.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    overlap = max(0, min(overlap_tokens, max_tokens // 2))
    ext = PurePosixPath(rel_path).suffix.lower().lstrip(".")
    front = read_front_matter(text) if ext in _FRONT_MATTER_EXTENSIONS else FrontMatter()
    metadata, body = front.metadata, front.body_start
    chunker = Chunker(text, token_spans, max_tokens, overlap)
    sections: list[Section] | None = None
    blocks: MarkdownBlocks | None = None
    if ext in MARKDOWN_EXTENSIONS:
        # The structure starts after the fence even when the block was not read as metadata.
        blocks = markdown_blocks(text, front.fence_end)
        headings = markdown_headings(chunker, front.fence_end, blocks.tokens)
        sections = heading_sections(text, body, metadata.get("title", ""), headings)
    elif ext in PYTHON_EXTENSIONS:
        sections = python_sections(chunker, text)
    elif ext == "rst":
        sections = heading_sections(text, body, "", rst_headings(chunker, body))
    elif ext in GRAMMARS:
        sections = grammar_sections(chunker, GRAMMARS[ext])
    for section in sections or [Section(body, len(text), "")]:
        chunker.add(section)
    links = extract_link_facts(rel_path, text, front.fence_end, blocks)
    return ChunkedFile(
        chunks=chunker.chunks,
        metadata=with_inline_tags(metadata, links.tags),
        references=links.references,
        notes=list(front.notes),
    )
