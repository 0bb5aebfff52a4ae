"""Speed of the explorer TUI: first frame, keystroke-to-results, first open of a new folder.

    python benchmarks/tui.py [--corpus ../shared/corpora/nginx-docs] [--index-dir DIR] [--json]
        [--also ../shared/corpora/vaultofknowledge --also-index-dir DIR]

Measures, with the real model:

- **first frame** (target <= 1.0 s, median of --runs): ``python -m explorer CORPUS`` launched in a
  real terminal (tmux) on an already-built index; the app writes the time of its first painted
  frame (``EXPLORER_FIRST_FRAME_FILE``) and quits. Launch-to-paint, Python start-up included.
- **keystroke to results** (targets: p95 <= 50 ms keyword, <= 100 ms hybrid), in process with
  Textual's Pilot on the built index with the model loaded: queries are typed one key at a time
  at a typing pace (--key-interval, 200 ms by default, slower than the 150 ms debounce, so every
  key gets its own search), and each key is timed from the press until the results list shows
  the answer for the text typed so far. Also reported: a burst (a whole word typed with no pause)
  from its last key to its results, which includes the debounce by design.
- **two folders** (``--also FOLDER``, same targets): the keystrokes again, on a window holding
  the corpus and a second folder, searched as one ranking (collections, issue 25), beside the
  one-folder figures of the same run.
- **first open** (targets: interactive <= 1 s, keyword search <= 5 s): the app launched in tmux
  on the corpus with an empty index dir: time to the first frame, time until a query typed at once
  shows keyword results, time until embedding progress shows in the status bar, and (with
  --wait-embedding) until the semantic index is complete.

- **long documents** (``--long-docs FILE...``; target: every key p95 <= 100 ms, quit <= 0.3 s),
  in process with Pilot at 120x40, the fake embedder: each file copied into a scratch folder,
  opened (cold), then zoom (``z``, in and out), page down and up, and back and forward between
  the files, each timed from the press until the screen has refreshed; quitting (``ctrl+q``)
  with the last file open, until the app has exited. ``--baseline DIR`` runs the same in a
  second process on another checkout (today's main), so the two sit side by side in one run.
  The time until the screen has refreshed holds Pilot's own waits (a key nothing binds takes
  about 68 ms); "painted" is from the press to the last frame the key made (a key that paints
  nothing: 0), as the terminal would receive it; back/forward also reports the first frame
  that shows the page ("page painted") and the last one, the sidebar's answer included.

The index is built in a temp folder with ``explorer index`` unless --index-dir names a built one.
``--fake-embedder`` builds and searches with the tests' deterministic fake embedder (384
dimensions, no model) for a quick run on a slow machine: the hybrid numbers then leave out the
query encoder, whose own latency (real model, fast numpy path) is reported beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CODE = Path(os.environ.get("EXPLORER_BENCH_CODE", REPO))
"""The checkout whose explorer is measured (the long-documents baseline runs another)."""
sys.path.insert(0, str(CODE))  # benchmarks.speed and tests.fakes, when run as a script
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "nginx-docs"
QUERIES = [
    "proxy cache",
    "ssl certificate",
    "upstream health",
    "rate limit",
    "gzip static",
    "websocket proxy",
    "client body size",
    "log format",
]
SIZE = (120, 40)
FAKE_DIMENSION = 384
STATUS_ANSWER = re.compile(r"(\d+) results? by (keyword|hybrid|semantic)")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50_ms": round(1000 * statistics.median(values), 1),
        "p95_ms": round(1000 * percentile(values, 0.95), 1),
        "max_ms": round(1000 * max(values), 1),
    }


# -- a terminal -------------------------------------------------------------------------------
class Terminal:
    """A tmux session running one command, on a private socket."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket = f"explorer-bench-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={value}" for key, value in env.items())
        self.started = time.time()
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "new-session",
                "-d",
                "-s",
                "bench",
                "-x",
                str(SIZE[0]),
                "-y",
                str(SIZE[1]),
                f"cd {REPO} && env {exports} {command}; sleep 600",
            ],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "bench"],
            capture_output=True,
            text=True,
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "send-keys",
                "-t",
                "bench",
                *(["-l"] if literal else []),
                *keys,
            ],
            check=True,
        )

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def wait_file(path: Path, timeout: float) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return float(path.read_text())
        time.sleep(0.005)
    return None


