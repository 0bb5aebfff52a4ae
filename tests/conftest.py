"""Shared fixtures: isolated index locations, a fake embedder, small corpora on disk."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from filelock import FileLock

import explorer.core.embed.embedder as embedder_module
from explorer.settings.config import Settings
from tests.chroma_server import ChromaServer
from tests.fakes import FakeEmbedder

if TYPE_CHECKING:
    from explorer.core.store.index import Index

os.environ.setdefault("OMP_NUM_THREADS", "1")
"""The real model computes with one thread, in the test processes and every process they start
(set before anything imports torch). The suite runs more workers than the machine's two cores, so
a second thread per model only competes for a core another worker is using: on such a machine,
indexing sample_docs took 43 s instead of 64 s beside a busy core, and alone 24 s of embedding
instead of 31 s. What each test checks stays the same; a developer's own setting is kept."""

EXPLORER_PROCESS = [sys.executable, "-m", "explorer"]
"""The CLI as a process of its own, the way a script meets it."""

TREE = Path(__file__).resolve().parents[1]
"""The working tree under test: the folder that holds ``explorer/``."""


def run_explorer(
    *args: object, env: dict | None = None, check: bool = False, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run ``explorer ARGS`` as a process; ``check`` turns a failure into its stderr."""
    done = subprocess.run(
        [*EXPLORER_PROCESS, *map(str, args)],
        capture_output=True,
        text=True,
        env=os.environ if env is None else env,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"explorer {' '.join(map(str, args))} failed: {done.stderr}")
    return done


MODEL_MODULES = ("torch", "sentence_transformers", "transformers")
"""What loading the model imports (seconds of imports, hundreds of MB)."""
_IMPORTED = "\nIMPORTED "


def explorer_imports(*args: object, env: dict) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``explorer ARGS`` run by a process of its own, which must succeed; its result (stdout
    as the command printed it) and which of :data:`MODEL_MODULES` it imported."""
    probe = (
        "import json, sys; from explorer.cli import main\n"
        f"sys.argv = ['explorer', *{[str(a) for a in args]!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"loaded = [m for m in {MODEL_MODULES!r} if m in sys.modules]\n"
        f"print({_IMPORTED!r} + json.dumps(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    stdout, _, loaded = done.stdout.rpartition(_IMPORTED)
    done.stdout = stdout
    return done, json.loads(loaded)


@pytest.fixture(scope="session", autouse=True)
def no_resident_reader():
    """Processes answer by themselves: no test leaves a resident reader behind unless it asks
    (tests/unit/test_resident_reader.py does). Session-wide, so module fixtures see it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_NO_DAEMON", "1")
        yield


@pytest.fixture(scope="session", autouse=True)
def no_terminal_size_in_the_environment():
    """pytest-xdist's workers set ``COLUMNS=80`` and ``LINES=24``; Textual takes them over the
    terminal's own size, so a TUI a test starts in a 120-column tmux window would lay out for
    80x24. Terminals do not set them: neither do the tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("COLUMNS", raising=False)
        patch.delenv("LINES", raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def processes_run_this_tree():
    """Every process a test starts, in whatever folder, runs the code of this working tree: an
    editable install may point at another copy of it (a clone moved after it was installed)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(TREE), os.environ.get("PYTHONPATH")]))
        )
        yield


@pytest.fixture(scope="module", autouse=True)
def isolated_cache_of_the_module(tmp_path_factory):
    """A module's own fixtures (built before any test's folders exist: an index made with the
    real model) keep the query encoder they export in a cache of the module's, never in the
    user's. Each test then gets its own (:func:`isolated_locations`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_CACHE_DIR", str(tmp_path_factory.mktemp("module-cache")))
        yield


@pytest.fixture(autouse=True)
def isolated_locations(tmp_path_factory, monkeypatch):
    """Every test gets its own data, config, state and cache dirs, so no test sees a real
    user's index, session or kept query encoder (nor leaves one)."""
    base = tmp_path_factory.mktemp("explorer-home")
    monkeypatch.setenv("EXPLORER_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("EXPLORER_STATE_DIR", str(base / "state"))
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(base / "cache"))
    monkeypatch.delenv("EXPLORER_NO_SESSION", raising=False)
    monkeypatch.delenv("EXPLORER_INDEX_DIR", raising=False)
    monkeypatch.delenv("EXPLORER_MODEL", raising=False)
    monkeypatch.delenv("EXPLORER_CHROMA_URL", raising=False)
    return base


@pytest.fixture(autouse=True)
def no_embedder_kept_from_another_test(monkeypatch):
    """A window or a resident reader run in this process keeps one embedder per model for the
    process (:func:`~explorer.core.embed.embedder.keep_loaded_embedders`), bound to the first
    index it served: a later test's in-process command would get it, bound to a folder of the
    earlier test, and load the model to export its query encoder there. Each test starts as a
    new process would."""
    monkeypatch.setattr(embedder_module, "_kept_embedders", None)


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict]
) -> tuple[Path, dict]:
    """``build(base)`` run once per test run in a fresh folder ``base``: returns ``base`` and
    what ``build`` returned (JSON). Under pytest-xdist every worker is a process with its own
    session, so a session fixture would build once per worker; here the first worker to ask
    builds, under a lock in the folder all workers share, and the others wait and reuse it."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        base = tmp_path_factory.mktemp(name)
        return base, build(base)
    base = tmp_path_factory.getbasetemp().parent / name  # shared by the run's workers
    record = base.with_name(f"{name}.json")
    with FileLock(base.with_name(f"{name}.lock")):
        if record.exists():
            return base, json.loads(record.read_text())
        shutil.rmtree(base, ignore_errors=True)  # a build that failed half way
        base.mkdir()
        result = build(base)
        record.write_text(json.dumps(result))
        return base, result


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server on 127.0.0.1 for the whole session (started on first use)."""
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def phrases_scored(monkeypatch) -> list[str]:
    """Each phrase a keyword index scores alone over every row, in order, from now on."""
    from explorer.core.store.keywords import KeywordIndex

    scored: list[str] = []
    real = KeywordIndex._phrase_scores

    def counted(self, phrase):
        scored.append(phrase)
        return real(self, phrase)

    monkeypatch.setattr(KeywordIndex, "_phrase_scores", counted)
    return scored


