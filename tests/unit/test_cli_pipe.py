"""The CLI as a pipe: the answer on stdout, notes on stderr, an exit status a script can test
(0 found, 1 nothing found, 2 an error), a token budget that never empties the answer,
``--exclude``, and ``--json`` printed from the shared answer models."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from explorer.api.answers import (
    CheckRefsAnswer,
    IndexAnswer,
    LinksAnswer,
    RelatedAnswer,
    SearchAnswer,
    StatusAnswer,
)
from explorer.cli import main
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

LONG = " ".join(f"Telescope mirror number {n} reflects starlight." for n in range(20))
CORPUS = {
    "guides/telescope.md": "---\ntitle: Telescopes\ndescription: Lenses and mirrors\n"
    "tags: [optics]\n---\n# Telescope\n\n" + LONG + "\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n"
    "See [the guide](../guides/telescope.md) and [gone](../guides/gone.md).\n",
    "drafts/moon.md": "# Moon\n\nThe moon through a small telescope.\n",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def indexed_with(base, *flags):
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    done = invoke("index", root, "--index-dir", index_dir, *flags)
    assert done.exit_code == 0, (done.stdout, done.stderr)
    return root, index_dir


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        return indexed_with(tmp_path_factory.mktemp("pipe"))


@pytest.fixture(scope="module")
def keywords_only(tmp_path_factory):
    """An index without vectors: a hybrid search answers by keyword, with a note saying so."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        return indexed_with(tmp_path_factory.mktemp("pipe-keywords"), "--keywords-only")


def search(shared, query, *args):
    root, index_dir = shared
    return invoke("search", query, root, "--index-dir", index_dir, *args)


# -- notes go to stderr ---------------------------------------------------------------------------
NO_VECTORS = "note: no vectors yet: results are by keyword only\n"


def test_notes_go_to_stderr_and_the_results_to_stdout(keywords_only):
    done = search(keywords_only, "telescope")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == NO_VECTORS
    assert done.stdout.startswith(" 1. guides/telescope.md")
    assert "note:" not in done.stdout


def test_paths_output_keeps_its_notes_on_stderr(keywords_only):
    done = search(keywords_only, "telescope", "--format", "paths")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == NO_VECTORS
    lines = done.stdout.splitlines()
    assert lines and all(len(line.split("\t")) == 2 for line in lines)
    assert lines[0].startswith("guides/telescope.md\t")


def test_json_carries_its_notes_and_writes_nothing_else(keywords_only):
    done = search(keywords_only, "telescope", "--json")
    assert done.exit_code == 0 and done.stderr == ""
    assert json.loads(done.stdout)["notes"] == ["no vectors yet: results are by keyword only"]


# -- nothing found: say so on stderr, exit 1 ------------------------------------------------------
@pytest.mark.parametrize("output", [(), ("--format", "paths")])
def test_a_path_that_matches_no_file_says_so_and_exits_1(shared, output):
    done = search(shared, "telescope", "--path", "nowhere/", *output)
    assert done.exit_code == 1
    assert done.stdout == ""
    assert done.stderr == "note: no indexed file matches nowhere/\n"


def test_nothing_found_in_json_is_exit_1_with_the_note_in_the_answer(shared):
    done = search(shared, "telescope", "--path", "nowhere/", "--json")
    assert done.exit_code == 1 and done.stderr == ""
    data = json.loads(done.stdout)
    assert data["results"] == [] and data["notes"] == ["no indexed file matches nowhere/"]


def test_no_match_inside_a_filter_names_the_filter(shared):
    done = search(shared, "zzzqqq", "--mode", "keyword", "--path", "guides/", "--tag", "optics")
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr == "note: no results for 'zzzqqq' in guides/ and tag optics (keyword)\n"


def test_errors_stay_exit_2(shared):
    done = search(shared, "telescope", "--exclude", "[[:alpha:]]")
    assert done.exit_code == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("explorer: error: --exclude '[[:alpha:]]': ")


# -- a budget smaller than the best passage -------------------------------------------------------
def test_a_budget_below_the_best_passage_still_names_the_best_file(shared):
    everything = json.loads(search(shared, "telescope mirror", "--json").stdout)
    done = search(shared, "telescope mirror", "--json", "--max-tokens", "3")
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)
    [best] = data["results"]
    assert best == {
        "path": "guides/telescope.md",
        "title": "Telescopes",
        "description": "Lenses and mirrors",
        "tags": ["optics"],
        "score": everything["results"][0]["score"],
        "passages": [],
    }
    budget = data["budget"]
    assert budget["passages_kept"] == 0 and budget["files_kept"] == 1
    assert budget["needed"] > 3
    assert budget["files_cut"] == [hit["path"] for hit in everything["results"][1:]]
    [note] = data["notes"]
    assert note.startswith(f"token budget 3: the best result needs {budget['needed']} tokens;")
    assert "kept only its file's path and title" in note