def app_command(corpus: Path, index_dir: Path, model: str | None = None) -> str:
    extra = f" --model {model}" if model else ""
    return f"{sys.executable} -m explorer {corpus} --index-dir {index_dir}{extra}"


def first_frame(
    corpus: Path, index_dir: Path, runs: int, base_env: dict, model: str | None = None
) -> dict:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            stamp = Path(scratch) / "frame"
            env = {
                **base_env,
                "EXPLORER_FIRST_FRAME_FILE": str(stamp),
                "EXPLORER_EXIT_AFTER_FIRST_FRAME": "1",
            }
            terminal = Terminal(app_command(corpus, index_dir, model), env)
            try:
                painted = wait_file(stamp, 30)
            finally:
                time.sleep(0.5)
                terminal.close()
            if painted is not None:
                times.append(painted - terminal.started)
    return {
        "runs": len(times),
        "median_s": round(statistics.median(times), 3) if times else None,
        "all_s": [round(t, 3) for t in times],
    }


def first_open(corpus: Path, base_env: dict, wait_embedding: bool, timeout: float) -> dict:
    """Launch on an empty index dir; time the frame, keyword results and embedding progress."""
    result: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        stamp = Path(scratch) / "frame"
        index_dir = Path(scratch) / "index"
        env = {**base_env, "EXPLORER_FIRST_FRAME_FILE": str(stamp)}
        terminal = Terminal(app_command(corpus, index_dir), env)
        try:
            painted = wait_file(stamp, 30)
            result["interactive_s"] = round(painted - terminal.started, 3) if painted else None
            terminal.keys(QUERIES[0], literal=True)
            deadline = time.time() + timeout
            keyword_at = progress_at = embedding_at = embedded_at = None
            while time.time() < deadline:
                screen = terminal.screen()
                now = time.time() - terminal.started
                answer = STATUS_ANSWER.search(screen)
                if keyword_at is None and answer and int(answer.group(1)) > 0:
                    keyword_at = now
                if progress_at is None and ("indexing" in screen or "embedding" in screen):
                    progress_at = now
                if embedding_at is None and "embedding" in screen:
                    embedding_at = now
                if (
                    embedding_at is not None
                    and embedded_at is None
                    and "embedding" not in screen
                    and "pending" not in screen
                ):
                    embedded_at = now
                if keyword_at and embedding_at and (embedded_at or not wait_embedding):
                    break
                time.sleep(0.05)
            result["keyword_results_s"] = round(keyword_at, 3) if keyword_at else None
            result["progress_shown_s"] = round(progress_at, 3) if progress_at else None
            result["embedding_shown_s"] = round(embedding_at, 3) if embedding_at else None
            if wait_embedding:
                result["semantic_complete_s"] = round(embedded_at, 1) if embedded_at else None
            result["last_status"] = terminal.screen().rstrip().splitlines()[-2:]
        finally:
            terminal.close()
    return result


# -- keystrokes, in process -------------------------------------------------------------------
def fake_embedder():
    from tests.fakes import FakeEmbedder

    return FakeEmbedder(dimension=FAKE_DIMENSION)


