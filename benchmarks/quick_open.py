"""Go to file (ctrl+p) on a large tree: the time each key takes to match, this checkout beside
a baseline, each in a process of its own, one after the other.

    python benchmarks/quick_open.py --index INDEX_DIR [--index …] [--baseline CHECKOUT]
        [--queries 40] [--json]

The files and titles come from each index's keyword store (read only). Queries are drawn from
the files themselves (seeded): a file name typed, a path's start, a title's first words, a
title's start, a file name with two letters swapped, two title words in another order; each is
typed a key at a time and every prefix is matched, as the picker does at every key. Reported
per index: the median and 95th percentile milliseconds a key, the time to prepare the picker's
matcher (this checkout; the baseline prepared nothing), and whether both sides list the same
matches, scores and marked characters for every prefix.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.side_by_side import probe_in

CHECKOUT = Path(__file__).resolve().parents[1]

PROBE = """
import hashlib, json, random, sqlite3, statistics, sys, time
from explorer.core.retrieval import fuzzy

index, count = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(f"file:{index}/index.sqlite?mode=ro", uri=True)
titles = dict(db.execute("SELECT path, coalesce(title, '') FROM files ORDER BY path"))
rng = random.Random(7)
paths = list(titles)
queries = []
for _ in range(count):
    path = rng.choice(paths)
    title = titles[path] or path
    name = path.rsplit("/", 1)[-1]
    swapped = list(name)
    if len(swapped) > 3:
        at = rng.randrange(len(swapped) - 1)
        swapped[at], swapped[at + 1] = swapped[at + 1], swapped[at]
    words = title.split()
    queries += [
        name,
        path[: rng.randint(1, len(path))],
        " ".join(words[:2]),
        title[: rng.randint(1, max(1, len(title)))],
        "".join(swapped),
        " ".join(rng.sample(words, min(2, len(words)))) if words else name,
    ]
started = time.perf_counter()
matcher = fuzzy.FileMatcher(titles) if hasattr(fuzzy, "FileMatcher") else None
prepare = time.perf_counter() - started
keys, digest = [], hashlib.sha256()
for query in queries:
    for end in range(1, len(query) + 1):
        typed = query[:end]
        started = time.perf_counter()
        found = matcher.match(typed) if matcher else fuzzy.match_files(typed, titles)
        keys.append(time.perf_counter() - started)
        for m in found:
            digest.update(repr((m.path, m.score, m.positions, m.title_positions)).encode())
keys.sort()
print(json.dumps({
    "files": len(titles), "keys": len(keys), "prepare_ms": round(prepare * 1000, 1),
    "p50_ms": round(statistics.median(keys) * 1000, 2),
    "p95_ms": round(keys[int(0.95 * (len(keys) - 1))] * 1000, 2),
    "digest": digest.hexdigest(),
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, action="append", required=True)
    parser.add_argument("--baseline", type=Path, help="Another checkout, run the same way.")
    parser.add_argument("--queries", type=int, default=40, help="Files queries are drawn from.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    checkouts = {"this": CHECKOUT} | ({"baseline": args.baseline} if args.baseline else {})
    rows = []
    for index in args.index:
        found = {
            name: probe_in(path, PROBE, index.resolve(), args.queries)
            for name, path in checkouts.items()
        }
        row = {"index": str(index)}
        row |= {f"{key}_{name}": value for name, r in found.items() for key, value in r.items()}
        if "baseline" in found:
            row["same_matches"] = found["this"]["digest"] == found["baseline"]["digest"]
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(row["index"], f"{row['files_this']} files, {row['keys_this']} keys")
        for name in checkouts:
            print(
                f"  {name}: per key p50 {row[f'p50_ms_{name}']} ms, "
                f"p95 {row[f'p95_ms_{name}']} ms; prepared in {row[f'prepare_ms_{name}']} ms"
            )
        if "same_matches" in row:
            print(f"  same matches: {row['same_matches']}")


if __name__ == "__main__":
    main()
