"""Collections and scopes in the config file: checked like every other key, one line per error."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.settings.config import Settings, open_folders
from explorer.settings.user_config import (
    ConfigError,
    UserConfig,
    load_folders_config,
    load_user_config,
)

CONFIG = """
limit = 5
default_collections = ["notes", "docs"]

[collections.notes]
path = "{notes}"
exclude = [".trash/"]
extensions = [".MD"]

[collections.docs]
path = "{docs}"

[scopes.curator]
paths = [".claude/agents/", "hooks/**"]
extensions = ["yaml", "ts", "json"]
collections = ["docs"]
description = "agent definitions and hooks"
"""


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def configured(isolated_locations, tmp_path):
    notes, docs = tmp_path / "notes", tmp_path / "docs"
    for folder in (notes, docs, tmp_path / "elsewhere" / "docs", tmp_path / "work" / "notes"):
        folder.mkdir(parents=True)
    write(isolated_locations / "config", CONFIG.format(notes=notes, docs=docs))
    return notes, docs


def test_collections_and_scopes_are_read(configured) -> None:
    notes, docs = configured
    config = load_folders_config()
    assert [(c.name, c.path) for c in config.collections] == [("notes", notes), ("docs", docs)]
    assert config.collection("NOTES").exclude == (".trash/",)
    assert config.collection("notes").extensions == ("md",)
    assert config.collection("docs").exclude is None
    assert config.default_collections == ("notes", "docs")
    (scope,) = config.scopes
    assert (scope.name, scope.extensions, scope.collections) == (
        "curator",
        ("yaml", "ts", "json"),
        ("docs",),
    )
    assert scope.description == "agent definitions and hooks"
    assert scope.select([".claude/agents/a.yaml", "hooks/x/b.ts", "hooks/c.md", "src/d.ts"]) == {
        ".claude/agents/a.yaml",
        "hooks/x/b.ts",
    }
    # The flat settings read the same file and leave these tables alone.
    assert load_user_config().knobs == {"default_limit": 5}


def test_a_collection_keeps_its_own_rules_however_it_is_opened(configured) -> None:
    notes, docs = configured
    alone = Settings.for_root(notes)
    assert alone.exclude == (".trash/",) and alone.extensions == frozenset({"md"})
    assert Settings.for_root(docs).exclude == ()


def test_folders_on_the_command_line_are_named(configured, tmp_path) -> None:
    notes, _docs = configured
    opened = open_folders([notes, tmp_path / "elsewhere" / "docs", tmp_path / "work" / "notes"])
    # The config's name for its folder; the others after their directory, clear of the names
    # the config gives ("docs" and "notes" are taken).
    assert [f.name for f in opened.folders] == ["notes", "elsewhere-docs", "work-notes"]
    assert opened.folders[0].settings.exclude == (".trash/",)
    assert [scope.name for scope in opened.scopes] == ["curator"]


def test_no_folder_opens_the_default_set_or_the_collections_asked_for(configured) -> None:
    notes, docs = configured
    assert [(f.name, f.settings.root) for f in open_folders([]).folders] == [
        ("notes", notes),
        ("docs", docs),
    ]
    assert [f.name for f in open_folders([], collections=["docs"]).folders] == ["docs"]
    with pytest.raises(ConfigError, match=r"no collection 'nope' in the config file"):
        open_folders([], collections=["nope"])


def test_one_index_dir_names_one_folder(configured, tmp_path, monkeypatch) -> None:
    notes, docs = configured
    with pytest.raises(ConfigError, match="--index-dir names the index of one folder"):
        open_folders([notes, docs], index_dir=tmp_path / "index")
    assert open_folders([notes], index_dir=tmp_path / "index").folders[0].settings.index_dir == (
        tmp_path / "index"
    )
    monkeypatch.setenv("EXPLORER_INDEX_DIR", str(tmp_path / "index"))
    with pytest.raises(ConfigError, match="EXPLORER_INDEX_DIR names the index of one folder"):
        open_folders([notes, docs])


def test_without_a_config_file_nothing_is_named(isolated_locations, tmp_path) -> None:
    config = load_folders_config()
    assert config.collections == () and config.scopes == ()
    (tmp_path / "a").mkdir()
    assert [f.name for f in open_folders([tmp_path / "a"]).folders] == ["a"]
    assert open_folders([]).folders == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("collections = 3", "collections must be a table of [collections.NAME] tables"),
        ("[collections.notes]\nexclude = []", "collections.notes needs a path"),
        ("[collections.notes]\npath = 3", "collections.notes.path must be a folder, not 3"),
        ('[collections.notes]\npath = "/x"\nfoo = 1', "unknown key 'foo' in collections.notes"),
        ('[collections.notes]\npath = "/x"\nexclude = [1]', "notes.exclude must be a list of"),
        ('[collections."my notes"]\npath = "/x"', "collection name 'my notes': use letters"),
        (
            '[collections.a]\npath = "/x"\n[collections.b]\npath = "/x"',
            "/x is named by two collections",
        ),
        (
            'default_collections = ["b"]\n[collections.a]\npath = "/x"',
            "default_collections names 'b', which is no collection (collections: a)",
        ),
        ('default_collections = "a"', "default_collections must be a list of strings"),
        ('[scopes.s]\ndescription = "d"', "scopes.s needs paths, extensions or collections"),
        ('[scopes.s]\npaths = ["[z-a]"]', "scopes.s.paths: path filter '[z-a]': bad character"),
        ("[scopes.s]\nextensions = ['md']\ndescription = 2", "s.description must be a str"),
        ("[scopes.s]\nwhat = 1", "unknown key 'what' in scopes.s (known: paths, extensions"),
    ],
)
def test_a_bad_table_is_one_error_naming_the_file(tmp_path, text: str, message: str) -> None:
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as raised:
        load_folders_config(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_unknown_top_level_key_names_the_new_ones_too(tmp_path) -> None:
    path = write(tmp_path, "colections = 1\n")
    with pytest.raises(ConfigError, match="unknown setting 'colections'.*collections"):
        load_user_config(path)
    assert load_folders_config(tmp_path / "missing.toml").collections == ()
    assert load_user_config(write(tmp_path / "b", CONFIG.format(notes="/n", docs="/d"))) == (
        UserConfig(knobs={"default_limit": 5})
    )
