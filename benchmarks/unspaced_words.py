"""Words of Thai, Lao, Khmer and Burmese found by keyword search: this checkout beside a
baseline, in one run.

    python benchmarks/unspaced_words.py [--baseline CHECKOUT] [--json]

The folder of ``benchmarks/devsets/unspaced.json`` (sentences of scripts written without spaces
between words, and words taken from inside them) is written to a temporary folder and indexed
by each checkout's ``explorer index --keywords-only`` as a process; then each word is searched
(``explorer search WORD --mode keyword --json``). Reported per checkout: words whose file comes
first, words found at all, words found in their file alone (no page matched by some of its
letters), and words whose whole spelling the snippet marks (``**word**`` in the
text output).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
DEVSET = CHECKOUT / "benchmarks" / "devsets" / "unspaced.json"


def explorer(code: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(code)},
        cwd=code,
        timeout=300,
    )


def measure(code: Path, files: dict[str, str], words: dict[str, str], work: Path) -> dict:
    root = work / "docs"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    env = {**os.environ, "EXPLORER_DATA_DIR": str(work / "data"), "EXPLORER_NO_DAEMON": "1"}
    built = explorer(code, env, "index", str(root), "--keywords-only")
    if built.returncode != 0:
        raise SystemExit(f"{code}: explorer index failed: {built.stderr.strip()}")
    first = found = marked = alone = 0
    misses = []
    for word, path in words.items():
        done = explorer(code, env, "search", word, str(root), "--mode", "keyword", "--json")
        results = json.loads(done.stdout).get("results", []) if done.returncode == 0 else []
        paths = [hit["path"] for hit in results]
        found += path in paths
        alone += paths == [path]
        if paths[:1] == [path]:
            first += 1
            shown = explorer(code, env, "search", word, str(root), "--mode", "keyword").stdout
            marked += f"**{word}**" in shown  # the text output marks a matched word so
        else:
            misses.append(word)
    return {
        "words": len(words),
        "first": first,
        "found": found,
        "alone": alone,
        "marked": marked,
        "misses": misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="Another checkout, run the same way.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    devset = json.loads(DEVSET.read_text(encoding="utf-8"))
    checkouts = {"this": CHECKOUT} | ({"baseline": args.baseline} if args.baseline else {})
    report = {}
    for label, code in checkouts.items():
        with tempfile.TemporaryDirectory(prefix="unspaced-") as work:
            report[label] = measure(code, devset["files"], devset["words"], Path(work))
        if not args.json:
            print(label, report[label], flush=True)
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
