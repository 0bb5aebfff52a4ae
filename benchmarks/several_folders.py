"""Several folders searched together against one folder holding them all (issue 25).

Two folders, the nginx docs and the Obsidian vault, are opened as two collections (each with its
own index, as ``explorer index`` builds it) and searched together
(:class:`explorer.core.retrieval.collections.Collections`). The reference is one index of one
folder holding copies of both (``UNION_ROOT/nginx-docs``, ``UNION_ROOT/vaultofknowledge``): the
collections are named after those folders, so a result of either answer is the same path.

    python benchmarks/several_folders.py --nginx-index DIR --vault-index DIR \\
        --union-index DIR --union-root DIR [--quality] [--cost --work DIR] [--json]

``--quality``: the 66 nginx development questions (``benchmarks/devsets/nginx.jsonl``) and the 18
vault ones (``vault.jsonl``), through the real search path (``--limit 10 --per-file 1``) in each
mode, over (1) the one index, (2) the collections with BM25 on their shared scale (what ships)
and (3) the collections with each index's own BM25 (what the shared scale corrects). Per set and
question type: how many questions give the one index's top 10 exactly (same files, same order),
the mean overlap of the two top 10s, and MRR@10 / nDCG@10 of each.

``--related``: related files of the nginx pages, judged by each page's own links to other
pages (link recall@5 and hit@5, as ``benchmarks/related.py`` judges them), with the nginx docs
open alone and with the vault: related files cross collections, so vault notes may take some of
a page's five places.

``--cost``: what each design costs, each measured in a process of its own (``--probe``):
opening (the indexes, then the first search: Chroma and the query encoder load), search latency
warm in process (p50 / p95 over the 84 questions, every mode; and every keystroke of every 4th
question from its third letter on, as the TUI searches while one types), and the process's
peak RSS; and
adding the vault to a window that has the nginx docs open: for collections, opening its index
(nothing is embedded: the embedder counts); for one index, merging the vault's index into a copy
of the nginx one without embedding again (``--work``: its keyword rows with their paths put under
``vaultofknowledge/`` and new chunk ids, and its vectors copied under those ids), the cheapest
way one index could take a folder indexed on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ranking, related_links as a script

from ranking import Question, mrr_at, ndcg_at  # judged paths as the one index names them

from explorer.core.indexing.report import chunk_id
from explorer.core.retrieval.collections import Collection, Collections
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndex
from explorer.core.store.vectors import FileVector, VectorStore, file_vector_id

REPO = Path(__file__).resolve().parents[1]
NGINX_ROOT = Path("/work/shared/corpora/nginx-docs")
VAULT_ROOT = Path("/work/shared/corpora/vaultofknowledge")
NGINX, VAULT = "nginx-docs", "vaultofknowledge"
MODES = ("hybrid", "keyword", "semantic")


def questions() -> dict[str, list[Question]]:
    """The two development sets, their paths put under their folder's name."""
    sets = {}
    for name, folder in (("nginx", NGINX), ("vault", VAULT)):
        rows = [
            json.loads(line)
            for line in (REPO / "benchmarks" / "devsets" / f"{name}.jsonl").read_text().splitlines()
            if line.strip()
        ]
        sets[name] = [
            Question(
                row["id"],
                row["type"],
                row["query"],
                {f"{folder}/{path}": grade for path, grade in row["judgments"].items()},
            )
            for row in rows
        ]
    return sets


# -- opening ----------------------------------------------------------------------------------
def union_index(args: argparse.Namespace) -> Index:
    return Index.open_existing(IndexSettings(root=args.union_root, index_dir=args.union_index))


def open_collections(args: argparse.Namespace, embedder: object | None = None) -> Collections:
    return Collections.open(
        [
            (NGINX, IndexSettings(root=NGINX_ROOT, index_dir=args.nginx_index)),
            (VAULT, IndexSettings(root=VAULT_ROOT, index_dir=args.vault_index)),
        ],
        embedder=embedder,  # type: ignore[arg-type]
    )


def top_files(response_results: list, qualify: bool) -> list[str]:
    return [f"{hit.collection}/{hit.path}" if qualify else hit.path for hit in response_results]


# -- exact nearest neighbours ----------------------------------------------------------------
def stored_vectors(index: Index) -> tuple[list[str], np.ndarray]:
    """Every chunk id of ``index`` and its stored vector (one row each)."""
    ids = index.keywords.chunk_ids()
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), 2000):
        found.update(index.vectors.chunk_vectors(ids[start : start + 2000]))
    kept = [cid for cid in ids if cid in found]
    return kept, np.stack([found[cid] for cid in kept]).astype(np.float32)


