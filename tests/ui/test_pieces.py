"""Pure pieces behind the UI: fuzzy file matching, query parsing, theme files, the index's
state as a status line, and the live-index bridge's messages."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from textual.message import Message

import explorer
from explorer.core.live.events import (
    FilesChangedEvent,
    ModelState,
    ProgressEvent,
    WriterEvent,
    WriterState,
)
from explorer.core.models import SyncPhase
from explorer.core.retrieval.fuzzy import match_files, match_paths
from explorer.settings.config import Settings
from explorer.tui.bridge import IndexBridge
from explorer.tui.index_state import IndexState
from explorer.tui.later import Later
from explorer.tui.messages import LiveIndexEvent
from explorer.tui.themes import ThemeFileError, load_theme_file, load_themes, shipped_themes_dir
from explorer.tui.widgets.search_box import parse_query, split_filter

PATHS = [
    "guides/getting-started.md",
    "guides/install-docker.md",
    "guides/install-linux.md",
    "guides/backups.md",
    "runbooks/restore-from-backup.md",
    "runbooks/failed-backups.md",
    "src/tern/backup.py",
    "README.md",
]


@pytest.mark.parametrize(
    ("keys", "best"),
    [
        ("gsta", "guides/getting-started.md"),
        ("instdock", "guides/install-docker.md"),
        ("install docker", "guides/install-docker.md"),
        ("restore", "runbooks/restore-from-backup.md"),
        ("backup.py", "src/tern/backup.py"),
        ("bakcups", "guides/backups.md"),  # a typo still finds it
        ("readme", "README.md"),
    ],
)
def test_fuzzy_best_match(keys, best):
    assert match_paths(keys, PATHS)[0].path == best


def test_fuzzy_positions_mark_the_typed_characters():
    match = match_paths("gsta", PATHS)[0]
    assert "".join(match.path[i] for i in match.positions).lower() == "gsta"
    assert match_paths("", PATHS, limit=3) == match_paths("  ", PATHS, limit=3)
    assert [m.path for m in match_paths("", PATHS, limit=2)] == sorted(PATHS)[:2]
    assert match_paths("zzzzqqq", PATHS) == []


LANGUAGES = {
    "languages/python/getting-started.md": "Getting started",
    "languages/go/getting-started.md": "Getting started",
    "languages/python/packaging.md": "Packaging Python projects",
    "guides/started.md": "",
    "python/index.md": "Python",
}


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("Getting started python", "languages/python/getting-started.md"),
        ("python getting started", "languages/python/getting-started.md"),
        ("started go", "languages/go/getting-started.md"),
        ("projects packaging", "languages/python/packaging.md"),  # words of the title
        ("python pack", "languages/python/packaging.md"),
    ],
)
def test_quick_open_matches_words_in_any_order_in_path_and_title(query, best):
    matches = match_files(query, LANGUAGES)
    assert matches[0].path == best
    match = matches[0]
    marked = "".join(match.path[i] for i in match.positions).lower()
    marked += "".join(match.title[i] for i in match.title_positions).lower()
    for word in query.lower().split():
        assert word in marked  # each word is marked where it matched


def test_a_quick_open_matcher_matches_as_one_query_does_and_stops_when_told():
    """A picker folds its files once (:class:`FileMatcher`) and matches as :func:`match_files`
    does; a match made stale by the next key stops and says so."""
    from explorer.core.retrieval.fuzzy import CANCEL_EVERY, FileMatcher

    files = {**LANGUAGES, **dict.fromkeys(PATHS, "")}
    matcher = FileMatcher(files)
    for query in ("gsta", "python pack", "Getting started", "bakcups", "", "zzzzqqq"):
        assert matcher.match(query) == match_files(query, files)
    many = {f"notes/note-{n}.md": f"Note {n}" for n in range(CANCEL_EVERY * 2)}
    assert FileMatcher(many).match("note", cancelled=lambda: True) is None
    assert FileMatcher(many).match("note 7", cancelled=lambda: False)


def test_quick_open_is_linear_in_a_long_query_that_fails():
    """Keys in order are found by one pass over a path: a long query that fails on long paths
    (a file's whole title typed) costs no more than its length (a backtracking pattern took
    exponential time: seconds per path)."""
    import time

    paths = [f"{'a' * 120}/{n}.md" for n in range(300)]
    started = time.perf_counter()
    matches = match_paths("a" * 60 + "b", paths)
    assert time.perf_counter() - started < 2.0
    assert all(m.score < 100 for m in matches)  # typos at best: the keys are not in order


def test_parse_query_takes_path_words_out():
    assert parse_query("backup path:guides/ restore") == ("backup restore", ("guides/",))
    assert parse_query("path:a/ path:**/*.py x") == ("x", ("a/", "**/*.py"))
    assert parse_query("proxy ") == ("proxy ", ())  # a trailing space ends the last word
    assert parse_query("path:") == ("", ())
    assert split_filter(" guides/, runbooks/ api/") == ("guides/", "runbooks/", "api/")
    assert split_filter('"My Notes/", api/ "a,b/*.md" ""') == ("My Notes/", "api/", "a,b/*.md")
    assert split_filter('guides/ "half typ') == ("guides/", "half typ")


def test_shipped_theme_files_are_valid():
    loaded = load_themes([shipped_themes_dir()])
    assert loaded.problems == []
    assert {theme.name for theme in loaded.themes} >= {"tern-dusk", "tern-paper"}


def test_shipped_themes_are_found_in_the_checkouts_themes_folder():
    """In a checkout the shipped themes are read from ``themes/`` at the top of the repository
    (the design card's layout), the stylesheet from the package."""
    repo = Path(explorer.__file__).resolve().parents[1]
    assert Path(shipped_themes_dir()).resolve() == repo / "themes"
    names = {entry.name for entry in shipped_themes_dir().iterdir()}
    assert {"tern-dusk.toml", "tern-paper.toml"} <= names
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["explorer"]
    package_dir = repo / "explorer"
    declared = {path for pattern in patterns for path in package_dir.glob(pattern)}
    assert set(package_dir.rglob("*.tcss")) <= declared


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('name = "x"\nprimary = "#12"', "not a colour"),
        ('primary = "#123456"', "'name'"),
        ('name = "x"', "'primary' is required"),
        ('name = "x"\nprimary = "#123456"\ncolour = "red"', "unknown keys"),
        ("name = ", "not valid TOML"),
        ('name = "x"\nprimary = "#123456"\ndark = "yes"', "'dark'"),
    ],
)
def test_broken_theme_files_are_explained(tmp_path, text, problem):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ThemeFileError, match=problem):
        load_theme_file(path)