@pytest.fixture
def fused_keyword_rows(monkeypatch) -> list[int]:
    """The keyword rows of each pass a search fuses, in order, from now on."""
    from explorer.core.retrieval import search

    fused: list[int] = []
    real = search._fuse

    def counted(legs, *args):
        fused.append(len(legs.keyword))
        return real(legs, *args)

    monkeypatch.setattr(search, "_fuse", counted)
    return fused


@pytest.fixture
def fake_model(monkeypatch):
    """Every index opened by the test embeds with the fake embedder, not the real model."""
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


def invoke_cli(*args: object, env: dict[str, str | None] | None = None):
    """``explorer ARGS`` run in this process (click's runner), its failures caught; ``env``
    sets (None: unsets) environment variables for the call."""
    from click.testing import CliRunner

    from explorer.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=True)


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` and return ``root``."""
    for rel_path, text in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def sample_passages(limit: int) -> list[str]:
    """Real passages: the paragraphs (over 40 characters) of sample_docs' Markdown files, in
    file order, up to ``limit`` of them."""
    found = []
    for path in sorted((Path(__file__).resolve().parents[1] / "sample_docs").rglob("*.md")):
        for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            if len(block.strip()) > 40:
                found.append(block.strip())
    return found[:limit]


def terminal_output(primary: int) -> Iterator[bytes]:
    """What a process writes to the pseudo-terminal whose primary side is ``primary``, chunk
    by chunk, until the other side is closed (a pty's primary then reads EIO, not EOF) or
    ``primary`` is."""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@contextmanager
def synced_index(root: Path, index_dir: Path) -> Iterator[Index]:
    """The index of ``root`` (the fake embedder's, kept in ``index_dir``) after one sync,
    closed when the block ends."""
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.store.index import Index

    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    try:
        Indexer(index).sync()
        yield index
    finally:
        index.close()


@pytest.fixture
def settings_for(tmp_path):
    """Build Settings for a root with the index kept under tmp_path/index."""

    def build(root: Path, **overrides) -> Settings:
        return Settings.for_root(root, tmp_path / "index", model="fake-hash-64", **overrides)

    return build
