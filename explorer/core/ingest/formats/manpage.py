"""Manual pages: roff with the ``man`` or ``mdoc`` macros, gzipped or not, read as sectioned text.

A manual page (``ls.1``, or ``ls.1.gz`` as distributions install them under ``share/man``) is
roff source: requests and macros on lines of their own (``.SH NAME``, ``.TP``, ``.B -a``) and
text with inline escapes (``\\fB`` fonts, ``\\-``, ``\\(em``). :class:`ManPage` turns it into
the same light Markdown style as the other extracted formats (:class:`TextBuilder`): the
page's name and section as the first heading, ``.SH`` and ``.SS`` as headings, each option of
a ``.TP``/``.IP`` list as an item with its description indented under it, ``.nf``/``.EX``
blocks fenced, ``tbl`` tables as rows. Fonts, sizes, spacing and conditionals are typography,
not text, and are left out. The title is the NAME section's line (``ls - list directory
contents``), in whatever language the page is written.

Pages written with ``mdoc``, the BSD package (``.Sh``, ``.It Fl a``, ``.Xr ls 1``; OpenSSH's,
about one page in twenty), read the same way: its semantic macros print their words (``-a``,
``ls(1)``, ``[-v]``) and its lists and displays become items and fenced blocks.

roff is a language (macros, conditionals, number registers); what is read here is the subset
the two packages define, which is what manual pages are written in. No roff formatter is
run: groff is not installed everywhere, and a page is read in the extraction worker like any
other extracted format. A gzipped page is inflated there with a bound on its inflated size.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import ClassVar

from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import (
    FileRefused,
    decode_leniently,
    human_size,
    refuse_binary,
)
from explorer.core.ingest.formats.contract import Document, DocumentFormat, Limits, PreviewKind
from explorer.core.ingest.formats.text_builder import TextBuilder
from explorer.core.ingest.front_matter import FIELD_CAPS, FileMetadata
from explorer.core.ingest.markup import Heading, PageEntries, entry_title
from explorer.core.ingest.references import FileReference, LinkSyntax, ReferenceKind

MAN_SUFFIXES = (
    "", "p", "x", "t", "ssl", "type", "const", "head", "perl", "pm", "tcl", "tk", "readline",
    "edit", "posix", "ncurses",
)  # fmt: skip
"""What distributions add to a section number (``printf.3p``, ``ca.1ssl``, ``after.3tcl``)."""
MAN_EXTENSIONS = frozenset(
    {f"{section}{suffix}" for section in "123456789" for suffix in MAN_SUFFIXES} | {"n", "man"}
)
"""A manual page's extension: its section with any suffix, Tcl's ``n``, or ``man``."""
MAX_INFLATED_BYTES = 20_000_000
"""Most bytes a gzipped page may inflate to."""
GZIP_MAGIC = b"\x1f\x8b"

NAMED_CHARACTERS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "bu": "•", "co": "©", "rg": "®", "tm": "™",
    "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "aq": "'", "dq": '"', "ti": "~", "ha": "^",
    "rs": "\\", "sl": "/", "ga": "`", "aa": "´", "dg": "†", "de": "°", "<=": "≤", ">=": "≥",
    "!=": "≠", "->": "→", "<-": "←", "mu": "×", "di": "÷", "+-": "±", "lB": "[", "rB": "]",
    "lC": "{", "rC": "}", "la": "⟨", "ra": "⟩", "ba": "|", "bv": "|", "br": "│", "ul": "_",
    "pl": "+", "eq": "=", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›", "sc": "§", "ps": "¶",
}  # fmt: skip
"""roff's named characters (``\\(em``, ``\\[lq]``) as the characters they print."""
STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™"}
"""The ``man`` package's predefined strings (``\\*(lq``); any other string prints nothing."""
SINGLE_ESCAPES = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t"}
"""One-character escapes that print a character; every other one prints nothing (``\\&``,
``\\|``, ``\\%``) or itself (``\\.``)."""
SILENT_ESCAPES = frozenset("&|^%:)cdurpzk{},/")
_ESCAPE = re.compile(
    r"""\\(?:
        [fF](?:\[[^\]\n]{0,64}\]|\(..|.)           # font
      | s(?:[+-]?\d|\(\d\d|\[[^\]\n]{0,64}\])?      # size
      | [nmgMV](?:\(..|\[[^\]\n]{0,64}\]|.)         # registers, colours
      | [hvwoDlLbxXNAuCZRSH]'[^'\n]{0,256}'          # motions and measured strings
      | \((?P<named>..)
      | \[(?P<bracket>[^\]\n]{0,64})\]
      | \*(?:\((?P<string2>..)|\[(?P<stringn>[^\]\n]{0,64})\]|(?P<string1>.))
      | (?P<single>.)
    )""",
    re.VERBOSE | re.DOTALL,
)
_UNICODE = re.compile(r"u([0-9A-Fa-f]{4,6})")
_PAGE_REFERENCE = re.compile(r"(?<![\w/.:+-])([A-Za-z_][\w.:+-]{0,80})\((\d[a-z]{0,12}|n)\)")
"""Another manual page named in the text: ``ls(1)``, ``File::Spec(3pm)``, ``after(n)``."""
MAN_LINK = LinkSyntax.MAN_PAGE

