"""``.gitignore`` patterns as git reads them, matched without backtracking.

The semantics are checked twice: a table of what each kind of pattern means (git 2.39's
answers, written out), and, where git is installed, the scanner's walk against
``git ls-files --others --exclude-standard`` on the same trees: a fixed battery of the tricky
cases and a seeded random one.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from explorer.core.ingest.ignore_patterns import IgnorePatterns, parse_line
from explorer.core.ingest.scanner import ScanRules, scan
from explorer.core.ingest.wildcards import Token, TokenKind, Wildcard
from tests.timing import at_most_cpu_seconds

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MEANINGS = [
    # (patterns, path, is a folder, verdict: True ignored, False re-included, None no match)
    ("*.md", "a/b.md", False, True),
    ("/local.md", "local.md", False, True),
    ("/local.md", "sub/local.md", False, None),
    ("docs/", "docs", True, True),
    ("docs/", "docs", False, None),
    ("docs/a.md", "x/docs/a.md", False, None),  # a slash inside anchors the pattern
    ("foo/**", "foo", True, None),  # everything inside, not the folder itself
    ("foo/**", "foo/x/y", False, True),
    ("**/foo", "a/b/foo", False, True),
    ("**/foo", "foo", False, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("a/**/b", "a/xb", False, None),  # "**/" spans whole folders only
    ("a/**/b", "a/x/yb", False, None),
    ("a/***/b", "a/x/b", False, True),  # a run of stars filling a segment is "**"
    ("a/**b", "a/x/b", False, None),  # within a name, "**" is one star
    ("***", "x/y", False, True),
    ("**/", "a", True, True),
    ("**/", "a", False, None),
    ("[[:digit:]]*.md", "1a.md", False, True),
    ("[[:digit:]]*.md", "a1.md", False, None),
    ("[!a]b", "cb", False, True),
    ("[^a]b", "ab", False, None),
    ("[]a]b", "]b", False, True),
    ("[a-c-e]", "-", False, True),
    ("[a", "[a", False, None),  # an unclosed bracket never matches
    ("[[:bogus:]]", "b", False, None),  # nor does an unknown class
    ("foo\\", "foo\\", False, None),  # nor a trailing backslash
    ("a?c", "a/c", False, None),  # "?" never matches a slash
    ("foo\\ ", "foo ", False, True),  # an escaped trailing space stays
    ("foo  ", "foo", False, True),  # other trailing spaces go
    ("\\#x", "#x", False, True),
    ("#x", "#x", False, None),  # a comment
    ("\\!x", "!x", False, True),
    ("*\n!keep.md", "keep.md", False, False),  # the last match decides
    ("!keep.md\n*", "keep.md", False, True),
    ("*.MD", "a.md", False, None),  # case matters, as in git on Linux
]


@pytest.mark.parametrize(("patterns", "path", "is_dir", "verdict"), MEANINGS)
def test_what_each_kind_of_pattern_means(patterns, path, is_dir, verdict) -> None:
    assert IgnorePatterns.from_lines(patterns.split("\n")).verdict(path, is_dir) is verdict


FILES = [
    "a.md", "b.log.md", "keep.md", "docs/a.md", "docs/keep.md", "docs/sub/a.md",
    "docs/sub/deep/c.md", "foo/x.md", "foo/keep.md", "foo/sub/y.md", "bar/foo/z.md", "a/b.md",
    "a/x/b.md", "a/x/y/b.md", "a/xb.md", "1a.md", "x1.md", "]b.md", "#x.md", "!x.md", "sp .md",
    "[a.md", "foo.md", "UP.MD", "tab\tname.md",
]  # fmt: skip
BATTERY = [
    {".gitignore": "*.md\n!keep.md"},
    {".gitignore": "docs/"},
    {".gitignore": "/docs/sub/"},
    {".gitignore": "docs/**"},
    {".gitignore": "docs/**\n!docs/keep.md"},
    {".gitignore": "foo/**\n!foo/keep.md"},
    {".gitignore": "foo/\n!foo/keep.md"},
    {".gitignore": "**/foo"},
    {".gitignore": "foo"},
    {".gitignore": "a/**/b.md"},
    {".gitignore": "a/***/b.md"},
    {".gitignore": "a/**b.md"},
    {".gitignore": "**/sub/**"},
    {".gitignore": "[0-9]*.md"},
    {".gitignore": "[[:digit:]]*.md"},
    {".gitignore": "[!a-z]*.md"},
    {".gitignore": "[]]b.md"},
    {".gitignore": "\\#x.md"},
    {".gitignore": "#x.md"},
    {".gitignore": "\\!x.md"},
    {".gitignore": "!x.md\n*.md"},
    {".gitignore": "sp\\ .md"},
    {".gitignore": "sp .md   "},
    {".gitignore": "keep.md\\ "},
    {".gitignore": "*\n!*/\n!*.md\n*.log.md"},
    {".gitignore": "docs/*\n!docs/sub"},
    {".gitignore": "*/"},
    {".gitignore": "**/"},
    {".gitignore": "*.MD"},
    {".gitignore": "[a.md"},
    {".gitignore": "foo.md\\"},
    {".gitignore": "d?cs/"},
    {".gitignore": "**/deep"},
    {".gitignore": "docs/**/c.md"},
    {".gitignore": "/*.md"},
    {".gitignore": "a/*/b.md"},
    {".gitignore": "*/b.md"},
    {".gitignore": "x*"},
    {".gitignore": "[[:alpha:]].md\n[[:upper:]]*"},
    {".gitignore": "[[:bogus:]]*.md\na.md"},
    {".gitignore": "[a-c-e].md\n[\\]]b.md"},
    {".gitignore": "tab\tname.md"},
    {".gitignore": "*.md", "docs/.gitignore": "!a.md\n!sub/"},
    {".gitignore": "sub", "docs/.gitignore": "!sub"},
    {"docs/.gitignore": "/a.md\n*/c.md\nsub/deep/"},
    {"docs/sub/.gitignore": "*\n!c.md\n!deep/"},
    {".gitignore": "/"},
    {".gitignore": "!"},
    {".gitignore": "**"},
    {".gitignore": "a/**"},
    {".gitignore": "**/**/b.md"},
    {".gitignore": "?.md\n??.md"},
    {".gitignore": "*?*?*?*?*?.md"},
    {".gitignore": "a\\/b.md"},
]
"""Each case: ``.gitignore`` files (path -> content) over :data:`FILES`."""


def _make_tree(root: Path, files: list[str], ignores: dict[str, str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    for rel, text in ignores.items():
        (root / rel).write_text(text + "\n")


def _git_kept(root: Path) -> list[str]:
    """The files git does not ignore under ``root`` (a repository), hidden ones left out."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(p for p in listed.split("\0") if p and not p.rsplit("/", 1)[-1].startswith("."))