def exact_nearest(ids: list[str], matrix: np.ndarray, vector: np.ndarray, k: int) -> list:
    similarities = matrix @ np.asarray(vector, dtype=np.float32)
    order = np.argsort(-similarities, kind="stable")[:k]
    return [(ids[i], float(similarities[i])) for i in order]


def make_exact(index: Index) -> None:
    """Make ``index``'s vector leg exact: every stored vector compared (no HNSW)."""
    ids, matrix = stored_vectors(index)
    store = index.vectors
    store.query_chunks = lambda vector, k: exact_nearest(ids, matrix, vector, k)  # type: ignore[method-assign]


def vector_recall(union: Index, collections: Collections, k: int = 200) -> dict:
    """The share of each design's vector-leg top ``k`` that the exact top ``k`` holds (Chroma's
    HNSW is approximate), mean and worst over the questions."""
    exact_union = stored_vectors(union)
    exact_parts = {c.name: stored_vectors(c.index) for c in collections}
    recalls: dict[str, list[float]] = {"one index": [], "collections": []}
    for q in (q for qs in questions().values() for q in qs):
        vector = union.embedder.embed_query(q.text)
        truth = {cid for cid, _ in exact_nearest(*exact_union, vector, k)}
        found = {cid for cid, _ in union.vectors.query_chunks(vector, k)}
        recalls["one index"].append(len(truth & found) / k)
        truth_parts = sorted(
            (
                (name, cid, s)
                for name, part in exact_parts.items()
                for cid, s in exact_nearest(*part, vector, k)
            ),
            key=lambda hit: -hit[2],
        )[:k]
        found_parts = sorted(
            (
                (c.name, cid, s)
                for c in collections
                for cid, s in c.index.vectors.query_chunks(vector, k)
            ),
            key=lambda hit: -hit[2],
        )[:k]
        shared = {h[:2] for h in truth_parts} & {h[:2] for h in found_parts}
        recalls["collections"].append(len(shared) / k)
    return {
        design: {"mean": round(sum(values) / len(values), 4), "worst": round(min(values), 4)}
        for design, values in recalls.items()
    }


# -- quality ----------------------------------------------------------------------------------
def quality(args: argparse.Namespace) -> dict:
    union = union_index(args)
    collections = open_collections(args, union.embedder)
    sets = questions()
    out: dict = {}
    try:
        out["vector leg recall@200 of the exact nearest"] = vector_recall(union, collections)
        if args.exact_vectors:
            for index in (union, *(c.index for c in collections)):
                make_exact(index)
        for mode in MODES:
            for set_name, qs in sets.items():
                rows = []
                for q in qs:
                    request = SearchRequest(q.text, mode=mode, limit=10, per_file=1)
                    answer = search(union, request).results
                    one = top_files(answer, qualify=False)
                    shared = top_files(collections.search(request).results, qualify=True)
                    own = top_files(collections.search(request, shared_scale=False).results, True)
                    scores = {hit.path: hit.score for hit in answer}
                    rows.append((q, one, shared, own, scores))
                out.setdefault(mode, {})[set_name] = summarise(rows)
                if args.details and mode == "hybrid":
                    for q, one, shared, _own, _scores in rows:
                        if one != shared:
                            print(f"{set_name} {q.qid} {q.text!r}", file=sys.stderr)
                            for a, b in zip(one, shared, strict=False):
                                mark = " " if a == b else "*"
                                print(f"  {mark} {a[:60]:60} | {b[:60]}", file=sys.stderr)
    finally:
        collections.close()
        union.close()
    return out


def summarise(rows: list) -> dict:
    """Agreement with the one index and ranking quality, per question type and over all."""
    kinds: dict[str, list] = {}
    for row in rows:
        kinds.setdefault(row[0].kind, []).append(row)
        kinds.setdefault("all", []).append(row)
    summary = {}
    for kind, group in kinds.items():
        n = len(group)
        entry: dict = {"n": n}
        for label, column in (("shared scale", 2), ("own scales", 3)):
            entry[label] = {
                "same top 10": sum(1 for row in group if row[column] == row[1]),
                "widest swap": _widest_swap(group, column),
                "same top 10 as a set": sum(1 for row in group if set(row[column]) == set(row[1])),
                "mean overlap": round(
                    sum(len(set(row[column]) & set(row[1])) for row in group) / n, 2
                ),
            }
        for label, column in (("one index", 1), ("shared scale", 2), ("own scales", 3)):
            entry.setdefault("ndcg@10", {})[label] = round(
                sum(ndcg_at(row[column], row[0].judgments) for row in group) / n, 4
            )
            entry.setdefault("mrr@10", {})[label] = round(
                sum(mrr_at(row[column], row[0].judgments) for row in group) / n, 4
            )
        summary[kind] = entry
    return summary


