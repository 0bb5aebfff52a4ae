"""Fast checks of the numpy encoder's model detection and numeric building blocks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from explorer.core.embed.numpy_encoder import NumpyBertEncoder, UnsupportedModel, _gelu, _layer_norm

TRANSFORMER = {
    "idx": 0,
    "name": "0",
    "path": "",
    "type": "sentence_transformers.models.Transformer",
}
POOLING = {
    "idx": 1,
    "name": "1",
    "path": "1_Pooling",
    "type": "sentence_transformers.models.Pooling",
}
NORMALIZE = {
    "idx": 2,
    "name": "2",
    "path": "2_Normalize",
    "type": "sentence_transformers.models.Normalize",
}
DENSE = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}


def _folder(
    root: Path,
    *,
    model_type: str = "bert",
    modules: list[dict] | None = None,
    pooling: dict | None = None,
    files: tuple[str, ...] = ("tokenizer.json", "model.safetensors"),
) -> Path:
    """A model folder with config files only (weights and tokenizer are empty placeholders)."""
    (root / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_act": "gelu"}))
    (root / "modules.json").write_text(json.dumps(modules or [TRANSFORMER, POOLING, NORMALIZE]))
    mode = pooling or {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}
    (root / "1_Pooling" / "config.json").write_text(json.dumps(mode))
    for name in files:
        (root / name).write_bytes(b"")
    return root


def test_supports_bert_with_mean_or_cls_pooling(tmp_path: Path) -> None:
    assert NumpyBertEncoder.supports(_folder(tmp_path / "mean"))
    cls_only = {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}
    assert NumpyBertEncoder.supports(_folder(tmp_path / "cls", pooling=cls_only))
    assert NumpyBertEncoder.supports(_folder(tmp_path / "plain", modules=[TRANSFORMER, POOLING]))


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"model_type": "xlm-roberta"}, "model_type"),
        ({"modules": [TRANSFORMER, POOLING, DENSE, NORMALIZE]}, "modules"),
        ({"modules": [TRANSFORMER]}, "modules"),
        ({"pooling": {"pooling_mode_max_tokens": True}}, "pooling"),
        (
            {"pooling": {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True}},
            "pooling",
        ),
        ({"files": ("model.safetensors",)}, "tokenizer.json"),
        ({"files": ("tokenizer.json",)}, "model.safetensors"),
    ],
)
def test_rejects_other_models_with_a_reason(tmp_path: Path, options: dict, reason: str) -> None:
    folder = _folder(tmp_path, **options)
    assert not NumpyBertEncoder.supports(folder)
    with pytest.raises(UnsupportedModel, match=reason):
        NumpyBertEncoder(folder)


def test_missing_or_broken_folder_is_unsupported(tmp_path: Path) -> None:
    assert not NumpyBertEncoder.supports(tmp_path / "nowhere")
    folder = _folder(tmp_path / "broken")
    (folder / "config.json").write_text("{not json")
    assert not NumpyBertEncoder.supports(folder)
    with pytest.raises(UnsupportedModel):
        NumpyBertEncoder(folder)


def test_gelu_is_the_exact_erf_form() -> None:
    x = np.linspace(-10, 10, 40001, dtype=np.float32).reshape(1, -1)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x[0].tolist()])
    got = _gelu(x.copy())
    assert got.dtype == np.float32
    assert float(np.abs(got[0] - expected).max()) < 1e-6


def test_gelu_handles_many_rows_in_blocks() -> None:
    x = np.random.default_rng(0).standard_normal((300, 1536)).astype(np.float32)
    rowwise = np.stack([_gelu(row.copy()[None, :])[0] for row in x])
    np.testing.assert_array_equal(_gelu(x.copy()), rowwise)


def test_layer_norm_matches_definition() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 16)).astype(np.float32) * 3 + 1
    weight, bias = (
        rng.standard_normal(16).astype(np.float32),
        rng.standard_normal(16).astype(np.float32),
    )
    x64 = x.astype(np.float64)
    expected = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-12)
    got = _layer_norm(x.copy(), weight, bias, 1e-12)
    np.testing.assert_allclose(got, expected * weight + bias, atol=1e-5)
