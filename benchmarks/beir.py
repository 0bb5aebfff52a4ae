"""Retrieval quality of explorer on a BEIR-format data set: nDCG@10 and Recall@100 per mode.

The corpus becomes a folder of Markdown files (one per document, the title as its heading), which
explorer indexes as it would any folder; every query of the split then goes through the real
search path (``explorer.core.retrieval.search.search``) in keyword, semantic and hybrid mode.

    python benchmarks/beir.py --data ../shared/bench/scifact --split train [--json]

The folder and index are kept in --work (default: a folder under the system temp dir named after
the data set), so a second run re-uses the vectors and only re-runs the queries.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings

MODES = ("keyword", "semantic", "hybrid")


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader, None)
        for row in reader:
            if len(row) >= 3 and row[2].strip():
                qrels.setdefault(row[0].strip(), {})[row[1].strip()] = int(row[2])
    return qrels


def write_corpus(corpus: list[dict], folder: Path) -> None:
    """One Markdown file per document; unchanged files are left alone (so no re-embedding)."""
    folder.mkdir(parents=True, exist_ok=True)
    for document in corpus:
        title = " ".join(document.get("title", "").split())
        body = document.get("text", "").strip()
        text = f"# {title}\n\n{body}\n" if title else f"{body}\n"
        path = folder / f"{document['_id']}.md"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    gains = sum(
        (2 ** relevant.get(doc, 0) - 1) / math.log2(position + 2)
        for position, doc in enumerate(ranked[:k])
    )
    ideal = sorted(relevant.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return gains / best if best else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def evaluate(index: Index, queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> dict:
    results = {}
    for mode in MODES:
        ndcg, recall, latencies = [], [], []
        for query_id, relevant in qrels.items():
            request = SearchRequest(query=queries[query_id], mode=mode, limit=100, per_file=1)
            started = time.perf_counter()
            response = search(index, request)
            latencies.append(time.perf_counter() - started)
            ranked = [hit.path.removesuffix(".md") for hit in response.results]
            ndcg.append(ndcg_at(ranked, relevant, 10))
            recall.append(recall_at(ranked, relevant, 100))
        latencies.sort()
        results[mode] = {
            "ndcg@10": round(sum(ndcg) / len(ndcg), 4),
            "recall@100": round(sum(recall) / len(recall), 4),
            "queries": len(ndcg),
            "latency_p50_ms": round(1000 * latencies[len(latencies) // 2], 2),
        }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="A BEIR-format folder.")
    parser.add_argument("--split", default="test", help="qrels/<split>.tsv to evaluate.")
    parser.add_argument("--work", type=Path, help="Where the corpus folder and index are kept.")
    parser.add_argument("--model", default=None, help="Model name or folder (default: bundled).")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    data = args.data.resolve()
    qrels_path = data / "qrels" / f"{args.split}.tsv"
    for required in (data / "corpus.jsonl", data / "queries.jsonl", qrels_path):
        if not required.exists():
            print(f"beir.py: error: missing {required}", file=sys.stderr)
            return 2
    work = args.work or Path(tempfile.gettempdir()) / f"explorer-beir-{data.name}"
    folder = work / "docs"
    write_corpus(read_jsonl(data / "corpus.jsonl"), folder)
    queries = {q["_id"]: q["text"] for q in read_jsonl(data / "queries.jsonl")}
    qrels = {qid: rel for qid, rel in read_qrels(qrels_path).items() if qid in queries}

    overrides = {"model": args.model} if args.model else {}
    settings = Settings.for_root(folder, work / "index", **overrides)
    index = Index(settings)
    started = time.perf_counter()
    report = Indexer(index).sync()
    index_seconds = time.perf_counter() - started
    index.embedder.load_query_path()
    results = evaluate(index, queries, qrels)
    status = index.status()
    index.close()

    summary = {mode: dict(results[mode]) for mode in MODES}
    meta = {
        "data": str(data),
        "split": args.split,
        "documents": status.indexed,
        "chunks": status.chunks,
        "index_seconds": round(index_seconds, 1),
        "chunks_embedded_now": report.chunks_embedded,
    }
    if args.json:
        print(json.dumps({**summary, "meta": meta}, indent=2))
    else:
        print(
            f"{data.name} ({args.split}): {meta['documents']} documents, {meta['chunks']} chunks,"
            f" {len(qrels)} queries"
        )
        print(f"{'mode':<10}{'nDCG@10':>10}{'R@100':>10}{'p50 ms':>10}")
        for mode in MODES:
            r = results[mode]
            print(
                f"{mode:<10}{r['ndcg@10']:>10.4f}{r['recall@100']:>10.4f}"
                f"{r['latency_p50_ms']:>10.1f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
