"""Source code: sections at its definitions, found by a parser of its language.

Python's definitions are read with ``ast`` (:mod:`explorer.core.ingest.code_sections`); those of
the languages in :data:`~explorer.core.ingest.code_grammars.GRAMMARS` with tree-sitter
(:mod:`explorer.core.ingest.code_grammars`). A file that does not parse, or whose grammar is not
installed (:data:`WINDOWED_EXTENSIONS`), is cut into windows like plain text. References are
path mentions in backticks (comments, docstrings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from explorer.core.ingest.code_grammars import GRAMMARS, grammar_definitions, grammar_sections
from explorer.core.ingest.code_sections import Definition, python_definitions, python_sections
from explorer.core.ingest.formats.contract import Document, DocumentFormat, PreviewKind, Structure
from explorer.core.ingest.markup import Heading
from explorer.core.ingest.windows import Chunker

PYTHON_EXTENSIONS = frozenset({"py", "pyi"})
WINDOWED_EXTENSIONS = frozenset(
    "lua pl pm r jl hs lhs ex exs erl hrl clj cljs cljc dart zig nim ml mli fs fsx elm "
    "groovy gradle m mm ps1 psm1 bat cmd fish el vim lisp scm rkt f90 f95 pas sol tf hcl "
    "proto graphql gql vue svelte nix cmake sty cls".split()
)
"""Languages read in windows, like plain text, for want of a grammar installed here (Lua,
Perl, R, Julia, Haskell, Elixir, Erlang, Clojure, Dart, Zig, OCaml, F#, Terraform, Protocol
Buffers, GraphQL, Vue, Nix, CMake, LaTeX packages…): found by search all the same."""


OUTLINE_DEPTH = 3
"""How deep the outline lists definitions: a module's classes, their methods, and one more."""


class CodeFormat(DocumentFormat):
    """Source code of Python and of every language with a tree-sitter grammar."""

    name = "code"
    extensions = PYTHON_EXTENSIONS | frozenset(GRAMMARS) | WINDOWED_EXTENSIONS
    preview_kind = PreviewKind.CODE
    summary = "sections at definitions (Python by ast, others by tree-sitter); others in windows"

    def outline(self, rel_path: str, text: str) -> Sequence[Heading]:
        """The file's definitions (a class's members under it), each at its first line."""
        ext = PurePosixPath(rel_path).suffix.lower().lstrip(".")
        if ext in PYTHON_EXTENSIONS:
            definitions = python_definitions(text)
        elif ext in GRAMMARS:
            definitions = grammar_definitions(text, GRAMMARS[ext])
        else:
            definitions = None
        if not definitions:
            return ()
        starts = [0] + [match.end() for match in re.finditer("\n", text)]
        headings: list[Heading] = []

        def add(found: list[Definition], level: int) -> None:
            for definition in found:
                start = starts[definition.first - 1]
                end = starts[definition.first] if definition.first < len(starts) else len(text)
                headings.append(Heading(start, level, definition.name, end))
                if definition.members is not None and level < OUTLINE_DEPTH:
                    add(definition.members(), level + 1)

        add(definitions, 1)
        return headings

    def structure(self, rel_path: str, document: Document, chunker: Chunker) -> Structure:
        ext = PurePosixPath(rel_path).suffix.lower().lstrip(".")
        if ext in PYTHON_EXTENSIONS:
            sections = python_sections(chunker, document.text)
        elif ext in GRAMMARS:
            sections = grammar_sections(chunker, GRAMMARS[ext])
        else:  # a language without a grammar here, or a file sniffed as code: windows
            sections = None
        return Structure(sections, self.link_facts(rel_path, document).references)
