"""The helpers that keep an index private: folders and files created without group or other
bits, a umask mask that nests across threads and always gives the user's umask back, and the
tightening of what an older explorer left open."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from explorer.core.private_files import (
    create_private_file,
    make_private_dirs,
    open_entries,
    private_umask,
    tighten,
)


@pytest.fixture(autouse=True)
def usual_umask():
    saved = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(saved)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def current_umask() -> int:
    value = os.umask(0o022)
    os.umask(value)
    return value


def test_every_missing_parent_is_made_0700_and_existing_ones_are_left_alone(tmp_path):
    tmp_path.chmod(0o755)
    make_private_dirs(tmp_path / "a" / "b" / "c")
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
    assert mode(tmp_path) == 0o755
    make_private_dirs(tmp_path / "a" / "b" / "c")  # already there: nothing changes
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        make_private_dirs(tmp_path / "file")


def test_a_private_file_is_created_once_with_mode_0600(tmp_path):
    path = tmp_path / "db"
    assert create_private_file(path) is True
    assert mode(path) == 0o600
    path.chmod(0o644)
    assert create_private_file(path) is False
    assert mode(path) == 0o644, "an existing file is not changed by creating it"


def test_the_umask_masks_group_and_other_bits_and_comes_back_after_nested_blocks(tmp_path):
    with private_umask():
        (tmp_path / "one").write_text("x")
        with private_umask():
            (tmp_path / "two").mkdir()
        (tmp_path / "three").write_text("x")  # the inner block left the mask in place
        assert current_umask() == 0o077
    assert current_umask() == 0o022
    assert [mode(tmp_path / n) for n in ("one", "two", "three")] == [0o600, 0o700, 0o600]
    (tmp_path / "after").write_text("x")
    assert mode(tmp_path / "after") == 0o644


def test_threads_that_enter_and_leave_out_of_order_give_the_users_umask_back():
    entered, release_first = threading.Event(), threading.Event()

    def first() -> None:
        with private_umask():
            entered.set()
            release_first.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait(5)
    with private_umask():  # enters second, leaves first
        pass
    assert current_umask() == 0o077, "the other thread is still inside"
    release_first.set()
    thread.join(5)
    assert current_umask() == 0o022


def test_a_stricter_user_umask_is_kept_inside_and_after(tmp_path):
    os.umask(0o027)
    with private_umask():
        assert current_umask() == 0o077
    assert current_umask() == 0o027


def test_tighten_takes_group_and_other_bits_off_a_tree_and_the_given_folders_only(tmp_path):
    parent, tree = tmp_path / "parent", tmp_path / "parent" / "index"
    (tree / "chroma").mkdir(parents=True, mode=0o755)
    tree.chmod(0o755)
    parent.chmod(0o755)
    (tree / "index.sqlite").write_text("x")
    (tree / "chroma" / "data.bin").write_text("x")
    os.chmod(tree / "chroma" / "data.bin", 0o664)
    sibling = parent / "other-index"
    sibling.mkdir(mode=0o755)
    target = tmp_path / "outside"
    target.mkdir(mode=0o755)
    (tree / "link").symlink_to(target)
    found = {entry.describe(tree) for entry in open_entries(tree, [parent])}
    assert found == {
        f"{parent} 0755",
        f"{tree} 0755",
        "chroma 0755",
        "index.sqlite 0644",
        "chroma/data.bin 0664",
    }
    tightened, refused = tighten(tree, [parent])
    assert len(tightened) == 5 and refused == []
    assert open_entries(tree, [parent]) == []
    assert mode(tree / "chroma" / "data.bin") == 0o600 and mode(tree) == 0o700
    assert mode(sibling) == 0o755, "a folder's contents are not walked unless it is the tree"
    assert mode(target) == 0o755, "a symbolic link is not followed"