def _scan_kept(root: Path, extensions: set[str]) -> list[str]:
    return [f.rel_path for f in scan(root, ScanRules(root, extensions=extensions), 10**6).files]


@needs_git
@pytest.mark.parametrize("ignores", BATTERY, ids=lambda case: " | ".join(case.values()))
def test_the_walk_keeps_what_git_keeps(tmp_path: Path, ignores: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _make_tree(tmp_path, FILES, ignores)
    assert _scan_kept(tmp_path, {"md", "MD"}) == _git_kept(tmp_path)


@needs_git
def test_random_patterns_agree_with_git(tmp_path: Path) -> None:
    rng = random.Random(21)
    names = ["a", "b", "ab", "ba", "x", "a*b", "aa"]
    files = sorted(
        "/".join(rng.choice(names) for _ in range(rng.randint(0, 3)))
        + "/"
        + rng.choice(names)
        + ".md"
        for _ in range(40)
    )
    files = [f.lstrip("/") for f in files]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _make_tree(tmp_path, files, {})
    pieces = ["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "[a-b]", "\\*", "!", ".md", "x", " "]
    for _ in range(150):
        lines = [
            "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(1, 3))
        ]
        (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
        assert _scan_kept(tmp_path, {"md"}) == _git_kept(tmp_path), lines


HOSTILE_PATTERNS = [
    "*" * 16 + "a",
    "*" * 100_000,
    "*" * 99_999 + "a",
    "*a" * 16 + "b",
    "*a" * 50_000,
    "*?" * 100 + "b",
    "**/" * 1000 + "a",
    "a/**/" * 100 + "b",
    "[a]*" * 30 + "b",
]
HOSTILE_PATHS = ["b" * 200 + ".md", "a" * 250, "a/" * 120 + "a", ("a" * 20 + "/") * 10 + "a"]


def test_no_pattern_makes_matching_slow() -> None:
    """The issue's patterns (sixteen stars; 100,000 characters) and worse: every pattern
    against every path in well under a second (a backtracking regex took minutes)."""
    for pattern in HOSTILE_PATTERNS:
        compiled = IgnorePatterns.from_lines([pattern])
        with at_most_cpu_seconds(0.5, pattern[:40]):
            for path in HOSTILE_PATHS:
                compiled.verdict(path, is_dir=False)
                compiled.verdict(path, is_dir=True)


def test_stars_still_match_what_they_say() -> None:
    sixteen = IgnorePatterns.from_lines(["*" * 16 + "a"])
    assert sixteen.ignores("tool.java", False) and not sixteen.ignores("notes.md", False)
    pairs = IgnorePatterns.from_lines(["*a" * 16 + "b"])
    assert pairs.ignores("a" * 16 + "b", False) and pairs.ignores("xa" * 20 + "b", False)
    assert not pairs.ignores("a" * 15 + "b", False)


def test_a_folder_wildcard_cannot_end_inside_a_name() -> None:
    """``**/`` (zero or more whole folders) can be skipped only before it reads anything."""
    folders = Wildcard([*Token.literal("a/"), Token(TokenKind.FOLDERS), *Token.literal("b")])
    assert folders.matches("a/b") and folders.matches("a/x/y/b")
    assert not folders.matches("a/xb") and not folders.matches("a/x/yb")


def test_wildcard_moves_are_cached_within_a_bound() -> None:
    star_pairs = Wildcard(
        [token for _ in range(20) for token in (Token(TokenKind.STAR), *Token.literal("a"))]
    )
    for length in range(1, 300):
        star_pairs.matches("a" * length + "b")
    assert star_pairs._learned <= 4096 and len(star_pairs._states) <= 4097
    assert star_pairs.matches("xa" * 20) and not star_pairs.matches("a" * 19)


@pytest.mark.skipif(os.name != "posix", reason="file names as bytes")
def test_exclude_setting_uses_the_same_matcher(tmp_path: Path) -> None:
    _make_tree(tmp_path, ["keep.md", "drop/x.md", "deep/a/drop.md"], {})
    rules = ScanRules(tmp_path, exclude=["drop/", "**/a/*.md", "*" * 16 + "q"])
    assert [f.rel_path for f in scan(tmp_path, rules, 10**6).files] == ["keep.md"]


def test_one_compiled_pattern_answers_several_threads_as_it_answers_one():
    # Patterns are remembered per line, so threads scanning at once share one lazy DFA.
    pattern = parse_line("**/b*a?c*/**/*x[a-f]y*.md")
    assert pattern is parse_line("**/b*a?c*/**/*x[a-f]y*.md")
    rng = random.Random(7)
    pieces = ["bzaqc", "baac", "bac", "docs", "xay.md", "xgy.md", "xfy1.md", "b", "aqc", "x"]
    paths = ["/".join(rng.choices(pieces, k=rng.randint(1, 5))) for _ in range(4000)]
    alone = [Wildcard(pattern.wildcard.tokens).matches(p) for p in paths]
    answers: dict[int, list[bool]] = {}

    def answer(n: int) -> None:
        answers[n] = [pattern.wildcard.matches(p) for p in paths]

    threads = [threading.Thread(target=answer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answers[n] == alone for n in range(8))
    assert any(alone) and not all(alone)
