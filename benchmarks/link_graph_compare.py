"""The related-files benchmark's link graph beside the one explorer's own links give.

``benchmarks/related.py`` judges related files by each page's links to other pages, read by its
own resolver (``benchmarks/related_links.py``). This compares that graph with the links
explorer resolves for ``explorer links`` and ``check-refs`` (Markdown links, definitions,
wikilinks and Hugo refs that resolve to another indexed page; images, embeds and backtick
mentions left out, as the benchmark leaves them out): how many pages each would judge, how
many (page, linked page) pairs each holds, and how many they share. Nothing is embedded; it
needs a keyword index of the folder (``explorer check-refs ROOT --index-dir DIR`` makes one).

    python benchmarks/link_graph_compare.py --root ../shared/corpora/nginx-docs \\
        --index-dir ~/.cache/explorer-dev/links/after-nginx-docs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from related_links import link_graph as benchmark_graph

from explorer.core.ingest.references import ReferenceKind
from explorer.core.retrieval.links import LinkState, file_links
from explorer.core.store.index import Index
from explorer.settings.config import Settings

PAGE_KINDS = frozenset({ReferenceKind.LINK, ReferenceKind.DEFINITION})


def core_graph(index: Index, pages: list[str]) -> dict[str, set[str]]:
    """Each page → the other indexed pages its links resolve to (as ``explorer links``)."""
    wanted = set(pages)
    graph: dict[str, set[str]] = {}
    for page in pages:
        found = file_links(index, page)
        graph[page] = {
            link.target
            for link in found.outgoing
            if link.kind in PAGE_KINDS
            and link.state is LinkState.RESOLVED
            and link.target in wanted
            and link.target != page
        }
    return graph


def pairs(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(page, target) for page, targets in graph.items() for target in targets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    args = parser.parse_args()
    index = Index.open_existing(Settings.for_root(args.root, args.index_dir))
    try:
        pages = [path for path in index.keywords.paths() if path.endswith(".md")]
        bench = benchmark_graph(index.settings.root, pages).links
        core = core_graph(index, pages)
    finally:
        index.close()
    judged_bench = {page for page, targets in bench.items() if targets}
    judged_core = {page for page, targets in core.items() if targets}
    bench_pairs, core_pairs = pairs(bench), pairs(core)
    report = {
        "pages": len(pages),
        "judged": {
            "benchmark": len(judged_bench),
            "explorer": len(judged_core),
            "both": len(judged_bench & judged_core),
        },
        "links": {
            "benchmark": len(bench_pairs),
            "explorer": len(core_pairs),
            "both": len(bench_pairs & core_pairs),
        },
        "only_benchmark_examples": sorted(bench_pairs - core_pairs)[:10],
        "only_explorer_examples": sorted(core_pairs - bench_pairs)[:10],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
