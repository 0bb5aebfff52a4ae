"""Code for the chunker: sections at a source file's definitions.

A :class:`Definition` is a span of whole lines (its leading comments included) with a name and,
for a class-like one, the definitions inside it. :func:`definition_sections` turns the
definitions of a span into sections: one per definition, headed by the path of enclosing names
(``class Store > def open``), and one for each stretch of other code between them, headed by
the enclosing name. A definition too long for one chunk is split again at its members.

Python's definitions are found here with ``ast``; those of other languages by tree-sitter, in
:mod:`explorer.core.ingest.code_grammars`.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from explorer.core.ingest.windows import Chunker, Section

_CLOSING_ONLY = re.compile(r"(?:\s|[)\]};,]++(?:[ \t]*+//[^\n]*+)?|\bend\b|#endif\b[^\n]*+)*+")
"""Code that only closes what a definition opened (``}``, ``};  // ns``, ``end``, ``#endif``).
Possessive: a run of closers is taken whole, never split in every way (``  });`` lines followed
by other code cost 4x per line, minutes for 15 of them)."""


@dataclass(frozen=True)
class Definition:
    """A definition in a source file: its lines, its name and what it holds."""

    first: int
    """1-based first line, its leading comments, decorators and attributes included."""
    last: int
    """1-based last line (inclusive)."""
    name: str
    """How a heading names it: ``def first``, ``func main()``, ``public class Big``."""
    members: Callable[[], list[Definition]] | None = None
    """The definitions inside it (methods of a class), found when it must be split."""


def definition_sections(
    chunker: Chunker, definitions: list[Definition], lo: int, hi: int, prefix: str
) -> list[Section]:
    """Sections of lines ``lo``..``hi`` at ``definitions`` (in file order, within the span).

    The code between definitions is a section headed ``prefix``, except a stretch that only
    closes the enclosing block (a ``}`` or an ``end``), which stays with the definition before.
    A definition that starts inside the one before it (two on one line) stays with that one.
    """
    spans: list[tuple[int, int, Definition]] = []
    cursor = lo
    for definition in definitions:
        first = max(definition.first, cursor)
        if first <= min(definition.last, hi):
            spans.append((first, min(definition.last, hi), definition))
            cursor = spans[-1][1] + 1
    sections: list[Section] = []
    cursor = lo
    for index, (first, last, definition) in enumerate(spans):
        if first > cursor:
            sections.append(Section(*chunker.line_range(cursor, first - 1), prefix))
        following = spans[index + 1][0] - 1 if index + 1 < len(spans) else hi
        if last < following and _CLOSING_ONLY.fullmatch(
            chunker.text, *chunker.line_range(last + 1, following)
        ):
            last = following  # the lines that only close it belong to it
        heading = f"{prefix} > {definition.name}" if prefix else definition.name
        finer = None
        if definition.members is not None:
            finer = partial(_member_sections, chunker, definition.members, first, last, heading)
        sections.append(Section(*chunker.line_range(first, last), heading, finer))
        cursor = last + 1
    if cursor <= hi:
        sections.append(Section(*chunker.line_range(cursor, hi), prefix))
    return sections


def _member_sections(
    chunker: Chunker, members: Callable[[], list[Definition]], lo: int, hi: int, heading: str
) -> list[Section]:
    return definition_sections(chunker, members(), lo, hi, heading)


def python_sections(chunker: Chunker, text: str) -> list[Section] | None:
    """Sections at top-level ``def``/``class`` (classes split at methods when too long)."""
    definitions = python_definitions(text)
    if definitions is None:
        return None
    return definition_sections(chunker, definitions, 1, len(chunker.line_starts), "")


def python_definitions(text: str) -> list[Definition] | None:
    """The top-level ``def`` and ``class`` statements of Python source (a class's methods as
    its members); None when it does not parse."""
    if re.search(r"\r(?!\n)", text):
        return None  # ast would count lone CRs as line breaks; the line table does not
    try:
        # The file's own problems (e.g. "invalid escape sequence") are not ours to print.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(text)
    except Exception:  # noqa: BLE001 - syntax errors, NUL bytes, too deep nesting...
        return None
    lines = text.split("\n")
    return _python_definitions(tree.body, len(lines), lines)


def _python_definitions(body: list[ast.stmt], hi: int, lines: list[str]) -> list[Definition]:
    """The ``def`` and ``class`` statements of ``body``, ending by line ``hi`` at the latest."""
    found: list[Definition] = []
    floor = 1
    for index, node in enumerate(body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        col = node.col_offset
        start = _first_line(node)
        while (
            start > floor
            and lines[start - 2].lstrip().startswith("#")
            and _indent(lines[start - 2]) == col
        ):
            start -= 1  # leading comments belong to the definition
        limit = _first_line(body[index + 1]) - 1 if index + 1 < len(body) else hi
        end = node.end_lineno or node.lineno
        while end < limit and (not lines[end].strip() or _indent(lines[end]) > col):
            end += 1  # trailing comments indented into the body
        if isinstance(node, ast.ClassDef):
            members = partial(_python_definitions, node.body, end, lines)
            found.append(Definition(start, end, f"class {node.name}", members))
        else:
            found.append(Definition(start, end, f"def {node.name}"))
        floor = end + 1
    return found


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
