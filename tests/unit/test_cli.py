"""The command line: index, search, related and status, as text and JSON, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import EXPLORER_PROCESS, run_explorer, terminal_output, write_files
from tests.fakes import FakeEmbedder

CORPUS = {
    "guides/install.md": "# Install\n\nInstall explorer with pip.\n\n## Linux\n\n"
    "On Linux, install with apt, then pip install explorer.\n",
    "guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
    "src/tool.py": "def run_tool(args):\n    '''Run the tool.'''\n    return args\n",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    """Every command gets the fake embedder instead of loading a model."""
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def root(tmp_path):
    return write_files(tmp_path / "root", CORPUS)


@pytest.fixture
def index_dir(tmp_path):
    return tmp_path / "index"


def invoke(runner, *args):
    return runner.invoke(main, [str(a) for a in args], catch_exceptions=True)


def ok(result):
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


@pytest.fixture
def indexed(runner, root, index_dir):
    """A root indexed by the CLI, for tests that change it."""
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    return root, index_dir


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A root indexed once by the CLI, for the many tests that only read it."""
    base = tmp_path_factory.mktemp("cli")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        ok(CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)]))
    return root, index_dir


def search_json(runner, root, index_dir, *args):
    result = ok(invoke(runner, "search", *args, root, "--index-dir", index_dir, "--json"))
    return json.loads(result.stdout)


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("explorer: error: "), lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


# -- the happy path -------------------------------------------------------------------------------
def test_index_then_search_json(runner, root, index_dir):
    result = ok(invoke(runner, "index", root, "--index-dir", index_dir))
    assert f"{root}: 4 added, 0 updated, 0 removed, 0 unchanged" in result.stdout
    assert "embedded" in result.stdout

    data = search_json(runner, root, index_dir, "telescope mirrors")
    assert data["mode"] == "hybrid"
    assert "query" not in data and "explain" not in data  # not echoed without --explain
    assert data["results"], data
    top = data["results"][0]
    assert top["path"] == "guides/telescope.md"
    assert isinstance(top["score"], float) and 0 <= top["score"] <= 1
    passage = top["passages"][0]
    assert {"heading", "start_line", "end_line", "snippet"} <= set(passage)
    assert passage["heading"] == "Telescope"
    assert 1 <= passage["start_line"] <= passage["end_line"]
    assert "telescope" in passage["snippet"].lower()
    # lean by default: no ranks, ids or offsets unless asked for
    assert not {"explain", "chunk_id", "start_char", "end_char", "highlights"} & set(passage)
    paths = [hit["path"] for hit in data["results"]]
    assert len(paths) == len(set(paths))


def test_search_explain_json_has_ranks_and_filters(runner, shared):
    data = search_json(runner, *shared, "telescope", "--explain")
    explain = data["results"][0]["passages"][0]["explain"]
    assert explain["keyword_rank"] == 1
    assert isinstance(explain["vector_rank"], int)
    assert explain["fused"] > 0
    assert set(data["explain"]["filters"]) == {"keyword", "vector"}
    assert data["explain"]["query"] == "telescope"


