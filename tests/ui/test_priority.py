"""Pilot tests: the file the user opens is embedded first, and the related sidebar says so and
fills in by itself; a query's results gain their semantic scores while the rest still waits."""

from __future__ import annotations

import threading

import pytest

from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.related import NO_NEIGHBOURS, PENDING_FILE, PENDING_NEIGHBOURS
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.ui.conftest import type_query, wait_for

SIZE = (120, 40)
pytestmark = pytest.mark.anyio

TARGET = "zoo/walrus-care.md"
NEIGHBOURS = {"zoo/walrus-diet.md", "zoo/walrus-tusks.md"}


def corpus() -> dict[str, str]:
    files = {
        TARGET: "# Walrus care\n\nA walrus needs cold water, ice floes and clams.\n",
        "zoo/walrus-diet.md": "# Walrus diet\n\nClams and cold water fish feed a walrus.\n",
        "zoo/walrus-tusks.md": "# Walrus tusks\n\nA walrus hauls out on ice floes by its tusks.\n",
    }
    for n in range(30):
        files[f"misc/note{n:02d}.md"] = (
            f"# Note {n}\n\nThe meeting about the yearly budget, item {n}, moved to the large"
            " room on the third floor after lunch; bring the printed minutes.\n"
        )  # longer than the walrus files: a longest-first order alone would take these first
    return files


