"""Code is cut at the definitions tree-sitter finds, in each language with a grammar."""

from __future__ import annotations

import re

import pytest

from explorer.core.ingest import code_grammars
from explorer.core.ingest.chunker import chunk_file
from explorer.core.ingest.code_grammars import GRAMMARS, Grammar
from explorer.core.ingest.documents import ChunkedFile
from tests.timing import at_most_cpu_seconds

_WORD = re.compile(r"\S+")


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _WORD.finditer(text)]


def sections(name: str, text: str, max_tokens: int = 240) -> list[tuple[str, int, int]]:
    """``(heading path, first line, last line)`` of each chunk, after checking nothing is lost."""
    result = chunk_file(name, text, words, max_tokens=max_tokens, overlap_tokens=2)
    _assert_exact_and_complete(text, result)
    return [(c.heading_path, c.start_line, c.end_line) for c in result.chunks]


def paths(name: str, text: str, max_tokens: int = 240) -> list[str]:
    """The heading paths of the chunks, a path windowed into several chunks named once."""
    found: list[str] = []
    for heading, _, _ in sections(name, text, max_tokens):
        if not found or found[-1] != heading:
            found.append(heading)
    return found


def _assert_exact_and_complete(text: str, result: ChunkedFile) -> None:
    covered = bytearray(len(text))
    for chunk in result.chunks:
        assert text[chunk.start_char : chunk.end_char] == chunk.text
        covered[chunk.start_char : chunk.end_char] = b"\1" * len(chunk.text)
    for match in _WORD.finditer(text):
        assert covered[match.start()], f"lost: {match.group()!r}"


def test_go_definitions_with_their_doc_comments_and_long_signatures() -> None:
    go = (
        'package app\n\nimport "fmt"\n\nconst (\n\tA = 1\n\tB = 2\n)\n\n'
        "// Server serves.\ntype Server struct {\n\tname string\n}\n\n"
        "// Handle answers.\nfunc (s *Server) Handle(w Writer,\n\tr *Request) error {\n"
        '\treturn nil\n}\n\nvar x = "func notadef() {"\n'
    )
    assert sections("a.go", go) == [
        ("", 1, 3),
        ("const (", 5, 8),
        ("type Server struct", 10, 13),
        ("func (s *Server) Handle(w Writer, r *Request) error", 15, 19),
        ("", 21, 21),
    ]


def test_rust_items_keep_their_attributes_and_impls_split_at_methods() -> None:
    rust = (
        "#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\nimpl Point {\n"
        "    /// Makes one.\n    pub fn new() -> Self {\n        Point { x: 0 }\n    }\n\n"
        "    pub fn x(&self) -> i32 {\n        self.x\n    }\n}\n"
    )
    assert sections("a.rs", rust)[:2] == [("pub struct Point", 1, 4), ("impl Point", 6, 15)]
    assert paths("a.rs", rust, max_tokens=14) == [
        "pub struct Point",
        "impl Point",
        "impl Point > pub fn new() -> Self",
        "impl Point > pub fn x(&self) -> i32",
    ]
    assert sections("a.rs", rust, max_tokens=14)[2][1] == 7  # the doc comment opens the method


def test_javascript_functions_classes_arrow_constants_and_module_patterns() -> None:
    js = (
        "import x from 'y';\n\nexport function a() {\n  return 1;\n}\n\n"
        "const b = (q) => {\n  return q;\n};\n\nclass C {\n  m() {}\n}\n\n"
        "module.exports = function plugin(opts) {\n  return opts;\n};\n\n"
        "(function setup() {\n  function inner() {\n    return 2;\n  }\n})();\n"
    )
    assert paths("app.js", js) == [
        "",
        "export function a()",
        "const b = (q) =>",
        "class C",
        "module.exports = function plugin(opts)",
        "(function setup()",
    ]


def test_typescript_and_tsx_declarations() -> None:
    ts = (
        'import { a } from "./a";\n\nexport interface Options {\n  depth: number;\n}\n\n'
        "@Component({})\nexport class View {\n  render(): void {}\n}\n\n"
        "export const load = async (id: string): Promise<void> => {\n  await a(id);\n};\n"
    )
    assert sections("a.ts", ts) == [
        ("", 1, 1),
        ("export interface Options", 3, 5),
        ("export class View", 7, 10),
        ("export const load = async (id: string): Promise<void> =>", 12, 14),
    ]
    tsx = 'export function App() {\n  return <div className="x">hi</div>;\n}\n'
    assert sections("App.tsx", tsx) == [("export function App()", 1, 3)]


def test_java_annotations_stay_with_the_method_they_annotate() -> None:
    methods = "\n\n".join(
        f"    @Override\n    public int m{i}(int a) {{\n        return a + {i};\n    }}"
        for i in range(3)
    )
    java = f"package p;\n\npublic class Big {{\n    private int x;\n\n{methods}\n}}\n"
    found = sections("Big.java", java, max_tokens=12)
    assert [h for h, _, _ in found] == [
        "",
        "public class Big",
        "public class Big > public int m0(int a)",
        "public class Big > public int m1(int a)",
        "public class Big > public int m2(int a)",
    ]
    assert found[2][1] == 6  # the @Override line


