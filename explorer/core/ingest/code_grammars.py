"""Definitions in source code of languages other than Python, found by tree-sitter.

Each :class:`Grammar` names the tree-sitter grammar package of a language and the syntax node
types that are definitions in it (functions, methods, classes, types, modules). The parse is
exact where line-matching guessed: a ``func`` inside a string or comment is no definition, a
signature over several lines is one, and a prototype without a body is none.

The grammars are imported on first use (each a small compiled library from PyPI); a language
whose grammar is missing is chunked in windows, like plain text.
"""

from __future__ import annotations

import importlib
import re
import time
from dataclasses import dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING

from explorer.core.ingest.code_sections import Definition, definition_sections
from explorer.core.ingest.windows import Chunker, Section

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Tree

_SEARCH_DEPTH = 3
"""How deep below a file or a definition its definitions are looked for: deep enough for
``namespace { class { method } }`` and ``#ifdef`` blocks, not into every expression."""
_MAX_NESTING = 40
"""Deepest nesting looked into at all, through transparent nodes too."""
_TRANSPARENT = frozenset(
    {
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
        "declaration_list",
        "ERROR",
    }
)
"""Nodes looked through at no cost in depth: ``#ifdef`` guards, ``extern "C" {…}``, and the
stretches tree-sitter could not parse (it recovers the definitions around the error)."""
_PARSE_SECONDS = 2.0
_PARSE_SECONDS_PER_MB = 10.0
"""The time a parse may take (a guard against hangs: tree-sitter parses about 1 MB/s in the
worst grammars measured, C# with syntax errors at 0.06 MB/s)."""
_SIGNATURE_LINES = 4
"""A signature spread over more lines than this is named by its first line."""
_NAME_CHARS = 80
"""The longest name a heading gives a definition."""
_BODIES = frozenset(
    {"block", "compound_statement", "statement_block", "declaration_list", "field_declaration_list"}
)
"""Node types of a definition's body, where the grammar names no ``body`` field."""
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class"}
)
"""Values that make ``const name = …`` (or a class field) a definition in JavaScript."""
_ANNOTATION_LINE = re.compile(r"\s*(?:@|#\[|\[)")
"""A line above a definition that only annotates it (``@Override``, ``#[derive]``, ``[Test]``)."""


@dataclass(frozen=True)
class Grammar:
    """A language's tree-sitter grammar and the node types that are definitions in it."""

    module: str
    """The grammar package (``tree_sitter_go``)."""
    definitions: frozenset[str]
    """Node types that are definitions wherever they stand."""
    function: str = "language"
    """The package's function that returns the language."""
    wrappers: frozenset[str] = field(default_factory=frozenset)
    """Node types that are a definition when one stands directly in them (``export …``,
    ``template <…>``): the definition's lines start with the wrapper's."""
    assignments: frozenset[str] = field(default_factory=frozenset)
    """Node types that are a definition when they assign a function (``const f = () => …``)."""
    with_body: frozenset[str] = field(default_factory=frozenset)
    """Node types that are a definition only with a body (``struct s {…}``, not ``struct s;``)."""
    multiline: frozenset[str] = field(default_factory=frozenset)
    """Node types that are a definition only over several lines (a Go ``const (…)`` block)."""


_JS_DEFINITIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
    }
)
_TS_DEFINITIONS = _JS_DEFINITIONS | {
    "abstract_class_declaration",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "internal_module",
    "module",
}
_JS_WRAPPERS = frozenset(
    {
        "export_statement",
        "ambient_declaration",
        "expression_statement",
        "call_expression",  # (function () { … })(): a module in one function
        "parenthesized_expression",
    }
)
_JS_ASSIGNMENTS = frozenset(
    {
        "lexical_declaration",
        "variable_declaration",
        "field_definition",
        "public_field_definition",
        "assignment_expression",  # module.exports = function …
    }
)
_C_SPECIFIERS = frozenset({"struct_specifier", "union_specifier", "enum_specifier"})
_CPP_SPECIFIERS = _C_SPECIFIERS | {"class_specifier"}

