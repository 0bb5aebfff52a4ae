"""Related files judged by a corpus's own links and by reading: baseline and new, in one run.

    python benchmarks/related.py --root ../shared/corpora/nginx-docs --index-dir INDEX \
        --baseline /work/main --judged benchmarks/related_judged.json --corpus nginx
    python benchmarks/related.py --root ../shared/corpora/vaultofknowledge --index-dir INDEX \
        --graph index --baseline /work/main --judged benchmarks/related_judged.json --corpus vault

A page's links to other pages of the same corpus (``benchmarks/related_links.py``) stand in for
"related": a writer who links page B from page A says B is worth opening next to A. For every
indexed page with at least one such link, the benchmark asks each method for the page's top 5
neighbours and reports

- link recall@5: the share of the page's linked pages among its top 5, averaged over pages;
- hit@5: the share of pages with at least one linked page among their top 5;
- stubs@5: the share of top-5 neighbours with under 200 characters of text;
- spread: the mean score gap between a page's 1st and 5th neighbour;
- latency of one call, in this process (p50 / p95 / max).

``--graph index`` judges by the index's own resolved links (wikilinks of an Obsidian vault)
instead of the Hugo reading of ``related_links.py``. ``--judged`` adds the share of top-5
neighbours judged related by reading (``related_judged.json``: per corpus, per page, each
judged neighbour with its verdict and a one-line reason); neighbours nobody judged yet are
listed (``--unjudged``) and left out of the share.

Since issue 31 the method ranks by links too (a page's links to a neighbour are one of its
signals), so link recall would reward it for reading the answer. ``new, own links hidden``
takes the judged page's own links out of the structure it ranks by (backlinks, co-citation,
tags and place stay): that row, not ``new``, is the fair link figure. ``baseline`` is the
method of another checkout (``--baseline DIR``: its ``related.py`` loaded beside this one, so
both run in one process); ``old`` the method before issue 10 (nearest file vectors).
``--variants`` adds settings of the new method, to choose its defaults by data. The index is
opened read-only in spirit (nothing is written), but use a copy: SQLite and Chroma open files
for writing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

from related_links import link_graph

from explorer.core.models import FileState
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.links import link_graph as index_link_graph
from explorer.core.retrieval.related import DEFAULT_TUNING, RelatedTuning, related_files
from explorer.core.retrieval.related_structure import CITING_KINDS, LinkDamping, folder_structure
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


def baseline_module(checkout: Path) -> ModuleType:
    """Another checkout's ``related.py``, loaded beside this one (it imports the store of this
    tree: the store's interface is what both read)."""
    source = checkout / "explorer" / "core" / "retrieval" / "related.py"
    spec = importlib.util.spec_from_file_location("baseline_related", source)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no related.py in {checkout}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_related"] = module
    spec.loader.exec_module(module)
    return module


def baseline_method(module: ModuleType) -> Method:
    def run(index: Index, path: str) -> list[tuple[str, float]]:
        return [(r.path, r.score) for r in module.related_files(index, path, TOP)]

    return run


def new_method(tuning: RelatedTuning, hide_own_links: bool = False) -> Method:
    def run(index: Index, path: str) -> list[tuple[str, float]]:
        structure = folder_structure(index)
        if hide_own_links:
            structure = structure.without_links_of(path)
        found = related_files(index, path, TOP, tuning=tuning, structure=structure)
        return [(r.path, r.score) for r in found]

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
    judged: list[bool] = field(default_factory=list)
    unjudged: list[tuple[str, str]] = field(default_factory=list)
    listed: Counter[str] = field(default_factory=Counter)
    """How many pages' top 5 each file stands in (a catch-all stands in many)."""

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
            "judged_related": sum(self.judged),
            "judged": len(self.judged),
            "unjudged": len(self.unjudged),
            "most_listed": self.listed.most_common(3),
        }


