"""A second machine's index against a Chroma server that already holds the corpus, beside a
local cold index of the same corpus, in one run; then query latency through the server beside
the embedded store.

    python benchmarks/server.py --corpus ../shared/corpora/nginx-docs [--files N] [--json]

1. Local cold: ``explorer index`` of the corpus into a fresh index with the embedded store.
2. The server (``chroma run`` on a free 127.0.0.1 port, data in a temp dir) is filled the way
   machine A's ``explorer index --chroma-url`` fills it: with ``--seed index`` by running exactly
   that (a second cold embedding), with ``--seed copy`` (default, half the run time) by copying
   the vectors step 1 computed under the same content-addressed ids.
3. Machine B: a copy of the corpus at another path, ``explorer index --chroma-url`` into a fresh
   local index. It must embed nothing; the ratio of wall times is the target (>= 20x).
4. Warm query latency p50/p95 per mode, in process: B's index (vectors through the server)
   beside step 1's index (embedded store).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.speed import run_index, warm_latency
from tests.chroma_server import ChromaServer


def copy_vectors(root: Path, index_dir: Path, chroma_url: str) -> dict:
    """Put the local index's chunk and file vectors on the server under the same ids."""
    import numpy as np

    from explorer.core.store.chroma_server import parse_server_url
    from explorer.core.store.index import Index
    from explorer.core.store.vectors import FileVector, VectorStore, file_vector_id
    from explorer.settings.config import Settings

    started = time.perf_counter()
    index = Index.open_existing(Settings.for_root(root, index_dir))
    server = VectorStore(address=parse_server_url(chroma_url), model=index.settings.model)
    records = index.keywords.files()
    chunks = 0
    files: list[FileVector] = []
    for path, record in records.items():
        ids = index.keywords.chunk_ids(path)
        if not ids:
            continue
        vectors = index.vectors.chunk_vectors(ids)
        matrix = np.asarray([vectors[i] for i in ids], dtype=np.float32)
        server.upsert_chunks(ids, matrix, [path] * len(ids))
        file_id = file_vector_id(path, record.hash)
        file_vector = index.vectors.file_vector(file_id)
        if file_vector is not None:
            files.append(FileVector(file_id, path, file_vector))
        chunks += len(ids)
    server.upsert_files(files)  # one write per batch of files, as a sync does
    index.close()
    server.close()
    return {"chunks": chunks, "seconds": round(time.perf_counter() - started, 2)}


def subset(corpus: Path, files: int | None, target: Path) -> Path:
    """The corpus itself, or a copy of its first ``files`` files (sorted paths) in ``target``."""
    if files is None:
        return corpus
    chosen = sorted(p for p in corpus.rglob("*") if p.is_file())[:files]
    for path in chosen:
        destination = target / path.relative_to(corpus)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--files", type=int, default=None, help="only the first N files")
    parser.add_argument("--seed", choices=["copy", "index"], default="copy")
    parser.add_argument("--rounds", type=int, default=3, help="query rounds per mode")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="explorer-server-bench-") as temp:
        work = Path(temp)
        env = {**os.environ, "EXPLORER_DATA_DIR": str(work / "data"), "HF_HUB_OFFLINE": "1"}
        env.pop("EXPLORER_CHROMA_URL", None)
        machine_a = subset(args.corpus.resolve(), args.files, work / "machine-a")
        machine_b = work / "machine-b"
        shutil.copytree(machine_a, machine_b)

        local = run_index(machine_a, work / "local-index", env, None)
        server = ChromaServer(work / "chroma-data")
        server.start()
        try:
            if args.seed == "copy":
                seed = copy_vectors(machine_a, work / "local-index", server.url)
            else:
                seed = run_index(machine_a, work / "a-index", env, server.url)
            second = run_index(machine_b, work / "b-index", env, server.url)
            latency = {
                "embedded": warm_latency(machine_a, work / "local-index", None, args.rounds),
                "server": warm_latency(machine_b, work / "b-index", server.url, args.rounds),
            }
        finally:
            server.stop()

    result = {
        "corpus": str(args.corpus),
        "files": local["report"]["added"],
        "local_cold": local,
        "seed": {"how": args.seed, **seed},
        "second_machine": second,
        "speedup": round(local["wall_seconds"] / second["wall_seconds"], 1),
        "query_latency_ms": latency,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    b = second["report"]
    print(f"corpus {result['corpus']} ({result['files']} files)")
    print(f"local cold index         {local['wall_seconds']:8.1f} s")
    print(f"seed server ({args.seed})        {seed.get('seconds', seed.get('wall_seconds'))} s")
    print(
        f"second machine (server)  {second['wall_seconds']:8.1f} s  "
        f"reused {b['chunks_reused']}, embedded {b['chunks_embedded']}"
    )
    print(f"speed-up                 {result['speedup']:8.1f}x (target >= 20x)")
    for mode in ("keyword", "semantic", "hybrid"):
        e, s = latency["embedded"][mode], latency["server"][mode]
        print(
            f"{mode:8} p50/p95 ms  embedded {e['p50_ms']:.1f}/{e['p95_ms']:.1f}  "
            f"server {s['p50_ms']:.1f}/{s['p95_ms']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
