"""Ranking quality per question type: MRR@10 and nDCG@10 of keyword, semantic and hybrid search.

Three sets, each optional:

- ``--nginx-index DIR``: the judged development set ``benchmarks/devsets/nginx.jsonl`` over
  ``../shared/corpora/nginx-docs`` (exact terms, short topics, everyday-words questions);
- ``--sample-index DIR``: ``tests/sample_docs_expectations.json`` over ``sample_docs`` (its
  everyday-words questions and its exact keyword queries);
- ``--scifact WORK``: BEIR SciFact train, indexed by ``benchmarks/beir.py --work WORK``;
- ``--vault-index DIR``: ``benchmarks/devsets/vault.jsonl`` over
  ``../shared/corpora/vaultofknowledge``.

The nginx and vault sets also hold their questions of ``benchmarks/devsets/reference.jsonl``
(type ``reference``: one entry of a long reference page, asked in everyday words), for which
hit@3 (a page that answers among the first three) is the measure of issue 31.

    python benchmarks/ranking.py --sample-index /tmp/sample-index --nginx-index /tmp/nginx-index \\
        --scifact /tmp/scifact [--rules] [--json]

Every query goes through the real search path (:func:`explorer.core.retrieval.search.search`) in
the three
modes. With ``--rules``, each query's two legs are also fetched once
(:func:`explorer.core.retrieval.search.gather_legs`, as search does) and every fusion rule of
``explorer.core.retrieval.fusion`` ranks files from the same lists, so rules are compared on equal
inputs.
Legs are cached (``--cache``) so a second run does not embed or query again.

With ``--pending 0.13,0.5``, the same legs are cut down to what a folder still being embedded
gives: a file has vectors when a hash of its path falls below the share (embedding goes file
by file), the vector leg keeps only such files' passages, and the keyword leg's best passages
in other files are *pending*. The default rule is compared with the rule before pending
passages were told apart (``pending_meaning=False``: they counted as the vector leg's lowest
cosine) and with the keyword leg alone. (The vector leg of a real partial index would fill its
200 places from the embedded files; here it keeps those of the 200 that are embedded.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beir import read_jsonl, read_qrels

from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings

REPO = Path(__file__).resolve().parents[1]
MODES = ("keyword", "semantic", "hybrid")


@dataclass(frozen=True)
class Question:
    """One judged query: its id, type and graded judgments (document → grade)."""

    qid: str
    kind: str
    text: str
    judgments: dict[str, int]


@dataclass
class QuestionSet:
    """A corpus (root and index) and its judged questions; ``doc`` maps a path to a document id."""

    name: str
    root: Path
    index_dir: Path
    questions: list[Question]
    doc: Callable[[str], str] = lambda path: path


def reference_questions(corpus: str) -> list[Question]:
    rows = read_jsonl(REPO / "benchmarks" / "devsets" / "reference.jsonl")
    return [
        Question(r["id"], "reference", r["query"], r["judgments"])
        for r in rows
        if r["corpus"] == corpus
    ]


def nginx_set(index_dir: Path, root: Path) -> QuestionSet:
    rows = read_jsonl(REPO / "benchmarks" / "devsets" / "nginx.jsonl")
    questions = [Question(r["id"], r["type"], r["query"], r["judgments"]) for r in rows]
    return QuestionSet("nginx", root, index_dir, questions + reference_questions("nginx"))


def vault_set(index_dir: Path, root: Path) -> QuestionSet:
    rows = read_jsonl(REPO / "benchmarks" / "devsets" / "vault.jsonl")
    questions = [Question(r["id"], r["type"], r["query"], r["judgments"]) for r in rows]
    return QuestionSet("vault", root, index_dir, questions + reference_questions("vault"))


def sample_set(index_dir: Path) -> QuestionSet:
    expectations = json.loads((REPO / "tests" / "sample_docs_expectations.json").read_text())
    questions = [
        Question(f"ev{i:02d}", "everyday", case["query"], {case["best"]: 2})
        for i, case in enumerate(expectations["semantic_queries"], 1)
    ] + [
        Question(f"ex{i:02d}", "exact", case["query"], dict.fromkeys(case["files"], 2))
        for i, case in enumerate(expectations["keyword_queries"], 1)
    ]
    return QuestionSet("sample_docs", REPO / "sample_docs", index_dir, questions)


def scifact_set(work: Path, data: Path) -> QuestionSet:
    queries = {q["_id"]: q["text"] for q in read_jsonl(data / "queries.jsonl")}
    qrels = read_qrels(data / "qrels" / "train.tsv")
    questions = [
        Question(qid, "claim", queries[qid], judged)
        for qid, judged in qrels.items()
        if qid in queries
    ]
    return QuestionSet(
        "scifact-train",
        work / "docs",
        work / "index",
        questions,
        doc=lambda path: path.removesuffix(".md"),
    )


# -- measures ---------------------------------------------------------------------------------
def ndcg_at(ranked: list[str], judged: dict[str, int], k: int = 10) -> float:
    gains = sum(
        (2 ** judged.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:k])
    )
    ideal = sorted(judged.values(), reverse=True)[:k]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return gains / best if best else 0.0


def mrr_at(ranked: list[str], judged: dict[str, int], k: int = 10) -> float:
    """1 / rank of the first document with the top grade of this question (0 beyond k)."""
    top = max(judged.values())
    for i, doc in enumerate(ranked[:k]):
        if judged.get(doc, 0) == top:
            return 1.0 / (i + 1)
    return 0.0


def summarise(questions: list[Question], rankings: dict[str, list[str]]) -> dict:
    """Mean MRR@10, nDCG@10 and hit@3 (a top-grade document among the first 3) per question
    type and over all."""
    by_kind: dict[str, list[tuple[float, float, float]]] = {}
    for question in questions:
        ranked = rankings[question.qid]
        mrr = mrr_at(ranked, question.judgments)
        row = (mrr, ndcg_at(ranked, question.judgments), float(mrr >= 1 / 3))
        by_kind.setdefault(question.kind, []).append(row)
        by_kind.setdefault("all", []).append(row)
    return {
        kind: {
            "mrr@10": round(sum(r[0] for r in rows) / len(rows), 4),
            "ndcg@10": round(sum(r[1] for r in rows) / len(rows), 4),
            "hit@3": round(sum(r[2] for r in rows) / len(rows), 4),
            "n": len(rows),
        }
        for kind, rows in by_kind.items()
    }


# -- runs -------------------------------------------------------------------------------------
def open_index(qset: QuestionSet) -> Index:
    index = Index.open_existing(Settings.for_root(qset.root, qset.index_dir))
    index.embedder.load_query_path()
    return index


def run_modes(index: Index, qset: QuestionSet) -> tuple[dict, dict]:
    """Each mode of the real search, per question type; and the ranks shown per question."""
    summary, ranks = {}, {}
    for mode in MODES:
        rankings, latencies = {}, []
        for question in qset.questions:
            request = SearchRequest(question.text, mode=mode, limit=10, per_file=1)
            started = time.perf_counter()
            response = search(index, request)
            latencies.append(time.perf_counter() - started)
            rankings[question.qid] = [qset.doc(hit.path) for hit in response.results]
        latencies.sort()
        summary[mode] = summarise(qset.questions, rankings)
        summary[mode]["latency_p50_ms"] = round(1000 * latencies[len(latencies) // 2], 1)
        ranks[mode] = rankings
    return summary, ranks


def cached_legs(index: Index, qset: QuestionSet, cache: Path | None) -> dict:
    """Each question's two legs, from the cache when this index and query were seen before."""
    from explorer.core.retrieval.search import gather_legs

    key = hashlib.sha256(
        json.dumps([str(qset.index_dir), [q.text for q in qset.questions]]).encode()
    ).hexdigest()[:16]
    path = cache / f"legs-{qset.name}-{key}.pickle" if cache else None
    if path is not None and path.exists():
        return pickle.loads(path.read_bytes())
    legs = {
        q.qid: gather_legs(index, SearchRequest(q.text, limit=10, per_file=1))
        for q in qset.questions
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(legs))
    return legs


