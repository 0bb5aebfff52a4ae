"""What the CLI repeats and prints stays short and on its line (issue 29).

- A value the user typed (a 100,000-character ``--tag``, ``--path``, query, folder, collection
  or scope name) is cut where a note or an error repeats it: one short line, not 100 KB.
- A title made from a file name with a TAB shows the tab escaped in ``search`` and ``related``
  text, as the path already was: no raw control character in any printed field.
- ``--json`` of a search that finds nothing carries the notes text mode prints.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import invoke_cli as invoke
from tests.conftest import write_files

CORPUS = {
    "guides/backup.md": "# Backup\n\nThe backup runs nightly; restore from it.\n",
    "tab\tname.txt": "A backup note whose file name holds a tab, nightly restore.\n",
    "notes/restore.md": "# Restore\n\nRestore a backup from the nightly archive.\n",
}
HUGE = "t" * 100_000
LINE_MAX = 400
"""The longest line a note or error repeating one huge value may be (it repeats a few
hundred characters of the value, and its own words)."""


pytestmark = pytest.mark.usefixtures("fake_model")


@pytest.fixture
def root(tmp_path):
    folder = write_files(tmp_path / "root", CORPUS)
    result = invoke("index", folder)
    assert result.exit_code == 0, result.output
    return folder


def short_lines(text: str) -> None:
    assert text, "nothing printed"
    for line in text.splitlines():
        assert len(line) <= LINE_MAX, f"a line of {len(line)} characters: {line[:120]}…"


@pytest.mark.parametrize(
    "args",
    [
        ("--tag", HUGE),
        ("--version", HUGE),
        ("--path", HUGE),
        ("--exclude", HUGE, "--path", HUGE),
        ("--path", "[z-a]" + HUGE),
    ],
)
def test_a_huge_filter_value_is_cut_in_the_note_or_error(root, args):
    result = invoke("search", "backup", root, *args)
    assert result.exit_code in (1, 2), result.output
    short_lines(result.stderr)
    assert "t" * 50 in result.stderr and "…" in result.stderr
    found = invoke("search", "backup", root, "--json", *args)
    if found.exit_code == 1:
        for note in json.loads(found.stdout)["notes"]:
            assert len(note) <= LINE_MAX


@pytest.mark.parametrize(
    "args",
    [
        ("search", HUGE + " nothingzz", "--mode", "keyword"),
        ("search", "backup", "--collection", HUGE),
        ("search", "backup", "--scope", HUGE),
        ("search", f"backup scope:{HUGE}"),
        ("search", "backup", "/no/such/" + HUGE),
        ("status", "/no/such/" + HUGE),
        ("related", "/no/such/" + HUGE),
    ],
)
def test_every_echoed_value_is_cut(root, args):
    command, *rest = args
    result = invoke(command, *rest, root) if command == "search" else invoke(*args)
    assert result.exit_code in (1, 2), result.output
    short_lines(result.stderr)


def test_a_tab_in_a_title_is_escaped_in_search_and_related(root):
    found = invoke("search", "nightly backup", root, "--limit", 5)
    assert found.exit_code == 0, found.output
    line = next(line for line in found.stdout.splitlines() if "name.txt" in line)
    assert line.startswith(" ") and "\t" not in line, line
    assert r"tab\x09name" in line.split("—")[-1], line  # the title, escaped as the path is
    related = invoke("related", root / "guides/backup.md", "--limit", 5)
    assert related.exit_code == 0, related.output
    assert r"tab\x09name" in related.stdout
    assert "\t" not in related.stdout, related.stdout


def test_json_of_a_search_with_no_hits_carries_the_notes(root):
    text = invoke("search", "nothingzz", root, "--mode", "keyword")
    assert text.exit_code == 1
    notes = [line.removeprefix("note: ") for line in text.stderr.splitlines()]
    assert notes == ["no results for 'nothingzz' (keyword)"]
    data = invoke("search", "nothingzz", root, "--mode", "keyword", "--json")
    assert data.exit_code == 1 and data.stderr == ""
    assert json.loads(data.stdout)["notes"] == notes
    # with a filter and an offset, the same words either way
    args = ("nothingzz", root, "--mode", "keyword", "--path", "guides/", "--offset", "2")
    text, data = invoke("search", *args), invoke("search", *args, "--json")
    notes = [line.removeprefix("note: ") for line in text.stderr.splitlines()]
    assert notes == ["no results for 'nothingzz' in guides/ past the first 2 files (keyword)"]
    assert json.loads(data.stdout)["notes"] == notes
