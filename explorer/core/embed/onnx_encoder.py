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

    def __init__(self, export_dir: Path, manifest: ExportManifest) -> None:
        """Open the export in ``export_dir`` described by ``manifest`` (status READY).

        Every process opens it the same way, so the same query gives the same vector, to the
        last bit, in a one-shot command, the resident reader, the TUI and the MCP server.
        ONNX Runtime's prepacked weights (~40 ms more to open, about a third less per query)
        take other matrix kernels, whose sums round otherwise (vectors ~1e-7 apart): one
        process prepacking and another not printed scores that differed in the 4th decimal.
        Single-threaded, for the same reason and because a query is a few dozen tokens.
        """
        import onnxruntime
        from tokenizers import Tokenizer

        if manifest.status is not ExportStatus.READY or manifest.tokenizer is None:
            raise ValueError(f"{export_dir} holds no usable export")
        options = onnxruntime.SessionOptions()
        # One thread: a second only waits for a busy core, and the sums keep one order.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # The graph was optimized when it was exported; do not redo it on every start.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
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
