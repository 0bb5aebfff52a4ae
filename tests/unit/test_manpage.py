"""Manual pages: roff with the man macros, gzipped as distributions install them, read into
sectioned text, indexed and searched, in any language; the preview shows what the index read."""

from __future__ import annotations

import gzip

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats import PreviewKind, extension_of, format_for
from explorer.core.ingest.formats import manpage as manpage_module
from explorer.core.ingest.formats.manpage import ManPageFormat, plain
from explorer.core.ingest.formats.preview import preview_document
from explorer.core.ingest.scanner import ScanRules, scan
from explorer.core.models import FileState, SearchMode
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.links import file_links
from explorer.core.retrieval.scopes import Scope
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from tests.documents import write
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds

PAGE = r""".\" Comment lines are not text.
.de XX
.
.B this macro's body is never shown
..
.TH KETTLE 1 "2026-11-30" "kettle 2.1" "User Commands"
.SH NAME
kettle \- boil water from the command line
.SH SYNOPSIS
.B kettle
[\fIOPTION\fR]... [\fB\-\-until\fR \fITEMP\fR]
.SH DESCRIPTION
.B kettle
heats water\(emquickly\(emand says when it is done.
It quotes \*(lqthe manual\*(rq and prints caf\[u00E9].
.SS Options
.TP
.BR \-w ", " \-\-whistle
whistle when the water boils
.TP
\fB\-q\fR, \fB\-\-quiet\fR
say nothing
.IP \(bu 2
a bulleted remark
.PP
An example:
.nf
.RS
kettle \-\-until 90
kettle \-w
.RE
.fi
.TS
tab(:);
l l.
Mode:Temperature
green tea:80
.TE
.SH "SEE ALSO"
.BR teapot (1)
"""


def read(data: bytes):
    fmt = ManPageFormat()
    return fmt.extract(data, "man1/kettle.1", fmt.limits)


def test_a_page_reads_as_sections_items_and_code_with_its_name_as_title():
    document = read(PAGE.encode())
    text = document.text
    assert [(h.level, h.title) for h in document.headings] == [
        (1, "KETTLE(1)"),
        (2, "NAME"),
        (2, "SYNOPSIS"),
        (2, "DESCRIPTION"),
        (3, "Options"),
        (2, "SEE ALSO"),
    ]
    assert document.metadata["title"] == "kettle - boil water from the command line"
    assert "kettle [OPTION]... [--until TEMP]" in text
    assert "heats water—quickly—and says when it is done." in text
    assert "It quotes “the manual” and prints café." in text
    assert "\n\n-w, --whistle\n    whistle when the water boils\n\n" in text  # as man shows it
    assert "\n\n-q, --quiet\n    say nothing\n\n" in text
    assert "- a bulleted remark" in text
    assert "```\nkettle --until 90\nkettle -w\n```" in text
    assert "| Mode | Temperature |\n| green tea | 80 |" in text
    assert "teapot(1)" in text
    for hidden in ("Comment", "macro's body", "tab(:)", "\\f", ".TP", "l l."):
        assert hidden not in text, hidden


MDOC_PAGE = r""".Dd July 31, 1999
.Dt BIFF 1
.Os Linux
.Sh NAME
.Nm biff
.Nd be notified if mail arrives
.Sh SYNOPSIS
.Nm
.Op Fl v
.Op Ar y | n
.Sh DESCRIPTION
.Nm
tells the system whether you want to be notified, through
.Xr comsat 8 ,
on a
.Ux Ns -like
system.
.Bl -tag -width Ds
.It Fl v
say which state
.Pa \&.login
sets.
.El
.Bd -literal
biff y
.Ed
.Sh SEE ALSO
.Xr mail 1 ,
.Xr sh 1
"""