def test_search_options_reach_the_core(runner, shared):
    data = search_json(
        runner, *shared, "telescope", "--mode", "keyword", "--path", "notes/", "--limit", "1"
    )
    assert data["mode"] == "keyword"
    assert [hit["path"] for hit in data["results"]] == ["notes/stars.md"]
    assert data["results"][0]["score"] == 1.0
    data = search_json(runner, *shared, "install explorer", "--per-file", "1")
    assert all(len(hit["passages"]) == 1 for hit in data["results"])
    everything = search_json(runner, *shared, "telescope")
    scores = sorted(p["score"] for hit in everything["results"] for p in hit["passages"])
    middle = scores[len(scores) // 2]
    data = search_json(runner, *shared, "telescope", "--min-score", str(middle))
    kept = [p["score"] for hit in data["results"] for p in hit["passages"]]
    assert kept and all(score >= middle for score in kept) and len(kept) < len(scores)
    root, index_dir = shared
    above = invoke(
        runner,
        "search",
        "telescope",
        root,
        "--index-dir",
        index_dir,
        "--min-score",
        "0.99",
        "--json",
    )
    assert above.exit_code == 1 and json.loads(above.stdout)["results"] == []  # none that high


def test_search_text_output_marks_words(runner, shared):
    root, index_dir = shared
    result = ok(invoke(runner, "search", "telescope", root, "--index-dir", index_dir, "--explain"))
    out = result.stdout
    assert " 1. guides/telescope.md" in out
    assert "**Telescope**" in out or "**telescope**" in out
    assert "keyword #1" in out
    assert "keyword leg: FTS5 BM25 over all files" in out


def test_search_with_only_index_dir_uses_the_stored_root(runner, shared):
    _root, index_dir = shared
    result = ok(invoke(runner, "search", "telescope", "--index-dir", index_dir, "--json"))
    assert json.loads(result.stdout)["results"][0]["path"] == "guides/telescope.md"


def test_search_without_matches_says_so(runner, shared):
    root, index_dir = shared
    result = invoke(runner, "search", "zzzqqq", root, "--index-dir", index_dir, "--mode", "keyword")
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr == "note: no results for 'zzzqqq' (keyword)\n"


def test_related_json(runner, shared):
    root, index_dir = shared
    result = ok(
        invoke(runner, "related", root / "guides/telescope.md", "--index-dir", index_dir, "--json")
    )
    data = json.loads(result.stdout)
    assert data["path"] == "guides/telescope.md"
    assert data["related"]
    paths = [item["path"] for item in data["related"]]
    assert "guides/telescope.md" not in paths
    assert set(paths) <= set(CORPUS)
    item = data["related"][0]
    assert 0 <= item["score"] <= 1
    for key in ("source_passage", "related_passage"):
        assert {"heading", "start_line", "end_line", "excerpt"} <= set(item[key])
        assert "page" not in item[key]  # a page only in a paged document (PDF)


def test_related_text(runner, shared):
    root, index_dir = shared
    result = ok(
        invoke(
            runner,
            "related",
            root / "notes/stars.md",
            "--root",
            root,
            "--index-dir",
            index_dir,
            "--limit",
            "2",
        )
    )
    assert result.stdout.startswith("files related to notes/stars.md:")
    assert " 1. " in result.stdout and " 3. " not in result.stdout


def test_status_json(runner, shared):
    root, index_dir = shared
    result = ok(invoke(runner, "status", root, "--index-dir", index_dir, "--json"))
    data = json.loads(result.stdout)
    assert set(data["files"]) == {"indexed", "stale", "skipped", "failed"}
    assert all(type(v) is int for v in data["files"].values())
    assert data["files"] == {"indexed": 4, "stale": 0, "skipped": 0, "failed": 0}
    assert type(data["chunks"]) is int and data["chunks"] > 0
    assert type(data["vectors"]) is int and data["vectors"] == data["chunks"]
    assert data["model"] == Settings.for_root(root).model
    assert data["needs_rebuild"] is False
    assert data["stale"] == {"files": 0}
    updated = datetime.fromisoformat(data["last_update"])  # ISO 8601, in UTC
    assert updated.utcoffset() == timedelta(0)
    assert abs(updated.timestamp() - time.time()) < 3600


def test_status_text(runner, shared):
    root, index_dir = shared
    result = ok(invoke(runner, "status", root, "--index-dir", index_dir))
    assert "4 indexed, 0 stale, 0 skipped, 0 failed" in result.stdout
    assert "rebuild     not needed" in result.stdout


def test_status_says_which_files_no_format_reads(runner, root, index_dir):
    """A folder of pictures and archives beside the notes: status names what a search cannot
    find there, the most files first; hidden and ignored files are not counted."""
    for name in ("art/a.svg", "art/b.svg", "art/logo.png", "pkg/tool.tar.gz", ".cache.xyz"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"x")
    (root / ".gitignore").write_text("secret.svg\n", encoding="utf-8")
    (root / "secret.svg").write_bytes(b"x")
    ok(invoke(runner, "index", root, "--index-dir", index_dir, "--keywords-only"))
    text = ok(invoke(runner, "status", root, "--index-dir", index_dir)).stdout
    assert "not read    2 .svg, 1 .png, 1 .tar.gz (no format reads them)" in text
    data = json.loads(ok(invoke(runner, "status", root, "--index-dir", index_dir, "--json")).stdout)
    assert data["not_read"] == {".svg": 2, ".png": 1, ".tar.gz": 1}


def test_second_index_embeds_nothing(runner, indexed):
    root, index_dir = indexed
    result = ok(invoke(runner, "index", root, "--index-dir", index_dir))
    assert "0 added, 0 updated, 0 removed, 4 unchanged" in result.stdout
    assert "nothing to embed" in result.stdout


def test_index_json_and_keywords_only(runner, root, index_dir):
    result = ok(
        invoke(runner, "index", root, "--index-dir", index_dir, "--keywords-only", "--json")
    )
    report = json.loads(result.stdout)
    assert report["added"] == 4 and report["chunks_embedded"] == 0
    status = json.loads(
        ok(invoke(runner, "status", root, "--index-dir", index_dir, "--json")).stdout
    )
    assert status["files"]["stale"] == 4 and status["vectors"] == 0
    data = search_json(runner, root, index_dir, "telescope", "--mode", "keyword")
    assert data["results"][0]["path"] == "guides/telescope.md"
    report = json.loads(
        ok(invoke(runner, "index", root, "--index-dir", index_dir, "--json")).stdout
    )
    assert report["chunks_embedded"] == status["chunks"]


def test_index_reports_skipped_files(runner, root, index_dir):
    (root / "blob.txt").write_bytes(b"\x00\x01")
    result = ok(invoke(runner, "index", root, "--index-dir", index_dir))
    assert "1 skipped (1 binary)" in result.stdout


def test_help_lists_the_commands(runner):
    result = ok(invoke(runner, "--help"))
    for command in ("index", "search", "related", "status"):
        assert command in result.stdout


# -- errors: one line on stderr, exit 2, no traceback ---------------------------------------------
def test_index_of_a_missing_folder(runner, tmp_path):
    missing = tmp_path / "missing"
    result = invoke(runner, "index", missing, "--index-dir", tmp_path / "ix")
    assert_one_line_error(result, "no such folder", str(missing))


def test_index_of_a_file(runner, root, tmp_path):
    result = invoke(runner, "index", root / "notes/stars.md", "--index-dir", tmp_path / "ix")
    assert_one_line_error(result, "not a folder")


def test_search_before_indexing_says_how_to_index(runner, root, index_dir):
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir)
    assert_one_line_error(result, "explorer index")


