"""Where a cold index's memory goes: resident memory sampled through each phase of a sync.

    python benchmarks/memory.py FOLDER [FOLDER...] [--work DIR] [--python-objects]
        [--embed-seconds N]

Each folder is indexed from empty with the real bundled model, in a process of its own (so
one folder's peak does not hide the next), into ``--work/NAME`` (removed first). A thread
samples the process's resident memory (``VmRSS``) every 50 ms and files each sample under the
sync's phase of the moment (scan, keywords, model, embed, ...), and the embed phase also by
tenths of its chunks; ``VmHWM`` gives the peak. ``--python-objects`` adds tracemalloc's peak of
Python allocations (slower; the model's tensors are C allocations it does not see).

``--stand-in`` embeds with ``benchmarks/scale.py``'s hashing embedder instead of the model: what
the stores and the indexer hold, without the model's share.

``--embed-seconds N`` stops embedding N seconds after its first batch (a kernel-sized tree takes
an hour): the peak then covers the scan, the keyword phase, the model and N seconds of the
embedding loop with every chunk still pending.

Prints one line per folder (chunks, wall, peak RSS, peak per phase) and, with ``--json``, the
whole series. Run it alone on the machine: another CPU-heavy job changes nothing in memory but
everything in the wall times.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(
    folder: Path,
    index_dir: Path,
    python_objects: bool,
    embed_seconds: float | None = None,
    stand_in: bool = False,
) -> dict[str, object]:
    """Index ``folder`` from empty in this process; the memory of each phase."""
    sys.path.insert(0, str(REPO))
    import tracemalloc

    if stand_in:
        import explorer.core.store.index
        from benchmarks.scale import HashingEmbedder

        embedder = HashingEmbedder()
        explorer.core.store.index.load_embedder = lambda model, precision=None: embedder

    from explorer.core.indexing.indexer import Indexer
    from explorer.core.indexing.report import Progress
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    if python_objects:
        tracemalloc.start()
    phase = {"name": "open", "tenth": 0}
    peaks: dict[str, int] = {}
    anon: dict[str, int] = {}  # of it, anonymous memory (not pages of mapped files)
    stop = threading.Event()
    cancel = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rss = _status_kb("VmRSS")
            key = phase["name"]
            if key == "embed":
                key = f"embed {phase['tenth']}/10"
            peaks[key] = max(peaks.get(key, 0), rss)
            anon[key] = max(anon.get(key, 0), _status_kb("RssAnon"))
            stop.wait(0.05)

    def progress(update: Progress) -> None:
        if embed_seconds is not None and update.phase.value == "embed" and phase["name"] != "embed":
            timer = threading.Timer(embed_seconds, cancel.set)
            timer.daemon = True  # a folder embedded sooner does not wait for it
            timer.start()
        phase["name"] = str(update.phase.value)
        if update.chunks_total:
            phase["tenth"] = min(10, 10 * update.chunks_done // update.chunks_total)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    settings = Settings.for_root(folder, index_dir)
    index = Index.open_for_writing(settings, check_model=True)
    try:
        report = Indexer(index).sync(progress=progress, cancel=cancel)
        chunks = index.keywords.counts()["chunks"]
    finally:
        index.close()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    result: dict[str, object] = {
        "folder": str(folder),
        "chunks": chunks,
        "files": report.added,
        "embedded": report.chunks_embedded,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(_status_kb("VmHWM") / 1024, 1),
        "phase_peaks_mb": {k: round(v / 1024, 1) for k, v in peaks.items()},
        "phase_anonymous_mb": {k: round(v / 1024, 1) for k, v in anon.items()},
    }
    if python_objects:
        result["python_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache/explorer-dev/memory")
    parser.add_argument("--python-objects", action="store_true")
    parser.add_argument("--embed-seconds", type=float)
    parser.add_argument("--stand-in", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        folder = args.folders[0]
        found = measure(folder, args.work, args.python_objects, args.embed_seconds, args.stand_in)
        print(json.dumps(found))
        return
    for folder in args.folders:
        index_dir = args.work / folder.resolve().name
        shutil.rmtree(index_dir, ignore_errors=True)
        command = [sys.executable, __file__, str(folder), "--work", str(index_dir), "--child"]
        if args.python_objects:
            command.append("--python-objects")
        if args.stand_in:
            command.append("--stand-in")
        if args.embed_seconds is not None:
            command += ["--embed-seconds", str(args.embed_seconds)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{folder}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if args.json:
            print(json.dumps(result))
            continue
        phases = ", ".join(f"{k} {v}" for k, v in result["phase_peaks_mb"].items())
        print(
            f"{result['folder']}: {result['chunks']} chunks ({result['embedded']} embedded), "
            f"{result['wall_s']} s, "
            f"peak RSS {result['peak_rss_mb']} MB"
            + (f", Python peak {result['python_peak_mb']} MB" if "python_peak_mb" in result else "")
            + f"\n  {phases}"
        )


if __name__ == "__main__":
    main()
