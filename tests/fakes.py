"""A small deterministic embedder for fast tests: hashed bags of words, no model."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Embeds text as a normalised bag of hashed lowercase words (and word stems).

    Texts that share words get similar vectors, which is enough to test ranking, fusion and
    related files without loading a model.
    """

    name = "fake-hash-64"

    def __init__(self, dimension: int = 64) -> None:
        self._dimension = dimension
        self.documents_embedded = 0
        self.queries_embedded = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in WORD.finditer(text)]

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dimension, dtype=np.float32)
        for word in WORD.findall(text.lower()):
            for token in {word, word[:5]}:
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dimension
                vector[slot] += 1.0 if digest[4] % 2 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.documents_embedded += len(texts)
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        self.queries_embedded += 1
        return self._vector(text)

    def load_query_path(self) -> None:
        """Nothing to load."""


def index_with_fake_model(root: Path, index_dir: Path) -> None:
    """``explorer index ROOT --index-dir INDEX_DIR`` run in this process with the fake model
    in place of the real one."""
    from click.testing import CliRunner

    from explorer.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        done = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
    assert done.exit_code == 0, done.output


def land_edit(index, root, path: str, text: str) -> None:
    """The live index takes an edit of ``path`` now, from a thread of its own (keywords only)."""
    import threading

    from explorer.core.indexing.indexer import Indexer

    (root / path).write_text(text)
    writer = threading.Thread(target=lambda: Indexer(index).sync(embed=False))
    writer.start()
    writer.join(10)


def edit_after_first_ranking(monkeypatch, index, root, path: str, text: str) -> list[str]:
    """Have the live index land an edit of ``path`` right after ``index``'s first keyword
    ranking (before the passages ranked are read); the list it returns holds the file's new
    hash once that happened."""
    real_search = index.keywords.search
    updated: list[str] = []

    def search_then_update(*args, **kwargs):
        ranked = real_search(*args, **kwargs)
        if not updated:
            land_edit(index, root, path, text)
            updated.append(index.keywords.file(path).hash)
        return ranked

    monkeypatch.setattr(index.keywords, "search", search_then_update)
    return updated
