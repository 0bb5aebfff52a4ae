"""explorer on a kernel-sized tree with the real model, while embedding runs, beside a baseline.

    flock /tmp/explorer-heavy.lock python benchmarks/kernel.py --baseline /tmp/base-ec8d2a5 \
        [--corpus DIR] [--also DIR] [--work DIR] [--stages open,reopen,...] [--embed-seconds 120]
        [--full] [--json]
    python benchmarks/kernel.py table WORK/report.json   # the table of a saved run

The corpus is Debian's kernel documentation, read in place (default
``~/.cache/explorer-dev/debian/linux-doc-6.12/usr/share/doc/linux-doc-6.12``: ~7,200 files,
of which explorer indexes ~3,607 once the Sphinx ``_sources`` twins are skipped, ~79,500 chunks).
Every figure is taken for this checkout and, with ``--baseline DIR``, for another git checkout,
one after the other in one run: that checkout's processes start in DIR, so ``python -m explorer``
imports DIR's code (as ``cli_speed.py --code`` does), and the in-process stages run in a child
that imports DIR's ``explorer`` before anything else. A figure the old code cannot give (no
estimate of the time left, say) is "n/a"; a stage that fails is recorded with its error and the
others still run. Each checkout's index lives in ``--work/<label>/index`` (``this`` or
``baseline``), emptied by the ``open`` stage and reused by the later ones, so a failed stage can
be run again alone (``--stages reopen``). The report is written to ``--work/report.json`` after
every stage.

The stages, per checkout, in this order (budgets are issue 32's, all while embedding runs):

- ``open``: ``python -m explorer CORPUS --index-dir INDEX`` in a real terminal (tmux, 160x48) on
  an empty index; a query is typed as soon as the first frame is painted. Measured: the first
  frame (<= 1 s; ``EXPLORER_FIRST_FRAME_FILE``), the first keyword results for that query
  (<= 120 s; the status bar's ``N results by keyword``), when the embedding shows in the status
  bar, the app's embedding rate over ``--embed-seconds`` from its first progress on (chunks/s,
  from the status bar's ``embedding X/Y chunks``), the time left the app estimates at the end
  of that window (and what the measured rate says), and the TUI process's peak RSS (``VmHWM``
  of the process, sampled with ``VmRSS`` every 0.1 s; <= 1 GB). Then ``ctrl+q``, timed until
  the process has exited. ``--full`` waits for the whole embedding instead (about an hour).
- ``disk``: the size of the index on disk: the keyword index (``index.sqlite*``: manifest and
  FTS5) and the vector store (the Chroma folder) apart, with the chunks embedded at that moment
  (``explorer status --json``).
- ``reopen``: the TUI launched again on that index (the embedding unfinished), a query typed at
  once: first frame, first keyword results, the moment the status bar shows the embedding phase
  again (the scan found the index current and the embedding resumed; <= 5 s), the first batch
  after it, and how many chunks are left (against those left at the quit: whether the vectors
  of files not finished were kept). The TUI quits after 10 s of embedding.
- ``keystrokes``: Textual's Pilot in a child process (``benchmarks.tui.keystrokes``): the app
  opened on the partly embedded index with its own background embedding running; typing starts
  once the query path is ready and the live index is in its embedding phase. The 8 kernel
  queries below are typed a key every 200 ms, each key timed from the press until the results
  list shows the answer for the text typed so far; p95 keyword <= 50 ms, hybrid <= 100 ms. The
  report gives the status bar's index text when typing began and ended and whether the
  embedding was still running at the end; the child's peak RSS is a second TUI RSS figure.
- ``keystrokes_idle``: the same on an idle index (the issue's bar: within 1.5x of it). When
  some chunks have no vector yet (no ``--full``), this script holds the index's writer lock
  meanwhile: the app opens the index read-only and embeds nothing, so the same partly embedded
  index is searched with no embedding (``idle_by`` in the report says so).
- ``related``: ``related_files(index, path, 10)`` of the core, in a child process on the index
  as the TUI left it, for up to ``--related-files`` files that have their vectors (seeded
  sample), after 3 warm-up calls: p50 / p95.
- ``index_memory``: ``benchmarks.memory.measure`` (a child process, a fresh index in
  ``--work/<label>/index-memory``, removed after): peak RSS of a cold ``explorer index`` over
  the scan, the keyword phase, the model and ``--embed-seconds`` of embedding, and its rate.
- ``raw_model``: sentence-transformers ``encode`` (fp32, batch 32, ``benchmarks.speed``) on a
  seeded sample of ``--raw-chunks`` chunk texts of the same index, exactly as the indexer
  embeds them: the model's own rate in the same run, against which the app's rate is read.

With ``--also DIR`` (e.g. /work/shared/corpora), ``also_open`` launches the TUI on the corpus
and DIR in one window (collections, issue 25), both on empty indexes in their own data folder,
and measures as ``open`` does; ``also_keystrokes`` then types in a Pilot window holding both
(``--stages ,`` with ``--also`` runs these two alone; ``--stages also_keystrokes`` types again
on the indexes an earlier ``also_open`` left). With two folders the status bar shows the
progress of one folder at work, so the embedding figures of ``also_open`` are that folder's.

Run it alone on the machine (under the heavy lock): the embedding, the TUI and the timings share
two cores. Default wall time per checkout with ``--embed-seconds 120``: about 15 minutes (on
150 kernel pages and a 20 s window: 6 minutes). ``--checkouts baseline`` runs one checkout
only; answers already in ``--work/report.json`` are kept, so two runs fill one table.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE_ENV = "KERNEL_BENCH_CODE"
"""In a child process: the checkout whose ``explorer`` it measures."""
if os.environ.get(CODE_ENV):
    sys.path.insert(0, os.environ[CODE_ENV])
    import explorer  # noqa: F401 - pins the measured checkout's package before benchmarks load
sys.path.insert(0, str(REPO))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from benchmarks import memory, scale, speed  # noqa: E402
from benchmarks import tui as tui_bench  # noqa: E402

DEFAULT_CORPUS = (
    Path.home() / ".cache/explorer-dev/debian/linux-doc-6.12/usr/share/doc/linux-doc-6.12"
)
DEFAULT_WORK = Path.home() / ".cache/explorer-dev/kernel-bench"
QUERIES = [
    "memory barrier",
    "page cache",
    "interrupt handler",
    "device tree",
    "spin lock",
    "dma mapping",
    "cgroup memory",
    "scheduler latency",
]
STAGES = (
    "open",
    "disk",
    "reopen",
    "keystrokes",
    "keystrokes_idle",
    "related",
    "index_memory",
    "raw_model",
)
ALSO_STAGES = ("also_open", "also_keystrokes")
TERMINAL_SIZE = (160, 48)
"""Wider than tui.py's 120 columns: the status bar drops whole parts that do not fit, and
``embedding X/Y chunks (N%, about M min left)`` beside the model and the search's answer needs
about 130."""
EMBEDDING = re.compile(r"embedding (\d+)/(\d+) chunks \((\d+)%(?:, ([^)]*))?\)")
WAITING_FOR_MODEL = re.compile(r"embedding (\d+) chunks once the model has loaded")
REOPEN_EMBED_SECONDS = 10.0


# -- a TUI in a terminal ------------------------------------------------------------------------
def explorer_in(code: Path, *args: str) -> str:
    """A shell command running ``python -m explorer ARGS`` from the checkout ``code``."""
    inner = f"cd {shlex.quote(str(code))} && exec {shlex.quote(sys.executable)} -m explorer "
    return "sh -c " + shlex.quote(inner + " ".join(shlex.quote(arg) for arg in args))


def app_pid(terminal: tui_bench.Terminal) -> int | None:
    """The explorer process in the terminal: the child of the pane's shell."""
    shown = subprocess.run(
        ["tmux", "-L", terminal.socket, "display", "-p", "-t", "bench", "#{pane_pid}"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not shown.isdigit():
        return None
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if fields[1] == shown and b"explorer" in cmdline:
            return int(stat.parent.name)
    return None


def memory_mb(pid: int | None) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in MB (empty once it has gone)."""
    if pid is None:
        return {}
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    found = {}
    for field in ("VmRSS", "VmHWM"):
        match = re.search(rf"{field}:\s+(\d+) kB", status)
        if match:
            found[field] = round(int(match.group(1)) / 1024, 1)
    return found


def watch_tui(
    code: Path,
    args: list[str],
    env: dict[str, str],
    query: str,
    embed_seconds: float | None,
    timeout: float,
) -> dict:
    """Launch the TUI of ``code`` with ``args`` in tmux, type ``query`` at the first frame, and
    follow the status bar until ``embed_seconds`` after the embedding first shows (None: until
    it has finished) or ``timeout``; then quit it. Times are seconds from the launch."""
    tui_bench.SIZE = TERMINAL_SIZE
    frame = Path(env["EXPLORER_DATA_DIR"]).parent / "first-frame"
    frame.unlink(missing_ok=True)
    terminal = tui_bench.Terminal(
        explorer_in(code, *args), {**env, "EXPLORER_FIRST_FRAME_FILE": str(frame)}
    )
    out: dict = {"query": query}
    samples: list[tuple[float, int, int, str]] = []
    peak_rss = 0.0
    try:
        painted = tui_bench.wait_file(frame, 60)
        out["first_frame_s"] = round(painted - terminal.started, 3) if painted else None
        terminal.keys(query, literal=True)
        pid = app_pid(terminal)
        out["pid_found"] = pid is not None
        started = terminal.started
        embed_seen = keywords_current = None
        deadline = time.time() + timeout
        while time.time() < deadline:
            screen = terminal.screen()
            now = round(time.time() - started, 2)
            peak_rss = max(peak_rss, memory_mb(pid).get("VmRSS", 0.0))
            answer = tui_bench.STATUS_ANSWER.search(screen)
            if "keyword_results_s" not in out and answer and int(answer.group(1)) > 0:
                out["keyword_results_s"] = now
                out["answered_by"] = answer.group(2)
            progress = EMBEDDING.search(screen)
            if keywords_current is None and (progress or WAITING_FOR_MODEL.search(screen)):
                keywords_current = now
            if progress:
                done, total = int(progress.group(1)), int(progress.group(2))
                samples.append((now, done, total, progress.group(4) or ""))
                if embed_seen is None:
                    embed_seen = now
            elif embed_seen is not None and "embedding" not in screen:
                out["embedding_finished_s"] = now
                break
            if (
                embed_seen is not None
                and embed_seconds is not None
                and now - embed_seen >= embed_seconds
                and "keyword_results_s" in out
            ):
                break
            time.sleep(0.1)
        out["keywords_current_s"] = keywords_current
        out["embedding_shown_s"] = embed_seen
        out["last_status"] = terminal.screen().rstrip().splitlines()[-2:]
        out.update(embedding_figures(samples))
        final = memory_mb(pid)
        out["peak_rss_mb"] = max(final.get("VmHWM", 0.0), peak_rss) or None
        out["rss_at_end_mb"] = final.get("VmRSS")
        out["quit_s"] = quit_app(terminal, pid)
    finally:
        terminal.close()
    return out


def embedding_figures(samples: list[tuple[float, int, int, str]]) -> dict:
    """The embedding as the status bar told it: rate over the window from the first batch on,
    chunks done and left at the end, the app's own estimate of the time left then."""
    if not samples:
        return {"embedding": "not seen"}
    moving = [sample for sample in samples if sample[1] > 0] or samples
    first, last = moving[0], samples[-1]
    rate = (last[1] - first[1]) / (last[0] - first[0]) if last[0] > first[0] else None
    left = last[2] - last[1]
    return {
        "first_batch_s": moving[0][0] if moving[0][1] > 0 else None,
        "chunks_to_embed": samples[0][2],
        "chunks_done_at_end": last[1],
        "chunks_left_at_end": left,
        "rate_window_s": round(last[0] - first[0], 1),
        "chunks_per_s": round(rate, 2) if rate else None,
        "app_time_left": last[3] or "n/a",
        "time_left_at_measured_rate_min": round(left / rate / 60, 1) if rate else None,
    }


def quit_app(terminal: tui_bench.Terminal, pid: int | None) -> float | None:
    """``ctrl+q``; seconds until the process has exited (None if it did not in 60 s)."""
    begin = time.monotonic()
    try:
        terminal.keys("C-q")
    except subprocess.CalledProcessError:
        return None
    while pid is not None and Path(f"/proc/{pid}").exists():
        if time.monotonic() - begin > 60:
            return None
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
        except OSError:
            break
        time.sleep(0.02)
    return round(time.monotonic() - begin, 3)


# -- one checkout --------------------------------------------------------------------------------
class Checkout:
    """One checkout under measure: its code, its folder in --work, the environment of its
    processes."""

    def __init__(self, label: str, code: Path, work: Path) -> None:
        self.label, self.code, self.home = label, code.resolve(), work / label
        self.index = self.home / "index"
        self.home.mkdir(parents=True, exist_ok=True)
        self.env = {
            "EXPLORER_DATA_DIR": str(self.home / "data"),
            "EXPLORER_CONFIG_DIR": str(self.home / "config"),
            "EXPLORER_STATE_DIR": str(self.home / "state"),
            "EXPLORER_NO_DAEMON": "1",
            "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": str(self.code),
            "TERM": os.environ.get("TERM", "xterm-256color"),
        }

    def data_env(self, data: Path) -> dict[str, str]:
        """The environment with another data folder (the --also window's own indexes)."""
        return {**self.env, "EXPLORER_DATA_DIR": str(data)}

    def child(self, stage: str, options: dict, env: dict | None = None) -> dict:
        """Run ``stage`` in a child process importing this checkout's ``explorer``; its JSON
        answer, with the child's peak RSS (from wait4)."""
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "child",
            stage,
            json.dumps(options),
        ]
        full_env = {**os.environ, **(env or self.env), CODE_ENV: str(self.code)}
        done = scale.measured_process(command, full_env, timeout=7200)
        answer = json.loads(done["stdout"].strip().splitlines()[-1])
        answer["child_peak_rss_mb"] = round(done["peak_rss_mb"], 1)
        return answer

    def status(self) -> dict:
        """``explorer status --json`` of the index (chunks, vectors)."""
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "explorer",
                "status",
                str(CORPUS),
                "--index-dir",
                str(self.index),
            ]
            + ["--json"],
            cwd=self.code,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"explorer status failed: {done.stderr.strip()[-300:]}")
        return json.loads(done.stdout)


