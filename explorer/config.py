"""Settings: one typed object that every part of explorer reads its knobs from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from explorer.core.retrieval.fusion import FusionKind
from explorer.core.settings import DEFAULT_MODEL, IndexSettings
from explorer.core.store.chroma_server import CHROMA_URL_ENV
from explorer.locations import owned_parents, resolve_index_dir
from explorer.user_config import UserConfig, load_user_config

MODEL_ENV = "EXPLORER_MODEL"

_SHAPED_KEYS = frozenset(
    {"model", "chroma_url", "exclude", "extensions", "allow_links_outside", "link_base"}
)
"""Config file keys that :meth:`Settings.for_root` shapes itself; every other key is taken as it
is into the :class:`Settings` field :meth:`UserConfig.setting_names` gives."""


@dataclass(frozen=True)
class Settings(IndexSettings):
    """Everything that shapes an index and a search, plus the CLI's and the TUI's own defaults.
    Build one with :meth:`for_root`; the core reads it as the :class:`IndexSettings` it is."""

    default_limit: int = 10
    """Files a search shows when no ``--limit`` is given."""
    default_min_score: float = 0.0
    """Passages scoring below this are hidden when no ``--min-score`` is given."""
    extra: dict[str, str] = field(default_factory=dict)
    """Free-form options for experiments; unused by default."""

    @property
    def repair_command(self) -> str:
        """``explorer index ROOT``, with ``--index-dir`` when the index is not where that
        command alone would look."""
        command = f"explorer index {self.root}"
        if self.index_dir != resolve_index_dir(self.root):
            command += f" --index-dir {self.index_dir}"
        return command

    @property
    def private_parents(self) -> tuple[Path, ...]:
        """The data directory and its ``indexes`` folder, when the index is in its default
        place: explorer made them, and their names list the folders indexed."""
        return owned_parents(self.index_dir)

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
            or config.model
            or DEFAULT_MODEL
        )
        chroma_url = (
            overrides.pop("chroma_url", None)
            or os.environ.get(CHROMA_URL_ENV)
            or config.chroma_url
            or None
        )
        from_config: dict[str, object] = {}
        if config.exclude is not None:
            from_config["exclude"] = tuple(config.exclude)
        if config.extensions is not None:
            from_config["extensions"] = frozenset(e.lower().lstrip(".") for e in config.extensions)
        for key, name in UserConfig.setting_names().items():
            value = getattr(config, key)
            if key not in _SHAPED_KEYS and value is not None:
                from_config[name] = str(value) if isinstance(value, FusionKind) else value
        if config.allow_links_outside is not None:
            allowed = {Path(p).expanduser().resolve() for p in config.allow_links_outside}
            from_config["allow_outside_links"] = root_path in allowed
        if isinstance(config.link_base, str):
            from_config["link_base"] = config.link_base
        elif config.link_base is not None:
            bases = {Path(p).expanduser().resolve(): b for p, b in config.link_base.items()}
            if root_path in bases:
                from_config["link_base"] = bases[root_path]
        settings = cls(
            root=root_path,
            index_dir=resolve_index_dir(root_path, index_dir),
            model=str(model),
            chroma_url=str(chroma_url) if chroma_url else None,
            **from_config,  # type: ignore[arg-type]
        )
        # Flag values by Settings' own field names; their types are the flags' (click checks).
        return replace(settings, **overrides) if overrides else settings  # type: ignore[arg-type]
