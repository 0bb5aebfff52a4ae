"""Index a folder in its own process with the fake embedder, on cue: for multi-process tests.

``python -m tests.index_worker ROOT INDEX_DIR MODEL [CHROMA_URL]`` imports everything, prints
``imported`` and waits for ``go`` on stdin, so a test can start several workers and release them
at the same moment. It then takes the write lock (printing ``busy: MESSAGE`` and exiting 3 if
another process holds it), syncs, and prints the report as one JSON line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chromadb  # noqa: F401 - the slow import, done before the cue

from explorer.api.answers import IndexAnswer
from explorer.core.indexing.indexer import Indexer
from explorer.core.store.index import Index, IndexBusy
from explorer.settings.config import Settings
from tests.fakes import FakeEmbedder

BUSY_EXIT = 3


def main() -> int:
    root, index_dir, model = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    chroma_url = sys.argv[4] if len(sys.argv) > 4 else None
    print("imported", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 1
    settings = Settings.for_root(root, index_dir, model=model, chroma_url=chroma_url)
    index = Index(settings, embedder=FakeEmbedder())
    try:
        index.acquire_write_lock()
    except IndexBusy as error:
        print(f"busy: {error}", flush=True)
        index.close()
        return BUSY_EXIT
    try:
        report = Indexer(index).sync()
    finally:
        index.close()
    print(json.dumps(IndexAnswer.build(str(root), report).to_json()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
