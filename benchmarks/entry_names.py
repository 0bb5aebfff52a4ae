"""Whether a result in an API manual names the entry that answers it.

    python benchmarks/entry_names.py --root MANUAL --index-dir INDEX \
        [--sample 300] [--seed 54] [--mode keyword hybrid] [--json]

The questions are drawn from the index, not written: for a random sample of entries of the
manual's pages (a function, class or option whose passage holds its term and the first
sentence of its definition), the question is that sentence, what a reader who remembers what a
function does types. The search is held to the entry's page (``path:``), so every question is
answered by a passage of it; what is measured is the name the result gives that passage.

For each rule of naming, how often the passage is named by the asked entry (*right*), by
another (*other*), or by none (*none*), of the questions whose first passage holds the entry (a
passage without it, *passage without it*, no rule can name right). A sentence several entries
share word for word counts right for any of them. The rules:

- ``most words`` (explorer): the innermost entry holding the most of the query's words, else
  the innermost holding half the passage;
- ``first match``: the entry holding the first word of the snippet's densest run;
- ``passage start``: the entry holding the passage's first line (what a result could name
  without the query).

Also the time naming takes per search (its first file's passages, the words found once for
snippet and name), against the search itself.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.core.ingest.documents import EntrySpan, entry_at
from explorer.core.models import SearchMode
from explorer.core.retrieval.query import query_terms, snippet_and_matches, word_matches
from explorer.core.retrieval.search import SearchRequest, named_entry, search
from explorer.core.store.index import Index
from explorer.core.store.manifest_records import StoredChunk, entries_from_json
from explorer.settings.config import Settings

SENTENCE = re.compile(r"[A-Z][^.!?\n]{20,200}[.!?]")
"""A definition's first sentence: a capital, 20 to 200 characters on one line, its stop."""
WORDS = (6, 30)
"""The fewest and most words of a question."""


def questions(database: Path, sample: int, seed: int) -> list[tuple[str, str, str]]:
    """(path, entry title, sentence) of ``sample`` entries drawn at random: an entry whose term
    stands in a passage that also holds, below the term, the first sentence of its definition."""
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    rows = db.execute("SELECT path, start_line, text, entries FROM chunks WHERE entries != ''")
    found: dict[tuple[str, str], str] = {}
    for path, start, text, stored in rows:
        lines = text.split("\n")
        for entry in entries_from_json(stored):
            first = entry.start_line - start
            if first < 0 or (path, entry.title) in found:
                continue  # its term stands in an earlier passage
            below = "\n".join(lines[first + 1 : entry.end_line - start + 1])
            match = SENTENCE.search(below)
            if match and WORDS[0] <= len(match.group().split()) <= WORDS[1]:
                found[(path, entry.title)] = match.group()
    db.close()
    drawn = random.Random(seed).sample(sorted(found), min(sample, len(found)))
    return [(path, title, found[(path, title)]) for path, title in drawn]


def _title(entry: EntrySpan | None) -> str:
    return entry.title if entry is not None else ""


def first_match(chunk: StoredChunk, terms: Sequence[str]) -> str:
    hits = word_matches(chunk.text, terms)
    line = chunk.start_line + (chunk.text.count("\n", 0, hits[0][0]) if hits else 0)
    entry = entry_at(chunk.entries, line)
    return entry.title if entry else ""


def passage_start(chunk: StoredChunk, terms: Sequence[str]) -> str:
    entry = entry_at(chunk.entries, chunk.start_line)
    return entry.title if entry else ""


RULES: dict[str, Callable[[StoredChunk, Sequence[str]], str]] = {
    "most words": lambda chunk, terms: _title(named_entry(chunk, word_matches(chunk.text, terms))),
    "first match": first_match,
    "passage start": passage_start,
}


def holders(chunk: StoredChunk, sentence: str) -> set[str]:
    """The entries of ``chunk`` whose lines hold ``sentence``."""
    lines = chunk.text.split("\n")
    held: set[str] = set()
    for number, line in enumerate(lines, start=chunk.start_line):
        if sentence in line:
            held |= {e.title for e in chunk.entries if e.holds(number)}
    return held


def run(
    index: Index, asked: list[tuple[str, str, str]], mode: SearchMode, show: bool = False
) -> dict:
    outcome: dict[str, Counter[str]] = {rule: Counter() for rule in RULES}
    searching, naming = [], []
    for path, title, sentence in asked:
        request = SearchRequest(sentence, mode=mode, paths=(path,), limit=1, per_file=3)
        started = time.perf_counter()
        response = search(index, request)
        searching.append(time.perf_counter() - started)
        if not response.results:
            for counts in outcome.values():
                counts["not found"] += 1
            continue
        passages = response.results[0].passages
        chunks = index.keywords.chunks_by_id([p.chunk_id for p in passages])
        terms = list(request.parsed.terms) or query_terms(sentence)
        started = time.perf_counter()
        for passage in passages:
            chunk = chunks[passage.chunk_id]
            named_entry(chunk, snippet_and_matches(chunk.text, terms)[2])
        naming.append(time.perf_counter() - started)
        chunk = chunks[passages[0].chunk_id]
        right = holders(chunk, sentence) | {title}
        if not right & {entry.title for entry in chunk.entries}:
            for counts in outcome.values():
                counts["passage without it"] += 1  # no rule can name it right
            continue
        for rule, name in RULES.items():
            named = name(chunk, terms)
            verdict = "right" if named in right else "none" if not named else "other"
            outcome[rule][verdict] += 1
            if show and rule == "most words" and verdict != "right":
                print(f"  [{mode}] {path} asked {title!r}, named {named!r}: {sentence[:90]}")
    return {
        "questions": len(asked),
        "rules": {rule: dict(counts) for rule, counts in outcome.items()},
        "search_ms_p50": round(1000 * statistics.median(searching), 2),
        "naming_ms_p50": round(1000 * statistics.median(naming), 3) if naming else None,
        "naming_ms_max": round(1000 * max(naming), 3) if naming else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=54)
    parser.add_argument("--mode", nargs="+", default=["keyword", "hybrid"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print each question misnamed")
    args = parser.parse_args()
    index = Index.open_existing(Settings.for_root(args.root.resolve(), args.index_dir))
    try:
        asked = questions(index.keywords.path, args.sample, args.seed)
        report = {mode: run(index, asked, SearchMode(mode), args.misses) for mode in args.mode}
    finally:
        index.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for mode, found in report.items():
        print(f"{mode}: {found['questions']} questions; search p50 {found['search_ms_p50']} ms,")
        print(f"  naming p50 {found['naming_ms_p50']} ms (max {found['naming_ms_max']})")
        for rule, counts in found["rules"].items():
            total = sum(counts.values()) or 1
            shares = ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in sorted(counts.items()))
            print(f"  {rule:14} {shares}")


if __name__ == "__main__":
    main()
