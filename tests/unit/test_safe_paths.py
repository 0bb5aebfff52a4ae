"""Paths an agent names: inside the root they resolve, anything else is refused with a reason."""

from __future__ import annotations

import pytest

from explorer.core.ingest.safe_paths import PathOutsideRoot, resolve_inside
from tests.conftest import write_files


@pytest.fixture
def root(tmp_path):
    root = write_files(tmp_path / "root", {"notes/a.md": "# A\n", "b.md": "# B\n"})
    outside = write_files(tmp_path / "outside", {"secret.md": "# S\n"})
    (root / "notes" / "out.md").symlink_to(outside / "secret.md")
    (root / "notes" / "out-dir").symlink_to(outside, target_is_directory=True)
    (root / "notes" / "in.md").symlink_to(root / "b.md")
    return root


@pytest.mark.parametrize(
    ("given", "rel_path", "target"),
    [
        ("notes/a.md", "notes/a.md", "notes/a.md"),
        ("./notes//a.md", "notes/a.md", "notes/a.md"),
        ("notes/in.md", "notes/in.md", "b.md"),
        ("notes/missing.md", "notes/missing.md", "notes/missing.md"),
    ],
)
def test_paths_inside_resolve(root, given, rel_path, target):
    inside = resolve_inside(root, given)
    assert inside.rel_path == rel_path
    assert inside.real_path == (root / target).resolve()


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("../../etc/passwd", "'..' is refused"),
        ("notes/../../outside/secret.md", "'..' is refused"),
        ("/etc/passwd", "absolute paths are refused"),
        ("~/x.md", "absolute paths are refused"),
        ("notes/out.md", "leads outside the root"),
        ("notes/out-dir/secret.md", "leads outside the root"),
        ("", "give the path"),
        ("a\0b", "NUL"),
    ],
)
def test_paths_outside_are_refused(root, given, reason):
    with pytest.raises(PathOutsideRoot, match=reason):
        resolve_inside(root, given)
