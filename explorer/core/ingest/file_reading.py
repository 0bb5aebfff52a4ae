"""Read files under a root without trusting them: regular files only, bounded, decoded by BOM.

Anything under a root may be hostile: a named pipe blocks the reader that opens it, ``/dev/zero``
never ends, and a file may grow between a stat and a read. :func:`read_regular_file` opens
without blocking, checks on the open descriptor that it is a regular file and reads at most a
cap. :func:`decode_text` turns bytes into text: UTF-8 (a BOM dropped), or UTF-16/UTF-32 when a
byte-order mark says so, or the legacy encoding charset-normalizer names for text that is
neither (Latin-1, Shift_JIS, GBK…); other content with a NUL byte early on is binary.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.ingest.documents import SkipReason

BINARY_PROBE_BYTES = 8192
"""A NUL byte within this many leading bytes (of a file without a UTF-16/32 BOM) means binary."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class FileRefused(ExplorerError):
    """A file that is not read as text, with the skip reason and a detail a user can act on."""

    def __init__(self, reason: SkipReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def human_size(size: float) -> str:
    """``2100000`` -> ``2.1 MB`` (decimal units)."""
    if size < 1000:
        return f"{int(size)} B"
    for unit in ("KB", "MB", "GB"):
        size /= 1000
        if size < 999.95 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def describe_mode(mode: int) -> str:
    """What kind of file ``mode`` (from a stat) is, in words: ``a named pipe``, ``a device``…"""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    """An open descriptor of ``path`` and its stat; raises :class:`FileRefused` unless regular.

    ``O_NONBLOCK`` makes opening a named pipe return at once instead of waiting for a writer.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
    except BaseException:
        os.close(descriptor)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        raise FileRefused(SkipReason.NOT_REGULAR, describe_mode(info.st_mode))
    return descriptor, info


def _read_at_most(descriptor: int, limit: int) -> bytes:
    parts, remaining = [], limit
    while remaining > 0:
        part = os.read(descriptor, min(remaining, 1 << 20))
        if not part:
            break
        parts.append(part)
        remaining -= len(part)
    return b"".join(parts)


def read_head(path: Path | str, limit: int) -> bytes:
    """At most ``limit`` bytes from the start of the regular file ``path``.

    Raises :class:`FileRefused` (``not-regular``) for anything else, ``OSError`` if it cannot be
    opened or read.
    """
    descriptor, _info = _open_regular(path)
    try:
        return _read_at_most(descriptor, limit)
    finally:
        os.close(descriptor)


def read_regular_file(path: Path | str, max_bytes: int) -> bytes:
    """The whole content of the regular file ``path``, refused if larger than ``max_bytes``.

    Raises :class:`FileRefused` (``not-regular`` or ``too-large``, also for a file that grows
    past the cap while it is read) and ``OSError`` if it cannot be opened or read.
    """
    descriptor, info = _open_regular(path)
    try:
        if info.st_size > max_bytes:
            raise FileRefused(
                SkipReason.TOO_LARGE, f"{human_size(info.st_size)} > {human_size(max_bytes)} cap"
            )
        data = _read_at_most(descriptor, max_bytes + 1)
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise FileRefused(SkipReason.TOO_LARGE, f"grew past the {human_size(max_bytes)} cap")
    return data


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """``(codec, BOM length)`` when ``data`` starts with a byte-order mark, else None."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            if codec.startswith("utf-32") and len(data) % 4:
                continue  # "FF FE 00 00…" of odd length: UTF-16 whose first character is NUL
            return codec, len(bom)
    return None


def refuse_binary(data: bytes) -> None:
    """Raises :class:`FileRefused` (``binary``) for bytes that are no text: a NUL byte in the
    first :data:`BINARY_PROBE_BYTES` of a file without a UTF-16/32 byte-order mark."""
    found = bom_encoding(data)
    if found is None or found[0] == "utf-8":
        nul = data.find(b"\0", 0, BINARY_PROBE_BYTES)
        if nul >= 0:
            raise FileRefused(SkipReason.BINARY, f"NUL byte at offset {nul}")


def decode_text(data: bytes, legacy: bool = True) -> str:
    """The text of a file's bytes, nothing changed but a byte-order mark dropped; without a
    mark and not UTF-8, read in the legacy encoding that reads it (unless ``legacy`` is false:
    the caller first asks whether its first bytes say PDF or DOCX).

    Raises :class:`FileRefused`: ``binary`` (a NUL byte in the first 8 KiB of a file without a
    UTF-16/32 BOM) or ``undecodable`` (not valid in its encoding).
    """
    refuse_binary(data)
    found = bom_encoding(data)
    codec, skip = found if found else ("utf-8", 0)
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError as error:
        named = legacy_encoding(data) if legacy and found is None else None
        if named is not None:
            return data.decode(named)
        name = codec.upper().removesuffix("-LE").removesuffix("-BE")
        raise FileRefused(
            SkipReason.UNDECODABLE, f"not {name} at byte {error.start + skip}"
        ) from None


def decode_leniently(data: bytes) -> str:
    """Like :func:`decode_text` but never refuses: bad bytes become replacement characters.
    A file in a legacy encoding reads as :func:`decode_text` reads it, so the preview's lines
    and the index's offsets agree."""
    found = bom_encoding(data)
    codec, skip = found if found else ("utf-8", 0)
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError:
        legacy = legacy_encoding(data) if found is None else None
        if legacy is not None:
            return data.decode(legacy)
        return data[skip:].decode(codec, errors="replace")


LEGACY_SAMPLE_BYTES = 262_144
"""How much of a file charset-normalizer reads to name its encoding."""


def legacy_encoding(data: bytes) -> str | None:
    """The legacy encoding that reads ``data`` (bytes without a byte-order mark that are not
    UTF-8) as text: Latin-1 or Windows-1252 for older European text, Shift_JIS or EUC-JP for
    Japanese, GBK or Big5 for Chinese, as charset-normalizer judges it from a sample; the
    whole of ``data`` must then decode in it. None for UTF-8 with a few stray bytes (more
    characters read well in it than not: its own text stays as written, the stray bytes
    replaced) and for bytes no encoding reads as text."""
    lenient = data.decode("utf-8", errors="replace")
    stray = lenient.count("\ufffd")
    well_read = len(lenient) - len(lenient.encode("ascii", errors="ignore")) - stray
    if well_read > stray:
        return None
    from charset_normalizer import from_bytes

    sample = data[:LEGACY_SAMPLE_BYTES]
    found = [match.encoding for match in from_bytes(sample) if match.encoding != "ascii"]
    if not found or found[0] == "utf_8":
        return None
    encoding = found[0]
    thin = len(sample.translate(None, _ASCII_BYTES)) < THIN_EVIDENCE  # the non-ASCII bytes
    if thin and _one_byte_a_character(sample, encoding) and _reads(sample, "cp1252"):
        # A few accented letters leave charset-normalizer guessing among the one-byte
        # encodings (``Köppe`` read as Baltic ``K÷ppe``): Windows' Western is then the likelier.
        encoding = "cp1252"
    if not _reads(data, encoding):
        return None
    return str(encoding)


THIN_EVIDENCE = 64
"""Fewer non-ASCII bytes than this in a sample are too few to tell one-byte encodings apart."""
_ASCII_BYTES = bytes(range(128))


def _reads(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def _one_byte_a_character(sample: bytes, encoding: str) -> bool:
    try:
        return len(sample.decode(encoding)) == len(sample)
    except (UnicodeDecodeError, LookupError):
        return False
