"""The CLI over several folders (issue 25): `explorer index|search|status|related A B`, the
config's collections, default set and scopes, each result naming its collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.retrieval.collections import Collection, Collections
from explorer.core.retrieval.search import SearchRequest
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.unit.test_collections import GARDEN_WORDS, SERVER_WORDS, folder_files

SERVERS = folder_files(SERVER_WORDS, 30, "compost", seed=1)
GARDEN = folder_files(GARDEN_WORDS, 15, "proxy", seed=2)
SERVERS["notes/comet.md"] = "# Comet\n\nA comet tail of ice and dust near the sun.\n"
GARDEN["notes/comet-watch.md"] = "# Comet watch\n\nA comet tail seen over the garden.\n"


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def ok(result):
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("explorer: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def fake_embedder(model: str, precision: object) -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two folders and one holding both, each indexed by `explorer index` (the two at once)."""
    base = tmp_path_factory.mktemp("cli-collections")
    servers = write_files(base / "one" / "servers", SERVERS)
    garden = write_files(base / "one" / "garden", GARDEN)
    both = {f"servers/{p}": t for p, t in SERVERS.items()}
    both |= {f"garden/{p}": t for p, t in GARDEN.items()}
    union = write_files(base / "union", both)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_DATA_DIR", str(base / "data"))
        patch.setattr("explorer.core.store.index.load_embedder", fake_embedder)
        done = ok(invoke("index", servers, garden))
        ok(invoke("index", union))
    return base, servers, garden, union, done


@pytest.fixture(autouse=True)
def shared_data(corpus, monkeypatch):
    """Every test reads the module's indexes (its config dir stays its own)."""
    monkeypatch.setenv("EXPLORER_DATA_DIR", str(corpus[0] / "data"))
    monkeypatch.setattr("explorer.core.store.index.load_embedder", fake_embedder)


def write_config(text: str) -> None:
    from explorer.settings.user_config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def search_json(*args: object) -> dict:
    return json.loads(ok(invoke("search", *args, "--json")).stdout)


def test_index_of_two_folders_indexes_each(corpus) -> None:
    _base, servers, garden, _union, done = corpus
    lines = done.stdout.splitlines()
    assert "collection  servers" in lines and "collection  garden" in lines
    assert any(line.startswith(f"{servers}: {len(SERVERS)} added") for line in lines)
    assert any(line.startswith(f"{garden}: {len(GARDEN)} added") for line in lines)


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("query", ["proxy", "compost proxy", "comet tail", "read me notes"])
def test_search_over_two_folders_ranks_as_one_folder_holding_both(corpus, query, mode) -> None:
    _base, servers, garden, union, _done = corpus
    args = ("--mode", mode, "--limit", 15, "--per-file", 2)
    together = search_json(query, servers, garden, *args)
    one = search_json(query, union, *args)
    assert together["results"], together
    assert [(f"{r['collection']}/{r['path']}", r["score"]) for r in together["results"]] == [
        (r["path"], r["score"]) for r in one["results"]
    ]
    assert [[p["score"] for p in r["passages"]] for r in together["results"]] == [
        [p["score"] for p in r["passages"]] for r in one["results"]
    ]


