"""The root of every error explorer raises on purpose.

An :class:`ExplorerError`'s text is one line meant for the user: a front end prints it as is
(the CLI adds ``explorer: error:``, the MCP server hands it to the agent, the TUI shows it in
place). Anything else that escapes is a bug, shown with its type name.

The core never names a front end's spelling of an option. An error about a request's values
names each by its field (``limit``, ``per_file``); ``{0}``, ``{1}`` … in its message mark
where, and :meth:`ExplorerError.naming` lets a front end spell them its own way (the CLI as
``--limit``, ``--per-file``). ``str(error)`` uses the field names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from explorer.core.safe_text import echoed


class ExplorerError(Exception):
    """An expected failure with a one-line message for the user."""

    def __init__(self, message: str = "", *, fields: Sequence[str] = ()) -> None:
        self.fields = tuple(fields)
        """The request fields the message is about, in placeholder order."""
        self.template = message if self.fields else literal(message)
        """The message as a :meth:`str.format` template: ``{0}`` … stand for the fields."""
        super().__init__(self.naming(str))

    def naming(self, name_of: Callable[[str], str]) -> str:
        """The message with each field spelled by ``name_of`` (e.g. as a CLI flag)."""
        return self.template.format(*(name_of(field) for field in self.fields))


def literal(text: str) -> str:
    """``text`` as part of a message template: its braces are not placeholders."""
    return text.replace("{", "{{").replace("}", "}}")


def describe(error: BaseException, name_of: Callable[[str], str] = str) -> str:
    """The one line a failure shows: an :class:`ExplorerError`'s own text (its fields spelled by
    ``name_of``; a front end passes its own spelling), an OS error with its file, or the type of
    an unexpected one."""
    if isinstance(error, ExplorerError):
        return error.naming(name_of)
    if isinstance(error, OSError) and error.filename:
        return f"{error.strerror or error}: {echoed(error.filename)}"
    return f"{type(error).__name__}: {error}"
