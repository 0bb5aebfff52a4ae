"""One error hierarchy: every error explorer raises on purpose is an ExplorerError, and the
core names request fields, never a front end's flags."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import explorer
from explorer.cli.entry import describe, exit_code
from explorer.core.errors import ExplorerError
from explorer.core.errors import describe as describe_error
from explorer.core.retrieval.query import QueryError
from explorer.core.store.chroma_server import ServerAddress, ServerUnreachable, unreachable

LEFT_OUT = {"explorer.tui", "explorer.__main__"}
"""The TUI imports Textual (its ThemeFileError is checked below); __main__ runs the CLI."""


def error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(explorer.__path__, "explorer."):
        name = module_info.name
        if any(name == left or name.startswith(left + ".") for left in LEFT_OUT):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[value.__qualname__] = value
    return found


def test_every_error_of_explorer_is_an_explorer_error():
    plumbing = {"OneLineUsageError", "ToolFailure", "RequestRefused"}
    """A click usage error, the MCP SDK's failure and the resident reader's hand-back."""
    outside = sorted(
        name
        for name, cls in error_classes().items()
        if not issubclass(cls, ExplorerError) and name not in plumbing
    )
    assert outside == []
    from explorer.tui.themes import ThemeFileError

    assert issubclass(ThemeFileError, ExplorerError)


def test_the_cli_spells_fields_as_flags_and_others_as_given():
    error = QueryError("{0} and {1} must be at least 1", fields=("limit", "per_file"))
    assert str(error) == "limit and per_file must be at least 1"
    assert describe(error) == "--limit and --per-file must be at least 1"
    assert describe_error(error) == str(error)
    assert exit_code(error) == 2


def test_braces_in_user_text_are_not_placeholders():
    error = ServerUnreachable("no server at {host}")
    assert str(error) == describe(error) == "no server at {host}"
    lost = unreachable(ServerUnreachable, ServerAddress("h{0}", 8000, False), "refused {x}")
    assert "h{0}:8000 (refused {x})" in str(lost)
    assert str(lost).endswith("or drop chroma_url / $EXPLORER_CHROMA_URL to use the local store")
    assert "or drop --chroma-url / $EXPLORER_CHROMA_URL" in describe(lost)


def test_an_unexpected_error_names_its_type():
    assert describe(KeyError("x")) == "KeyError: 'x' (set EXPLORER_DEBUG=1 for details)"
    assert exit_code(KeyboardInterrupt()) == 130
