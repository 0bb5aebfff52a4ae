"""The config file is one typed model: every key declared once, checked, and carried to Settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from explorer.core.models import EmbeddingPrecision, FusionKind
from explorer.core.settings import knobs
from explorer.settings.config import Settings
from explorer.settings.locations import config_dir, data_dir
from explorer.settings.user_config import ConfigError, UserConfig, load_user_config

FULL = """
chroma_url = "http://chroma.example:8000"
model = "some/model"
exclude = ["drafts/"]
extensions = [".MD", "txt"]
max_file_bytes = 1000
allow_links_outside = []
embedding_precision = "fp32"
embed_threads = 1
link_base = "/docs/"
fusion = "convex"
semantic_weight = 0.7
keyword_confidence = 2
lookup_weight = 0.1
file_weight = 0.5
file_keyword_weight = 0.25
rrf_k = 30
limit = 4
min_score = 0.5
"""


def write(folder, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_declared_setting_is_a_field_of_settings_with_its_default_in_bounds() -> None:
    declared = knobs(Settings)
    defaults = Settings(root=Path("/r"), index_dir=Path("/i"))
    names = {field.name for field in dataclasses.fields(Settings)}
    assert (
        {"semantic_weight", "rrf_k", "default_limit", "fusion"}
        <= {knob.name for knob in declared.values()}
        <= names
    )
    assert declared["limit"].name == "default_limit" and declared["limit"].help
    for knob in declared.values():
        assert getattr(defaults, knob.name) == knob.default
        assert knob.bounds is None or knob.bounds.holds(knob.default), knob


def test_every_key_reaches_the_settings(isolated_locations, tmp_path) -> None:
    write(isolated_locations / "config", FULL)
    keys = {field.name for field in dataclasses.fields(UserConfig)} - {"knobs"} | set(
        knobs(Settings)
    )
    assert {line.split(" = ")[0] for line in FULL.strip().splitlines()} == keys
    settings = Settings.for_root(tmp_path)
    assert settings.chroma_url == "http://chroma.example:8000"
    assert settings.model == "some/model"
    assert settings.exclude == ("drafts/",)
    assert settings.extensions == frozenset({"md", "txt"})
    assert settings.max_file_bytes == 1000 and settings.allow_outside_links is False
    assert settings.embedding_precision is EmbeddingPrecision.FP32
    assert settings.embed_threads == 1
    assert settings.link_base == "/docs/"
    assert settings.fusion is FusionKind.CONVEX
    assert (settings.semantic_weight, settings.lookup_weight) == (0.7, 0.1)
    assert (settings.file_weight, settings.file_keyword_weight) == (0.5, 0.25)
    assert settings.keyword_confidence == 2.0 and isinstance(settings.keyword_confidence, float)
    assert (settings.rrf_k, settings.default_limit, settings.default_min_score) == (30, 4, 0.5)


def test_flags_and_environment_win_over_the_file(isolated_locations, tmp_path, monkeypatch):
    write(isolated_locations / "config", 'model = "from/file"\nchroma_url = "http://file:1"\n')
    monkeypatch.setenv("EXPLORER_MODEL", "from/env")
    settings = Settings.for_root(tmp_path, chroma_url="http://flag:2")
    assert (settings.model, settings.chroma_url) == ("from/env", "http://flag:2")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('exclude = ["a", 3]', "exclude must be a list of strings"),
        ("fusion = 3", "fusion must be a str, not 3"),
        ("max_file_bytes = true", "max_file_bytes must be a int, not True"),
        ("keyword_confidence = 11", "keyword_confidence must be between 0 and 10, not 11.0"),
        ("limit = [", "not valid TOML"),
        ('embedding_precision = "fp16"', "must be one of auto, fp32, bf16, not 'fp16'"),
        ("link_base = 3", "link_base must be a str, not 3"),
        ('link_base = { "~/site" = 3 }', "link_base must map each root to a string"),
        ('link_base = "../../etc/"', "link_base '../../etc/' holds a '.' or '..' part"),
        ('link_base = { "~/site" = "/docs/%2e%2e/" }', "link_base '/docs/%2e%2e/' holds a '.'"),
        ('link_base = "https://example.org/docs/"', "is a URL with a scheme or host"),
        ('link_base = "//example.org/docs/"', "is a URL with a scheme or host"),
        ('link_base = "/docs/?page=1"', "holds a query or a fragment"),
        ('link_base = "C:\\\\docs"', "holds a control character or a backslash"),
        ('link_base = "/do\\tcs/"', "holds a control character or a backslash"),
        ('link_base = ""', "is empty"),
    ],
)
def test_a_bad_file_is_one_error_naming_it(tmp_path, text: str, message: str) -> None:
    path = write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as raised:
        load_user_config(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_link_base_for_every_root_or_per_root(isolated_locations, tmp_path) -> None:
    site, other = tmp_path / "site" / "content", tmp_path / "other"
    table = f'link_base = {{ "{site}" = "/docs/" }}\n'
    write(isolated_locations / "config", table)
    assert Settings.for_root(site).link_base == "/docs/"
    assert Settings.for_root(other).link_base is None
    write(isolated_locations / "config", 'link_base = "/handbook/"\n')
    assert Settings.for_root(other).link_base == "/handbook/"
    for accepted in ("/", "docs", "/docs", "/my%20docs/", "/文档/"):
        write(isolated_locations / "config", f'link_base = "{accepted}"\n')
        assert Settings.for_root(other).link_base == accepted


def test_no_file_is_no_setting(tmp_path) -> None:
    assert load_user_config(tmp_path / "missing.toml") == UserConfig()


def test_locations_follow_xdg_and_ignore_a_relative_base(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("EXPLORER_DATA_DIR")
    monkeypatch.delenv("EXPLORER_CONFIG_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert (data_dir(), config_dir()) == (tmp_path / "data/explorer", tmp_path / "config/explorer")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # the XDG spec says: ignore it
    assert data_dir() == tmp_path / "home/.local/share/explorer"
