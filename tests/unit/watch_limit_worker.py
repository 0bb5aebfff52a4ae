"""Run by tests/unit/test_watch_limit.py inside a user namespace whose inotify watch limit is
lowered: a live index over a tree with more folders than the limit allows.

Prints one JSON line: the live index's messages, and whether a file written afterwards in the
deepest folder became searchable (and how soon).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from explorer.core.live.events import ErrorEvent, LiveEvent
from explorer.core.live.writer import LiveIndex
from explorer.core.retrieval.search import SearchRequest, search
from explorer.settings.config import Settings
from tests.fakes import FakeEmbedder

LIMIT = 3
"""Watches allowed in the namespace: fewer than the tree's folders."""


def main(work: Path) -> None:
    Path("/proc/sys/user/max_inotify_watches").write_text(f"{LIMIT}\n")
    root = work / "root"
    deep = root
    for depth in range(8):
        deep = deep / f"level{depth}"
        deep.mkdir(parents=True)
        (deep / f"note{depth}.md").write_text(f"# Note {depth}\n\nAbout level {depth}.\n")
    messages: list[str] = []

    def on_event(event: LiveEvent) -> None:
        if isinstance(event, ErrorEvent):
            messages.append(event.message)

    settings = Settings.for_root(root, work / "index", model="fake-hash-64")
    live = LiveIndex(settings, on_event, embedder=FakeEmbedder(), debounce_seconds=0.1)
    live.start()
    try:
        live.wait_idle(30)
        (deep / "fresh.md").write_text("# Fresh\n\nThe axolotl arrived after the start.\n")
        written = time.monotonic()
        found_after = None
        while time.monotonic() - written < 30:
            hits = search(live.index, SearchRequest("axolotl", mode="keyword")).results
            if any(hit.path.endswith("fresh.md") for hit in hits):
                found_after = time.monotonic() - written
                break
            time.sleep(0.1)
    finally:
        live.stop()
    print(json.dumps({"messages": messages, "found_after": found_after}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
