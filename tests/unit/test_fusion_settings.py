"""The fusion of hybrid search is chosen in the user's config file, and checked there."""

from __future__ import annotations

import pytest

from explorer.settings.config import Settings
from explorer.settings.user_config import ConfigError, load_user_config


def write_config(tmp_path, monkeypatch, text: str) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "explorer").mkdir(exist_ok=True)
    (tmp_path / "explorer" / "config.toml").write_text(text, encoding="utf-8")


def test_rrf_and_its_k_come_from_the_config_file(tmp_path, monkeypatch):
    monkeypatch.delenv("EXPLORER_CONFIG_DIR", raising=False)
    write_config(tmp_path, monkeypatch, 'fusion = "rrf"\nrrf_k = 20\n')
    settings = Settings.for_root(tmp_path, tmp_path / "index")
    assert (settings.fusion, settings.rrf_k) == ("rrf", 20)


def test_defaults_without_a_config_file(tmp_path, monkeypatch):
    monkeypatch.delenv("EXPLORER_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    settings = Settings.for_root(tmp_path, tmp_path / "index")
    assert settings.fusion == "calibrated"


def test_an_unknown_fusion_is_a_one_line_error_naming_the_choices(tmp_path, monkeypatch):
    monkeypatch.delenv("EXPLORER_CONFIG_DIR", raising=False)
    write_config(tmp_path, monkeypatch, 'fusion = "average"\n')
    with pytest.raises(ConfigError, match="fusion must be one of calibrated, convex, rrf"):
        load_user_config()
