"""The query encoder, before and after a change, in one run on the same index.

    git archive OLD_COMMIT | tar -x -C /tmp/before       # the code to compare with
    python benchmarks/query_encoder.py --before /tmp/before [--root sample_docs] [--runs 9]
        [--index BUILT_INDEX_OF_ROOT]

Measures, for each source tree (this checkout is "after"):
- ``explorer search QUERY ROOT --mode hybrid`` as a whole process with ``EXPLORER_NO_DAEMON=1``
  (no resident reader), the two trees taking turns run by run so both meet the same machine load;
  median and range of --runs each;
- in one process per tree: the time to open the query path (``load_query_path``) and the
  per-query ``embed_query`` latency (median and p95 over 20 queries x --repeat).

The index is built (or a copy of --index updated) once, by this checkout, which exports the
query encoder into it if the model must load; else the first search exports it, before the
timed runs. The older code ignores the export folder. The machine's load average is printed
before and after: on a shared machine, compare the two columns of one run, not runs made at
different times; the CPU seconds of each process depend less on the load than its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERIES = [
    "how do I limit the request rate",
    "install",
    "restore a backup from last week",
    "proxy_cache_valid",
    "what happens when the upstream server times out and how do I retry",
    "configure ssl certificates",
    "export search results as json",
    "keyboard shortcuts",
    "X-Request-Id header",
    "which settings does the config file take",
]
LATENCY_PROBE = """
import json, statistics, sys, time
from pathlib import Path
from explorer.core.embed.embedder import load_embedder

index_dir, repeat = Path(sys.argv[1]), int(sys.argv[2])
queries = json.loads(sys.argv[3])
embedder = load_embedder("all-MiniLM-L6-v2")
keep = getattr(embedder, "keep_query_encoder_in", None)
if keep is not None:
    keep(index_dir / "query-encoder")
start = time.perf_counter()
embedder.load_query_path()
embedder.embed_query("warm up")
opened = time.perf_counter() - start
times = []
for _ in range(repeat):
    for query in queries:
        start = time.perf_counter()
        embedder.embed_query(query)
        times.append(time.perf_counter() - start)
times.sort()
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"open_ms": opened * 1000, "median_ms": statistics.median(times) * 1000,
                  "p95_ms": times[int(0.95 * (len(times) - 1))] * 1000, "heavy": heavy}))
"""


def tree_env(tree: Path, base: dict[str, str]) -> dict[str, str]:
    return {**base, "PYTHONPATH": str(tree), "EXPLORER_NO_DAEMON": "1", "HF_HUB_OFFLINE": "1"}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def search_once(tree: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and output of one search process."""
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=tree,
        env=tree_env(tree, env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: explorer {' '.join(args)} failed: {done.stderr}")
    return seconds, children_cpu() - cpu, done.stdout


def latency(tree: Path, index_dir: Path, repeat: int, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", LATENCY_PROBE, str(index_dir), str(repeat), json.dumps(QUERIES)],
        cwd=tree,
        env=tree_env(tree, env),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree to compare with")
    parser.add_argument("--root", type=Path, default=REPO / "sample_docs")
    parser.add_argument("--index", type=Path, help="a built index of --root to copy (else built)")
    parser.add_argument("--query", default="how do I limit the request rate")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    trees = {"before": options.before.resolve(), "after": REPO}
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="query-encoder-") as temp:
        index_dir = Path(temp) / "index"
        env = {**os.environ, "EXPLORER_DATA_DIR": f"{temp}/data"}
        root = str(options.root.resolve())
        if options.index is not None:
            shutil.copytree(options.index, index_dir)
        subprocess.run(  # builds, or brings a copied index up to date (and exports)
            [sys.executable, "-m", "explorer", "index", root, "--index-dir", str(index_dir)],
            cwd=REPO,
            env=tree_env(REPO, env),
            check=True,
            capture_output=True,
        )
        args = ["search", options.query, root, "--index-dir", str(index_dir), "--mode", "hybrid"]
        for tree in trees.values():
            search_once(tree, args, env)  # page cache warm for both
        times: dict[str, list[float]] = {name: [] for name in trees}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        outputs: dict[str, set[str]] = {name: set() for name in trees}
        for _ in range(options.runs):
            for name, tree in trees.items():
                seconds, cpu_seconds, output = search_once(tree, args, env)
                times[name].append(seconds)
                cpu[name].append(cpu_seconds)
                outputs[name].add(output)
        latencies = {
            name: latency(tree, index_dir, options.repeat, env) for name, tree in trees.items()
        }
    print(f"load average at end:   {os.getloadavg()}")
    print(f"root: {root}; query: {options.query!r}; {options.runs} runs each, taking turns")
    for name in trees:
        runs = times[name]
        lat = latencies[name]
        print(
            f"{name:>6}: explorer search (hybrid, EXPLORER_NO_DAEMON=1) median "
            f"{statistics.median(runs):.3f} s (range {min(runs):.3f}-{max(runs):.3f}), "
            f"CPU median {statistics.median(cpu[name]):.3f} s; "
            f"query path opens in {lat['open_ms']:.0f} ms; embed_query median "
            f"{lat['median_ms']:.1f} ms, p95 {lat['p95_ms']:.1f} ms; heavy imports {lat['heavy']}"
        )
    same = outputs["before"] == outputs["after"]
    print(f"same output before and after: {same}")
    if not same:
        for name in trees:
            print(f"--- {name} ({len(outputs[name])} distinct outputs):")
            for output in sorted(outputs[name]):
                print(output[:600])


if __name__ == "__main__":
    main()
