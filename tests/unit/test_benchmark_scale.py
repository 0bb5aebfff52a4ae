"""The scale benchmark's own CLI (``benchmarks/scale.py explorer ...``) still builds and searches.

It swaps the model for a hashing embedder by replacing ``load_embedder``; when that function
gained an argument, every file of a new 100k-chunk index failed to chunk and nothing said so
until a run produced an empty index. This runs the same command on a small folder.
"""

from __future__ import annotations

import json
import subprocess

from tests.conftest import write_files


def scale_cli(*args: object) -> dict:
    """The command the benchmark itself runs (its own ``explorer_command``), as a process."""
    from benchmarks.scale import explorer_command  # numpy and textual: only when run

    done = subprocess.run(
        explorer_command(*map(str, args)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_scale_cli_indexes_and_searches_with_its_stand_in_embedder(tmp_path):
    root = write_files(
        tmp_path / "docs",
        {
            "lanterns.md": "# Lanterns\n\nA copper lantern hangs by the harbour gate.\n",
            "orchard.md": "# Orchard\n\nApple trees in rows beside the meadow.\n",
        },
    )
    index_dir = tmp_path / "index"

    report = scale_cli("index", root, "--index-dir", index_dir, "--json")
    assert (report["added"], report["failed"]) == (2, 0)
    assert report["chunks_embedded"] >= 2

    answer = scale_cli("search", "copper lantern", root, "--index-dir", index_dir, "--json")
    assert answer["results"][0]["path"] == "lanterns.md"
