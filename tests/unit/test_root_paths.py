"""Index keys for file names that are bytes, and the root as a boundary for paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from explorer.core.ingest.root_paths import (
    OutsideRoot,
    disk_path,
    existing_path,
    path_key,
    spellings,
    undo_display_escapes,
)
from explorer.core.ingest.scanner import resolve_inside_root


@pytest.mark.parametrize(
    "raw",
    [b"bad\xff\xfename.md", b"a\\b\xc3.md", b"\xe9t\xe9.md", b"dir\xff/x.md", b"x\\\\y\x80"],
)
def test_keys_of_names_that_are_not_utf8_are_text_and_reversible(raw: bytes) -> None:
    fs_name = os.fsdecode(raw)
    key = path_key(fs_name)
    key.encode("utf-8")  # valid text: SQLite, JSON and Chroma accept it
    assert "\ufffd" not in key
    assert os.fsencode(disk_path(key)) == raw


def test_utf8_names_are_their_own_key() -> None:
    for name in ("plain.md", "été/notes.md", "back\\slash.md", "literal\\x41.md"):
        assert path_key(name) == name
        assert disk_path(name) == name
    assert path_key(os.fsdecode(b"bad\xff\xfename.md")) == "bad\\xff\\xfename.md"


def test_a_utf8_name_that_looks_escaped_is_found_as_spelled(tmp_path: Path) -> None:
    (tmp_path / "literal\\xff.md").write_text("literal")  # the name holds a backslash
    assert path_key("literal\\xff.md") == "literal\\xff.md"
    assert resolve_inside_root(tmp_path, "literal\\xff.md").read_text() == "literal"


def test_resolve_inside_root_refuses_every_way_out(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "ok.md").write_text("ok")
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "in.md").symlink_to("ok.md")
    (root / "dirlink").symlink_to(outside)
    assert resolve_inside_root(root, "ok.md") == (root / "ok.md").resolve()
    assert resolve_inside_root(root, "in.md") == (root / "ok.md").resolve()
    assert resolve_inside_root(root, "sub/../ok.md".replace("sub/../", "")).name == "ok.md"
    for bad in ("out.txt", "dirlink/secret.txt", "../outside/secret.txt", "/etc/passwd", ""):
        with pytest.raises(OutsideRoot):
            resolve_inside_root(root, bad)
    with pytest.raises(OutsideRoot):
        resolve_inside_root(root, "a/../../outside/secret.txt")
    allowed = resolve_inside_root(root, "out.txt", allow_outside_links=True)
    assert allowed == (outside / "secret.txt").resolve()
    with pytest.raises(OutsideRoot):  # the opt-in is about links, never about ".."
        resolve_inside_root(root, "../outside/secret.txt", allow_outside_links=True)


def test_resolve_inside_root_finds_a_file_by_its_escaped_key(tmp_path: Path) -> None:
    raw = os.path.join(os.fsencode(tmp_path), b"bad\xff\xfename.md")
    with open(raw, "wb") as handle:
        handle.write(b"text")
    found = resolve_inside_root(tmp_path, "bad\\xff\\xfename.md")
    assert found.read_bytes() == b"text"
    assert os.fsencode(found) == os.fsencode(os.path.realpath(raw))


def test_a_path_is_found_as_typed_as_a_key_or_as_shown(tmp_path: Path) -> None:
    (tmp_path / "tab\tname.md").write_text("tab")
    bad = os.fsdecode(b"bad\xff\xfename.md")
    (tmp_path / bad).write_text("bad")
    assert existing_path("tab\tname.md", str(tmp_path)) == "tab\tname.md"
    assert existing_path("tab\\x09name.md", str(tmp_path)) == "tab\tname.md"  # as shown
    assert existing_path("bad\\xff\\xfename.md", str(tmp_path)) == bad  # as the index key
    assert existing_path("missing\\x09.md", str(tmp_path)) == "missing\\x09.md"
    assert resolve_inside_root(tmp_path, "tab\\x09name.md").read_text() == "tab"
    assert resolve_inside_root(tmp_path, "bad\\xff\\xfename.md").read_text() == "bad"


def test_no_escape_spells_a_way_out_of_the_root(tmp_path: Path) -> None:
    """Only bytes from 0x80 up (keys) and control characters (displays) are unescaped: never a
    "." or a "/"."""
    assert spellings("\\x2e\\x2e/\\x2fetc") == ["\\x2e\\x2e/\\x2fetc"]
    assert disk_path("\\x2e\\x2e/\\xff") == os.fsdecode(b"\\x2e\\x2e/\xff")
    assert undo_display_escapes("a\\x2fb\\u002e") == "a\\x2fb\\u002e"
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    for allow in (False, True):  # a literal name, inside the root
        found = resolve_inside_root(root, "\\x2e\\x2e/secret.txt", allow_outside_links=allow)
        assert found == root.resolve() / "\\x2e\\x2e" / "secret.txt" and not found.exists()
