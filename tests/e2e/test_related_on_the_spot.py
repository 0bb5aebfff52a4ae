"""End to end: ``explorer related`` on a file that has no vectors yet, with the real model.

A copy of sample_docs is indexed for keywords only; ``related`` then embeds the file and its
keyword-nearest files on the spot (saying so in one line on stderr) and answers, while the rest
of the folder still waits for its vectors.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_explorer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "sample_docs"
EXPECTATIONS = json.loads((REPO / "tests" / "sample_docs_expectations.json").read_text())


def test_related_embeds_a_file_without_vectors_on_the_spot(tmp_path):
    root = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, root)
    env = {
        **os.environ,
        "EXPLORER_INDEX_DIR": str(tmp_path / "index"),
        "EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("EXPLORER_MODEL", None)
    env.pop("EXPLORER_CHROMA_URL", None)
    run_explorer("index", root, "--keywords-only", env=env, check=True)
    first, second = EXPECTATIONS["related_pairs"][0]

    done = run_explorer("related", root / first, "--json", "--limit", "3", env=env, check=True)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and f"{first} had no vectors yet: embedding it" in lines[0], lines
    paths = [item["path"] for item in json.loads(done.stdout)["related"]]
    assert second in paths and first not in paths

    status = json.loads(run_explorer("status", root, "--json", env=env, check=True).stdout)
    files = status["files"]
    assert files["indexed"] <= 1 + 2 * 3, "more than the file and 2 x limit candidates"
    assert files["stale"] > 0, "the rest of the folder still waits for explorer index"

    again = run_explorer("related", root / first, "--json", "--limit", "3", env=env, check=True)
    assert again.stderr == "" and json.loads(again.stdout) == json.loads(done.stdout)
