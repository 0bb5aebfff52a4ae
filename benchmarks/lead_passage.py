"""Which passage a PDF result leads with: the section asked about, or a contents or index page.

    python benchmarks/lead_passage.py --root FOLDER --index-dir INDEX --baseline CHECKOUT \
        [--sample 120] [--seed 52] [--mode hybrid keyword] [--json]

The questions are drawn from the index, not written: for a random sample of sections of the
folder's PDFs (a heading whose passages are not lists of references), the question is the
section's title, what a reader looking for it types. The section's file should lead with a
passage on the section's pages, not with the contents line or the index entry naming it.

For each question and mode, the section's file among the first 10 results, and its leading
passage: on one of the section's pages (*on the section*), a contents or index passage
(*a list*). ``new`` is this checkout; ``baseline`` the same search with the passage order of
another checkout (``--baseline DIR``: its ``passage_order.py`` loaded beside this one), so both
rank the same files and differ only in which passage a file leads with.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import sqlite3
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import explorer.core.retrieval.search as search_module
from explorer.core.models import SearchMode
from explorer.core.retrieval.passage_order import is_reference_list
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings

TITLE_CHARS = 8
"""The shortest section title asked (shorter ones, ``Index`` or ``1.2``, name no subject)."""


def baseline_order(checkout: Path) -> Callable[..., list]:
    """The ``content_first`` of another checkout, loaded beside this one."""
    source = checkout / "explorer" / "core" / "retrieval" / "passage_order.py"
    spec = importlib.util.spec_from_file_location("baseline_passage_order", source)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no passage_order.py in {checkout}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules["baseline_passage_order"] = module
    spec.loader.exec_module(module)
    return module.content_first


def sections(database: Path, sample: int, seed: int) -> list[tuple[str, str, frozenset[int]]]:
    """Questions of the kind *titles*: (path, title, pages) of ``sample`` PDF sections drawn at
    random, a heading whose passages are no lists of references, and the pages they stand on."""
    pages: dict[tuple[str, str], set[int]] = defaultdict(set)
    listed: set[tuple[str, str]] = set()
    for path, heading, page, text in _passages(database):
        if not heading:
            continue
        key = (path, heading)
        pages[key].add(page)
        if is_reference_list(text):
            listed.add(key)
    titles: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path, heading in pages:
        title = heading.split(" > ")[-1].strip()
        if (path, heading) not in listed and len(title) >= TITLE_CHARS and " " in title:
            titles[title.casefold()].append((path, heading))
    # A title several sections share (``Introduction``) names no one section: left out.
    unique = sorted(keys[0] for keys in titles.values() if len(keys) == 1)
    chosen = random.Random(seed).sample(unique, min(sample, len(unique)))
    return [
        (path, heading.split(" > ")[-1].strip(), frozenset(pages[(path, heading)]))
        for path, heading in chosen
    ]


def entries(database: Path, sample: int, seed: int) -> list[tuple[str, str, frozenset[int]]]:
    """Questions of the kind *entries*: (path, entry, pages) for ``sample`` entries of the PDFs'
    contents and index lists drawn at random (the text before a leader of dots or a list of
    numbers), each also in passages of its file that are no lists, on ``pages``."""
    by_file: dict[str, list[tuple[int, str, bool]]] = defaultdict(list)
    for path, _heading, page, text in _passages(database):
        by_file[path].append((page, text, is_reference_list(text)))
    asked: dict[tuple[str, str], frozenset[int]] = {}
    for path, passages in sorted(by_file.items()):
        named: set[str] = set()
        for _page, text, listed in passages:
            if listed:
                named.update(m.group(1).strip() for m in ENTRY.finditer(text))
        content = [(page, text.casefold()) for page, text, listed in passages if not listed]
        for entry in sorted(named):
            if not ENTRY_CHARS[0] <= len(entry) <= ENTRY_CHARS[1]:
                continue
            folded = entry.casefold()
            pages = frozenset(page for page, text in content if folded in text)
            if pages:
                asked[(path, entry)] = pages
    chosen = random.Random(seed).sample(sorted(asked), min(sample, len(asked)))
    return [(path, entry, asked[(path, entry)]) for path, entry in chosen]


ENTRY = re.compile(r"^\s*(\S.*?)\s*(?:(?:\.\s?){2,}|\s)\s*[a-z]?\d+(?:,\s*[a-z]?\d+)*,?\s*$", re.M)
"""A line of a contents or index list: its entry, a leader or a space, its pages."""
ENTRY_CHARS = (6, 60)
"""The length of an entry asked: a name or a short title."""


def _passages(database: Path) -> list[tuple[str, str, int, str]]:
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return db.execute(
            "SELECT path, heading, page, text FROM chunks WHERE page IS NOT NULL"
        ).fetchall()
    finally:
        db.close()


def run(index: Index, asked: list, mode: SearchMode, order: Callable[..., list]) -> dict:
    search_module.content_first = order  # type: ignore[attr-defined]
    found = on_section = lists = 0
    times: list[float] = []
    for path, title, pages in asked:
        start = time.perf_counter()
        response = search(index, SearchRequest(title, mode, limit=10, per_file=3))
        times.append((time.perf_counter() - start) * 1000)
        hit = next((h for h in response.results if h.path == path), None)
        if hit is None or not hit.passages:
            continue
        found += 1
        lead = hit.passages[0]
        on_section += lead.page in pages
        text = index.keywords.chunks_by_id([lead.chunk_id])[lead.chunk_id].text
        lists += is_reference_list(text)
    return {
        "questions": len(asked),
        "file in top 10": found,
        "leads on the section": on_section,
        "leads with a contents or index list": lists,
        "p50 ms": round(statistics.median(times), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--mode", nargs="+", default=["hybrid", "keyword"])
    parser.add_argument("--kind", nargs="+", default=["titles", "entries"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    index = Index.open_existing(Settings.for_root(args.root.resolve(), args.index_dir))
    database = args.index_dir / "index.sqlite"
    new_order = search_module.content_first
    old_order = baseline_order(args.baseline)
    rows = []
    for kind in args.kind:
        draw = sections if kind == "titles" else entries
        asked = draw(database, args.sample, args.seed)
        files = len({path for path, _q, _p in asked})
        for mode_name in args.mode:
            mode = SearchMode(mode_name)
            for method, order in (("baseline", old_order), ("new", new_order)):
                measured = run(index, asked, mode, order)
                rows.append(
                    {"kind": kind, "files": files, "mode": mode_name, "method": method} | measured
                )
    index.close()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(
            f"{row['kind']:8} ({row['questions']} in {row['files']} PDFs) {row['mode']:8}"
            f" {row['method']:9} file in top 10 {row['file in top 10']:4}"
            f"  leads on its pages {row['leads on the section']:4}"
            f"  leads with a list {row['leads with a contents or index list']:4}"
            f"  p50 {row['p50 ms']} ms"
        )


if __name__ == "__main__":
    main()
