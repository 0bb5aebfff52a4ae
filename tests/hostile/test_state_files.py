"""State files explorer writes for itself (the TUI's sessions and ``tui.json``) and the user's
config file, whatever they hold (issue 29).

A session file or ``tui.json`` of deeply nested JSON stopped the TUI with a RecursionError at
every start. Now any state file that cannot be read (nested, huge, binary, a pipe, a folder, a
link) is set aside as ``NAME.unreadable-<time>``, named in one note, and the TUI starts. The
user's own config file is never renamed: each of those gives one line and exit status 2, never
a traceback or a hang.

A symbolic link planted at the session's temporary name (``sessions/NAME.tmp``) made explorer
overwrite the file it pointed at. Now every state write goes to a temporary file created
exclusively and renamed into place, and a state folder other users can write is refused (the
window says so; sessions are then off), as ssh refuses such folders.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.state_files import UNREADABLE_SUFFIX
from explorer.tui import session, themes
from explorer.tui.app import make_app
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.ui.conftest import wait_for

NESTED = "[" * 200_000 + "]" * 200_000


def nested(path: Path) -> None:
    path.write_text(NESTED)


def huge(path: Path) -> None:
    path.write_text(json.dumps({"query": "x" * 5_000_000}))


def binary(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 10)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def folder(path: Path) -> None:
    path.mkdir()


def link(path: Path) -> None:
    target = path.with_name("elsewhere.json")
    target.write_text('{"query": "planted"}')
    path.symlink_to(target)


def not_an_object(path: Path) -> None:
    path.write_text('["a", "list"]')


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "nested": (nested, "nested too deeply"),
    "huge": (huge, "larger than 4.0 MB"),
    "binary": (binary, "not UTF-8 text"),
    "fifo": (fifo, "a named pipe"),
    "folder": (folder, "a folder"),
    "link": (link, "a symbolic link"),
    "list": (not_an_object, "not a JSON object"),
}


def in_time(call: Callable[[], object], seconds: float = 10) -> object:
    """``call()`` on a thread; fail instead of hanging (a pipe read would wait for ever)."""
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "reading the file blocked"
    return outcome[0]


def set_aside_beside(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}{UNREADABLE_SUFFIX}*"))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_unreadable_session_file_is_set_aside_and_named_once(tmp_path, kind):
    make, why = KINDS[kind]
    roots = [tmp_path / "docs"]
    path = session.session_path(roots)
    path.parent.mkdir(parents=True, mode=0o700)
    make(path)
    saved, note = in_time(lambda: session.load_session(roots))  # type: ignore[misc]
    assert saved == session.Session()
    [aside] = set_aside_beside(path)
    assert note == f"the session file {path} could not be read ({why}); set aside as {aside.name}"
    assert not path.exists() and not path.is_symlink()
    assert in_time(lambda: session.load_session(roots)) == (session.Session(), "")
    session.save_session(roots, session.Session(query="after"))
    assert session.load_session(roots)[0].query == "after"


@pytest.mark.parametrize("kind", ["nested", "fifo", "folder", "binary"])
def test_unreadable_preferences_are_set_aside_and_named_once(kind):
    make, why = KINDS[kind]
    path = themes.preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)
    read = in_time(themes.read_preferences)
    assert read.data is None and f"({why}); set aside as tui.json{UNREADABLE_SUFFIX}" in read.note
    assert themes.load_preferences() == {}
    themes.save_preference("theme", "nord")
    assert themes.load_preferences() == {"theme": "nord"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_tui_starts_over_nested_state_files_and_says_which_it_set_aside(tmp_path):
    root = write_files(tmp_path / "docs", {"page.md": "# Page\n\nwords\n"})
    sessions = session.session_path([root])
    sessions.parent.mkdir(parents=True, mode=0o700)
    nested(sessions)
    preferences = themes.preferences_path()
    preferences.parent.mkdir(parents=True, exist_ok=True)
    nested(preferences)
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: len(app._notifications) >= 2, what="the two notes")
        texts = [str(n.message) for n in app._notifications]
        assert any(str(sessions) in t and "set aside as" in t for t in texts), texts
        assert any(str(preferences) in t and "set aside as" in t for t in texts), texts
        await pilot.press("p", "a", "g", "e")
        await wait_for(pilot, lambda: app.screen.search_box.text == "page", what="typing")
    assert set_aside_beside(sessions) and set_aside_beside(preferences)


# -- the user's config file: never renamed, one line ------------------------------------------
CONFIG_KINDS = {
    "nested": (lambda p: p.write_text("a = " + NESTED), "nested too deeply"),
    "nested-table": (lambda p: p.write_text("a = " + "{x=" * 3000 + "}" * 3000), "nested"),
    "huge": (lambda p: p.write_text('a = "' + "x" * 2_000_000 + '"\n'), "larger than 1.0 MB"),
    "binary": (binary, "cannot read it"),
    "fifo": (fifo, "a named pipe"),
    "folder": (folder, "a folder"),
}


@pytest.mark.parametrize("kind", sorted(CONFIG_KINDS))
def test_a_config_file_that_cannot_be_read_is_one_line_and_stays(tmp_path, kind):
    make, why = CONFIG_KINDS[kind]
    config = Path(os.environ["EXPLORER_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    make(config)
    root = write_files(tmp_path / "docs", {"page.md": "# Page\n"})
    result = in_time(lambda: CliRunner().invoke(main, ["status", str(root)]))
    assert result.exit_code == 2, (result.output, result.exception)  # type: ignore[attr-defined]
    [line] = result.output.strip().splitlines()  # type: ignore[attr-defined]
    assert line.startswith(f"explorer: error: {config}: ") and why in line
    assert os.path.lexists(config) and not set_aside_beside(config)


def test_a_config_file_that_is_a_link_into_dotfiles_is_read(tmp_path):
    config = Path(os.environ["EXPLORER_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    dotfiles = tmp_path / "dotfiles.toml"
    dotfiles.write_text("limit = 3\n")
    config.symlink_to(dotfiles)
    from explorer.settings.user_config import load_user_config

    assert load_user_config().knobs == {"default_limit": 3}


# -- writing: no planted link is followed, no shared folder is used ---------------------------
@pytest.mark.parametrize("planted", ["temporary names", "session"])
def test_a_planted_link_is_never_followed(tmp_path, planted):
    """A link at the temporary name an older explorer used (``NAME.tmp``), or at the session
    itself: the write replaces the link and leaves the file it points at as it was."""
    roots = [tmp_path / "docs"]
    path = session.session_path(roots)
    path.parent.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    links = [path.with_suffix(".tmp"), path.with_name(path.name + ".tmp")]
    for name in links if planted == "temporary names" else [path]:
        name.symlink_to(victim)
    session.save_session(roots, session.Session(query="mine"))
    assert victim.read_text() == "the user's own file\n"
    assert not path.is_symlink() and session.load_session(roots)[0].query == "mine"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    left = {p.name for p in path.parent.iterdir()} - {path.name}
    assert left == ({n.name for n in links} if planted == "temporary names" else set())


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_state_folder_others_can_write_is_refused(tmp_path, monkeypatch, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    if mode == 0o770:  # writable by a group of other users
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another group takes root")
        os.chown(shared, -1, grp.getgrnam("daemon").gr_gid)
    monkeypatch.setenv("EXPLORER_STATE_DIR", str(shared))
    roots = [tmp_path / "docs"]
    problem = session.sessions_problem()
    if mode == 0o1777:  # sticky and the user's own: others cannot rename what is ours
        assert problem == ""
        session.save_session(roots, session.Session(query="kept"))
        assert session.load_session(roots)[0].query == "kept"
        return
    assert problem == (
        f"sessions are off: other users can write {shared} (mode {mode:04o}); make it private"
        " (chmod 700) or set EXPLORER_STATE_DIR"
    )
    session.save_session(roots, session.Session(query="secret"))
    assert list(shared.iterdir()) == [], "nothing written there"


def test_a_folder_writable_by_the_users_own_group_is_theirs(tmp_path, monkeypatch):
    """A umask of 002 gives folders 0775 where each user has a group of their own: that group's
    write bit lets no one else in."""
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o775)
    user = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(state.stat().st_gid)
    if group.gr_name != user.pw_name or set(group.gr_mem) - {user.pw_name}:
        pytest.skip("the user has no group of their own here")
    monkeypatch.setenv("EXPLORER_STATE_DIR", str(state))
    assert session.sessions_problem() == ""


def test_a_sessions_folder_others_can_write_is_refused_too(tmp_path, monkeypatch):
    state = tmp_path / "state"
    (state / "sessions").mkdir(parents=True)
    state.chmod(0o700)
    (state / "sessions").chmod(0o777)
    monkeypatch.setenv("EXPLORER_STATE_DIR", str(state))
    assert "other users can write" in session.sessions_problem()
    session.save_session([tmp_path / "docs"], session.Session(query="secret"))
    assert list((state / "sessions").iterdir()) == []


@pytest.mark.anyio
async def test_the_tui_turns_sessions_off_in_a_shared_state_folder_and_says_why(
    tmp_path, monkeypatch
):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("EXPLORER_STATE_DIR", str(shared))
    root = write_files(tmp_path / "docs", {"page.md": "# Page\n\nwords\n"})
    planted = session.session_path([root])
    planted.parent.mkdir()
    planted.write_text('{"query": "planted by another user"}')
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot,
            lambda: any("sessions are off" in str(n.message) for n in app._notifications),
            what="the note",
        )
        assert app.screen.search_box.text == ""
        await pilot.press("w", "o")
        await pilot.press("ctrl+q")
    assert planted.read_text() == '{"query": "planted by another user"}'
