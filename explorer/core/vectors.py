"""The vector store: a Chroma collection of chunk vectors and one of file vectors.

Chroma is imported only when a store is opened (it takes most of a second). Both collections use
cosine space; similarities returned here are ``1 - cosine distance``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

CHUNKS = "chunks"
FILES = "files"


class VectorStoreError(Exception):
    """The vector store could not be opened or used; the message says why."""


class VectorStore:
    """Chunk and file vectors for one index, in an embedded Chroma ``PersistentClient``."""

    def __init__(self, directory: Path) -> None:
        try:
            import chromadb
            from chromadb.config import Settings as ChromaSettings
        except ImportError as error:  # pragma: no cover - chromadb is a dependency
            raise VectorStoreError("chromadb is not installed") from error
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._client = chromadb.PersistentClient(
            path=str(directory), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self._open_collections()
        self._batch = max(1, int(self._client.get_max_batch_size()))

    def _open_collections(self) -> None:
        space = {"hnsw:space": "cosine"}
        self._chunks = self._client.get_or_create_collection(
            CHUNKS, metadata=space, embedding_function=None
        )
        self._files = self._client.get_or_create_collection(
            FILES, metadata=space, embedding_function=None
        )

    def reset(self) -> None:
        """Drop every chunk and file vector, and the dimension the collections were fixed to.

        Used when the model changes: a model of another dimension could not be written to the old
        collections, which keep the dimension of the first vector they received.
        """
        for name in (CHUNKS, FILES):
            try:
                self._client.delete_collection(name)
            except Exception:  # noqa: BLE001 - already gone (e.g. an interrupted reset)
                pass
        self._open_collections()

    # -- chunks -------------------------------------------------------------------------------
    def upsert_chunks(self, ids: Sequence[str], vectors: np.ndarray, paths: Sequence[str]) -> None:
        for start in range(0, len(ids), self._batch):
            end = start + self._batch
            self._chunks.upsert(
                ids=list(ids[start:end]),
                embeddings=vectors[start:end],
                metadatas=[{"path": path} for path in paths[start:end]],
            )

    def delete_chunks(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._batch):
            self._chunks.delete(ids=list(ids[start : start + self._batch]))

    def chunk_ids(self) -> set[str]:
        """Every chunk id the store holds."""
        return set(self._chunks.get(include=[])["ids"])

    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        found = self._chunks.get(ids=list(ids), include=["embeddings"])
        return dict(zip(found["ids"], found["embeddings"], strict=True))

    def query_chunks(
        self, vector: np.ndarray, k: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks, best first.

        ``paths`` restricts the search to those files before the nearest neighbours are taken.
        """
        if paths is not None and not paths:
            return []
        where = None
        if paths is not None:
            where = {"path": paths[0]} if len(paths) == 1 else {"path": {"$in": list(paths)}}
        # No count() first: it costs ~150 ms at 18k vectors, and Chroma already returns fewer
        # than n_results (or none) when the collection holds fewer.
        found = self._chunks.query(
            query_embeddings=[vector], n_results=k, where=where, include=["distances"]
        )
        return [
            (chunk_id, 1.0 - float(distance))
            for chunk_id, distance in zip(found["ids"][0], found["distances"][0], strict=True)
        ]

    def count_chunks(self) -> int:
        return self._chunks.count()

    # -- files --------------------------------------------------------------------------------
    def upsert_file(self, path: str, vector: np.ndarray) -> None:
        self._files.upsert(ids=[path], embeddings=[vector], metadatas=[{"path": path}])

    def delete_files(self, paths: Sequence[str]) -> None:
        for start in range(0, len(paths), self._batch):
            self._files.delete(ids=list(paths[start : start + self._batch]))

    def file_ids(self) -> set[str]:
        return set(self._files.get(include=[])["ids"])

    def file_vector(self, path: str) -> np.ndarray | None:
        found = self._files.get(ids=[path], include=["embeddings"])
        return found["embeddings"][0] if found["ids"] else None

    def query_files(self, vector: np.ndarray, k: int, exclude: str) -> list[tuple[str, float]]:
        """(path, cosine similarity) of the ``k`` nearest files other than ``exclude``."""
        found = self._files.query(
            query_embeddings=[vector],
            n_results=k,
            where={"path": {"$ne": exclude}},
            include=["distances"],
        )
        return [
            (path, 1.0 - float(distance))
            for path, distance in zip(found["ids"][0], found["distances"][0], strict=True)
        ]

    def count_files(self) -> int:
        return self._files.count()