_JAVASCRIPT = Grammar(
    "tree_sitter_javascript",
    _JS_DEFINITIONS,
    wrappers=_JS_WRAPPERS,
    assignments=_JS_ASSIGNMENTS,
)
_TS = {"wrappers": _JS_WRAPPERS, "assignments": _JS_ASSIGNMENTS}
_TYPESCRIPT = Grammar("tree_sitter_typescript", _TS_DEFINITIONS, "language_typescript", **_TS)
_TSX = Grammar("tree_sitter_typescript", _TS_DEFINITIONS, "language_tsx", **_TS)
_GO = Grammar(
    "tree_sitter_go",
    frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    multiline=frozenset({"const_declaration", "var_declaration"}),
)
_RUST = Grammar(
    "tree_sitter_rust",
    frozenset(
        {
            "function_item",
            "struct_item",
            "enum_item",
            "union_item",
            "trait_item",
            "impl_item",
            "macro_definition",
        }
    ),
    with_body=frozenset({"mod_item"}),
)
_JAVA = Grammar(
    "tree_sitter_java",
    frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
        }
    ),
)
_KOTLIN = Grammar(
    "tree_sitter_kotlin",
    frozenset(
        {"class_declaration", "object_declaration", "companion_object", "function_declaration"}
    ),
)
_CSHARP = Grammar(
    "tree_sitter_c_sharp",
    frozenset(
        {
            "namespace_declaration",
            "class_declaration",
            "struct_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
        }
    ),
)
_SCALA = Grammar(
    "tree_sitter_scala",
    frozenset(
        {
            "object_definition",
            "class_definition",
            "trait_definition",
            "enum_definition",
            "function_definition",
        }
    ),
)
_SWIFT = Grammar(
    "tree_sitter_swift",
    frozenset(
        {
            "class_declaration",
            "protocol_declaration",
            "function_declaration",
            "init_declaration",
            "deinit_declaration",
        }
    ),
)
_C = Grammar(
    "tree_sitter_c",
    frozenset({"function_definition"}),
    wrappers=frozenset({"type_definition"}),
    with_body=_C_SPECIFIERS,
)
_CPP = Grammar(
    "tree_sitter_cpp",
    frozenset({"function_definition", "namespace_definition"}),
    wrappers=frozenset({"type_definition", "template_declaration"}),
    with_body=_CPP_SPECIFIERS,
)
_RUBY = Grammar(
    "tree_sitter_ruby",
    frozenset({"module", "class", "singleton_class", "method", "singleton_method"}),
)
_PHP = Grammar(
    "tree_sitter_php",
    frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
            "enum_declaration",
            "function_definition",
            "method_declaration",
        }
    ),
    "language_php",
    with_body=frozenset({"namespace_definition"}),
)
_BASH = Grammar("tree_sitter_bash", frozenset({"function_definition"}))

GRAMMARS: dict[str, Grammar] = {
    **dict.fromkeys(("js", "jsx", "mjs", "cjs"), _JAVASCRIPT),
    **dict.fromkeys(("ts", "mts", "cts"), _TYPESCRIPT),
    "tsx": _TSX,
    "go": _GO,
    "rs": _RUST,
    "java": _JAVA,
    **dict.fromkeys(("kt", "kts"), _KOTLIN),
    "cs": _CSHARP,
    **dict.fromkeys(("scala", "sc"), _SCALA),
    "swift": _SWIFT,
    "c": _C,
    **dict.fromkeys(("h", "cpp", "hpp", "cc", "cxx", "hh", "hxx"), _CPP),  # a .h may be either
    "rb": _RUBY,
    "php": _PHP,
    **dict.fromkeys(("sh", "bash", "zsh"), _BASH),
}
"""The grammar of each file extension (lower case, without the dot)."""


@cache
def _language(grammar: Grammar) -> Language | None:
    """The grammar's language, or None when its package is not installed."""
    from tree_sitter import Language

    try:
        module = importlib.import_module(grammar.module)
    except ImportError:
        return None
    return Language(getattr(module, grammar.function)())


def grammar_sections(chunker: Chunker, grammar: Grammar) -> list[Section] | None:
    """Sections of the chunker's text at its top-level definitions; None without the grammar."""
    definitions = grammar_definitions(chunker.text, grammar)
    if definitions is None:
        return None
    return definition_sections(chunker, definitions, 1, len(chunker.line_starts), "")


def grammar_definitions(text: str, grammar: Grammar) -> list[Definition] | None:
    """The top-level definitions of ``text`` in ``grammar``'s language (a class's members
    found when asked); None without the grammar or when the parse fails."""
    language = _language(grammar)
    if language is None:
        return None
    tree = _parse(language, text.encode("utf-8", "surrogatepass"))
    if tree is None:
        return None
    return _DefinitionReader(grammar, text.split("\n")).inside(tree.root_node)


def _parse(language: Language, source: bytes) -> Tree | None:
    """The syntax tree of ``source``; None when parsing it takes too long (a pathological
    file falls back to windows rather than holding up the index)."""
    from tree_sitter import Parser

    budget = _PARSE_SECONDS + _PARSE_SECONDS_PER_MB * len(source) / 1e6
    started = time.perf_counter()

    def read(offset: int, _point: object) -> bytes:
        return source[offset : offset + 65_536]

    def too_long(_offset: int, _has_error: bool) -> bool:
        return time.perf_counter() - started > budget

    try:
        return Parser(language).parse(read, progress_callback=too_long)
    except ValueError:  # cancelled by too_long
        return None


