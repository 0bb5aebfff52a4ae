"""``explorer mcp`` as an agent meets it: a real server process, the official SDK's client.

The server runs as ``python -m tests.fake_model_cli mcp ROOT`` (the CLI with the fake embedder),
and every test talks to it through ``mcp.client.stdio``: list the tools, call them, read the
results and the error results.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from explorer.api.answers import LinksAnswer
from explorer.cli import main
from explorer.core.models import SearchMode
from explorer.core.retrieval.links import file_links
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.mcp_client import call, index_with_fake_model, server_params, wait_for, with_session

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
TOOLS = {"search", "read", "read_many", "related", "links", "index_status", "status"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    secret = write_files(base / "outside", {"secret.md": "# Secret\n\nnot for agents\n"})
    (root / "notes" / "escape.md").symlink_to(secret / "secret.md")
    (root / "notes" / "inside-link.md").symlink_to(root / "notes" / "stars.md")
    index_with_fake_model(root, index_dir)
    return root, index_dir


def test_the_client_lists_the_tools_with_descriptions(corpus):
    async def body(session):
        listed = await session.list_tools()
        return {tool.name: tool for tool in listed.tools}

    tools = with_session(server_params(*corpus), body)
    assert set(tools) == TOOLS
    search = tools["search"]
    assert "grep" in search.description and "meaning" in search.description
    assert {
        "query",
        "mode",
        "paths",
        "exclude",
        "tags",
        "versions",
        "limit",
        "cursor",
        "per_file",
        "min_score",
        "content",
        "max_tokens",
        "metadata_only",
        "offsets",
        "explain",
    } == set(search.input_schema["properties"])
    assert search.input_schema["required"] == ["query"]
    # an agent is offered exactly the modes the core runs, as plain strings
    assert search.input_schema["properties"]["mode"]["enum"] == [m.value for m in SearchMode]
    assert set(tools["read"].input_schema["properties"]) == {
        "path",
        "start_line",
        "end_line",
        "start_char",
    }
    assert set(tools["related"].input_schema["properties"]) == {"path", "limit", "unlinked"}
    assert all(tool.annotations.read_only_hint for tool in tools.values())


def test_search_answers_with_the_answer_model_the_cli_json_shares(corpus):
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
    from explorer.api.answers import SearchAnswer
    from explorer.api.requests import SearchOptions
    from explorer.core.retrieval.agent_context import ContextOptions, shape_answer
    from explorer.core.retrieval.search import search

    settings = Settings.for_root(root, index_dir)
    index = Index.open_existing(settings, FakeEmbedder())
    try:
        request = SearchOptions().request("telescope mirrors", settings)
        expected = SearchAnswer.build(shape_answer(index, search(index, request), ContextOptions()))
    finally:
        index.close()
    error, data = plain
    assert not error
    assert data["stale"] == {"files": 0}
    assert {k: v for k, v in data.items() if k != "stale"} == expected.to_json()
    error, data = content
    assert not error and len(data["results"]) == 1
    passage = data["results"][0]["passages"][0]
    text = (root / data["results"][0]["path"]).read_text()
    assert passage["text"] in text and "snippet" not in passage
    error, data = metadata
    assert not error
    described = {hit["path"]: hit.get("description") for hit in data["results"]}
    assert described["guides/telescope.md"] == "Choosing lenses and mirrors"
    assert all("passages" not in hit for hit in data["results"])
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
    assert whole["truncated"] is False and "next_start_line" not in whole
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
    assert not error and data["path"] == "notes/stars.md"
    assert 1 <= len(data["related"]) <= 2
    assert {"path", "score", "source_passage", "related_passage"} <= set(data["related"][0])
    error, data = status
    assert not error and data["root"] == str(root)
    assert data["files"]["stale"] == 0 and data["stale"] == {"files": 0}
    assert data["upkeep"] == "live"
    error, data = links
    assert not error, data
    assert data["path"] == "notes/stars.md" and data["exists"] is True
    assert [(b["path"], b["line"]) for b in data["backlinks"]] == [("notes/sky.md", 7)]


def test_links_are_the_model_every_front_end_shows(corpus):
    root, index_dir = corpus

    async def body(session):
        return (
            await call(session, "links", path="notes/vault.md"),
            await call(session, "links", path="notes/long.md"),
        )

    vault, long = with_session(server_params(*corpus), body)
    assert [(link["raw"], link["path"], link["state"]) for link in vault[1]["links"]] == [
        ("[[LONG]]", "notes/long.md", "resolved"),
        ("[[Nowhere]]", "Nowhere.md", "missing"),
    ]
    index = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    try:  # the model `explorer links --json` prints, built from what the sidebar reads
        for answer, path in ((vault, "notes/vault.md"), (long, "notes/long.md")):
            expected = LinksAnswer.build(file_links(index, path)).to_json()
            got = {key: value for key, value in answer[1].items() if key != "stale"}
            assert answer[0] is False and got == {k: v for k, v in expected.items() if k != "stale"}
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
    assert {(link["path"], link["exists"]) for link in data["links"]} == {
        ("notes/stars.md", True),
        ("notes/comet.md", False),
    }
    error, data = comet
    assert not error and data["exists"] is False
    assert [b["path"] for b in data["backlinks"]] == ["notes/sky.md"]
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
    assert "limit must be at least 1" in answers[1][1]
    assert "mode must be one of hybrid, semantic or keyword" in answers[2][1]
    assert "limit must be at most 200" in answers[3][1]
    assert "--" not in answers[1][1]


def test_without_an_index_every_tool_says_how_to_make_one_with_its_index_dir(tmp_path):
    root = write_files(tmp_path / "fresh", {"a.md": "# A\n"})
    index_dir = tmp_path / "no-index"

    async def body(session):
        return (
            await call(session, "search", query="anything"),
            await call(session, "status"),
            await call(session, "index_status"),
        )

    for error, text in with_session(server_params(root, index_dir), body):
        assert error, text
        # the hint names the index directory: following it builds this index, not another
        assert f"run: explorer index {root} --index-dir {index_dir}" in text, text
    assert not (index_dir / "index.sqlite").exists()


def test_the_server_follows_a_writer_and_takes_over_when_it_leaves(corpus):
    root, index_dir = corpus
    holder = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    holder.acquire_write_lock()

    async def upkeep(session):
        return (await call(session, "status"))[1]["upkeep"]

    async def body(session):
        following, _ = await wait_for(lambda: _is(upkeep(session), "following"), 5)
        searched = await call(session, "search", query="telescope")
        holder.close()  # the other writer leaves
        taken_over, waited = await wait_for(lambda: _is(upkeep(session), "live"), 10)
        return following, searched, taken_over, waited

    try:
        following, (error, data), taken_over, waited = with_session(server_params(*corpus), body)
    finally:
        holder.close()
    assert following and not error and data["results"]
    assert taken_over, f"the server did not take over within {waited:.1f} s"


async def _is(value, expected) -> bool:
    return await value == expected


def test_the_cli_refuses_a_missing_root_at_once(tmp_path):
    result = CliRunner().invoke(main, ["mcp", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"explorer: error: no such folder: {tmp_path / 'missing'}"


def test_a_pdf_result_is_read_at_its_lines(tmp_path):
    """A search result in a PDF names lines of the text the index extracted; `read` gives those
    lines (it said 'not readable as text': a dead end for every document that is not text)."""
    from tests.documents import make_pdf, write

    root, index_dir = tmp_path / "docs", tmp_path / "index"
    pages = [["Introduction", "Explorer reads folders."], ["Quasar mode", "Search in quasar mode."]]
    write(root / "manual.pdf", make_pdf(pages))
    write(root / "notes.md", "# Notes\n\nNothing here.\n")
    index_with_fake_model(root, index_dir)

    async def body(session):
        error, found = await call(session, "search", query="quasar", mode="keyword")
        assert not error, found
        [hit] = [hit for hit in found["results"] if hit["path"] == "manual.pdf"]
        passage = hit["passages"][0]
        return passage, await call(
            session,
            "read",
            path="manual.pdf",
            start_line=passage["start_line"],
            end_line=passage["end_line"],
        )

    passage, (error, read) = with_session(server_params(root, index_dir), body)
    assert not error, read
    assert passage["page"] == 2
    assert read["text"].splitlines()[0] == "Quasar mode"
    assert "Search in quasar mode." in read["text"]


def test_a_document_paged_through_is_extracted_once_until_it_changes(tmp_path, monkeypatch):
    """An agent reads a long PDF one range at a time: the document is extracted on the first
    read and kept for the next; once the file changes on disk, the new text is read."""
    import os

    from explorer.mcp import reading
    from explorer.settings.config import Settings
    from tests.documents import make_pdf, write

    root = tmp_path / "docs"
    write(root / "manual.pdf", make_pdf([["Chapter one", "Nebula setup."], ["Two", "More."]]))
    settings = Settings.for_root(root, tmp_path / "index")
    extracted = []
    real = reading.load_source

    def counted(absolute, rel_path, *args, **kwargs):
        extracted.append(rel_path)
        return real(absolute, rel_path, *args, **kwargs)

    monkeypatch.setattr(reading, "load_source", counted)
    first = reading.load_file(settings, "manual.pdf")
    again = reading.load_file(settings, "manual.pdf")
    assert "Nebula setup." in first.text and again.text == first.text
    assert extracted == ["manual.pdf"]

    write(root / "manual.pdf", make_pdf([["Chapter one", "Pulsar setup."]]))
    stat = (root / "manual.pdf").stat()
    os.utime(root / "manual.pdf", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    changed = reading.load_file(settings, "manual.pdf")
    assert "Pulsar setup." in changed.text and "Nebula" not in changed.text
    assert extracted == ["manual.pdf", "manual.pdf"]


def test_related_says_why_and_which_files_are_linked_and_lists_the_unlinked(corpus):
    # notes/sky.md links to stars.md (and to a comet that is not there)
    async def body(session):
        return (
            await call(session, "related", path="notes/sky.md", limit=5),
            await call(session, "related", path="notes/sky.md", limit=5, unlinked=True),
        )

    every, unlinked = with_session(server_params(*corpus), body)
    error, data = every
    assert not error
    by_path = {item["path"]: item for item in data["related"]}
    assert by_path["notes/stars.md"]["linked"] is True
    assert by_path["notes/stars.md"]["why"].startswith("linked · same section")
    assert all(item["linked"] is False for p, item in by_path.items() if p != "notes/stars.md")
    error, data = unlinked
    assert not error and data["unlinked"] is True
    paths = [item["path"] for item in data["related"]]
    assert paths and "notes/stars.md" not in paths
    assert all(item["linked"] is False for item in data["related"])
