"""The requests every front end takes (the CLI's flags, the MCP server's tool arguments)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.models import SearchMode

if TYPE_CHECKING:
    from explorer.core.retrieval.search import SearchRequest
    from explorer.settings.config import Settings

MAX_LIMIT = 200
"""The most files one search or related call returns."""
MAX_PER_FILE = 50
"""The most passages one search shows per file."""
MAX_QUERY_CHARS = 1_000
"""The longest query taken: a longer one is refused (a query is words to look for, not a
document to compare with)."""


@dataclass(frozen=True)
class SearchOptions:
    """What to search and how many, as the CLI and the MCP server take it.

    ``limit`` and ``min_score`` of None mean the defaults of the settings (config file)."""

    mode: SearchMode = SearchMode.HYBRID
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Prefixes or globs of files to leave out, resolved before ranking as ``paths`` are."""
    limit: int | None = None
    offset: int = 0
    per_file: int = 3
    min_score: float | None = None
    collections: tuple[str, ...] = ()
    """Only these collections (a search over several folders), with the query's
    ``collection:`` words."""
    scopes: tuple[str, ...] = ()
    """Only these named scopes' files, with the query's ``scope:`` words."""

    def request(self, query: str, settings: Settings) -> SearchRequest:
        """The core's search request, with the settings' defaults filled in and the filter
        words of the query (``path:``, ``tag:``, ``version:``, ``exclude:``, as in the TUI)
        taken out."""
        from explorer.core.retrieval.agent_context import build_request
        from explorer.core.retrieval.file_filter import parse_filter_words

        parsed = parse_filter_words(query)
        request = build_request(
            parsed.query.strip(),
            mode=self.mode,
            paths=tuple(dict.fromkeys((*self.paths, *parsed.filter.paths))),
            tags=tuple(dict.fromkeys((*self.tags, *parsed.filter.tags))),
            versions=tuple(dict.fromkeys((*self.versions, *parsed.filter.versions))),
            limit=settings.default_limit if self.limit is None else self.limit,
            offset=self.offset,
            per_file=self.per_file,
            min_score=settings.default_min_score if self.min_score is None else self.min_score,
        )
        exclude = (*self.exclude, *parsed.filter.exclude)
        return replace(
            request,
            exclude=tuple(dict.fromkeys(exclude)),
            collections=tuple(dict.fromkeys((*self.collections, *parsed.collections))),
            scopes=tuple(dict.fromkeys((*self.scopes, *parsed.scopes))),
        )
