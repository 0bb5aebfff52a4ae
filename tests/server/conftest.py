"""Fixtures for tests against a Chroma server."""

from __future__ import annotations

import pytest

from tests.chroma_server import ChromaServer


@pytest.fixture
def own_server(tmp_path):
    """A server of this test's own, which it may stop and start again."""
    server = ChromaServer(tmp_path / "chroma-data")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
