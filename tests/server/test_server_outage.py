"""A Chroma server that is down at start, or goes away and comes back while explorer runs."""

from __future__ import annotations

from click.testing import CliRunner

from explorer.cli import main
from explorer.core.live.writer import LiveIndex, VectorsStateEvent
from explorer.core.models import SearchMode
from explorer.core.retrieval.search import SearchRequest, VectorLeg, search
from explorer.settings.config import Settings
from tests.chroma_server import free_port
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder
from tests.server.test_shared_store import CORPUS

RECOVERY_SECONDS = 15.0


def assert_one_line(result, *fragments: str) -> None:
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("explorer: error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_every_command_says_in_one_line_that_the_server_is_down(tmp_path, fake_embedder):
    root = write_files(tmp_path / "docs", CORPUS)
    index_dir = tmp_path / "index"
    runner = CliRunner()
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    assert (
        runner.invoke(
            main,
            [
                "index",
                str(root),
                "--index-dir",
                str(index_dir),
                "--keywords-only",
                "--chroma-url",
                url,
            ],
        ).exit_code
        == 0
    )
    commands = [
        ["index", str(root)],
        ["search", "bookmark", str(root)],
        ["search", "bookmark", str(root), "--mode", "semantic"],
        ["related", str(root / "guides/install.md"), "--root", str(root)],
        ["open", str(root)],
    ]
    for command in commands:
        result = runner.invoke(main, [*command, "--index-dir", str(index_dir), "--chroma-url", url])
        assert_one_line(result, f"cannot reach the Chroma server at {url}", "chroma run")
    # Keyword search needs no vectors: it answers.
    result = runner.invoke(
        main,
        [
            "search",
            "bookmark",
            str(root),
            "--mode",
            "keyword",
            "--index-dir",
            str(index_dir),
            "--chroma-url",
            url,
        ],
    )
    assert result.exit_code == 0 and "guides/install.md" in result.stdout
    status = runner.invoke(main, ["status", "--index-dir", str(index_dir), "--chroma-url", url])
    assert status.exit_code == 0 and "unreachable" in status.stdout


def test_the_environment_and_the_config_file_choose_the_server(tmp_path, monkeypatch):
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text('chroma_url = "http://127.0.0.1:9"\n')
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(config_dir))
    assert Settings.for_root(tmp_path).chroma_url == "http://127.0.0.1:9"
    monkeypatch.setenv("EXPLORER_CHROMA_URL", "http://127.0.0.1:10")
    assert Settings.for_root(tmp_path).chroma_url == "http://127.0.0.1:10"
    assert Settings.for_root(tmp_path, chroma_url="http://h:11").chroma_url == "http://h:11"
    (config_dir / "config.toml").write_text("chroma_ulr = 'typo'\n")
    result = CliRunner().invoke(main, ["status", str(tmp_path)])
    assert_one_line(result, "config.toml", "unknown setting 'chroma_ulr'")


def test_live_index_keeps_keywords_going_while_the_server_is_away(tmp_path, own_server):
    root = write_files(tmp_path / "docs", CORPUS)
    settings = Settings.for_root(
        root, tmp_path / "index", model="fake-outage", chroma_url=own_server.url
    )
    events: list = []
    live = LiveIndex(settings, events.append, embedder=FakeEmbedder(), debounce_seconds=0.05)
    live.start()
    try:
        assert live.wait_idle(30)
        index = live.index

        def states() -> list[bool]:
            return [e.available for e in events if isinstance(e, VectorsStateEvent)]

        own_server.stop()
        (root / "notes/walrus.md").write_text("# Walrus\n\nThe walrus keeps its tusks clean.\n")
        assert wait_until(lambda: states() == [False], RECOVERY_SECONDS)
        assert not live.vectors_available
        hybrid = search(index, SearchRequest("walrus tusks"))
        assert [h.path for h in hybrid.results] == ["notes/walrus.md"]
        assert any("vectors unavailable" in note for note in hybrid.notes)
        assert hybrid.vector_leg == VectorLeg.UNAVAILABLE
        assert hybrid.answered_by == SearchMode.KEYWORD

        own_server.start()
        assert wait_until(lambda: states() == [False, True], RECOVERY_SECONDS)
        assert wait_until(lambda: index.status().stale == 0, RECOVERY_SECONDS)
        semantic = search(index, SearchRequest("walrus tusks", "semantic"))
        assert semantic.results[0].path == "notes/walrus.md"
        assert not any("unavailable" in note for note in semantic.notes)
        assert semantic.vector_leg == VectorLeg.ANSWERED
    finally:
        live.stop()
