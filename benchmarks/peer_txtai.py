"""txtai's side of ``benchmarks/peer.py``: runs in txtai's own environment, never explorer's.

It speaks JSON lines: the first line on stdin names the documents folder and the model folder;
it builds a txtai index of every ``*.md`` file there (id: the file name without
``.md``) with ``hybrid=True`` (BM25 + dense), exact vector search (the ``numpy`` backend, a full
scan) and ``maxlength=256`` (or loads the one a former run saved in the optional ``cache``
folder), and answers one line with the build time. Each later line is a list of queries;
the answer holds, per query, the ids best first and the seconds ``search`` took (wall clock,
and CPU time of all threads).
End of input ends it, after a last line with the peak resident memory.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def memory_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MB. Not ``ru_maxrss``: a child
    started by fork and exec inherits its parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def answer(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    started = time.perf_counter()
    from txtai import Embeddings

    setup = json.loads(sys.stdin.readline())
    documents = [
        (path.stem, path.read_text(encoding="utf-8"), None)
        for path in sorted(Path(setup["docs"]).glob("*.md"))
    ]
    cache = Path(setup["cache"]) if setup.get("cache") else None
    embeddings = Embeddings(
        path=setup["model"],
        maxlength=256,
        hybrid=True,
        backend="numpy",  # exact: every vector scored, no approximate index
    )
    loaded = time.perf_counter()
    build = {}
    if cache is not None and (cache / "build.json").exists():
        build = json.loads((cache / "build.json").read_text())
    reused = build.get("documents") == len(documents)  # the same folder, as far as it can tell
    if reused:
        embeddings.load(str(cache / "index"))
    else:
        embeddings.index(documents)
        build = {
            "documents": len(documents),
            "index_seconds": round(time.perf_counter() - loaded, 2),
            "peak_rss_mb_building": round(memory_mb("VmHWM"), 1),
        }
        if cache is not None:
            embeddings.save(str(cache / "index"))
            (cache / "build.json").write_text(json.dumps(build))
    built = time.perf_counter()
    embeddings.search("warm up the query path", setup.get("limit", 100))
    answer(
        {
            **build,
            "import_seconds": round(loaded - started, 2),
            "index_reused": reused,
            "open_seconds": round(built - loaded, 2),
            "rss_mb_after_build": round(memory_mb("VmRSS"), 1),
            "config": {k: v for k, v in embeddings.config.items() if k != "ids"},
        }
    )
    for line in sys.stdin:
        request = json.loads(line)
        results = []
        for query in request["queries"]:
            began, cpu = time.perf_counter(), time.process_time()
            hits = embeddings.search(query, request["limit"])
            seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
            ids = [str(hit[0]) for hit in hits]
            results.append({"ids": ids, "seconds": seconds, "cpu_seconds": cpu})
        answer({"results": results, "rss_mb": round(memory_mb("VmRSS"), 1)})
    answer({"peak_rss_mb": round(memory_mb("VmHWM"), 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
