"""``explorer index`` after an edit of a few files: this checkout beside a baseline, one run.

    python benchmarks/few_documents.py --root ROOT --index-dir BUILT [--baseline CHECKOUT]
        [--edits 1 4 16] [--json]

``BUILT`` is a local index of ``ROOT`` made with the real model (never changed). For each number
of edited files and each code in turn: a copy of ``ROOT`` and of ``BUILT``, the first Markdown
files of the copy (by path) given a new closing paragraph, then ``explorer index COPY --json`` as
a process running that code (``/usr/bin/time`` gives its peak RSS). Reported: wall time, chunks
embedded, the time spent loading the model, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.server_move import copy_index

CHECKOUT = Path(__file__).resolve().parents[1]


def edit(root: Path, files: int) -> list[str]:
    """Give the first ``files`` Markdown files under ``root`` a closing paragraph of their own."""
    chosen = sorted(root.rglob("*.md"))[:files]
    for number, path in enumerate(chosen):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\nA note added later, number {number}: check this page again.\n")
    return [str(path.relative_to(root)) for path in chosen]


def index_once(code: Path, root: Path, built: Path, files: int, work: Path) -> dict:
    copy_root, copy_index_dir = work / "docs", work / "index"
    shutil.copytree(root, copy_root, symlinks=True)  # copy2 keeps the mtimes: nothing else moves
    copy_index(built, copy_index_dir, copy_root)
    edit(copy_root, files)
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "EXPLORER_NO_DAEMON": "1"}
    report, wall, peak_mb = timed_index(copy_root, copy_index_dir, env)
    return {
        "code": str(code),
        "files_edited": files,
        "wall_seconds": round(wall, 2),
        "chunks_embedded": report["chunks_embedded"],
        "model_seconds": report["model_seconds"],
        "embed_seconds": report["embed_seconds"],
        "peak_rss_mb": peak_mb,
    }


def timed_index(root: Path, index_dir: Path, env: dict[str, str]) -> tuple[dict, float, float]:
    """``explorer index ROOT --index-dir INDEX_DIR --json`` as a process with ``env``: its
    report, its wall time (s) and its peak RSS (MB, from ``/usr/bin/time``)."""
    return timed_explorer(["index", str(root), "--index-dir", str(index_dir), "--json"], env)


def timed_explorer(args: list[str], env: dict[str, str]) -> tuple[dict, float, float]:
    """``explorer ARGS`` (a command answering JSON) as a process with ``env``: its answer, its
    wall time (s) and its peak RSS (MB, from ``/usr/bin/time``)."""
    command = [sys.executable, "-m", "explorer", *args]
    started = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "PEAK %M", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"explorer {args[0]} failed: {done.stderr.strip()}")
    peak = next(line for line in done.stderr.splitlines() if line.startswith("PEAK "))
    return json.loads(done.stdout), wall, round(int(peak.split()[1]) / 1024, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True, help="a local index of ROOT")
    parser.add_argument("--baseline", type=Path, help="another checkout, run beside this one")
    parser.add_argument("--edits", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    codes = [CHECKOUT, *([args.baseline.resolve()] if args.baseline else [])]
    runs = []
    for files in args.edits:
        for code in codes:
            with tempfile.TemporaryDirectory(prefix="few-documents-") as work:
                run = index_once(
                    code, args.root.resolve(), args.index_dir.resolve(), files, Path(work)
                )
            runs.append(run)
            if not args.json:
                print(
                    f"{files:3d} files edited, {run['code']}: {run['wall_seconds']} s,"
                    f" {run['chunks_embedded']} chunks embedded"
                    f" (model {run['model_seconds']:.1f} s,"
                    f" embedding {run['embed_seconds']:.1f} s),"
                    f" peak {run['peak_rss_mb']} MB",
                    flush=True,
                )
    if args.json:
        print(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