async def keystrokes(
    corpus: Path,
    index_dir: Path,
    interval: float,
    limit: int | None,
    fake: bool,
    also: tuple[Path, Path] | None = None,
    queries: list[str] | None = None,
    ready: Callable[[Any], bool] | None = None,
    settle_timeout: float = 300.0,
) -> dict:
    """Keystroke-to-results on the corpus; with ``also`` (a folder and its built index), on a
    window holding both folders (issue 25), searched as one ranking.

    Typing starts once the index has settled (the query path ready, every live index idle),
    or, with ``ready``, once ``ready(screen)`` is true (``benchmarks/kernel.py`` types while the
    embedding runs). ``queries`` replaces :data:`QUERIES`. The report says what the index was
    doing when typing began and ended (the status bar's index text, and whether a live index
    was still busy)."""
    from explorer.core.retrieval.collections import distinct_names
    from explorer.settings.config import NamedFolder, Settings
    from explorer.tui.app import ExplorerApp

    embedder = fake_embedder() if fake else None
    model = embedder.name if embedder is not None else None
    pairs = [(corpus, index_dir)] + ([also] if also is not None else [])
    names = distinct_names([folder for folder, _index in pairs])
    folders = [
        NamedFolder(name, Settings.for_root(folder, index, model=model))
        for name, (folder, index) in zip(names, pairs, strict=True)
    ]
    app = ExplorerApp(
        folders if also is not None else folders[0].settings, embedder=embedder, watch=False
    )
    out: dict = {}
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        started = time.monotonic()

        def busy() -> list[bool]:
            lives = [screen.lives.get(folder.name) for folder in folders]
            return [live is None or live.busy for live in lives]

        def settled() -> bool:
            return screen.state.semantic_ready and not any(busy())

        begin_when = settled if ready is None else lambda: ready(screen)
        while not begin_when():
            if time.monotonic() - started > settle_timeout:
                raise RuntimeError(f"the index did not settle in {settle_timeout:.0f} s")
            await pilot.pause(0.05)
        out["settle_s"] = round(time.monotonic() - started, 2)
        out["rss_mb"] = resident_mb()
        out["index_at_start"] = screen.status.index_text
        box = screen.search_box
        results = screen.results

        async def painted(text: str, press, timeout: float = 10.0) -> float:
            """Press a key; the time from the press until results for ``text`` are painted."""
            begin = time.perf_counter()
            task = asyncio.create_task(press)
            while results.shown_query != text:
                if time.perf_counter() - begin > timeout:
                    raise RuntimeError(f"no results for {text!r}")
                await asyncio.sleep(0.0005)
            await results.wait_for_refresh()
            elapsed = time.perf_counter() - begin
            await task
            return elapsed

        queries = queries or QUERIES
        queries = queries[:limit] if limit else queries
        for mode in ("keyword", "hybrid"):
            box.set_mode(mode)
            latencies: list[float] = []
            typed_texts: list[str] = []
            bursts: list[float] = []
            modes_seen: set[str] = set()
            for query in queries:
                box.set_text("")
                box.focus_query()
                await pilot.pause(0.3)
                typed = ""
                for character in query:
                    await asyncio.sleep(interval)
                    typed += character
                    if not typed.strip():
                        await pilot.press(character)
                        continue
                    latencies.append(await painted(typed, pilot.press(character)))
                    typed_texts.append(typed)
                    modes_seen.add(results.shown_mode or "")
                # A burst: the whole word again with no pause; timed from its last key.
                box.set_text("")
                await pilot.pause(0.3)
                for character in query[:-1]:
                    await pilot.press(character)
                bursts.append(await painted(query, pilot.press(query[-1])))
            out[mode] = {**summary(latencies), "answered_by": sorted(modes_seen)}
            slowest = sorted(zip(latencies, typed_texts, strict=True), reverse=True)[:SLOWEST]
            out[f"{mode}_slowest"] = [[text, round(ms * 1000, 1)] for ms, text in slowest]
            out[f"{mode}_folders"] = sorted({hit.path.split("/", 1)[0] for hit in results.hits})
            out[f"{mode}_burst"] = summary(bursts)
        out["index_at_end"] = screen.status.index_text
        out["busy_at_end"] = any(busy())
    return out


SLOWEST = 8
"""Keys named with their times in a keystroke report (the text typed so far): the tail."""


