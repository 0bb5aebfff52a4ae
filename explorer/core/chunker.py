"""Split a file's text into chunks that follow its structure and fit the embedding model.

Markdown is cut at its headings, Python at its top-level definitions (found with ``ast``), other
code at the definition lines of its language family, reStructuredText at its underlined titles,
and anything else into token windows that prefer paragraph breaks. A section longer than
``max_tokens`` is split further (a Python class at its methods, other code at its indented
members) and, when still too long, into overlapping windows cut at line boundaries.

Every chunk's text is ``text[start_char:end_char]`` of the original text (front matter included
in the offsets but never in a chunk), so a hit can be shown exactly where it stands in the file.
"""

from __future__ import annotations

import ast
import re
import tomllib
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import PurePosixPath

import yaml

from explorer.core.documents import Chunk, ChunkedFile

TokenSpans = Callable[[str], list[tuple[int, int]]]
"""Character ``(start, end)`` of each model token in a text, without special tokens."""

MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx"})
PYTHON_EXTENSIONS = frozenset({"py", "pyi"})
_FRONT_MATTER_EXTENSIONS = MARKDOWN_EXTENSIONS | {"html", "htm"}

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
_CODE_FAMILIES = [(frozenset(e.split()), re.compile(p), c) for e, p, c in _FAMILIES]

_YAML_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*\r?$\n?", re.M | re.S)
_TOML_FENCE = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)^\+\+\+[ \t]*\r?$\n?", re.M | re.S)
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$")
_MD_CANDIDATE = re.compile(r"^ {0,3}(?:#|`{3}|~{3}).*$", re.M)
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_RST_ADORNMENT = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}[ \t]*\r?$")
_NON_BLANK = re.compile(r"\S")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # safe_load, in C when available


@dataclass
class _Section:
    """A span of the text to chunk, and how to split it more finely if it is too long."""

    start: int
    end: int
    heading: str
    finer: Callable[[], list[_Section]] | None = None


def parse_front_matter(text: str) -> tuple[dict[str, str], int]:
    """Metadata from YAML (``---``) or TOML (``+++``) front matter, and where the body starts.

    Keeps ``title``, ``description``, ``tags`` (a list is comma-joined) and ``version`` as
    strings. Without front matter, or when it does not parse into a mapping, returns ``({}, 0)``
    and the fenced block counts as body text. Never raises.
    """
    yaml_load = partial(yaml.load, Loader=_YAML_LOADER)
    for fence, load in ((_YAML_FENCE, yaml_load), (_TOML_FENCE, tomllib.loads)):
        if (match := fence.match(text)) is None:
            continue
        try:
            data = load(match.group(1))
        except Exception:  # noqa: BLE001 - malformed front matter is just body text
            return {}, 0
        if not isinstance(data, dict):
            return {}, (match.end() if data is None else 0)
        metadata = {}
        for key in ("title", "description", "tags", "version"):
            value = data.get(key)
            if isinstance(value, (list, tuple)):
                value = ", ".join(str(item) for item in value if item is not None)
            if value is not None and str(value).strip():
                metadata[key] = str(value).strip()
        return metadata, match.end()
    return {}, 0


