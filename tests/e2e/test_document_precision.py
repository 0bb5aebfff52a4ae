"""Documents embedded in bf16 where the CPU does bf16 natively; queries always in fp32.

Real model, real passages (the paragraphs of sample_docs): bf16 must keep every vector within
cosine 0.999 of fp32 (the bar ``benchmarks/cpu_options.py`` applies), and a query must come out
the same whichever format the documents use.
"""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.embed import embedder as embedder_module
from explorer.core.embed.embedder import SentenceTransformerEmbedder
from explorer.core.models import EmbeddingPrecision
from tests.conftest import sample_passages

pytestmark = pytest.mark.e2e

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def fp32() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(MODEL, precision=EmbeddingPrecision.FP32)


@pytest.fixture(scope="module")
def bf16() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(MODEL, precision=EmbeddingPrecision.BF16)


def test_bf16_document_vectors_stay_within_cosine_0999_of_fp32(
    fp32: SentenceTransformerEmbedder, bf16: SentenceTransformerEmbedder
) -> None:
    texts = sample_passages(80)
    assert len(texts) > 40
    reference = fp32.embed_documents(texts)
    vectors = bf16.embed_documents(texts)
    assert bf16.documents_in_bf16 and not fp32.documents_in_bf16
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(vectors * reference, axis=1)
    assert float(cosines.min()) >= 0.999
    assert not np.array_equal(vectors, reference)  # bf16 did run: the vectors differ a little


def test_queries_are_fp32_whatever_the_documents_use(
    fp32: SentenceTransformerEmbedder, bf16: SentenceTransformerEmbedder
) -> None:
    # Neither embedder has an export folder, so queries run on the model itself.
    query = "how do I restore the database after the disk died"
    np.testing.assert_allclose(bf16.embed_query(query), fp32.embed_query(query), atol=1e-6)
    np.testing.assert_allclose(bf16.embed_query(query), fp32.embed_documents([query])[0], atol=1e-6)


def test_documents_run_in_a_few_shapes_and_keep_their_vectors(
    fp32: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every token length a batch has is a shape torch builds and keeps kernels for: padded to a
    # multiple of DOCUMENT_PAD_TO tokens, a long run meets a few lengths, not 256, and its
    # memory stays flat.
    texts = sample_passages(80)
    model = fp32._document_model()
    lengths: list[int] = []
    forward = model[0].auto_model.forward

    def noting_lengths(*args, **kwargs):
        ids = kwargs.get("input_ids")
        lengths.append(int((ids if ids is not None else args[0]).shape[1]))
        return forward(*args, **kwargs)

    monkeypatch.setattr(model[0].auto_model, "forward", noting_lengths)
    padded = fp32.embed_documents(texts)
    step = embedder_module.DOCUMENT_PAD_TO
    assert lengths and all(n % step == 0 for n in lengths)
    monkeypatch.setattr(embedder_module, "DOCUMENT_PAD_TO", None)
    lengths.clear()
    unpadded = fp32.embed_documents(texts)
    assert any(n % step for n in lengths)  # unpadded, batches have lengths of their own
    assert float(np.sum(padded * unpadded, axis=1).min()) >= 0.99999  # the padding is masked


@pytest.mark.parametrize("native", [True, False])
def test_auto_uses_bf16_only_where_the_cpu_has_it(
    native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedder_module, "native_bf16", lambda: native)
    embedder = SentenceTransformerEmbedder(MODEL)
    assert embedder.documents_in_bf16 is native