def test_an_mdoc_page_reads_as_the_same_sections_and_items():
    document = read(MDOC_PAGE.encode())
    text = document.text
    assert [(h.level, h.title) for h in document.headings] == [
        (1, "BIFF(1)"),
        (2, "NAME"),
        (2, "SYNOPSIS"),
        (2, "DESCRIPTION"),
        (2, "SEE ALSO"),
    ]
    assert document.metadata["title"] == "biff - be notified if mail arrives"
    assert "biff [-v] [y | n]" in text
    assert "biff tells the system whether you want to be notified, through comsat(8), on a" in text
    assert "UNIX-like system." in text
    assert "\n\n-v\n    say which state .login sets.\n\n" in text
    assert "```\nbiff y\n```" in text
    assert "mail(1), sh(1)" in text
    for hidden in ("July 31", "Linux", "Ds", "-tag", "Xr", "Fl "):
        assert hidden not in text, hidden


INSET_PAGE = r""".TH SHELL 1
.SH SHELL BUILTIN COMMANDS
.TP
\fBcd\fP [\fIdir\fP]
Change the current directory to dir.
.TP
\fBset\fP [\fB\-abe\fP] [\fB\-o\fP \fIoption\-name\fP]
Set or unset values of shell options.
.RS
.TP 8
.B \-a
Each variable created is exported.
.TP 8
.B \-e
Exit immediately on a failure.
.RE
Without options, set prints every variable.
.TP
.B 1.
.PP
A paragraph after the list.
"""


def test_an_items_tag_is_an_entry_of_the_page_and_its_description_its_body():
    """Options, commands and variables (a ``.TP`` or ``.It`` item's tag) are the page's
    entries: the outline lists them and a result names the one it stands in. An entry's body
    is its description, an inset's items within it (``set``'s ``-a`` under ``set``); a
    paragraph after the list belongs to none; a tag without a letter names nothing."""
    document = read(INSET_PAGE.encode())
    text = document.text
    named = [(entry.level, entry.title) for entry in document.entries]
    assert named == [(3, "cd [dir]"), (3, "set [-abe] [-o option-name]"), (4, "-a"), (4, "-e")]
    body = {entry.title: text[entry.start : entry.end] for entry in document.entries}
    assert body["cd [dir]"].rstrip().endswith("Change the current directory to dir.")
    assert "Each variable created is exported." in body["set [-abe] [-o option-name]"]
    assert "Without options, set prints every variable." in body["set [-abe] [-o option-name]"]
    assert body["-a"].rstrip().endswith("Each variable created is exported.")
    assert not any("A paragraph after the list." in b for b in body.values())

    mdoc = read(MDOC_PAGE.encode())
    assert [(e.level, e.title) for e in mdoc.entries] == [(3, "-v")]
    assert mdoc.text[mdoc.entries[0].start : mdoc.entries[0].end].rstrip().endswith("sets.")


def test_the_outline_of_a_page_lists_its_options(tmp_path):
    page = write(tmp_path / "kettle.1", PAGE)
    outline = [(entry.level, entry.title) for entry in preview_document("kettle.1", page).outline]
    assert outline[-4:] == [
        (3, "Options"),
        (4, "-w, --whistle"),
        (4, "-q, --quiet"),
        (2, "SEE ALSO"),
    ]


@pytest.mark.parametrize(
    ("roff", "words"),
    [
        (r"\fBbold\fP and \f[I]italic\fR", "bold and italic"),
        (r"a\-b \e c\ d", "a-b \\ c d"),
        (r"\s-1SMALL\s+1 \(co \[lq]q\[rq] \*(Tm", "SMALL © “q” ™"),
        (r"\fI\,FILE\/\fR", "FILE"),
        (r"text \" a comment", "text "),
        (r"\[u4E2D]\[u6587]", "中文"),
    ],
)
def test_escapes_print_what_roff_prints(roff, words):
    assert plain(roff) == words


def test_a_gzipped_page_reads_as_the_page_and_a_damaged_one_is_refused():
    assert read(gzip.compress(PAGE.encode())).text == read(PAGE.encode()).text
    whole = gzip.compress(PAGE.encode())
    for damaged in (whole[:40], whole[:40] + b"\xff" * 40):
        with pytest.raises(FileRefused, match="damaged gzip"):
            read(damaged)


def test_a_gzip_that_inflates_past_the_bound_is_refused_without_inflating_it(monkeypatch):
    monkeypatch.setattr(manpage_module, "MAX_INFLATED_BYTES", 10_000)
    with pytest.raises(FileRefused) as refused:
        read(gzip.compress(b".TH BOMB 1\n" + b"a" * 1_000_000))
    assert refused.value.reason == "too-large"