IGNORED_BLOCKS = frozenset({"de", "de1", "am", "ig", "ds", "ds1"})
"""Requests that open a block ending at ``..`` (a macro's definition, a comment block)."""
BREAKS = frozenset(
    {"PP", "LP", "P", "sp", "br", "HP", "RS", "RE", "in", "ti", "ne", "bp", "Pp", "Lp"}
)
"""Requests that end the paragraph being filled."""
FONT_MACROS = frozenset({"B", "I", "SM", "SB"})
BULLETS = frozenset({"•", "-", "*", "o", "+"})
"""An ``.IP`` mark that makes a bulleted item rather than a tagged one."""
INDENT = "    "
"""The indent of an item's description under its tag (an option under ``-a, --all``)."""
ALTERNATING_MACROS = frozenset({"BI", "BR", "IB", "IR", "RB", "RI"})

# mdoc, the BSD package: semantic macros (``.Fl a``, ``.Xr ls 1``) that are called on a line
# and may call one another (``.It Fl a Ar file``).
MDOC_ENCLOSURES = {
    "Op": ("[", "]"), "Oo": ("[", ""), "Oc": ("", "]"), "Dq": ("“", "”"), "Do": ("“", ""),
    "Dc": ("", "”"), "Qq": ('"', '"'), "Qo": ('"', ""), "Qc": ("", '"'), "Sq": ("‘", "’"),
    "So": ("‘", ""), "Sc": ("", "’"), "Ql": ("‘", "’"), "Pq": ("(", ")"), "Po": ("(", ""),
    "Pc": ("", ")"), "Bq": ("[", "]"), "Bo": ("[", ""), "Bc": ("", "]"), "Brq": ("{", "}"),
    "Bro": ("{", ""), "Brc": ("", "}"), "Aq": ("⟨", "⟩"), "Ao": ("⟨", ""), "Ac": ("", "⟩"),
}  # fmt: skip
"""Macros that enclose the rest of their line (or open and close an enclosure)."""
MDOC_NAMES = frozenset(
    "Ad An Ap Ar At Bk Bsx Bx Cd Cm Dv Dx Ec Ek Em Eo Er Es Ev Ex Fa Fc Fd Fl Fn Fo Fr Ft Fx"
    " Hf Ic In Lb Li Lk Ms Mt Nm No Ns Nx Ok Ox Pa Pf Rv Sm St Sx Sy Tn Ux Va Vt Xc Xo Xr".split()
)
"""mdoc's other callable macros: their name is left out, their words kept."""
MDOC_SYSTEMS = {
    "Ux": "UNIX", "Bx": "BSD", "Bsx": "BSD/OS", "Nx": "NetBSD", "Fx": "FreeBSD", "Ox": "OpenBSD",
    "Dx": "DragonFly", "At": "AT&T UNIX",
}  # fmt: skip
"""Macros that print a system's name (before the version they may be given)."""
PUNCTUATION = frozenset({".", ",", ";", ":", ")", "]", "?", "!"})
"""An mdoc argument that closes up to the word before it."""
MDOC_DEPTH = 16
"""Enclosures nested deeper than this on one line are not drawn (``.Op Op Op …``)."""


