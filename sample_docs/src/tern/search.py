"""Query parsing and ranking on top of SQLite FTS5.

The query language is documented in ``guides/search-syntax.md`` and the scoring formula in
``design/0002-search-ranking.md``::

    score = bm25_weighted * recency * state * title_match
"""

from __future__ import annotations

import re
import shlex
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone

__all__ = ["ParsedQuery", "QueryError", "parse_query", "build_sql", "search"]

FIELD_FILTERS = {"tag", "site", "collection", "title", "url", "note", "lang", "type",
                 "is", "has", "added", "read", "before", "after", "sort"}
SORTS = {
    "relevance": "score DESC",
    "added": "b.created_at DESC",
    "added-asc": "b.created_at ASC",
    "read": "b.read_at DESC",
    "title": "b.title COLLATE NOCASE ASC",
}
MAX_TERMS = 64
MAX_QUERY_CHARS = 1000
TITLE_MATCH_BONUS = 1.35
UNREAD_BOOST = 1.05
STARRED_BOOST = 1.10


class QueryError(ValueError):
    """Raised for unparsable queries; maps to ``400 TERN-E1004``."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


@dataclass
class ParsedQuery:
    terms: list[str] = field(default_factory=list)        # FTS5 expression parts
    title_terms: list[str] = field(default_factory=list)  # plain words, for the title bonus
    filters: list[tuple[str, str, bool]] = field(default_factory=list)  # (field, value, negated)
    sort: str = "relevance"


def parse_query(q: str, default_operator: str = "AND") -> ParsedQuery:
    """Split a user query into full-text terms and field filters.

    >>> p = parse_query('tag:rust "async runtime" -site:medium.com tokio*')
    >>> p.filters
    [('tag', 'rust', False), ('site', 'medium.com', True)]
    >>> p.terms
    ['"async runtime"', 'tokio*']
    """
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError("query too long", MAX_QUERY_CHARS)
    if q.count("(") != q.count(")"):
        raise QueryError("unbalanced parenthesis", q.rfind("(") if "(" in q else q.find(")"))
    try:
        tokens = shlex.split(q, posix=False)
    except ValueError as exc:
        raise QueryError(str(exc), len(q)) from None
    if len(tokens) > MAX_TERMS:
        raise QueryError(f"more than {MAX_TERMS} terms", 0)

    parsed = ParsedQuery()
    for token in tokens:
        negated = token.startswith("-") and len(token) > 1
        body = token[1:] if negated else token
        name, sep, value = body.partition(":")
        if sep and name in FIELD_FILTERS and value:
            value = value.strip('"')
            if name == "sort":
                if value not in SORTS:
                    raise QueryError(f"unknown sort {value!r}", q.find(token))
                parsed.sort = value
            else:
                parsed.filters.append((name, value, negated))
            continue
        if token in ("AND", "OR", "NOT", "(", ")"):
            parsed.terms.append(token)
            continue
        term = body if body.startswith('"') else _escape_term(body)
        parsed.terms.append(f"NOT {term}" if negated else term)
        if not negated and not body.startswith('"'):
            parsed.title_terms.append(body.rstrip("*").lower())

    if default_operator == "OR":
        parsed.terms = _join_with(parsed.terms, "OR")
    return parsed


def _escape_term(word: str) -> str:
    """Quote a bare word for FTS5 unless it is a prefix query like ``kube*``."""
    if re.fullmatch(r"\w{3,}\*", word):
        return word
    return '"' + word.replace('"', '""') + '"'


def _join_with(terms: list[str], op: str) -> list[str]:
    out: list[str] = []
    for term in terms:
        if out and out[-1] not in ("AND", "OR", "NOT", "(") and term not in ("AND", "OR", ")"):
            out.append(op)
        out.append(term)
    return out


def recency_factor(created_at: datetime, half_life_days: float,
                   now: datetime | None = None) -> float:
    """``0.5 + 0.5 * 2 ** (-age / half_life)``; 1.0 when recency is disabled."""
    if half_life_days <= 0:
        return 1.0
    now = now or datetime.now(timezone.utc)
    age_days = max(0.0, (now - created_at).total_seconds() / 86400)
    return 0.5 + 0.5 * 2 ** (-age_days / half_life_days)


def build_sql(parsed: ParsedQuery, weights: tuple[float, float, float, float, float],
              half_life_days: float) -> tuple[str, list]:
    """Build the ranking query. ``weights`` are (title, tags, description, body, url)."""
    match = " ".join(parsed.terms) or '""'
    params: list = [*weights, match]
    where = ["bookmarks_fts MATCH ?", "b.user_id = :user"]
    for name, value, negated in parsed.filters:
        clause, value_params = _filter_clause(name, value)
        where.append(f"NOT ({clause})" if negated else clause)
        params.extend(value_params)
    sql = f"""
        SELECT b.id, b.title, b.url,
               -bm25(bookmarks_fts, ?, ?, ?, ?, ?)
                 * (CASE WHEN {half_life_days} > 0
                         THEN 0.5 + 0.5 * pow(2, -(julianday('now') - julianday(b.created_at)) / {half_life_days})
                         ELSE 1.0 END)
                 * (CASE WHEN b.read = 0 THEN {UNREAD_BOOST} ELSE 1.0 END)
                 * (CASE WHEN b.starred = 1 THEN {STARRED_BOOST} ELSE 1.0 END) AS score,
               snippet(bookmarks_fts, 3, '<mark>', '</mark>', '…', 24) AS snippet
          FROM bookmarks_fts
          JOIN bookmarks b ON b.rowid = bookmarks_fts.rowid
         WHERE {' AND '.join(where)}
         ORDER BY {SORTS[parsed.sort]}
         LIMIT :limit
    """
    return sql, params


def _filter_clause(name: str, value: str) -> tuple[str, list]:
    if name == "tag":
        if value.endswith("/"):
            return ("EXISTS (SELECT 1 FROM bookmark_tags t WHERE t.bookmark_id = b.id "
                    "AND (t.tag = ? OR t.tag LIKE ? ESCAPE '\\'))", [value.rstrip("/"), value + "%"])
        return "EXISTS (SELECT 1 FROM bookmark_tags t WHERE t.bookmark_id = b.id AND t.tag = ?)", [value.lower()]
    if name == "site":
        return "(b.host = ? OR b.host LIKE ?)", [value, "%." + value]
    if name == "is":
        column = {"unread": "b.read = 0", "read": "b.read = 1", "starred": "b.starred = 1",
                  "archived": "b.archive_sha256 IS NOT NULL", "failed": "b.status = 'failed'"}
        if value not in column:
            raise QueryError(f"unknown state is:{value}")
        return column[value], []
    if name in ("before", "after"):
        op = "<" if name == "before" else ">="
        return f"b.created_at {op} ?", [value]
    if name == "url":
        return "instr(b.url, ?) > 0", [value]
    return f"b.{name} = ?", [value]


def apply_title_bonus(rows: list[dict], parsed: ParsedQuery) -> list[dict]:
    """Multiply the score of hits whose title contains every plain query word (since 1.5)."""
    words = [w for w in parsed.title_terms if w]
    if not words:
        return rows
    for row in rows:
        title = (row.get("title") or "").lower()
        if all(w in title for w in words):
            row["score"] *= TITLE_MATCH_BONUS
    if parsed.sort == "relevance":
        rows.sort(key=lambda r: r["score"], reverse=True)
    return rows


def search(conn: sqlite3.Connection, user_id: int, q: str, *, limit: int = 20,
           weights=(3.0, 2.0, 1.5, 1.0, 0.5), half_life_days: float = 180.0) -> list[dict]:
    """Run a query for one user and return ranked hits as dicts."""
    parsed = parse_query(q)
    sql, params = build_sql(parsed, weights, half_life_days)
    conn.row_factory = sqlite3.Row
    # sqlite3 cannot mix positional and named parameters; inline the named ones as positional.
    sql = sql.replace(":user", "?").replace(":limit", "?")
    where_pos = params[:6] + [user_id] + params[6:] + [limit]
    rows = [dict(r) for r in conn.execute(sql, where_pos)]
    return apply_title_bonus(rows, parsed)
