"""End to end, with the real bundled model and real Chroma: front-matter filters, links and
check-refs on a copy of sample_docs, through the CLI as a process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_explorer

pytestmark = pytest.mark.e2e

BACKUP_TAGGED = {
    "guides/backups.md",
    "runbooks/restore-from-backup.md",
    "runbooks/failed-backups.md",
    "notes/2026/01/2026-01-27-incident-review-backup-gap.md",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, built_sample_docs):
    """A copy of the session's sample_docs and its index (tests/e2e/conftest.py), the copy
    for this module alone: a test deletes a file of it."""
    base = tmp_path_factory.mktemp("e2e-links-tags")
    root, _ = built_sample_docs.index.copy(base / "docs", base / "index")
    env = {
        **os.environ,
        "EXPLORER_INDEX_DIR": str(base / "index"),
        "EXPLORER_DATA_DIR": str(base / "data"),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("EXPLORER_MODEL", None)
    env.pop("EXPLORER_CHROMA_URL", None)
    assert built_sample_docs.report["chunks_embedded"] > 0
    return root, env


def paths_of(root: Path, env: dict, *args: str) -> set[str]:
    done = run_explorer("search", *args, root, "--json", env=env, check=True)
    return {hit["path"] for hit in json.loads(done.stdout)["results"]}


def test_tag_backup_returns_exactly_the_four_tagged_files(corpus):
    root, env = corpus
    assert paths_of(root, env, "backup", "--tag", "backup") == BACKUP_TAGGED
    # By meaning alone, with words none of them uses, the filter still holds before ranking.
    meaning = ("my archives stopped reaching the cloud", "--mode", "semantic", "--limit", "20")
    assert paths_of(root, env, *meaning, "--tag", "backup") == BACKUP_TAGGED
    typed = paths_of(root, env, "snapshot tag:backup version:1.5 path:runbooks/")
    assert typed == {"runbooks/restore-from-backup.md", "runbooks/failed-backups.md"}


def test_links_and_check_refs_find_a_deleted_link_target(corpus):
    root, env = corpus
    links = json.loads(
        run_explorer("links", root / "guides/backups.md", "--json", env=env, check=True).stdout
    )
    assert ("design/0001-why-sqlite.md", 62) in {
        (link["path"], link["line"]) for link in links["backlinks"]
    }
    assert all(link["exists"] for link in links["links"])
    clean = run_explorer("check-refs", root, env=env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "no missing references" in clean.stderr

    target = root / "guides/exporting.md"
    kept = target.read_text()
    target.unlink()
    try:
        broken = run_explorer("check-refs", root, "--json", env=env)
        assert broken.returncode == 1, broken.stderr
        missing = json.loads(broken.stdout)["missing"]
        assert missing and {link["target"] for link in missing} == {"guides/exporting.md"}
        assert ("guides/backups.md", 190) in {(link["path"], link["line"]) for link in missing}
    finally:
        target.write_text(kept)
    assert run_explorer("check-refs", root, env=env).returncode == 0