def fusion_rules() -> dict:
    """The fusion rules compared with ``--rules`` (name → ``FusionRule``)."""
    from dataclasses import replace

    from explorer.core.models import FusionKind
    from explorer.core.retrieval.fusion import AGREEMENT_RAMP, FusionRule

    calibrated, convex = FusionKind.CALIBRATED, FusionKind.CONVEX
    rules = {
        "convex w=0.7, floor (before)": FusionRule(convex, 0.7, measured=False),
        "convex w=0.7, measured": FusionRule(convex, 0.7),
        "rrf k=60": FusionRule(FusionKind.RRF),
    }
    for w in (0.5, 0.6, 0.7):
        rules[f"calibrated w={w}"] = FusionRule(calibrated, w)
    rules["calibrated w=0.6, floor"] = FusionRule(calibrated, 0.6, measured=False)
    for w in (0.5, 0.6, 0.7):
        for p in (1, 2, 3):
            rules[f"calibrated w={w} cov^{p}"] = FusionRule(calibrated, w, keyword_confidence=p)
    for w in (0.6, 0.7, 0.8):
        for p in (1, 2, 3):
            rules[f"convex w={w} cov^{p}"] = FusionRule(convex, w, keyword_confidence=p)
    for lw in (0.2, 0.3, 0.4):
        for w, p in ((0.5, 2), (0.5, 3), (0.6, 2), (0.6, 3), (0.7, 2)):
            rule = FusionRule(calibrated, w, keyword_confidence=p, lookup_weight=lw)
            rules[f"calibrated w={w} cov^{p} lookup w={lw}"] = rule
        for w, p in ((0.7, 2), (0.7, 3), (0.8, 3)):
            rule = FusionRule(convex, w, keyword_confidence=p, lookup_weight=lw)
            rules[f"convex w={w} cov^{p} lookup w={lw}"] = rule
    for ramp in ((0.4, 0.6), AGREEMENT_RAMP, (0.4, 0.8), (0.5, 0.7), (0.35, 0.7)):
        for w, p in ((0.5, 3), (0.5, 2), (0.6, 3)):
            rule = FusionRule(
                calibrated, w, keyword_confidence=p, lookup_weight=0.2, agreement=ramp
            )
            rules[f"calibrated w={w} cov^{p} agree {ramp[0]:g}-{ramp[1]:g}"] = rule
    rule = FusionRule(
        convex, 0.7, keyword_confidence=3, lookup_weight=0.2, agreement=AGREEMENT_RAMP
    )
    rules["convex w=0.7 cov^3 agree 0.4-0.7"] = rule
    # The file's cosine and BM25 next to the passage's (issue 31: entries of reference pages)
    default = FusionRule(
        calibrated, 0.5, keyword_confidence=3, lookup_weight=0.2, agreement=AGREEMENT_RAMP
    )
    for fw, fkw in ((0.0, 0.0), (0.5, 1.0), (0.25, 0.5), (0.5, 0.0), (0.0, 1.0)):
        rule = replace(default, file_weight=fw, file_keyword_weight=fkw)
        rules[f"default, file {fw:g}/{fkw:g}"] = rule
    return rules


