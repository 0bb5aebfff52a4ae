"""The served one-shot search, this checkout against another, interleaved: ``explorer search``
as a process, answered by the resident reader, the two checkouts' runs alternating so that a
change of load on a shared machine touches both alike.

    python benchmarks/reader_client.py --index INDEX --root sample_docs --baseline /tmp/base
    python benchmarks/reader_client.py --index INDEX --root ROOT --baseline DIR --mode hybrid

INDEX is copied once per checkout (never changed in place), and each copy gets a reader started
from its checkout (``python -m explorer _reader``, run in that folder, imports its code). A
keyword search needs no model; a hybrid one needs an index built with the model. Every timed
run must have been answered by the reader (``EXPLORER_READER_DEBUG``), and both checkouts must
print the same bytes.
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


def start_reader(index_dir: Path, code: Path, env: dict[str, str]) -> None:
    """Start the reader of ``index_dir`` from the checkout ``code`` and wait for its socket."""
    subprocess.Popen(
        [*COMMAND, "_reader", str(index_dir)],
        env=env,
        cwd=code,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not (index_dir / "reader.sock").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"no reader of {index_dir} started from {code}")
        time.sleep(0.1)


def served(args: list[str], code: Path, env: dict[str, str]) -> tuple[float, bytes]:
    """Seconds one served ``explorer ARGS`` process of ``code`` took, and what it printed."""
    start = time.perf_counter()
    done = subprocess.run([*COMMAND, *args], env=env, cwd=code, capture_output=True, timeout=300)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1) or SERVED not in done.stderr:
        raise SystemExit(f"{code}: explorer {' '.join(args)} was not served: {done.stderr!r}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="a built index to copy")
    parser.add_argument("--root", type=Path, default=REPO / "sample_docs")
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout")
    parser.add_argument("--query", default="how do I limit the request rate")
    parser.add_argument("--mode", default="keyword")
    parser.add_argument("--runs", type=int, default=10)
    options = parser.parse_args()
    codes = {"baseline": options.baseline.resolve(), "this checkout": REPO}
    with tempfile.TemporaryDirectory(prefix="reader-client-") as temp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EXPLORER_NO_DAEMON")}
        env |= {"HF_HUB_OFFLINE": "1", "EXPLORER_DATA_DIR": f"{temp}/data"}
        env["EXPLORER_READER_DEBUG"] = "1"
        index_dirs = {name: Path(temp) / f"index-{n}" for n, name in enumerate(codes)}
        times: dict[str, list[float]] = {name: [] for name in codes}
        outputs: set[bytes] = set()
        try:
            for name, code in codes.items():
                shutil.copytree(options.index, index_dirs[name])
                start_reader(index_dirs[name], code, env)
            for run in range(options.runs + 1):  # the first round warms both readers
                for name, code in codes.items():
                    args = ["search", options.query, str(options.root.resolve())]
                    args += ["--index-dir", str(index_dirs[name]), "--mode", options.mode]
                    seconds, output = served(args, code, env)
                    outputs.add(output)
                    if run:
                        times[name].append(seconds)
        finally:
            for index_dir in index_dirs.values():
                lock = index_dir / "reader.lock"
                pid = lock.read_text().strip() if lock.exists() else ""
                if pid:
                    os.kill(int(pid), signal.SIGTERM)
    print(f"query: {options.query!r}, --mode {options.mode}; {options.runs} runs each, alternating")
    for name, code in codes.items():
        got = times[name]
        print(
            f"{name} ({code}): median {statistics.median(got):.3f} s "
            f"(min {min(got):.3f}, max {max(got):.3f})"
        )
    print(f"same output: {len(outputs) == 1}")
    if len(outputs) != 1:
        raise SystemExit("the outputs differ")


if __name__ == "__main__":
    main()
