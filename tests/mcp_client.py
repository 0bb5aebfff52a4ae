"""An agent's side of ``explorer mcp`` for tests: a real server process, the official SDK's client.

The server runs as ``python -m tests.fake_model_cli mcp ROOT --index-dir DIR`` (the CLI with the
fake embedder); :func:`with_session` starts it, opens a client session and runs a test's
coroutine with it; :func:`call` gives a tool's structured answer or its error text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from explorer.cli import main
from tests.fakes import FakeEmbedder

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120


def index_with_fake_model(root: Path, index_dir: Path) -> None:
    """``explorer index ROOT --index-dir DIR`` in this process, with the fake embedder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        result = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
        assert result.exit_code == 0, result.stderr


def server_params(root: Path, index_dir: Path) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("EXPLORER_INDEX_DIR", None)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.fake_model_cli", "mcp", str(root), "--index-dir", str(index_dir)],
        env=env,
        cwd=str(REPO),
    )


def collections_server_params(
    folders: dict[str, tuple[Path, Path]], scopes: list[dict[str, Any]] | None = None
) -> StdioServerParameters:
    """A server of several folders as collections, ``{name: (root, index_dir)}``, with the
    config's ``scopes`` (``python -m tests.fake_model_mcp``: the fake embedder)."""
    spec = {
        "folders": [[name, str(root), str(index)] for name, (root, index) in folders.items()],
        "scopes": scopes or [],
    }
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("EXPLORER_INDEX_DIR", None)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.fake_model_mcp", json.dumps(spec)],
        env=env,
        cwd=str(REPO),
    )


def with_session(
    params: StdioServerParameters, body: Callable[[ClientSession], Awaitable[Any]]
) -> Any:
    """Start the server, open a client session, run ``body`` with it, return its result."""

    async def run() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(run)


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """(is_error, structured result or the error text)."""
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        return True, result.content[0].text
    return False, result.structured_content


async def wait_for(
    check: Callable[[], Awaitable[Any]], timeout: float, every: float = 0.1
) -> tuple[Any, float]:
    """Call ``check`` until it gives something true; (that value, seconds it took)."""
    start = anyio.current_time()
    while True:
        value = await check()
        waited = anyio.current_time() - start
        if value or waited > timeout:
            return value, waited
        await anyio.sleep(every)
