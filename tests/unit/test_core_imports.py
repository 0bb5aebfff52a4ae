"""Importing the core and the CLI stays cheap: no UI toolkit, no model stack, no Chroma."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

import explorer.core

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("textual", "torch", "sentence_transformers", "chromadb", "transformers")


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )


def core_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(explorer.core.__path__, prefix="explorer.core.")
        if not info.ispkg
    )


def test_core_has_the_expected_modules():
    modules = set(core_modules())
    for name in (
        "ingest.scanner",
        "ingest.chunker",
        "embed.embedder",
        "store.keywords",
        "store.vectors",
        "store.index",
        "indexing.indexer",
        "retrieval.query",
        "retrieval.search",
        "retrieval.related",
        "live.writer",
    ):
        assert f"explorer.core.{name}" in modules


def test_importing_core_and_cli_loads_no_heavy_package():
    modules = [
        *core_modules(),
        "explorer.cli",
        "explorer.settings.config",
        "explorer.settings.locations",
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_core_loads_no_module_of_the_application():
    """Settings come in as values: the core never reads the app's config, locations or UI."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('explorer.')"
        " and not m.startswith('explorer.core'))))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_help_answers_fast():
    """`python -m explorer --help` must feel instant (the target is well under a second)."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
        timeout=60,
    )
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    assert "search" in result.stdout and "index" in result.stdout
    print(f"python -m explorer --help: {elapsed:.3f} s")
    # 1 s is the target; 2 s keeps a loaded CI machine from failing the build.
    assert elapsed < 2.0, f"--help took {elapsed:.2f} s"


CLIENT_NEVER_LOADS = frozenset(
    {
        *HEAVY,
        "numpy",
        "pydantic",
        "sqlite3",
        "yaml",
        "explorer.cli.commands",
        "explorer.cli.several",
        "explorer.core.store.keywords",
        "explorer.core.ingest.documents",
        "explorer.core.ingest.front_matter",
        "explorer.core.retrieval.query",
        "explorer.core.retrieval.scopes",
    }
)
"""What the resident reader's client must not import: it answers in a fifth of a second."""


def test_the_resident_readers_client_loads_only_what_it_needs(tmp_path):
    """`explorer search` resolves its command line and asks the reader (entry.run, then
    try_resident) without the keyword store, YAML, SQLite, the retrieval modules or the model
    stack: those are the reader's, and each costs the one-shot search its import time."""
    root, index_dir = tmp_path / "docs", tmp_path / "index"
    root.mkdir()
    index_dir.mkdir(mode=0o700)
    (index_dir / "index.sqlite").touch()  # a reader's index, but no reader: answered here
    argv = ["search", "telescope", str(root), "--mode", "keyword", "--index-dir", str(index_dir)]
    code = (
        "import json, sys\n"
        "from explorer.cli import main\n"
        "from explorer.cli.resident_client import resolve, try_resident\n"
        f"assert resolve({argv!r}, main) is not None\n"
        f"assert try_resident({argv!r}, main) is None\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "EXPLORER_NO_DAEMON"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout))
    assert "explorer.cli.resident_client" in loaded
    assert sorted(loaded & CLIENT_NEVER_LOADS) == []


WINDOW_LOADS_LATER = frozenset(
    {*(name for name in HEAVY if name != "textual"), "numpy", "explorer.core.store.index"}
)
"""What the window does not import before its first frame: the index opens on a thread after
it (numpy alone was a tenth of a second of a launch)."""


def test_the_window_paints_before_it_imports_the_index_or_numpy():
    code = (
        "import json, sys\n"
        "import explorer.cli.entry, explorer.cli.targets, explorer.tui.app\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout))
    assert "explorer.tui.screens.main" in loaded
    assert sorted(loaded & WINDOW_LOADS_LATER) == []
