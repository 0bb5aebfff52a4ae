"""The TUI's file tree taking files added beside thousands (a checkout, a sync): this checkout
beside a baseline, each in a process of its own, one after the other.

    python benchmarks/file_tree_insert.py [--baseline CHECKOUT] [--existing 5000]
        [--added 500 2000] [--runs 3] [--json]

A folder of ``--existing`` files is shown (``FileTree.set_files``, as a manifest read does),
then ``--added`` files whose names sort among them arrive in one read, then leave in the next.
Reported: the median seconds of each step (the UI thread is held that long), and whether the
tree lists the files in the same order on both sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.side_by_side import probe_in

CHECKOUT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys, time
from types import SimpleNamespace
from explorer.core.models import FileState
from explorer.tui.widgets.file_tree import FileTree

existing, added, runs = (int(value) for value in sys.argv[1:4])
record = SimpleNamespace(state=FileState.FRESH, reason="", title="")
base = {f"notes/n-{i:05d}.md": record for i in range(existing)}
more = dict(base) | {f"notes/a-{i:05d}.md": record for i in range(added)}
adds, removes, order = [], [], []
for _ in range(runs):
    tree = FileTree("root")
    tree.set_files(base)
    started = time.perf_counter()
    tree.set_files(more)
    adds.append(time.perf_counter() - started)
    order = [child.data.path for child in tree.root.children[0].children]
    started = time.perf_counter()
    tree.set_files(base)
    removes.append(time.perf_counter() - started)
print(json.dumps({"add": adds, "remove": removes, "order": order}))
"""


def probe(code: Path, existing: int, added: int, runs: int) -> dict:
    return probe_in(code, PROBE, existing, added, runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="Another checkout, run the same way.")
    parser.add_argument("--existing", type=int, default=5000)
    parser.add_argument("--added", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    checkouts = {"this": CHECKOUT} | ({"baseline": args.baseline} if args.baseline else {})
    rows = []
    for added in args.added:
        found = {
            label: probe(code, args.existing, added, args.runs) for label, code in checkouts.items()
        }
        row: dict[str, object] = {"existing": args.existing, "added": added}
        for label, result in found.items():
            row[f"{label}_add_s"] = round(statistics.median(result["add"]), 3)
            row[f"{label}_remove_s"] = round(statistics.median(result["remove"]), 3)
        if "baseline" in found:
            row["same_order"] = found["this"]["order"] == found["baseline"]["order"]
        rows.append(row)
        if not args.json:
            print(row, flush=True)
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
