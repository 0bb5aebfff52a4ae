"""A cold first open: how soon the file a user opens shows its related files (issue 13).

    python benchmarks/priority.py [--files 300] [--open-after 5] [--json]
    PYTHONPATH=/path/to/older/checkout python benchmarks/priority.py   # the same, before

Copies ``--files`` real nginx docs (all of ``content/nginx/admin-guide``, then the rest of
the other files in path order) into a temp folder, opens the explorer TUI
on it headless (Textual's Pilot, the bundled model, an empty index, no watcher), waits
``--open-after`` seconds, opens ``--target`` the way ctrl+p does (the quick-open dialog returns
the path), and times, from that moment, until the related sidebar lists related files (and
until it lists a full page of them), with when the document model was ready and when the
file's own vectors were in. It also reports how far the whole folder's embedding was
then. Target: the first related files within 20 s.

The script uses only the app's public behaviour, so the same file run against an older
checkout (``PYTHONPATH``) measures the order before the change; ``--no-hints`` keeps this
checkout's order but drops the user's hints (most recently modified files first only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "nginx-docs"
FIRST = "content/nginx/admin-guide"
TARGET = "content/nginx/admin-guide/load-balancer/http-health-check.md"
SIZE = (120, 40)
FULL_PAGE = 8
"""How many related files the sidebar asks for (RELATED_FILES)."""


def copy_corpus(source: Path, destination: Path, count: int) -> list[str]:
    """Copy ``count`` Markdown files of ``source`` (``FIRST`` first) keeping their paths."""
    every = sorted(p.relative_to(source).as_posix() for p in source.rglob("*.md"))
    first = [p for p in every if p.startswith(FIRST + "/")]
    chosen = (first + [p for p in every if not p.startswith(FIRST + "/")])[:count]
    for rel in chosen:
        target = destination / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, target)
    return chosen


def disable_hints() -> None:
    """Keep the embedding order of this checkout but ignore every focus the UI posts."""
    from explorer.core.indexing.embed_priority import EmbeddingPriority

    EmbeddingPriority.set_focus = lambda self, focus: None  # type: ignore[method-assign]


def embedding_order(no_hints: bool) -> str:
    """Which order the checkout embeds in: the user's hints, the base order, or the old one."""
    try:
        import explorer.core.indexing.embed_priority  # noqa: F401
    except ImportError:
        return "before issue 13 (the index's own order)"
    return "base order only (--no-hints)" if no_hints else "user's hints first"


async def measure(corpus: Path, index_dir: Path, target: str, open_after: float, limit: float):
    from explorer.core.live.events import ModelState
    from explorer.tui.app import make_app

    app = make_app(corpus, index_dir=index_dir, watch=False)
    out: dict = {"target": target}
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        started = time.monotonic()
        while time.monotonic() - started < open_after:
            await pilot.pause(0.05)
        await pilot.press("ctrl+p")
        while type(app.screen).__name__ != "FuzzyJump":
            await pilot.pause(0.02)
        opened = time.monotonic()
        app.screen.dismiss(target)  # what the dialog does when the user picks the file
        out["opened_at_s"] = round(opened - started, 2)
        first = full = model_ready = embedded = None
        progress_then = ""
        if screen.state.document_model is ModelState.READY:
            model_ready = 0.0  # already loaded when the file was opened
        while time.monotonic() - opened < limit:
            if model_ready is None and screen.state.document_model is ModelState.READY:
                model_ready = time.monotonic() - opened
            if embedded is None and screen.file_tree.state_of(target) == "fresh":
                embedded = time.monotonic() - opened
            items = screen.related.items if screen.current_path == target else []
            if items and first is None:
                first = time.monotonic() - opened
                progress_then = screen.status.index_text
            if len(items) >= FULL_PAGE:
                full = time.monotonic() - opened
                break
            await pilot.pause(0.05)
        out["model_ready_s"] = round(model_ready, 1) if model_ready is not None else None
        out["file_embedded_s"] = round(embedded, 1) if embedded is not None else None
        out["first_related_s"] = round(first, 1) if first is not None else None
        out["full_page_s"] = round(full, 1) if full is not None else None
        out["status_at_first_related"] = progress_then
        out["status_at_end"] = screen.status.index_text
        out["related"] = [item.path for item in screen.related.items][:FULL_PAGE]
        if screen.live is not None:
            screen.live.stop()  # do not wait for the whole folder on the way out
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--target", default=TARGET)
    parser.add_argument("--open-after", type=float, default=5.0)
    parser.add_argument("--limit", type=float, default=120.0, help="give up after (s)")
    parser.add_argument("--no-hints", action="store_true", help="ignore the UI's focus")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}: pass --corpus", file=sys.stderr)
        return 2
    if args.no_hints:
        disable_hints()
    with tempfile.TemporaryDirectory(prefix="explorer-priority-") as scratch:
        corpus = Path(scratch) / "docs"
        files = copy_corpus(args.corpus, corpus, args.files)
        if args.target not in files:
            print(f"{args.target} is not among the copied files", file=sys.stderr)
            return 2
        result = asyncio.run(
            measure(corpus, Path(scratch) / "index", args.target, args.open_after, args.limit)
        )
    result["files"] = len(files)
    result["order"] = embedding_order(args.no_hints)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
