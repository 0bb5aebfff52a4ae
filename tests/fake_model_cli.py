"""The ``explorer`` CLI in a process of its own, with the fake embedder instead of a model.

``python -m tests.fake_model_cli ARGS`` runs ``explorer ARGS``: tests start real processes
(an ``explorer mcp`` server for the SDK's client, say) without loading the real model.
"""

from __future__ import annotations

import explorer.core.store.index
from explorer.cli import main
from tests.fakes import FakeEmbedder

if __name__ == "__main__":
    explorer.core.store.index.load_embedder = lambda model, precision: FakeEmbedder()
    main(prog_name="explorer")
