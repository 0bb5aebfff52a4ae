"""Plain text and text formats read as text (configuration, data, markup without a parser here).

Cut into token windows that prefer paragraph and line breaks; references are path mentions in
backticks. The preview highlights what Pygments recognises by the file's name (TOML, YAML,
SQL...), and shows the rest as it is. This format also stands for any file no other format
claims (a file the user asked for by extension, or one shown without being indexed).
"""

from __future__ import annotations

from explorer.core.ingest.formats.contract import DocumentFormat, PreviewKind


class PlainTextFormat(DocumentFormat):
    """Text read as it is, in windows."""

    name = "text"
    extensions = frozenset("txt org sql toml yaml yml json ini cfg conf css xml bib".split())
    file_names = frozenset({"makefile", "dockerfile", "readme", "license"})
    preview_kind = PreviewKind.TEXT
    summary = "windows at paragraph and line breaks"