def resident_mb() -> float | None:
    """This process's resident memory now, in MB (Linux), once the window has settled."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return round(int(found.group(1)) / 1024, 1) if found else None


# -- long documents, in process -------------------------------------------------------------
LONG_KEYS = {"zoom": "z", "page down": "space", "page up": "b", "no key (floor)": "f12"}
READING_STEPS = [
    ("line down", "j"),
    ("line up", "k"),
    ("end", "G"),
    ("top", "g"),
    ("find: open", "slash"),
    ("find: a letter typed", "t"),
    ("find: a letter typed", "h"),
    ("find: a letter typed", "e"),
    ("find: keep", "enter"),
    ("next match", "n"),
    ("next match", "n"),
    ("previous match", "N"),
    ("outline: open", "t"),
    ("outline: close", "escape"),
    ("wrap: off and on", "w"),
    ("wrap: off and on", "w"),
    ("go to: open", "colon"),
    ("go to: close", "escape"),
    ("links: open", "f"),
    ("links: close", "escape"),
]
"""The other reading keys, pressed in this order on each file (each repeat), and timed as the
keys above: from the press to the last frame it painted."""
"""The reading keys timed on each long file, and ``f12``, which nothing binds: the harness's own
time from a press to a refreshed screen (about 70 ms here), which every other key includes."""


async def long_documents(files: list[Path], scratch: Path, repeats: int) -> dict:
    """Open each of ``files`` and time the reading keys, back/forward and quitting (see the
    module's docstring). Runs the explorer of :data:`CODE`."""
    from textual.widgets import Input

    from explorer.tui.app import make_app

    root = scratch / "docs"
    root.mkdir(parents=True)
    names = []
    for file in files:
        shutil.copy2(file, root / file.name)
        names.append(file.name)
    app = make_app(root, index_dir=scratch / "index", embedder=fake_embedder(), watch=False)
    out: dict = {"code": str(CODE), "files": {}}
    frames: list[tuple[float, str | None]] = []
    """Every frame the screen hands to the terminal (Pilot's terminal writes nothing): when,
    and the file the preview showed in it (None while one loads)."""
    composed = app._display

    def display(screen: Any, update: Any) -> None:
        if update is not None:
            # The main screen's preview, under a dialog too.
            shown = preview.path if preview is not None and preview.loaded else None
            frames.append((time.perf_counter(), shown))
        composed(screen, update)

    app._display = display  # type: ignore[method-assign]
    preview: Any = None

    def painted_since(begin: float, mark: int) -> float:
        """From ``begin`` (a press) to the last frame painted since ``frames[mark]``; 0 when
        the key painted nothing."""
        return frames[-1][0] - begin if len(frames) > mark else 0.0

    def page_painted(begin: float, mark: int, name: str) -> float:
        """From ``begin`` to the first frame since ``frames[mark]`` that shows ``name``."""
        return next(when for when, shown in frames[mark:] if shown == name) - begin

    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview

        async def refreshed() -> None:
            await pilot._wait_for_screen()
            await app.screen.wait_for_refresh()

        async def shown(name: str, timeout: float = 120.0) -> None:
            begin = time.perf_counter()
            while not (preview.path == name and preview.loaded):
                if time.perf_counter() - begin > timeout:
                    raise RuntimeError(f"{name} was not shown in {timeout} s")
                await asyncio.sleep(0.001)
            await refreshed()

        while screen.index is None or any(live.busy for live in screen.lives.values() if live):
            await pilot.pause(0.1)
        for field in screen.query(Input):  # the find and go-to fields: a blink is not a key's
            field.cursor_blink = False
        for name in names:
            begin = time.perf_counter()
            screen.open_file(name)
            await shown(name)
            opened = time.perf_counter() - begin
            preview.focus_content()
            await pilot.pause(0.2)
            timings: dict[str, list[float]] = {key: [] for key in LONG_KEYS}
            paints: dict[str, list[float]] = {key: [] for key in LONG_KEYS}
            for _ in range(repeats):
                for label, key in LONG_KEYS.items():
                    mark, begin = len(frames), time.perf_counter()
                    await pilot.press(key)
                    await refreshed()
                    timings[label].append(time.perf_counter() - begin)
                    paints[label].append(painted_since(begin, mark))
            steps: dict[str, list[float]] = {label: [] for label, _key in READING_STEPS}
            for _ in range(repeats):
                for label, key in READING_STEPS:
                    mark, begin = len(frames), time.perf_counter()
                    await pilot.press(key)
                    await refreshed()
                    steps[label].append(painted_since(begin, mark))
                preview.focus_content()  # not timed: the outline's Esc left for the search box
                await pilot.pause(0.1)
            out["files"][name] = {
                "lines": len(preview._source),
                "kind": preview.kind,
                "open_s": round(opened, 3),
                **{label: summary(values) for label, values in timings.items()},
                **{f"{label}, painted": summary(values) for label, values in paints.items()},
                "reading keys, painted": {label: summary(v) for label, v in steps.items()},
            }
        moves: list[float] = []
        move_pages: list[float] = []
        move_paints: list[float] = []
        for _ in range(repeats):
            for action, target in (
                ("left_square_bracket", names[-2]),
                ("right_square_bracket", names[-1]),
            ):
                mark, begin = len(frames), time.perf_counter()
                await pilot.press(action)
                await shown(target)
                moves.append(time.perf_counter() - begin)
                await pilot.pause(0.3)  # the sidebars' answers, painted after the page
                move_pages.append(page_painted(begin, mark, target))
                move_paints.append(painted_since(begin, mark))
        out["back/forward"] = summary(moves)
        out["back/forward, page painted"] = summary(move_pages)
        out["back/forward, painted"] = summary(move_paints)
        begin = time.perf_counter()
        await pilot.press("ctrl+q")
    out["quit_s"] = round(time.perf_counter() - begin, 3)
    return out


def long_documents_side_by_side(
    files: list[Path], repeats: int, baseline: Path | None, env: dict
) -> dict:
    """The long-documents run on this checkout and, with ``baseline``, on that one, each in
    its own process (one after the other, in one run)."""
    report: dict = {}
    trees = [("this", REPO)] + ([("baseline", baseline.resolve())] if baseline else [])
    for label, tree in trees:
        child_env = {
            **os.environ,
            **env,
            "EXPLORER_BENCH_CODE": str(tree),
            "PYTHONPATH": str(tree),
        }
        args = [sys.executable, __file__, "--long-docs-child", str(repeats), *map(str, files)]
        done = subprocess.run(args, env=child_env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"long documents on {tree} failed:\n{done.stderr[-3000:]}")
        report[label] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def print_long_documents(report: dict) -> None:
    this, baseline = report.get("this", {}), report.get("baseline")
    print(f"long documents: {this.get('code')}" + (f" vs {baseline['code']}" if baseline else ""))
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, new: dict, old: dict | None, field: str) -> None:
        now, before = new.get(field), (old or {}).get(field)
        ratio = f"{before / now:.1f}x" if now and before else ""
        rows.append((name, f"{now}", f"{before}" if old is not None else "", ratio))

    for name, figures in this.get("files", {}).items():
        old = baseline["files"].get(name) if baseline else None
        kinds = f"{figures['kind']}" + (f" / {old['kind']}" if old else "")
        print(f"  {name}: {figures['lines']} lines, shown as {kinds}")
        rows.append(
            (f"{name} open (cold), s", str(figures["open_s"]), str(old and old["open_s"]), "")
        )
        for label in (*LONG_KEYS, *(f"{key}, painted" for key in LONG_KEYS)):
            for field in ("p50_ms", "p95_ms"):
                old_figures = old and old.get(label)
                row(f"{name} {label} {field}", figures[label], old_figures, field)
        old_steps = (old or {}).get("reading keys, painted", {})
        for label, step in figures.get("reading keys, painted", {}).items():
            row(f"{name} {label}, painted p95_ms", step, old_steps.get(label), "p95_ms")
    for label in ("back/forward", "back/forward, page painted", "back/forward, painted"):
        for field in ("p50_ms", "p95_ms"):
            row(f"{label} {field}", this[label], baseline and baseline.get(label), field)
    row("quit, s", this, baseline, "quit_s")
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'this':>10}  {'baseline':>10}  speed-up")
    for name, now, before, ratio in rows:
        print(f"{name:<{width}}  {now:>10}  {before:>10}  {ratio}")