class _Chunker:
    """Turns sections of one text into chunks no longer than ``max_tokens`` tokens."""

    def __init__(self, text: str, token_spans: TokenSpans, max_tokens: int, overlap: int) -> None:
        self.text = text
        self.token_spans = token_spans
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.chunks: list[Chunk] = []

    def line_range(self, first: int, last: int) -> tuple[int, int]:
        """Character span of the 1-based lines ``first``..``last`` (inclusive)."""
        starts = self.line_starts
        return starts[first - 1], starts[last] if last < len(starts) else len(self.text)

    def line_start(self, pos: int) -> int:
        return self.line_starts[bisect_right(self.line_starts, pos) - 1]

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """The span without leading blank lines and trailing whitespace; None if blank."""
        first = _NON_BLANK.search(self.text, start, end)
        if first is None:
            return None
        end = start + len(self.text[start:end].rstrip())
        return max(start, self.line_start(first.start())), end

    def emit(self, start: int, end: int, heading: str) -> None:
        if (span := self.trim(start, end)) is not None:
            start, end = span
            first, last = (bisect_right(self.line_starts, pos) for pos in (start, end - 1))
            self.chunks.append(Chunk(self.text[start:end], heading, first, last, start, end))

    def add(self, section: _Section) -> None:
        """Chunk one section: whole, at its finer structure, or in windows."""
        span = self.trim(section.start, section.end)
        if span is None:
            return
        start, end = span
        spans = self.token_spans(self.text[start:end])
        if len(spans) <= self.max_tokens:
            self.emit(start, end, section.heading)
            return
        finer = section.finer() if section.finer is not None else []
        if len(finer) > 1:
            for part in finer:
                self.add(part)
            return
        self.windows(start, end, [(a + start, b + start) for a, b in spans], section.heading)

    def windows(self, start: int, end: int, spans: list[tuple[int, int]], heading: str) -> None:
        """Overlapping windows of at most ``max_tokens`` tokens over ``text[start:end]``."""
        text, n = self.text, len(spans)
        starts = [a for a, _ in spans]
        i, ws, prev_cut = 0, start, start
        while i < n:
            j = min(i + self.max_tokens, n)
            while True:
                if j == n:
                    cut, mid_line = end, False
                else:
                    cut, mid_line = self._cut(spans, i, j, prev_cut)
                if not (mid_line or ws != self.line_start(ws)) or j - i <= 1:
                    break
                if _at_word_edge(text, ws) and _at_word_edge(text, cut):
                    break  # word-piece tokens never span white space: the count holds
                count = len(self.token_spans(text[ws:cut]))  # a mid-word edge may re-tokenize
                if count <= self.max_tokens:
                    break
                j = max(i + 1, j - (count - self.max_tokens))
            self.emit(ws, cut, heading)
            k = bisect_left(starts, cut)
            if k >= n:
                return
            prev_cut = cut
            nxt = max(k - self.overlap, i + 1)
            # The next window starts near ``nxt``, at a line start if one is close, else at a
            # sentence start, else at a word boundary, else at a token.
            floor = max(i + 1, k - 2 * self.overlap)
            near = sorted(range(floor, k), key=lambda m: (m > nxt, abs(m - nxt)))
            m = next((m for m in near if self.line_start(starts[m]) == starts[m]), None)
            if m is None:
                m = next((m for m in near if _sentence_start(text, starts[m])), None)
            if m is None:
                m = next((m for m in range(nxt, i, -1) if text[starts[m] - 1].isspace()), nxt)
            ws, i = starts[m], m

    def _cut(self, spans: list[tuple[int, int]], i: int, j: int, floor: int) -> tuple[int, bool]:
        """Where a window holding tokens ``i``..``j-1`` ends; True if that is not a line break."""
        text, target, first = self.text, spans[j][0], spans[i][0]
        line = self.line_start(target)
        half = i + (j - i) // 2
        if line > max(first, floor) and bisect_left(spans, (line, -1)) >= half:
            para = max(text.rfind("\n\n", first, target), text.rfind("\n\r\n", first, target))
            if para >= 0:
                para = self.line_start(para + 1)
                starts_before = bisect_left(spans, (para, -1)) - i
                if para > floor and para > first and starts_before >= (j - i) // 2:
                    return para, False
            return line, False
        for m in range(j, half, -1):  # a sentence end in the second half of the window
            if spans[m][0] > floor and _sentence_start(text, spans[m][0]):
                return spans[m][0], True
        for m in range(j, i, -1):
            if spans[m][0] > floor and text[spans[m][0] - 1].isspace():
                return spans[m][0], True
        return spans[j - 1][1], True


def _at_word_edge(text: str, pos: int) -> bool:
    """True if ``pos`` sits next to white space (or at an end) of ``text``."""
    return pos <= 0 or pos >= len(text) or text[pos - 1].isspace() or text[pos].isspace()


def _sentence_start(text: str, pos: int) -> bool:
    """True if ``pos`` follows a sentence end and a space (``…done. Next``)."""
    return pos >= 2 and text[pos - 1].isspace() and text[pos - 2] in ".?!;"


def _markdown_headings(text: str, body: int) -> list[tuple[int, int, str, int]]:
    """``(start, level, title, end of line)`` of each ATX heading outside fenced code."""
    headings, fence = [], ""
    for line in _MD_CANDIDATE.finditer(text, body):  # only lines that may open a fence or heading
        opener = _FENCE.match(line.group())
        if fence:
            if (
                opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line.group()[opener.end() :].strip()
            ):
                fence = ""
        elif opener:
            fence = opener.group(1)
        elif match := _ATX.match(line.group()):
            title = _ANCHOR.sub("", match.group(2) or "").strip()  # drop a `{#id}` attribute
            headings.append((line.start(), len(match.group(1)), title, line.end()))
    return headings