def _widest_swap(rows: list, column: int) -> float | None:
    """Over the questions whose top 10 holds the one index's files in another order: the
    largest gap, in the one index's scores, between two files that traded places (None: a
    file the one index does not show in its top 10 came in)."""
    widest = 0.0
    for row in rows:
        one, other, scores = row[1], row[column], row[4]
        for mine, theirs in zip(other, one, strict=False):
            if mine == theirs:
                continue
            if mine not in scores:
                return None
            widest = max(widest, abs(scores[mine] - scores[theirs]))
    return round(widest, 4)


# -- cost: one process per design -------------------------------------------------------------
class CountingEmbedder:
    """The model, counting the documents it embeds (adding a folder must embed none)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.documents = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def embed_documents(self, texts: list[str]) -> object:
        self.documents += len(texts)
        return self._inner.embed_documents(texts)  # type: ignore[attr-defined]


def probe(args: argparse.Namespace) -> dict:
    """Open one design, search every question in every mode, and report times and RSS."""
    texts = [q.text for qs in questions().values() for q in qs]
    started = time.perf_counter()
    result: dict = {"design": args.probe}
    if args.probe == "union":
        index = union_index(args)
        run: Callable[[SearchRequest], object] = lambda request: search(index, request)  # noqa: E731
        close = index.close
    else:
        collections = open_collections(args)
        run = collections.search
        close = collections.close
    result["open_ms"] = round((time.perf_counter() - started) * 1000, 1)
    first = time.perf_counter()
    run(SearchRequest(texts[0]))
    result["first_search_ms"] = round((time.perf_counter() - first) * 1000, 1)
    result["open_to_first_answer_ms"] = round((time.perf_counter() - started) * 1000, 1)
    for mode in MODES:
        times = []
        for _round in range(args.rounds):
            for text in texts:
                begun = time.perf_counter()
                run(SearchRequest(text, mode=mode, limit=10))
                times.append((time.perf_counter() - begun) * 1000)
        times.sort()
        result[mode] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
            "n": len(times),
        }
    typed = [text[:end] for text in texts[::4] for end in range(3, len(text) + 1)]
    for mode in ("keyword", "hybrid"):
        times = []
        for text in typed:  # every keystroke of every 4th question, as the TUI searches it
            begun = time.perf_counter()
            run(SearchRequest(text, mode=mode, limit=10, prefix_last=True))
            times.append((time.perf_counter() - begun) * 1000)
        times.sort()
        result[f"typing {mode}"] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
            "n": len(times),
        }
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if args.probe == "collections":
        result["add_folder"] = add_folder(args)
    close()
    return result


def add_folder(args: argparse.Namespace) -> dict:
    """A window with the nginx docs open takes the vault, already indexed on its own."""
    nginx = Index.open_existing(IndexSettings(root=NGINX_ROOT, index_dir=args.nginx_index))
    counting = CountingEmbedder(nginx.embedder)
    window = Collections([Collection(NGINX, Index(nginx.settings, counting, read_only=True))])
    nginx.close()
    window.search(SearchRequest("client_max_body_size"))  # warm: the nginx docs answer
    started = time.perf_counter()
    vault = Index.open_existing(
        IndexSettings(root=VAULT_ROOT, index_dir=args.vault_index),
        counting,  # type: ignore[arg-type]
    )
    window.add(Collection(VAULT, vault))
    added = time.perf_counter()
    window.search(SearchRequest("lithium ion battery electrolyte"))
    searched = time.perf_counter()
    window.close()
    return {
        "open_and_add_ms": round((added - started) * 1000, 1),
        "first_search_after_ms": round((searched - added) * 1000, 1),
        "documents_embedded": counting.documents,
    }


def run_probe(args: argparse.Namespace, design: str) -> dict:
    command = [
        sys.executable,
        __file__,
        "--probe",
        design,
        "--rounds",
        str(args.rounds),
        "--nginx-index",
        str(args.nginx_index),
        "--vault-index",
        str(args.vault_index),
        "--union-index",
        str(args.union_index),
        "--union-root",
        str(args.union_root),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


# -- cost of one index: merging a folder's index into another ---------------------------------
def merge_prototype(args: argparse.Namespace) -> dict:
    """Copy the nginx index, then merge the vault's index into it without embedding again."""
    target_dir = args.work / "one-index"
    shutil.rmtree(target_dir, ignore_errors=True)
    shutil.copytree(args.nginx_index, target_dir)
    (target_dir / "write.lock").unlink(missing_ok=True)
    before = _directory_bytes(target_dir)
    prefix = f"{VAULT}/"
    started = time.perf_counter()
    keywords = KeywordIndex(target_dir / "index.sqlite")
    source = sqlite3.connect(f"file:{args.vault_index / 'index.sqlite'}?mode=ro", uri=True)
    hashes = dict(source.execute("SELECT path, hash FROM files"))
    old_chunks = source.execute("SELECT id, path, ord FROM chunks").fetchall()
    source.close()
    renamed = {old: chunk_id(prefix + path, hashes[path], ord_) for old, path, ord_ in old_chunks}
    db = keywords._db  # the prototype writes the tables directly, as one SQL transaction
    db.execute("ATTACH DATABASE ? AS src", (f"file:{args.vault_index / 'index.sqlite'}?mode=ro",))
    db.execute("CREATE TEMP TABLE renamed(old TEXT PRIMARY KEY, new TEXT)")
    db.executemany("INSERT INTO temp.renamed VALUES (?, ?)", renamed.items())
    first_new = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM chunks").fetchone()[0]
    with db:
        db.execute(
            "INSERT INTO files SELECT ? || path, size, mtime_ns, hash, state, reason, title,"
            " metadata, chunk_count, updated_at FROM src.files",
            (prefix,),
        )
        db.execute(
            "INSERT INTO chunks(id, path, ord, heading, start_line, end_line, start_char,"
            " end_char, text, embedded, page) SELECT r.new, ? || c.path, c.ord, c.heading,"
            " c.start_line, c.end_line, c.start_char, c.end_char, c.text, c.embedded, c.page"
            " FROM src.chunks c JOIN temp.renamed r ON r.old = c.id ORDER BY c.path, c.ord",
            (prefix,),
        )
        db.execute(
            "INSERT INTO chunks_fts(rowid, title, heading, body, description, tags)"
            " SELECT c.rowid, f.title, c.heading, c.text, CASE c.ord WHEN 0 THEN"
            " COALESCE(json_extract(f.metadata, '$.description'), '') ELSE '' END,"
            " CASE c.ord WHEN 0 THEN COALESCE((SELECT group_concat(value, ', ')"
            " FROM json_each(f.metadata, '$.tags')), '') ELSE '' END"
            " FROM chunks c JOIN files f ON f.path = c.path WHERE c.rowid > ?",
            (first_new,),
        )
        db.execute(
            "INSERT INTO files_fts(rowid, title, heading, body, description, tags)"
            " SELECT MIN(c.rowid), f.title, group_concat(c.heading, char(10)),"
            " group_concat(c.text, char(10)),"
            " COALESCE(json_extract(f.metadata, '$.description'), ''),"
            " COALESCE((SELECT group_concat(value, ', ') FROM json_each(f.metadata, '$.tags')), '')"
            " FROM (SELECT * FROM chunks WHERE rowid > ? ORDER BY path, ord) c"
            " JOIN files f ON f.path = c.path GROUP BY c.path",
            (first_new,),
        )
        db.execute(
            "INSERT INTO file_fields SELECT field, value, ? || path FROM src.file_fields",
            (prefix,),
        )
        db.execute(
            "INSERT INTO links(source, line, kind, raw, target, alternative)"
            " SELECT ? || source, line, kind, raw, ? || target,"
            " CASE alternative WHEN '' THEN '' ELSE ? || alternative END FROM src.links",
            (prefix, prefix, prefix),
        )
    keyword_seconds = time.perf_counter() - started
    db.execute("DETACH DATABASE src")
    keywords.close()

    vectors_started = time.perf_counter()
    source_store = VectorStore(args.vault_index / "chroma", read_only=True)
    target_store = VectorStore(target_dir / "chroma")
    old_ids = list(renamed)
    paths = {old: prefix + path for old, path, _ord in old_chunks}
    copied = 0
    for start in range(0, len(old_ids), 1000):
        batch = old_ids[start : start + 1000]
        found = source_store.chunk_vectors(batch)
        ids = [old for old in batch if old in found]
        target_store.upsert_chunks(
            [renamed[old] for old in ids],
            np.asarray([found[old] for old in ids], dtype=np.float32),
            [paths[old] for old in ids],
        )
        copied += len(ids)
    chunk_seconds = time.perf_counter() - vectors_started
    entries = [
        (file_id, path) for file_id, path in source_store.file_entries().items() if path in hashes
    ]
    found_files = source_store.file_vectors([file_id for file_id, _path in entries])
    kept = [(file_id, path) for file_id, path in entries if file_id in found_files]
    target_store.upsert_files(
        [
            FileVector(file_vector_id(prefix + path, hashes[path]), prefix + path, found_files[fid])
            for fid, path in kept
        ]
    )
    files_copied = len(kept)
    source_store.close()
    target_store.close()
    vector_seconds = time.perf_counter() - vectors_started
    check = sqlite3.connect(target_dir / "index.sqlite")
    chunks = check.execute("SELECT count(*) FROM chunks").fetchone()[0]
    check.close()
    return {
        "keyword_rows_s": round(keyword_seconds, 1),
        "vectors_s": round(vector_seconds, 1),
        "chunk_vectors_s": round(chunk_seconds, 1),
        "total_s": round(keyword_seconds + vector_seconds, 1),
        "chunks_after": chunks,
        "chunk_vectors_copied": copied,
        "file_vectors_copied": files_copied,
        "documents_embedded": 0,
        "bytes_added": _directory_bytes(target_dir) - before,
    }


