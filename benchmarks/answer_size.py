"""The size of a default MCP ``search`` answer, as an agent receives it, here and at a baseline
commit, in one run.

    python benchmarks/answer_size.py                         # this tree against ee32c97^1
    python benchmarks/answer_size.py --baseline REV --json

Each side serves ``sample_docs`` with ``explorer mcp`` (the bundled model, an index built for it
in a temporary folder), and the official SDK's client calls ``search`` with nothing but a query,
for each development question. The size counted is everything the tool result carries: the text
content and the structured content, as JSON. The baseline runs from a ``git worktree`` of REV
(removed at the end) with this environment's packages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[1]
BASELINE = "ee32c97^1"
"""main before the MCP work of issue 24 (the merge of the agents branch)."""
QUESTIONS = [
    "how do I restore a backup",
    "rotate the TLS certificates",
    "why is the disk filling up",
    "configure rate limiting",
    "upgrade to a new version",
    "TERN-E1042",
]


def built_index(tree: Path, index_dir: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "index",
            str(REPO / "sample_docs"),
            "--index-dir",
            str(index_dir),
        ],
        env={**env, "PYTHONPATH": str(tree)},
        cwd=tree,
        check=True,
        capture_output=True,
        timeout=900,
    )


def answer_sizes(tree: Path, index_dir: Path, env: dict[str, str]) -> list[int]:
    """Bytes of each question's default search answer from ``tree``'s server."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "explorer", "mcp", str(REPO / "sample_docs"), "--index-dir", str(index_dir)],
        env={**env, "PYTHONPATH": str(tree)},
        cwd=str(tree),
    )

    async def run() -> list[int]:
        sizes = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for question in QUESTIONS:
                result = await session.call_tool("search", {"query": question})
                if result.is_error:
                    raise SystemExit(f"{tree}: search failed: {result.content}")
                sizes.append(len(json.dumps(carried(result), ensure_ascii=False).encode()))
        return sizes

    return anyio.run(run)


def carried(result: Any) -> dict[str, Any]:
    """What the tool result puts on the wire: its text blocks and its structured content."""
    texts = [block.text for block in result.content if getattr(block, "text", None)]
    return {"content": texts, "structuredContent": result.structured_content}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="answer-size-") as temp:
        base = Path(temp)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "EXPLORER_DATA_DIR": str(base / "data")}
        env.update(EXPLORER_NO_DAEMON="1", EXPLORER_STATE_DIR=str(base / "state"))
        old = base / "baseline"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(old), options.baseline],
            check=True,
            capture_output=True,
        )
        try:
            sides = {}
            for name, tree in (("baseline", old), ("explorer", REPO)):
                built_index(tree, base / f"index-{name}", env)
                sides[name] = answer_sizes(tree, base / f"index-{name}", env)
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                check=False,
                capture_output=True,
            )
    report = {
        "questions": QUESTIONS,
        "baseline_rev": options.baseline,
        "bytes": sides,
        "median_bytes": {name: statistics.median(sizes) for name, sizes in sides.items()},
    }
    report["ratio"] = round(
        report["median_bytes"]["explorer"] / report["median_bytes"]["baseline"], 3
    )
    if options.json:
        print(json.dumps(report, indent=2))
        return
    for name, sizes in sides.items():
        print(f"{name:9} median {statistics.median(sizes):>8,.0f} B  each: {sizes}")
    print(f"ratio explorer / baseline: {report['ratio']}")


if __name__ == "__main__":
    main()