def test_status_before_indexing(runner, root, index_dir):
    result = invoke(runner, "status", root, "--index-dir", index_dir)
    assert_one_line_error(result, "explorer index")


def test_bad_mode(runner, shared):
    root, index_dir = shared
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir, "--mode", "x")
    assert_one_line_error(result, "--mode")


@pytest.mark.parametrize("query", ["", "   ", "?!"])
def test_empty_or_wordless_query(runner, shared, query):
    root, index_dir = shared
    result = invoke(runner, "search", query, root, "--index-dir", index_dir)
    assert_one_line_error(result, "query")


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        ("--min-score", "2", "--min-score must be between 0 and 1"),
        ("--limit", "0", "--limit and --per-file must be at least 1"),
        ("--per-file", "0", "--limit and --per-file must be at least 1"),
        ("--limit", "many", "--limit"),
    ],
)
def test_bad_numbers(runner, shared, option, value, fragment):
    root, index_dir = shared
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir, option, value)
    assert_one_line_error(result, fragment)


def test_missing_query_argument(runner):
    assert_one_line_error(invoke(runner, "search"), "QUERY")


def test_unknown_option(runner, shared):
    root, index_dir = shared
    result = invoke(runner, "status", root, "--index-dir", index_dir, "--bogus")
    assert_one_line_error(result, "--bogus")


