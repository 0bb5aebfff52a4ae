"""The scanner on hostile folders: links out of the root, names that are not UTF-8, fifos and
devices, UTF-16 text, and cancelling a walk."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused, read_head, read_regular_file
from explorer.core.ingest.scanner import ScanRules, load_text, scan, scan_path
from tests.hostile import corpus

CAP = 1_000_000


def run_scan(root: Path, **rules: object):
    """Scan ``root`` on a thread and fail (instead of hanging) if it takes over 5 seconds."""
    outcome: list = []
    worker = threading.Thread(
        target=lambda: outcome.append(scan(root, ScanRules(root, **rules), CAP)), daemon=True
    )
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "the scan blocked"
    return outcome[0]


def skipped_by_path(result) -> dict[str, str]:
    return {s.rel_path: s.reason for s in result.skipped}


def test_a_link_to_a_file_outside_the_root_is_skipped_unless_allowed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    link, _word = corpus.add_outside_symlink(root, tmp_path / "outside")
    inside, _word = corpus.add_inside_symlink(root)
    result = run_scan(root)
    files = [f.rel_path for f in result.files]
    assert "notes/linked.md" in files and "linked-target/target.md" in files
    assert "notes/passwd.txt" not in files
    skipped = {s.rel_path: s for s in result.skipped}
    assert skipped["notes/passwd.txt"].reason == SkipReason.OUTSIDE_ROOT
    assert "outside/secret.txt" in skipped["notes/passwd.txt"].detail
    allowed = run_scan(root, allow_outside_links=True)
    assert "notes/passwd.txt" in [f.rel_path for f in allowed.files]
    rules = ScanRules(root)
    assert scan_path(rules, "notes/passwd.txt", CAP).reason == SkipReason.OUTSIDE_ROOT
    assert scan_path(rules, "notes/linked.md", CAP).rel_path == "notes/linked.md"


def test_a_file_under_a_linked_folder_is_never_reached(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("x")
    root.mkdir()
    (root / "linked").symlink_to(tmp_path / "outside")
    assert run_scan(root).files == []
    assert scan_path(ScanRules(root), "linked/x.md", CAP) is None


def test_a_name_that_is_not_utf8_is_scanned_under_its_escaped_key(tmp_path: Path) -> None:
    corpus.add_non_utf8_name(tmp_path)
    (tmp_path / "zz.md").write_text("after")
    result = run_scan(tmp_path)
    assert [f.rel_path for f in result.files] == ["bad\\xff\\xfename.md", "zz.md"]
    bad = result.files[0]
    assert os.fsencode(bad.abs_path).endswith(corpus.NON_UTF8_NAME)
    assert "saffronkettle" in load_text(bad.abs_path)
    assert scan_path(ScanRules(tmp_path), "bad\\xff\\xfename.md", CAP).abs_path == bad.abs_path


def test_fifo_and_device_gitignores_never_block_and_are_counted(tmp_path: Path) -> None:
    corpus.add_fifo_gitignore(tmp_path)
    corpus.add_devzero_gitignore(tmp_path)
    corpus.add_fifo_file(tmp_path)
    started = time.monotonic()
    result = run_scan(tmp_path)
    assert time.monotonic() - started < 2
    assert [f.rel_path for f in result.files] == ["fifo-dir/inside.md", "zero-dir/inside.md"]
    assert skipped_by_path(result) == {
        "fifo-dir/.gitignore": SkipReason.NOT_REGULAR,
        "zero-dir/.gitignore": SkipReason.NOT_REGULAR,
        "pipe.md": SkipReason.NOT_REGULAR,  # counted, never opened
    }
    rules = ScanRules(tmp_path)
    assert rules.gitignore_problem("fifo-dir").detail == "a named pipe"
    assert rules.gitignore_problem("zero-dir").detail == "a device"
    assert rules.accepts("fifo-dir/inside.md")  # outside a walk too, without blocking


def test_only_regular_files_are_read_and_never_past_the_cap(tmp_path: Path) -> None:
    fifo = corpus.add_fifo_file(tmp_path)
    assert load_text(fifo) == (SkipReason.NOT_REGULAR, "a named pipe")
    assert load_text(Path("/dev/zero")) == (SkipReason.NOT_REGULAR, "a device")
    for read in (lambda p: read_regular_file(p, 10), lambda p: read_head(p, 10)):
        try:
            read(Path("/dev/zero"))
        except FileRefused as refused:
            assert refused.reason == SkipReason.NOT_REGULAR
        else:
            raise AssertionError("read /dev/zero")
    big = tmp_path / "big.md"
    big.write_text("x" * 100)
    assert load_text(big, max_bytes=50)[0] == SkipReason.TOO_LARGE
    assert read_head(big, 10) == b"x" * 10


def test_utf16_files_are_text_and_real_binaries_stay_binary(tmp_path: Path) -> None:
    little, word = corpus.add_utf16_file(tmp_path, "le.txt")
    big, _word = corpus.add_utf16_file(tmp_path, "be.txt", big_endian=True)
    for path in (little, big):
        text = load_text(path)
        assert isinstance(text, str) and word in text and "été" in text
        assert not text.startswith("\ufeff")
    binary = corpus.add_binary_file(tmp_path)
    assert load_text(binary)[0] == SkipReason.BINARY
    odd = tmp_path / "odd.txt"
    odd.write_bytes(b"\xff\xfe" + "abc".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    assert load_text(odd) == (SkipReason.UNDECODABLE, "not UTF-16 at byte 8")
    utf32 = tmp_path / "utf32.txt"
    utf32.write_bytes(b"\xff\xfe\x00\x00" + "wide text".encode("utf-32-le"))
    assert load_text(utf32) == "wide text"


def test_a_cancelled_scan_says_so(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"d{index}").mkdir()
        (tmp_path / f"d{index}" / "a.md").write_text("a")
    cancel = threading.Event()
    cancel.set()
    result = scan(tmp_path, ScanRules(tmp_path), CAP, cancel)
    assert result.cancelled and result.files == []
    assert not scan(tmp_path, ScanRules(tmp_path), CAP).cancelled