class ManPageFormat(DocumentFormat):
    """Manual pages (roff with the ``man`` or ``mdoc`` macros), plain or gzipped."""

    name = "man"
    extensions = MAN_EXTENSIONS | frozenset(f"{ext}.gz" for ext in MAN_EXTENSIONS)
    extracted = True
    limits = Limits(max_bytes=5_000_000, seconds=30.0, max_chars=10_000_000)
    preview_kind = PreviewKind.CODE
    markdown_text: ClassVar[bool] = True
    summary = "roff manual pages, gzipped too: sections as headings, options as items"
    reading = 3
    """2: the items' tags (options, commands, variables) are the page's entries. 3: a table's
    text blocks (``T{`` … ``T}``) are one cell each."""

    def extract(self, data: bytes, rel_path: str, limits: Limits) -> Document:
        source = inflated(data)
        refuse_binary(source)  # a library's version (libfoo.so.1)
        return ManPage(limits.max_chars).read(decode_leniently(source))

    def preview_language(self, rel_path: str, text: str) -> str | None:
        return "markdown"


def inflated(data: bytes) -> bytes:
    """``data`` as it is, or inflated when it is gzipped; refuses a damaged or cut gzip, and
    one that inflates past :data:`MAX_INFLATED_BYTES` (without inflating the rest)."""
    if not data.startswith(GZIP_MAGIC):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_INFLATED_BYTES)
    except zlib.error as error:
        raise FileRefused(SkipReason.UNREADABLE, f"damaged gzip ({error})") from None
    if inflater.unconsumed_tail:
        raise FileRefused(
            SkipReason.TOO_LARGE,
            f"gzip of {human_size(len(data))} inflating past {human_size(MAX_INFLATED_BYTES)}",
        )
    if not inflater.eof:
        raise FileRefused(SkipReason.UNREADABLE, "damaged gzip (cut short)")
    return out


def _joined_lines(source: str) -> Iterator[str]:
    """The input lines, a line that ends in an escaped newline (``\\``) joined to the next."""
    held = ""
    for line in source.splitlines():
        stripped = line.rstrip("\\")
        if (len(line) - len(stripped)) % 2:  # an odd run of backslashes escapes the newline
            held += line[:-1]
            continue
        yield held + line
        held = ""
    if held:
        yield held


def _is_mdoc_macro(token: str) -> bool:
    return token in MDOC_NAMES or token in MDOC_ENCLOSURES


def plain(text: str) -> str:
    """A line of roff text as the words it prints: escapes resolved, a comment cut off."""
    return _ESCAPE.sub(_escape, _without_comment(text))


def _without_comment(text: str) -> str:
    index = 0
    while True:
        index = text.find("\\", index)
        if index < 0 or index + 1 >= len(text):
            return text
        if text[index + 1] in '"#':
            return text[:index]
        index += 2


def _escape(match: re.Match[str]) -> str:
    groups = match.groupdict()
    name = groups["named"] or groups["bracket"]
    if name is not None:
        if name in NAMED_CHARACTERS:
            return NAMED_CHARACTERS[name]
        code = _UNICODE.fullmatch(name.split("_", 1)[0])
        return chr(int(code.group(1), 16)) if code else ""
    string = groups["string2"] or groups["stringn"] or groups["string1"]
    if string is not None:
        return STRINGS.get(string, "")
    single = groups["single"]
    if single is None:
        return ""  # a font, a size, a register, a motion
    if single in SINGLE_ESCAPES:
        return SINGLE_ESCAPES[single]
    return "" if single in SILENT_ESCAPES else single