CORPUS = DEFAULT_CORPUS
"""The corpus of this run (set by main)."""


def stage_open(checkout: Checkout, options: argparse.Namespace) -> dict:
    shutil.rmtree(checkout.index, ignore_errors=True)
    shutil.rmtree(checkout.home / "state", ignore_errors=True)
    args = [str(CORPUS), "--index-dir", str(checkout.index)]
    seconds = None if options.full else options.embed_seconds
    timeout = 4 * 3600 if options.full else 600 + options.embed_seconds
    return watch_tui(checkout.code, args, checkout.env, QUERIES[0], seconds, timeout)


def stage_reopen(checkout: Checkout, options: argparse.Namespace) -> dict:
    before = options.report.get(checkout.label, {}).get("open", {})
    args = [str(CORPUS), "--index-dir", str(checkout.index)]
    found = watch_tui(checkout.code, args, checkout.env, QUERIES[1], REOPEN_EMBED_SECONDS, 300)
    # The open stage's last look at the status bar: batches finished after it and before the
    # quit make the re-open's count a little lower; a higher one means vectors were lost.
    found["chunks_left_at_quit"] = before.get("chunks_left_at_end")
    return found


def stage_disk(checkout: Checkout, options: argparse.Namespace) -> dict:
    keyword = vectors = encoder = other = 0
    for path in checkout.index.rglob("*"):
        if not path.is_file():
            continue
        size = path.stat().st_size
        relative = path.relative_to(checkout.index)
        if relative.parts[0].startswith("index.sqlite"):
            keyword += size
        elif "chroma" in relative.parts[0]:
            vectors += size
        elif relative.parts[0] == "query-encoder":
            encoder += size
        else:
            other += size
    status = checkout.status()
    return {
        "keyword_index_mb": round(keyword / 2**20, 1),
        "vector_store_mb": round(vectors / 2**20, 1),
        "query_encoder_mb": round(encoder / 2**20, 1),
        "other_mb": round(other / 2**20, 1),
        "chunks": status.get("chunks"),
        "chunks_embedded": status.get("vectors"),
    }


