"""Tests of the scanner: which files a walk of a root finds, skips, and how files are read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from explorer.core.ingest.documents import SkippedFile, SkipReason
from explorer.core.ingest.file_reading import decode_leniently
from explorer.core.ingest.scanner import DEFAULT_EXTENSIONS, ScanRules, load_text, scan, scan_path

CAP = 1_000_000


def make(root: Path, files: dict[str, str | bytes]) -> None:
    """Create ``files`` (relative path -> content) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def found(root: Path, **kwargs: object) -> list[str]:
    """Relative paths of the files a scan of ``root`` would index."""
    return [f.rel_path for f in scan(root, ScanRules(root, **kwargs), CAP).files]


def test_extension_filter_and_bare_names(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "a.md": "x",
            "b.PY": "x",
            "c.bin": "x",
            "d.xyz": "x",
            "Makefile": "x",
            "README": "x",
            "notes": "x",
            "src/main.go": "x",
            "src/style.css": "x",
        },
    )
    assert found(tmp_path) == ["Makefile", "README", "a.md", "b.PY", "src/main.go", "src/style.css"]
    only = found(tmp_path, extensions={"md", ".go"})
    assert only == ["Makefile", "README", "a.md", "src/main.go"]
    assert "md" in DEFAULT_EXTENSIONS and "yml" in DEFAULT_EXTENSIONS


def test_an_extension_filter_keeps_the_compressed_pages_of_that_extension(tmp_path: Path) -> None:
    make(
        tmp_path,
        {"man1/ls.1": "x", "man1/cp.1.gz": "x", "man5/passwd.5.gz": "x", "dist/tool.tar.gz": "x"},
    )
    assert found(tmp_path, extensions={"1"}) == ["man1/cp.1.gz", "man1/ls.1"]
    assert found(tmp_path, extensions={"5.gz"}) == ["man5/passwd.5.gz"]
    assert found(tmp_path, extensions={"tar"}) == []


def test_root_and_nested_gitignore(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".gitignore": "*.log.md\nsecret/\n*.txt\n",
            "keep.md": "x",
            "debug.log.md": "x",
            "notes.txt": "x",
            "secret/a.md": "x",
            "docs/secret/b.md": "x",
            "docs/.gitignore": "/local.md\n!important.txt\ngenerated/\n",
            "docs/local.md": "x",
            "docs/important.txt": "x",
            "docs/other.txt": "x",
            "docs/generated/x.md": "x",
            "docs/sub/local.md": "x",
            "local.md": "x",
        },
    )
    assert found(tmp_path) == ["docs/important.txt", "docs/sub/local.md", "keep.md", "local.md"]
    rules = ScanRules(tmp_path)
    assert not rules.accepts("docs/local.md")
    assert rules.accepts("docs/sub/local.md")
    assert not rules.accepts("docs/generated/x.md")
    assert rules.prunes_dir("docs/generated") and rules.prunes_dir("secret")
    assert not rules.prunes_dir("docs")


def test_gitignore_edits_are_picked_up(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "", "a.md": "x"})
    rules = ScanRules(tmp_path)
    assert rules.accepts("a.md")
    (tmp_path / ".gitignore").write_text("a.md\n# now ignored\n")
    assert not rules.accepts("a.md")
    assert scan(tmp_path, rules, CAP).files == []
    (tmp_path / ".gitignore").write_text("")
    assert [f.rel_path for f in scan(tmp_path, rules, CAP).files] == ["a.md"]


def test_bad_gitignore_pattern_does_not_disable_the_rest(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "[\n*.log.md\n", "a.log.md": "x", "b.md": "x"})
    assert found(tmp_path) == ["b.md"]


def test_exclude_patterns_and_default_excludes(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "drafts/a.md": "x",
            "guide/drafts/b.md": "x",
            "c.tmp.md": "x",
            "d.md": "x",
            "node_modules/pkg/index.js": "x",
            "build/out.md": "x",
            "app.min.js": "x",
            "app.js": "x",
            "Cargo.lock": "x",
            "pkg/__pycache__/m.py": "x",
            "venv/lib/x.py": "x",
        },
    )
    assert found(tmp_path, exclude=["drafts/", "*.tmp.md"]) == ["app.js", "d.md"]
    rules = ScanRules(tmp_path, exclude=["/guide/"])
    assert not rules.accepts("guide/drafts/b.md")
    assert not rules.accepts("node_modules/pkg/index.js")
    assert rules.accepts("drafts/a.md")


