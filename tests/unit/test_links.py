"""Links as data: stored while indexing, outgoing links and backlinks, missing references, and
the `links` and `check-refs` commands."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.links import LinksUnavailable, file_links, missing_references
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

CORPUS = {
    "README.md": (
        "# Project\n\nStart with [install](guides/install.md) and the [FAQ][faq].\n\n"
        "![logo](assets/logo.png) and [the web](https://example.org/guides/install.md).\n\n"
        "[faq]: guides/faq.md\n"
    ),
    "guides/install.md": (
        "---\ntitle: Install\n---\n# Install\n\nBack to the [readme](../README.md#project).\n"
        "Then read [upgrading](/guides/upgrade.md) and `src/tool.py`.\n"
    ),
    "guides/faq.md": "# FAQ\n\nSee [install](install.md) and [a section](#top).\n",
    "src/tool.py": '"""The tool; documented in `guides/install.md`."""\n\nVALUE = 1\n',
    "assets/logo.png": "not really a picture\n",
}


@pytest.fixture
def built(tmp_path):
    root = write_files(tmp_path / "root", CORPUS)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    indexer = Indexer(index)
    indexer.sync(embed=False)
    yield root, index, indexer
    index.close()


def short(links) -> list[tuple]:
    return [(link.source, link.line, link.kind, link.target, link.exists) for link in links]


def test_outgoing_links_resolve_and_say_whether_targets_exist(built):
    root, index, _ = built
    found = file_links(index, "guides/install.md")
    assert found.exists
    assert short(found.outgoing) == [
        ("guides/install.md", 6, "link", "README.md", True),
        ("guides/install.md", 7, "link", "guides/upgrade.md", False),
        ("guides/install.md", 7, "mention", "src/tool.py", True),
    ]
    readme = file_links(index, "README.md")
    # The image is a file on disk the index skips (not text it reads as such): not missing.
    assert short(readme.outgoing) == [
        ("README.md", 3, "link", "guides/install.md", True),
        ("README.md", 5, "image", "assets/logo.png", True),
        ("README.md", 7, "definition", "guides/faq.md", True),
    ]


def test_backlinks_come_from_links_definitions_and_mentions(built):
    _, index, _ = built
    found = file_links(index, "guides/install.md")
    assert short(found.backlinks) == [
        ("README.md", 3, "link", "guides/install.md", True),
        ("guides/faq.md", 3, "link", "guides/install.md", True),
        ("src/tool.py", 1, "mention", "guides/install.md", True),
    ]
    assert [link.source for link in file_links(index, "guides/faq.md").backlinks] == ["README.md"]


def test_missing_references_and_a_file_that_does_not_exist(built):
    root, index, indexer = built
    check = missing_references(index)
    assert short(check.missing) == [("guides/install.md", 7, "link", "guides/upgrade.md", False)]
    assert check.files == 4
    gone = file_links(index, "guides/upgrade.md")
    assert not gone.exists and short(gone.backlinks) == short(check.missing)
    # Deleting a linked file makes its links missing at once; re-creating it mends them.
    (root / "guides/faq.md").unlink()
    indexer.sync(embed=False)
    assert ("README.md", 7, "definition", "guides/faq.md", False) in short(
        missing_references(index).missing
    )
    (root / "guides/faq.md").write_text("# FAQ again\n")
    (root / "guides/upgrade.md").write_text("# Upgrade\n")
    assert missing_references(index).missing == []


def test_links_are_replaced_when_the_file_changes_and_removed_with_it(built):
    root, index, indexer = built
    (root / "guides/install.md").write_text("# Install\n\nOnly [the faq](faq.md) now.\n")
    indexer.update_paths(["guides/install.md"])
    assert short(file_links(index, "guides/install.md").outgoing) == [
        ("guides/install.md", 3, "link", "guides/faq.md", True)
    ]
    (root / "README.md").unlink()
    indexer.update_paths(["README.md"])
    assert file_links(index, "README.md").outgoing == []
    assert [link.source for link in file_links(index, "guides/install.md").backlinks] == [
        "guides/faq.md",
        "src/tool.py",
    ]


def test_a_mention_means_the_reading_that_exists_and_prose_paths_are_not_checked(tmp_path):
    root = write_files(
        tmp_path / "root",
        {
            "docs/a.md": (
                "# A\n\n`docs/b.md` is read from the root, `b.md` is no path,\n"
                "`sub/c.md` is next to this file, `/etc/nginx/nginx.conf` and\n"
                "`lib/pkg/mod.py` are not in this tree, `docs/gone.md` is missing.\n"
            ),
            "docs/b.md": "# B\n",
            "docs/sub/c.md": "# C\n",
        },
    )
    index = Index(Settings.for_root(root, tmp_path / "index", model="fake"), FakeEmbedder())
    try:
        Indexer(index).sync(embed=False)
        found = file_links(index, "docs/a.md")
        assert [(link.raw, link.target, link.exists) for link in found.outgoing] == [
            ("docs/b.md", "docs/b.md", True),
            ("sub/c.md", "docs/sub/c.md", True),
            ("docs/gone.md", "docs/gone.md", False),
        ]
        assert [link.raw for link in missing_references(index).missing] == ["docs/gone.md"]
    finally:
        index.close()


def test_an_index_made_before_links_extracts_them_on_the_next_sync(built, tmp_path):
    root, index, _ = built
    settings = index.settings
    index.close()
    with sqlite3.connect(settings.index_dir / "index.sqlite") as db:  # as an older explorer
        db.executescript("DROP TABLE file_fields; DROP TABLE links;")
        db.execute("DELETE FROM meta WHERE key = 'links_complete'")
    reopened = Index(settings, FakeEmbedder())
    try:
        with pytest.raises(LinksUnavailable, match="run: explorer index"):
            file_links(reopened, "README.md")
        report = Indexer(reopened).sync(embed=False)
        assert report.updated == 0 and report.added == 0  # nothing re-chunked
        assert len(file_links(reopened, "README.md").outgoing) == 3
        assert len(missing_references(reopened).missing) == 1
    finally:
        reopened.close()


# -- the commands -------------------------------------------------------------------------------
@pytest.fixture
def cli(tmp_path, monkeypatch):
    """The CLI on the corpus, with the fake embedder and a private index directory."""
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "cli-index"

    def invoke(*args):
        return CliRunner().invoke(main, [*map(str, args), "--index-dir", str(index_dir)])

    return root, invoke


def test_check_refs_exits_1_with_each_missing_reference_then_0_once_fixed(cli):
    root, invoke = cli
    result = invoke("check-refs", root)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stdout.splitlines() == [
        "guides/install.md:7: missing /guides/upgrade.md → guides/upgrade.md"
    ]
    assert "1 missing reference in 1 file" in result.stderr
    data = json.loads(invoke("check-refs", root, "--json").stdout)
    assert data["missing"] == [
        {
            "path": "guides/install.md",
            "line": 7,
            "kind": "link",
            "syntax": "path",
            "raw": "/guides/upgrade.md",
            "target": "guides/upgrade.md",
            "state": "missing",
        }
    ]
    # A deleted link target is found without running `explorer index` first.
    (root / "guides/faq.md").unlink()
    result = invoke("check-refs", root)
    assert result.exit_code == 1
    assert "README.md:7: missing guides/faq.md (definition)" in result.stdout
    (root / "guides/faq.md").write_text("# FAQ\n")
    text = (root / "guides/install.md").read_text().replace("/guides/upgrade.md", "faq.md")
    (root / "guides/install.md").write_text(text)
    result = invoke("check-refs", root)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "no missing references (7 checked in 3 files)" in result.stderr


def test_links_command_text_and_json(cli):
    root, invoke = cli
    assert invoke("index", root, "--keywords-only").exit_code == 0
    result = invoke("links", root / "guides/install.md")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "guides/install.md links to 3:"
    assert "L7 → guides/upgrade.md  /guides/upgrade.md  missing" in result.stdout
    assert "  src/tool.py:1  guides/install.md  (mention)" in lines
    data = json.loads(invoke("links", root / "guides/install.md", "--json").stdout)
    assert data["path"] == "guides/install.md" and data["exists"] is True
    assert [(link["path"], link["exists"]) for link in data["links"]] == [
        ("README.md", True),
        ("guides/upgrade.md", False),
        ("src/tool.py", True),
    ]
    assert [(link["path"], link["line"]) for link in data["backlinks"]] == [
        ("README.md", 3),
        ("guides/faq.md", 3),
        ("src/tool.py", 1),
    ]
    # A file that does not exist but is linked to: its backlinks are the links to fix.
    gone = json.loads(invoke("links", root / "guides/upgrade.md", "--json").stdout)
    assert gone["exists"] is False and gone["links"] == []
    assert [link["path"] for link in gone["backlinks"]] == ["guides/install.md"]


@pytest.mark.parametrize(
    ("target", "fragment"),
    [("nothing-here.md", "no such file"), ("guides", "not a file")],
)
def test_links_command_errors_are_one_line(cli, target, fragment):
    root, invoke = cli
    assert invoke("index", root, "--keywords-only").exit_code == 0
    result = invoke("links", root / target)
    assert result.exit_code == 2
    assert result.stderr.startswith("explorer: error: ") and fragment in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_links_through_a_symlink_out_of_the_root_never_tell_what_is_outside(tmp_path):
    outside = write_files(tmp_path / "outside", {"secret.md": "# Secret\n"})
    root = write_files(
        tmp_path / "root",
        {"a.md": "# A\n\n[one](ext/secret.md), [two](ext/nothing.md), [three](b.md).\n"},
    )
    (root / "b.md").write_text("# B\n")
    (root / "ext").symlink_to(outside, target_is_directory=True)
    index = Index(Settings.for_root(root, tmp_path / "index", model="fake"), FakeEmbedder())
    try:
        Indexer(index).sync(embed=False)
        found = file_links(index, "a.md")
        # The file that exists out there and the one that does not look the same.
        assert {link.target: link.exists for link in found.outgoing} == {
            "ext/secret.md": False,
            "ext/nothing.md": False,
            "b.md": True,
        }
    finally:
        index.close()