def stage_keystrokes(checkout: Checkout, options: argparse.Namespace, idle: bool = False) -> dict:
    request = {
        "corpus": str(CORPUS),
        "index": str(checkout.index),
        "queries": QUERIES[: options.tui_queries],
        "idle": idle,
    }
    if not idle:
        return checkout.child("keystrokes", request)
    status = checkout.status()
    if status.get("vectors", 0) >= status.get("chunks", 1):
        return checkout.child("keystrokes", request)
    # Not every chunk has its vector: this process takes the index's writer lock, so the app
    # opens it read-only and embeds nothing. The same vectors, the same keyword tables, no
    # embedding: the idle index the 1.5x compares with, without an hour of --full.
    from explorer.core.store.index_files import LOCK_NAME
    from explorer.core.store.write_lock import WriteLock

    lock = WriteLock(checkout.index / LOCK_NAME)
    lock.acquire("benchmarks/kernel.py: keystrokes on an idle index")
    try:
        answer = checkout.child("keystrokes", {**request, "held": True})
    finally:
        lock.release()
    answer["idle_by"] = (
        f"writer lock held: {status.get('vectors')} of {status.get('chunks')} chunks embedded,"
        " none embedding"
    )
    return answer


def stage_related(checkout: Checkout, options: argparse.Namespace) -> dict:
    request = {"corpus": str(CORPUS), "index": str(checkout.index), "files": options.related_files}
    return checkout.child("related", request)