def top_documents(qset: QuestionSet, legs: dict, rule) -> dict[str, list[str]]:
    """Each question's 10 best documents when ``rule`` fuses its ``legs``."""
    from explorer.core.retrieval.search import rank_legs

    return {
        qid: [qset.doc(path) for path in rank_legs(leg, rule)[:10]] for qid, leg in legs.items()
    }


def run_rules(index: Index, qset: QuestionSet, cache: Path | None) -> dict:
    """Every rule of :func:`fusion_rules` on the same legs, per question type."""
    rules = fusion_rules()
    legs = cached_legs(index, qset, cache)
    results = {}
    for name, rule in rules.items():
        rankings = top_documents(qset, legs, rule)
        results[name] = summarise(qset.questions, rankings)
        if qset.name == "sample_docs":  # the done-means: every best file 1st or 2nd
            worst = [_rank_of(rankings[q.qid], q.judgments) for q in qset.questions]
            results[name]["worst_rank"] = max(99 if r is None else r for r in worst)
    return results


def partial_legs(legs, share: float):
    """``legs`` as a folder of which about ``share`` of the files are embedded would give them."""
    from dataclasses import replace

    from explorer.core.retrieval.search import MEASURED

    def embedded(path: str) -> bool:
        digest = hashlib.sha256(path.encode()).digest()
        return int.from_bytes(digest[:4], "big") / 2**32 < share

    def has_vector(cid: str) -> bool:
        return embedded(legs.places[cid][0]) if cid in legs.places else False

    checked = [cid for cid, _p, _s in legs.keyword[:MEASURED]]
    return replace(
        legs,
        vector=[hit for hit in legs.vector if has_vector(hit[0])],
        returned_vectors=[hit for hit in legs.returned_vectors if has_vector(hit[0])],
        measured={cid: v for cid, v in legs.measured.items() if has_vector(cid)},
        pending={cid for cid in checked if not has_vector(cid)},
        file_similarity={p: v for p, v in legs.file_similarity.items() if embedded(p)},
    )