def test_related_on_a_file_outside_the_root(runner, shared, tmp_path):
    root, index_dir = shared
    outside = write_files(tmp_path / "elsewhere", {"other.md": "# Other\n"}) / "other.md"
    result = invoke(runner, "related", outside, "--root", root, "--index-dir", index_dir)
    assert_one_line_error(result, "not inside the indexed folder")


def test_related_on_a_missing_file(runner, shared):
    root, index_dir = shared
    result = invoke(runner, "related", root / "nope.md", "--index-dir", index_dir)
    assert_one_line_error(result, "no such file")


def test_related_on_an_unindexed_file(runner, indexed):
    root, index_dir = indexed
    write_files(root, {"late.md": "# Late\n\nwritten after indexing\n"})
    result = invoke(runner, "related", root / "late.md", "--index-dir", index_dir)
    assert_one_line_error(result, "late.md is not in the index")


def test_index_while_another_writer_holds_the_lock(runner, shared):
    root, index_dir = shared
    holder = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    holder.acquire_write_lock()
    try:
        result = invoke(runner, "index", root, "--index-dir", index_dir)
        assert_one_line_error(
            result, "being written by explorer index (pid", "wait for it to finish"
        )
    finally:
        holder.close()


def test_unexpected_failure_is_one_line_too(runner, shared, monkeypatch):
    root, index_dir = shared

    def broken(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("explorer.core.retrieval.search.search", broken)
    result = invoke(runner, "search", "telescope", root, "--index-dir", index_dir)
    assert_one_line_error(result, "RuntimeError: disk on fire", "EXPLORER_DEBUG")


def test_related_finds_the_root_from_the_default_index_location(runner, root):
    """Without --root or --index-dir, `related` finds the folder whose index holds the file."""
    ok(invoke(runner, "index", root))
    result = ok(invoke(runner, "related", root / "notes/stars.md", "--json"))
    data = json.loads(result.stdout)
    assert data["path"] == "notes/stars.md"
    assert data["related"]


def test_a_process_writes_the_whole_answer_before_it_leaves(runner, shared):
    """Run as a process, read-only commands end without the interpreter's teardown; what
    they print must still arrive whole and match the in-process answer."""
    root, index_dir = shared
    for args in (
        ("search", "telescope", root, "--mode", "keyword", "--index-dir", index_dir, "--json"),
        ("search", "telescope", root, "--mode", "keyword", "--index-dir", index_dir, "--explain"),
        ("status", root, "--index-dir", index_dir, "--json"),
    ):
        done = run_explorer(*args, timeout=120)
        assert done.returncode == 0, done.stderr
        in_process = ok(invoke(runner, *args)).stdout
        if args[0] == "status":  # the store's size on disk may move between the two runs
            in_process, from_process = json.loads(in_process), json.loads(done.stdout)
            for answer in (in_process, from_process):
                answer.pop("store_bytes")
            assert from_process == in_process
        else:
            assert done.stdout == in_process
            assert "telescope" in done.stdout


def test_a_process_whose_reader_leaves_early_stops_quietly(shared):
    root, index_dir = shared
    command = [
        *EXPLORER_PROCESS,
        "search",
        "telescope",
        str(root),
        "--mode",
        "keyword",
        "--index-dir",
        str(index_dir),
        "--json",
        "--explain",
    ]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = subprocess.run(command, stdout=reader.stdin, stderr=subprocess.PIPE, text=True)
    reader.stdin.close()
    reader.wait()
    assert "Traceback" not in writer.stderr
    assert writer.returncode in (0, 141)


# -- untrusted text never reaches the terminal raw ------------------------------------------------
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A folder whose file name, title and text carry escape sequences, indexed once."""
    from tests.escapes import write_hostile

    base = tmp_path_factory.mktemp("hostile")
    root, index_dir = write_hostile(base / "root"), base / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        ok(CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)]))
    return root, index_dir


def test_text_output_shows_escape_sequences_escaped(runner, hostile):
    from tests.escapes import EVIL_PATH, KEPT, WORD, assert_no_raw_controls

    root, index_dir = hostile
    out = ok(invoke(runner, "search", WORD, root, "--index-dir", index_dir)).stdout
    assert_no_raw_controls(out)
    # The file is there, its name readable with the sequences spelled out.
    assert r"notes/evil\x1b]0;PWNED\x07\x1b[2J.md" in out
    assert r"Evil \x1b]0;PWNED\x07 title \x9b31m \u202egnp.exe" in out  # the title
    assert r"Heading \x1b]0;PWNED\x07\u202etxt.exe" in out  # a heading
    assert r"\x1b]8;;http://evil.example/" in out  # the OSC 8 link in a snippet
    assert "**zebracorn** \\x1b[2Jgrazes" in out  # marks land on the word, not inside escapes
    for kept in KEPT:
        assert kept in out
    related = ok(
        invoke(
            runner, "related", root / "guides/backup.md", "--root", root, "--index-dir", index_dir
        )
    ).stdout
    assert_no_raw_controls(related)
    assert r"notes/evil\x1b]0;PWNED" in related
    # The shared hostile corpus's case: a title-setting name, a screen clear in the title.
    from tests.escapes import CORPUS_NAME_SHOWN, CORPUS_WORD

    out = ok(invoke(runner, "search", CORPUS_WORD, root, "--index-dir", index_dir)).stdout
    assert_no_raw_controls(out)
    assert CORPUS_NAME_SHOWN in out and r"Title \x1b[2J\x1b[H cleared" in out
    assert r"\x1b]8;;http://evil.example\x1b\this link" in out
    # An error naming the file escapes it too.
    missing = root / f"gone{EVIL_PATH[5:]}"
    error = invoke(runner, "related", missing, "--root", root, "--index-dir", index_dir)
    assert_no_raw_controls(error.stderr)
    assert_one_line_error(error, r"gone/evil\x1b]0;PWNED")


def test_paths_output_escapes_names(runner, hostile):
    from tests.escapes import WORD, assert_no_raw_controls

    root, index_dir = hostile
    args = ("search", WORD, root, "--index-dir", index_dir, "--format", "paths")
    out = ok(invoke(runner, *args)).stdout
    assert_no_raw_controls(out)
    assert "notes/evil\\x1b]0;PWNED\\x07\\x1b[2J.md\t" in out


def test_json_output_escapes_every_control_character(runner, hostile):
    from tests.escapes import EVIL_PATH, WORD, assert_no_raw_controls

    root, index_dir = hostile
    result = ok(invoke(runner, "search", WORD, root, "--index-dir", index_dir, "--json"))
    assert_no_raw_controls(result.stdout)
    assert "\\u009b" in result.stdout and "\\u202e" in result.stdout  # json leaves these raw
    data = json.loads(result.stdout)  # ...and the values are still exactly the file's
    hit = next(hit for hit in data["results"] if hit["path"] == EVIL_PATH)
    assert hit["title"] == "Evil \x1b]0;PWNED\x07 title \x9b31m \u202egnp.exe"
    assert "café 🦓" in hit["passages"][-1]["snippet"]


def test_a_terminal_gets_escaped_text_with_its_own_styles(hostile):
    """On a terminal the matched words are styled (ANSI), and nothing else is an escape."""
    import os
    import pty
    import re

    from tests.escapes import WORD

    root, index_dir = hostile
    leader, follower = pty.openpty()
    args = ["search", WORD, str(root), "--mode", "keyword", "--index-dir", str(index_dir)]
    done = subprocess.run(
        [*EXPLORER_PROCESS, *args], stdout=follower, stderr=subprocess.PIPE, timeout=120
    )
    os.close(follower)
    out = b"".join(terminal_output(leader)).decode()
    os.close(leader)
    assert done.returncode == 0, done.stderr
    styles = re.compile(r"\x1b\[[0-9;]*m")  # click.style's bold and colour
    assert styles.search(out), "no styling on a terminal"
    plain = styles.sub("", out)
    assert "\x1b" not in plain and "\x9b" not in plain and "\u202e" not in plain, plain
    assert r"notes/evil\x1b]0;PWNED\x07\x1b[2J.md" in plain


# -- on a terminal, `explorer index` shows its progress -------------------------------------------
def test_index_progress_labels_its_times_and_says_when_keywords_work(
    runner, root, index_dir, monkeypatch
):
    import io

    from rich.console import Console

    from explorer.cli.commands import KEYWORDS_READY

    screen = io.StringIO()
    monkeypatch.setattr("explorer.cli.commands._stderr_is_terminal", lambda: True)
    monkeypatch.setattr(
        "explorer.cli.commands._stderr_console",
        lambda: Console(file=screen, force_terminal=True, width=140),
    )
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    shown = screen.getvalue()
    assert "elapsed" in shown and "left" in shown  # the two time columns say what they are
    assert shown.count(KEYWORDS_READY) == 1  # said once, when the embedding starts
    assert shown.index("files") < shown.index(KEYWORDS_READY) < shown.index("embedding")
    # A second run has nothing to embed: nothing to announce.
    screen.truncate(0)
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    assert KEYWORDS_READY not in screen.getvalue()


def test_piped_marks_stay_out_of_link_targets(runner, tmp_path):
    root = write_files(
        tmp_path / "links",
        {
            "guide.md": "# Guide\n\nRead the [backup guide](https://example.com/backup/guide.md)"
            " or <https://example.com/backup> before any backup.\n"
        },
    )
    index_dir = tmp_path / "links-index"
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    out = ok(
        invoke(runner, "search", "backup", root, "--index-dir", index_dir, "--mode", "keyword")
    ).stdout
    assert "[**backup** guide](https://example.com/backup/guide.md)" in out
    assert "<https://example.com/backup>" in out
    assert "any **backup**." in out


LINKING = {
    "docs/lenses.md": "# Lenses\n\nTelescope lenses gather starlight. See [mirrors](mirrors.md).\n",
    "docs/mirrors.md": "# Mirrors\n\nTelescope mirrors gather starlight too.\n",
    "notes/eyepieces.md": "# Eyepieces\n\nEyepieces of a telescope magnify the starlight.\n",
    "kitchen/bread.md": "# Bread\n\nKnead the dough and let it rise.\n",
}


def test_related_names_why_and_unlinked_lists_the_links_a_file_is_missing(runner, tmp_path):
    root, index_dir = write_files(tmp_path / "linking", LINKING), tmp_path / "linking-index"
    ok(invoke(runner, "index", root, "--index-dir", index_dir))
    source = root / "docs/lenses.md"
    every = json.loads(
        ok(invoke(runner, "related", source, "--index-dir", index_dir, "--json")).stdout
    )
    by_path = {item["path"]: item for item in every["related"]}
    assert by_path["docs/mirrors.md"]["linked"] is True
    assert by_path["docs/mirrors.md"]["why"].startswith("linked · same section")
    assert by_path["docs/mirrors.md"]["signals"][:2] == ["linked", "same section"]
    assert by_path["notes/eyepieces.md"]["linked"] is False
    assert "unlinked" not in every

    text = ok(invoke(runner, "related", source, "--index-dir", index_dir)).stdout
    assert "      why   linked · same section" in text

    answer = ok(invoke(runner, "related", source, "--index-dir", index_dir, "--unlinked", "--json"))
    unlinked = json.loads(answer.stdout)
    assert unlinked["unlinked"] is True
    paths = [item["path"] for item in unlinked["related"]]
    assert "docs/mirrors.md" not in paths and paths[0] == "notes/eyepieces.md"
    first = unlinked["related"][0]
    assert "starlight" in first["source_passage"]["excerpt"]
    assert "starlight" in first["related_passage"]["excerpt"]

    text = ok(invoke(runner, "related", source, "--index-dir", index_dir, "--unlinked")).stdout
    assert text.startswith("files related to docs/lenses.md that it does not link to yet:\n")
    assert "docs/mirrors.md" not in text and "notes/eyepieces.md" in text
