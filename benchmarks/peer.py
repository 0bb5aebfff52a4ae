"""explorer next to a peer, txtai, in one run: hybrid query latency, nDCG@10 and memory.

Both index the same texts: the folder of Markdown files ``benchmarks/beir.py`` writes for a
BEIR data set (one file per document, title and abstract). explorer answers in this process
through its real search path (``search`` in hybrid mode, with snippets, as a caller gets them);
txtai runs in its own environment as a subprocess (``benchmarks/peer_txtai.py``) with the same
bundled model folder as ``path``, ``maxlength=256``, ``hybrid=True`` (BM25 + dense) and exact
vector search. The queries go to the two in turns, ``--rounds`` times, so a busy spell of the
machine hits both alike; every latency of every round counts in p50/p95. nDCG@10 comes from
the first round, scored by beir.py's scorer against the same judgments.

    python benchmarks/peer.py --data ../shared/bench/scifact --split train \\
        --work /tmp/explorer-beir-scifact --txtai-python /path/to/txtai-venv/bin/python

txtai is never a dependency of explorer: make its environment apart, e.g.
``python3 -m venv V && V/bin/pip install torch==2.13.0 && V/bin/pip install txtai``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beir import ndcg_at, read_jsonl, read_qrels, write_corpus

from explorer.core.embed.embedder import resolve_model_dir
from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings

DRIVER = Path(__file__).resolve().parent / "peer_txtai.py"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def memory_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MB. Not ``ru_maxrss``: a child
    started by fork and exec inherits its parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peer:
    """The txtai driver subprocess: one JSON line out, one JSON line back."""

    def __init__(
        self, python: str, docs: Path, model: Path, limit: int, cache: Path | None, threads: int
    ) -> None:
        env = dict(os.environ)
        if threads:  # torch sizes its thread pool from this when it starts
            env["OMP_NUM_THREADS"] = str(threads)
        self._process = subprocess.Popen(
            [python, str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        setup = {"docs": str(docs), "model": str(model), "limit": limit}
        self.built = self._ask({**setup, "cache": str(cache) if cache else None})

    def _ask(self, message: dict) -> dict:
        assert self._process.stdin and self._process.stdout
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise SystemExit(f"peer.py: error: the txtai driver exited ({self._process.wait()})")
        return json.loads(line)

    def run(self, queries: list[str], limit: int) -> tuple[list[list[str]], list, float]:
        answer = self._ask({"queries": queries, "limit": limit})
        results = answer["results"]
        timings = [(r["seconds"], r["cpu_seconds"]) for r in results]
        return [r["ids"] for r in results], timings, answer["rss_mb"]

    def close(self) -> float:
        """Ends the driver; its peak resident memory in MB."""
        assert self._process.stdin and self._process.stdout
        self._process.stdin.close()
        peak = json.loads(self._process.stdout.readline())["peak_rss_mb"]
        self._process.wait()
        return peak


def run_explorer(index: Index, queries: list[str], limit: int) -> tuple[list[list[str]], list]:
    ranked, seconds = [], []
    for query in queries:
        request = SearchRequest(query=query, mode="hybrid", limit=limit, per_file=1)
        started, cpu = time.perf_counter(), time.process_time()
        response = search(index, request)
        seconds.append((time.perf_counter() - started, time.process_time() - cpu))
        ranked.append([hit.path.removesuffix(".md") for hit in response.results])
    return ranked, seconds


def explorer_stages(index: Index, queries: list[str], limit: int) -> dict[str, float]:
    """CPU ms per query of each stage of explorer's hybrid search (one more pass, timed by
    wrapping the stages' functions; nested calls are counted in their own stage only)."""
    import explorer.core.retrieval.search as search_module

    spent: dict[str, float] = {}
    stages = [
        (index.embedder, "embed_query", "query embedding"),
        (index.keywords, "search", "keyword leg (FTS5 BM25, 200 candidates)"),
        (index.vectors, "query_chunks", "vector leg (Chroma HNSW, 200 candidates)"),
        (index.vectors, "chunk_vectors", "cosines of keyword-only hits (Chroma get)"),
        (index.keywords, "chunk_places", "candidate places (SQLite)"),
        (search_module, "_coverage", "keyword coverage of the query"),
        (search_module, "_fuse", "fusion"),
        (search_module, "_group", "grouping by file, snippets"),
    ]
    originals = []

    def timed(function, label):
        def wrapper(*args, **kwargs):
            began = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - began

        return wrapper

    for owner, name, label in stages:
        originals.append((owner, name, getattr(owner, name)))
        setattr(owner, name, timed(getattr(owner, name), label))
    try:
        began = time.process_time()
        run_explorer(index, queries, limit)
        total = time.process_time() - began
    finally:
        for owner, name, function in reversed(originals):
            if owner is search_module:
                setattr(owner, name, function)
            else:
                delattr(owner, name)  # the instance attribute hid the class's method
    spent["everything else"] = total - sum(spent.values())
    return {label: round(1000 * value / len(queries), 2) for label, value in spent.items()}