def run_pending(index: Index, qset: QuestionSet, cache: Path | None, shares: list[float]) -> dict:
    """The default rule, the rule before pending passages were told apart, and the keyword leg
    alone, on legs cut down to folders embedded in part (``shares``)."""
    from dataclasses import replace

    from explorer.core.retrieval.search import fusion_rule

    rule = fusion_rule(index.settings)
    rules = {"pending as average, x share^2 (now)": rule}
    rules["pending as lowest (before)"] = replace(rule, pending_meaning=False)
    for power in (1.0, 3.0):
        rules[f"vector weight x share^{power:g}"] = replace(rule, embedded_power=power)
    full = cached_legs(index, qset, cache)
    results: dict = {}
    for share in shares:
        legs = {qid: partial_legs(leg, share) for qid, leg in full.items()}
        for name, each in rules.items():
            rankings = top_documents(qset, legs, each)
            results[f"{share:.0%} embedded, {name}"] = summarise(qset.questions, rankings)
        keyword_legs = {qid: replace(leg, vector=[]) for qid, leg in legs.items()}
        keyword_only = top_documents(qset, keyword_legs, rule)
        results[f"{share:.0%} embedded, keyword leg alone"] = summarise(
            qset.questions, keyword_only
        )
    return results


def print_table(title: str, summary: dict) -> None:
    kinds = [k for k in next(iter(summary.values())) if k not in ("latency_p50_ms", "worst_rank")]
    print(f"\n{title}")
    header = "".join(f"{k + ' MRR':>16}{k + ' nDCG':>16}{'hit@3':>7}" for k in kinds)
    print(f"{'':<34}{header}")
    for name, row in summary.items():
        cells = "".join(
            f"{row[k]['mrr@10']:>16.4f}{row[k]['ndcg@10']:>16.4f}{row[k]['hit@3']:>7.2f}"
            for k in kinds
        )
        worst = f"{row['worst_rank']:>8}" if "worst_rank" in row else ""
        print(f"{name:<34}{cells}{worst}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nginx-index", type=Path, help="Index dir of the nginx docs.")
    parser.add_argument("--nginx-root", type=Path, default=Path("../shared/corpora/nginx-docs"))
    parser.add_argument("--vault-index", type=Path, help="Index dir of the Obsidian vault.")
    parser.add_argument(
        "--vault-root", type=Path, default=Path("../shared/corpora/vaultofknowledge")
    )
    parser.add_argument("--sample-index", type=Path, help="Index dir of sample_docs.")
    parser.add_argument("--scifact", type=Path, help="The --work folder of benchmarks/beir.py.")
    parser.add_argument("--scifact-data", type=Path, default=Path("../shared/bench/scifact"))
    parser.add_argument("--rules", action="store_true", help="Also compare fusion rules.")
    parser.add_argument("--cache", type=Path, help="Folder for cached legs (with --rules).")
    parser.add_argument(
        "--pending",
        type=lambda text: [float(part) for part in text.split(",")],
        help="Shares of files embedded (e.g. 0.13,0.5,1): rules on folders being embedded.",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    sets = []
    if args.sample_index:
        sets.append(sample_set(args.sample_index))
    if args.nginx_index:
        sets.append(nginx_set(args.nginx_index, args.nginx_root.resolve()))
    if args.vault_index:
        sets.append(vault_set(args.vault_index, args.vault_root.resolve()))
    if args.scifact:
        sets.append(scifact_set(args.scifact, args.scifact_data.resolve()))
    if not sets:
        parser.error("give at least one of --sample-index, --nginx-index, --vault-index, --scifact")
    report = {}
    for qset in sets:
        index = open_index(qset)
        try:
            modes, ranks = run_modes(index, qset)
            entry: dict = {"modes": modes, "questions": len(qset.questions)}
            if qset.name == "sample_docs":
                entry["hybrid_ranks"] = {
                    q.text: _rank_of(ranks["hybrid"][q.qid], q.judgments) for q in qset.questions
                }
            if args.rules:
                entry["rules"] = run_rules(index, qset, args.cache)
            if args.pending:
                entry["pending"] = run_pending(index, qset, args.cache, args.pending)
        finally:
            index.close()
        report[qset.name] = entry
        if not args.json:
            print_table(f"{qset.name}: modes ({len(qset.questions)} questions)", modes)
            if "rules" in entry:
                print_table(f"{qset.name}: fusion rules on the same legs", entry["rules"])
            if "pending" in entry:
                print_table(f"{qset.name}: folders being embedded", entry["pending"])
            if "hybrid_ranks" in entry:
                print("hybrid rank of the best file:", list(entry["hybrid_ranks"].values()))
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


def _rank_of(ranked: list[str], judged: dict[str, int]) -> int | None:
    """Rank (1-based) of the worst-placed top-grade file, None when one is not in the list."""
    places = [ranked.index(doc) + 1 if doc in ranked else None for doc in judged]
    return None if None in places else max(places)


if __name__ == "__main__":
    sys.exit(main())
