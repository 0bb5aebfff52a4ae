"""Themes: Textual's built-in themes, theme files (TOML), and the remembered choice.

A theme file is a small TOML document (see ``themes/README.md``)::

    name = "tern-dusk"
    dark = true
    primary = "#7aa2f7"
    background = "#1a1b26"

    [variables]
    "footer-key-foreground" = "#7aa2f7"

Theme files are read from the shipped ``themes`` folder and from ``<config dir>/themes``. The
shipped folder is ``themes/`` at the top of the repository (the design card's layout); a wheel
installs it as data files into ``<prefix>/share/explorer/themes`` (``[tool.setuptools.
data-files]``), where :func:`shipped_themes_dir` finds it when the package does not run from a
checkout. A file that cannot be read or validated is reported (the app shows a
notification) and left out; it never stops the app. The chosen theme is kept in
``<config dir>/tui.json``, a state file of explorer's (:mod:`explorer.core.state_files`): one
that cannot be read is set aside and the app says so.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tomllib
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from explorer.core.errors import ExplorerError
from explorer.core.state_files import (
    StateFolderUnsafe,
    StateRead,
    folder_problem,
    read_json_object,
    write_state,
)
from explorer.settings.locations import config_dir

DEFAULT_THEME = "textual-dark"
PREFERENCES_NAME = "tui.json"
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
"""Colour fields of a theme file; only ``primary`` is required."""
OTHER_KEYS = ("name", "dark", "luminosity_spread", "text_alpha", "variables")
SHIPPED_THEMES_FOLDER = "themes"
"""The shipped theme files: ``themes/*.toml`` in a checkout."""
INSTALLED_THEMES = Path("share", "explorer", "themes")
"""Where a wheel installs them, under an installation's data directory (``sys.prefix``)."""


class ThemeFileError(ExplorerError, ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass
class LoadedThemes:
    """The themes read from files, and one line per file that could not be used."""

    themes: list[Theme] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def shipped_themes_dir() -> Path:
    """The shipped themes: ``themes/`` beside the package in a checkout (an editable install,
    or ``PYTHONPATH``), else where the wheel installed them."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / SHIPPED_THEMES_FOLDER).is_dir():
        return checkout / SHIPPED_THEMES_FOLDER
    for data in _data_dirs():
        if (data / INSTALLED_THEMES).is_dir():
            return data / INSTALLED_THEMES
    return checkout / SHIPPED_THEMES_FOLDER  # none: nothing shipped to read


def _data_dirs() -> list[Path]:
    """The installations' data directories: this environment's, then the user's."""
    found = [Path(sysconfig.get_path("data")), Path(sys.prefix)]
    try:
        user_scheme = sysconfig.get_preferred_scheme("user")
        found.append(Path(sysconfig.get_path("data", user_scheme)))
    except (KeyError, ValueError):  # no user scheme here
        pass
    if base := os.environ.get("PYTHONUSERBASE"):
        found.append(Path(base))
    return list(dict.fromkeys(found))


def user_themes_dir() -> Path:
    """Where a user's own theme files live."""
    return config_dir() / "themes"


def theme_dirs() -> list[Traversable]:
    """Every folder theme files are read from, shipped first (a user file may override)."""
    return [shipped_themes_dir(), user_themes_dir()]


def load_theme_file(path: Traversable) -> Theme:
    """Read and validate one theme file; raises :class:`ThemeFileError`."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ThemeFileError(f"{path.name}: cannot read it ({error})") from error
    except tomllib.TOMLDecodeError as error:
        raise ThemeFileError(f"{path.name}: not valid TOML ({error})") from error
    unknown = sorted(set(data) - set(COLOR_KEYS) - set(OTHER_KEYS))
    if unknown:
        raise ThemeFileError(f"{path.name}: unknown keys {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{path.name}: 'name' must be a non-empty string")
    if "primary" not in data:
        raise ThemeFileError(f"{path.name}: 'primary' is required")
    colors = {}
    for key in COLOR_KEYS:
        if key in data:
            colors[key] = _color(path, key, data[key])
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{path.name}: 'dark' must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ThemeFileError(f"{path.name}: [variables] must map names to strings")
    numbers = {}
    for key in ("luminosity_spread", "text_alpha"):
        if key in data:
            value = data[key]
            if not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ThemeFileError(f"{path.name}: '{key}' must be a number from 0 to 1")
            numbers[key] = float(value)
    # The keys of ``colors`` and ``numbers`` are Theme's own parameters, checked above.
    return Theme(
        name=name.strip(),
        dark=dark,
        variables=dict(variables),
        **colors,  # type: ignore[arg-type]
        **numbers,  # type: ignore[arg-type]
    )


def _color(path: Traversable, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"{path.name}: '{key}' must be a colour string like \"#1e90ff\"")
    try:
        Color.parse(value)
    except ColorParseError as error:
        raise ThemeFileError(f"{path.name}: '{key}' is not a colour: {value!r}") from error
    return value


def load_themes(directories: list[Traversable] | None = None) -> LoadedThemes:
    """Every valid theme in ``*.toml`` files of ``directories`` (default :func:`theme_dirs`).

    A directory is a :class:`~pathlib.Path` or a package resource folder (a ``Traversable``).
    """
    loaded = LoadedThemes()
    for directory in directories if directories is not None else theme_dirs():
        if not directory.is_dir():
            continue
        files_here = (entry for entry in directory.iterdir() if entry.name.endswith(".toml"))
        for path in sorted(files_here, key=lambda entry: entry.name):
            try:
                loaded.themes.append(load_theme_file(path))
            except ThemeFileError as error:
                loaded.problems.append(str(error))
    return loaded


# -- the remembered choice --------------------------------------------------------------------
def preferences_path() -> Path:
    return config_dir() / PREFERENCES_NAME


def read_preferences() -> StateRead:
    """The saved preferences; a file that cannot be read is set aside, and the note says so."""
    return read_json_object(preferences_path(), "the TUI's preferences file")


def load_preferences() -> dict[str, object]:
    """The saved preferences, or an empty dict when there are none (or they are unreadable)."""
    return read_preferences().data or {}


def preferences_problem() -> str:
    """Why preferences are not saved (other users can write their folder), or ``""``."""
    problem = folder_problem(config_dir(), config_dir())
    return f"preferences are not saved: {problem}" if problem else ""


def save_preference(key: str, value: object) -> None:
    """Remember one preference (best effort: a read-only config dir is not an error, and a
    folder other users can write is not written)."""
    data = load_preferences()
    data[key] = value
    try:
        write_state(preferences_path(), json.dumps(data, indent=2) + "\n", config_dir())
    except (OSError, StateFolderUnsafe):
        pass
