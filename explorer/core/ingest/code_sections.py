"""Code for the chunker: sections at Python's top-level definitions (found with ``ast``) and at
the definition lines of other language families (found with a regular expression per family).
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import partial

from explorer.core.ingest.windows import Chunker, Section

_C, _HASH = ("//", "/*", "*", "@", "#[", "["), ("#",)  # comment/annotation lines above a def
_MODS = (
    r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|partial|"
    r"override|inline|suspend|async|virtual|readonly|implicit|case|lazy|fileprivate|@\w+)\s+)"
)
_FAMILIES = [  # extensions, definition line (after its indentation), comment/annotation prefixes
    (
        "js jsx ts tsx mjs cjs",
        r"(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:abstract\s+)?"
        r"(?:async\s+)?(?:function\b|class\b|interface\b|type\s+\w|enum\b|namespace\b|(?:const|let"
        r"|var)\s+\w+\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)[^=]*=>|\w+\s*=>))|export\s",
        _C,
    ),
    ("go", r"(?:func|type)\b|(?:var|const)\s*\(", _C),
    (
        "rs",
        r"(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|unsafe|const|extern(?:\s+\"[^\"]*\")?)\s+)*"
        r"(?:fn|struct|enum|trait|impl|mod|type|union|macro_rules!)\b",
        _C,
    ),
    (
        "java kt kts cs scala swift",
        _MODS + r"*(?:class|interface|enum|record|object|trait|"
        r"struct|protocol|extension|fun|def|func|namespace|typealias|actor|init)\b|"
        + _MODS
        + r"+[^=;(]*\(",
        _C,
    ),
    (
        "c h cpp hpp cc cxx hh",
        r"template\s*<|(?:typedef\s+)?(?:struct|class|union|enum|"
        r"namespace)\b|(?!(?:if|for|while|switch|return|else|do|case|typedef)\b)"
        r"[A-Za-z_][\w:<>,*&~ \t]*\(",
        _C,
    ),
    ("rb", r"(?:class|module|def)\b", _HASH),
    (
        "php",
        r"(?:(?:abstract|final|readonly)\s+)*(?:function|class|interface|trait|enum)\b",
        _C + _HASH,
    ),
    ("sh bash zsh", r"function\s+[\w-]+|[\w-]+\s*\(\s*\)", _HASH),
]
CODE_FAMILIES = [(frozenset(e.split()), re.compile(p), c) for e, p, c in _FAMILIES]


def python_sections(chunker: Chunker, text: str) -> list[Section] | None:
    """Sections at top-level ``def``/``class`` (classes split at methods when too long)."""
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

    def partition(body: list[ast.stmt], lo: int, hi: int, prefix: str) -> list[Section]:
        sections: list[Section] = []
        cursor = lo
        for index, node in enumerate(body):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            col = node.col_offset
            start = _first_line(node)
            while (
                start > cursor
                and lines[start - 2].lstrip().startswith("#")
                and _indent(lines[start - 2]) == col
            ):
                start -= 1  # leading comments belong to the definition
            limit = _first_line(body[index + 1]) - 1 if index + 1 < len(body) else hi
            end = node.end_lineno or node.lineno
            while end < limit and (not lines[end].strip() or _indent(lines[end]) > col):
                end += 1  # trailing comments indented into the body
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            heading = f"{prefix} > {kind} {node.name}" if prefix else f"{kind} {node.name}"
            if start > cursor:
                sections.append(Section(*chunker.line_range(cursor, start - 1), prefix))
            finer = partial(partition, node.body, start, end, heading) if kind == "class" else None
            sections.append(Section(*chunker.line_range(start, end), heading, finer))
            cursor = end + 1
        if cursor <= hi:
            sections.append(Section(*chunker.line_range(cursor, hi), prefix))
        return sections

    return partition(tree.body, 1, len(lines), "")


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def code_sections(
    chunker: Chunker,
    lo: int,
    hi: int,
    heading: str,
    pattern: re.Pattern[str],
    comments: tuple[str, ...],
    nested: bool,
) -> list[Section]:
    """Sections of lines ``lo``..``hi`` at definition lines.

    At the top (``nested`` False) definitions start at column 0, and each definition can be split
    again at its own members: the matching lines with the smallest indentation inside it.
    """
    text = chunker.text

    def line(number: int) -> str:
        return text[slice(*chunker.line_range(number, number))].rstrip("\r\n")

    found: list[tuple[int, int, str]] = []
    for number in range(lo + nested, hi + 1):
        current = line(number)
        body = current.lstrip()
        if body and pattern.match(body) and not current.rstrip().endswith(";"):
            found.append((number, len(current) - len(body), body))
    depth = min((d for _, d, _ in found if d > 0), default=-1) if nested else 0
    bounds: list[tuple[int, str]] = []
    for number, indent, body in found:
        if indent != depth:
            continue
        first, floor = number, bounds[-1][0] if bounds else lo
        while first - 1 > floor and line(first - 1).strip().startswith(comments):
            first -= 1  # leading comments and annotations belong to the definition
        name = body.split("{")[0].strip().rstrip(":").strip()[:80]
        bounds.append((first, f"{heading} > {name}" if heading else name))
    if not bounds or bounds[0][0] > lo:
        bounds.insert(0, (lo, heading))
    sections = []
    for index, (first, name) in enumerate(bounds):
        last = bounds[index + 1][0] - 1 if index + 1 < len(bounds) else hi
        finer = (
            None
            if nested or name == heading
            else partial(code_sections, chunker, first, last, name, pattern, comments, True)
        )
        sections.append(Section(*chunker.line_range(first, last), name, finer))
    return sections