def arguments(text: str) -> list[str]:
    """A request's arguments: split at spaces, a double-quoted one kept whole (``""`` in it
    is a quote)."""
    found: list[str] = []
    index, size = 0, len(text)
    while index < size:
        while index < size and text[index] in " \t":
            index += 1
        if index >= size:
            break
        if text[index] == '"':
            index += 1
            piece: list[str] = []
            while index < size:
                if text[index] == '"':
                    if text[index + 1 : index + 2] == '"':
                        piece.append('"')
                        index += 2
                        continue
                    index += 1
                    break
                piece.append(text[index])
                index += 1
            found.append("".join(piece))
        else:
            end = index
            while end < size and text[end] not in " \t":
                end += 1
            found.append(text[index:end])
            index = end
    return found


class ManPage:
    """One page's roff read into a :class:`TextBuilder`, line by line."""

    def __init__(self, max_chars: int) -> None:
        self.builder = TextBuilder(max_chars)
        self.pieces: list[str] = []
        """The paragraph being filled."""
        self.prefix = ""
        """What opens the paragraph being filled: an indent under an item's tag, a bullet."""
        self.after_tag = False
        """The paragraph being filled is the first under an item's tag (no blank line)."""
        self.lists = 0
        """mdoc lists open (``.Bl`` … ``.El``)."""
        self.link = ""
        """The address of the ``.UR``/``.MT`` link being read."""
        self.preformatted: list[str] | None = None
        self.table: list[list[str]] | None = None
        self.table_format = False
        """Inside a table, before its data (options and format lines)."""
        self.table_tab = "\t"
        self.table_row: list[str] = []
        """The cells of the table's row being read, while a text block (``T{`` … ``T}``)
        holds one of them open."""
        self.text_block: list[str] | None = None
        """The lines of that text block, read so far."""
        self.next_line: tuple[str, int] | None = None
        """What the next line of text is: ``("heading", level)`` or ``("tag", 0)``."""
        self.skip_block = False
        self.sections = 0
        self.title = ""
        self.name_line = ""
        self.page_name = ""
        """The name an mdoc page gives itself (``.Nm ls``)."""
        self.references: list[FileReference] = []
        self.entries = PageEntries()
        """The items' tags (an option, a command, a variable) as entries of the page, each at
        the depth of its tag (mdoc lists and ``.RS`` insets open)."""
        self.insets = 0
        """``.RS`` insets open (an option's own list of options)."""

    def read(self, source: str) -> Document:
        for line in _joined_lines(source):
            if self.builder.full:
                break
            self.line(line)
        self.flush()
        self.end_preformatted()
        self.end_table()
        self.close_entries(0)
        builder = self.builder
        text = builder.text()
        notes = (f"text cut at {builder.max_chars:,} characters",) if builder.full else ()
        metadata = FileMetadata()
        title = self.name_line or self.title
        if title:
            metadata["title"] = title[: FIELD_CAPS["title"]]
        return Document(
            text,
            metadata=metadata,
            notes=notes,
            headings=tuple(builder.headings),
            references=tuple(self.references),
            entries=tuple(self.entries.found),
        )

    # -- lines --------------------------------------------------------------------------------
    def line(self, line: str) -> None:
        if self.skip_block:  # a macro's definition or a comment block, up to ``..``
            self.skip_block = not line.startswith("..")
            return
        if line[:1] in (".", "'") and not line.startswith(('.\\"', "'\\\"")):
            name, _, rest = line[1:].strip().replace("\t", " ").partition(" ")
            if name.startswith('\\"'):
                return
            if self.table is not None and name not in ("TE", "T&"):
                self.table_line(line)
                return
            self.request(name, rest)
            return
        if line[:1] in (".", "'"):
            return  # a comment
        if self.table is not None:
            self.table_line(line)
        elif self.preformatted is not None:
            self.preformatted.append(plain(line))
        else:
            self.text(plain(line), joined=line.rstrip().endswith("\\c"))

    def text(self, text: str, joined: bool = False) -> None:
        """Words of the page: a pending heading or tag, else the paragraph being filled."""
        if self.next_line is not None:
            kind, level = self.next_line
            if not text.strip():
                return
            self.next_line = None
            if kind == "heading":
                self.heading(level, text)
            else:
                self.tag(text)
            return
        if self.preformatted is not None:
            self.preformatted.append(text.rstrip())
            return
        if not text.strip():
            self.flush()  # a blank line is a paragraph break
            return
        if text[:1].isspace() and self.pieces:
            self.flush()  # a line that starts with a space starts a new line
        self.pieces.append(text if joined else text + " ")

    def request(self, name: str, rest: str) -> None:
        args = arguments(plain(rest))
        if name in IGNORED_BLOCKS:
            self.skip_block = name not in ("ds", "ds1")
        elif name in MDOC_NAMES or name in MDOC_ENCLOSURES:
            self.mdoc_line(name, args)
        elif name in ("TH", "Dt"):
            self.flush()
            if args:
                section = f"({args[1]})" if len(args) > 1 and args[1] else ""
                self.title = args[0] + section
                self.builder.heading(1, self.title)
        elif name in ("SH", "SS", "Sh", "Ss"):
            level = 2 if name in ("SH", "Sh") else 3
            self.flush()
            self.end_preformatted()
            if args:
                self.heading(level, " ".join(args))
            else:
                self.next_line = ("heading", level)
        elif name in ("TP", "TQ"):
            self.flush()
            self.next_line = ("tag", 0)
        elif name == "IP":
            self.flush()
            mark = args[0].strip() if args else ""
            if mark in BULLETS:
                self.prefix = "- "
            elif mark:
                self.tag(mark)
            else:
                self.prefix = INDENT
        elif name in BREAKS:
            self.flush()
            if name == "RS":
                self.insets += 1
            elif name == "RE":
                self.insets = max(0, self.insets - 1)
                self.close_entries(self.depth + 1)  # the inset's items
            if name in ("PP", "LP", "P", "HP") or (name in ("Pp", "Lp") and not self.lists):
                self.close_entries(self.depth)  # out of the item's description
            if name in ("PP", "LP", "P", "HP", "RE") or (name in ("Pp", "Lp") and not self.lists):
                self.prefix = ""  # (mdoc's paragraph inside a list goes on with its item)
        elif name in ("nf", "EX"):
            self.flush()
            if self.preformatted is None:
                self.preformatted = []
        elif name in ("fi", "EE"):
            self.end_preformatted()
        elif name == "TS":
            self.flush()
            self.table, self.table_format = [], True
        elif name in ("TE", "T&"):
            if name == "TE":
                self.end_table()
            else:
                self.table_format = True
        elif name in FONT_MACROS:
            if args:
                self.text(" ".join(args))
        elif name in ALTERNATING_MACROS:
            self.text("".join(args))
        elif name in ("UR", "MT"):
            self.link = args[0] if args else ""
        elif name in ("UE", "ME"):
            if self.link:
                self.text(f"<{self.link}>" + "".join(args))
            self.link = ""
        elif name == "SY":
            self.flush()
            self.text(" ".join(args))
        elif name == "OP":
            self.text("[" + " ".join(args) + "]")
        elif name == "YS":
            self.flush()
        elif name == "so" and args:  # this page is another's text: name it, as a link
            stem, _, section = args[0].rpartition("/")[2].removesuffix(".gz").rpartition(".")
            self.text(f"See {stem}({section})." if stem and section else f"See {args[0]}.")
        elif name == "Nd":
            self.text("- " + " ".join(args))
        elif name == "It":
            self.flush()
            if args:
                self.tag(self.mdoc_words(args))
            else:
                self.prefix = "- "  # a bulleted or numbered list's item
        elif name == "Bl":
            self.flush()
            self.lists += 1
        elif name == "El":
            self.flush()
            self.lists = max(0, self.lists - 1)
            self.close_entries(self.depth + 1)
            self.prefix = INDENT if self.lists else ""
        elif name in ("Bd", "Ed"):
            self.flush()
            if name == "Ed":
                self.end_preformatted()
            elif "-literal" in args or "-unfilled" in args:
                self.preformatted = []
        elif name in ("D1", "Dl"):
            self.flush()
            self.builder.paragraph([self.mdoc_words(args)], INDENT, INDENT)

    def mdoc_line(self, name: str, args: list[str]) -> None:
        """A line of mdoc's callable macros: its words, in the paragraph being filled. The
        page's name (``.Nm ls``) is kept for the bare ``.Nm`` that stands for it later."""
        if name == "Nm" and args and not self.page_name:
            self.page_name = args[0]
        words = self.mdoc_words([name, *args])
        if words:  # (an empty line of text would end the paragraph)
            self.text(words)

    def mdoc_words(self, tokens: list[str], depth: int = 0) -> str:
        """What a line of mdoc macros and words prints: ``Fl a Ar file`` is ``-a file``,
        ``Xr ls 1 ,`` is ``ls(1),``, ``Op Fl v`` is ``[-v]``. Enclosures nest at most
        :data:`MDOC_DEPTH` deep; deeper, a line's words are printed without them."""
        if depth > MDOC_DEPTH:
            return " ".join(token for token in tokens if not _is_mdoc_macro(token))
        words: list[str] = []
        glue = False
        index = 0
        while index < len(tokens):
            token = tokens[index]
            index += 1
            following = tokens[index] if index < len(tokens) else None
            plain_next = following is not None and not _is_mdoc_macro(following)
            if token in MDOC_ENCLOSURES:
                opening, closing = MDOC_ENCLOSURES[token]
                inner = self.mdoc_words(tokens[index:], depth + 1)
                tail = ""
                while inner[-1:] in PUNCTUATION and closing and inner[:-1]:
                    inner, tail = inner[:-1].rstrip(), inner[-1] + tail
                word, index = opening + inner + closing + tail, len(tokens)
            elif token == "Fl":
                flag = following if plain_next and following not in PUNCTUATION else None
                word = "-" + (flag or "")
                index += flag is not None
            elif token == "Xr" and plain_next and index + 1 < len(tokens):
                word, index = f"{following}({tokens[index + 1]})", index + 2
            elif token == "Nm" and not plain_next:
                word = self.page_name
            elif token in MDOC_SYSTEMS:
                word = MDOC_SYSTEMS[token]
            elif token == "Sm":  # spacing on or off: typography
                index += plain_next
                continue
            elif token in ("Ns", "Pf", "Ap"):
                glue = True
                word = "'" if token == "Ap" else ""
            elif token in MDOC_NAMES:
                continue
            else:
                word = token
            if not word:
                continue
            if words and (glue or word in PUNCTUATION):
                words[-1] += word
            else:
                words.append(word)
            glue = token == "Pf" or (token in ("Ns", "Ap") and glue)
        return " ".join(words)

    def heading(self, level: int, text: str) -> None:
        self.close_entries(0)
        self.insets = 0
        self.builder.heading(level, text)
        self.prefix, self.after_tag, self.lists = "", False, 0
        if level == 2:
            self.sections += 1

    def tag(self, text: str) -> None:
        """An item's tag (an option, a term) on a line of its own; what follows is its
        description. A tag that names something (a letter in it) is an entry of the page."""
        self.close_entries(self.depth)
        written = self.builder.paragraph([text])
        self.prefix = INDENT
        self.after_tag = True
        title = entry_title(text)
        if written is None or not any(ch.isalpha() for ch in title):
            return
        headings = self.builder.headings
        nested = self.depth - (1 if self.lists else 0)  # mdoc's items are always in a list
        level = min(6, (headings[-1].level if headings else 1) + 1 + nested)
        entry = Heading(self.builder.block_start, level, title, self.builder.length)
        self.entries.begin(entry, self.depth)

    @property
    def depth(self) -> int:
        """How deep a tag read now stands: mdoc lists and ``.RS`` insets open."""
        return self.lists + self.insets

    def close_entries(self, depth: int) -> None:
        """End, where the text stands now, the entries of tags in ``depth`` lists or more:
        their descriptions have been read."""
        self.entries.end(depth, self.builder.length)

    def flush(self) -> None:
        """Write the paragraph being filled."""
        if not self.pieces:
            return
        pieces, self.pieces = self.pieces, []
        indent = "  " if self.prefix == "- " else self.prefix
        written = self.builder.paragraph(pieces, self.prefix, indent, follows=self.after_tag)
        self.after_tag = False
        for piece, line in zip(pieces, written or (), strict=False):
            for match in _PAGE_REFERENCE.finditer(piece):
                named = f"{match.group(1)}({match.group(2)})"
                link = FileReference(line, ReferenceKind.LINK, named, named, syntax=MAN_LINK)
                self.references.append(link)
        if self.prefix == "- ":
            self.prefix = ""  # a bullet opens one paragraph
        if written and self.sections == 1 and not self.name_line:
            self.name_line = " ".join("".join(pieces).split())

    def end_preformatted(self) -> None:
        if self.preformatted is not None:
            lines, self.preformatted = self.preformatted, None
            self.builder.preformatted("\n".join(lines))
            self.after_tag = False

    def table_line(self, line: str) -> None:
        assert self.table is not None
        if self.table_format:
            tab = re.search(r"tab\s*\((.)\)", line)
            if tab:
                self.table_tab = tab.group(1)
            if line.rstrip().endswith("."):
                self.table_format = False  # the last format line
            return
        if self.text_block is not None:  # a cell's text block, up to a line that opens "T}"
            if line.startswith("T}"):
                self.table_row.append(" ".join(self.text_block))
                self.text_block = None
                rest = line[2:]
                if rest.startswith(self.table_tab):
                    self.table_cells(rest[len(self.table_tab) :])
                else:
                    self.end_table_row()
            elif line[:1] not in (".", "'"):
                self.text_block.append(plain(line))
            return
        if line[:1] in (".", "'") or line.strip() in ("_", "="):
            return  # a request inside the table (``.sp``), a rule across it
        self.table_cells(line)

    def table_cells(self, line: str) -> None:
        """The cells of a row's line; one that opens a text block (``T{`` ends the line) is
        read from the lines that follow, and the row goes on after it."""
        cells = line.split(self.table_tab)
        self.table_row.extend(_cell(cell) for cell in cells[:-1])
        if cells[-1].rstrip() == "T{":
            self.text_block = []
            return
        self.table_row.append(_cell(cells[-1]))
        self.end_table_row()

    def end_table_row(self) -> None:
        assert self.table is not None
        self.table.append(self.table_row)
        self.table_row = []

    def end_table(self) -> None:
        if self.text_block is not None:  # a text block left open: its lines as they are
            self.table_row.append(" ".join(self.text_block))
            self.text_block = None
        if self.table_row and self.table is not None:
            self.end_table_row()
        if self.table is not None:
            rows, self.table, self.table_tab = self.table, None, "\t"
            self.builder.table(rows)


def _cell(text: str) -> str:
    """A table cell's text (a stray text-block mark, not at a line's end, left out)."""
    return plain(text).replace("T{", "").replace("T}", "")