def _rst_headings(chunker: _Chunker, body: int) -> list[tuple[int, int, str, int]]:
    """Headings of reStructuredText: a line underlined (and maybe overlined) with punctuation."""
    lines, styles, headings = chunker.text.split("\n"), [], []
    for number in range(1, len(lines)):
        title, under = lines[number - 1].strip(), lines[number].rstrip()
        before = lines[number - 2].rstrip() if number >= 2 else ""
        match = _RST_ADORNMENT.match(under)
        if (
            not match
            or not title
            or _RST_ADORNMENT.match(title)
            or len(under) < len(title)
            or before
            and before != under
        ):
            continue  # not a title, or one that does not follow a blank line or its overline
        start = chunker.line_starts[number - 2 if before else number - 1]
        if start >= body and (not headings or start >= headings[-1][3]):
            style = match.group(1) + ("/" if before else "")
            styles += [] if style in styles else [style]
            line_end = chunker.line_range(number + 1, number + 1)[1]
            headings.append((start, styles.index(style), title, line_end))
    return headings


def _heading_sections(
    text: str, body: int, title: str, headings: list[tuple[int, int, str, int]]
) -> list[_Section]:
    """A section per heading, with the path of enclosing headings; heading-only ones merge on."""
    sections = [_Section(body, headings[0][0] if headings else len(text), title)]
    stack: list[tuple[int, str]] = []
    pending = None
    for index, (pos, level, heading, line_end) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        end = headings[index + 1][0] if index + 1 < len(headings) else len(text)
        start = pos if pending is None else pending
        if not text[line_end:end].strip() and index + 1 < len(headings):
            pending = start  # heading only: merge into the next section
            continue
        pending = None
        sections.append(_Section(start, end, " > ".join(h for _, h in stack if h)))
    return sections


def _python_sections(chunker: _Chunker, text: str) -> list[_Section] | None:
    """Sections at top-level ``def``/``class`` (classes split at methods when too long)."""
    if re.search(r"\r(?!\n)", text):
        return None  # ast would count lone CRs as line breaks; the line table does not
    try:
        tree = ast.parse(text)
    except Exception:  # noqa: BLE001 - syntax errors, NUL bytes, too deep nesting...
        return None
    lines = text.split("\n")

    def partition(body: list[ast.stmt], lo: int, hi: int, prefix: str) -> list[_Section]:
        sections: list[_Section] = []
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
                sections.append(_Section(*chunker.line_range(cursor, start - 1), prefix))
            finer = partial(partition, node.body, start, end, heading) if kind == "class" else None
            sections.append(_Section(*chunker.line_range(start, end), heading, finer))
            cursor = end + 1
        if cursor <= hi:
            sections.append(_Section(*chunker.line_range(cursor, hi), prefix))
        return sections

    return partition(tree.body, 1, len(lines), "")


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_sections(
    chunker: _Chunker,
    lo: int,
    hi: int,
    heading: str,
    pattern: re.Pattern[str],
    comments: tuple[str, ...],
    nested: bool,
) -> list[_Section]:
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
            else partial(_code_sections, chunker, first, last, name, pattern, comments, True)
        )
        sections.append(_Section(*chunker.line_range(first, last), name, finer))
    return sections


def chunk_file(
    rel_path: str,
    text: str,
    token_spans: TokenSpans,
    max_tokens: int = 240,
    overlap_tokens: int = 32,
) -> ChunkedFile:
    """Split ``text`` (the file at ``rel_path``) into chunks of at most ``max_tokens`` tokens.

    The kind of split follows the extension of ``rel_path``; windows of a long section overlap by
    ``overlap_tokens`` tokens (at most half a window). Chunks come in file order, hold
    ``text[start_char:end_char]`` and never include front matter (its fields are the metadata).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    overlap = max(0, min(overlap_tokens, max_tokens // 2))
    ext = PurePosixPath(rel_path).suffix.lower().lstrip(".")
    metadata, body = parse_front_matter(text) if ext in _FRONT_MATTER_EXTENSIONS else ({}, 0)
    chunker = _Chunker(text, token_spans, max_tokens, overlap)
    sections: list[_Section] | None = None
    if ext in MARKDOWN_EXTENSIONS:
        headings = _markdown_headings(text, body)
        sections = _heading_sections(text, body, metadata.get("title", ""), headings)
    elif ext in PYTHON_EXTENSIONS:
        sections = _python_sections(chunker, text)
    elif ext == "rst":
        sections = _heading_sections(text, body, "", _rst_headings(chunker, body))
    else:
        for extensions, pattern, comments in _CODE_FAMILIES:
            if ext in extensions:
                last_line = len(chunker.line_starts)
                sections = _code_sections(chunker, 1, last_line, "", pattern, comments, False)
                break
    for section in sections or [_Section(body, len(text), "")]:
        chunker.add(section)
    return ChunkedFile(chunks=chunker.chunks, metadata=metadata)