def test_compressed_names_are_claimed_only_for_what_a_format_reads(tmp_path):
    assert extension_of("man/man1/ls.1.gz") == "1.gz"
    assert extension_of("dist/tool.tar.gz") == "tar.gz"
    assert extension_of("README.gz") == "gz"
    assert format_for("man/man1/ls.1.gz").name == "man"
    assert format_for("man/man3/printf.3").name == "man"
    assert format_for("zh_TW/man3/clipboard.3tk.gz").name == "man"  # a section's suffix
    assert format_for("man1/openssl-ca.1ssl.gz").name == "man"
    for name in ("man1/ls.1.gz", "man5/fstab.5", "dist/tool.tar.gz", "README.gz", "a.md"):
        write(tmp_path / name, b"x")
    found = {file.rel_path for file in scan(tmp_path, ScanRules(tmp_path), 1_000_000).files}
    assert found == {"man1/ls.1.gz", "man5/fstab.5", "a.md"}


@pytest.fixture
def man_tree(tmp_path):
    root = tmp_path / "man"
    write(root / "man1/kettle.1.gz", gzip.compress(PAGE.encode()))
    chinese = (
        ".TH LS 1\n.SH 名称\nls \\- 列出目录内容\n.SH 描述\n列出指定文件的信息。\n"
        ".TP\n\\fB\\-a\\fR\n不要忽略以点号起始的条目\n"
    )
    write(root / "zh_CN/man1/ls.1.gz", gzip.compress(chinese.encode()))
    write(root / "lib/libkettle.so.1", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    teapot = ".TH TEAPOT 1\n.SH NAME\nteapot \\- keeps tea warm\n.SH SEE ALSO\n.BR kettle (1)\n"
    write(root / "man1/teapot.1.gz", gzip.compress(teapot.encode()))
    return root


def test_a_tree_of_gzipped_pages_is_indexed_and_searched_in_its_languages(man_tree, settings_for):
    index = Index(settings_for(man_tree), embedder=FakeEmbedder())
    try:
        report = Indexer(index).sync()
        assert report.added == 3 and report.skipped == {"binary": 1} and not report.failed
        files = index.keywords.files()
        assert {path: record.state for path, record in files.items()} == {
            "man1/kettle.1.gz": FileState.FRESH,
            "zh_CN/man1/ls.1.gz": FileState.FRESH,
            "man1/teapot.1.gz": FileState.FRESH,
            "lib/libkettle.so.1": FileState.SKIPPED,  # a library's version, not a section
        }
        assert files["zh_CN/man1/ls.1.gz"].title == "ls - 列出目录内容"

        def hits(query: str) -> list[str]:
            request = SearchRequest(query, mode=SearchMode.KEYWORD, limit=10)
            return [hit.path for hit in search(index, request).results]

        assert hits("whistle") == ["man1/kettle.1.gz"]
        assert hits("warm") == ["man1/teapot.1.gz"]
        assert hits("点号") == ["zh_CN/man1/ls.1.gz"]
        [hit] = search(index, SearchRequest("whistle", mode=SearchMode.KEYWORD)).results
        assert hit.passages[0].heading.endswith("Options")
        assert hit.passages[0].entry == "-w, --whistle"  # the option its words stand in
        [hit] = search(index, SearchRequest("say nothing", mode=SearchMode.KEYWORD)).results
        assert hit.passages[0].label.endswith("Options > -q, --quiet")
        [hit] = search(index, SearchRequest("点号", mode=SearchMode.KEYWORD)).results
        assert hit.passages[0].entry == "-a"
    finally:
        index.close()


def test_the_preview_shows_a_page_as_the_index_read_it(man_tree):
    document = preview_document("man1/kettle.1.gz", man_tree / "man1/kettle.1.gz")
    assert document.format == "man"
    assert document.kind == PreviewKind.CODE and document.language == "markdown"
    assert document.text.startswith("# KETTLE(1)\n\n## NAME\n\nkettle - boil water")
    assert [entry.title for entry in document.outline][:3] == ["KETTLE(1)", "NAME", "SYNOPSIS"]


def test_hostile_roff_reads_in_linear_time():
    """Escapes that never close (a megabyte of ``\\[`` or ``\\h'``) are read as characters, at
    once: the bounded extraction's time cap is a last resort, not how such a page ends."""

    with at_most_cpu_seconds(5):
        for opener in ("\\[", "\\h'", "\\*[", "\\f["):
            document = read((".TH X 1\n.SH NAME\n" + opener * 200_000 + "\n").encode())
            assert document.headings
        nested = read((".Dt X 1\n.Sh NAME\n.Op" + " Op" * 50_000 + " Fl v\n").encode())
        depth = manpage_module.MDOC_DEPTH + 1  # enclosures drawn, then the words alone
        assert "[" * depth + "v" + "]" * depth in nested.text


def test_pages_named_in_a_page_are_its_links(man_tree, settings_for):
    """``teapot(1)`` in SEE ALSO links to ``man1/teapot.1.gz`` of the same tree, both ways; a
    page the tree lacks is a missing link where it would be."""
    write(
        man_tree / "man5/kettle.conf.5",
        ".TH KETTLE.CONF 5\n.SH NAME\nkettle.conf \\- settings of kettle(1) and pot(8)\n",
    )
    index = Index(settings_for(man_tree), embedder=FakeEmbedder())
    try:
        Indexer(index).sync()
        found = file_links(index, "man1/kettle.1.gz")
        assert [(link.target, link.raw, link.state) for link in found.outgoing] == [
            ("man1/teapot.1.gz", "teapot(1)", LinkState.RESOLVED)
        ]
        assert {link.source for link in found.backlinks} == {
            "man1/teapot.1.gz",
            "man5/kettle.conf.5",  # an uncompressed page finds a gzipped one, and back
        }
        write(man_tree / "man1/kettle-alias.1", ".so man1/kettle.1\n")  # a page that is another's
        Indexer(index).sync()
        [alias] = file_links(index, "man1/kettle-alias.1").outgoing
        assert (alias.target, alias.state) == ("man1/kettle.1.gz", LinkState.RESOLVED)
        conf = file_links(index, "man5/kettle.conf.5")
        assert [(link.target, link.state) for link in conf.outgoing] == [
            ("man1/kettle.1.gz", LinkState.RESOLVED),
            ("man8/pot.8", LinkState.MISSING),
        ]
    finally:
        index.close()


def test_a_scope_of_a_section_keeps_its_gzipped_pages() -> None:
    pages = {"man/man1/ls.1.gz", "man/man5/passwd.5", "dist/tool.tar.gz", "notes/ls.1.md"}
    assert Scope("commands", extensions=("1",)).select(pages) == {"man/man1/ls.1.gz"}
    assert Scope("compressed", extensions=(".1.gz",)).select(pages) == {"man/man1/ls.1.gz"}
    assert Scope("gzipped", extensions=("gz",)).select(pages) == {
        "man/man1/ls.1.gz",
        "dist/tool.tar.gz",
    }
    assert Scope("markdown", extensions=("md",)).select(pages) == {"notes/ls.1.md"}


def test_a_tables_text_blocks_read_as_one_cell_each():
    """``T{`` … ``T}`` holds a cell of several lines (systemd's file-hierarchy(7), in every
    language): each row of the table was a row per line, a path on one and its text on the
    next, between bars of nothing."""
    page = r""".TH HIER 7
.SH DIRECTORIES
.TS
allbox tab(:);
lB lB.
T{
Directory
T}:T{
Purpose
T}
.T&
l l.
_
T{
/var/log/\fIpackage\fR
T}:T{
Persistent log data of the package.
.br
It may be empty at boot.
T}
/etc:T{
Configuration.
T}
.TE
.SH NOTES
Done.
"""
    text = read(page.encode()).text
    assert "| Directory | Purpose |" in text
    assert (
        "| /var/log/package | Persistent log data of the package. It may be empty at boot. |"
        in text
    )
    assert "| /etc | Configuration. |" in text
    assert "T{" not in text and "T}" not in text and "| _ |" not in text
    assert "\n\nDone." in text
