"""``explorer mcp A B`` as an agent meets it: several folders served as named collections.

A real server process (``python -m tests.fake_model_mcp``: :func:`serve_folders` with the fake
embedder) and the official SDK's client: every result names its collection, a path is placed in
its collection (or the call says to give one), scopes are listed with their descriptions, and
every folder's index is kept current.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from click.testing import CliRunner

from explorer.api.answers import SearchAnswer
from explorer.api.requests import SearchOptions
from explorer.cli import main
from explorer.core.retrieval.agent_context import ContextOptions, shape_answer
from explorer.core.retrieval.collections import Collection, Collections
from explorer.core.retrieval.scopes import Scope
from explorer.core.store.index import Index
from explorer.settings.config import NamedFolder, OpenFolders, Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.mcp_client import (
    REPO,
    StdioServerParameters,
    call,
    collections_server_params,
    index_with_fake_model,
    server_params,
    wait_for,
    with_session,
)

GARDEN = {
    "notes/tomato.md": "# Tomato\n\nTomato plants want compost, sun and water.\n",
    "notes/compost.md": "# Compost\n\nCompost feeds the [tomatoes](tomato.md).\n",
    "shared.md": "# Shared\n\nA note both folders hold: compost of the garden.\n",
}
SERVERS = {
    "docs/proxy.md": "# Proxy\n\nThe proxy cache keeps responses; compost is no header.\n",
    "docs/headers.md": "# Headers\n\nA proxy sets headers on every response.\n",
    "shared.md": "# Shared\n\nA note both folders hold: the proxy of the servers.\n",
}
SCOPES = [
    {
        "name": "docs",
        "paths": ["docs/"],
        "collections": ["servers"],
        "description": "the servers' documentation pages",
    }
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-collections")
    garden = write_files(base / "garden", GARDEN)
    servers = write_files(base / "servers", SERVERS)
    index_with_fake_model(garden, base / "garden-index")
    index_with_fake_model(servers, base / "servers-index")
    return {
        "garden": (garden, base / "garden-index"),
        "servers": (servers, base / "servers-index"),
    }


def params(folders) -> StdioServerParameters:
    return collections_server_params(folders, SCOPES)


def test_the_tools_take_a_collection_and_list_the_collections(folders):
    async def body(session):
        listed = await session.list_tools()
        return {tool.name: tool for tool in listed.tools}, await session.initialize()

    tools, init = with_session(params(folders), body)
    assert "collections" in tools
    search = tools["search"].input_schema["properties"]
    assert {"collections", "scopes"} <= set(search)
    for name in ("read", "read_many", "related", "links", "index_status", "status"):
        assert "collection" in tools[name].input_schema["properties"], name
    assert "collection" in json.dumps(tools["search"].output_schema)
    assert "several folders" in init.instructions


def test_what_an_agent_reads_of_the_server_is_written_for_it(folders):
    """No reStructuredText double backticks or roles (140 of them in the one-folder server's
    tools), no "see the README", no raw newline in the resource template's description: an
    agent reads these without the README or the source."""

    async def body(session):
        init = await session.initialize()
        tools = await session.list_tools()
        templates = await session.list_resource_templates()
        return init.instructions, tools.tools, templates.resource_templates

    for spec in (params(folders), server_params(*folders["garden"])):
        instructions, tools, templates = with_session(spec, body)
        texts = [instructions, *(t.description for t in templates)]
        texts += [json.dumps(tool.model_dump(mode="json", exclude_none=True)) for tool in tools]
        for text in texts:
            assert "``" not in text and ":class:" not in text and ":func:" not in text, text
            assert "README" not in text, text
        for text in (instructions, *(t.description for t in templates)):
            assert "\n" not in text, text
    [template] = templates
    assert "PATH relative to the folder" in template.description


def test_search_names_each_result_collection_and_ranks_as_the_core(folders):
    async def body(session):
        return (
            await call(session, "search", query="compost proxy", mode="keyword"),
            await call(session, "search", query="compost proxy", collections=["garden"]),
            await call(session, "search", query="compost proxy collection:servers"),
            await call(session, "search", query="proxy", scopes=["docs"]),
            await call(session, "search", query="proxy", collections=["nowhere"]),
            await call(session, "search", query="compost", content=True, limit=2),
        )

    both, garden, servers, scoped, unknown, content = with_session(params(folders), body)
    error, data = both
    assert not error
    found = {(hit["collection"], hit["path"]) for hit in data["results"]}
    assert ("garden", "notes/tomato.md") in found and ("servers", "docs/proxy.md") in found
    assert ("garden", "shared.md") in found and ("servers", "shared.md") in found
    # the server's answer is the core's ranking over both folders, field for field
    opened = Collections(
        [
            Collection(name, Index.open_existing(Settings.for_root(*where), FakeEmbedder()))
            for name, where in folders.items()
        ],
        [Scope(**SCOPES[0])],  # type: ignore[arg-type]
    )
    try:
        root, index = folders["garden"]
        settings = Settings.for_root(root, index)
        request = SearchOptions(mode="keyword", limit=11).request("compost proxy", settings)
        response = opened.search(request)
        expected = SearchAnswer.build(
            shape_answer(opened.get("garden").index, response, ContextOptions())
        ).to_json()
    finally:
        opened.close()
    assert data["results"] == expected["results"]
    assert data["stale"] == {"files": 0}

    error, data = garden
    assert not error and data["results"]
    assert {hit["collection"] for hit in data["results"]} == {"garden"}
    error, data = servers
    assert not error and {hit["collection"] for hit in data["results"]} == {"servers"}
    error, data = scoped
    assert not error
    assert {(h["collection"], h["path"]) for h in data["results"]} == {
        ("servers", "docs/proxy.md"),
        ("servers", "docs/headers.md"),
    }
    error, text = unknown
    assert error and "nowhere" in text and "\n" not in text
    error, data = content
    assert not error
    for hit in data["results"]:
        own_root = folders[hit["collection"]][0]
        assert hit["passages"][0]["text"] in (own_root / hit["path"]).read_text()


def test_a_path_is_placed_in_its_collection_or_the_call_says_to_give_one(folders):
    async def body(session):
        return (
            await call(session, "read", path="shared.md"),
            await call(session, "read", path="shared.md", collection="servers"),
            await call(session, "read", path="notes/tomato.md"),
            await call(session, "read", path="missing.md"),
            await call(session, "links", path="notes/compost.md"),
            await call(session, "read_many", glob="**/shared.md"),
            await call(session, "read_many", paths=["docs/proxy.md", "shared.md"]),
            await call(session, "status"),
            await call(session, "status", collection="garden"),
        )

    answers = with_session(params(folders), body)
    (ambiguous, chosen, unique, missing, links, globbed, listed, status, garden) = answers
    error, text = ambiguous
    assert error
    assert text == "shared.md is in several collections (garden, servers): give collection"
    error, data = chosen
    assert not error and data["collection"] == "servers" and "proxy of the servers" in data["text"]
    error, data = unique
    assert not error and data["collection"] == "garden" and data["path"] == "notes/tomato.md"
    error, text = missing
    assert error and "missing.md: no such file in any collection" in text
    error, data = links
    assert not error and data["collection"] == "garden"
    assert [(link["path"], link["state"]) for link in data["links"]] == [
        ("notes/tomato.md", "resolved")
    ]
    error, data = globbed
    assert not error
    assert [(f["collection"], f["path"]) for f in data["files"]] == [
        ("garden", "shared.md"),
        ("servers", "shared.md"),
    ]
    error, data = listed
    assert not error
    assert [(f["collection"], f["path"]) for f in data["files"]] == [("servers", "docs/proxy.md")]
    assert data["omitted"][0]["path"] == "shared.md"
    assert "several collections" in data["omitted"][0]["detail"]
    error, data = status  # collection is optional: left out, each collection is reported
    assert not error, data
    assert [(c["collection"], c["files"]["indexed"]) for c in data["collections"]] == [
        ("garden", 3),
        ("servers", 3),
    ]
    error, data = garden
    assert not error
    [only] = data["collections"]
    assert only["collection"] == "garden" and only["files"]["indexed"] == 3


def test_related_index_status_collections_and_resources(folders):
    async def body(session):
        resources = await session.list_resources()
        uri = next(r.uri for r in resources.resources if str(r.uri).endswith("docs/proxy.md"))
        text = (await session.read_resource(uri)).contents[0].text
        return (
            await call(session, "related", path="notes/tomato.md", collection="garden"),
            await call(session, "index_status"),
            await call(session, "index_status", collection="servers", path="docs/"),
            await call(session, "collections"),
            [str(r.uri) for r in resources.resources],
            text,
        )

    related, every, docs, listing, uris, text = with_session(params(folders), body)
    error, data = related
    assert not error and data["collection"] == "garden" and data["related"]
    assert ("garden", "notes/tomato.md") not in {
        (n["collection"], n["path"]) for n in data["related"]
    }
    assert {n["collection"] for n in data["related"]} == {"garden", "servers"}
    error, data = every
    assert not error and data["counts"] == {"fresh": 6}
    assert {(f["collection"], f["path"]) for f in data["files"]} == {
        *(("garden", path) for path in GARDEN),
        *(("servers", path) for path in SERVERS),
    }
    error, data = docs
    assert not error and data["collection"] == "servers"
    assert [f["path"] for f in data["files"]] == ["docs/headers.md", "docs/proxy.md"]
    error, data = listing
    assert not error
    assert [(c["name"], c["root"], c["files"]) for c in data["collections"]] == [
        ("garden", str(folders["garden"][0]), 3),
        ("servers", str(folders["servers"][0]), 3),
    ]
    assert data["scopes"] == [
        {
            "name": "docs",
            "description": "the servers' documentation pages",
            "paths": ["docs/"],
            "collections": ["servers"],
        }
    ]
    assert "explorer://garden/notes/tomato.md" in uris
    assert "explorer://servers/shared.md" in uris and "explorer://garden/shared.md" in uris
    assert text == SERVERS["docs/proxy.md"]


def test_every_folder_index_is_kept_current(folders, tmp_path):
    garden = write_files(tmp_path / "garden", GARDEN)
    servers = write_files(tmp_path / "servers", SERVERS)
    index_with_fake_model(garden, tmp_path / "gi")
    index_with_fake_model(servers, tmp_path / "si")
    spec = {"garden": (garden, tmp_path / "gi"), "servers": (servers, tmp_path / "si")}

    async def found(session):
        error, data = await call(session, "search", query="zeppelin", mode="keyword")
        return not error and [(h["collection"], h["path"]) for h in data["results"]]

    async def body(session):
        await call(session, "status", collection="servers")  # both keepers are running
        (servers / "docs" / "zeppelin.md").write_text("# Zeppelin\n\nA zeppelin proxy.\n")
        return await wait_for(lambda: found(session), 15)

    results, waited = with_session(params(spec), body)
    assert results == [("servers", "docs/zeppelin.md")], f"not found after {waited:.1f} s"


def test_explorer_mcp_with_two_folders_serves_them_as_collections(tmp_path, monkeypatch):
    """`explorer mcp A B` on the command line: each folder's own index (in its default place),
    named after its directory, searched as one."""
    garden = write_files(tmp_path / "garden", GARDEN)
    servers = write_files(tmp_path / "servers", SERVERS)
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    done = CliRunner().invoke(main, ["index", str(garden), str(servers)])
    assert done.exit_code == 0, done.output
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.fake_model_cli", "mcp", str(garden), str(servers)],
        env=env,
        cwd=str(REPO),
    )

    async def body(session):
        listed = await call(session, "collections")
        found = await call(session, "search", query="compost proxy", mode="keyword")
        return listed, found

    (error, listed), (found_error, found) = with_session(server, body)
    assert not error and not found_error, (listed, found)
    assert {each["name"] for each in listed["collections"]} == {"garden", "servers"}
    named = {(hit["collection"], hit["path"]) for hit in found["results"]}
    assert ("garden", "notes/tomato.md") in named and ("servers", "docs/proxy.md") in named


def test_the_folders_of_one_server_share_one_embedder(tmp_path, monkeypatch):
    """``explorer mcp A B`` keeps each folder's index current, embedding as files change: with
    an embedder each, two folders embedding at once held two copies of the model's weights and
    opened two query encoders. The server's folders share one, as a window's do. (Folders with
    no file: nothing is embedded, so no weights are loaded to find it out.)"""
    import explorer.mcp.server as server_module

    roots = [tmp_path / "garden", tmp_path / "servers"]
    for root in roots:
        root.mkdir()
        done = CliRunner().invoke(main, ["index", str(root), "--keywords-only"])
        assert done.exit_code == 0, done.output
    keepers = []
    keeper_class = server_module.IndexKeeper

    def kept(settings):
        keepers.append(keeper_class(settings))
        return keepers[-1]

    embedders = []

    def serve_nothing(_run):  # in place of answering over stdio: the folders as served
        embedders.extend(keeper.index().embedder for keeper in keepers)

    monkeypatch.setattr(server_module, "IndexKeeper", kept)
    monkeypatch.setattr(server_module.anyio, "run", serve_nothing)
    named = [NamedFolder(root.name, Settings.for_root(root)) for root in roots]
    server_module.serve_folders(OpenFolders(named, ()))
    assert len(embedders) == 2 and embedders[0] is embedders[1]
