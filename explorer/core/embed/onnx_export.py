"""Export a loaded sentence-transformers model to ONNX for the query encoder, once.

Runs where torch is loaded anyway (indexing, or the one query that found no export). The whole
model is traced as sentence-transformers runs it (transformer, pooling, dense, normalize: what
its ``modules.json`` says), ONNX Runtime optimizes the graph once and saves it with its weights
in a separate file (which opens in a fraction of the time), and the tokenizer is saved as
sentence-transformers configured it (lowercasing, length limit). Before it is published, the
export must give the model's own embeddings on probe texts within :data:`TOLERANCE`; a model
that cannot be traced or does not match is recorded as unsupported, so its queries use the
model itself and no later process tries again.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from explorer.core.embed.export_cache import (
    GRAPH_NAME,
    MANIFEST_NAME,
    TOKENIZER_NAME,
    WEIGHTS_NAME,
    ExportManifest,
    ExportStatus,
    ModelFiles,
    TokenizerSettings,
    publish,
    staging_dir,
)
from explorer.core.embed.onnx_encoder import OnnxQueryEncoder, runtime_version
from explorer.core.errors import ExplorerError

log = logging.getLogger(__name__)

TOLERANCE = 1e-3
"""Largest difference per component from sentence-transformers an export may have."""
MIN_COSINE = 0.9999
INPUT_NAMES = ("input_ids", "token_type_ids", "attention_mask")
"""The tokenizer outputs the query encoder can give a graph."""
OPSET = 17

_LONG = " ".join(
    f"Paragraph {i} tells how the index splits notes into passages and ranks them."
    for i in range(80)
)
PROBES = [
    "how do I limit the request rate",
    "install",
    "",
    "THE Quick Brown FOX, naïve café résumé",
    "日本語のテキストと中文文本 🎉",
    "def add(a, b):\n    return a + b  # sum",
    _LONG,  # past any model's limit: the truncation must match
    "tabs\tand\nnewlines\r\nmixed",
]
"""Texts the export is checked on: short and long, cased, accented, CJK, code, emoji."""


class ExportFailed(ExplorerError):
    """The model could not be exported, or the export does not give the model's embeddings."""


