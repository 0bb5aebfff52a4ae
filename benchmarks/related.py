"""Related files judged by a documentation corpus's own links: old method and new, in one run.

    python benchmarks/related.py --root ../shared/corpora/nginx-docs --index-dir INDEX

A page's links to other pages of the same corpus (``benchmarks/related_links.py``) stand in for
"related": a writer who links page B from page A says B is worth opening next to A. For every
indexed page with at least one such link, the benchmark asks each method for the page's top 5
neighbours and reports

- link recall@5: the share of the page's linked pages among its top 5, averaged over pages;
- hit@5: the share of pages with at least one linked page among their top 5;
- stubs@5: the share of top-5 neighbours with under 200 characters of text;
- spread: the mean score gap between a page's 1st and 5th neighbour;
- latency of one call, in this process (p50 / p95 / max).

The methods only see content: the link graph is used to judge, never to rank. ``old`` is the
method before issue 10 (nearest file vectors: the normalised mean of a file's chunk vectors);
``new`` is :func:`explorer.core.retrieval.related.related_files`. ``--variants`` adds settings of
the new
method, to choose its defaults by data. The index is opened read-only in spirit (nothing is
written), but use a copy: SQLite and Chroma open files for writing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from related_links import link_graph

from explorer.core.models import FileState
from explorer.core.retrieval.related import DEFAULT_TUNING, RelatedTuning, related_files
from explorer.core.store.index import Index
from explorer.core.store.vectors import file_vector_id
from explorer.settings.config import Settings

TOP = 5
STUB_CHARS = 200

Method = Callable[[Index, str], list[tuple[str, float]]]


def old_method(index: Index, path: str) -> list[tuple[str, float]]:
    """The method before issue 10: the nearest file vectors of other fresh files of this index."""
    record = index.keywords.file(path)
    vector = index.vectors.file_vector(file_vector_id(path, record.hash)) if record else None
    if vector is None:
        return []
    k = TOP
    while True:
        found = index.vectors.query_files(vector, k, exclude_path=path)
        records = index.keywords.files_by_path(sorted({p for _i, p, _s in found}))
        own = [
            (other, similarity)
            for file_id, other, similarity in found
            if (r := records.get(other)) is not None
            and r.state == FileState.FRESH
            and file_id == file_vector_id(other, r.hash)
        ]
        if len(own) >= TOP or len(found) < k or k >= 16 * TOP:
            return own[:TOP]
        k *= 4


def new_method(tuning: RelatedTuning) -> Method:
    def run(index: Index, path: str) -> list[tuple[str, float]]:
        return [(r.path, r.score) for r in related_files(index, path, TOP, tuning=tuning)]

    return run


@dataclass
class Outcome:
    """One method's numbers over every judged page."""

    name: str
    recall: list[float] = field(default_factory=list)
    hits: list[float] = field(default_factory=list)
    stubs: list[float] = field(default_factory=list)
    spread: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    errors: int = 0

    def row(self) -> dict:
        ms = sorted(s * 1000 for s in self.seconds) or [0.0]
        return {
            "method": self.name,
            "pages": len(self.recall),
            "recall@5": round(statistics.fmean(self.recall), 4) if self.recall else 0.0,
            "hit@5": round(statistics.fmean(self.hits), 4) if self.hits else 0.0,
            "stubs@5": round(statistics.fmean(self.stubs), 4) if self.stubs else 0.0,
            "spread": round(statistics.fmean(self.spread), 4) if self.spread else 0.0,
            "p50_ms": round(ms[len(ms) // 2], 1),
            "p95_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 1),
            "max_ms": round(ms[-1], 1),
            "errors": self.errors,
        }


def evaluate(
    index: Index, name: str, method: Method, judged: dict[str, set[str]], lengths: dict[str, int]
) -> Outcome:
    outcome = Outcome(name)
    for path, linked in judged.items():
        started = time.perf_counter()
        try:
            neighbours = method(index, path)
        except Exception as error:  # noqa: BLE001 - counted and shown, the run goes on
            outcome.errors += 1
            print(f"  {name}: {path}: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        outcome.seconds.append(time.perf_counter() - started)
        top = [p for p, _s in neighbours[:TOP]]
        found = len(set(top) & linked)
        outcome.recall.append(found / len(linked))
        outcome.hits.append(1.0 if found else 0.0)
        if top:
            outcome.stubs.append(sum(lengths.get(p, 0) < STUB_CHARS for p in top) / len(top))
        if len(neighbours) >= TOP:
            outcome.spread.append(neighbours[0][1] - neighbours[TOP - 1][1])
    return outcome


VARIANTS: dict[str, dict] = {
    # raw cosines (0.3-0.9) would saturate the shown score: shown as they are (score_scale 0)
    "raw cosines, best pair, no keywords": {
        "background": 0,
        "pairs": 1,
        "keyword_weight": 0,
        "score_scale": 0,
    },
    "raw cosines, 3 pairs, no keywords": {
        "background": 0,
        "pairs": 3,
        "keyword_weight": 0,
        "score_scale": 0,
    },
    "no keywords": {"keyword_weight": 0},
    "keywords only": {"keyword_weight": 1000, "score_scale": 0},
    "best pair only (pairs=1)": {"pairs": 1},
    "pairs=3": {"pairs": 3},
    "background 20": {"background": 20},
    "headroom": {"headroom": True},
    "keyword weight 0.15": {"keyword_weight": 0.15},
    "no length factor": {"full_length": 0},
    "k=20 per passage": {"neighbours_per_passage": 20},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="The indexed folder.")
    parser.add_argument("--index-dir", type=Path, required=True, help="A copy of its index.")
    parser.add_argument("--sample", type=int, default=0, help="Judge only every n-th page.")
    parser.add_argument("--variants", action="store_true", help="Also try other settings.")
    parser.add_argument(
        "--only", nargs="*", default=None, help="Variant names to run (with --variants)."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    index = Index.open_existing(Settings.for_root(args.root, args.index_dir))
    try:
        indexed = index.keywords.paths()
        graph = link_graph(index.settings.root, indexed)
        judged = {path: links for path, links in graph.links.items() if links}
        if args.sample > 1:
            judged = dict(list(judged.items())[:: args.sample])
        lengths = index.keywords.text_lengths(indexed)
        print(
            f"{len(indexed)} indexed files, {sum(1 for p in graph.links if p.endswith('.md'))}"
            f" Markdown pages; {len(judged)} judged (with >= 1 link to another indexed page),"
            f" {sum(len(v) for v in judged.values())} links. Link targets by kind:"
            f" {dict(graph.kinds)}, of which unresolved: {dict(graph.unresolved)}",
            flush=True,
        )
        # one warm-up call each: the first opens Chroma's HNSW segment
        first = next(iter(judged))
        old_method(index, first)
        related_files(index, first, TOP)
        methods: list[tuple[str, Method]] = [
            ("old: nearest file vectors", old_method),
            ("new: passage pairs + more-like-this", new_method(DEFAULT_TUNING)),
        ]
        if args.variants:
            for name, change in VARIANTS.items():
                if args.only is None or name in args.only:
                    methods.append((f"new, {name}", new_method(replace(DEFAULT_TUNING, **change))))
        rows = []
        for name, method in methods:
            row = evaluate(index, name, method, judged, lengths).row()
            rows.append(row)
            if not args.json:
                print(
                    f"{row['method']:<44} recall@5 {row['recall@5']:.3f}  hit@5 {row['hit@5']:.3f}"
                    f"  stubs@5 {row['stubs@5']:.3f}  spread {row['spread']:.3f}"
                    f"  p50 {row['p50_ms']:.0f} ms  p95 {row['p95_ms']:.0f} ms"
                    f"  max {row['max_ms']:.0f} ms  errors {row['errors']}",
                    flush=True,
                )
        if args.json:
            print(
                json.dumps({"pages": len(judged), "tuning": asdict(DEFAULT_TUNING), "rows": rows})
            )
    finally:
        index.close()


if __name__ == "__main__":
    main()