def test_a_tiny_budget_in_text_and_paths_output(shared):
    text = search(shared, "telescope mirror", "--max-tokens", "3")
    assert text.exit_code == 0, text.stderr
    assert text.stdout.startswith(" 1. guides/telescope.md")
    assert not re.search(r"\bL\d+-\d+\b", text.stdout), text.stdout  # no passage line
    assert text.stderr.startswith("note: token budget 3: the best result needs ")
    paths = search(shared, "telescope mirror", "--max-tokens", "3", "--format", "paths")
    assert paths.stdout.startswith("guides/telescope.md\t") and len(paths.stdout.splitlines()) == 1


def test_a_tiny_budget_with_metadata_only_keeps_the_path_and_title(shared):
    done = search(shared, "telescope mirror", "--json", "--max-tokens", "2", "--metadata-only")
    data = json.loads(done.stdout)
    assert [set(hit) for hit in data["results"]] == [{"path", "title", "score"}]
    assert data["results"][0]["path"] == "guides/telescope.md"
    assert data["budget"]["needed"] > 2 and data["budget"]["files_kept"] == 1


# -- --exclude and exclude: -----------------------------------------------------------------------
def paths_of(done) -> list[str]:
    assert done.exit_code == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["results"]]


def test_exclude_leaves_files_out_before_ranking(shared):
    keyword = ("--json", "--mode", "keyword")
    every = paths_of(search(shared, "telescope", *keyword))
    assert set(every) == set(CORPUS)
    assert paths_of(search(shared, "telescope", *keyword, "--exclude", "drafts/")) == [
        path for path in every if not path.startswith("drafts/")
    ]
    repeated = search(shared, "telescope", *keyword, "--exclude", "drafts/", "--exclude", "*/s*")
    assert paths_of(repeated) == ["guides/telescope.md"]
    typed = search(shared, "telescope exclude:drafts/ exclude:guides/", *keyword, "--explain")
    assert paths_of(typed) == ["notes/stars.md"]
    assert json.loads(typed.stdout)["explain"]["query"] == "telescope"


# -- --json is the shared answer models -----------------------------------------------------------
def assert_is(model: type[BaseModel], stdout: str) -> dict:
    """``stdout`` is exactly one answer of ``model``: no field more or less, nothing else."""
    data = json.loads(stdout)
    assert model.model_validate(data).to_json() == data  # type: ignore[attr-defined]
    return data


def test_every_json_answer_is_its_model(shared, tmp_path):
    root, index_dir = shared
    found = search(shared, "telescope", "--json", "--explain", "--offsets")
    data = assert_is(SearchAnswer, found.stdout)
    passage = data["results"][0]["passages"][0]
    assert {"chunk_id", "start_char", "end_char", "highlights", "explain"} <= set(passage)
    snippet = passage["snippet"]
    assert {snippet[a:b].lower() for a, b in passage["highlights"]} == {"telescope"}
    content = search(shared, "telescope", "--json", "--content", "--max-tokens", "50")
    assert_is(SearchAnswer, content.stdout)
    related = invoke("related", root / "notes/stars.md", "--index-dir", index_dir, "--json")
    assert assert_is(RelatedAnswer, related.stdout)["path"] == "notes/stars.md"
    links = invoke("links", root / "guides/telescope.md", "--index-dir", index_dir, "--json")
    assert assert_is(LinksAnswer, links.stdout)["backlinks"][0]["path"] == "notes/stars.md"
    status = invoke("status", root, "--index-dir", index_dir, "--json")
    assert assert_is(StatusAnswer, status.stdout)["stale"] == {"files": 0}
    refs = invoke("check-refs", root, "--index-dir", index_dir, "--json")
    assert refs.exit_code == 1
    [missing] = assert_is(CheckRefsAnswer, refs.stdout)["missing"]
    assert (missing["path"], missing["target"]) == ("notes/stars.md", "guides/gone.md")
    other = write_files(tmp_path / "other", {"a.md": "# A\n"})
    built = invoke("index", other, "--index-dir", tmp_path / "other-index", "--json")
    report = assert_is(IndexAnswer, built.stdout)
    assert report["root"] == str(other) and report["added"] == 1 and report["rebuilt"] is False
