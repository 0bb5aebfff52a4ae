"""The first ``explorer index`` of a small new folder: this checkout beside a baseline, one run.

    python benchmarks/new_folder.py --root ROOT --index-dir BUILT [--baseline CHECKOUT]
        [--files 2 8 24] [--two-folders] [--json]

``BUILT`` is a local index made with the real model (never changed): its query encoder export
stands for the one an earlier index of the user left in the cache. For each number of files, the
first Markdown files of ``ROOT`` (by path) are copied to a new folder, then ``explorer index
FOLDER --json`` runs as a process on a new index directory (``/usr/bin/time`` gives its peak
RSS), four ways: the baseline's code with an empty cache and with the export kept in it; this
checkout with an empty cache (the first index a user ever makes: it exports, and keeps the
export); this checkout with the export kept in the cache. Reported: wall time, chunks embedded,
the time spent loading the model, peak RSS, and whether the cache then holds an export.

``--two-folders``: the same files as two folders (the first half and the rest) indexed by one
``explorer index A B --json``, each in its default place, the export kept in the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.few_documents import timed_explorer, timed_index
from explorer.core.embed.export_cache import EXPORT_DIR_NAME, copy_export, read_manifest
from explorer.core.settings import DEFAULT_MODEL

CHECKOUT = Path(__file__).resolve().parents[1]


def kept_export(cache: Path) -> Path:
    """The folder of the default model's export in the cache ``cache`` (as the code under test
    names it: :func:`explorer.settings.locations.query_encoder_cache`)."""
    from explorer.settings.locations import CACHE_DIR_ENV, query_encoder_cache

    saved = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(cache)
    try:
        return query_encoder_cache(DEFAULT_MODEL)
    finally:
        if saved is None:
            os.environ.pop(CACHE_DIR_ENV)
        else:
            os.environ[CACHE_DIR_ENV] = saved


def index_folders(code: Path, folders: list[Path], work: Path, cache: Path) -> dict:
    """``explorer index FOLDER --index-dir WORK/index --json`` (one folder) or ``explorer index
    A B --json`` (each in its default place under WORK/data) as a process of ``code``."""
    env = {
        **os.environ,
        "PYTHONPATH": str(code),
        "HF_HUB_OFFLINE": "1",
        "EXPLORER_NO_DAEMON": "1",
        "EXPLORER_CACHE_DIR": str(cache),
        "EXPLORER_DATA_DIR": str(work / "data"),
    }
    if len(folders) == 1:
        report, wall, peak_mb = timed_index(folders[0], work / "index", env)
        reports = [report]
    else:
        answer, wall, peak_mb = timed_explorer(["index", *map(str, folders), "--json"], env)
        reports = answer["collections"]
    return {
        "wall_seconds": round(wall, 2),
        "chunks_embedded": sum(report["chunks_embedded"] for report in reports),
        "model_seconds": sum(report["model_seconds"] or 0 for report in reports),
        "peak_rss_mb": peak_mb,
        "cache_holds_export": read_manifest(kept_export(cache)) is not None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True, help="an index with an export")
    parser.add_argument("--baseline", type=Path, help="another checkout, run beside this one")
    parser.add_argument("--files", type=int, nargs="+", default=[2, 8, 24])
    parser.add_argument("--two-folders", action="store_true", help="A B in one command")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    built_export = args.index_dir.resolve() / EXPORT_DIR_NAME
    if read_manifest(built_export) is None:
        raise SystemExit(f"{args.index_dir} holds no query encoder export")
    notes = sorted(args.root.resolve().rglob("*.md"))
    ways = [("this, export kept", CHECKOUT, True), ("this, empty cache", CHECKOUT, False)]
    if args.baseline:
        ways.append(("baseline, export kept", args.baseline.resolve(), True))
        ways.append(("baseline, empty cache", args.baseline.resolve(), False))
    if args.two_folders:
        ways = [(name, code, seeded) for name, code, seeded in ways if seeded]
    runs = []
    for files in args.files:
        for name, code, seeded in ways:
            with tempfile.TemporaryDirectory(prefix="new-folder-") as scratch:
                work = Path(scratch)
                folders = [work / "notes", work / "more"] if args.two_folders else [work / "notes"]
                for folder in folders:
                    folder.mkdir()
                for number, note in enumerate(notes[:files]):
                    folder = folders[number * len(folders) // files]
                    shutil.copy2(note, folder / f"{number:03d}-{note.name}")
                cache = work / "cache"
                if seeded:
                    copy_export(built_export, kept_export(cache))
                run = {"way": name, "code": str(code), "files": files}
                run |= index_folders(code, folders, work, cache)
            runs.append(run)
            if not args.json:
                print(
                    f"{files:3d} files, {name:<22} {run['wall_seconds']:6.2f} s,"
                    f" {run['chunks_embedded']:4d} chunks embedded"
                    f" (model {run['model_seconds']:.1f} s), peak {run['peak_rss_mb']} MB,"
                    f" cache holds an export: {run['cache_holds_export']}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