def test_hidden_files_and_folders(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".hidden/a.md": "x",
            ".env.md": "x",
            ".github/workflows/ci.yml": "x",
            ".git/config.md": "x",
            "ok/.secret.md": "x",
            "ok/fine.md": "x",
        },
    )
    assert found(tmp_path) == [".github/workflows/ci.yml", "ok/fine.md"]
    rules = ScanRules(tmp_path)
    assert rules.prunes_dir(".hidden") and rules.prunes_dir(".git")
    assert not rules.accepts(".hidden/a.md") and not rules.accepts("ok/.secret.md")
    assert rules.accepts(".github/workflows/ci.yml")


def test_extra_ignored_dirs(tmp_path: Path) -> None:
    make(tmp_path, {"index_data/meta.json": "{}", "docs/a.md": "x"})
    rules = ScanRules(tmp_path, extra_ignored_dirs=[tmp_path / "index_data", Path("/elsewhere")])
    assert [f.rel_path for f in scan(tmp_path, rules, CAP).files] == ["docs/a.md"]
    assert rules.prunes_dir("index_data") and not rules.accepts("index_data/meta.json")


def test_oversize_file_is_skipped_with_reason(tmp_path: Path) -> None:
    make(tmp_path, {"big.md": "x" * 2100, "small.md": "x" * 10})
    result = scan(tmp_path, ScanRules(tmp_path), 1000)
    assert [f.rel_path for f in result.files] == ["small.md"]
    [skipped] = result.skipped
    assert (skipped.rel_path, skipped.reason) == ("big.md", "too-large")
    assert skipped.detail == "2.1 KB > 1.0 KB cap"
    big = scan(tmp_path, ScanRules(tmp_path), 1_000_000)
    assert big.skipped == []


def test_scanned_file_fields(tmp_path: Path) -> None:
    make(tmp_path, {"a/b.md": "hello"})
    [scanned] = scan(tmp_path, ScanRules(tmp_path), CAP).files
    assert scanned.abs_path == tmp_path / "a" / "b.md"
    assert scanned.size == 5
    assert scanned.mtime_ns == (tmp_path / "a" / "b.md").stat().st_mtime_ns


def test_dangling_symlink_and_symlink_loop_do_not_crash(tmp_path: Path) -> None:
    make(tmp_path, {"real.md": "x", "sub/a.md": "x"})
    os.symlink(tmp_path / "missing.md", tmp_path / "dangling.md")
    os.symlink(tmp_path, tmp_path / "sub" / "loop")  # a folder link back to the root
    os.symlink(tmp_path / "real.md", tmp_path / "alias.md")
    result = scan(tmp_path, ScanRules(tmp_path), CAP)
    assert [f.rel_path for f in result.files] == ["alias.md", "real.md", "sub/a.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("dangling.md", "unreadable")]


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, {"locked.md": "x", "open.md": "x"})
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: "locked" not in str(p) and real_access(p, m))
    result = scan(tmp_path, ScanRules(tmp_path), CAP)
    assert [f.rel_path for f in result.files] == ["open.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("locked.md", "unreadable")]


def test_unlistable_folder_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, {"locked/a.md": "x", "open/b.md": "x"})
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan(tmp_path, ScanRules(tmp_path), CAP)
    assert [f.rel_path for f in result.files] == ["open/b.md"]


def test_scan_is_deterministic(tmp_path: Path) -> None:
    names = [f"d{i % 4}/f{(i * 7) % 13}.md" for i in range(40)]
    make(tmp_path, {name: name for name in names})
    first = scan(tmp_path, ScanRules(tmp_path), CAP)
    second = scan(tmp_path, ScanRules(tmp_path), CAP)
    assert first == second
    paths = [f.rel_path for f in first.files]
    assert paths == sorted(set(names))


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        scan(tmp_path / "nope", ScanRules(tmp_path / "nope"), CAP)


def test_load_text_keeps_text_exactly_and_drops_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\n\xc3\xa9t\xc3\xa9")
    assert load_text(path) == "line one\r\nline two\nété"


def test_load_text_binary(tmp_path: Path) -> None:
    path = tmp_path / "image.md"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    reason, detail = load_text(path)
    assert reason == "binary" and "NUL" in detail
    late = tmp_path / "late.md"
    late.write_bytes(b"a" * 9000 + b"\x00")  # a NUL past the first 8 KiB is not looked for
    assert isinstance(load_text(late), str)


def test_load_text_undecodable(tmp_path: Path) -> None:
    """UTF-8 with a stray byte is refused (read in another encoding, its own accented letters
    would be garbled), and so is a UTF-8 byte-order mark over bytes that are not UTF-8; text
    wholly in a legacy encoding is read (``test_legacy_encodings_are_read``)."""
    path = tmp_path / "mixed.txt"
    path.write_bytes("crème brûlée, ".encode() * 5 + b"caf\xe9")
    assert load_text(path) == ("undecodable", "not UTF-8 at byte 88")
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfab\xff")
    assert load_text(bom) == ("undecodable", "not UTF-8 at byte 5")


