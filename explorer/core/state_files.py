"""State files: the small files explorer keeps for itself between runs (the TUI's sessions and
preferences, the query encoder's manifest), read so that no content can stop explorer and
written so that no other user can redirect the write.

Reading (:func:`read_json_object`): a state file is opened without following a link and
without waiting (a named pipe never blocks), and must be a regular file of at most
:data:`MAX_STATE_BYTES` bytes holding a JSON object. One that is not (nested a million deep,
huge, binary, a pipe, a folder, unreadable) is set aside, renamed ``NAME.unreadable-<time>``
beside it, and the caller gets one line that names it. The user's own files (the config file)
are never renamed: :func:`read_bounded` reads them with the same care and lets the caller say
what is wrong.

Writing (:func:`write_state`): the folders from the state's top folder down to the file's must
be the user's and not writable by other users (a sticky folder of the user's own is), as ssh
requires of ``~/.ssh``; otherwise :class:`StateFolderUnsafe`. The text goes to a new temporary
file created exclusively in the same folder (never an existing name, so never a planted link)
and is renamed into place (:func:`replace_file`).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.private_files import make_private_dirs

MAX_STATE_BYTES = 4_000_000
"""A state file larger than this is not read (a session holds a few kilobytes)."""
UNREADABLE_SUFFIX = ".unreadable-"
"""Follows the name of a state file set aside, before the time it was set aside."""


class StateFolderUnsafe(ExplorerError):
    """A folder of explorer's state can be written by other users (or is another user's)."""


class UnreadableFile(ExplorerError):
    """A file that is not a regular file of bounded size that can be read: the message says
    why (``a named pipe``, ``larger than 4.0 MB``, ...)."""


@dataclass(frozen=True)
class StateRead:
    """What reading a state file gave: its JSON object (None when there is no file or it could
    not be read) and, when it was set aside, one line saying so."""

    data: dict[str, object] | None = None
    note: str = ""
    set_aside: Path | None = field(default=None, compare=False)


def read_bounded(
    path: Path, limit: int = MAX_STATE_BYTES, follow_links: bool = False
) -> bytes | None:
    """The bytes of the regular file ``path`` (None when it does not exist); raises
    :class:`UnreadableFile` when it is anything else, larger than ``limit``, or unreadable.
    Never waits on a named pipe; follows a final symbolic link only with ``follow_links`` (a
    user's config file may be a link into their dotfiles; explorer's state files never are)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnreadableFile("a symbolic link") from None
        raise UnreadableFile(error.strerror or str(error)) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(_kind(info.st_mode))
        if info.st_size > limit:
            raise UnreadableFile(f"larger than {limit / 1e6:.1f} MB")
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(descriptor, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise UnreadableFile(error.strerror or str(error)) from None
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UnreadableFile(f"larger than {limit / 1e6:.1f} MB")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def parse_json_object(data: bytes) -> dict[str, object]:
    """The JSON object ``data`` holds; :class:`UnreadableFile` saying why when it holds none."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UnreadableFile("not UTF-8 text") from None
    except RecursionError:
        raise UnreadableFile("nested too deeply") from None
    except ValueError as error:
        raise UnreadableFile(f"not JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise UnreadableFile("not a JSON object")
    return parsed


def read_json_object(path: Path, what: str, limit: int = MAX_STATE_BYTES) -> StateRead:
    """The JSON object in the state file ``path``; one that cannot be read is set aside and
    :attr:`StateRead.note` says so in one line (``what`` names it: ``the session``)."""
    try:
        data = read_bounded(path, limit)
        if data is None:
            return StateRead()
        return StateRead(parse_json_object(data))
    except UnreadableFile as problem:
        return set_aside(path, what, str(problem))


def set_aside(path: Path, what: str, why: str) -> StateRead:
    """Rename the unreadable state file ``path`` out of the way; the note names both."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(100):
        extra = f"-{attempt}" if attempt else ""
        aside = path.with_name(f"{path.name}{UNREADABLE_SUFFIX}{stamp}{extra}")
        if aside.exists() or aside.is_symlink():
            continue
        try:
            os.rename(path, aside)
        except OSError as error:
            note = f"{what} {path} cannot be read ({why}) nor set aside ({error.strerror})"
            return StateRead(note=note + "; it is ignored")
        return StateRead(
            note=f"{what} {path} could not be read ({why}); set aside as {aside.name}",
            set_aside=aside,
        )
    return StateRead(note=f"{what} {path} cannot be read ({why}); it is ignored")


def folder_problem(folder: Path, top: Path) -> str:
    """Why the folders from ``top`` down to ``folder`` (those that exist) are not safe for
    explorer's state, or ``""``: each must be the user's (or root's) and not writable by
    group or others unless it is sticky and the user's own."""
    chain = [folder, *folder.parents]
    chain = chain[: chain.index(top) + 1] if top in chain else [folder]
    me = os.geteuid()
    for each in reversed(chain):
        try:
            info = os.stat(each)
        except FileNotFoundError:
            continue
        except OSError as error:
            return f"{each} cannot be checked ({error.strerror})"
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid not in (me, 0):
            return f"{each} belongs to another user"
        sticky_own = bool(mode & stat.S_ISVTX) and info.st_uid == me
        writers = mode & (0o022 if not _private_group(info.st_gid) else 0o002)
        if writers and not sticky_own:
            return f"other users can write {each} (mode {mode:04o})"
    return ""


def _private_group(gid: int) -> bool:
    """Whether ``gid`` is the user's own group (named after them, nobody else in it), as a
    umask of 002 gives folders on systems with a group per user: its write bit lets no one
    else in (as Debian's ssh also judges)."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        user = pwd.getpwuid(os.geteuid())
    except KeyError:
        return False
    return group.gr_name == user.pw_name and not set(group.gr_mem) - {user.pw_name}


def write_state(path: Path, text: str, top: Path) -> None:
    """Write the state file ``path`` under the state folder ``top``: :class:`StateFolderUnsafe`
    when another user could change what is written; OSError when it cannot be written."""
    problem = folder_problem(path.parent, top)
    if problem:
        raise StateFolderUnsafe(problem)
    make_private_dirs(path.parent)
    replace_file(path, text)


def replace_file(path: Path, text: str) -> None:
    """Put ``text`` at ``path`` whole: written to a temporary file created exclusively (mode
    0600) in the same folder, then renamed over ``path``."""
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
