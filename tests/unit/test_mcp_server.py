"""``explorer mcp`` as an agent meets it: a real server process, the official SDK's client.

The server runs as ``python -m tests.fake_model_cli mcp ROOT`` (the CLI with the fake embedder),
and every test talks to it through ``mcp.client.stdio``: list the tools, call them, read the
results and the error results.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.config import Settings
from explorer.core.models import SearchMode
from explorer.core.retrieval.links import file_links
from explorer.core.store.index import Index
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = {
    "guides/telescope.md": "---\ndescription: Choosing lenses and mirrors\ntags: [optics]\n"
    "---\n# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n\nLine five.\n",
    "notes/sky.md": "---\ntags: [optics, night]\nversion: 2\n---\n# Sky\n\n"
    "See [the stars](stars.md) and [a comet](comet.md) through a telescope.\n",
    "notes/long.md": "# Long\n\n" + "".join(f"line {n} of a long note\n" for n in range(3, 8003)),
    "notes/vault.md": "# Vault\n\n[[LONG]] and [[Nowhere]]\n",
    ".env": "SECRET=hunter2\n",
}
TIMEOUT = 120


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    secret = write_files(base / "outside", {"secret.md": "# Secret\n\nnot for agents\n"})
    (root / "notes" / "escape.md").symlink_to(secret / "secret.md")
    (root / "notes" / "inside-link.md").symlink_to(root / "notes" / "stars.md")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        result = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
        assert result.exit_code == 0, result.stderr
    return root, index_dir


def server_params(root: Path, index_dir: Path) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("EXPLORER_INDEX_DIR", None)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.fake_model_cli", "mcp", str(root), "--index-dir", str(index_dir)],
        env=env,
        cwd=str(REPO),
    )


def with_session(params: StdioServerParameters, body: Callable[[ClientSession], Awaitable]):
    """Start the server, open a client session, run ``body`` with it, return its result."""

    async def run():
        with anyio.fail_after(TIMEOUT):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(run)


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, object]:
    """(is_error, structured result or the error text)."""
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        return True, result.content[0].text
    return False, result.structured_content


def test_the_client_lists_five_tools_with_descriptions(corpus):
    async def body(session):
        listed = await session.list_tools()
        return {tool.name: tool for tool in listed.tools}

    tools = with_session(server_params(*corpus), body)
    assert set(tools) == {"search", "related", "read", "links", "status"}
    search = tools["search"]
    assert "grep" in search.description and "meaning" in search.description
    assert {
        "query",
        "mode",
        "paths",
        "tags",
        "versions",
        "limit",
        "offset",
        "per_file",
        "min_score",
        "content",
        "max_tokens",
        "metadata_only",
    } <= set(search.input_schema["properties"])
    assert search.input_schema["required"] == ["query"]
    # an agent is offered exactly the modes the core runs, as plain strings
    assert search.input_schema["properties"]["mode"]["enum"] == [m.value for m in SearchMode]
    assert set(tools["read"].input_schema["properties"]) == {"path", "start_line", "end_line"}
    assert set(tools["related"].input_schema["properties"]) == {"path", "limit"}
    assert all(tool.annotations.read_only_hint for tool in tools.values())


def test_search_answers_with_the_fields_of_the_cli_json(corpus):
    root, index_dir = corpus

    async def body(session):
        return (
            await call(session, "search", query="telescope mirrors"),
            await call(session, "search", query="telescope", content=True, limit=1),
            await call(session, "search", query="telescope", metadata_only=True),
            await call(session, "search", query="telescope", max_tokens=12),
            await call(session, "search", query="telescope", paths=["notes/"], limit=5),
        )

    plain, content, metadata, budget, under_notes = with_session(server_params(*corpus), body)
    cli = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        expected = json.loads(
            cli.invoke(
                main,
                ["search", "telescope mirrors", str(root), "--index-dir", str(index_dir), "--json"],
            ).stdout
        )
    assert plain == (False, expected)
    error, data = content
    assert not error and len(data["results"]) == 1
    passage = data["results"][0]["passages"][0]
    text = (root / data["results"][0]["path"]).read_text()
    assert passage["text"] == text[passage["start_char"] : passage["end_char"]]
    error, data = metadata
    assert not error
    described = {hit["path"]: hit["description"] for hit in data["results"]}
    assert described["guides/telescope.md"] == "Choosing lenses and mirrors"
    error, data = budget
    assert not error and data["budget"]["used"] <= 12 and data["budget"]["passages_cut"] > 0
    error, data = under_notes
    assert not error and data["results"]
    assert all(hit["path"].startswith("notes/") for hit in data["results"])


def test_read_gives_lines_and_refuses_everything_outside_the_root(corpus):
    async def body(session):
        return {
            "whole": await call(session, "read", path="notes/stars.md"),
            "range": await call(session, "read", path="./notes/stars.md", start_line=3, end_line=3),
            "long": await call(session, "read", path="notes/long.md"),
            "inside link": await call(session, "read", path="notes/inside-link.md"),
            "dotdot": await call(session, "read", path="../../etc/passwd"),
            "sneaky dotdot": await call(session, "read", path="notes/../../outside/secret.md"),
            "absolute": await call(session, "read", path="/etc/passwd"),
            "escape link": await call(session, "read", path="notes/escape.md"),
            "hidden": await call(session, "read", path=".env"),
            "missing": await call(session, "read", path="notes/none.md"),
            "past the end": await call(session, "read", path="notes/stars.md", start_line=99),
            "related escape": await call(session, "related", path="notes/escape.md"),
            "links dotdot": await call(session, "links", path="../x.md"),
        }

    answers = with_session(server_params(*corpus), body)
    error, whole = answers["whole"]
    assert not error
    assert whole["text"] == CORPUS["notes/stars.md"]
    assert whole["start_line"] == 1 and whole["end_line"] == whole["total_lines"] == 5
    assert whole["truncated"] is False and whole["next_start_line"] is None
    error, one = answers["range"]
    assert not error and one["text"] == "Stars seen through a telescope at night.\n"
    assert one["path"] == "notes/stars.md"
    error, long = answers["long"]
    assert not error and long["truncated"] is True and len(long["text"]) <= 60_000
    assert long["next_start_line"] == long["end_line"] + 1 < long["total_lines"]
    error, linked = answers["inside link"]
    assert not error and linked["text"] == CORPUS["notes/stars.md"]
    refusals = {
        "dotdot": "'..' is refused",
        "sneaky dotdot": "'..' is refused",
        "absolute": "absolute paths are refused",
        "escape link": "leads outside the root",
        "related escape": "leads outside the root",
        "links dotdot": "'..' is refused",
        "hidden": "not a file explorer indexes",
        "missing": "no such file",
        "past the end": "has 5 lines",
    }
    for name, fragment in refusals.items():
        error, text = answers[name]
        assert error, (name, text)
        assert fragment in text, (name, text)
        assert "root:" not in text and "hunter2" not in text and "not for agents" not in text
        assert "Traceback" not in text


def test_related_status_and_links(corpus):
    root, _ = corpus

    async def body(session):
        return (
            await call(session, "related", path="notes/stars.md", limit=2),
            await call(session, "status"),
            await call(session, "links", path="notes/stars.md"),
        )

    related, status, links = with_session(server_params(*corpus), body)
    error, data = related
    assert not error and data["file"] == "notes/stars.md"
    assert 1 <= len(data["related"]) <= 2
    assert {"path", "title", "score", "source_passage", "related_passage"} <= set(
        data["related"][0]
    )
    error, data = status
    assert not error and data["root"] == str(root)
    assert data["files"]["stale"] == 0 and data["stale"]["disk_checked"] is True
    error, data = links
    assert not error, data
    assert data["file"] == "notes/stars.md" and data["exists"] is True
    assert [(b["source"], b["line"]) for b in data["backlinks"]] == [("notes/sky.md", 7)]


def test_links_are_the_model_every_front_end_shows(corpus):
    root, index_dir = corpus

    async def body(session):
        return (
            await call(session, "links", path="notes/vault.md"),
            await call(session, "links", path="notes/long.md"),
        )

    vault, long = with_session(server_params(*corpus), body)
    assert [(link["raw"], link["target"], link["state"]) for link in vault[1]["links"]] == [
        ("[[LONG]]", "notes/long.md", "resolved"),
        ("[[Nowhere]]", "Nowhere.md", "missing"),
    ]
    index = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    try:  # what `explorer links --json` and the sidebar read
        assert vault == (False, file_links(index, "notes/vault.md").as_json())
        assert long == (False, file_links(index, "notes/long.md").as_json())
    finally:
        index.close()


def test_front_matter_filters_and_links_of_a_missing_target(corpus):
    async def body(session):
        return (
            await call(session, "search", query="telescope", tags=["optics"], limit=20),
            await call(session, "search", query="telescope tag:night", limit=20),
            await call(session, "search", query="telescope", versions=["2"], limit=20),
            await call(session, "links", path="notes/sky.md"),
            await call(session, "links", path="notes/comet.md"),
            await call(session, "links", path="notes/nothing.md"),
        )

    optics, night, version, sky, comet, nothing = with_session(server_params(*corpus), body)
    assert sorted(hit["path"] for hit in optics[1]["results"]) == [
        "guides/telescope.md",
        "notes/sky.md",
    ]
    assert [hit["path"] for hit in night[1]["results"]] == ["notes/sky.md"]
    assert [hit["path"] for hit in version[1]["results"]] == ["notes/sky.md"]
    error, data = sky
    assert not error
    assert {(link["target"], link["exists"]) for link in data["links"]} == {
        ("notes/stars.md", True),
        ("notes/comet.md", False),
    }
    error, data = comet
    assert not error and data["exists"] is False
    assert [b["source"] for b in data["backlinks"]] == ["notes/sky.md"]
    error, text = nothing
    assert error and "no such file" in text


def test_bad_arguments_come_back_as_error_results(corpus):
    async def body(session):
        return (
            await call(session, "search", query="?!"),
            await call(session, "search", query="telescope", limit=0),
            await call(session, "search", query="telescope", mode="fuzzy"),
            await call(session, "search", query="telescope", limit=10_000),
            await call(session, "related", path="notes/none.md"),
        )

    answers = with_session(server_params(*corpus), body)
    for error, text in answers:
        assert error, text
        assert "Traceback" not in text
    # the agent is told its own parameter names, not the CLI's flags
    assert "limit and per_file must be at least 1" in answers[1][1]
    assert "--" not in answers[1][1]


def test_without_an_index_every_tool_says_how_to_make_one(tmp_path):
    root = write_files(tmp_path / "fresh", {"a.md": "# A\n"})

    async def body(session):
        return (
            await call(session, "search", query="anything"),
            await call(session, "status"),
        )

    for error, text in with_session(server_params(root, tmp_path / "no-index"), body):
        assert error and "explorer index" in text, text
    assert not (tmp_path / "no-index" / "index.sqlite").exists()


def test_the_server_reads_while_another_process_holds_the_write_lock(corpus):
    root, index_dir = corpus
    holder = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    holder.acquire_write_lock()
    try:

        async def body(session):
            return await call(session, "search", query="telescope")

        error, data = with_session(server_params(*corpus), body)
        assert not error and data["results"]
    finally:
        holder.close()


def test_the_cli_refuses_a_missing_root_at_once(tmp_path):
    result = CliRunner().invoke(main, ["mcp", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"explorer: error: no such folder: {tmp_path / 'missing'}"
