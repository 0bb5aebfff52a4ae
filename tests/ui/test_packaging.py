"""The wheel carries the shipped themes (from ``themes/`` at the top of the repository), and an
installed wheel finds them: built with ``pip wheel``, installed into a fresh environment, and
asked by the app's own loader there."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source") / "explorer"
    # A clean copy of what a checkout holds (no build leftovers from other runs).
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in files:
        if (REPO / name).is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((REPO / name).read_bytes())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "-w",
            str(out),
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
        ],
        check=True,
        timeout=300,
    )
    (found,) = out.glob("explorer-*.whl")
    return found


def test_the_wheel_holds_the_themes_and_the_stylesheet(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    themes = {name.rsplit("/", 1)[-1] for name in names if "/share/explorer/themes/" in name}
    assert {"tern-dusk.toml", "tern-paper.toml", "README.md"} <= themes
    assert "explorer/tui/app.tcss" in names
    assert not any(name.startswith("themes/") for name in names)  # no top-level package


def test_an_installed_wheel_finds_its_themes(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--quiet",
            "--prefix",
            str(venv),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    # The dependencies (Textual...) come from this environment, after the installed wheel.
    here = subprocess.run(
        [
            sys.executable,
            "-c",
            "import textual, pathlib; print(pathlib.Path(textual.__file__).parents[1])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "deps.pth").write_text(here + "\n")
    script = (
        "import explorer.tui.themes as t, pathlib, sys;"
        "d = pathlib.Path(t.shipped_themes_dir());"
        "print(d);"
        "print(sorted(theme.name for theme in t.load_themes([d]).themes))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(python), "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    where, names = done.stdout.splitlines()
    assert Path(where) == venv / "share" / "explorer" / "themes"
    assert "tern-dusk" in names and "tern-paper" in names