def stage_index_memory(checkout: Checkout, options: argparse.Namespace) -> dict:
    index = checkout.home / "index-memory"
    shutil.rmtree(index, ignore_errors=True)
    request = {"corpus": str(CORPUS), "index": str(index), "seconds": options.embed_seconds}
    try:
        return checkout.child("index_memory", request)
    finally:
        shutil.rmtree(index, ignore_errors=True)


def stage_raw_model(checkout: Checkout, options: argparse.Namespace) -> dict:
    """The raw model on chunk texts of this checkout's index (the texts are read with this
    checkout's code: the model is the same whichever checkout runs beside it)."""
    index = options.this_index
    if not (index / "index.sqlite").exists():
        index = checkout.index
    this = Checkout("this", REPO, options.work)
    request = {"corpus": str(CORPUS), "index": str(index), "chunks": options.raw_chunks}
    return this.child("raw_model", request, env=checkout.env | {"PYTHONPATH": str(REPO)})


def stage_also_open(checkout: Checkout, options: argparse.Namespace) -> dict:
    data = checkout.home / "also-data"
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(checkout.home / "state", ignore_errors=True)
    seconds = None if options.full else options.embed_seconds
    timeout = 4 * 3600 if options.full else 900 + options.embed_seconds
    args = [str(CORPUS), str(options.also)]
    return watch_tui(checkout.code, args, checkout.data_env(data), QUERIES[0], seconds, timeout)


