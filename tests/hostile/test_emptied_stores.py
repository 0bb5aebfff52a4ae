"""A store cut to zero bytes behind explorer's back (issue 29).

``chroma.sqlite3`` zeroed: a semantic search answered "no results" without saying that the
vectors are missing (``status`` knew: every chunk lacked its vector). Now the search says it in
one note, in text and in ``--json``, and names the command that embeds them again.

``index.sqlite`` zeroed: ``explorer index --rebuild`` embedded every chunk again although the
README says the vectors are reused. Now a rebuild borrows the live store's vector of every
chunk of the same id and the same text, and embeds only chunks whose text changed.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.rebuild import rebuild
from explorer.core.indexing.vector_phase import VectorPhase
from explorer.core.store.index import CHROMA_DIR_NAME, DATABASE_NAME, Index
from explorer.core.store.vectors import CHROMA_DATABASE
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder


def note(n: int) -> str:
    """A note of short sections (one chunk whatever the chunk size) and long ones."""
    short = "".join(f"## Sky {k}\n\nStars at night seen from hill h{n}y{k}.\n\n" for k in range(3))
    words = " ".join(f"comet{n}x{w} tail" for w in range(80))
    return f"# Note {n}\n\nTelescope mirrors, lens number w{n}x.\n\n{short}## Long\n\n{words}\n"


CORPUS = {f"notes/note{n}.md": note(n) for n in range(5)}


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    runner = CliRunner()

    def invoke(*args: object, status: int = 0):
        result = runner.invoke(main, [str(a) for a in args], catch_exceptions=True)
        assert result.exit_code == status, (result.output, result.exception)
        return result

    return invoke


@pytest.fixture
def indexed(tmp_path, run):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    done = json.loads(run("index", root, "--index-dir", index_dir, "--json").stdout)
    assert done["chunks_embedded"] > 20
    return root, index_dir, done["chunks_embedded"]


def test_a_semantic_search_says_the_vectors_are_missing(indexed, run):
    root, index_dir, chunks = indexed
    (index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE).write_bytes(b"")
    said = (
        f"{chunks} chunks recorded as embedded have no vector in the store; "
        f"run `explorer index {root} --index-dir {index_dir}` to embed them again"
    )
    args = ("search", "telescope stars", root, "--index-dir", index_dir)
    text = run(*args, "--mode", "semantic", status=1)
    assert f"note: no vectors: {said}\n" in text.stderr
    answer = json.loads(run(*args, "--mode", "semantic", "--json", status=1).stdout)
    assert answer["results"] == [] and answer["notes"][0] == f"no vectors: {said}"
    # --json says what the text says, note for note (the missing vectors first)
    assert [f"note: {note}" for note in answer["notes"]] == text.stderr.splitlines()
    hybrid = run(*args)
    assert f"note: results are by keyword only: {said}\n" in hybrid.stderr


def test_a_rebuild_over_an_emptied_keyword_index_reuses_every_vector(indexed, run, monkeypatch):
    root, index_dir, chunks = indexed
    (index_dir / DATABASE_NAME).write_bytes(b"")
    embedded: list[int] = []
    real = FakeEmbedder.embed_documents
    monkeypatch.setattr(
        FakeEmbedder,
        "embed_documents",
        lambda self, texts: embedded.append(len(texts)) or real(self, texts),
    )
    done = json.loads(run("index", root, "--index-dir", index_dir, "--rebuild", "--json").stdout)
    assert (done["chunks_embedded"], done["chunks_reused"], sum(embedded)) == (0, chunks, 0)
    status = json.loads(run("status", root, "--index-dir", index_dir, "--json").stdout)
    assert status["stale"] == {"files": 0} and status["vectors"] == chunks
    found = run("search", "telescope stars", root, "--index-dir", index_dir, "--mode", "semantic")
    assert "notes/note" in found.stdout


def test_a_rebuild_embeds_anew_the_chunks_whose_text_changed(indexed, tmp_path):
    """A rebuild after the chunker changed (smaller chunks): chunk ids are the same for the
    first chunks of a file, their text is not; each chunk ends with the vector of its own
    text, whether borrowed or embedded."""
    root, index_dir, chunks = indexed
    settings = Settings.for_root(root, index_dir)  # the model the CLI indexed with
    smaller = replace(settings, chunk_tokens=40, chunk_overlap=8)
    report = rebuild(smaller)
    assert report.chunks_embedded > 0 and report.chunks_reused > 0
    index = Index.open_existing(smaller, FakeEmbedder())
    try:
        ids = index.keywords.chunk_ids()
        stored = index.vectors.chunk_vectors(ids)
        phase = VectorPhase(index)
        texts = index.keywords.chunks_by_id(ids)
        expected = FakeEmbedder().embed_documents([phase.embedding_text(texts[i]) for i in ids])
    finally:
        index.close()
    assert len(ids) > chunks
    for chunk_id, vector in zip(ids, expected, strict=True):
        assert np.allclose(stored[chunk_id], vector, atol=1e-5), chunk_id
