"""Build hostile folders on disk, one case at a time or all together.

Each ``add_*`` function creates one hostile case under a root and returns what a test needs to
check it (the path it made, and a word only that case contains). :func:`build_hostile_folder`
puts every case plus a few good files in one root, so a test can index the whole thing and check
that every good file is searchable and every bad case is handled as designed.

Words that only one file contains are made of letters alone (``zebraquartz``), so the keyword
index finds them as one token whatever the tokenizer does with punctuation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

GOOD_FILES: dict[str, tuple[str, str]] = {
    "guide.md": (
        "---\ntitle: The Guide\ntags: [alpha, beta]\nversion: 1.10\n---\n"
        "# Install\n\nRun the installer and read about marmaladefox here.\n",
        "marmaladefox",
    ),
    "notes/plain.txt": ("Plain notes mention quillhopper twice: quillhopper.\n", "quillhopper"),
    "src/tool.py": (
        'def sprocket():\n    """Turn the zanzibarwheel."""\n    return 1\n',
        "zanzibarwheel",
    ),
    "deep/a/b/c.md": ("# Deep\n\nA deep file about obsidianmoth.\n", "obsidianmoth"),
    "zz-last.md": ("# Last\n\nThe file after every bad one: yellowtamarind.\n", "yellowtamarind"),
}
"""Good files: relative path -> (text, a word only that file contains)."""


def add_good_files(root: Path) -> dict[str, str]:
    """Write :data:`GOOD_FILES` under ``root``; returns relative path -> its unique word."""
    for rel, (text, _word) in GOOD_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {rel: word for rel, (_text, word) in GOOD_FILES.items()}


def alias_bomb_yaml(levels: int = 9, width: int = 9) -> str:
    """A YAML "billion laughs": each level's list names the previous one ``width`` times.

    With the defaults the expansion is 9**9 ≈ 387 million leaves from under 400 bytes.
    """
    names = "abcdefghijklmnopqrstuvwxyz"
    lines = [f"a: &a [{','.join(['lol'] * width)}]"]
    for level in range(1, levels):
        refs = ",".join([f"*{names[level - 1]}"] * width)
        lines.append(f"{names[level]}: &{names[level]} [{refs}]")
    lines.append(f"title: *{names[levels - 1]}")
    return "\n".join(lines) + "\n"


def add_alias_bomb(root: Path, rel: str = "bomb.md") -> tuple[Path, str]:
    """A Markdown file whose front matter title is an alias bomb; body word ``bombbodyword``."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{alias_bomb_yaml()}---\n# Body\n\nText of bombbodyword.\n")
    return path, "bombbodyword"


def add_outside_symlink(
    root: Path, outside: Path, rel: str = "notes/passwd.txt"
) -> tuple[Path, str]:
    """A link under ``root`` to a file in ``outside`` (a folder that is not under the root).

    The target holds ``outsidesecretword``, which must never become searchable.
    """
    outside.mkdir(parents=True, exist_ok=True)
    target = outside / "secret.txt"
    target.write_text("root:x:0:0:outsidesecretword:/root:/bin/bash\n")
    link = root / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link, "outsidesecretword"


def add_inside_symlink(root: Path, rel: str = "notes/linked.md") -> tuple[Path, str]:
    """A link under ``root`` to a file that is also under the root (must keep working)."""
    target = root / "linked-target" / "target.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("# Linked\n\nReached through a link: pomegranatecloud.\n")
    link = root / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    return link, "pomegranatecloud"


NON_UTF8_NAME = b"bad\xff\xfename.md"
"""A file name that is not valid UTF-8 (Linux names are bytes)."""


def add_non_utf8_name(root: Path, name: bytes = NON_UTF8_NAME) -> tuple[bytes, str]:
    """A file whose name is not UTF-8; returns its name (bytes) and its unique word."""
    with open(os.path.join(os.fsencode(root), name), "wb") as handle:
        handle.write(b"# Bad name\n\nThe badly named file holds saffronkettle.\n")
    return name, "saffronkettle"


def add_fifo_gitignore(root: Path, folder: str = "fifo-dir") -> Path:
    """A named pipe called ``.gitignore`` (opening it for reading blocks forever)."""
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "inside.md").write_text("# Beside the pipe\n\nNext to a fifo: lanternbadger.\n")
    fifo = directory / ".gitignore"
    os.mkfifo(fifo)
    return fifo


