"""Compare ways of fusing the keyword and vector legs on a BEIR data set already indexed by beir.py.

    python benchmarks/fusion.py --data ../shared/bench/scifact --split train

Each query's two candidate lists (top 200 chunks per leg, as search uses) are fetched once; each
fusion rule then ranks files from them, so many rules are compared on identical inputs. This is
how the fusion before issue 10 was chosen; it reports nDCG@10 and Recall@100. The default since
was chosen with ``benchmarks/ranking.py`` (three judged sets, per question type).
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beir import ndcg_at, read_jsonl, read_qrels, recall_at

from explorer.core.retrieval.query import fts_expression
from explorer.core.store.index import Index
from explorer.settings.config import Settings

Hits = list[tuple[str, float]]


def legs(index: Index, query: str, k: int) -> tuple[Hits, Hits]:
    """(file, score) per chunk hit, best first, for the keyword and the vector leg."""
    expression = fts_expression(query)
    keyword = index.keywords.search(expression, k) if expression else []
    vector_hits = index.vectors.query_chunks(index.embedder.embed_query(query), k)
    paths = index.keywords.chunks_by_id([cid for cid, _ in vector_hits])
    vector = [(paths[cid].path, sim, cid) for cid, sim in vector_hits if cid in paths]
    return [(path, score, cid) for cid, path, score in keyword], vector


def best_per_file(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    seen: dict[str, float] = {}
    for path, score, *_cid in hits:
        seen.setdefault(path, score)
    return list(seen.items())


def rrf(keyword, vector, k=60, w_vector=1.0, per_file=False):
    if per_file:
        keyword, vector = best_per_file(keyword), best_per_file(vector)
    scores: dict[str, float] = {}
    for weight, hits in ((1.0, keyword), (w_vector, vector)):
        best: dict[str, float] = {}
        for rank, (path, *_rest) in enumerate(hits, 1):
            best[path] = max(best.get(path, 0.0), weight / (k + rank))
        for path, value in best.items():
            scores[path] = scores.get(path, 0.0) + value
    return sorted(scores, key=scores.get, reverse=True)


def convex(keyword, vector, alpha=0.5, minmax=False):
    """alpha * cosine + (1 - alpha) * BM25 / best BM25, per file (best chunk of each leg).

    A file missing from the vector leg counts the lowest similarity the leg returned; one
    missing from the keyword leg counts 0. ``minmax`` rescales cosines to 0-1 over the leg.
    """
    kw, vec = dict(best_per_file(keyword)), dict(best_per_file(vector))
    top = max(kw.values(), default=1.0) or 1.0
    floor = min(vec.values(), default=0.0)
    if minmax and vec:
        high = max(vec.values())
        vec = {p: (v - floor) / ((high - floor) or 1.0) for p, v in vec.items()}
        floor = 0.0
    scores = {
        path: alpha * vec.get(path, floor) + (1 - alpha) * kw.get(path, 0.0) / top
        for path in set(kw) | set(vec)
    }
    return sorted(scores, key=scores.get, reverse=True)


def convex_chunks(keyword, vector, alpha=0.7):
    """The same formula per chunk (joined on chunk id); a file scores as its best chunk."""
    top = keyword[0][1] if keyword else 1.0
    floor = min((sim for _p, sim, _c in vector), default=0.0)
    kw = {cid: (path, score / top) for path, score, cid in keyword}
    vec = {cid: (path, sim) for path, sim, cid in vector}
    scores: dict[str, float] = {}
    for cid in set(kw) | set(vec):
        path = (kw.get(cid) or vec.get(cid))[0]
        value = alpha * vec.get(cid, (path, floor))[1] + (1 - alpha) * kw.get(cid, (path, 0.0))[1]
        scores[path] = max(scores.get(path, 0.0), value)
    return sorted(scores, key=scores.get, reverse=True)


RULES = {
    "keyword only": lambda kw, vec: [p for p, _ in best_per_file(kw)],
    "vector only": lambda kw, vec: [p for p, _ in best_per_file(vec)],
    **{f"convex chunks a={a}": functools.partial(convex_chunks, alpha=a) for a in (0.6, 0.7)},
    "rrf k=60 (chunks)": lambda kw, vec: rrf(kw, vec),
    "rrf k=60 (files)": lambda kw, vec: rrf(kw, vec, per_file=True),
    "rrf k=20 (files)": lambda kw, vec: rrf(kw, vec, k=20, per_file=True),
    "rrf k=60 vec x1.5 (files)": lambda kw, vec: rrf(kw, vec, w_vector=1.5, per_file=True),
    **{
        f"convex a={a}": functools.partial(convex, alpha=a)
        for a in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8)
    },
    **{
        f"convex minmax a={a}": functools.partial(convex, alpha=a, minmax=True)
        for a in (0.4, 0.5, 0.6, 0.7)
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--candidates", type=int, default=200)
    args = parser.parse_args()
    data = args.data.resolve()
    work = args.work or Path(tempfile.gettempdir()) / f"explorer-beir-{data.name}"
    queries = {q["_id"]: q["text"] for q in read_jsonl(data / "queries.jsonl")}
    qrels = {
        q: r for q, r in read_qrels(data / "qrels" / f"{args.split}.tsv").items() if q in queries
    }
    index = Index.open_existing(Settings.for_root(work / "docs", work / "index"))
    fetched = {qid: legs(index, queries[qid], args.candidates) for qid in qrels}
    print(f"{'rule':<28}{'nDCG@10':>10}{'R@100':>10}")
    for name, rule in RULES.items():
        ndcg = recall = 0.0
        for qid, relevant in qrels.items():
            ranked = [p.removesuffix(".md") for p in rule(*fetched[qid])]
            ndcg += ndcg_at(ranked, relevant, 10)
            recall += recall_at(ranked, relevant, 100)
        print(f"{name:<28}{ndcg / len(qrels):>10.4f}{recall / len(qrels):>10.4f}")
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
