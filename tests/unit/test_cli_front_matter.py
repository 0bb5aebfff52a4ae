"""The command line with front matter: --tag and --version, filter words in the query, and
description and tags in the results, on sample_docs with the fake embedder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from tests.fakes import FakeEmbedder

SAMPLE_DOCS = Path(__file__).resolve().parents[2] / "sample_docs"
BACKUP_TAGGED = {
    "guides/backups.md",
    "runbooks/restore-from-backup.md",
    "runbooks/failed-backups.md",
    "notes/2026/01/2026-01-27-incident-review-backup-gap.md",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A copy of sample_docs indexed once by the CLI."""
    base = tmp_path_factory.mktemp("sample")
    root, index_dir = base / "docs", base / "index"
    shutil.copytree(SAMPLE_DOCS, root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        done = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
    assert done.exit_code == 0, done.output
    return root, index_dir


def search(sample, *args, found: bool = True) -> dict:
    root, index_dir = sample
    result = CliRunner().invoke(
        main, ["search", *map(str, args), str(root), "--index-dir", str(index_dir), "--json"]
    )
    assert result.exit_code == (0 if found else 1), (result.stdout, result.stderr)
    return json.loads(result.stdout)


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_tag_backup_returns_exactly_the_four_tagged_files(sample, mode):
    data = search(
        sample, "backup snapshot restore", "--tag", "backup", "--mode", mode, "--limit", 20
    )
    assert {hit["path"] for hit in data["results"]} == BACKUP_TAGGED


def test_filter_words_in_the_query_string(sample):
    typed = search(sample, "tag:backup snapshot version:1.5", "--limit", 20, "--explain")
    assert typed["explain"]["query"] == "snapshot"
    # The incident review is tagged backup but has no version: only the three with both.
    assert {hit["path"] for hit in typed["results"]} == BACKUP_TAGGED - {
        "notes/2026/01/2026-01-27-incident-review-backup-gap.md"
    }
    in_path = search(sample, "snapshot path:runbooks/", "--tag", "backup", "--limit", 20)
    assert {hit["path"] for hit in in_path["results"]} == {
        "runbooks/restore-from-backup.md",
        "runbooks/failed-backups.md",
    }


def test_version_filter(sample):
    data = search(sample, "release", "--version", "1.4", "--limit", 50, "--mode", "keyword")
    paths = {hit["path"] for hit in data["results"]}
    assert paths, data
    for path in paths:
        text = (sample[0] / path).read_text()
        assert 'version: "1.4"' in text.split("---")[1], path


def test_json_and_text_results_show_description_and_tags(sample):
    data = search(sample, "restore a snapshot", "--tag", "backup", "--limit", 1)
    hit = data["results"][0]
    front = (sample[0] / hit["path"]).read_text().split("---")[1]
    assert hit["description"] and hit["description"] in " ".join(front.split())
    assert "backup" in hit["tags"]
    root, index_dir = sample
    result = CliRunner().invoke(
        main,
        ["search", "restore", str(root), "--index-dir", str(index_dir), "--tag", "backup"],
    )
    assert result.exit_code == 0, result.stderr
    assert "tags: " in result.stdout and "backup" in result.stdout
    assert hit["description"][:40] in result.stdout


def test_a_tag_no_file_carries_is_an_empty_answer_that_says_why(sample):
    data = search(sample, "backup", "--tag", "no-such-tag", found=False)
    assert data["results"] == []
    assert data["notes"] == ["no indexed file matches tag no-such-tag"]
