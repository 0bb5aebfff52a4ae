"""The command line: ``explorer [ROOT]`` opens the TUI; subcommands serve scripts and agents.

Heavy modules (Chroma, the model, Textual) are imported inside the commands that need them, so
``explorer --help`` answers at once. Answers go to stdout, notes about them to stderr. Every
expected failure is one line on stderr and exit 2; a search that finds nothing exits 1 (and
``check-refs`` when a reference is missing), as grep does.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, ParamSpec, TextIO, TypeVar

import click

from explorer.core.errors import ExplorerError
from explorer.core.errors import describe as describe_error
from explorer.core.models import SearchMode
from explorer.core.safe_text import quoted, safe_text
from explorer.core.store.chroma_server import CHROMA_URL_ENV
from explorer.settings.locations import INDEX_DIR_ENV

EXIT_USAGE = 2
"""Every expected failure: bad input, no index, a busy or unreachable store, ..."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
EXIT_MISSING_REFERENCES = 1
"""``check-refs`` found a reference to a file that does not exist."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


class OneLineUsageError(click.UsageError):
    """A usage error shown as one ``explorer: error:`` line, like every other failure."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"explorer: error: {safe_text(self.format_message())}", file=file, err=True)


def _one_line(error: click.UsageError) -> OneLineUsageError:
    hint = f" (see: {error.ctx.command_path} --help)" if error.ctx is not None else ""
    return OneLineUsageError(error.format_message() + hint, ctx=error.ctx)


