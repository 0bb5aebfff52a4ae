"""The TUI on vectors kept by a Chroma server that stops and comes back while the app runs."""

from __future__ import annotations

import shutil

import pytest

from explorer.tui.app import make_app
from tests.fakes import FakeEmbedder
from tests.ui.conftest import SAMPLE_DOCS, type_query, wait_for, wait_settled

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
RECOVERY_SECONDS = 20.0


async def test_server_stopped_and_restarted_while_the_app_runs(tmp_path, own_server):
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    app = make_app(
        docs, index_dir=tmp_path / "index", embedder=FakeEmbedder(), chroma_url=own_server.url
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot, timeout=60)
        await type_query(pilot, "backup")
        assert screen.status.answered == "hybrid"
        assert "guides/backups.md" in [hit.path for hit in screen.results.hits][:3]

        own_server.stop()
        await wait_for(
            pilot,
            lambda: not screen.status.index_state.vectors_available,
            RECOVERY_SECONDS,
            "the status to say vectors are unavailable",
        )
        assert "vectors unavailable" in str(screen.status.render())
        await type_query(pilot, " snapshot")
        assert screen.status.answered == "keyword"
        assert "vectors unavailable" in screen.status.search.note
        assert [hit.path for hit in screen.results.hits]  # keyword search keeps working

        own_server.start()
        await wait_for(
            pilot,
            lambda: screen.status.index_state.vectors_available,
            RECOVERY_SECONDS,
            "the status to say vectors are back",
        )
        await type_query(pilot, "s")
        assert screen.status.answered == "hybrid"
        assert "guides/backups.md" in [hit.path for hit in screen.results.hits][:5]
