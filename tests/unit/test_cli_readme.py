"""The README's shell examples run as written (issue 29).

Every fenced block the README marks ``sh runnable`` is run by ``bash`` in a copy of sample_docs,
indexed first, with ``explorer`` on the PATH as the CLI with the fake embedder (keyword scores
are the real ones; scores by meaning are not). A block must exit 0; when a ``text`` block
follows it, what it prints (stdout and stderr, in order) must match that block line by line,
``…`` standing for any text, and otherwise it must print no error.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.conftest import TREE

README = TREE / "README.md"
SAMPLE_DOCS = TREE / "sample_docs"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Example:
    """A runnable block of the README, and the output it shows (None: not shown)."""

    line: int
    script: str
    output: str | None


def runnable_examples(text: str) -> list[Example]:
    """The ``sh runnable`` blocks of ``text``, each with the ``text`` block right after it."""
    blocks = list(FENCE.finditer(text))
    examples = []
    for number, block in enumerate(blocks):
        if block.group(1).split() != ["sh", "runnable"]:
            continue
        output = None
        following = blocks[number + 1] if number + 1 < len(blocks) else None
        between = text[block.end() : following.start()] if following else ""
        if following is not None and following.group(1).strip() == "text" and not between.strip():
            output = following.group(2)
        line = text.count("\n", 0, block.start()) + 1
        examples.append(Example(line, block.group(2), output))
    return examples


EXAMPLES = runnable_examples(README.read_text(encoding="utf-8"))


def test_the_readme_has_runnable_examples():
    assert len(EXAMPLES) >= 3
    assert any("exit $?" in example.script for example in EXAMPLES)


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """A copy of sample_docs, indexed, and the environment of a shell whose ``explorer`` is
    the CLI with the fake embedder."""
    base = tmp_path_factory.mktemp("readme")
    docs = base / "sample_docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "explorer"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tests.fake_model_cli "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(TREE),
        "EXPLORER_DATA_DIR": str(base / "data"),
        "EXPLORER_CONFIG_DIR": str(base / "config"),
        "EXPLORER_STATE_DIR": str(base / "state"),
        "EXPLORER_NO_DAEMON": "1",
        "EDITOR": "echo",
    }
    built = subprocess.run(
        ["explorer", "index", "."], cwd=docs, env=env, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    return docs, env


def matches(expected: str, printed: str) -> bool:
    """Whether ``printed`` is ``expected`` line by line, ``…`` standing for any text."""
    want, got = expected.rstrip("\n").splitlines(), printed.rstrip("\n").splitlines()
    if len(want) != len(got):
        return False
    for pattern, line in zip(want, got, strict=True):
        regex = ".*".join(re.escape(piece) for piece in pattern.split("…"))
        if re.fullmatch(regex, line) is None:
            return False
    return True


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"README:{e.line}" for e in EXAMPLES])
def test_a_readme_example_runs_as_shown(shell, example):
    docs, env = shell
    done = subprocess.run(
        ["bash", "-c", example.script],
        cwd=docs,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    printed = done.stdout
    assert done.returncode == 0, printed
    assert "Traceback" not in printed, printed
    if example.output is None:  # no output shown: it must print no error
        assert "explorer: error" not in printed, printed
    else:
        assert matches(example.output, printed), f"README line {example.line}:\n{printed}"


def test_the_matcher_reads_ellipses_as_any_text():
    assert matches("a…c\nexit 1\n", "abbbc\nexit 1\n")
    assert not matches("a…c\n", "abbbd\n")
    assert not matches("one\n", "one\ntwo\n")