# -- the index --------------------------------------------------------------------------------
FAKE_BUILD = """
import sys
from explorer.settings.config import Settings
from explorer.core.store.index import Index
from explorer.core.indexing.indexer import Indexer
from tests.fakes import FakeEmbedder

embedder = FakeEmbedder(dimension=int(sys.argv[3]))
index = Index(Settings.for_root(sys.argv[1], sys.argv[2], model=embedder.name), embedder)
index.acquire_write_lock()
Indexer(index).sync()
index.close()
"""


def query_encoder_latency(model: str | None = None) -> dict:
    """The real model's query path: load time, then per-query latency (in process)."""
    from explorer.core.embed.embedder import load_embedder
    from explorer.settings.config import DEFAULT_MODEL

    embedder = load_embedder(model or DEFAULT_MODEL)
    started = time.perf_counter()
    embedder.load_query_path()
    loaded = time.perf_counter() - started
    times = []
    for query in QUERIES * 3:
        for end in range(3, len(query) + 1, 3):
            begin = time.perf_counter()
            embedder.embed_query(query[:end])
            times.append(time.perf_counter() - begin)
    return {"load_s": round(loaded, 3), **summary(times)}


def build_index(corpus: Path, index_dir: Path, env: dict, fake: bool = False) -> float:
    started = time.perf_counter()
    if fake:
        subprocess.run(
            [sys.executable, "-c", FAKE_BUILD, str(corpus), str(index_dir), str(FAKE_DIMENSION)],
            check=True,
            cwd=REPO,
            env={**os.environ, **env},
        )
        return time.perf_counter() - started
    from benchmarks.speed import run_index

    return run_index(corpus, index_dir, {**os.environ, **env})["wall_seconds"]