LEGACY_TEXTS = {
    "cp1252": "Die Sicherung läuft jede Nacht; über Größe und Änderungen berichtet der Dienst.\n",
    "koi8_r": "Резервное копирование выполняется каждую ночь, журнал проверяется утром.\n" * 3,
    "shift_jis": "バックアップは毎晩実行され、スナップショットは別のサーバーに保存されます。\n" * 3,
    "gbk": "每天晚上对数据库做一次快照，然后把备份复制到另一台服务器，早上检查日志。\n" * 3,
}


@pytest.mark.parametrize("encoding", sorted(LEGACY_TEXTS))
def test_legacy_encodings_are_read(tmp_path: Path, encoding: str) -> None:
    """Text in Latin-1 or Windows-1252, KOI8-R, Shift_JIS or GBK was skipped as undecodable:
    it is read in the encoding charset-normalizer names, every character as written, and the
    preview decodes it the same way (so its lines and the index's offsets agree)."""
    text = LEGACY_TEXTS[encoding]
    path = tmp_path / f"{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    assert load_text(path) == text
    assert decode_leniently(path.read_bytes()) == text


def test_a_few_accented_letters_read_as_western_european(tmp_path: Path) -> None:
    """Two non-ASCII bytes in a README are too few for charset-normalizer to tell one-byte
    encodings apart (it named a Baltic one: ``K÷ppe``); Windows' Western reads them."""
    text = "Thanks to Matthias Köppe for the fonts.\nSometimes the £ character is missing.\n"
    path = tmp_path / "README"
    path.write_bytes(text.encode("latin-1"))
    assert load_text(path) == text


def test_load_text_unreadable(tmp_path: Path) -> None:
    reason, _ = load_text(tmp_path / "gone.md")
    assert reason == "unreadable"
    reason, _ = load_text(tmp_path)  # a folder
    assert reason == "unreadable"


def test_a_folder_that_cannot_be_listed_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a user other than root meets a folder of mode 000 (root lists it anyway)."""
    make(tmp_path, {"locked/a.md": "x", "open/b.md": "x"})
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan(tmp_path, ScanRules(tmp_path), CAP)
    assert [f.rel_path for f in result.files] == ["open/b.md"]
    expected = SkippedFile(
        "locked", SkipReason.UNREADABLE, "a folder that cannot be listed (permission denied)"
    )
    assert result.skipped == [expected]
    assert scan_path(ScanRules(tmp_path), "locked", CAP) == expected  # a live update says the same
    assert scan_path(ScanRules(tmp_path), "open", CAP) is None


def test_an_explorer_index_folder_is_never_scanned(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            "docs/a.md": "x",
            "idx/index.sqlite": "",
            "idx/chroma/meta.json": "{}",
            "idx/query-encoder/tokenizer.json": "{}",
            "lookalike/index.sqlite": "",  # a database alone is no index
            "lookalike/notes.md": "x",
        },
    )
    assert found(tmp_path) == ["docs/a.md", "lookalike/notes.md"]
    rules = ScanRules(tmp_path)
    assert rules.prunes_dir("idx") and not rules.accepts("idx/query-encoder/tokenizer.json")
    assert scan_path(rules, "idx/query-encoder/tokenizer.json", CAP) is None


def test_a_sphinx_builds_source_copies_are_left_out_and_its_pages_kept(tmp_path: Path) -> None:
    """A Sphinx build holds each page twice (``x.html`` and ``_sources/x.rst.txt``): the page
    is indexed once, and the build's scripts and search index not at all; a ``_sources``
    folder that is no build's keeps its files."""
    make(
        tmp_path,
        {
            "html/searchindex.js": "Search.setIndex({})",
            "html/_static/doctools.js": "var Documentation = {};",
            "html/admin/guide.html": "<html><body><h1>Guide</h1><p>Boot it.</p></body></html>",
            "html/_sources/admin/guide.rst.txt": "Guide\n=====\n\nBoot it.\n",
            "notes/_sources/reading.txt": "Books I read.\n",
        },
    )
    assert found(tmp_path) == ["html/admin/guide.html", "notes/_sources/reading.txt"]
    rules = ScanRules(tmp_path)
    assert not rules.accepts("html/_sources/admin/guide.rst.txt")  # the live index agrees
    assert rules.accepts("notes/_sources/reading.txt")