def stage_also_keystrokes(checkout: Checkout, options: argparse.Namespace) -> dict:
    request = {
        "corpus": str(CORPUS),
        "also": str(options.also),
        "queries": QUERIES[: options.tui_queries],
        "idle": False,
    }
    return checkout.child("keystrokes", request, env=checkout.data_env(checkout.home / "also-data"))


RUNNERS = {
    "open": stage_open,
    "disk": stage_disk,
    "reopen": stage_reopen,
    "keystrokes": stage_keystrokes,
    "keystrokes_idle": lambda checkout, options: stage_keystrokes(checkout, options, idle=True),
    "related": stage_related,
    "index_memory": stage_index_memory,
    "raw_model": stage_raw_model,
    "also_open": stage_also_open,
    "also_keystrokes": stage_also_keystrokes,
}


# -- the children (they import the measured checkout's explorer) --------------------------------
IDLE_SETTLE_S = 15.0
"""Seconds from launch before ``keystrokes_idle`` types on an index held read-only."""


def child_keystrokes(request: dict) -> dict:
    """Pilot keystrokes while the app's own embedding runs (or on an idle index)."""
    from explorer.core.models import SyncPhase

    def embedding_runs(screen) -> bool:  # the measured checkout's MainScreen
        progress = screen.state.progress
        lives = list(screen.lives.values())
        idle = bool(lives) and all(live is not None and not live.busy for live in lives)
        embedding = progress is not None and progress.phase is SyncPhase.EMBED
        return screen.state.semantic_ready and (embedding or idle)

    corpus = Path(request["corpus"])
    if "also" in request:
        from explorer.settings.locations import default_index_dir

        also = Path(request["also"])
        index, pair = default_index_dir(corpus), (also, default_index_dir(also))
    else:
        index, pair = Path(request["index"]), None

    asked: list[float] = []

    def read_only(screen) -> bool:  # another process holds the writer lock: nothing embeds
        # Typing starts no sooner than the embedding run's does (14-15 s after launch, when its
        # embedding phase shows): at 2 s it met the window's own start-up work, not the index.
        asked.append(time.monotonic())
        return screen.state.semantic_ready and asked[-1] - asked[0] >= IDLE_SETTLE_S

    ready = (read_only if request.get("held") else None) if request["idle"] else embedding_runs
    return asyncio.run(
        tui_bench.keystrokes(
            corpus, index, 0.2, None, False, pair, request["queries"], ready, 900.0
        )
    )