def print_table(report: dict) -> None:
    rows = []
    frame = report.get("first_frame", {})
    rows.append(("first frame (built index), median", f"{frame.get('median_s')} s", "<= 1.0 s"))
    for mode, target in (("keyword", "<= 50 ms"), ("hybrid", "<= 100 ms")):
        stats = report.get("keystrokes", {}).get(mode, {})
        rows.append((f"keystroke -> results, {mode}, p95", f"{stats.get('p95_ms')} ms", target))
        rows.append((f"keystroke -> results, {mode}, p50", f"{stats.get('p50_ms')} ms", ""))
        burst = report.get("keystrokes", {}).get(f"{mode}_burst", {})
        rows.append(
            (f"burst last key -> results, {mode}, p50", f"{burst.get('p50_ms')} ms", "(debounce)")
        )
    two = report.get("keystrokes_two_folders")
    if two is not None:
        for mode, target in (("keyword", "<= 50 ms"), ("hybrid", "<= 100 ms")):
            one = report.get("keystrokes", {}).get(mode, {}).get("p95_ms")
            both = two.get(mode, {}).get("p95_ms")
            ratio = f" ({both / one:.2f}x)" if one and both else ""
            name = f"keystroke -> results, {mode}, p95, two folders"
            rows.append((name, f"{both} ms{ratio}", target))
        rss = (report.get("keystrokes", {}).get("rss_mb"), two.get("rss_mb"))
        rows.append(("resident memory, one folder / two folders", f"{rss[0]} / {rss[1]} MB", ""))
    encoder = report.get("query_encoder", {})
    rows.append(("query encoder (real model), p95", f"{encoder.get('p95_ms')} ms", ""))
    opened = report.get("first_open", {})
    rows.append(("first open: interactive", f"{opened.get('interactive_s')} s", "<= 1.0 s"))
    rows.append(("first open: keyword results", f"{opened.get('keyword_results_s')} s", "<= 5 s"))
    rows.append(("first open: progress shown", f"{opened.get('progress_shown_s')} s", ""))
    rows.append(("first open: embedding status shown", f"{opened.get('embedding_shown_s')} s", ""))
    if "semantic_complete_s" in opened:
        rows.append(("first open: semantic complete", f"{opened['semantic_complete_s']} s", ""))
    width = max(len(r[0]) for r in rows)
    print(f"embedder: {report.get('embedder')}; corpus: {report.get('corpus')}")
    print(f"{'measure':<{width}}  {'value':>12}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>12}  {target}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--index-dir", type=Path, help="a built index of the corpus to reuse")
    parser.add_argument("--runs", type=int, default=5, help="launches for the first frame")
    parser.add_argument("--key-interval", type=float, default=0.2, help="seconds between keys")
    parser.add_argument("--queries", type=int, default=None, help="use only the first N queries")
    parser.add_argument("--skip-first-open", action="store_true")
    parser.add_argument(
        "--wait-embedding",
        action="store_true",
        help="in the first-open run, wait until the semantic index is complete",
    )
    parser.add_argument("--first-open-timeout", type=float, default=60.0)
    parser.add_argument(
        "--fake-embedder",
        action="store_true",
        help="index and search with the fake embedder (quick run, no model)",
    )
    parser.add_argument(
        "--also",
        type=Path,
        help="a second folder: keystrokes are measured again on a window holding both",
    )
    parser.add_argument("--also-index-dir", type=Path, help="a built index of --also to reuse")
    parser.add_argument(
        "--long-docs",
        type=Path,
        nargs="+",
        help="measure only the reading keys, back/forward and quit on these long documents",
    )
    parser.add_argument("--baseline", type=Path, help="with --long-docs: also run this checkout")
    parser.add_argument("--repeats", type=int, default=10, help="with --long-docs: presses a key")
    parser.add_argument("--long-docs-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    if "--long-docs-child" in sys.argv:  # one checkout's run, for long_documents_side_by_side
        repeats = int(sys.argv[sys.argv.index("--long-docs-child") + 1])
        files = [Path(f) for f in sys.argv[sys.argv.index("--long-docs-child") + 2 :]]
        with tempfile.TemporaryDirectory(prefix="explorer-long-docs-") as scratch:
            print(json.dumps(asyncio.run(long_documents(files, Path(scratch), repeats))))
        return 0
    args = parser.parse_args()
    if args.long_docs:
        with tempfile.TemporaryDirectory(prefix="explorer-tui-bench-") as scratch:
            env = {
                "EXPLORER_DATA_DIR": str(Path(scratch) / "data"),
                "EXPLORER_CONFIG_DIR": str(Path(scratch) / "config"),
                "EXPLORER_STATE_DIR": str(Path(scratch) / "state"),
            }
            files = [file.resolve() for file in args.long_docs]
            report = long_documents_side_by_side(files, args.repeats, args.baseline, env)
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print_long_documents(report)
        return 0
    if shutil.which("tmux") is None:
        parser.error("tmux is needed for the terminal measurements (apt-get install tmux)")
    corpus = args.corpus.resolve()
    report: dict = {"corpus": str(corpus)}
    with tempfile.TemporaryDirectory(prefix="explorer-tui-bench-") as scratch:
        env = {
            "EXPLORER_DATA_DIR": str(Path(scratch) / "data"),
            "EXPLORER_CONFIG_DIR": str(Path(scratch) / "config"),
            # Sessions in the scratch folder: each run opens as a first start (no query, no file
            # restored), and the user's own sessions are left alone.
            "EXPLORER_STATE_DIR": str(Path(scratch) / "state"),
            "TERM": os.environ.get("TERM", "xterm-256color"),
        }
        os.environ.update({k: v for k, v in env.items() if k != "TERM"})
        index_dir = args.index_dir
        if index_dir is None:
            index_dir = Path(scratch) / "index"
            report["index_build_s"] = round(
                build_index(corpus, index_dir, env, args.fake_embedder), 1
            )
        index_dir = index_dir.resolve()
        report["embedder"] = f"fake-{FAKE_DIMENSION}" if args.fake_embedder else "real model"
        report["keystrokes"] = asyncio.run(
            keystrokes(corpus, index_dir, args.key_interval, args.queries, args.fake_embedder)
        )
        if args.also is not None:
            also = args.also.resolve()
            also_index = args.also_index_dir
            if also_index is None:
                also_index = Path(scratch) / "also-index"
                report["also_index_build_s"] = round(
                    build_index(also, also_index, env, args.fake_embedder), 1
                )
            report["also"] = str(also)
            report["keystrokes_two_folders"] = asyncio.run(
                keystrokes(
                    corpus,
                    index_dir,
                    args.key_interval,
                    args.queries,
                    args.fake_embedder,
                    (also, also_index.resolve()),
                )
            )
        report["query_encoder"] = query_encoder_latency()
        model = fake_embedder().name if args.fake_embedder else None
        report["first_frame"] = first_frame(corpus, index_dir, args.runs, env, model)
        if not args.skip_first_open:
            timeout = max(args.first_open_timeout, 3600.0 if args.wait_embedding else 0.0)
            report["first_open"] = first_open(corpus, env, args.wait_embedding, timeout)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
