"""``explorer mcp`` over several folders in a process of its own, with the fake embedder.

``python -m tests.fake_model_mcp SPEC`` serves the folders of ``SPEC`` (JSON:
``{"folders": [[NAME, ROOT, INDEX_DIR], ...], "scopes": [{"name": ..., "paths": [...], ...}]}``)
through :func:`explorer.mcp.server.serve_folders`, as ``explorer mcp A B`` will once the CLI
takes several folders.
"""

from __future__ import annotations

import json
import sys

import explorer.core.store.index
from explorer.core.retrieval.scopes import Scope
from explorer.mcp.server import serve_folders
from explorer.settings.config import NamedFolder, OpenFolders, Settings
from tests.fakes import FakeEmbedder

if __name__ == "__main__":
    explorer.core.store.index.load_embedder = lambda model, precision: FakeEmbedder()
    spec = json.loads(sys.argv[1])
    serve_folders(
        OpenFolders(
            [
                NamedFolder(name, Settings.for_root(root, index_dir))
                for name, root, index_dir in spec["folders"]
            ],
            tuple(
                Scope(
                    s["name"],
                    tuple(s.get("paths", ())),
                    tuple(s.get("extensions", ())),
                    tuple(s.get("collections", ())),
                    s.get("description", ""),
                )
                for s in spec.get("scopes", ())
            ),
        )
    )