def child_related(request: dict) -> dict:
    """``related_files`` on files that have their vectors."""
    from explorer.core.models import FileState
    from explorer.core.retrieval.related import RelatedError, related_files
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    index = Index.open_existing(Settings.for_root(Path(request["corpus"]), Path(request["index"])))
    files = index.keywords.files()
    fresh = sorted(path for path, record in files.items() if record.state == FileState.FRESH)
    chosen = random.Random(11).sample(fresh, min(len(fresh), request["files"] + 3))
    times, failed = [], 0
    for number, path in enumerate(chosen):
        begin = time.perf_counter()
        try:
            related_files(index, path, 10)
        except RelatedError:
            failed += 1
            continue
        if number >= 3:  # the first calls open the stores
            times.append(time.perf_counter() - begin)
    index.close()
    return {
        **tui_bench.summary(times),
        "files_with_vectors": len(fresh),
        "files": len(files),
        "failed": failed,
    }


def child_index_memory(request: dict) -> dict:
    """``benchmarks.memory.measure`` with the embedding stopped after ``seconds``."""
    seconds = request["seconds"]
    found = memory.measure(Path(request["corpus"]), Path(request["index"]), False, seconds)
    embedded = found.get("embedded") or 0
    found["chunks_per_s_about"] = round(embedded / seconds, 2) if seconds else None
    return found


def child_raw_model(request: dict) -> dict:
    """The raw model's rate on a seeded sample of the index's chunk texts."""
    texts = speed.embedding_texts(Path(request["corpus"]), Path(request["index"]))
    sample = random.Random(7).sample(texts, min(len(texts), request["chunks"]))
    found = speed.raw_model_throughput(sample)
    return {
        "chunks": len(sample),
        "of_chunks": len(texts),
        "chunks_per_s": round(found["chunks_per_s"], 2),
        "tokens_per_s": round(found["tokens_per_s"], 1),
        "seconds": round(found["seconds"], 1),
    }


CHILDREN = {
    "keystrokes": child_keystrokes,
    "related": child_related,
    "index_memory": child_index_memory,
    "raw_model": child_raw_model,
}


# -- the report ---------------------------------------------------------------------------------
def _get(report: dict, label: str, stage: str, *keys: str) -> float | str | None:
    value: object = report.get(label, {}).get(stage, {})
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float, str)) else None


