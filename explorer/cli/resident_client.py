"""The fast path of a one-shot ``explorer search``, ``related``, ``links`` or ``status``: ask
the index's resident reader.

A process that imports Chroma and opens the store spends about a second before it answers.
The resident reader (:mod:`explorer.cli.resident_server`) is a process that has done so already
and listens on a Unix socket in the index directory. This client parses the command line as the
command would, resolves everything that depends on its own environment, working folder and
config file (the index, the root, FILE relative to the root, the settings, the output format),
and sends the reader one typed read request (:mod:`explorer.cli.reader_protocol`); it writes the
text the reader answers. It imports nothing heavy (no chromadb, torch, numpy or
sentence_transformers, nor pydantic; nor the CLI's commands, the keyword store, SQLite or YAML:
it resolves with :mod:`explorer.cli.targets`), so a served search is mostly Python's start
(``tests/unit/test_core_imports.py`` keeps it so).

Whenever the reader cannot answer exactly as this process would, the client answers ``None``
and the command runs in this process as usual: no socket yet (one is started for the next call),
a stale socket (removed), a timeout, a refusal (a bad value, an error, a reader of other code:
that one leaves and a fresh one is started), a terminal on stdout (styles depend on it), or
``EXPLORER_NO_DAEMON=1``.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import site
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

import explorer
from explorer.cli.reader_protocol import (
    Answer,
    Call,
    LinksCall,
    ReaderRequest,
    RelatedCall,
    Reply,
    SearchCall,
    StatusCall,
    code_fingerprint,
    decode_reply,
    encode_request,
)
from explorer.cli.targets import (
    IndexOptions,
    links_target,
    output_format,
    related_target,
    settings_for,
)
from explorer.core.errors import ExplorerError
from explorer.core.models import SearchMode

if TYPE_CHECKING:
    from explorer.settings.config import Settings

NO_DAEMON_ENV = "EXPLORER_NO_DAEMON"
"""Set (to anything but empty or 0) to run every command in its own process."""
DEBUG_ENV = "EXPLORER_READER_DEBUG"
"""Set to have the client say on stderr when the resident reader answered."""
SOCKET_NAME = "reader.sock"
LOCK_NAME = "reader.lock"
SERVED_COMMANDS = frozenset({"search", "related", "links", "status"})
"""Subcommands the resident reader answers: reads of one index that never take the write lock."""
TIMEOUT_SECONDS = 5.0
"""How long the client waits for the reader's answer before answering in-process."""
MAX_SOCKET_PATH = 100
"""``sun_path`` holds 108 bytes; a longer index path goes without a resident reader."""
SERVED_NOTE = "explorer: answered by the resident reader"


@dataclass(frozen=True)
class ResolvedCall:
    """A command line resolved into the request a reader answers."""

    request: ReaderRequest
    starts_reader: bool
    """Worth starting a reader for: the command opens the vector store (a keyword search and
    ``links`` are quick in-process; a running reader answers them too)."""

    @property
    def index_dir(self) -> Path:
        return self.request.settings.index_dir


def disabled() -> bool:
    """True when ``EXPLORER_NO_DAEMON`` asks for in-process work only."""
    return os.environ.get(NO_DAEMON_ENV, "") not in ("", "0")


def socket_path(index_dir: Path) -> Path:
    """Where the resident reader of ``index_dir`` listens."""
    return index_dir / SOCKET_NAME


