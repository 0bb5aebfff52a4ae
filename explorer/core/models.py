"""The shared vocabulary of the core's stages: search modes, file states and sync phases.

Each is a :class:`~enum.StrEnum`, so a member prints, compares and serialises (JSON, SQLite)
exactly as the string it replaces.
"""

from __future__ import annotations

from enum import StrEnum


class SearchMode(StrEnum):
    """Which legs a search runs: both fused, vectors only, or keywords only."""

    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    KEYWORD = "keyword"

    def next(self) -> SearchMode:
        """The mode after this one, wrapping around (the order a mode toggle cycles)."""
        modes = list(SearchMode)
        return modes[(modes.index(self) + 1) % len(modes)]


class FileState(StrEnum):
    """A file's state in the manifest."""

    PENDING = "pending"
    """Keyword-searchable; its vectors are still to come."""
    FRESH = "fresh"
    """Both stores hold its chunks."""
    SKIPPED = "skipped"
    """Left out (binary, too large, undecodable, …); the record's reason says why."""
    FAILED = "failed"
    """Reading or parsing it failed; the record's reason says why."""


class SyncPhase(StrEnum):
    """Where a sync is, as its progress reports it."""

    SCAN = "scan"
    KEYWORDS = "keywords"
    MODEL = "model"
    """Loading the document model before the first batch."""
    EMBED = "embed"
    DONE = "done"
    """The sync ended (a live writer is idle)."""


class EmbeddingPrecision(StrEnum):
    """The number format documents are embedded in (queries are always fp32)."""

    AUTO = "auto"
    """bf16 where the CPU computes bf16 natively (AVX-512 BF16 or AMX), else fp32."""
    FP32 = "fp32"
    BF16 = "bf16"
    """``torch.autocast`` to bfloat16; slower than fp32 on a CPU without native bf16."""


class FusionKind(StrEnum):
    """How hybrid search combines its legs (:mod:`explorer.core.retrieval.fusion`)."""

    CALIBRATED = "calibrated"
    CONVEX = "convex"
    RRF = "rrf"
