"""Pure pieces behind the UI: fuzzy file matching, query parsing, theme files."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import explorer
from explorer.core.retrieval.fuzzy import match_paths
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


def test_parse_query_takes_path_words_out():
    assert parse_query("backup path:guides/ restore") == ("backup restore", ("guides/",))
    assert parse_query("path:a/ path:**/*.py x") == ("x", ("a/", "**/*.py"))
    assert parse_query("proxy ") == ("proxy ", ())  # a trailing space ends the last word
    assert parse_query("path:") == ("", ())
    assert split_filter(" guides/, runbooks/ api/") == ("guides/", "runbooks/", "api/")


def test_shipped_theme_files_are_valid():
    loaded = load_themes([shipped_themes_dir()])
    assert loaded.problems == []
    assert {theme.name for theme in loaded.themes} >= {"tern-dusk", "tern-paper"}


def test_shipped_themes_are_found_inside_the_package():
    """The loader reads shipped themes from the ``explorer`` package, not from the source tree."""
    package_dir = Path(explorer.__file__).resolve().parent
    shipped = Path(str(shipped_themes_dir())).resolve()
    assert shipped.is_relative_to(package_dir)
    names = {entry.name for entry in shipped_themes_dir().iterdir()}
    assert {"tern-dusk.toml", "tern-paper.toml"} <= names


def test_package_data_declares_the_themes_and_the_stylesheet():
    """A wheel carries every shipped theme file and stylesheet (pyproject's package-data)."""
    package_dir = Path(explorer.__file__).resolve().parent
    pyproject = tomllib.loads((package_dir.parent / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["explorer"]
    declared = {path for pattern in patterns for path in package_dir.glob(pattern)}
    needed = set(package_dir.glob("themes/*.toml")) | set(package_dir.rglob("*.tcss"))
    assert needed, "no shipped themes or stylesheets found"
    assert needed <= declared


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
