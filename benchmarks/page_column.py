"""What the chunks' ``page`` column costs a search: the keyword index with and without it.

A search reads the rows of the passages it shows with ``KeywordIndex.chunks_by_id`` (the only
query the column touches; the FTS5 tables are unchanged). This copies an index's database
twice, drops the column from one copy (an index made before pages: the code then selects
NULL), and times, on each, the keyword leg's query and the reading of the 30 best passages,
for every query of ``benchmarks/speed.py``, alternating the two copies round after round::

    explorer index ../shared/corpora/nginx-docs --index-dir DIR --keywords-only
    flock /tmp/explorer-cpu.lock python benchmarks/page_column.py --index-dir DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import QUERIES

from explorer.core.retrieval.query import fts_expression
from explorer.core.store.keywords import KeywordIndex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        copies = {}
        for name in ("with page", "without page"):
            target = Path(scratch) / name.replace(" ", "-") / "index.sqlite"
            target.parent.mkdir()
            with (
                sqlite3.connect(args.index_dir / "index.sqlite") as source,
                sqlite3.connect(target) as copy,
            ):
                source.backup(copy)
            copies[name] = target
        with sqlite3.connect(copies["without page"]) as db:
            db.execute("ALTER TABLE chunks DROP COLUMN page")
        indexes = {name: KeywordIndex(path, read_only=True) for name, path in copies.items()}
        times: dict[str, list[float]] = {name: [] for name in indexes}
        matches = [fts_expression(query) for query in QUERIES]
        for _ in range(args.rounds):
            for name, index in indexes.items():
                for match in matches:
                    started = time.perf_counter()
                    hits = index.search(match, 200)
                    rows = index.chunks_by_id([chunk_id for chunk_id, _p, _s in hits[:30]])
                    times[name].append((time.perf_counter() - started) * 1000)
                    assert len(rows) == min(30, len(hits))
        for index in indexes.values():
            index.close()
        shutil.rmtree(scratch, ignore_errors=True)
    result = {
        name: {
            "p50_ms": round(statistics.median(values), 3),
            "p95_ms": round(statistics.quantiles(values, n=20)[18], 3),
            "n": len(values),
        }
        for name, values in times.items()
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
