"""The query encoder: a sentence-transformers model exported to ONNX, run by ONNX Runtime.

``import sentence_transformers`` (torch, transformers) costs seconds, too much for a one-shot
``explorer search``. The model is exported once, when it is loaded for indexing anyway
(:mod:`explorer.core.embed.onnx_export`); a query then needs only ``onnxruntime``, the
``tokenizers`` library and numpy, and gets the same vector within 1e-3 (the export checked it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.core.embed.export_cache import (
    GRAPH_NAME,
    TOKENIZER_NAME,
    ExportManifest,
    ExportStatus,
    TokenizerSettings,
)


def runtime_version() -> str:
    """The installed onnxruntime's version (an export is made for one version)."""
    import onnxruntime

    return str(onnxruntime.__version__)


class OnnxQueryEncoder:
    """Embeds texts with an exported model: tokenizer, ONNX graph, nothing else."""

    def __init__(
        self, export_dir: Path, manifest: ExportManifest, *, prepack: bool = False
    ) -> None:
        """Open the export in ``export_dir`` described by ``manifest`` (status READY).

        ``prepack`` lets ONNX Runtime repack the weights for its matrix kernels: ~40 ms more to
        open, about a third less per query. Worth it in a long-lived process, not in a one-shot
        command that encodes one query.
        """
        import onnxruntime
        from tokenizers import Tokenizer

        if manifest.status is not ExportStatus.READY or manifest.tokenizer is None:
            raise ValueError(f"{export_dir} holds no usable export")
        options = onnxruntime.SessionOptions()
        # A query is a few dozen tokens: a second thread only waits for a busy core.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # The graph was optimized when it was exported; do not redo it on every start.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        if not prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        self._session = onnxruntime.InferenceSession(
            str(export_dir / GRAPH_NAME), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = list(manifest.inputs)
        self.dimension = manifest.dimension
        self.settings: TokenizerSettings = manifest.tokenizer
        self._tokenizer = Tokenizer.from_file(str(export_dir / TOKENIZER_NAME))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(
            self.settings.max_length,
            strategy="longest_first",
            direction=self.settings.truncation_side,
        )

    @property
    def max_seq_length(self) -> int:
        return self.settings.max_length

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts``, shape (len(texts), dimension), float32."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        prompt = self.settings.prompt
        encodings = self._tokenizer.encode_batch([prompt + text for text in texts])
        width = max(len(encoding.ids) for encoding in encodings)
        shape = (len(encodings), width)
        ids = np.full(shape, self.settings.pad_id, dtype=np.int64)
        type_ids = np.full(shape, self.settings.pad_type_id, dtype=np.int64)
        mask = np.zeros(shape, dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            span = (
                slice(0, length) if self.settings.padding_side == "right" else slice(-length, None)
            )
            ids[row, span] = encoding.ids
            type_ids[row, span] = encoding.type_ids
            mask[row, span] = 1
        available = {"input_ids": ids, "token_type_ids": type_ids, "attention_mask": mask}
        feeds = {name: available[name] for name in self._inputs}
        (vectors,) = self._session.run(None, feeds)
        return np.asarray(vectors, dtype=np.float32)