def test_kotlin_scala_and_swift_types_and_functions() -> None:
    kotlin = (
        "package p\n\n@Serializable\ndata class User(val name: String) {\n"
        '    fun greet(): String = "hi $name"\n}\n\nobject Registry {\n}\n\n'
        "fun main() {\n    println(1)\n}\n"
    )
    assert paths("a.kt", kotlin) == [
        "",
        "data class User(val name: String)",
        "object Registry",
        "fun main()",
    ]
    scala = (
        'object Main {\n  def main(args: Array[String]): Unit = {\n    println("hi")\n  }\n}\n\n'
        "trait Shape {\n  def area: Double\n}\n"
    )
    assert paths("a.scala", scala) == ["object Main", "trait Shape"]
    swift = (
        "import Foundation\n\nstruct Point {\n    var x: Int\n}\n\n"
        "protocol Shape {\n    func area() -> Double\n}\n\n"
        "extension Point: Shape {\n    func area() -> Double { 0 }\n}\n"
    )
    assert paths("a.swift", swift) == [
        "",
        "struct Point",
        "protocol Shape",
        "extension Point: Shape",
    ]


def test_csharp_namespaces_split_at_classes_and_members() -> None:
    csharp = (
        "using System;\n\nnamespace App\n{\n    [Serializable]\n    public class Store\n    {\n"
        "        public Store() { }\n\n        // Opens it.\n"
        "        public bool Open(string path)\n"
        "        {\n            return true;\n        }\n    }\n}\n"
    )
    assert paths("a.cs", csharp, max_tokens=10) == [
        "",
        "namespace App",
        "namespace App > public class Store",
        "namespace App > public class Store > public Store()",
        "namespace App > public class Store > public bool Open(string path)",
    ]


def test_c_and_cpp_definitions_not_prototypes() -> None:
    c = (
        "#include <stdio.h>\n\n/* A point. */\nstruct point {\n    int x;\n};\n\n"
        "int area(int w,\n         int h);\n\nstatic int\nsquare(int x)\n{\n    return x * x;\n}\n"
    )
    assert sections("a.c", c) == [
        ("", 1, 1),
        ("struct point", 3, 6),
        ("", 8, 9),  # a prototype is no definition
        ("static int square(int x)", 11, 15),
    ]
    cpp = (
        "#pragma once\n#ifndef GEO_H\nnamespace geo {\ntemplate <typename T>\nT twice(T v) {\n"
        "  return v + v;\n}\n\nclass Shape {\n public:\n  int sides() const { return 0; }\n};\n"
        "}  // namespace geo\n#endif\n"
    )
    assert paths("geo.h", cpp, max_tokens=12) == [
        "",
        "namespace geo",
        "namespace geo > template <typename T> T twice(T v)",
        "namespace geo > class Shape",
        "namespace geo > class Shape > int sides() const",
    ]


def test_ruby_php_and_shell() -> None:
    ruby = (
        'require "json"\n\nmodule Store\n  # A file store.\n  class FileStore\n'
        "    def initialize(path)\n      @path = path\n    end\n\n    def read\n"
        "      File.read(@path)\n    end\n  end\nend\n"
    )
    assert paths("a.rb", ruby, max_tokens=8) == [
        "",
        "module Store",
        "module Store > class FileStore",
        "module Store > class FileStore > def initialize(path)",
        "module Store > class FileStore > def read",
    ]
    # the comment above the class opens its chunk, though Ruby's tree keeps it in the module
    assert sections("a.rb", ruby, max_tokens=8)[2][1:] == (4, 5)
    php = (
        "<?php\n\nnamespace App;\n\n#[Entity]\nfinal class User\n{\n"
        '    public function name(): string\n    {\n        return "x";\n    }\n}\n\n'
        "function helper(int $a): int\n{\n    return $a;\n}\n"
    )
    assert sections("a.php", php) == [
        ("", 1, 3),
        ("final class User", 5, 12),
        ("function helper(int $a): int", 14, 17),
    ]
    shell = (
        '#!/bin/sh\nset -e\n\n# Prints usage.\nusage() {\n  echo "usage"\n}\n\n'
        "function build {\n  make all\n}\n\nusage\n"
    )
    assert sections("a.sh", shell) == [
        ("", 1, 2),
        ("usage()", 4, 7),
        ("function build", 9, 11),
        ("", 13, 13),
    ]


def test_every_extension_has_an_installed_grammar() -> None:
    missing = {ext for ext, grammar in GRAMMARS.items() if code_grammars._language(grammar) is None}
    assert not missing


def test_a_missing_grammar_or_a_parse_too_slow_falls_back_to_windows(monkeypatch) -> None:
    go = "package a\n\n" + "func f() {\n}\n\n" * 50
    missing = Grammar("tree_sitter_no_such_language", frozenset({"function_declaration"}))
    monkeypatch.setitem(GRAMMARS, "go", missing)
    assert paths("a.go", go) == [""]
    monkeypatch.undo()
    assert paths("a.go", go) == ["", "func f()"]
    monkeypatch.setattr(code_grammars, "_PARSE_SECONDS", -1.0)  # every parse is too slow
    assert paths("a.go", go) == [""]


@pytest.mark.parametrize("ext", sorted(GRAMMARS))
def test_broken_and_hostile_code_is_chunked_without_loss(ext: str) -> None:
    hostile = (
        "func class def fn {{{{ ((( \x00 \ud800 é\r\n" * 3
        + "".join("{" * 200 + "\n" for _ in range(3))
        + "function f() {\n  return 1;\n}\n" * 20
    )
    sections(f"x.{ext}", hostile, max_tokens=17)


def test_a_callback_pyramid_closing_before_more_code_is_chunked_at_once() -> None:
    """Lines that only close brackets (``});``) stay with the definition before them; deciding
    so tried every way to split the run of closers (4x per line: 15 lines took minutes)."""
    js = (
        "function outer() {\n"
        + "".join(f"{'  ' * n}step{n}(function () {{\n" for n in range(1, 16))
        + "".join(f"{'  ' * n}}});\n" for n in range(15, 0, -1))
        + "}\n"
        + "});\n" * 15
        + "run();\n"
    )
    with at_most_cpu_seconds(2.0):
        assert paths("pyramid.js", js, max_tokens=400)[0] == "function outer()"