@pytest.mark.parametrize(("environment", "expected"), [({}, 120), ({"TEXTUAL_FPS": "30"}, 30)])
def test_the_app_paints_at_120_frames_unless_told_otherwise(environment, expected):
    """Launched from the command line, the app's Textual frame rate is 120 (results reach the
    screen sooner after a key); TEXTUAL_FPS in the environment still wins."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"} | environment
    probe = (
        "import explorer.cli, explorer.tui.app, textual.constants as c, textual.screen as s;"
        "print(c.MAX_FPS, round(1 / s.UPDATE_PERIOD))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == [str(expected), str(expected)]


def test_the_bridge_posts_each_live_event_as_it_is_and_progress_merges():
    posted: list[Message] = []

    class Target:
        def post_message(self, message: Message) -> bool:
            posted.append(message)
            return True

    bridge = IndexBridge(Settings.for_root(Path(".")), Target())  # type: ignore[arg-type]
    events = [
        ProgressEvent(SyncPhase.KEYWORDS, 1, 4),
        FilesChangedEvent(frozenset({"a.md"})),
        WriterEvent(WriterState.WAITING, "another process writes"),
    ]
    for event in events:
        bridge._on_event(event)  # what the writer thread calls
    assert [type(m) for m in posted] == [LiveIndexEvent] * 3
    assert [m.event for m in posted if isinstance(m, LiveIndexEvent)] == events
    newer = LiveIndexEvent(ProgressEvent(SyncPhase.KEYWORDS, 2, 4))
    assert newer.can_replace(posted[0])  # a queued progress gives way to a newer one
    assert not newer.can_replace(posted[1]) and not posted[1].can_replace(posted[0])


def test_the_index_state_reads_as_one_status_line():
    state = IndexState()
    assert state.summary() == "opening index…" and state.model is ModelState.UNLOADED
    assert replace(state, opened=True).model is ModelState.LOADING
    counts = {"fresh": 3, "pending": 1, "skipped": 2, "failed": 0, "chunks": 40, "embedded": 30}
    state = replace(state, opened=True, counts=counts, query_model=ModelState.READY)
    assert state.summary() == "4 files · 40 chunks (1 pending, 2 skipped)"
    assert state.model is ModelState.READY and state.semantic_ready
    keywords = replace(state, progress=ProgressEvent(SyncPhase.KEYWORDS, 7, 9))
    assert keywords.summary() == "indexing 7/9 files"
    embed = replace(state, progress=ProgressEvent(SyncPhase.EMBED, chunks_done=10, chunks_total=40))
    assert embed.summary() == "4 files · embedding 10/40 chunks (25%)"
    loading = replace(state, document_model=ModelState.LOADING)
    assert loading.summary() == "4 files · embedding 10 chunks once the model has loaded"
    assert loading.model is ModelState.LOADING
    assert replace(loading, query_model=ModelState.FAILED).model is ModelState.FAILED
    assert replace(state, read_only=True).summary().startswith("read-only")
    assert replace(state, error="cannot open the index: x").summary() == (
        "cannot open the index: x"
    )


class _QueueingOwner:
    """Stands for a widget: like Textual, it queues the timer's call when the delay ends, and
    stopping the timer does not take the call off the queue."""

    def __init__(self) -> None:
        self.queued: list = []

    def set_timer(self, delay, callback):
        owner = self

        class Timer:
            def stop(self) -> None:
                pass

            def end(self) -> None:
                owner.queued.append(callback)

        self.timer = Timer()
        return self.timer


def test_a_later_call_stopped_after_its_delay_ended_does_not_run():
    owner, calls = _QueueingOwner(), []
    later = Later(owner, 1.0, lambda: calls.append("stale"))
    owner.timer.end()
    later.stop()
    for call in owner.queued:
        call()
    assert calls == [] and not later.pending

    later = Later(owner, 1.0, lambda: calls.append("due"))
    assert later.pending
    owner.timer.end()
    for call in owner.queued[1:]:
        call()
        call()  # once, however often the queue runs it
    assert calls == ["due"] and not later.pending