def add_devzero_gitignore(root: Path, folder: str = "zero-dir") -> Path:
    """A ``.gitignore`` linked to ``/dev/zero`` (reading it never ends)."""
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "inside.md").write_text("# Beside zero\n\nNext to /dev/zero: cinnabarotter.\n")
    link = directory / ".gitignore"
    link.symlink_to("/dev/zero")
    return link


def add_fifo_file(root: Path, rel: str = "pipe.md") -> Path:
    """A named pipe with an indexable name: it must never be opened."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


ESCAPE_NAME = "esc\x1b]0;pwned\x07name.md"
"""A file name carrying a title-setting OSC sequence."""
ESCAPE_TITLE = "Title \x1b[2J\x1b[H cleared"
"""A front matter title carrying a screen clear."""
ESCAPE_TEXT = "See \x1b]8;;http://evil.example\x1b\\this link\x1b]8;;\x1b\\ about escapeturnip.\n"
"""Body text carrying an OSC 8 hyperlink."""


def add_escape_sequences(root: Path) -> tuple[Path, str]:
    """A Markdown file whose name, title and text carry terminal escape sequences."""
    path = root / ESCAPE_NAME
    title = ESCAPE_TITLE.replace("\x1b", "\\e")  # YAML double quotes write ESC as \e
    path.write_text(f'---\ntitle: "{title}"\n---\n# Escapes\n\n{ESCAPE_TEXT}')
    return path, "escapeturnip"


def add_utf16_file(
    root: Path, rel: str = "utf16.txt", big_endian: bool = False
) -> tuple[Path, str]:
    """A text file in UTF-16 with a byte-order mark; its unique word is ``walrusmeadow``."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "UTF-16 notes: the walrusmeadow lives here.\nSecond line été.\n"
    codec = "utf-16-be" if big_endian else "utf-16-le"
    bom = b"\xfe\xff" if big_endian else b"\xff\xfe"
    path.write_bytes(bom + text.encode(codec))
    return path, "walrusmeadow"


def add_binary_file(root: Path, rel: str = "blob.txt") -> Path:
    """A real binary file with an indexable name (NUL bytes): still skipped as ``binary``."""
    path = root / rel
    path.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4)
    return path


def add_odd_front_matter(root: Path, rel: str = "odd-meta.md") -> tuple[Path, str]:
    """Front matter with a float-looking version, a dict title and nested tags."""
    path = root / rel
    path.write_text(
        "---\ntitle: {nested: mapping}\nversion: 1.10\ndescription: [one, two]\n"
        "tags: [red, [deep, list], {k: v}, blue]\n---\n# Odd\n\nOdd metadata, tangerinevault.\n"
    )
    return path, "tangerinevault"


@dataclass
class HostileCorpus:
    """A root holding every hostile case and the good files, and what each case is."""

    root: Path
    outside: Path
    """A folder next to the root (not under it) that links point into."""
    good: dict[str, str] = field(default_factory=dict)
    """Files that must be searchable: relative path -> a word only that file contains."""
    forbidden_words: list[str] = field(default_factory=list)
    """Words that must never be found (they live outside the root)."""


def build_hostile_folder(base: Path) -> HostileCorpus:
    """Every case in ``base/root`` (the outside target in ``base/outside``)."""
    root = base / "root"
    root.mkdir(parents=True)
    corpus = HostileCorpus(root=root, outside=base / "outside")
    corpus.good.update(add_good_files(root))
    _link, secret = add_outside_symlink(root, corpus.outside)
    corpus.forbidden_words.append(secret)
    link, word = add_inside_symlink(root)
    corpus.good[link.relative_to(root).as_posix()] = word
    corpus.good["linked-target/target.md"] = word
    bomb, word = add_alias_bomb(root)
    corpus.good[bomb.relative_to(root).as_posix()] = word
    _name, word = add_non_utf8_name(root)
    corpus.good[os.fsdecode(_name)] = word
    add_fifo_gitignore(root)
    corpus.good["fifo-dir/inside.md"] = "lanternbadger"
    add_devzero_gitignore(root)
    corpus.good["zero-dir/inside.md"] = "cinnabarotter"
    add_fifo_file(root)
    path, word = add_escape_sequences(root)
    corpus.good[path.relative_to(root).as_posix()] = word
    path, word = add_utf16_file(root)
    corpus.good[path.relative_to(root).as_posix()] = word
    add_binary_file(root)
    path, word = add_odd_front_matter(root)
    corpus.good[path.relative_to(root).as_posix()] = word
    return corpus