ROWS: list[tuple[str, str, tuple[str, ...], float | None]] = [
    # (measure, stage, keys into the stage's answer, budget: at most this)
    ("open: first frame, s", "open", ("first_frame_s",), 1.0),
    ("open: keyword results for a query typed at once, s", "open", ("keyword_results_s",), 120.0),
    ("open: embedding shown in the status bar, s", "open", ("embedding_shown_s",), None),
    ("open: TUI peak RSS while embedding, MB", "open", ("peak_rss_mb",), 1024.0),
    ("open: app's embedding rate, chunks/s", "open", ("chunks_per_s",), None),
    ("open: chunks embedded in the window", "open", ("chunks_done_at_end",), None),
    ("open: time left, the app's estimate", "open", ("app_time_left",), None),
    (
        "open: time left at the measured rate, min",
        "open",
        ("time_left_at_measured_rate_min",),
        None,
    ),
    ("open: quit (ctrl+q until exit), s", "open", ("quit_s",), None),
    ("disk: keyword index, MB", "disk", ("keyword_index_mb",), None),
    ("disk: vector store, MB", "disk", ("vector_store_mb",), None),
    ("disk: query encoder (ONNX), MB", "disk", ("query_encoder_mb",), None),
    ("disk: chunks embedded then", "disk", ("chunks_embedded",), None),
    ("re-open: first frame, s", "reopen", ("first_frame_s",), 1.0),
    ("re-open: keyword results, s", "reopen", ("keyword_results_s",), 5.0),
    ("re-open: keyword index current, s", "reopen", ("keywords_current_s",), 5.0),
    ("re-open: embedding resumed (embed phase shown), s", "reopen", ("embedding_shown_s",), 5.0),
    ("re-open: first batch embedded, s", "reopen", ("first_batch_s",), None),
    ("re-open: chunks to embed", "reopen", ("chunks_to_embed",), None),
    ("re-open: chunks left at the quit before", "reopen", ("chunks_left_at_quit",), None),
    ("re-open: TUI peak RSS, MB", "reopen", ("peak_rss_mb",), 1024.0),
    (
        "keystroke -> results while embedding, keyword p95, ms",
        "keystrokes",
        ("keyword", "p95_ms"),
        50.0,
    ),
    (
        "keystroke -> results while embedding, keyword p50, ms",
        "keystrokes",
        ("keyword", "p50_ms"),
        None,
    ),
    (
        "keystroke -> results while embedding, hybrid p95, ms",
        "keystrokes",
        ("hybrid", "p95_ms"),
        100.0,
    ),
    (
        "keystroke -> results while embedding, hybrid p50, ms",
        "keystrokes",
        ("hybrid", "p50_ms"),
        None,
    ),
    ("keystrokes: Pilot process peak RSS, MB", "keystrokes", ("child_peak_rss_mb",), 1024.0),
    ("keystroke -> results idle, keyword p95, ms", "keystrokes_idle", ("keyword", "p95_ms"), None),
    ("keystroke -> results idle, hybrid p95, ms", "keystrokes_idle", ("hybrid", "p95_ms"), None),
    ("related files p50, ms", "related", ("p50_ms",), None),
    ("related files p95, ms", "related", ("p95_ms",), None),
    ("`explorer index` peak RSS (N s of embedding), MB", "index_memory", ("peak_rss_mb",), 1200.0),
    ("`explorer index` chunks embedded in N s", "index_memory", ("embedded",), None),
    ("raw model (fp32 encode, batch 32), chunks/s", "raw_model", ("chunks_per_s",), None),
    ("two folders: first frame, s", "also_open", ("first_frame_s",), 1.0),
    ("two folders: keyword results, s", "also_open", ("keyword_results_s",), 120.0),
    ("two folders: TUI peak RSS, MB", "also_open", ("peak_rss_mb",), 1024.0),
    ("two folders: keyword p95, ms", "also_keystrokes", ("keyword", "p95_ms"), 50.0),
    ("two folders: hybrid p95, ms", "also_keystrokes", ("hybrid", "p95_ms"), 100.0),
]


DERIVED_ROWS: list[tuple[str, str, float | None]] = [
    ("the app's embedding rate / the raw model's", "app_vs_raw_model", None),
    ("`explorer index` rate / the raw model's", "index_vs_raw_model", None),
    ("keyword p95 while embedding / idle", "keyword_vs_idle", 1.5),
    ("hybrid p95 while embedding / idle", "hybrid_vs_idle", 1.5),
]


def derived(answers: dict) -> dict[str, float]:
    """Ratios within one checkout's answers: its rates against the raw model's, its typing
    while embedding against an idle index (issue 32: within 1.5x)."""
    pairs = {
        "app_vs_raw_model": (("open", "chunks_per_s"), ("raw_model", "chunks_per_s")),
        "index_vs_raw_model": (
            ("index_memory", "chunks_per_s_about"),
            ("raw_model", "chunks_per_s"),
        ),
        "keyword_vs_idle": (
            ("keystrokes", "keyword", "p95_ms"),
            ("keystrokes_idle", "keyword", "p95_ms"),
        ),
        "hybrid_vs_idle": (
            ("keystrokes", "hybrid", "p95_ms"),
            ("keystrokes_idle", "hybrid", "p95_ms"),
        ),
    }
    found = {}
    for name, (top, bottom) in pairs.items():
        over = _get({"x": answers}, "x", *top)
        under = _get({"x": answers}, "x", *bottom)
        if isinstance(over, (int, float)) and isinstance(under, (int, float)) and under:
            found[name] = round(over / under, 2)
    return found


def _shown(value: float | str | None) -> str:
    return "n/a" if value is None else str(value)


