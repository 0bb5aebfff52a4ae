"""A folder ``explorer mcp`` serves is moved away (or deleted) while the server runs: answers
say so and do not give its files as if they were there; when it is back, they are again.

It used to go unnoticed: search kept returning the folder's files, the top-level ``stale``
said 0 and ``collections`` said the folder was ``live``. Through the SDK's client against a
real server process.
"""

from __future__ import annotations

from tests.conftest import write_files
from tests.mcp_client import (
    call,
    collections_server_params,
    index_with_fake_model,
    server_params,
    wait_for,
    with_session,
)

GARDEN = {
    "notes/tomato.md": "# Tomato\n\nZeppelin tomatoes want compost, sun and water.\n",
    "notes/compost.md": "# Compost\n\nCompost feeds the zeppelin tomatoes.\n",
}
SERVERS = {"docs/proxy.md": "# Proxy\n\nThe zeppelin proxy cache keeps responses.\n"}


async def _paths(session) -> list:
    error, data = await call(session, "search", query="zeppelin", mode="keyword")
    assert not error, data
    return sorted((hit.get("collection"), hit["path"]) for hit in data["results"])


def test_a_served_folder_moved_away_is_said_gone_and_its_files_left_out(tmp_path):
    root, index_dir = write_files(tmp_path / "garden", GARDEN), tmp_path / "index"
    index_with_fake_model(root, index_dir)
    moved = tmp_path / "elsewhere"

    async def body(session):
        before = await _paths(session)
        root.rename(moved)
        answers = {
            "search": await call(session, "search", query="zeppelin", mode="keyword"),
            "status": await call(session, "status"),
            "read": await call(session, "read", path="notes/tomato.md"),
        }
        moved.rename(root)
        back, waited = await wait_for(lambda: _paths(session), 15)
        return before, answers, back, waited

    before, answers, back, waited = with_session(server_params(root, index_dir), body)
    assert before == [(None, "notes/compost.md"), (None, "notes/tomato.md")]
    error, search = answers["search"]
    assert not error and search["results"] == []
    assert any(f"{root} is gone (deleted or moved away)" in note for note in search["notes"])
    assert search["stale"]["files"] == 2 and search["stale"]["deleted"] == 2
    assert search["stale"]["folders_gone"] == [str(root)]
    error, status = answers["status"]
    assert not error and status["stale"]["folders_gone"] == [str(root)]
    assert status["files"]["stale"] == 2 and status["upkeep"] == "waiting_for_folder"
    error, text = answers["read"]
    assert error and "is gone" in text
    assert back == before, f"not back after {waited:.1f} s"


def test_a_collection_whose_folder_is_deleted_is_said_gone_the_others_still_answer(tmp_path):
    garden = write_files(tmp_path / "garden", GARDEN)
    servers = write_files(tmp_path / "servers", SERVERS)
    index_with_fake_model(garden, tmp_path / "gi")
    index_with_fake_model(servers, tmp_path / "si")
    folders = {"garden": (garden, tmp_path / "gi"), "servers": (servers, tmp_path / "si")}

    async def body(session):
        before = await _paths(session)
        garden.rename(tmp_path / "trash")
        return before, {
            "search": await call(session, "search", query="zeppelin", mode="keyword"),
            "named": await call(
                session, "search", query="zeppelin", mode="keyword", collections=["garden"]
            ),
            "collections": await call(session, "collections"),
            "read_many": await call(session, "read_many", glob="**/*.md"),
        }

    before, answers = with_session(collections_server_params(folders), body)
    assert before == [
        ("garden", "notes/compost.md"),
        ("garden", "notes/tomato.md"),
        ("servers", "docs/proxy.md"),
    ]
    error, search = answers["search"]
    assert not error
    assert [(h["collection"], h["path"]) for h in search["results"]] == [
        ("servers", "docs/proxy.md")
    ]
    assert any(note.startswith("collection garden: ") for note in search["notes"])
    assert search["stale"]["files"] == 2 and search["stale"]["folders_gone"] == [str(garden)]
    error, named = answers["named"]
    assert not error and named["results"] == [] and "is gone" in named["notes"][0]
    error, listed = answers["collections"]
    assert not error
    state = {c["name"]: (c.get("problem"), c["upkeep"]) for c in listed["collections"]}
    assert "is gone" in state["garden"][0] and state["garden"][1] == "waiting_for_folder"
    assert state["servers"] == (None, "live")
    error, many = answers["read_many"]
    assert not error and [f["path"] for f in many["files"]] == ["docs/proxy.md"]
    assert all("is gone" in o["detail"] for o in many["omitted"])
