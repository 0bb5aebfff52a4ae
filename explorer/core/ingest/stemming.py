"""The terms the keyword index stores for a word, asked of SQLite's own tokenizers.

The keyword index stems with FTS5's ``porter`` tokenizer over ``unicode61`` (accents folded).
Whoever needs to know what it makes of a word asks the same tokenizers on scratch tables in
memory, so the two never disagree: the query (is a word being typed one the stemmer changes?)
and the kept rankings (which stored term does a typed word ask for?).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache

STEMMING_TABLES = """
CREATE VIRTUAL TABLE stemmed USING fts5(word, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE stemmed_terms USING fts5vocab(stemmed, row);
CREATE VIRTUAL TABLE plain USING fts5(word, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE plain_terms USING fts5vocab(plain, row);
"""
"""Scratch tables tokenised like the keyword index, with and without its stemmer."""


@dataclass(frozen=True)
class WordTerms:
    """The distinct terms a text is stored as (in the vocabulary's order): stemmed as the
    keyword index stores them, and only folded (case and accents)."""

    stemmed: tuple[str, ...]
    plain: tuple[str, ...]


@lru_cache(maxsize=4096)
def word_terms(word: str) -> WordTerms:
    """What the keyword index's tokenizer makes of ``word``, with and without its stemmer."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(STEMMING_TABLES)
        db.execute("INSERT INTO stemmed VALUES (?)", (word,))
        db.execute("INSERT INTO plain VALUES (?)", (word,))
        stemmed = tuple(row[0] for row in db.execute("SELECT term FROM stemmed_terms"))
        plain = tuple(row[0] for row in db.execute("SELECT term FROM plain_terms"))
    finally:
        db.close()
    return WordTerms(stemmed, plain)
