"""Live index latency: from a file written on disk to that text being searchable, real model.

    python benchmarks/live.py [--corpus sample_docs] [--edits 10] [--json]

A copy of the corpus is opened with ``LiveIndex`` (watchdog on, the bundled model) on a fresh
index, as the TUI does on a first open. While the initial embedding runs, and again once the
index is idle, a file is rewritten with a new unique word --edits times; each edit is timed from
the write until a keyword search finds the word, and until a hybrid search does. Target (issue 3):
within 2 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from explorer.core.live.writer import LiveIndex
from explorer.core.retrieval.search import SearchRequest, search
from explorer.settings.config import Settings

REPO = Path(__file__).resolve().parents[1]


def time_edits(live: LiveIndex, root: Path, edits: int, timeout: float) -> dict:
    target = sorted(p for p in root.rglob("*.md"))[0]
    original = target.read_text(encoding="utf-8")
    found = {"keyword": [], "hybrid": []}
    for _ in range(edits):
        word = "zq" + uuid.uuid4().hex[:10]
        started = time.perf_counter()
        target.write_text(original + f"\n\nMarker {word} for the latency check.\n", "utf-8")
        pending = {"keyword", "hybrid"}
        while pending and time.perf_counter() - started < timeout:
            for mode in sorted(pending):
                response = search(live.index, SearchRequest(word, mode=mode, limit=3))
                if any(hit.path.endswith(target.name) for hit in response.results):
                    found[mode].append(time.perf_counter() - started)
                    pending.discard(mode)
            time.sleep(0.02)
    target.write_text(original, encoding="utf-8")
    return {
        mode: {
            "n": len(times),
            "missed": edits - len(times),
            "median_s": round(statistics.median(times), 3) if times else None,
            "max_s": round(max(times), 3) if times else None,
        }
        for mode, times in found.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "sample_docs")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="explorer-live-") as temp:
        root = Path(temp) / "docs"
        shutil.copytree(args.corpus, root)
        events: list[str] = []
        live = LiveIndex(Settings.for_root(root, Path(temp) / "index"), events.append)
        live.start()
        deadline = time.time() + 120
        while time.time() < deadline and not any(
            getattr(e, "kind", "") == "progress" and getattr(e, "phase", "") == "embed"
            for e in events
        ):
            time.sleep(0.05)
        live.index.embedder.load_query_path()
        during = time_edits(live, root, args.edits, args.timeout)
        embedding_still_running = live.busy
        live.wait_idle(600)
        idle = time_edits(live, root, args.edits, args.timeout)
        live.stop()
    result = {
        "during_initial_embedding": during,
        "embedding_ran_throughout": embedding_still_running,
        "idle": idle,
    }
    print(json.dumps(result, indent=2) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
