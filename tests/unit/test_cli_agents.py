"""The CLI for scripts and agents: full passages, token budgets, metadata only, paths, paging;
status that sees the disk; index --only and --rebuild; ranking settings in the config file."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.api.requests import SearchOptions
from explorer.cli import main
from explorer.core.retrieval.agent_context import ContextOptions, shape_answer
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from explorer.settings.user_config import ConfigError, load_user_config
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

LONG_BODY = " ".join(f"Telescope mirror number {n} reflects starlight." for n in range(30))
CORPUS = {
    "guides/telescope.md": "---\ntitle: Telescopes\ndescription: Choosing lenses and mirrors\n"
    "---\n# Telescope\n\nTelescope lenses and telescope mirrors.\n\n## Mirrors\n\n"
    + LONG_BODY
    + "\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
    "notes/moon.md": "# Moon\n\nThe moon through a small telescope.\n",
    "notes/planets.md": "# Planets\n\nPlanets need a telescope with a long focal length.\n",
    "src/tool.py": "def run_tool(args):\n    '''Run the tool.'''\n    return args\n",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, *args):
    return runner.invoke(main, [str(a) for a in args], catch_exceptions=True)


def ok(result):
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("explorer: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def indexed(runner, tmp_path):
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    return root, index_dir


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    base = tmp_path_factory.mktemp("agents")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        ok(CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)]))
    return root, index_dir


def search_json(runner, shared, *args):
    root, index_dir = shared
    return json.loads(
        ok(invoke(runner, "search", *args, root, "--index-dir", index_dir, "--json")).stdout
    )


# -- search: what an agent gets -------------------------------------------------------------------
def test_content_gives_each_passage_its_full_text(runner, shared):
    root, _ = shared
    args = ("telescope mirror starlight", "--per-file", "5")
    data = search_json(runner, shared, *args, "--content", "--offsets")
    top = data["results"][0]
    assert top["path"] == "guides/telescope.md"
    source = (root / "guides/telescope.md").read_text()
    for passage in top["passages"]:
        assert passage["text"] == source[passage["start_char"] : passage["end_char"]]
        assert "snippet" not in passage  # the whole passage instead of its snippet
    plain = search_json(runner, shared, *args)
    assert all("text" not in p for hit in plain["results"] for p in hit["passages"])
    snippets = [p["snippet"] for p in plain["results"][0]["passages"]]
    texts = [p["text"] for p in top["passages"]]
    assert any(len(text) > len(snippet) for text, snippet in zip(texts, snippets, strict=True))


def test_content_in_text_output_prints_the_passage(runner, shared):
    root, index_dir = shared
    out = ok(
        invoke(runner, "search", "planets focal", root, "--index-dir", index_dir, "--content")
    ).stdout
    assert "        Planets need a telescope with a long focal length." in out


def test_max_tokens_keeps_the_best_passages_and_says_what_was_cut(runner, shared):
    everything = search_json(runner, shared, "telescope", "--per-file", "5", "--limit", "10")
    passages = sum(len(hit["passages"]) for hit in everything["results"])
    budget = search_json(runner, shared, "telescope", "--per-file", "5", "--max-tokens", "40")
    report = budget["budget"]
    assert report["max_tokens"] == 40 and 0 < report["used"] <= 40
    kept = [p for hit in budget["results"] for p in hit["passages"]]
    assert report["passages_kept"] == len(kept) >= 1
    assert report["passages_kept"] + report["passages_cut"] == passages
    assert report["passages_cut"] > 0
    best = max(p["score"] for hit in everything["results"] for p in hit["passages"])
    assert kept[0]["score"] == best or max(p["score"] for p in kept) == best
    kept_paths = [hit["path"] for hit in budget["results"]]
    every_path = [hit["path"] for hit in everything["results"]]
    assert sorted(kept_paths + report["files_cut"]) == sorted(every_path)
    assert any(note.startswith("token budget 40: kept") for note in budget["notes"])


def test_a_budget_large_enough_cuts_nothing(runner, shared):
    data = search_json(runner, shared, "telescope", "--max-tokens", "100000")
    assert data["budget"]["passages_cut"] == 0 and data["budget"]["files_cut"] == []
    assert "nothing cut" in data["notes"][-1]


def test_budget_counts_with_the_index_tokenizer(shared):
    root, index_dir = shared
    index = Index.open_existing(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    try:
        response = search(index, SearchRequest("telescope", per_file=5))
        answer = shape_answer(index, response, ContextOptions(content=True, max_tokens=60))
    finally:
        index.close()
    counted = 0
    for hit in answer.response.results:
        counted += len(FakeEmbedder().token_spans(f"{hit.path} {hit.title}"))
        for passage in hit.passages:
            body = answer.texts[passage.chunk_id]
            counted += len(FakeEmbedder().token_spans(f"{passage.heading}\n{body}"))
    assert counted == answer.budget.used <= 60


def test_metadata_only(runner, shared):
    data = search_json(runner, shared, "lenses mirrors", "--metadata-only")
    top = data["results"][0]
    assert set(top) == {"path", "title", "description", "score"}  # no tags: it has none
    assert top["path"] == "guides/telescope.md"
    assert top["description"] == "Choosing lenses and mirrors"
    assert top["title"] == "Telescopes"


def test_format_paths_prints_path_tab_score(runner, shared):
    root, index_dir = shared
    out = ok(
        invoke(runner, "search", "telescope", root, "--index-dir", index_dir, "--format", "paths")
    ).stdout
    lines = out.splitlines()
    data = search_json(runner, shared, "telescope")
    assert lines == [f"{hit['path']}\t{hit['score']:.4f}" for hit in data["results"]]


def test_offset_pages_through_the_files(runner, shared):
    everything = [hit["path"] for hit in search_json(runner, shared, "telescope")["results"]]
    assert len(everything) >= 4
    first = search_json(runner, shared, "telescope", "--limit", "2")
    second = search_json(runner, shared, "telescope", "--limit", "2", "--offset", "2")
    assert [h["path"] for h in first["results"]] == everything[:2]
    assert [h["path"] for h in second["results"]] == everything[2:4]
    root, index_dir = shared
    args = ("search", "telescope", root, "--index-dir", index_dir, "--offset", "50")
    past = invoke(runner, *args, "--json")
    assert past.exit_code == 1  # nothing found on this page
    assert json.loads(past.stdout)["results"] == []
    text = invoke(runner, *args)
    assert text.exit_code == 1 and text.stdout == ""
    assert text.stderr == "note: no results for 'telescope' past the first 50 files (hybrid)\n"


def test_offset_numbers_text_results_from_the_page_start(runner, shared):
    root, index_dir = shared
    out = ok(
        invoke(runner, "search", "telescope", root, "--index-dir", index_dir, "--offset", "2")
    ).stdout
    assert " 3. " in out and " 1. " not in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--max-tokens", "0"), "--max-tokens must be at least 1"),
        (("--offset", "-1"), "--offset must be 0 or more"),
        (("--metadata-only", "--content"), "--metadata-only and --content exclude each other"),
        (("--json", "--format", "paths"), "exclude each other"),
        (("--format", "xml"), "--format"),
    ],
)
def test_bad_agent_options_are_one_line(runner, shared, args, fragment):
    root, index_dir = shared
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir, *args)
    one_line_error(result, fragment)


def test_filter_words_and_options_reach_the_request():
    settings = Settings(root=Path("/r"), index_dir=Path("/i"), default_limit=7)
    request = SearchOptions(paths=("notes/",), tags=("a",)).request(
        "stars tag:b version:2 path:guides/", settings
    )
    assert request.query == "stars"
    assert request.paths == ("notes/", "guides/")
    assert request.tags == ("a", "b") and request.versions == ("2",)
    assert request.limit == 7 and request.min_score == 0.0


# -- status sees the disk ---------------------------------------------------------------------
def status_json(runner, root, index_dir):
    return json.loads(ok(invoke(runner, "status", root, "--index-dir", index_dir, "--json")).stdout)


def test_status_counts_edited_new_and_deleted_files_as_stale(runner, indexed):
    root, index_dir = indexed
    assert status_json(runner, root, index_dir)["files"]["stale"] == 0
    stars = root / "notes/stars.md"
    stars.write_text(stars.read_text() + "\nA comet too.\n")
    os.utime(stars, ns=(stars.stat().st_atime_ns, stars.stat().st_mtime_ns + 10**9))
    write_files(root, {"notes/comet.md": "# Comet\n"})
    (root / "notes/moon.md").unlink()
    data = status_json(runner, root, index_dir)
    assert data["stale"] == {
        "files": 3,
        "edited": 1,
        "new": 1,
        "deleted": 1,
        "paths": ["notes/comet.md", "notes/moon.md", "notes/stars.md"],
    }
    assert data["files"]["stale"] == 3
    assert data["files"]["indexed"] == len(CORPUS) - 2
    text = ok(invoke(runner, "status", root, "--index-dir", index_dir)).stdout
    assert f"{len(CORPUS) - 2} indexed, 3 stale" in text
    assert "1 edited, 1 new, 1 deleted: run `explorer index" in text
    # nothing was indexed by looking: a search still finds the deleted file's old chunks
    found = search_json(runner, (root, index_dir), "moon", "--mode", "keyword")
    assert "notes/moon.md" in [hit["path"] for hit in found["results"]]
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    assert status_json(runner, root, index_dir)["files"]["stale"] == 0


def test_status_ignores_files_the_index_would_not_take(runner, indexed):
    root, index_dir = indexed
    write_files(root, {".hidden/notes.md": "# hidden\n", "image.xyz": "x"})
    assert status_json(runner, root, index_dir)["files"]["stale"] == 0


# -- index --only and --rebuild ---------------------------------------------------------------
def test_index_only_updates_just_the_named_files(runner, indexed, monkeypatch):
    root, index_dir = indexed
    write_files(root, {"notes/comet.md": "# Comet\n\nA comet tail.\n", "notes/other.md": "# x\n"})
    (root / "notes/moon.md").unlink()
    monkeypatch.chdir(root)
    result = ok(
        invoke(
            runner,
            "index",
            root,
            "--only",
            "notes/comet.md",
            root / "notes/moon.md",
            "--index-dir",
            index_dir,
        )
    )
    assert "1 added, 0 updated, 1 removed" in result.stdout
    data = status_json(runner, root, index_dir)
    assert data["stale"]["new"] == 1 and "deleted" not in data["stale"]  # other.md waits
    assert data["stale"]["paths"] == ["notes/other.md"]
    found = search_json(runner, (root, index_dir), "comet tail", "--mode", "keyword")
    assert [hit["path"] for hit in found["results"]] == ["notes/comet.md"]


def test_index_only_refuses_paths_outside_the_root(runner, indexed, tmp_path):
    root, index_dir = indexed
    outside = write_files(tmp_path / "elsewhere", {"x.md": "# x\n"}) / "x.md"
    result = invoke(runner, "index", root, "--only", outside, "--index-dir", index_dir)
    one_line_error(result, "not inside the indexed folder")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--only",), "--only needs the paths"),
        (("notes/stars.md",), "--only PATH"),
        (("--only", "--rebuild", "notes/stars.md"), "exclude each other"),
        (("--rebuild", "--keywords-only"), "drop --keywords-only"),
    ],
)
def test_index_only_usage_errors(runner, indexed, args, fragment):
    root, index_dir = indexed
    one_line_error(invoke(runner, "index", root, *args, "--index-dir", index_dir), fragment)


def test_rebuild_keeps_the_old_index_searchable_until_the_new_one_is_complete(
    runner, indexed, monkeypatch
):
    root, index_dir = indexed
    write_files(root, {"notes/comet.md": "# Comet\n\nA comet tail.\n"})
    seen_during: list[list[str]] = []
    import explorer.core.indexing.rebuild as rebuild_module

    real_sync = rebuild_module.Indexer.sync

    def sync_then_look(self, *args, **kwargs):
        report = real_sync(self, *args, **kwargs)
        # the new index is complete but not swapped in: a reader still sees the old one
        reader = Index.open_existing(Settings.for_root(root, index_dir), FakeEmbedder())
        try:
            response = search(reader, SearchRequest("comet telescope", mode="keyword", limit=20))
            seen_during.append([hit.path for hit in response.results])
        finally:
            reader.close()
        return report

    monkeypatch.setattr(rebuild_module.Indexer, "sync", sync_then_look)
    result = ok(invoke(runner, "index", root, "--rebuild", "--index-dir", index_dir))
    assert "rebuilt from scratch: 6 added, 0 updated, 0 removed" in result.stdout
    assert seen_during and "notes/comet.md" not in seen_during[0]
    assert "guides/telescope.md" in seen_during[0]
    found = search_json(runner, (root, index_dir), "comet", "--mode", "keyword")
    assert [hit["path"] for hit in found["results"]] == ["notes/comet.md"]
    semantic = search_json(runner, (root, index_dir), "comet tail", "--mode", "semantic")
    assert semantic["results"][0]["path"] == "notes/comet.md"
    data = status_json(runner, root, index_dir)
    assert data["files"] == {"indexed": 6, "stale": 0, "skipped": 0, "failed": 0}
    assert data["chunks"] == data["vectors"]
    assert not (index_dir / "rebuilding").exists()
    second = ok(invoke(runner, "index", root, "--index-dir", index_dir)).stdout
    assert "0 added, 0 updated, 0 removed, 6 unchanged" in second


def test_rebuild_refused_while_another_process_writes(runner, indexed):
    root, index_dir = indexed
    holder = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    holder.acquire_write_lock()
    try:
        result = invoke(runner, "index", root, "--rebuild", "--index-dir", index_dir)
        one_line_error(result, "being written by")
    finally:
        holder.close()


def test_a_reader_open_across_a_rebuild_sees_the_new_vectors(runner, indexed, monkeypatch):
    root, index_dir = indexed
    monkeypatch.setattr("explorer.core.store.index.READER_REFRESH_SECONDS", 0.0)
    reader = Index.open_existing(Settings.for_root(root, index_dir), FakeEmbedder())
    try:
        before = search(reader, SearchRequest("comet tail", mode="semantic"))
        assert "notes/comet.md" not in [hit.path for hit in before.results]
        write_files(root, {"notes/comet.md": "# Comet\n\nA comet tail.\n"})
        done = threading.Event()

        def run():
            ok(invoke(CliRunner(), "index", root, "--rebuild", "--index-dir", index_dir))
            done.set()

        worker = threading.Thread(target=run)
        worker.start()
        worker.join(timeout=120)
        assert done.is_set()
        after = search(reader, SearchRequest("comet tail", mode="semantic"))
        assert after.results[0].path == "notes/comet.md"
    finally:
        reader.close()


# -- ranking settings in the config file ------------------------------------------------------
def write_config(tmp_path, monkeypatch, text):
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(text)
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(folder))
    return folder / "config.toml"


def test_ranking_settings_come_from_the_config_file(tmp_path, monkeypatch):
    write_config(
        tmp_path,
        monkeypatch,
        'fusion = "rrf"\nrrf_k = 20\nsemantic_weight = 1\nlimit = 3\nmin_score = 0.25\n',
    )
    settings = Settings.for_root(tmp_path)
    assert settings.fusion == "rrf" and settings.rrf_k == 20
    assert settings.semantic_weight == 1.0 and isinstance(settings.semantic_weight, float)
    assert settings.default_limit == 3 and settings.default_min_score == 0.25


def test_config_limit_and_fusion_reach_a_search(runner, shared, tmp_path, monkeypatch):
    write_config(tmp_path, monkeypatch, 'limit = 2\nfusion = "rrf"\nrrf_k = 5\n')
    data = search_json(runner, shared, "telescope", "--explain")
    assert len(data["results"]) == 2
    assert data["explain"]["fusion"] == "reciprocal rank fusion, k=5"
    assert len(search_json(runner, shared, "telescope", "--limit", "3")["results"]) == 3


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('fusion = "average"', "fusion must be one of"),
        ("rrf_k = 0", "rrf_k must be at least 1"),
        ("semantic_weight = 1.5", "semantic_weight must be between 0 and 1"),
        ('semantic_weight = "high"', "semantic_weight must be a float"),
        ("limit = 2.5", "limit must be a int"),
        ("min_score = -0.1", "min_score must be between 0 and 1"),
        ("rank = 3", "unknown setting 'rank'"),
    ],
)
def test_bad_ranking_settings_are_one_line_naming_the_file(
    runner, shared, tmp_path, monkeypatch, text, fragment
):
    path = write_config(tmp_path, monkeypatch, text + "\n")
    with pytest.raises(ConfigError, match=fragment):
        load_user_config(path)
    root, index_dir = shared
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir)
    one_line_error(result, str(path), fragment)
