"""What agents use from the best MCP servers, end to end through the SDK's client against a real
``explorer mcp`` process: ``read_many`` within a budget, files as resources, ``exclude``, cursor
paging, reading a line too long for one answer, and line numbers that match the index's.
"""

from __future__ import annotations

import pytest

from tests.conftest import write_files
from tests.mcp_client import call, index_with_fake_model, server_params, with_session

LONG_LINE = "".join(f"{n:07d} " for n in range(18_750))  # 150,000 characters, one line
FILES = {
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n\nLine five.\n",
    "notes/sky.md": "# Sky\n\nSee the stars through a telescope.\n",
    "notes/big.md": "# Big\n\n" + "telescope pages " * 2_000 + "\n",
    "drafts/draft.md": "# Draft\n\nA telescope draft, telescope telescope telescope.\n",
    "data/wide.md": "# Wide\n\n" + LONG_LINE + "\nafter the long line\n",
    "code/paged.py": (
        '"""A module with a form feed."""\n\x0c\nimport os\n\n\n'
        "def telescope_mount():\n    return os.sep\n"
    ),
    "My Notes/ü space.md": "# Umlaut\n\nA note with a telescope and a space in its path.\n",
    **{f"many/m{i:02d}.md": f"# Many {i}\n\nTelescope number {i}.\n" for i in range(25)},
    ".env": "SECRET=hunter2\n",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-agent-tools")
    root, index_dir = write_files(base / "root", FILES), base / "index"
    write_files(base / "outside", {"secret.md": "# Secret\n\nnot for agents\n"})
    index_with_fake_model(root, index_dir)
    return root, index_dir


def test_read_many_reads_paths_and_globs_within_a_byte_or_token_budget(corpus):
    async def body(session):
        return (
            await call(
                session, "read_many", paths=["notes/stars.md", "./notes/sky.md", "notes/sky.md"]
            ),
            await call(session, "read_many", glob="notes/*.md", max_bytes=200),
            await call(session, "read_many", glob="many/**", max_files=3),
            await call(session, "read_many", paths=["notes/stars.md"], max_tokens=5),
            await call(
                session,
                "read_many",
                paths=[".env", "../outside/secret.md", "notes/none.md", "notes/sky.md"],
            ),
            await call(session, "read_many"),
        )

    two, budgeted, capped, tokens, refused, nothing = with_session(server_params(*corpus), body)
    error, data = two
    assert not error
    assert [(f["path"], f["text"]) for f in data["files"]] == [
        ("notes/stars.md", FILES["notes/stars.md"]),
        ("notes/sky.md", FILES["notes/sky.md"]),
    ]
    assert data["unit"] == "bytes" and data["used"] == len(
        (FILES["notes/stars.md"] + FILES["notes/sky.md"]).encode()
    )
    error, data = budgeted
    assert not error and data["used"] <= 200
    assert {f["path"] for f in data["files"]} == {"notes/sky.md", "notes/stars.md"}
    (omitted,) = data["omitted"]
    assert omitted["path"] == "notes/big.md" and omitted["reason"] == "over_budget"
    assert omitted["size"] == len(FILES["notes/big.md"].encode())
    error, data = capped
    assert not error and [f["path"] for f in data["files"]] == [
        f"many/m{i:02d}.md" for i in range(3)
    ]
    assert data["more"] == 22 and "omitted" not in data
    error, data = tokens
    assert not error and data["unit"] == "tokens" and data["files"] == []
    assert data["omitted"][0]["reason"] == "over_budget" and data["omitted"][0]["size"] > 5
    error, data = refused
    assert not error and [f["path"] for f in data["files"]] == ["notes/sky.md"]
    reasons = {o["path"]: (o["reason"], o["detail"]) for o in data["omitted"]}
    assert set(reasons) == {".env", "../outside/secret.md", "notes/none.md"}
    assert all(reason == "unreadable" for reason, _ in reasons.values())
    assert "hunter2" not in str(data) and "not for agents" not in str(data)
    error, text = nothing
    assert error and "give paths, a glob, or both" in text


def test_read_manys_text_names_what_was_read_and_what_was_left_out_and_why(corpus):
    """It said "1 files ...; 2 left out: notes/sky.md", naming the file that *was* read."""

    async def body(session):
        return await session.call_tool(
            "read_many",
            {"paths": ["notes/sky.md", "notes/big.md", "notes/none.md"], "max_bytes": 1_000},
        )

    result = with_session(server_params(*corpus), body)
    (text,) = [block.text for block in result.content]
    headline, left_out = text.splitlines()[:2]
    assert headline.startswith("read 1 files (") and headline.endswith("bytes): notes/sky.md")
    assert left_out.startswith("left out 2: ")
    assert "notes/sky.md" not in left_out
    big = f"{len(FILES['notes/big.md'].encode()):,}"
    assert f"notes/big.md (over_budget: {big} bytes, read it with read)" in left_out
    assert "notes/none.md (unreadable: notes/none.md: no such file)" in left_out
    assert FILES["notes/sky.md"].splitlines()[2] in text  # and the file read, whole


def test_files_are_resources_with_a_template(corpus):
    root, _ = corpus

    async def body(session):
        listed = await session.list_resources()
        templates = await session.list_resource_templates()
        read = await session.read_resource("explorer://notes/stars.md")
        escaped = await session.read_resource("explorer://My%20Notes/%C3%BC%20space.md")
        slashed = await session.read_resource("explorer://notes%2Fsky.md")
        refusals = []
        for uri in ("explorer://../outside/secret.md", "explorer://.env", "file:///etc/passwd"):
            try:
                await session.read_resource(uri)
            except Exception as error:  # noqa: BLE001 - the client raises the server's error
                refusals.append(str(error))
            else:
                refusals.append("read")
        return listed, templates, read, escaped, slashed, refusals

    listed, templates, read, escaped, slashed, refusals = with_session(server_params(*corpus), body)
    uris = {resource.uri: resource for resource in listed.resources}
    assert "explorer://notes/stars.md" in uris and "explorer://.env" not in uris
    assert "explorer://My%20Notes/%C3%BC%20space.md" in uris
    assert uris["explorer://notes/stars.md"].mime_type == "text/markdown"
    (template,) = templates.resource_templates
    assert template.uri_template == "explorer://{path}"
    (contents,) = read.contents
    assert contents.text == FILES["notes/stars.md"] and contents.mime_type == "text/markdown"
    assert escaped.contents[0].text == FILES["My Notes/ü space.md"]
    assert slashed.contents[0].text == FILES["notes/sky.md"]
    assert "'..' is refused" in refusals[0]
    assert "not a file explorer indexes" in refusals[1]
    assert "not an explorer resource" in refusals[2]
    assert not any("hunter2" in text or "not for agents" in text for text in refusals)


def test_exclude_leaves_files_out_before_ranking(corpus):
    async def body(session):
        return (
            await call(session, "search", query="telescope draft", mode="keyword", limit=1),
            await call(
                session,
                "search",
                query="telescope draft",
                mode="keyword",
                limit=1,
                exclude=["drafts/"],
            ),
            await call(session, "search", query="telescope", exclude=["many/**", "notes/"]),
            await call(session, "search", query="telescope", exclude=["[z-a]"]),
        )

    first, without, globbed, bad = with_session(server_params(*corpus), body)
    assert first[1]["results"][0]["path"] == "drafts/draft.md"
    error, data = without
    assert not error and len(data["results"]) == 1
    assert data["results"][0]["path"] != "drafts/draft.md"
    error, data = globbed
    paths = {hit["path"] for hit in data["results"]}
    assert not error and paths
    assert not any(p.startswith(("many/", "notes/")) for p in paths)
    error, text = bad
    assert error and "exclude '[z-a]': bad character range z-a" in text


def test_cursor_paging_walks_every_result_once(corpus):
    async def body(session):
        whole = await call(session, "search", query="telescope", limit=40, mode="keyword")
        pages, cursor = [], None
        while True:
            arguments = {"query": "telescope", "limit": 7, "mode": "keyword"}
            if cursor:
                arguments["cursor"] = cursor
            error, page = await call(session, "search", **arguments)
            assert not error, page
            pages.append(page)
            cursor = page.get("next_cursor")
            if not cursor or len(pages) > 10:
                break
        other = await call(
            session, "search", query="stars", limit=7, cursor=pages[0]["next_cursor"]
        )
        garbage = await call(session, "search", query="telescope", cursor="not-a-cursor")
        return whole, pages, other, garbage

    (error, whole), pages, other, garbage = with_session(server_params(*corpus), body)
    assert not error
    everything = [hit["path"] for hit in whole["results"]]
    assert 7 < len(everything) < 40 and "next_cursor" not in whole
    paged = [hit["path"] for page in pages for hit in page["results"]]
    assert paged == everything  # the same order, each file once
    assert all(len(page["results"]) == 7 for page in pages[:-1])
    assert "next_cursor" not in pages[-1]
    error, text = other
    assert error and "cursor belongs to another request" in text
    error, text = garbage
    assert error and "cursor is not one this server gave" in text


def test_a_line_too_long_for_one_answer_is_read_to_its_end(corpus):
    async def body(session):
        answers = [await call(session, "read", path="data/wide.md", start_line=3)]
        while answers[-1][1].get("next_start_line") is not None and len(answers) < 10:
            _, last = answers[-1]
            arguments = {"start_line": last["next_start_line"]}
            if last.get("next_start_char") is not None:
                arguments["start_char"] = last["next_start_char"]
            answers.append(await call(session, "read", path="data/wide.md", **arguments))
        past = await call(session, "read", path="data/wide.md", start_line=3, start_char=150_001)
        return answers, past

    answers, past = with_session(server_params(*corpus), body)
    assert all(not error for error, _ in answers)
    parts = [data for _, data in answers]
    assert len(parts[0]["text"]) == 60_000
    assert parts[0]["truncated"] is True
    assert (parts[0]["next_start_line"], parts[0]["next_start_char"]) == (3, 60_000)
    assert parts[1]["start_char"] == 60_000
    assert "".join(part["text"] for part in parts) == LONG_LINE + "\nafter the long line\n"
    assert parts[-1]["truncated"] is False and parts[-1]["end_line"] == 4
    error, text = past
    assert error and "start_char 150001 is past its end" in text


def test_read_numbers_lines_as_search_results_do(corpus):
    async def body(session):
        error, found = await call(
            session, "search", query="telescope_mount", mode="keyword", paths=["code/"]
        )
        assert not error, found
        passage = found["results"][0]["passages"][0]
        read = await call(
            session,
            "read",
            path="code/paged.py",
            start_line=passage["start_line"],
            end_line=passage["end_line"],
        )
        return passage, read

    passage, (error, read) = with_session(server_params(*corpus), body)
    assert not error
    assert read["text"].startswith("def telescope_mount():")  # not one line off: \x0c is no end
    assert read["total_lines"] == FILES["code/paged.py"].count("\n")


def test_the_resource_list_comes_in_pages(corpus, monkeypatch):
    from explorer.mcp import tools as tool_module
    from explorer.mcp.freshness import Freshness
    from explorer.mcp.keeper import IndexKeeper
    from explorer.settings.config import Settings
    from tests.fakes import FakeEmbedder

    monkeypatch.setattr(tool_module, "RESOURCES_PER_PAGE", 4)
    settings = Settings.for_root(*corpus)
    keeper = IndexKeeper(settings, FakeEmbedder, live=False)
    tools = tool_module.ExplorerTools(settings, keeper, Freshness(settings))
    try:
        pages, cursor = [], None
        while len(pages) < 20:
            records, cursor = tools.resource_page(cursor)
            pages.append([record.path for record in records])
            if cursor is None:
                break
    finally:
        keeper.close()
    listed = [path for page in pages for path in page]
    assert all(len(page) == 4 for page in pages[:-1]) and 1 <= len(pages[-1]) <= 4
    assert listed == sorted(listed) and len(listed) == len(set(listed))
    assert "notes/stars.md" in listed and ".env" not in listed
    assert len(listed) == len(FILES) - 1  # every file but .env


def test_a_hit_found_changed_is_counted_even_if_the_index_caught_up_since(corpus):
    # An answer asks each hit's file first (a stat), then the folder's count. When the live
    # index lands the edit in between, the hit still holds the old text: it is marked stale,
    # and the count must say so too (it said 0 files).
    from explorer.core.store.index import Index
    from explorer.mcp.freshness import Freshness
    from explorer.settings.config import Settings

    settings = Settings.for_root(*corpus)
    index = Index.open_existing(settings)
    try:
        freshness = Freshness(settings)
        assert freshness.staleness(index.keywords).files == 0  # the index is current
        counted = freshness.staleness(index.keywords, seen={"notes/stars.md"})
        assert (counted.files, counted.edited, counted.paths) == (1, 1, ["notes/stars.md"])
    finally:
        index.close()


def test_a_hit_is_judged_by_the_commit_it_was_read_from(tmp_path, monkeypatch):
    """The live index may land an edit between a search and the stat of its hits' files: the
    hit holds the old text while the manifest already holds the new file. The hit was called
    fresh (seen once in CI, under load); it is compared with the commit it was read from."""
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.retrieval import search as search_module
    from explorer.core.store.index import Index
    from explorer.mcp import tools as tool_module
    from explorer.mcp.arguments import SearchArguments
    from explorer.mcp.freshness import Freshness
    from explorer.mcp.keeper import IndexKeeper
    from explorer.settings.config import Settings
    from tests.fakes import FakeEmbedder

    root = write_files(tmp_path / "root", {k: FILES[k] for k in ("notes/stars.md", "notes/sky.md")})
    index_with_fake_model(root, tmp_path / "index")
    settings = Settings.for_root(root, tmp_path / "index")
    writer = Index(settings, embedder=FakeEmbedder())  # the live index: another connection
    writer.acquire_write_lock()
    searched = search_module.search

    def search_then_land_an_edit(index, request):
        response = searched(index, request)
        (root / "notes" / "stars.md").write_text("# Stars\n\nNo longer seen at night.\n")
        Indexer(writer).sync()
        return response

    monkeypatch.setattr(search_module, "search", search_then_land_an_edit)
    keeper = IndexKeeper(settings, FakeEmbedder, live=False)
    tools = tool_module.ExplorerTools(settings, keeper, Freshness(settings))
    try:
        answer = tools.search(SearchArguments(query="telescope", mode="keyword"))
    finally:
        keeper.close()
        writer.close()
    [hit] = [hit for hit in answer.results if hit.path == "notes/stars.md"]
    assert "telescope" in hit.passages[0].snippet  # the old text, read before the edit landed
    assert hit.stale is True
    assert answer.stale is not None and answer.stale.paths == ["notes/stars.md"]
