"""A document's own properties (PDF document information, DOCX core properties) as metadata.

Both formats describe a document by the same four fields: its title, author, subject and
keywords. The title, the subject (as the description) and the keywords (as tags) become the
file's metadata, searchable like Markdown front matter; all four are listed atop the extracted
text, where the preview shows them and no passage includes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from explorer.core.ingest.front_matter import FIELD_CAPS, MAX_TAGS, FileMetadata

PROPERTY_NAMES = ("Title", "Author", "Subject", "Keywords")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ufffe\uffff]")
_KEYWORD_SEPARATORS = re.compile(r"[,;]")


def clean_properties(found: Mapping[str, object]) -> dict[str, str]:
    """The four properties that have a value, white space collapsed, control characters gone,
    each cut to 2,000 characters."""
    cleaned: dict[str, str] = {}
    for key in PROPERTY_NAMES:
        value = " ".join(_CONTROL.sub(" ", str(found.get(key) or "")).split())
        if value:
            cleaned[key] = value[:2_000]
    return cleaned


def property_lines(properties: Mapping[str, str]) -> str:
    """``Title: …`` lines, one per property, for the top of the text."""
    return "\n".join(f"{key}: {value}" for key, value in properties.items())


def properties_metadata(properties: Mapping[str, str]) -> FileMetadata:
    """Title, description (the subject) and tags (the keywords, split at commas and
    semicolons), each cut like front matter's."""
    metadata = FileMetadata()
    if properties.get("Title"):
        metadata["title"] = properties["Title"][: FIELD_CAPS["title"]]
    if properties.get("Subject"):
        metadata["description"] = properties["Subject"][: FIELD_CAPS["description"]]
    keywords = [word.strip() for word in _KEYWORD_SEPARATORS.split(properties.get("Keywords", ""))]
    tags = [word for word in keywords if word][:MAX_TAGS]
    if tags:
        metadata["tags"] = tags
    return metadata