def owned_private_dir(directory: Path) -> bool:
    """True when ``directory`` is a real folder of this user that nobody else may write to."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def try_resident(argv: list[str], cli: click.Group) -> int | None:
    """Answer ``explorer ARGV`` (the commands of ``cli``) through the resident reader: write
    its answer and give the exit status, or ``None`` when this process must run the command."""
    if disabled() or sys.stdout.isatty():
        return None
    resolved = resolve(argv, cli)
    if resolved is None:
        return None
    index_dir = resolved.index_dir
    if not (index_dir / "index.sqlite").is_file():
        return None
    if len(os.fsencode(socket_path(index_dir))) > MAX_SOCKET_PATH:
        return None
    if not owned_private_dir(index_dir):
        return None
    reply = ask(index_dir, encode_request(resolved.request), start=resolved.starts_reader)
    if isinstance(reply, Answer):
        return reply.status if _write(reply) else None
    if reply is not None and reply.leaving and resolved.starts_reader:
        start_reader(index_dir)  # it left for a reader of this code (or of the index as it is)
    return None


def resolve(argv: list[str], cli: click.Group) -> ResolvedCall | None:
    """The request ``explorer ARGV`` makes of a reader, resolved here; None when the command
    is not one a reader serves or fails to parse or resolve (it fails the same way in-process,
    with its own message)."""
    if not argv or argv[0] not in SERVED_COMMANDS or argv[0] not in cli.commands:
        return None
    command = cli.commands[argv[0]]
    try:
        # No help option: a `--help` that is an option (not a value) is an error here, and
        # the process prints the help itself.
        context = command.make_context(argv[0], list(argv[1:]), help_option_names=[])
        if _several_folders(argv[0], context.params):
            return None  # several folders run in-process (a reader serves one index)
        settings, call, starts_reader = _call(argv[0], context.params)
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        return None
    except (ExplorerError, OSError, ValueError):
        return None
    request = ReaderRequest(
        explorer_version=explorer.__version__,
        fingerprint=code_fingerprint(),
        settings=settings,
        call=call,
    )
    return ResolvedCall(request, starts_reader)


def _several_folders(name: str, params: dict[str, Any]) -> bool:
    """Whether the command opens named collections (:mod:`explorer.cli.several`) rather than
    one index."""
    from explorer.cli.targets import uses_collections
    from explorer.settings.config import folder_arguments
    from explorer.settings.user_config import load_folders_config

    folders = folder_arguments(params.get("folders", ()))
    if name == "search":
        return uses_collections(folders, params["query"], params["collections"], params["scopes"])
    if name == "links":
        return False  # links stay within FILE's own folder
    if name == "related":  # related FILE A: FILE's folder and A
        return bool(folders) or bool(load_folders_config().default_collections)
    return len(folders) > 1 or (not folders and bool(load_folders_config().default_collections))


def _call(name: str, params: dict[str, Any]) -> tuple[Settings, Call, bool]:
    """The settings and the typed call of subcommand ``name`` with its parsed ``params``, and
    whether a reader is worth starting for it."""
    options = IndexOptions(params["index_dir"], params["model"], params["chroma_url"])
    if name == "search":
        output = output_format(params["as_json"], params["output_format"])
        settings = settings_for(_first_folder(params["folders"]), options, check_recorded=False)
        mode = SearchMode(params["mode"])
        search = SearchCall(
            query=params["query"],
            mode=mode,
            paths=tuple(params["paths"]),
            exclude=tuple(params["exclude"]),
            tags=tuple(params["tags"]),
            versions=tuple(params["versions"]),
            limit=params["limit"],
            offset=params["offset"],
            per_file=params["per_file"],
            min_score=params["min_score"],
            content=params["content"],
            max_tokens=params["max_tokens"],
            metadata_only=params["metadata_only"],
            explain=params["explain"],
            offsets=params["offsets"],
            output=output,
        )
        return settings, search, mode is not SearchMode.KEYWORD
    if name == "related":
        settings, rel_path = related_target(
            params["file"], options, params["root"], check_recorded=False
        )
        call = RelatedCall(rel_path, params["limit"], params["as_json"], params["unlinked"])
        return settings, call, True
    if name == "links":
        settings, rel_path = links_target(
            params["file"], options, params["root"], check_recorded=False
        )
        return settings, LinksCall(rel_path, params["as_json"]), False
    settings = settings_for(_first_folder(params["folders"]), options, check_recorded=False)
    return settings, StatusCall(params["as_json"]), True


def _first_folder(folders: tuple[Path, ...]) -> Path | None:
    """The folder of a one-folder command's argument (``NAME=PATH``: PATH), if any."""
    from explorer.settings.config import folder_argument

    return folder_argument(folders[0]).path if folders else None