class PacedEmbedder(FakeEmbedder):
    """A model the test paces: it loads when ``loaded`` is set and embeds one model batch per
    release of ``turns``."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = threading.Event()
        self.turns = threading.Semaphore(0)

    def load_document_model(self, chunks: int | None = None) -> None:
        self.loaded.wait(30)

    def embed_documents(self, texts):
        self.turns.acquire(timeout=30)
        return super().embed_documents(texts)

    def release(self) -> None:
        self.loaded.set()
        self.turns.release(10_000)


def related_text(screen) -> str:
    option = screen.related.get_option_at_index(0) if screen.related.option_count else None
    return str(getattr(option.prompt, "plain", option.prompt)) if option else ""


async def test_the_open_file_is_embedded_first_and_its_related_list_fills_in(tmp_path, app_for):
    docs = write_files(tmp_path / "docs", corpus())
    embedder = PacedEmbedder()
    app = app_for((docs, tmp_path / "index"), embedder=embedder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: len(screen.file_tree.paths) == 33, what="the tree")
            await wait_for(pilot, lambda: screen.state.semantic_ready, what="the query model")
            # Open it the way a user does, with ctrl+p, before any vector exists.
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="quick open")
            await pilot.press(*"walrus-care")
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.current_path == TARGET, what="the open file")
            await wait_for(
                pilot, lambda: related_text(screen) == PENDING_FILE, what="the pending note"
            )
            # The model comes; one batch later the open file has its vector, nothing else.
            embedder.loaded.set()
            embedder.turns.release(1)
            await wait_for(
                pilot, lambda: related_text(screen) == PENDING_NEIGHBOURS, what="neighbours note"
            )
            assert screen.file_tree.state_of(TARGET) == "fresh"
            # One more batch: its keyword neighbours come next, and the list fills in by itself
            # while most of the folder still waits for its vectors.
            embedder.turns.release(1)
            await wait_for(pilot, lambda: screen.related.state == "ready", what="related files")
            shown = {item.path for item in screen.related.items}
            assert shown >= NEIGHBOURS
            assert [item.path for item in screen.related.items][0] in NEIGHBOURS
            pending = [
                p for p in screen.file_tree.paths if screen.file_tree.state_of(p) == "pending"
            ]
            assert len(pending) >= 10, "the whole folder was embedded: nothing was put first"
            embedder.release()  # before the app stops: its writer must not wait on the test
    finally:
        embedder.release()


async def test_a_file_without_neighbours_says_none_are_coming_once_the_folder_is_embedded(
    tmp_path, app_for
):
    # A folder of one file: it has no neighbour, whatever is embedded. While the folder is
    # embedded the sidebar may say neighbours are coming; once it is, it must not.
    docs = write_files(tmp_path / "docs", {TARGET: corpus()[TARGET]})
    embedder = PacedEmbedder()
    app = app_for((docs, tmp_path / "index"), embedder=embedder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.file_tree.paths == [TARGET], what="the tree")
            await wait_for(pilot, lambda: screen.state.semantic_ready, what="the query model")
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="quick open")
            await pilot.press(*"walrus-care", "enter")
            await wait_for(pilot, lambda: screen.current_path == TARGET, what="the open file")
            await wait_for(
                pilot, lambda: related_text(screen) == PENDING_FILE, what="the pending note"
            )
            embedder.release()  # the whole folder is embedded now: no vector is coming
            await wait_for(
                pilot, lambda: related_text(screen) == NO_NEIGHBOURS, what="no neighbours"
            )
            assert screen.file_tree.state_of(TARGET) == "fresh"
            # Opened again in an embedded folder, it says so at once.
            screen.load_related(TARGET)
            await pilot.pause(0.5)
            assert related_text(screen) == NO_NEIGHBOURS
    finally:
        embedder.release()


async def test_results_gain_semantic_scores_in_place_while_the_rest_waits(tmp_path, app_for):
    docs = write_files(tmp_path / "docs", corpus())
    embedder = PacedEmbedder()
    app = app_for((docs, tmp_path / "index"), embedder=embedder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: len(screen.file_tree.paths) == 33, what="the tree")
            await wait_for(pilot, lambda: screen.state.semantic_ready, what="the query model")
            await type_query(pilot, "walrus ice")
            assert screen.results.shown_mode == "keyword"  # no vector yet anywhere
            hits = [hit.path for hit in screen.results.hits]
            assert set(hits) == {TARGET, *NEIGHBOURS}
            screen.results.focus()
            await pilot.press("down")
            highlighted = screen.results.hits[screen.results.highlighted].path
            embedder.loaded.set()
            embedder.turns.release(1)  # one batch: the results' files come first
            await wait_for(
                pilot, lambda: screen.results.shown_mode == "hybrid", what="semantic scores"
            )
            hits = screen.results.hits
            assert all(p.vector_rank is not None for hit in hits for p in hit.passages[:1])
            assert hits[screen.results.highlighted].path == highlighted  # the highlight stayed
            pending = [
                p for p in screen.file_tree.paths if screen.file_tree.state_of(p) == "pending"
            ]
            assert len(pending) >= 10
            embedder.release()
    finally:
        embedder.release()


async def test_the_screen_tells_the_live_index_what_the_user_looks_at(sample_copy, app_for):
    from tests.ui.conftest import wait_settled

    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        priority = screen.live.priority
        typed: list[float] = []
        note_typing = priority.note_typing
        priority.note_typing = lambda: (typed.append(1), note_typing())  # type: ignore[method-assign]
        await type_query(pilot, "backup")
        # Every key of the query told the writer the user types: no model batch starts then.
        assert len(typed) >= len("backup")
        hits = tuple(hit.path for hit in screen.results.hits)
        assert hits
        await wait_for(pilot, lambda: priority.focus.results == hits, 5, "the results' hint")
        screen.open_file("guides/getting-started.md")
        assert priority.focus.open_file == "guides/getting-started.md"
        # Browsing the tree: the folder under the cursor is the hint, not files opened elsewhere.
        screen.file_tree.focus()
        await pilot.press("home")
        await wait_for(pilot, lambda: priority.focus.folder is not None, what="a folder hint")
        node = screen.file_tree.cursor_node
        entry = node.data
        expected = entry.path.rstrip("/") if entry.is_dir else entry.path.rpartition("/")[0]
        assert priority.focus.folder == expected
        assert priority.focus.open_file == "guides/getting-started.md"
