"""Two folders opened in one process: when each is keyword-searchable, with keywords first or not.

    flock /tmp/explorer-heavy.lock python benchmarks/keywords_first.py \
        [--corpus KERNEL_DOCS] [--also ../shared/corpora] [--runs 2] [--json]

A window (or an MCP server) over several folders runs one live index per folder in one
process. Since stop 44 no model batch starts while another of them reads files into its keyword
index (``KeywordPasses``). This script opens the two folders as a window does (two
:class:`~explorer.core.live.writer.LiveIndex` writers, the bundled model loaded once for both,
fresh indexes in a temporary folder, no watcher) and times, from the start, when each folder's
keyword pass ended (its first ``files_changed`` event) and when its first model batch was
stored. Each run opens them twice, in turn: with the rule, and with it switched off in this
process (the baseline: each folder embeds as soon as its own keywords are in). Both folders are
keyword-searchable at the later of the two passes' ends; the price of the rule is the smaller
folder's first batch, which now waits for the larger folder's pass.

The status bar of the TUI shows one folder's progress at a time, so ``kernel.py --stages
also_open`` cannot tell which folder's embedding it sees; this script hears each folder's own
events. Run it alone on the machine: the passes and the model share two cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = (
    Path.home() / ".cache/explorer-dev/debian/linux-doc-6.12/usr/share/doc/linux-doc-6.12"
)
DEFAULT_ALSO = REPO.parent / "shared" / "corpora"
TIMEOUT_S = 600.0


class _NoPasses:
    """Stands in for the process's ``KeywordPasses``: a pass counts for nothing."""

    def running(self) -> AbstractContextManager[None]:
        return nullcontext()

    @property
    def any_running(self) -> bool:
        return False

    def wait_for_none(self, _cancel: object) -> float:
        return 0.0


def open_both(folders: dict[str, Path], keywords_first: bool) -> dict[str, float]:
    """Open every folder's live index at once; seconds from the start to each folder's end of
    keywords and first stored batch."""
    from explorer.core.live import writer
    from explorer.core.live.writer import FilesChangedEvent, LiveIndex, ProgressEvent
    from explorer.core.models import SyncPhase
    from explorer.settings.config import Settings

    kept = writer.KEYWORD_PASSES
    writer.KEYWORD_PASSES = kept if keywords_first else _NoPasses()  # type: ignore[assignment]
    marks: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="keywords-first-"))
    started = time.monotonic()

    def heard(name: str):
        def on_event(event: object) -> None:
            now = round(time.monotonic() - started, 2)
            if isinstance(event, FilesChangedEvent) and event.initial:
                marks.setdefault(f"{name}: keywords", now)
            if (
                isinstance(event, ProgressEvent)
                and event.phase is SyncPhase.EMBED
                and event.chunks_done > 0
            ):
                marks.setdefault(f"{name}: first batch", now)

        return on_event

    lives = [
        LiveIndex(Settings.for_root(root, work / name), heard(name), watch=False)
        for name, root in folders.items()
    ]
    try:
        for live in lives:
            live.start()
        wanted = {f"{name}: first batch" for name in folders}
        while not wanted <= marks.keys() and time.monotonic() - started < TIMEOUT_S:
            time.sleep(0.1)
    finally:
        for live in lives:
            live.stop()
        writer.KEYWORD_PASSES = kept
        shutil.rmtree(work, ignore_errors=True)
    keyword_ends = [marks.get(f"{name}: keywords", TIMEOUT_S) for name in folders]
    marks["all keyword-searchable"] = max(keyword_ends)
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--also", type=Path, default=DEFAULT_ALSO)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    for folder in (options.corpus, options.also):
        if not folder.is_dir():
            parser.error(f"no such folder: {folder}")
    from explorer.core.embed.embedder import keep_loaded_embedders

    keep_loaded_embedders()  # the window's folders share one copy of the model
    folders = {"corpus": options.corpus.resolve(), "also": options.also.resolve()}
    runs: dict[str, list[dict[str, float]]] = {"keywords first": [], "baseline": []}
    for _ in range(options.runs):
        for label, rule in (("baseline", False), ("keywords first", True)):
            runs[label].append(open_both(folders, rule))
            print(f"{label}: {json.dumps(runs[label][-1], sort_keys=True)}", flush=True)
    medians = {
        label: {key: statistics.median(run[key] for run in found) for key in found[0]}
        for label, found in runs.items()
    }
    if options.json:
        named = {name: str(folder) for name, folder in folders.items()}
        print(json.dumps({"folders": named, "runs": runs, "medians": medians}))
        return 0
    keys = sorted(medians["baseline"])
    print(f"{'seconds from the start (median)':<36} {'keywords first':>15} {'baseline':>10}")
    for key in keys:
        first, base = medians["keywords first"].get(key), medians["baseline"].get(key)
        print(f"{key:<36} {first:>15.1f} {base:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
