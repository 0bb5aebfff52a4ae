"""Run one sync of an index with a slow fake embedder, to be killed at a random moment.

Used by ``test_crash_safety.py``: ``python crash_worker.py ROOT INDEX_DIR``. It imports everything,
prints ``imported`` and waits for a line on stdin (so the caller can start the next worker while the
previous one still runs), then opens the index, prints ``ready`` (the caller times its kill from
here, to land inside the sync) and syncs, printing ``done`` when the sync finished.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import chromadb  # noqa: F401 - the slow import, done before the caller says go

from explorer.core.indexing.indexer import Indexer
from explorer.core.store.index import Index
from explorer.core.store.vectors import VectorStore  # noqa: F401 - import Chroma's wrapper up front
from explorer.settings.config import Settings
from tests.fakes import FakeEmbedder

EMBED_BATCH = 2
SECONDS_PER_BATCH = 0.01


class SlowFakeEmbedder(FakeEmbedder):
    """The fake embedder, slowed down to widen the window in which a kill hits embedding."""

    def embed_documents(self, texts):
        time.sleep(SECONDS_PER_BATCH)
        return super().embed_documents(texts)


def main() -> None:
    root, index_dir = Path(sys.argv[1]), Path(sys.argv[2])
    print("imported", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name, embed_batch=EMBED_BATCH)
    index = Index(settings, embedder=SlowFakeEmbedder())
    index.acquire_write_lock()
    index.vectors  # open Chroma before saying ready  # noqa: B018
    print("ready", flush=True)
    Indexer(index).sync()
    index.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