def _directory_bytes(directory: Path) -> int:
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _dirs, names in os.walk(directory)
        for name in names
    )


# -- related files across collections ---------------------------------------------------------
def related(args: argparse.Namespace) -> dict:
    """Related files of nginx pages, judged by each page's own links (as
    ``benchmarks/related.py`` judges them): the nginx docs open alone, and with the vault."""
    import related_links as links_module

    both = open_collections(args)
    nginx = both.get(NGINX).index
    alone = Collections([Collection(NGINX, nginx)])
    try:
        graph = links_module.link_graph(NGINX_ROOT, nginx.keywords.paths())
        judged = {path: linked for path, linked in graph.links.items() if linked}
        judged = dict(list(judged.items())[:: args.sample])
        first = next(iter(judged))
        alone.related(NGINX, first, 5)
        both.related(NGINX, first, 5)
        report = {"pages": len(judged)}
        for label, window in (("nginx docs alone", alone), ("with the vault", both)):
            recall, hits, vault_slots, times = [], [], 0, []
            for path, linked in judged.items():
                started = time.perf_counter()
                found = window.related(NGINX, path, 5)
                times.append((time.perf_counter() - started) * 1000)
                top = {n.related.path for n in found if n.collection == NGINX}
                vault_slots += sum(1 for n in found if n.collection != NGINX)
                recall.append(len(top & linked) / len(linked))
                hits.append(1.0 if top & linked else 0.0)
            times.sort()
            report[label] = {
                "link recall@5": round(statistics.fmean(recall), 4),
                "hit@5": round(statistics.fmean(hits), 4),
                "vault notes among the top 5": vault_slots,
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
            }
        return report
    finally:
        alone._collections.clear()
        both.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nginx-index", type=Path, required=True)
    parser.add_argument("--vault-index", type=Path, required=True)
    parser.add_argument("--union-index", type=Path, required=True)
    parser.add_argument("--union-root", type=Path, required=True)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--details", action="store_true", help="print hybrid disagreements")
    parser.add_argument(
        "--exact-vectors",
        action="store_true",
        help="--quality with every vector compared (no HNSW) in both designs",
    )
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--work", type=Path, help="where --cost merges indexes (one index)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--related", action="store_true", help="related files of nginx pages")
    parser.add_argument("--sample", type=int, default=1, help="--related: every n-th page")
    parser.add_argument("--probe", choices=("union", "collections"), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args)))
        return
    report: dict = {}
    if args.quality:
        report["quality"] = quality(args)
    if args.related:
        report["related"] = related(args)
    if args.cost:
        if args.work is None:
            parser.error("--cost needs --work DIR")
        report["cost"] = {
            "one index": run_probe(args, "union"),
            "collections": run_probe(args, "collections"),
            "one index: merging an indexed folder": merge_prototype(args),
        }
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
