"""One-shot CLI speed: ``explorer search QUERY ROOT --mode hybrid`` as a process, median of N runs,
answered in-process (``EXPLORER_NO_DAEMON=1``) and by the resident reader, in one run.

    python benchmarks/cli_speed.py                      # sample_docs, indexed here with the model
    python benchmarks/cli_speed.py --index /work/cache/ranking-nginx \
        --root /work/shared/corpora/nginx-docs
    python benchmarks/cli_speed.py --json               # the same with `--json` output
    python benchmarks/cli_speed.py --index INDEX --mode keyword --code /tmp/base  # another checkout

``--code DIR`` runs the explorer of another checkout (the processes start in DIR, so
``python -m explorer`` imports DIR's code, and so does the reader they start): a baseline.

A given index is copied to a temporary folder first (never changed in place). Both ways must
print the same bytes; the script says so, and stops the reader it started at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "explorer"]
SERVED = b"answered by the resident reader"


def timed(args: list[str], env: dict[str, str], code: Path = REPO) -> tuple[float, bytes]:
    """Seconds one ``explorer ARGS`` process of the checkout ``code`` took, and what it
    printed."""
    start = time.perf_counter()
    done = subprocess.run([*COMMAND, *args], env=env, capture_output=True, timeout=300, cwd=code)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"explorer {' '.join(args)} failed: {done.stderr.decode()}")
    if env.get("EXPLORER_READER_DEBUG") and SERVED not in done.stderr:
        raise SystemExit(f"explorer {' '.join(args)} was not answered by the resident reader")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=REPO / "sample_docs")
    parser.add_argument("--index", type=Path, default=None, help="a built index to copy")
    parser.add_argument("--query", default="how do I limit the request rate")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="time `explorer search --json`")
    parser.add_argument("--mode", default="hybrid", help="the search mode (default hybrid)")
    parser.add_argument("--code", type=Path, default=REPO, help="the explorer checkout to run")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-speed-") as temp:
        index_dir = Path(temp) / "index"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "EXPLORER_DATA_DIR": f"{temp}/data"}
        env.pop("EXPLORER_NO_DAEMON", None)
        env.pop("PYTHONPATH", None)  # `python -m explorer` in --code imports that checkout
        if options.index is not None:
            shutil.copytree(options.index, index_dir)
        else:
            subprocess.run(
                [*COMMAND, "index", str(options.root), "--index-dir", str(index_dir)],
                env={**env, "EXPLORER_NO_DAEMON": "1"},
                cwd=options.code,
                check=True,
                capture_output=True,
            )
        args = ["search", options.query, str(options.root), "--index-dir", str(index_dir)]
        args += ["--mode", options.mode, *(["--json"] if options.json else [])]
        alone = {**env, "EXPLORER_NO_DAEMON": "1"}
        before = [timed(args, alone, options.code) for _ in range(options.runs)]
        subprocess.Popen(  # as the first hybrid call would (a keyword search starts none)
            [*COMMAND, "_reader", str(index_dir)],
            env=env,
            cwd=options.code,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        socket = index_dir / "reader.sock"
        deadline = time.monotonic() + 120
        while not socket.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        try:
            served = {**env, "EXPLORER_READER_DEBUG": "1"}
            timed(args, served, options.code)  # the reader's first answer warms it
            after = [timed(args, served, options.code) for _ in range(options.runs)]
        finally:
            pid = (index_dir / "reader.lock").read_text().strip()
            if pid:
                os.kill(int(pid), signal.SIGTERM)
        same = {out for _, out in before} == {out for _, out in after}
        median_before = statistics.median(s for s, _ in before)
        median_after = statistics.median(s for s, _ in after)
        print(f"code: {options.code.resolve()}")
        print(
            f"index: {options.index or 'built from ' + str(options.root)}; query: {options.query!r}"
        )
        shown = " ".join(args[3:]).replace(str(index_dir), "INDEX")
        print(f"runs: {options.runs} of `explorer search QUERY ROOT {shown}` each way")
        print(f"in-process (EXPLORER_NO_DAEMON=1): median {median_before:.3f} s")
        print(f"resident reader:                   median {median_after:.3f} s")
        print(f"speed-up: {median_before / median_after:.1f}x; same output: {same}")
        if not same:
            raise SystemExit("the outputs differ")


if __name__ == "__main__":
    main()