def ask(index_dir: Path, request: bytes, start: bool) -> Reply | None:
    """The reply of the reader of ``index_dir`` to ``request``, or None when there is none;
    with ``start``, a missing reader is started for the next call."""
    path = socket_path(index_dir)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if start:
            start_reader(index_dir)
        return None
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(TIMEOUT_SECONDS)
            connection.connect(str(path))
            connection.sendall(request)
            connection.shutdown(socket.SHUT_WR)
            data = _read_all(connection)
    except (ConnectionRefusedError, FileNotFoundError):
        _remove_stale(path, info)
        if start:
            start_reader(index_dir)
        return None
    except OSError:  # a timeout, a reset: answer in-process this time
        return None
    reply = decode_reply(data)
    if reply is None and _legacy_refusal(data):
        _retire_legacy_reader(index_dir)
    return reply


def _read_all(connection: socket.socket) -> bytes:
    """Everything the reader sends; a reset after its reply (it did not read all of a request
    it refused) ends the reply like its end would."""
    parts: list[bytes] = []
    while True:
        try:
            chunk = connection.recv(1 << 16)
        except ConnectionResetError:
            if not parts:
                raise
            break
        if not chunk:
            break
        parts.append(chunk)
    return b"".join(parts)


def _legacy_refusal(data: bytes) -> bool:
    """True for the refusal of a protocol-1 reader (``{"error": ...}``): one that answered
    command lines and never leaves for a client of other code while it is being called."""
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return isinstance(reply, dict) and set(reply) == {"error"}


def _retire_legacy_reader(index_dir: Path) -> None:
    """Stop the protocol-1 reader of ``index_dir`` (its pid is in ``reader.lock``, which it
    holds; on SIGTERM it removes its socket), so the next call starts a reader of this code."""
    try:
        handle = os.open(index_dir / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: the pid written in it is the holder's
            text = os.read(handle, 32).decode("ascii", "replace").strip()
            if text.isdigit() and int(text) not in (0, os.getpid()):
                os.kill(int(text), signal.SIGTERM)
        else:
            fcntl.flock(handle, fcntl.LOCK_UN)  # nobody serves: nothing to stop
    except OSError:
        pass
    finally:
        os.close(handle)


def _remove_stale(path: Path, seen: os.stat_result) -> None:
    """Remove a socket nobody listens on (its reader was killed), if it is still that one."""
    try:
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev):
            path.unlink()
    except OSError:
        pass


def start_reader(index_dir: Path) -> None:
    """Start the resident reader of ``index_dir``, detached, unless it cannot listen there."""
    if not os.access(index_dir, os.W_OK):
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "explorer", "_reader", str(index_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=_reader_environment(),
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def _reader_environment() -> dict[str, str]:
    """This environment, with the folder this code was imported from first on ``PYTHONPATH``
    unless it is a site-packages folder: the reader must run this code (a source checkout, or a
    tree whose editable install points elsewhere), and it starts in ``/``, not in our folder."""
    env = dict(os.environ)
    code_root = str(Path(__file__).resolve().parents[2])
    if code_root not in {str(Path(p).resolve()) for p in site.getsitepackages()}:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [code_root, env.get("PYTHONPATH")]))
    return env


def _write(answer: Answer) -> bool:
    """Write the reader's answer as this process would have (in the encodings of stdout and
    stderr): its notes first, then its output; False, with nothing written, when an encoding
    cannot hold it (the process then fails its own way). A closed pipe ends the process
    quietly."""
    try:
        data = _encoded(answer.stdout, sys.stdout)
        notes = _encoded(answer.stderr, sys.stderr)
    except (UnicodeEncodeError, LookupError):
        return False
    try:
        if notes:
            sys.stderr.flush()
            sys.stderr.buffer.write(notes)
            sys.stderr.buffer.flush()
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        if os.environ.get(DEBUG_ENV):
            sys.stderr.write(SERVED_NOTE + "\n")
            sys.stderr.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os._exit(141)
    return True


def _encoded(text: str, stream: TextIO) -> bytes:
    """``text`` as ``stream`` would write it (its encoding and error handler)."""
    return text.encode(stream.encoding or "utf-8", stream.errors or "strict")
