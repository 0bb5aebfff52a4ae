"""Names and labels (issue 21): a tab in a file name is shown escaped wherever a name is printed
(``--format paths`` keeps one tab per line), a 100,000-character heading is shown cut, and a
name that is not UTF-8 works in ``links`` and ``related`` whether given raw or as shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.core.safe_text import LABEL_MAX
from explorer.tui.app import make_app
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.hostile.corpus import NON_UTF8_NAME
from tests.ui.conftest import type_query, wait_for

REPO = Path(__file__).resolve().parents[2]
TAB_NAME = "tab\tname.md"
TAB_SHOWN = "tab\\x09name.md"
LONG_HEADING = "H" * 100_000


def explorer(*args: object) -> subprocess.CompletedProcess:
    """The CLI with the fake embedder (a file's vectors can be made on the spot)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fake_model_cli",
            *(a if isinstance(a, bytes) else str(a) for a in args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    root = write_files(
        tmp_path / "root",
        {
            TAB_NAME: "# Tabbed\n\nThe tabbed file on aardwolfbay, see [plain](plain.md).\n",
            "plain.md": "# Plain\n\nThe plain file on aardwolfbay links [tabbed](tab%09name.md).\n",
            "long.md": f"# {LONG_HEADING}\n\nUnder a long heading: aardwolfbay.\n",
        },
    )
    with open(os.path.join(os.fsencode(root), NON_UTF8_NAME), "w") as bad:
        bad.write("# Bad name\n\nThe badly named file on aardwolfbay links [plain](plain.md).\n")
    index_dir = tmp_path / "index"
    done = explorer("index", root, "--index-dir", index_dir, "--model", FakeEmbedder.name)
    assert done.returncode == 0, done.stderr
    return root, index_dir


def test_format_paths_has_one_tab_per_line_and_shows_the_name_escaped(indexed) -> None:
    _root, index_dir = indexed
    done = explorer(
        "search", "aardwolfbay", "--index-dir", index_dir, "--mode", "keyword",
        "--format", "paths",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert all(len(row) == 2 for row in rows), done.stdout
    assert {row[0] for row in rows} == {TAB_SHOWN, "plain.md", "long.md", "bad\\xff\\xfename.md"}
    text = explorer("search", "aardwolfbay", "--index-dir", index_dir, "--mode", "keyword")
    assert TAB_SHOWN in text.stdout and TAB_NAME not in text.stdout
    backlinks = explorer("links", indexed[0] / "plain.md", "--index-dir", index_dir)
    assert TAB_SHOWN in backlinks.stdout and "\t" not in backlinks.stdout


def test_the_name_shown_with_a_tab_escaped_can_be_given_back(indexed) -> None:
    root, index_dir = indexed
    for given in (root / TAB_NAME, root / TAB_SHOWN):
        done = explorer("links", given, "--index-dir", index_dir, "--json")
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["file"] == TAB_NAME and answer["exists"]


def test_a_long_heading_is_shown_cut(indexed) -> None:
    _root, index_dir = indexed
    done = explorer("search", "aardwolfbay", "--index-dir", index_dir, "--mode", "keyword")
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) < 2 * LABEL_MAX
    assert "H" * (LABEL_MAX - 1) + "…" in done.stdout
    related = explorer("related", indexed[0] / "plain.md", "--index-dir", index_dir)
    assert related.returncode == 0, related.stderr
    assert max(len(line) for line in related.stdout.splitlines()) < 2 * LABEL_MAX
    whole = json.loads(
        explorer(
            "search", "aardwolfbay", "--index-dir", index_dir, "--mode", "keyword", "--json"
        ).stdout
    )  # the data keeps it whole
    headings = [p["heading"] for hit in whole["results"] for p in hit["passages"]]
    assert any(len(heading) >= 100_000 for heading in headings)


@pytest.mark.parametrize("spelling", ["raw", "shown"])
def test_links_and_related_on_a_name_that_is_not_utf8(indexed, spelling: str) -> None:
    root, index_dir = indexed
    raw = os.path.join(os.fsencode(root), NON_UTF8_NAME)
    given = raw if spelling == "raw" else root / "bad\\xff\\xfename.md"
    links = explorer("links", given, "--index-dir", index_dir, "--json")
    assert links.returncode == 0, links.stderr
    answer = json.loads(links.stdout)
    assert answer["file"] == "bad\\xff\\xfename.md"
    assert [link["target"] for link in answer["links"]] == ["plain.md"]
    related = explorer("related", given, "--index-dir", index_dir, "--json")
    assert related.returncode == 0, related.stderr
    assert json.loads(related.stdout)["file"] == "bad\\xff\\xfename.md"


@pytest.mark.anyio
async def test_the_tui_shows_a_tab_in_a_name_escaped_and_a_long_heading_cut(tmp_path: Path):
    root = write_files(
        tmp_path / "root",
        {
            TAB_NAME: "# Tabbed\n\nwolverinecove\n",
            "long.md": f"# {LONG_HEADING}\n\nwolverinecove\n",
        },
    )
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: set(screen.file_tree.paths) == {TAB_NAME, "long.md"}, 20)
        assert screen.file_tree._files[TAB_NAME].label.plain == TAB_SHOWN
        await type_query(pilot, "wolverinecove")
        rows = {
            hit.path: "\n".join(getattr(line, "plain", str(line)) for line in row)
            for hit, row in zip(screen.results.hits, screen.results._rows, strict=True)
        }
        assert TAB_SHOWN in rows[TAB_NAME] and "\t" not in rows[TAB_NAME]
        assert len(rows["long.md"]) < 2 * LABEL_MAX
        assert "\t" not in app.export_screenshot()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
