"""An index built locally, moved to a Chroma server: this checkout beside a baseline, one run.

    python benchmarks/server_move.py --root ROOT --index-dir BUILT [--baseline CHECKOUT] [--json]

``BUILT`` is a local index of ``ROOT`` made with the real model (it is never changed: each code
moves a copy of it). For each code in turn, a fresh ``chroma run`` server starts (so neither
finds the other's vectors there), the copy is sent to it by ``explorer index ROOT --index-dir
COPY --chroma-url URL --json`` as a process with that code first on ``PYTHONPATH``, and the wall
time, the chunks embedded, moved and reused, and a semantic search of the moved
index are reported. A baseline without the move embeds every chunk again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.chroma_server import ChromaServer

CHECKOUT = Path(__file__).resolve().parents[1]
QUERY = "how do I keep my notes in sync between machines"
"""A question by meaning, asked of the moved index to show its vectors answer."""


def copy_index(built: Path, target: Path, root: Path) -> None:
    """``built`` copied to ``target``, recording ``root`` and its own local store (as the index
    it was would after being built there)."""
    shutil.copytree(built, target)
    db = sqlite3.connect(target / "index.sqlite")
    try:
        with db:
            for key, value in (
                ("root", str(root.resolve())),
                ("vector_location", str(target / "chroma")),
            ):
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    finally:
        db.close()


def explorer(code: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """``explorer ARGS`` as a process running ``code``; its wall time and result."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "EXPLORER_NO_DAEMON": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "explorer", *args], capture_output=True, text=True, env=env, cwd="/"
    )
    return time.perf_counter() - started, done


def move(code: Path, root: Path, built: Path, work: Path) -> dict:
    copy = work / "index"
    copy_index(built, copy, root)
    server = ChromaServer(work / "chroma-server")
    server.start()
    try:
        wall, done = explorer(
            code, "index", str(root), "--index-dir", str(copy), "--chroma-url", server.url, "--json"
        )
        if done.returncode != 0:
            raise SystemExit(f"explorer index failed: {done.stderr.strip()}")
        report = json.loads(done.stdout)
        _, found = explorer(
            code,
            "search",
            QUERY,
            str(root),
            "--index-dir",
            str(copy),
            "--chroma-url",
            server.url,
            "--mode",
            "semantic",
            "--json",
            "--limit",
            "3",
        )
        answer = json.loads(found.stdout) if found.returncode in (0, 1) else {"results": []}
    finally:
        server.stop()
    return {
        "code": str(code),
        "wall_seconds": round(wall, 2),
        "chunks_embedded": report["chunks_embedded"],
        "chunks_moved": report.get("chunks_moved", 0),
        "chunks_reused": report["chunks_reused"],
        "embed_seconds": report["embed_seconds"],
        "semantic_top3": [hit["path"] for hit in answer["results"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True, help="a local index of ROOT")
    parser.add_argument("--baseline", type=Path, help="another checkout to move a copy too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    codes = [CHECKOUT, *([args.baseline.resolve()] if args.baseline else [])]
    runs = []
    for code in codes:
        with tempfile.TemporaryDirectory(prefix="server-move-") as work:
            runs.append(move(code, args.root.resolve(), args.index_dir.resolve(), Path(work)))
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    for run in runs:
        print(
            f"{run['code']}: {run['wall_seconds']} s, embedded {run['chunks_embedded']}"
            f" ({run['embed_seconds']:.1f} s), moved {run['chunks_moved']},"
            f" reused {run['chunks_reused']}; semantic top 3 {run['semantic_top3']}"
        )
    if len(runs) == 2 and runs[0]["wall_seconds"]:
        ratio = runs[1]["wall_seconds"] / runs[0]["wall_seconds"]
        print(f"ratio baseline / this checkout: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