def evaluate(
    index: Index,
    name: str,
    method: Method,
    linked_pages: dict[str, set[str]],
    lengths: dict[str, int],
    verdicts: dict[str, dict[str, bool]],
) -> Outcome:
    """Run ``method`` on every page with links (link figures and latency), then on every page
    judged by reading (``verdicts``: page -> neighbour -> related)."""
    outcome = Outcome(name)
    for path, linked in linked_pages.items():
        started = time.perf_counter()
        try:
            neighbours = method(index, path)
        except Exception as error:  # noqa: BLE001 - counted and shown, the run goes on
            outcome.errors += 1
            print(f"  {name}: {path}: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        outcome.seconds.append(time.perf_counter() - started)
        top = [p for p, _s in neighbours[:TOP]]
        outcome.listed.update(top)
        found = len(set(top) & linked)
        outcome.recall.append(found / len(linked))
        outcome.hits.append(1.0 if found else 0.0)
        if top:
            outcome.stubs.append(sum(lengths.get(p, 0) < STUB_CHARS for p in top) / len(top))
        if len(neighbours) >= TOP:
            outcome.spread.append(neighbours[0][1] - neighbours[TOP - 1][1])
    for page, judged in verdicts.items():
        for other, _score in method(index, page)[:TOP]:
            if other in judged:
                outcome.judged.append(judged[other])
            else:
                outcome.unjudged.append((page, other))
    return outcome


def index_links(index: Index, indexed: list[str]) -> dict[str, set[str]]:
    """Each indexed file's resolved links to other indexed files, as the index reads them."""
    known = set(indexed)
    links: dict[str, set[str]] = {}
    for source, items in index_link_graph(index).by_source.items():
        for item in items:
            target = item.resolution.target
            if (
                item.resolution.state is LinkState.RESOLVED
                and item.reference.kind in CITING_KINDS
                and target in known
                and target != source
            ):
                links.setdefault(source, set()).add(target)
    return links


def read_verdicts(path: Path | None, corpus: str) -> dict[str, dict[str, bool]]:
    """The judged set of ``corpus``: page -> neighbour -> judged related."""
    if path is None:
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    pages = data["corpora"][corpus]["pages"]
    return {
        page: {other: bool(item["related"]) for other, item in judged.items()}
        for page, judged in pages.items()
    }


VARIANTS: dict[str, dict] = {
    "no structure": {
        "linked_weight": 0,
        "linked_from_weight": 0,
        "cited_together_weight": 0,
        "links_alike_weight": 0,
        "tags_weight": 0,
        "section_weight": 0,
        "section_page_factor": 1.0,
    },
    "no passage frequency": {"near_cosine": 2.0},
    "words alone list a file": {"needs_evidence": False},
    "long pages 30k ^0.5": {"long_length": 30000, "long_power": 0.5},
    "long pages 60k ^0.5": {"long_length": 60000, "long_power": 0.5},
    "long pages 30k ^0.25": {"long_length": 30000, "long_power": 0.25},
    "near cosine 0.8": {"near_cosine": 0.8},
    "near cosine 0.9": {"near_cosine": 0.9},
    "link lists count fully": {"link_list_weight": 1.0},
    "no section-page factor": {"section_page_factor": 1.0},
    "section weight x2": {"section_weight": DEFAULT_TUNING.section_weight * 2},
    "no section weight": {"section_weight": 0},
    "tags weight x2": {"tags_weight": DEFAULT_TUNING.tags_weight * 2},
    "no tags weight": {"tags_weight": 0},
    "co-citation x2": {"cited_together_weight": DEFAULT_TUNING.cited_together_weight * 2},
    "no co-citation": {"cited_together_weight": 0},
    "coupling x2": {"links_alike_weight": DEFAULT_TUNING.links_alike_weight * 2},
    "no coupling": {"links_alike_weight": 0},
    "backlink x2": {"linked_from_weight": DEFAULT_TUNING.linked_from_weight * 2},
    "no backlink": {"linked_from_weight": 0},
    "backlink by source": {"link_damping": LinkDamping(backlink_by_source=True)},
    "backlink by source only": {
        "link_damping": LinkDamping(backlink_by_source=True, backlink_by_candidate=False)
    },
    "co-citation by source": {"link_damping": LinkDamping(cocitation_by_source=True)},
    "links by source": {
        "link_damping": LinkDamping(backlink_by_source=True, cocitation_by_source=True)
    },
    "hub links 3": {"link_damping": LinkDamping(hub_links=3)},
    "hub links 1": {"link_damping": LinkDamping(hub_links=1)},
    "lone pair x0.7": {"lone_pair_factor": 0.7},
    "lone pair x0.5": {"lone_pair_factor": 0.5},
    "lone pair x0.5, 4+ passages": {"lone_pair_factor": 0.5, "lone_pair_passages": 4},
    "lone pair x0.5, 8+ passages": {"lone_pair_factor": 0.5, "lone_pair_passages": 8},
    "lone pair x0.3, 8+ passages": {"lone_pair_factor": 0.3, "lone_pair_passages": 8},
    "links by source, 3": {
        "link_damping": LinkDamping(
            backlink_by_source=True, cocitation_by_source=True, source_hub_links=3
        )
    },
    "links by source, 1": {
        "link_damping": LinkDamping(
            backlink_by_source=True, cocitation_by_source=True, source_hub_links=1
        )
    },
    "long thin 30k ^0.5 <2": {"long_length": 30000, "long_power": 0.5, "long_thin_shared": 2},
    "long thin 20k ^0.5 <2": {"long_length": 20000, "long_power": 0.5, "long_thin_shared": 2},
    "long thin 30k ^0.5 <1": {"long_length": 30000, "long_power": 0.5, "long_thin_shared": 1},
    "long thin 60k ^0.5 <2": {"long_length": 60000, "long_power": 0.5, "long_thin_shared": 2},
    "bare structure x0.5": {"bare_structure_factor": 0.5},
    "words best chunk only": {"keyword_file_chunks": 1},
    "keyword weight 0.03": {"keyword_weight": 0.03},
    "keyword weight 0.08": {"keyword_weight": 0.08},
    "backlink by source 1, lone pair x0.5 4+": {
        "link_damping": LinkDamping(backlink_by_source=True, source_hub_links=1),
        "lone_pair_factor": 0.5,
        "lone_pair_passages": 4,
    },
    "links by source 1, lone pair x0.5 4+": {
        "link_damping": LinkDamping(
            backlink_by_source=True, cocitation_by_source=True, source_hub_links=1
        ),
        "lone_pair_factor": 0.5,
        "lone_pair_passages": 4,
    },
    "evidence at a shared passage": {"evidence_pair": DEFAULT_TUNING.shared_passage},
    "evidence at half a shared passage": {"evidence_pair": DEFAULT_TUNING.shared_passage / 2},
    "no contents-page factor": {"contents_factor": 1.0},
    "contents factor 0.7": {"contents_factor": 0.7},
    "contents share 0.6": {"contents_share": 0.6},
    "release notes x0.5": {"release_notes_factor": 0.5},
    "release notes unbounded": {"release_notes_listed": None},
    "directories x1": {"directory_factor": 1.0},
    "directories x0.3": {"directory_factor": 0.3},
    "directories x0.5": {"directory_factor": 0.5},
    "release notes: at most 2": {"release_notes_listed": 2},
    "release notes x0.3": {"release_notes_factor": 0.3},
    "release notes x0.7": {"release_notes_factor": 0.7},
    "backlink by source, 1": {
        "link_damping": LinkDamping(backlink_by_source=True, source_hub_links=1)
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="The indexed folder.")
    parser.add_argument("--index-dir", type=Path, required=True, help="A copy of its index.")
    parser.add_argument(
        "--graph",
        choices=("hugo", "index"),
        default="hugo",
        help="Judge by the Hugo reading of related_links.py, or by the index's own links.",
    )
    parser.add_argument("--baseline", type=Path, help="Another checkout to run beside this one.")
    parser.add_argument("--judged", type=Path, help="The judged set (related_judged.json).")
    parser.add_argument("--corpus", default="", help="The corpus's name in the judged set.")
    parser.add_argument("--unjudged", action="store_true", help="List neighbours not judged.")
    parser.add_argument("--old", action="store_true", help="Also the method before issue 10.")
    parser.add_argument("--sample", type=int, default=0, help="Judge only every n-th page.")
    parser.add_argument("--variants", action="store_true", help="Also try other settings.")
    parser.add_argument(
        "--shown", action="store_true", help="Run each variant with the page's links shown too."
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="Variant names to run (with --variants)."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    index = Index.open_existing(Settings.for_root(args.root, args.index_dir))
    try:
        indexed = index.keywords.paths()
        if args.graph == "hugo":
            graph = link_graph(index.settings.root, indexed)
            links = graph.links
            kinds = (
                f" Link targets by kind: {dict(graph.kinds)}, unresolved: {dict(graph.unresolved)}"
            )
        else:
            links, kinds = index_links(index, indexed), ""
        judged = {path: found for path, found in links.items() if found}
        if args.sample > 1:
            judged = dict(list(judged.items())[:: args.sample])
        verdicts = read_verdicts(args.judged, args.corpus)
        lengths = index.keywords.text_lengths(indexed)
        print(
            f"{len(indexed)} indexed files; {len(judged)} with >= 1 link to another indexed"
            f" file, {sum(len(v) for v in judged.values())} links; {len(verdicts)} pages"
            f" judged by reading.{kinds}",
            flush=True,
        )
        methods: list[tuple[str, Method]] = []
        if args.old:
            methods.append(("old: nearest file vectors", old_method))
        if args.baseline:
            methods.append(("baseline", baseline_method(baseline_module(args.baseline))))
        methods += [
            ("new", new_method(DEFAULT_TUNING)),
            ("new, own links hidden", new_method(DEFAULT_TUNING, hide_own_links=True)),
        ]
        if args.variants:
            for name, change in VARIANTS.items():
                if args.only is None or name in args.only:
                    tuning = replace(DEFAULT_TUNING, **change)
                    if args.shown:
                        methods.append((f"shown, {name}", new_method(tuning)))
                    methods.append((f"hidden, {name}", new_method(tuning, hide_own_links=True)))
        # one warm-up call each: the first opens Chroma's HNSW segment and reads the links
        first = next(iter(judged))
        for _name, method in methods:
            method(index, first)
        rows = []
        for name, method in methods:
            outcome = evaluate(index, name, method, judged, lengths, verdicts)
            row = outcome.row()
            rows.append(row)
            if not args.json:
                print(
                    f"{row['method']:<36} recall@5 {row['recall@5']:.3f}  hit@5 {row['hit@5']:.3f}"
                    f"  judged {row['judged_related']}/{row['judged']}"
                    f" (+{row['unjudged']} unjudged)  stubs@5 {row['stubs@5']:.3f}"
                    f"  p50 {row['p50_ms']:.0f} ms  p95 {row['p95_ms']:.0f} ms"
                    f"  max {row['max_ms']:.0f} ms  errors {row['errors']}",
                    flush=True,
                )
                listed = ", ".join(f"{path} {count}" for path, count in row["most_listed"])
                print(f"    most listed: {listed}", flush=True)
            if args.unjudged:
                for page, other in outcome.unjudged:
                    print(f"    unjudged: {page} -> {other}")
        if args.json:
            print(
                json.dumps({"pages": len(judged), "tuning": asdict(DEFAULT_TUNING), "rows": rows})
            )
    finally:
        index.close()


if __name__ == "__main__":
    main()