class ExplorerGroup(click.Group):
    """A group whose first argument may be a folder instead of a command: that opens the TUI.

    Usage errors (a bad option value, a missing argument) print one line and exit 2, instead of
    click's usage block.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["open", *args]
        return super().parse_args(ctx, args)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except OneLineUsageError:
            raise
        except click.UsageError as error:
            raise _one_line(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as error:
            raise _one_line(error) from None


def _is_terminal(stream: TextIO | None) -> bool:
    """True if ``stream`` is open on a terminal (a closed or missing one is not)."""
    try:
        return stream is not None and stream.isatty()
    except ValueError:  # closed
        return False


def fail(message: str) -> None:
    """Print one error line (control characters escaped) and leave with the usage exit code."""
    click.echo(f"explorer: error: {safe_text(message)}", err=True)
    sys.exit(EXIT_USAGE)


def friendly_errors(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn every failure into one clear line; EXPLORER_DEBUG=1 keeps the traceback."""

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return command(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt as interrupt:
            click.echo("explorer: interrupted", err=True)
            sys.exit(exit_code(interrupt))
        except (
            BrokenPipeError
        ) as gone:  # the reader of our output went away (`| head`): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(exit_code(gone))
        # The top of every command: whatever escapes, expected (an ExplorerError) or a bug, the
        # user gets one line and an exit status, never a traceback.
        except Exception as error:
            if os.environ.get("EXPLORER_DEBUG"):
                raise
            click.echo(f"explorer: error: {safe_text(describe(error))}", err=True)
            sys.exit(exit_code(error))

    return wrapper


def one_shot(command: Callable[_P, int | None]) -> Callable[_P, None]:
    """For a read-only command run as its own process (``run``): skip the cyclic garbage
    collector, which only slows the imports of a process that lives a second, and leave
    without the interpreter's teardown (about 0.3 s of freeing Chroma and the model) once
    the answer is written. Called in-process (tests, ``CliRunner``), the command runs as is.
    Either way the command's result, if any, is the exit status."""

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> None:
        ctx = click.get_current_context()
        if _whole_process(ctx):
            gc.disable()
        _end(ctx, command(*args, **kwargs) or 0)

    return wrapper


def _whole_process(ctx: click.Context) -> bool:
    """Whether the command runs as a process of its own (``run``), not inside another."""
    return isinstance(ctx.obj, dict) and bool(ctx.obj.get("whole_process", False))


def _end(ctx: click.Context, status: int) -> None:
    """A command is done with exit ``status``: a process of its own leaves at once, with no
    interpreter teardown (it would only free memory: 0.3 s after a search, 2-3 s of garbage
    collection after a window on the kernel's docs); in-process, a failure exits the command."""
    if _whole_process(ctx):
        _leave_now(status)
    if status:
        ctx.exit(status)


def _leave_now(status: int = 0) -> None:
    """Flush what was written and end the process at once with exit ``status``."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        os._exit(EXIT_BROKEN_PIPE)
    os._exit(status)


def run() -> None:
    """The ``explorer`` console script: the CLI as a process of its own.

    A search is first offered to the index's resident reader (see
    :mod:`explorer.cli.resident_client`); when it cannot answer, this process runs the command.
    A command whose output is a terminal (the TUI, a person reading) is never offered: the
    reader's client is not even imported (25-37 ms of imports before the TUI's first frame)."""
    if not sys.stdout.isatty():
        from explorer.cli.resident_client import try_resident

        exit_code = try_resident(sys.argv[1:], main)
        if exit_code is not None:
            os._exit(exit_code)
    main(obj={"whole_process": True})


def flag_name(field: str) -> str:
    """How the CLI spells a request field an error names: ``per_file`` is ``--per-file``."""
    return "--" + field.replace("_", "-")


def describe(error: BaseException) -> str:
    """The one line the CLI shows for a failure: the fields an error names spelled as flags,
    and, for an unexpected failure, how to see its traceback."""
    line = describe_error(error, flag_name)
    if isinstance(error, ExplorerError) or (isinstance(error, OSError) and error.filename):
        return line
    return f"{line} (set EXPLORER_DEBUG=1 for details)"


def exit_code(error: BaseException) -> int:
    """The exit status of a command that failed with ``error``."""
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(error, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    return EXIT_USAGE


index_dir_option = click.option(
    "--index-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=INDEX_DIR_ENV,
    help=f"Index directory (env {INDEX_DIR_ENV}); default: one per folder in the user data dir.",
)
model_option = click.option(
    "--model",
    envvar="EXPLORER_MODEL",
    default=None,
    help="Sentence-transformers model name or folder (env EXPLORER_MODEL); "
    "default: the bundled all-MiniLM-L6-v2.",
)
chroma_url_option = click.option(
    "--chroma-url",
    envvar=CHROMA_URL_ENV,
    default=None,
    metavar="URL",
    help=f"Keep vectors on the Chroma server at URL, e.g. http://127.0.0.1:8000 (env "
    f"{CHROMA_URL_ENV}, or chroma_url in config.toml); default: a local store.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
file_root_option = click.option(
    "--root",
    type=click.Path(path_type=Path),
    default=None,
    help="The indexed folder FILE belongs to (default: found from FILE).",
)


@click.group(cls=ExplorerGroup, invoke_without_command=True)
@click.version_option(package_name="explorer")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Explore a folder of docs, notes and code with live hybrid search.

    Run `explorer [ROOT]` to open the explorer on a folder (default: the current one).
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_command, root=None)


@main.command("open")
@click.argument("root", type=click.Path(path_type=Path), default=None, required=False)
@click.argument("more", nargs=-1, type=click.Path(path_type=Path), metavar="")
@index_dir_option
@model_option
@chroma_url_option
@friendly_errors
def open_command(
    root: Path | None,
    more: tuple[Path, ...] = (),
    index_dir: Path | None = None,
    model: str | None = None,
    chroma_url: str | None = None,
) -> None:
    """Open the explorer TUI on ROOT (default: the current folder), or on several folders
    (ROOT MORE...) searched as one, each a collection; with no folder and `default_collections`
    in the config file, on those."""
    from explorer.cli.commands import require_server
    from explorer.cli.several import open_named
    from explorer.cli.targets import IndexOptions, check_root, settings_for
    from explorer.settings.config import folder_arguments
    from explorer.settings.user_config import load_folders_config

    options = IndexOptions(index_dir, model, chroma_url)
    folders = folder_arguments([root, *more] if root is not None else [])
    several = (
        len(folders) > 1
        or any(folder.name for folder in folders)
        or (not folders and bool(load_folders_config().default_collections))
    )
    opened = open_named(folders, options) if several else None
    if opened is not None:
        for folder in opened.folders:
            require_server(folder.settings)
    else:
        root = folders[0].path if folders else Path(".")
        check_root(root)
        require_server(settings_for(root, options))
    if not (_is_terminal(sys.stdin) and _is_terminal(sys.stdout)):
        # Textual reading a stdin that is no terminal spins on its end of file forever.
        fail(
            "the explorer needs a terminal on stdin and stdout; in a script or a pipe use "
            "`explorer search QUERY`"
        )
    try:
        from explorer.tui.app import run_app, run_window
    except ImportError:
        fail("the TUI is not part of this build yet; use `explorer search QUERY ROOT`")
    if opened is not None:
        status = run_window(opened.folders, opened.scopes)
    else:
        status = run_app(root or Path("."), index_dir=index_dir, model=model, chroma_url=chroma_url)
    # The window is gone and its indexes are closed (the writers joined, their databases shut).
    _end(click.get_current_context(), status)


@main.command()
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path), metavar="[ROOT]...")
@index_dir_option
@model_option
@chroma_url_option
@json_option
@click.option("--keywords-only", is_flag=True, help="Update the keyword index only; embed later.")
@click.option(
    "--rebuild",
    is_flag=True,
    help="Build the index anew beside the old one, which serves searches until the new one "
    "is complete and replaces it.",
)
@click.option(
    "--only",
    is_flag=True,
    help="Update just the PATHS given after ROOT (files or folders; those gone from disk "
    "leave the index), e.g. from a git hook.",
)
@friendly_errors
def index(
    folders: tuple[Path, ...],
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    as_json: bool,
    keywords_only: bool,
    rebuild: bool,
    only: bool,
) -> None:
    """Build or update the index of each FOLDER (default: the config's default_collections,
    else the current folder); each folder has an index of its own.

    `explorer index ROOT --only PATH...` updates just those paths of ROOT.
    """
    from explorer.cli.commands import run_index
    from explorer.cli.several import index_several
    from explorer.cli.targets import IndexOptions
    from explorer.settings.config import folder_argument, folder_arguments

    root, paths = (folder_argument(folders[0]).path, folders[1:]) if folders else (None, ())
    if paths and not only:
        paths = tuple(argument.path for argument in folder_arguments(paths))
        not_folders = [path for path in paths if not path.is_dir()]
        if not_folders:
            fail(
                f"unexpected argument {quoted(not_folders[0])} (not a folder); to update just "
                "some files use --only PATH..."
            )
    if only and not paths:
        fail("--only needs the paths to update: explorer index ROOT --only PATH...")
    if only and rebuild:
        fail("--only and --rebuild exclude each other")
    if rebuild and keywords_only:
        fail("--rebuild swaps in a complete index, vectors included; drop --keywords-only")
    options = IndexOptions(index_dir, model, chroma_url)
    if not only and index_several(
        folder_arguments(folders), options, as_json, keywords_only, rebuild
    ):
        return
    run_index(
        root or Path("."),
        IndexOptions(index_dir, model, chroma_url),
        as_json,
        keywords_only,
        rebuild=rebuild,
        only=paths if only else None,
    )


@main.command()
@click.argument("query")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path), metavar="[ROOT]...")
@index_dir_option
@model_option
@chroma_url_option
@click.option(
    "--mode",
    type=click.Choice([mode.value for mode in SearchMode]),
    default="hybrid",
    show_default=True,
    help="Which legs rank the results.",
)
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="GLOB",
    help="Only files under this prefix or matching this glob (repeatable).",
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="GLOB",
    help="Leave out files under this prefix or matching this glob (repeatable).",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="TAG",
    help="Only files whose front matter has this tag (repeatable: any of them).",
)
@click.option(
    "--version",
    "versions",
    multiple=True,
    metavar="V",
    help="Only files whose front matter version is V (repeatable: any of them).",
)
@click.option(
    "--collection",
    "collections",
    multiple=True,
    metavar="NAME",
    help="Only the collection NAME (repeatable: any of them); with no FOLDER, opens the "
    "config's collection NAME.",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    metavar="NAME",
    help="Only the files of the config's scope NAME (repeatable: any of them).",
)
@click.option(
    "--limit", type=int, default=None, help="Files to show (default 10, or limit in config.toml)."
)
@click.option("--offset", type=int, default=0, help="Files to pass over first (the next page).")
@click.option("--per-file", type=int, default=3, show_default=True, help="Passages per file.")
@click.option(
    "--min-score",
    type=float,
    default=None,
    help="Hide passages scoring below this, 0–1 (default 0, or min_score in config.toml; "
    "see README for what the score is).",
)
@click.option("--explain", is_flag=True, help="Show each leg's rank and score and the filters.")
@click.option("--content", is_flag=True, help="Give each passage's full text, not a snippet.")
@click.option(
    "--max-tokens",
    type=int,
    default=None,
    metavar="N",
    help="Keep the best passages while they fit N model tokens; say what was cut.",
)
@click.option("--metadata-only", is_flag=True, help="Paths, titles, descriptions and scores only.")
@click.option(
    "--offsets",
    is_flag=True,
    help="With --json: each passage's chunk_id, start_char and end_char, and the highlights' "
    "character spans in its snippet.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "paths"]),
    default=None,
    help="text (default), json (as --json) or paths (path<TAB>score lines).",
)
@json_option
@one_shot
@friendly_errors
def search(
    query: str,
    folders: tuple[Path, ...],
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    mode: str,
    paths: tuple[str, ...],
    exclude: tuple[str, ...],
    tags: tuple[str, ...],
    versions: tuple[str, ...],
    collections: tuple[str, ...],
    scopes: tuple[str, ...],
    limit: int | None,
    offset: int,
    per_file: int,
    min_score: float | None,
    explain: bool,
    content: bool,
    max_tokens: int | None,
    metadata_only: bool,
    offsets: bool,
    output_format: str | None,
    as_json: bool,
) -> int:
    """Search the index of ROOT for QUERY; given several folders (ROOT...), search them all,
    ranked as one (default: the config's default_collections, else the current folder).

    QUERY may hold filter words too: path:GLOB, exclude:GLOB, tag:TAG, version:V,
    collection:NAME, scope:NAME (as in the TUI); quote a value with spaces: tag:"Data, AI".
    Results go to stdout, notes to stderr. Exit status: 0 when a file was found, 1 when none
    was, 2 on an error.
    """
    from explorer.api.requests import SearchOptions
    from explorer.cli.commands import SearchOutput, run_search
    from explorer.cli.several import search_several
    from explorer.cli.targets import IndexOptions, uses_collections
    from explorer.cli.targets import output_format as chosen_format
    from explorer.core.retrieval.agent_context import ContextOptions
    from explorer.settings.config import folder_arguments

    output = SearchOutput(chosen_format(as_json, output_format), explain, offsets)
    options = IndexOptions(index_dir, model, chroma_url)
    search_options = SearchOptions(
        mode=SearchMode(mode),
        paths=paths,
        tags=tags,
        versions=versions,
        exclude=exclude,
        limit=limit,
        offset=offset,
        per_file=per_file,
        min_score=min_score,
        collections=collections,
        scopes=scopes,
    )
    context = ContextOptions(content=content, max_tokens=max_tokens, metadata_only=metadata_only)
    named = folder_arguments(folders)
    if uses_collections(named, query, collections, scopes):
        return search_several(query, named, options, search_options, context, output)
    root = named[0].path if named else None
    return run_search(query, root, options, search_options, context, output)


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path), metavar="[FOLDER]...")
@index_dir_option
@model_option
@chroma_url_option
@file_root_option
@click.option("--limit", type=int, default=10, show_default=True, help="Files to show.")
@click.option(
    "--unlinked",
    is_flag=True,
    help="Only the related files FILE does not link to yet, each with the passages a link"
    " would join.",
)
@json_option
@one_shot
@friendly_errors
def related(
    file: Path,
    folders: tuple[Path, ...],
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    root: Path | None,
    limit: int,
    unlinked: bool,
    as_json: bool,
) -> None:
    """Show the files nearest in meaning to FILE, in FILE's folder and in every FOLDER given
    (default: FILE's folder, and the config's default_collections when one of them holds
    FILE)."""
    from explorer.cli.commands import run_related
    from explorer.cli.several import related_several
    from explorer.cli.targets import IndexOptions
    from explorer.settings.config import folder_arguments

    options = IndexOptions(index_dir, model, chroma_url)
    if related_several(file, folder_arguments(folders), options, root, limit, as_json, unlinked):
        return
    run_related(file, options, root, limit, as_json, unlinked)


@main.command()
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path), metavar="[ROOT]...")
@index_dir_option
@model_option
@chroma_url_option
@json_option
@one_shot
@friendly_errors
def status(
    folders: tuple[Path, ...],
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    as_json: bool,
) -> None:
    """Show what the index of each FOLDER holds and whether it needs a rebuild (default: the
    config's default_collections, else the current folder)."""
    from explorer.cli.commands import run_status
    from explorer.cli.several import status_several
    from explorer.cli.targets import IndexOptions
    from explorer.settings.config import folder_arguments

    options = IndexOptions(index_dir, model, chroma_url)
    named = folder_arguments(folders)
    if status_several(named, options, as_json):
        return
    run_status(named[0].path if named else None, options, as_json)


@main.command()
@click.argument("file", type=click.Path(path_type=Path))
@index_dir_option
@model_option
@chroma_url_option
@file_root_option
@json_option
@one_shot
@friendly_errors
def links(
    file: Path,
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    root: Path | None,
    as_json: bool,
) -> None:
    """Show what FILE links to and what links to it, with lines and whether targets exist.

    FILE may be a file that no longer exists: its backlinks are then the links to fix.
    """
    from explorer.cli.commands import run_links
    from explorer.cli.targets import IndexOptions

    run_links(file, IndexOptions(index_dir, model, chroma_url), root, as_json)


@main.command("check-refs")
@click.argument("root", type=click.Path(path_type=Path), required=False)
@index_dir_option
@model_option
@chroma_url_option
@json_option
@friendly_errors
def check_refs(
    root: Path | None,
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
    as_json: bool,
) -> None:
    """List every reference to a file that does not exist; exit 1 if there is any, else 0.

    The keyword index of ROOT is brought up to date first (no model is loaded), so this works
    in a git hook or CI without a prior `explorer index`.
    """
    from explorer.cli.commands import run_check_refs
    from explorer.cli.targets import IndexOptions

    if run_check_refs(root, IndexOptions(index_dir, model, chroma_url), as_json):
        sys.exit(EXIT_MISSING_REFERENCES)


@main.command("mcp")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path))
@index_dir_option
@model_option
@chroma_url_option
@friendly_errors
def mcp_command(
    folders: tuple[Path, ...],
    index_dir: Path | None,
    model: str | None,
    chroma_url: str | None,
) -> None:
    """Serve the index of each FOLDER to agents: a Model Context Protocol server on stdin/stdout
    (default: the config's default_collections, else the current folder).

    Tools: search, read, read_many, related, links, index_status and status; each file is
    also a resource explorer://PATH. It keeps every index current while it runs (or follows
    the explorer that writes it) and refuses every path outside the folders. Several folders
    are served as collections: results name theirs, and a collections tool lists them and the
    config's scopes.
    """
    from explorer.cli.commands import run_mcp
    from explorer.cli.several import mcp_several
    from explorer.cli.targets import IndexOptions
    from explorer.settings.config import folder_arguments

    options = IndexOptions(index_dir, model, chroma_url)
    named = folder_arguments(folders)
    if mcp_several(named, options):
        return
    run_mcp(named[0].path if named else None, options)


@main.command("_reader", hidden=True)
@click.argument("index_dir", type=click.Path(file_okay=False, path_type=Path))
def resident_reader(index_dir: Path) -> None:
    """Serve one-shot reads of INDEX_DIR (started by `explorer search` and the like)."""
    from explorer.cli.resident_server import serve

    serve(index_dir)