def test_search_answers_as_the_core_does(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    found = search_json("garden proxy cache", servers, garden, "--limit", 20)
    indexes = [Index.open_existing(Settings.for_root(folder, None)) for folder in (servers, garden)]
    shelf = Collections(
        [Collection(f.name, i) for f, i in zip((servers, garden), indexes, strict=True)]
    )
    try:
        core = shelf.search(SearchRequest("garden proxy cache", limit=20))
    finally:
        shelf.close()
    assert [(r["collection"], r["path"], r["score"]) for r in found["results"]] == [
        (hit.collection, hit.path, hit.score) for hit in core.results
    ]


def test_text_and_paths_name_the_collection(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    text = ok(invoke("search", "comet tail", servers, garden)).stdout
    assert " 1. [" in text
    assert "[servers] notes/comet.md" in text and "[garden] notes/comet-watch.md" in text
    paths = ok(invoke("search", "comet tail", servers, garden, "--format", "paths")).stdout
    files = [line.split("\t")[0] for line in paths.splitlines()]
    assert str(servers / "notes/comet.md") in files
    assert str(garden / "notes/comet-watch.md") in files
    assert all(Path(name).is_file() for name in files)


def test_one_folder_names_no_collection(corpus) -> None:
    _base, servers, _garden, _union, _done = corpus
    found = search_json("proxy", servers)
    assert found["results"] and all("collection" not in r for r in found["results"])
    text = ok(invoke("search", "proxy", servers)).stdout
    assert "[servers]" not in text


def test_collection_option_and_word_keep_one(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    both = search_json("proxy", servers, garden, "--limit", 50)
    assert {r["collection"] for r in both["results"]} == {"servers", "garden"}
    only = search_json("proxy", servers, garden, "--limit", 50, "--collection", "garden")
    assert only["results"] and {r["collection"] for r in only["results"]} == {"garden"}
    word = search_json("proxy collection:garden", servers, garden, "--limit", 50)
    assert word["results"] == only["results"]
    assert all((garden / r["path"]).is_file() for r in only["results"])


def test_unknown_collection_and_scope_are_one_line_errors(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    one_line_error(
        invoke("search", "proxy", servers, garden, "--collection", "nope"), "nope", "servers"
    )
    one_line_error(invoke("search", "proxy", servers, garden, "--scope", "nope"), "no scope")
    one_line_error(invoke("search", "proxy", "--collection", "nope"), "no collection 'nope'")


def test_several_folders_refuse_one_index_dir(corpus, tmp_path) -> None:
    _base, servers, garden, _union, _done = corpus
    for command in (("search", "proxy"), ("status",), ("index",)):
        result = invoke(*command, servers, garden, "--index-dir", tmp_path / "index")
        one_line_error(result, "--index-dir")


def test_a_folder_that_is_not_one_is_refused(corpus, tmp_path) -> None:
    _base, servers, _garden, _union, _done = corpus
    one_line_error(invoke("search", "proxy", servers, tmp_path / "gone"), "no such folder")
    one_line_error(invoke("status", servers, tmp_path / "gone"), "no such folder")


def test_a_scope_from_the_config_file(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    write_config(
        '[scopes.code]\nextensions = ["py"]\ndescription = "the scripts"\n'
        '[scopes.garden-notes]\npaths = ["notes/"]\ncollections = ["garden"]\n'
    )
    code = search_json("proxy compost", servers, garden, "--scope", "code")
    assert {(r["collection"], r["path"]) for r in code["results"]} == {
        ("servers", "tools/run.py"),
        ("garden", "tools/run.py"),
    }
    notes = search_json("proxy scope:garden-notes", servers, garden, "--limit", 50)
    assert notes["results"]
    assert all(
        r["collection"] == "garden" and r["path"].startswith("notes/") for r in notes["results"]
    )
    # a scope works on one folder too: no collection to name then
    one = search_json("compost", servers, "--scope", "code")
    assert [r["path"] for r in one["results"]] == ["tools/run.py"]
    assert "collection" not in one["results"][0]


def test_no_folder_searches_the_default_collections(corpus, tmp_path, monkeypatch) -> None:
    _base, servers, garden, _union, _done = corpus
    write_config(
        f'default_collections = ["srv", "gdn"]\n[collections.srv]\npath = "{servers}"\n'
        f'[collections.gdn]\npath = "{garden}"\n'
    )
    monkeypatch.chdir(tmp_path)
    found = search_json("comet tail")
    assert {r["collection"] for r in found["results"]} == {"srv", "gdn"}
    named = search_json("comet tail", servers, garden)
    assert [r["collection"] for r in named["results"]] == [
        r["collection"] for r in found["results"]
    ]
    one = search_json("comet tail", "--collection", "gdn")
    assert one["results"] and all("collection" not in r for r in one["results"])
    assert [r["path"] for r in one["results"]] == ["notes/comet-watch.md"] + [
        r["path"] for r in one["results"][1:]
    ]
    status = json.loads(ok(invoke("status", "--json")).stdout)
    assert [s["collection"] for s in status["collections"]] == ["srv", "gdn"]


def test_status_of_two_folders(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    data = json.loads(ok(invoke("status", servers, garden, "--json")).stdout)
    assert [(s["collection"], s["root"]) for s in data["collections"]] == [
        ("servers", str(servers)),
        ("garden", str(garden)),
    ]
    assert [s["files"]["indexed"] for s in data["collections"]] == [len(SERVERS), len(GARDEN)]
    text = ok(invoke("status", servers, garden)).stdout
    blocks = text.split("\n\n")
    assert [block.splitlines()[0] for block in blocks] == [
        "collection  servers",
        "collection  garden",
    ]
    assert f"root        {servers}" in blocks[0] and f"root        {garden}" in blocks[1]
    single = json.loads(ok(invoke("status", servers, "--json")).stdout)
    assert "collection" not in single and single["root"] == str(servers)


def test_related_crosses_the_folders_given(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    source = servers / "notes/comet.md"
    data = json.loads(ok(invoke("related", source, garden, "--json", "--limit", 5)).stdout)
    assert data["collection"] == "servers" and data["path"] == "notes/comet.md"
    places = [(r["collection"], r["path"]) for r in data["related"]]
    assert ("garden", "notes/comet-watch.md") in places
    assert ("servers", "notes/comet.md") not in places
    text = ok(invoke("related", source, garden, "--limit", 5)).stdout
    assert text.startswith("files related to [servers] notes/comet.md:")
    assert "[garden] notes/comet-watch.md" in text
    # a file of the second folder, named by its real path
    other = garden / "notes/comet-watch.md"
    back = json.loads(ok(invoke("related", other, servers, "--json")).stdout)
    assert back["collection"] == "garden"
    assert ("servers", "notes/comet.md") in [(r["collection"], r["path"]) for r in back["related"]]
    alone = json.loads(ok(invoke("related", source, "--json")).stdout)
    assert "collection" not in alone and all("collection" not in r for r in alone["related"])


def test_links_of_a_file_of_either_folder(corpus) -> None:
    _base, servers, garden, _union, _done = corpus
    for folder in (servers, garden):
        data = json.loads(ok(invoke("links", folder / "README.md", "--json")).stdout)
        assert data["path"] == "README.md"


def test_the_resident_reader_serves_one_folder_only(corpus) -> None:
    from explorer.cli.resident_client import resolve

    _base, servers, garden, _union, _done = corpus
    one = resolve(["search", "proxy", str(servers)], main)
    assert one is not None and one.request.settings.root == servers
    assert resolve(["status", str(servers)], main) is not None
    for argv in (
        ["search", "proxy", str(servers), str(garden)],
        ["search", "proxy", str(servers), "--scope", "code"],
        ["search", "proxy collection:servers", str(servers)],
        ["status", str(servers), str(garden)],
        ["related", str(servers / "README.md"), str(garden)],
    ):
        assert resolve(argv, main) is None, argv


def test_the_tui_takes_several_folders_and_checks_each(corpus, tmp_path, monkeypatch) -> None:
    """`explorer A B` opens one window on both (here no terminal, so it stops there, after
    checking the folders); a folder that is none is refused first."""
    _base, servers, garden, _union, _done = corpus
    one_line_error(invoke(servers, tmp_path / "gone"), "no such folder")
    one_line_error(invoke(servers, garden), "needs a terminal")
    opened = []
    monkeypatch.setattr("explorer.cli.entry._is_terminal", lambda _stream: True)
    monkeypatch.setattr(
        "explorer.tui.app.run_window", lambda folders, scopes: opened.append(folders)
    )
    ok(invoke(servers, garden))
    assert [(f.name, f.settings.root) for f in opened[0]] == [
        ("servers", servers),
        ("garden", garden),
    ]


def test_the_tui_with_no_folder_opens_the_default_collections(corpus, monkeypatch) -> None:
    _base, servers, garden, _union, _done = corpus
    write_config(
        f'default_collections = ["garden", "servers"]\n'
        f'[collections.garden]\npath = "{garden}"\n[collections.servers]\npath = "{servers}"\n'
        '[scopes.code]\nextensions = ["py"]\n'
    )
    opened = []
    monkeypatch.setattr("explorer.cli.entry._is_terminal", lambda _stream: True)
    monkeypatch.setattr(
        "explorer.tui.app.run_window", lambda folders, scopes: opened.append((folders, scopes))
    )
    ok(invoke())
    folders, scopes = opened[0]
    assert [f.name for f in folders] == ["garden", "servers"]
    assert [scope.name for scope in scopes] == ["code"]


# -- issue 29: nested folders, names, missing folders, scopes, NAME=PATH ----------------------
def test_a_folder_inside_another_is_refused_by_every_command(corpus, monkeypatch) -> None:
    """`search Q base base/guides` listed each file of base/guides twice: a folder inside
    another open folder is refused in one line, by every command that takes folders."""
    _base, _servers, _garden, union, _done = corpus
    inner = union / "servers"
    served = []
    monkeypatch.setattr("explorer.cli.commands.run_mcp_folders", served.append)
    monkeypatch.setattr("explorer.cli.entry._is_terminal", lambda _stream: True)
    monkeypatch.setattr("explorer.tui.app.run_window", lambda *args: served.append(args))
    for command in (
        ("search", "proxy", union, inner),
        ("search", "proxy", inner, union),
        ("status", union, inner),
        ("index", union, inner),
        ("mcp", union, inner),
        (union, inner),
        ("related", union / "garden/notes/comet-watch.md", inner),
    ):
        one_line_error(invoke(*command), f"{inner} (servers) is inside {union} (union)")
    assert served == []
    write_config(
        f'default_collections = ["all", "srv"]\n[collections.all]\npath = "{union}"\n'
        f'[collections.srv]\npath = "{inner}"\n'
    )
    one_line_error(invoke("search", "proxy"), "is inside", "open one of the two")


def test_a_nested_collection_is_refused_when_added(corpus, tmp_path) -> None:
    """The same rule for the core's collections (the MCP server, the TUI's Add a folder)."""
    from explorer.core.retrieval.scopes import CollectionsError
    from explorer.settings.config import NamedFolder
    from explorer.tui.workspace import Workspace

    _base, _servers, _garden, union, _done = corpus
    outer = Index.open_existing(Settings.for_root(union, None))
    shelf = Collections([Collection("union", outer)])
    ok(invoke("index", union / "servers", "--index-dir", tmp_path / "inner"))
    inner = Index.open_existing(Settings.for_root(union / "servers", tmp_path / "inner"))
    try:
        with pytest.raises(CollectionsError, match="is inside"):
            shelf.add(Collection("inner", inner))
    finally:
        shelf.close()
        inner.close()
    window = Workspace([NamedFolder("union", Settings.for_root(union, None))])
    with pytest.raises(CollectionsError, match="is inside"):
        window.folder_at(union / "servers")


@pytest.mark.parametrize("name", [".", "..", "..."])
def test_names_of_dots_alone_are_refused_everywhere(corpus, name) -> None:
    _base, servers, garden, _union, _done = corpus
    write_config(f'[collections."{name}"]\npath = "{servers}"\n')
    one_line_error(invoke("search", "proxy", servers, garden), f"'{name}'", "not dots alone")
    write_config(f'[scopes."{name}"]\nextensions = ["md"]\n')
    one_line_error(invoke("search", "proxy", servers, garden), f"'{name}'", "not dots alone")
    write_config(f'[scopes.s]\ncollections = ["{name}"]\n')
    one_line_error(invoke("search", "proxy", servers, garden), f"'{name}'", "not dots alone")
    write_config("")
    one_line_error(invoke("search", "proxy", f"{name}={servers}", garden), "not dots alone")
    one_line_error(invoke("search", f"proxy collection:{name}", servers, garden), f"'{name}'")


def test_a_folder_named_with_dots_alone_gets_a_name(tmp_path) -> None:
    from explorer.core.retrieval.collections import distinct_names, folder_name

    assert folder_name(tmp_path / "...") == "root"
    assert distinct_names([tmp_path / "...", tmp_path / "a"]) == ["root", "a"]


def test_a_collection_whose_folder_is_gone_says_so(corpus, tmp_path, monkeypatch) -> None:
    _base, servers, _garden, _union, _done = corpus
    gone = tmp_path / "gone"
    write_config(
        f'default_collections = ["gone", "srv"]\n[collections.gone]\npath = "{gone}"\n'
        f'[collections.srv]\npath = "{servers}"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("explorer.cli.entry._is_terminal", lambda _stream: True)
    for command in (
        ("search", "proxy"),
        ("search", "proxy", "--collection", "gone"),
        ("status",),
        ("index",),
        ("mcp",),
        (),
    ):
        result = invoke(*command)
        one_line_error(result, "collection 'gone'", f"its folder {gone} does not exist")
        assert "explorer index" not in result.stderr


def test_a_scope_naming_an_unknown_collection_is_refused(corpus, tmp_path) -> None:
    _base, servers, garden, _union, _done = corpus
    write_config(
        f'[collections.srv]\npath = "{servers}"\n'
        '[scopes.s]\npaths = ["notes/"]\ncollections = ["srv", "nope"]\n'
    )
    for command in (("search", "proxy", servers), ("status", servers, garden), ("index",)):
        one_line_error(invoke(*command), "scopes.s", "'nope'", "collections: srv")
    # a file that names no collection leaves a scope's names to the folders given: a scope
    # that covers none of those searched says so, rather than "no indexed file matches"
    write_config('[scopes.s]\npaths = ["notes/"]\ncollections = ["nope"]\n')
    one_line_error(
        invoke("search", "proxy", servers, garden, "--scope", "s"),
        "scope 's' covers nope",
        "servers, garden",
    )
    one_line_error(invoke("search", "proxy", servers, "--scope", "s"), "scope 's' covers nope")


def test_name_equals_path_names_the_collection(corpus, tmp_path, monkeypatch) -> None:
    base, servers, garden, _union, _done = corpus
    found = search_json("comet tail", f"srv={servers}", f"gdn={garden}")
    assert {r["collection"] for r in found["results"]} == {"srv", "gdn"}
    only = search_json("comet tail", f"srv={servers}", f"gdn={garden}", "--collection", "gdn")
    assert only["results"] and {r["collection"] for r in only["results"]} == {"gdn"}
    assert search_json("comet tail", f"srv={servers}")["results"]
    status = json.loads(ok(invoke("status", f"a={servers}", f"b={garden}", "--json")).stdout)
    assert [s["collection"] for s in status["collections"]] == ["a", "b"]
    assert json.loads(ok(invoke("status", f"a={servers}", "--json")).stdout)["root"] == str(servers)
    assert "collection  a" in ok(invoke("index", f"a={servers}", f"b={garden}")).stdout
    related = json.loads(
        ok(invoke("related", servers / "notes/comet.md", f"g={garden}", "--json")).stdout
    )
    assert ("g", "notes/comet-watch.md") in [
        (r["collection"], r["path"]) for r in related["related"]
    ]
    served, opened = [], []
    monkeypatch.setattr("explorer.cli.commands.run_mcp_folders", served.append)
    monkeypatch.setattr("explorer.cli.entry._is_terminal", lambda _stream: True)
    monkeypatch.setattr(
        "explorer.tui.app.run_window", lambda folders, scopes: opened.append(folders)
    )
    ok(invoke("mcp", f"docs={servers}"))
    assert [(f.name, f.settings.root) for f in served[0].folders] == [("docs", servers)]
    ok(invoke(f"s={servers}", f"g={garden}"))
    assert [f.name for f in opened[0]] == ["s", "g"]
    # names are checked as the config file's are; two folders of one name are refused
    one_line_error(invoke("search", "x", f"my notes={servers}"), "collection name 'my notes'")
    one_line_error(invoke("search", "x", f"a={servers}", f"a={garden}"), "two folders are named")


def test_a_folder_whose_name_holds_equals_is_that_folder(corpus, tmp_path, monkeypatch) -> None:
    odd = write_files(tmp_path / "k=v", {"note.md": "# Note\n\nA comet tail of dust.\n"})
    monkeypatch.chdir(tmp_path)
    ok(invoke("index", "k=v"))
    for given in (odd, "k=v"):
        found = json.loads(ok(invoke("search", "comet", given, "--json")).stdout)
        assert [r["path"] for r in found["results"]] == ["note.md"]
        assert "collection" not in found["results"][0]