class _DefinitionReader:
    """Finds the definitions in a syntax tree and names them by their first line."""

    def __init__(self, grammar: Grammar, lines: list[str]) -> None:
        self.grammar = grammar
        self.lines = lines

    def inside(self, node: Node) -> list[Definition]:
        """The outermost definitions below ``node``, in file order."""
        found: list[Definition] = []
        self._collect(node, 1, 1, found)
        return found

    def _collect(
        self,
        node: Node,
        depth: int,
        nesting: int,
        found: list[Definition],
        above: tuple[Node, Node] | None = None,
    ) -> None:
        """Add the definitions below ``node`` to ``found``. ``above`` is a run of comments
        (first, last) right above ``node``, which a definition opening ``node`` takes along
        (Ruby keeps the comment above a class in the module, outside the class's block)."""
        leading, previous = above if above is not None else (None, None)
        for child in node.named_children:
            if _is_leading(child) and not _is_trailing(child, previous):
                if leading is None or _apart(previous, child):
                    leading = child  # a blank line starts a new run of comments
            else:
                inner = self._definition(child)
                if inner is not None:
                    first = child if leading is None or _apart(previous, child) else leading
                    found.append(self._define(first, child, inner))
                elif child.named_child_count and nesting < _MAX_NESTING:
                    run = None
                    if leading is not None and previous is not None and not _apart(previous, child):
                        run = (leading, previous)
                    if child.type in _TRANSPARENT:
                        self._collect(child, depth, nesting + 1, found, run)
                    elif depth < _SEARCH_DEPTH:
                        self._collect(child, depth + 1, nesting + 1, found, run)
                leading = None
            previous = child

    def _definition(self, node: Node) -> Node | None:
        """The definition ``node`` is (itself, or the one it wraps), or None."""
        grammar, kind = self.grammar, node.type
        if kind in grammar.definitions:
            return node
        if kind in grammar.with_body:
            return node if node.child_by_field_name("body") is not None else None
        if kind in grammar.multiline:
            return node if node.end_point.row > node.start_point.row else None
        if kind in grammar.assignments:
            return _assigned_function(node)
        if kind in grammar.wrappers:
            for child in node.named_children:
                if (inner := self._definition(child)) is not None:
                    return inner
                if child.type in _FUNCTION_VALUES:
                    return child
        return None

    def _define(self, first: Node, outer: Node, inner: Node) -> Definition:
        """A definition from ``first`` (a leading comment or ``outer``) to ``outer``'s end."""
        start, end = first.start_point.row + 1, outer.end_point.row + 1
        members = partial(self.inside, inner)
        return Definition(start, end, self._name(outer, inner), members)

    def _name(self, outer: Node, inner: Node) -> str:
        """The definition's signature: its text up to its body, annotations left out.

        ``static PyObject *`` over ``name(args)`` reads ``static PyObject * name(args)``; a
        signature longer than a few lines is named by its first line.
        """
        row, last = outer.start_point.row, outer.end_point.row
        lines = self.lines
        while row < last and _ANNOTATION_LINE.match(lines[row]):
            row += 1  # @Override, #[derive(…)], [Test] above the signature
        end = _signature_end(inner)
        if end is None or not row <= end[0] <= row + _SIGNATURE_LINES:
            text = (lines[row] if row < len(lines) else "").split("{")[0]
        else:
            end_row, end_column = end
            last_line = lines[end_row].encode("utf-8", "surrogatepass")[:end_column]
            text = " ".join([*lines[row:end_row], last_line.decode("utf-8", "replace")])
        return " ".join(text.split()).rstrip(":=").rstrip()[:_NAME_CHARS]


def _signature_end(node: Node) -> tuple[int, int] | None:
    """Where a definition's signature ends: at its body, or at a comment before the body."""
    body = node.child_by_field_name("body")
    if body is None:
        body = next(
            (c for c in node.named_children if c.type in _BODIES or c.type.endswith("_body")),
            None,
        )
    if body is None:
        return None
    comment = next((c for c in node.named_children if "comment" in c.type), None)
    if comment is not None and comment.start_byte < body.start_byte:
        return comment.start_point.row, comment.start_point.column
    return body.start_point.row, body.start_point.column


def _is_leading(node: Node) -> bool:
    """A comment, an attribute or a decorator: it belongs to the definition right below it."""
    return "comment" in node.type or node.type in ("attribute_item", "decorator")


def _is_trailing(node: Node, previous: Node | None) -> bool:
    """A comment on the same line as the end of the node before it (``x = 1  // note``)."""
    return previous is not None and previous.end_point.row == node.start_point.row


def _apart(above: Node | None, below: Node) -> bool:
    """Whether a blank line (or more) stands between two nodes."""
    return above is None or above.end_point.row + 1 < below.start_point.row


def _assigned_function(node: Node) -> Node | None:
    """The function or class ``node`` (or a declarator in it) is given as its value, or None."""
    for candidate in (node, *node.named_children):
        value = candidate.child_by_field_name("value") or candidate.child_by_field_name("right")
        if value is not None and value.type in _FUNCTION_VALUES:
            return value
    return None