def summarise(ranked, timings, qrels_list) -> dict:
    """nDCG@10, and p50/p95 of wall-clock and of CPU time (all the process's threads: on a
    shared machine, what a query costs rather than how long it waited for a core)."""
    ndcg = [ndcg_at(r, rel, 10) for r, rel in zip(ranked, qrels_list, strict=True)]
    wall = [w for w, _cpu in timings]
    cpu = [c for _wall, c in timings]
    return {
        "ndcg@10": round(sum(ndcg) / len(ndcg), 4),
        "p50_ms": round(1000 * percentile(wall, 0.5), 2),
        "p95_ms": round(1000 * percentile(wall, 0.95), 2),
        "cpu_p50_ms": round(1000 * percentile(cpu, 0.5), 2),
        "cpu_p95_ms": round(1000 * percentile(cpu, 0.95), 2),
        "timed_queries": len(timings),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="A BEIR-format folder.")
    parser.add_argument("--split", default="train", help="qrels/<split>.tsv to evaluate.")
    parser.add_argument("--work", type=Path, help="beir.py's folder: docs/ and index/.")
    parser.add_argument("--index-dir", type=Path, help="explorer's index (default: WORK/index).")
    parser.add_argument("--txtai-python", required=True, help="Python of txtai's environment.")
    parser.add_argument(
        "--txtai-cache", type=Path, help="Keep txtai's index here and re-use it (default: build)."
    )
    parser.add_argument(
        "--txtai-threads", type=int, default=0, help="torch threads for txtai (default: its own)."
    )
    parser.add_argument("--limit", type=int, default=10, help="Results asked of each (10).")
    parser.add_argument("--rounds", type=int, default=2, help="Timed passes over the queries.")
    parser.add_argument(
        "--stages", action="store_true", help="Then time explorer's stages (one more pass)."
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    data = args.data.resolve()
    qrels_path = data / "qrels" / f"{args.split}.tsv"
    for required in (data / "corpus.jsonl", data / "queries.jsonl", qrels_path):
        if not required.exists():
            print(f"peer.py: error: missing {required}", file=sys.stderr)
            return 2
    if not Path(args.txtai_python).exists():
        print(f"peer.py: error: no python at {args.txtai_python}", file=sys.stderr)
        return 2
    if args.limit < 10 or args.rounds < 1:
        print(
            "peer.py: error: --limit must be at least 10 and --rounds at least 1", file=sys.stderr
        )
        return 2
    work = args.work or Path(tempfile.gettempdir()) / f"explorer-beir-{data.name}"
    docs = work / "docs"
    write_corpus(read_jsonl(data / "corpus.jsonl"), docs)
    query_text = {q["_id"]: q["text"] for q in read_jsonl(data / "queries.jsonl")}
    qrels = {qid: rel for qid, rel in read_qrels(qrels_path).items() if qid in query_text}
    queries = [query_text[qid] for qid in qrels]
    judged = list(qrels.values())
    load_before = os.getloadavg()

    settings = Settings.for_root(docs, args.index_dir or work / "index")
    index = Index(settings)
    started = time.perf_counter()
    report = Indexer(index).sync()
    explorer_sync = time.perf_counter() - started
    index.embedder.load_query_path()
    search(index, SearchRequest(query="warm up the query path", mode="hybrid"))

    model_dir = resolve_model_dir(settings.model)
    peer = Peer(
        args.txtai_python, docs, model_dir, args.limit, args.txtai_cache, args.txtai_threads
    )
    explorer_seconds: list[float] = []
    txtai_seconds: list[float] = []
    for round_number in range(args.rounds):
        ranked, seconds = run_explorer(index, queries, args.limit)
        explorer_seconds += seconds
        peer_ranked, peer_secs, txtai_rss = peer.run(queries, args.limit)
        txtai_seconds += peer_secs
        if round_number == 0:
            explorer_ranked, txtai_ranked = ranked, peer_ranked
    explorer_rss = memory_mb("VmRSS")
    stages = explorer_stages(index, queries, args.limit) if args.stages else {}
    status = index.status()
    index.close()
    txtai_peak = peer.close()
    explorer_peak = memory_mb("VmHWM")

    explorer = summarise(explorer_ranked, explorer_seconds, judged)
    explorer.update(
        {
            "rss_mb": round(explorer_rss, 1),
            "peak_rss_mb": round(explorer_peak, 1),
            "sync_seconds": round(explorer_sync, 1),
            "chunks_embedded_now": report.chunks_embedded,
            "chunks": status.chunks,
        }
    )
    txtai = summarise(txtai_ranked, txtai_seconds, judged)
    txtai.update(
        {
            "rss_mb": txtai_rss,
            "peak_rss_mb": txtai_peak,
            "index_seconds": peer.built["index_seconds"],
            "index_reused": peer.built["index_reused"],
            "peak_rss_mb_building": peer.built["peak_rss_mb_building"],
            "documents": peer.built["documents"],
        }
    )
    ratios = {
        key: round(explorer[key] / txtai[key], 3) if txtai[key] else None
        for key in (
            "p50_ms",
            "p95_ms",
            "cpu_p50_ms",
            "cpu_p95_ms",
            "ndcg@10",
            "rss_mb",
            "peak_rss_mb",
        )
    }
    meta = {
        "data": str(data),
        "split": args.split,
        "queries": len(queries),
        "limit": args.limit,
        "rounds": args.rounds,
        "txtai_threads": args.txtai_threads or "default",
        "documents": status.indexed,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "txtai_config": peer.built["config"],
    }
    if args.json:
        both = {"explorer": explorer, "txtai": txtai, "ratios": ratios}
        print(json.dumps({**both, "explorer_stages_cpu_ms": stages, "meta": meta}))
        return 0
    print(
        f"{data.name} ({args.split}): {meta['documents']} documents, {len(queries)} queries x "
        f"{args.rounds} rounds, limit {args.limit}, txtai threads {meta['txtai_threads']}; load "
        f"{meta['load_average_before']} -> "
        f"{meta['load_average_after']}"
    )
    print(f"{'':<18}{'explorer':>10}{'txtai':>10}{'ratio':>8}")
    for key, label in (
        ("p50_ms", "hybrid p50 ms"),
        ("p95_ms", "hybrid p95 ms"),
        ("cpu_p50_ms", "CPU p50 ms"),
        ("cpu_p95_ms", "CPU p95 ms"),
        ("ndcg@10", "nDCG@10"),
        ("rss_mb", "RSS MB (queries)"),
        ("peak_rss_mb", "peak RSS MB"),
    ):
        ratio = ratios[key]
        print(f"{label:<18}{explorer[key]:>10}{txtai[key]:>10}{ratio if ratio else '-':>8}")
    print(
        f"txtai index build: {txtai['index_seconds']} s for {txtai['documents']} documents"
        f"{' (in an earlier run)' if txtai['index_reused'] else ''}, peak RSS then "
        f"{txtai['peak_rss_mb_building']} MB; "
        f"explorer sync: {explorer['sync_seconds']} s ({report.chunks_embedded} chunks embedded)"
    )
    if stages:
        print("explorer hybrid, CPU ms per query by stage:")
        for label, value in stages.items():
            print(f"  {label:<44}{value:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