def table(report: dict) -> str:
    """Both checkouts side by side: each figure, its ratio (this / baseline), its budget."""
    labels = [label for label in ("this", "baseline") if label in report]
    lines = [f"corpus: {report.get('corpus')}; embed window: {report.get('embed_seconds')} s"]
    for label in labels:
        lines.append(f"{label}: {report[label].get('code')}")
    header = ["measure", *labels, "ratio", "budget", "this checkout"]
    for label in labels:
        report[label]["derived"] = derived(report[label])
    rows = []
    every = ROWS + [(name, "derived", (key,), budget) for name, key, budget in DERIVED_ROWS]
    for name, stage, keys, budget in every:
        if not any(stage in report[label] for label in labels):
            continue
        values = [_get(report, label, stage, *keys) for label in labels]
        ratio = ""
        numbers = [v for v in values if isinstance(v, (int, float))]
        if len(labels) == 2 and len(numbers) == 2 and numbers[1]:
            ratio = f"{numbers[0] / numbers[1]:.2f}x"
        this = values[0]
        met = ""
        if budget is not None:
            met = scale.verdict(this if isinstance(this, (int, float)) else None, budget)
        rows.append([name, *map(_shown, values), ratio, _shown(budget) if budget else "", met])
    for label in labels:
        for stage, answer in report[label].items():
            if isinstance(answer, dict) and ("error" in answer or "skipped" in answer):
                why = answer.get("error") or answer.get("skipped")
                blank = [""] * (len(header) - 2)
                rows.append([f"{label} {stage}: not measured", str(why)[-120:], *blank])
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        )
    keys = report.get("this", {}).get("keystrokes", {})
    if "busy_at_end" in keys:
        lines.append(
            f"keystrokes (this): typing began at {keys.get('index_at_start')!r}, ended at "
            f"{keys.get('index_at_end')!r}; embedding still running at the end: "
            f"{keys.get('busy_at_end')}"
        )
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 3 and sys.argv[1] == "child":
        print(json.dumps(CHILDREN[sys.argv[2]](json.loads(sys.argv[3]))))
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "table":
        print(table(json.loads(Path(sys.argv[2]).read_text())))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--baseline", type=Path, help="another git checkout, measured the same")
    parser.add_argument("--also", type=Path, help="a second folder for the two-folder stages")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="indexes and the report")
    parser.add_argument(
        "--stages",
        default=",".join(STAGES),
        help=f"comma-separated, of {', '.join(STAGES + ALSO_STAGES)} (--also adds its own)",
    )
    parser.add_argument("--checkouts", default="this,baseline", help="which to run: this,baseline")
    parser.add_argument("--embed-seconds", type=float, default=120.0)
    parser.add_argument("--full", action="store_true", help="open: wait for the whole embedding")
    parser.add_argument("--tui-queries", type=int, default=len(QUERIES))
    parser.add_argument("--related-files", type=int, default=40)
    parser.add_argument("--raw-chunks", type=int, default=960)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if shutil.which("tmux") is None:
        parser.error("tmux is needed for the terminal stages (apt-get install tmux)")
    global CORPUS
    CORPUS = options.corpus.resolve()
    if not CORPUS.is_dir():
        parser.error(f"no such folder: {CORPUS}")
    options.work = options.work.resolve()
    options.work.mkdir(parents=True, exist_ok=True)
    saved = options.work / "report.json"
    report: dict = json.loads(saved.read_text()) if saved.exists() else {}
    if report.get("corpus") not in (None, str(CORPUS)):
        report = {}  # another corpus's report is not merged into this one
    report.update({"corpus": str(CORPUS), "embed_seconds": options.embed_seconds})
    options.report = report
    options.this_index = options.work / "this" / "index"
    stages = [name for name in options.stages.split(",") if name]
    if options.also is not None:
        options.also = options.also.resolve()
        if not any(name in ALSO_STAGES for name in stages):  # named alone: run alone
            stages += list(ALSO_STAGES)
    unknown = set(stages) - set(RUNNERS)
    if unknown:
        parser.error(f"unknown stages: {', '.join(sorted(unknown))}")
    trees = [("this", REPO)]
    if options.baseline is not None:
        trees.append(("baseline", options.baseline))
    wanted = set(options.checkouts.split(","))
    for label, code in trees:
        if label not in wanted:
            continue
        checkout = Checkout(label, code, options.work)
        answers = report.setdefault(label, {})
        answers["code"] = str(checkout.code)
        answers["commit"] = subprocess.run(
            ["git", "-C", str(checkout.code), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        for name in (stage for stage in RUNNERS if stage in stages):
            begin = time.monotonic()
            print(f"[{time.strftime('%H:%M:%S')}] {label}: {name}…", file=sys.stderr)
            try:
                answers[name] = RUNNERS[name](checkout, options)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the report says what failed
                answers[name] = {"error": " ".join(str(error).split())[-600:]}
            answers[name]["stage_wall_s"] = round(time.monotonic() - begin, 1)
            answers["derived"] = derived(answers)
            saved.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2) if options.json else table(report))
    print(f"report: {saved}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