def export_query_encoder(model: Any, files: ModelFiles, export_dir: Path) -> ExportManifest:
    """Export ``model`` (a loaded SentenceTransformer) and publish it at ``export_dir``.

    Returns the published manifest: READY, or UNSUPPORTED with the reason when the model cannot
    be exported faithfully. Raises OSError when ``export_dir`` cannot be written.
    """
    staged = staging_dir(export_dir)
    try:
        try:
            manifest = _export(model, files, staged)
        # Tracing runs the model's own code (any architecture, any custom module): whatever
        # fails, the verdict is the same, and queries use the model itself.
        except Exception as error:
            log.info("query encoder export of %s failed: %s", files.name, error, exc_info=True)
            shutil.rmtree(staged)
            staged = staging_dir(export_dir)
            manifest = ExportManifest(
                model=files.name,
                fingerprint=files.fingerprint,
                stamp=files.stamp,
                status=ExportStatus.UNSUPPORTED,
                reason=f"{type(error).__name__}: {error}"[:500],
            )
        (staged / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
        publish(staged, export_dir)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return manifest


def _export(model: Any, files: ModelFiles, staged: Path) -> ExportManifest:
    import torch

    tokenizer = model.tokenizer
    if tokenizer is None or not getattr(tokenizer, "is_fast", False):
        raise ExportFailed("the model has no fast (Rust) tokenizer")
    example = model.preprocess(["an example query", "x"])  # two lengths: padding is traced
    names = [key for key, value in example.items() if isinstance(value, torch.Tensor)]
    unknown = sorted(set(names) - set(INPUT_NAMES))
    if unknown or "input_ids" not in names:
        raise ExportFailed(f"the model takes inputs {names}, not token ids and masks")
    with tempfile.TemporaryDirectory(prefix="explorer-onnx-") as scratch:
        traced = Path(scratch) / "traced.onnx"
        _trace(model, names, [example[key] for key in names], traced)
        names = _optimize(traced, staged)  # the inputs the model uses: the trace drops others
    tokenizer.backend_tokenizer.save(str(staged / TOKENIZER_NAME))
    settings = TokenizerSettings(
        max_length=int(model.max_seq_length or tokenizer.model_max_length),
        truncation_side=str(tokenizer.truncation_side),
        padding_side=str(tokenizer.padding_side),
        pad_id=int(tokenizer.pad_token_id or 0),
        pad_type_id=int(getattr(tokenizer, "pad_token_type_id", 0) or 0),
        pad_token=str(tokenizer.pad_token or ""),
        prompt=_default_prompt(model),
    )
    manifest = ExportManifest(
        model=files.name,
        fingerprint=files.fingerprint,
        stamp=files.stamp,
        status=ExportStatus.READY,
        runtime_version=runtime_version(),
        inputs=names,
        dimension=int(model.get_embedding_dimension()),
        tokenizer=settings,
    )
    difference = _check(model, staged, manifest)
    return replace(manifest, max_abs_diff=difference)


def _default_prompt(model: Any) -> str:
    prompt_name = getattr(model, "default_prompt_name", None)
    prompts = getattr(model, "prompts", None) or {}
    return str(prompts.get(prompt_name, "")) if prompt_name else ""


def _sentence_embedding_module(model: Any, names: list[str]) -> Any:
    """A module taking the token tensors positionally and giving the sentence embedding."""
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            features: dict[str, Any] = dict(zip(names, tensors, strict=True))
            features["modality"] = "text"
            embedding: torch.Tensor = self.model(features)["sentence_embedding"]
            return embedding

    return SentenceEmbedding()


def _trace(model: Any, names: list[str], tensors: list[Any], target: Path) -> None:
    import torch

    axes = {key: {0: "batch", 1: "sequence"} for key in names}
    axes["sentence_embedding"] = {0: "batch"}
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # torch 2.13 (pinned) announces that the TorchScript exporter is legacy, and the
            # tracer warns about Python branches on shapes; the check after export is what
            # decides whether the trace holds for other inputs.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _sentence_embedding_module(model, names),
                tuple(tensors),
                str(target),
                dynamo=False,
                input_names=names,
                output_names=["sentence_embedding"],
                dynamic_axes=axes,
                opset_version=OPSET,
                do_constant_folding=True,
            )
    finally:
        model.train(was_training)


def _optimize(traced: Path, staged: Path) -> list[str]:
    """Let ONNX Runtime fuse the graph once and save it with the weights in their own file;
    return the graph's input names."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(staged / GRAPH_NAME)
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_file_name", WEIGHTS_NAME
    )
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
    )
    session = onnxruntime.InferenceSession(str(traced), options, providers=["CPUExecutionProvider"])
    return [str(node.name) for node in session.get_inputs()]


def _check(model: Any, staged: Path, manifest: ExportManifest) -> float:
    """The export's largest difference from the model on :data:`PROBES` (raises if too large)."""
    encoder = OnnxQueryEncoder(staged, manifest)
    ours = np.concatenate([encoder.encode(PROBES), encoder.encode(PROBES[:1])])
    reference = model.encode(
        [*PROBES, PROBES[0]], convert_to_numpy=True, normalize_embeddings=False
    ).astype(np.float32)
    if ours.shape != reference.shape:
        raise ExportFailed(f"the export gives shape {ours.shape}, the model {reference.shape}")
    difference = float(np.abs(ours - reference).max())
    norms = np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1)
    cosine = float(np.min(np.sum(ours * reference, axis=1) / np.maximum(norms, 1e-12)))
    if not difference < TOLERANCE or not cosine >= MIN_COSINE:
        raise ExportFailed(f"the export differs from the model: max {difference:.2e}, cos {cosine}")
    return difference
