"""Fresh answers: ``explorer mcp`` keeps the index current while it runs, and says when it is
behind.

A real server process and the SDK's client, as in test_mcp_server.py. The server writes the
index when no other explorer does (a file added is found within seconds); when another process
holds the write lock it follows that writer; and every answer until an update lands says the
index is behind (``stale``) and marks the files that changed, so no result is silently old.
"""

from __future__ import annotations

from explorer.core.indexing.indexer import Indexer
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.mcp_client import call, index_with_fake_model, server_params, wait_for, with_session

FILES = {
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n\nLine five.\n",
    "notes/sky.md": "# Sky\n\nSee [the stars](stars.md) through a telescope.\n",
    "guides/lenses.md": "# Lenses\n\nTelescope lenses, ground and polished.\n",
}
EDITED = (
    "# Stars\n\nA new first paragraph.\n\nAnd a second one.\n\n## Seen\n\n"
    "Stars and a walrus seen through a telescope at night.\n"
)
"""notes/stars.md after an edit: its telescope passage moves down, and a walrus appears."""


def corpus(tmp_path):
    root, index_dir = write_files(tmp_path / "root", FILES), tmp_path / "index"
    index_with_fake_model(root, index_dir)
    return root, index_dir


def hits(answer) -> dict[str, dict]:
    return {hit["path"]: hit for hit in answer["results"]}


def test_a_file_added_while_the_server_runs_is_found_within_five_seconds(tmp_path):
    root, index_dir = corpus(tmp_path)

    async def body(session):
        error, before = await call(session, "search", query="walrus tusks")
        assert not error and "notes/walrus.md" not in hits(before)
        (root / "notes" / "walrus.md").write_text("# Walrus\n\nWalrus tusks and blubber.\n")

        async def found():
            error, answer = await call(session, "search", query="walrus tusks")
            return not error and "notes/walrus.md" in hits(answer) and answer

        answer, waited = await wait_for(found, 5)
        return answer, waited, await call(session, "status")

    answer, waited, (error, status) = with_session(server_params(root, index_dir), body)
    assert answer, f"the new file was not found within {waited:.1f} s"
    assert not error and status["upkeep"] == "live"
    assert status["stale"]["files"] == 0


def test_an_edited_file_is_marked_stale_in_every_answer_until_its_update_lands(tmp_path):
    root, index_dir = corpus(tmp_path)
    stars = root / "notes" / "stars.md"
    new_lines = EDITED.split("\n")
    moved_to = next(n for n, line in enumerate(new_lines, 1) if "telescope" in line)

    async def body(session):
        error, answer = await call(session, "search", query="telescope", mode="keyword")
        assert not error and "stale" not in hits(answer)["notes/stars.md"]
        stars.write_text(EDITED)
        seen = []

        async def landed():
            _, answer = await call(session, "search", query="telescope", mode="keyword")
            _, read = await call(session, "read", path="notes/stars.md")
            seen.append((answer, read))
            hit = hits(answer)["notes/stars.md"]
            return "stale" not in hit and hit["passages"][0]["end_line"] >= moved_to

        done, waited = await wait_for(landed, 5, every=0.05)
        return done, waited, seen

    done, waited, seen = with_session(server_params(root, index_dir), body)
    assert done, f"the edit did not land within {waited:.1f} s"
    for answer, _read in seen[:-1]:  # every answer before the update landed says so
        hit = hits(answer)["notes/stars.md"]
        assert hit["stale"] is True and answer["stale"]["files"] >= 1
        assert "notes/stars.md" in answer["stale"]["paths"]
    for _answer, read in seen:  # read gives the text on disk, whatever the index holds
        assert read["text"] == EDITED
    answer, read = seen[-1]
    assert answer["stale"]["files"] == 0 and "stale" not in read  # vectors may still come


def test_following_another_writer_answers_say_stale_until_it_writes(tmp_path):
    root, index_dir = corpus(tmp_path)
    writer = Index(Settings.for_root(root, index_dir), embedder=FakeEmbedder())
    writer.acquire_write_lock()  # another explorer: the server only reads

    async def upkeep(session):
        return (await call(session, "status"))[1]["upkeep"]

    async def body(session):
        following, _ = await wait_for(lambda: _equals(upkeep(session), "following"), 5)
        (root / "notes" / "stars.md").write_text(EDITED)
        (root / "notes" / "new.md").write_text("# New\n\nA telescope mount.\n")
        (root / "guides" / "lenses.md").unlink()
        behind = {
            "search": await call(session, "search", query="telescope", mode="keyword"),
            "read": await call(session, "read", path="notes/stars.md"),
            "index_status": await call(session, "index_status", path="."),
            "status": await call(session, "status"),
            "related": await call(session, "related", path="notes/sky.md"),
            "related of new": await call(session, "related", path="notes/new.md"),
        }
        Indexer(writer).sync()  # the other writer catches up, then leaves
        writer.close()
        caught_up = await call(session, "search", query="telescope", mode="keyword")
        return following, behind, caught_up

    try:
        following, behind, (caught_error, caught_up) = with_session(
            server_params(root, index_dir), body
        )
    finally:
        writer.close()
    assert following
    error, answer = behind["search"]
    assert not error
    assert answer["stale"]["files"] == 3
    assert (answer["stale"]["edited"], answer["stale"]["new"], answer["stale"]["deleted"]) == (
        1,
        1,
        1,
    )
    assert answer["stale"]["paths"] == ["guides/lenses.md", "notes/new.md", "notes/stars.md"]
    assert hits(answer)["notes/stars.md"]["stale"] is True
    assert hits(answer)["guides/lenses.md"]["stale"] is True  # deleted since indexed
    assert "stale" not in hits(answer)["notes/sky.md"]
    error, read = behind["read"]
    assert not error and read["stale"] is True and read["text"] == EDITED
    error, states = behind["index_status"]
    assert not error
    assert states["counts"] == {"deleted": 1, "edited": 1, "fresh": 1, "new": 1}
    assert [(f["path"], f["state"]) for f in states["files"]][:3] == [
        ("guides/lenses.md", "deleted"),
        ("notes/new.md", "new"),
        ("notes/stars.md", "edited"),
    ]
    error, status = behind["status"]
    assert not error and status["upkeep"] == "following"
    assert status["files"]["stale"] == 3 and status["stale"]["files"] == 3
    error, related = behind["related"]
    assert not error and related["stale"]["files"] == 3
    marked = {f["path"]: f.get("stale") for f in related["related"]}
    assert marked.get("notes/stars.md") is True
    error, text = behind["related of new"]
    assert error and text == (
        "notes/new.md is not in the index yet; the explorer that writes the index takes it in: "
        "ask again in a few seconds"
    )
    assert not caught_error
    assert caught_up["stale"] == {"files": 0}
    assert "notes/new.md" in hits(caught_up) and "guides/lenses.md" not in hits(caught_up)
    assert all("stale" not in hit for hit in caught_up["results"])


async def _equals(value, expected) -> bool:
    return await value == expected
