"""The format registry and each format: what a user sees of a PDF, an HTML page, a DOCX or a
notebook once it is indexed (its text, sections, pages, metadata and references)."""

from __future__ import annotations

import pytest

from explorer.core.ingest.chunker import chunk_document, chunk_file
from explorer.core.ingest.documents import SkipReason, entry_at
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats import (
    DEFAULT_EXTENSIONS,
    FORMATS,
    DocumentFormat,
    format_for,
    format_named,
    is_markdown,
)
from explorer.core.ingest.formats.preview import preview_document, text_outline
from explorer.core.ingest.formats.reading import SourceFile, source_of
from explorer.core.ingest.formats.sandbox import decode_document, encode_document
from explorer.core.ingest.references import ReferenceKind
from explorer.core.ingest.scanner import DEFAULT_EXTENSIONS as SCANNED_EXTENSIONS
from tests.documents import (
    API_PAGE,
    encrypt_pdf,
    looping_pdf,
    make_docx,
    make_notebook,
    make_pdf,
)
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds

words = FakeEmbedder().token_spans


def extract(name: str, data: bytes | str, rel_path: str = "doc"):
    fmt = format_named(name)
    raw = data.encode() if isinstance(data, str) else data
    return fmt, fmt.extract(raw, rel_path, fmt.limits)


# -- the registry ------------------------------------------------------------------------------
def test_every_extension_belongs_to_one_format_and_the_scanner_takes_them_all():
    claimed = [ext for fmt in FORMATS for ext in fmt.extensions]
    assert len(claimed) == len(set(claimed))
    assert set(claimed) == DEFAULT_EXTENSIONS == SCANNED_EXTENSIONS
    assert {"pdf", "docx", "ipynb", "html", "md", "mdown", "rst", "go", "txt"} <= SCANNED_EXTENSIONS


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("a/b.md", "markdown"),
        ("notes.MKD", "markdown"),
        ("index.rst", "rst"),
        ("page.HTM", "html"),
        ("manual.pdf", "pdf"),
        ("letter.docx", "docx"),
        ("analysis.ipynb", "notebook"),
        ("main.go", "code"),
        ("lib.pyi", "code"),
        ("Makefile", "text"),
        ("config.toml", "text"),
        ("unknown.xyz", "text"),
    ],
)
def test_a_file_is_recognised_by_its_extension_or_name(path, name):
    assert format_for(path).name == name


def test_markdown_is_one_set_of_extensions_everywhere():
    from explorer.tui.widgets.preview_loading import MARKDOWN_SUFFIXES

    assert is_markdown("x.mdown") and is_markdown("x.mdx") and not is_markdown("x.rst")
    assert {f".{ext}" for ext in format_named("markdown").extensions} == MARKDOWN_SUFFIXES


def test_content_decides_when_a_text_name_holds_a_pdf():
    source = source_of("notes.md", make_pdf([["Hidden saffron text"]]))
    assert isinstance(source, SourceFile) and source.format.name == "pdf"
    assert source_of("real.md", b"# Title\n") == SourceFile(
        "real.md",
        format_named("markdown"),
        source_of("real.md", b"# Title\n").content_hash,
        text="# Title\n",
    )


def test_a_text_note_that_starts_like_a_pdf_stays_a_text_note():
    note = b"%PDF-1.7 is the header every PDF starts with.\n"
    source = source_of("pdf-notes.md", note)
    assert isinstance(source, SourceFile) and source.format.name == "markdown"
    assert source.text == note.decode()


def test_a_file_named_pdf_that_is_no_pdf_is_refused_with_that_reason():
    with pytest.raises(FileRefused) as refused:
        extract("pdf", b"<html>not a pdf</html>")
    assert refused.value.reason == SkipReason.UNREADABLE
    assert refused.value.detail == "not a PDF (no %PDF header)"


def test_adding_a_format_is_one_class():
    class Recipe(DocumentFormat):
        name = "recipe"
        extensions = frozenset({"recipe"})

    document = Recipe().from_text("a.recipe", "Flour, water.\n\nBake.\n")
    result = chunk_document("a.recipe", Recipe(), document, words)
    assert [chunk.text for chunk in result.chunks] == ["Flour, water.\n\nBake."]


# -- PDF --------------------------------------------------------------------------------------
MANUAL = make_pdf(
    [
        ["Introduction", "Explorer reads folders of saffron documents."],
        ["Install", "Run the installer with the kettle flag.", "It takes a minute."],
        ["Usage", "Search while you type, quasar mode."],
    ],
    outline=[(0, "Introduction", 0), (0, "Install", 1), (1, "Usage", 2)],
    info={"Title": "The Manual", "Author": "Ann Writer", "Subject": "How to", "Keywords": "a, b"},
)


def test_pdf_text_is_read_per_page_with_a_break_line_before_each_page():
    _fmt, document = extract("pdf", MANUAL)
    text = document.text
    assert [text[page.start : page.end].rstrip("\n") for page in document.pages] == [
        "Introduction\nExplorer reads folders of saffron documents.",
        "Install\nRun the installer with the kettle flag.\nIt takes a minute.",
        "Usage\nSearch while you type, quasar mode.",
    ]
    assert "─── page 2 ───\n\nInstall" in text


def test_pdf_properties_give_title_description_tags_and_head_the_text():
    _fmt, document = extract("pdf", MANUAL)
    assert document.metadata == {"title": "The Manual", "description": "How to", "tags": ["a", "b"]}
    assert document.text.startswith(
        "Title: The Manual\nAuthor: Ann Writer\nSubject: How to\nKeywords: a, b\n"
    )


def test_every_pdf_chunk_has_its_page_and_its_outline_heading_path():
    fmt, document = extract("pdf", MANUAL)
    chunks = chunk_document("m.pdf", fmt, document, words).chunks
    assert [(c.page, c.heading_path, c.text.split("\n")[0]) for c in chunks] == [
        (1, "Introduction", "Introduction"),
        (2, "Install", "Install"),
        (3, "Install > Usage", "Usage"),
    ]
    lines = document.text.split("\n")
    for chunk in chunks:  # lines count in the text the preview shows
        assert "\n".join(lines[chunk.start_line - 1 : chunk.end_line]) == chunk.text
        assert "page" not in chunk.text and "Author" not in chunk.text


def test_a_pdf_passage_never_spans_two_pages():
    pages = [[f"line {page}-{n} words words words" for n in range(30)] for page in range(4)]
    fmt, document = extract("pdf", make_pdf(pages))
    chunks = chunk_document("p.pdf", fmt, document, words, max_tokens=1000).chunks
    assert [c.page for c in chunks] == [1, 2, 3, 4]
    assert all(c.text.startswith(f"line {c.page - 1}-0") for c in chunks)


def test_a_pdf_without_outline_heads_its_passages_with_its_title():
    fmt, document = extract("pdf", make_pdf([["plain words"]], info={"Title": "Report"}))
    chunks = chunk_document("r.pdf", fmt, document, words).chunks
    assert [(c.heading_path, c.page, c.text) for c in chunks] == [("Report", 1, "plain words")]


def test_pdf_page_cap_reads_the_first_pages_and_says_so(monkeypatch):
    fmt = format_named("pdf")
    from dataclasses import replace

    limits = replace(fmt.limits, max_pages=2)
    document = fmt.extract(make_pdf([["one"], ["two"], ["three"]]), "p.pdf", limits)
    assert len(document.pages) == 2
    assert document.notes == ("the first 2 of 3 pages read",)


def test_encrypted_truncated_and_imageless_pdfs_are_refused_with_their_reason():
    for data, detail in (
        (encrypt_pdf(MANUAL), "encrypted PDF"),
        (MANUAL[: len(MANUAL) // 3], "damaged PDF (not a valid PDF structure)"),
        (make_pdf([[], []]), "no text layer (scanned images?)"),
    ):
        with pytest.raises(FileRefused) as refused:
            extract("pdf", data)
        assert (refused.value.reason, refused.value.detail) == (SkipReason.UNREADABLE, detail)


def test_a_pdf_whose_page_tree_and_outline_loop_is_read_as_far_as_it_goes():
    _fmt, document = extract("pdf", looping_pdf())
    assert "loop page" in document.text
    assert "pages could not be loaded" in " ".join(document.notes)


# -- HTML -------------------------------------------------------------------------------------
SPHINX_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Built-in Functions — Python docs</title>
<meta name="description" content="The functions always available.">
<style>body { color: red }</style><script>var saffron_script = 1;</script></head>
<body>
<div class="related" role="navigation"><ul><li><a href="index.html">index</a></li></ul></div>
<div class="document"><div class="body" role="main">
<section id="built-in-functions">
<h1>Built-in Functions<a class="headerlink" href="#built-in-functions">¶</a></h1>
<p>The Python interpreter has a number of <em>functions</em> built into it.
See <a href="stdtypes.html#dict">the types</a> and <a href="https://example.com/">out</a>.</p>
<dl><dt id="abs"><code>abs</code>(<em>x</em>)</dt><dd><p>Return the absolute value.</p></dd></dl>
<section><h2>Notes<a class="headerlink" href="#notes">¶</a></h2>
<div class="highlight-python3"><div class="highlight"><pre>&gt;&gt;&gt; abs(-3)
3</pre></div></div>
<table><tr><th>name</th><th>use</th></tr><tr><td><a href="../ref/len.html">len</a></td>
<td>size of a thing</td></tr></table>
<img src="_images/chart.png" alt="a chart">
</section></section></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><p>sidebar words</p></div>
<div class="footer">© Copyright footer words</div>
</body></html>"""


def test_html_becomes_readable_text_without_markup_scripts_or_navigation():
    _fmt, document = extract("html", SPHINX_PAGE, "library/functions.html")
    text = document.text
    for gone in ("<", "saffron_script", "color: red", "sidebar words", "footer", "¶", "index"):
        assert gone not in text, gone
    assert text.startswith("# Built-in Functions\n\nThe Python interpreter has a number of")
    assert "```python3\n>>> abs(-3)\n3\n```" in text
    assert "| len | size of a thing |" in text
    assert "abs(x)\n\nReturn the absolute value." in text


def test_html_title_and_description_come_from_its_head():
    _fmt, document = extract("html", SPHINX_PAGE, "library/functions.html")
    assert document.metadata == {
        "title": "Built-in Functions — Python docs",
        "description": "The functions always available.",
    }


def test_html_headings_are_heading_paths():
    chunks = chunk_file("library/functions.html", SPHINX_PAGE, words, max_tokens=40).chunks
    assert [c.heading_path for c in chunks][:1] == ["Built-in Functions"]
    assert any(c.heading_path == "Built-in Functions > Notes" for c in chunks)
    assert all("<" not in c.text.replace(">>>", "") for c in chunks)


def test_html_links_are_references_on_the_line_they_land_on():
    _fmt, document = extract("html", SPHINX_PAGE, "library/functions.html")
    lines = document.text.split("\n")
    found = {(ref.kind, ref.raw, ref.target) for ref in document.references}
    assert found == {
        (ReferenceKind.LINK, "stdtypes.html#dict", "library/stdtypes.html"),
        (ReferenceKind.LINK, "../ref/len.html", "ref/len.html"),
        (ReferenceKind.IMAGE, "_images/chart.png", "library/_images/chart.png"),
    }
    by_raw = {ref.raw: ref.line for ref in document.references}
    assert "the types" in lines[by_raw["stdtypes.html#dict"] - 1]
    assert lines[by_raw["../ref/len.html"] - 1].startswith("| len |")


def test_an_api_pages_entries_are_listed_under_their_sections_not_cut_at():
    """An API manual's functions and classes (and a glossary's terms), as Sphinx writes them,
    are the entries the outline lists, each at the line its signature starts, a class's
    members under it; the chunker's sections are the headings alone."""
    _fmt, document = extract("html", API_PAGE, "library/csv.html")
    text = document.text
    named = [(entry.level, entry.title) for entry in document.entries]
    assert named == [
        (3, "csv.reader"),
        (3, "csv.DictReader"),
        (4, "fieldnames"),
        (3, "PyList_New"),
        (3, "-c <command>"),
        (3, "dialect"),
    ]  # no field list's term, no footnote's number
    starts = [text[entry.start : entry.end].split("\n")[0] for entry in document.entries]
    assert starts[:2] == ["csv.reader(csvfile)", "class csv.DictReader(f, fieldnames=None)"]
    assert starts[3] == "PyObject *PyList_New(Py_ssize_t len)"
    assert all(entry.start == 0 or text[entry.start - 1] == "\n" for entry in document.entries)
    assert [h.title for h in document.headings or ()] == [
        "csv — CSV File Reading",
        "Module Contents",
        "Glossary",
    ]
    assert decode_document(encode_document(document)) == document  # the worker's answer


def test_an_entry_ends_where_its_definition_ends_and_each_passage_knows_its_entries():
    """An entry spans its term and its definition: a class's, its members too; a glossary
    term's, not the paragraph after its list. Each passage carries the entries its lines meet,
    and the innermost one holding a line names it (the member, not its class)."""
    _fmt, document = extract("html", API_PAGE, "library/csv.html")
    text = document.text
    body = {entry.title: text[entry.start : entry.end] for entry in document.entries}
    assert body["csv.reader"].rstrip().endswith("Return a reader object.")
    assert "Map each row" in body["csv.DictReader"]
    assert body["csv.DictReader"].rstrip().endswith("The field names.")  # its member within
    assert body["fieldnames"].rstrip().endswith("The field names.")
    assert "A note" not in body["dialect"] and "A set of rules." in body["dialect"]

    chunks = chunk_file("library/csv.html", API_PAGE, FakeEmbedder().token_spans)
    contents = next(c for c in chunks.chunks if c.heading_path.endswith("Module Contents"))
    assert [entry.title for entry in contents.entries] == [
        "csv.reader",
        "csv.DictReader",
        "fieldnames",
        "PyList_New",
        "-c <command>",
    ]
    lines = text.split("\n")

    def named(words: str) -> str | None:
        line = next(n for n, row in enumerate(lines, start=1) if words in row)
        entry = entry_at(contents.entries, line)
        return entry.title if entry else None

    assert named("Map each row") == "csv.DictReader"
    assert named("The field names.") == "fieldnames"
    assert named("Return a new list.") == "PyList_New"
    assert named("The module defines") is None  # the section's words before any entry
    glossary = next(c for c in chunks.chunks if c.heading_path.endswith("Glossary"))
    assert [entry.title for entry in glossary.entries] == ["dialect"]
    markdown = chunk_file("a.md", "# A\n\nText.\n", FakeEmbedder().token_spans)
    assert not any(c.entries for c in markdown.chunks)


def test_a_texinfo_manuals_functions_are_entries_named_without_their_permalink():
    """Texinfo writes a function as a term of a ``<dl class="def">``: version 7 marks its name
    (``def-name``), which names the entry; version 6 does not, so the whole term does, without
    the permalink's pilcrow."""
    seven = (
        '<dl class="first-deftypefn"><dt class="deftypefn" id="index-ffi_005fcall">'
        '<span class="category-def">Function: </span><span><code class="def-type">void</code> '
        '<strong class="def-name">ffi_call</strong> <code class="def-code-arguments">'
        '(ffi_cif *cif, void *fn)</code><a class="copiable-link" href="#index-ffi_005fcall">'
        " &para;</a></span></dt><dd><p>Call a function.</p></dd></dl>"
    )
    six = (
        '<dl class="def"><dt id="index-ffi_005fstatus"><span class="category">Function: </span>'
        "<span><strong>ffi_status</strong> <em>ffi_prep_cif (ffi_cif *<var>cif</var>)</em>"
        "<a href='#index-ffi_005fstatus' class='copiable-anchor'> &para;</a></span></dt>"
        "<dd><p>Prepare a call interface.</p></dd></dl>"
    )
    for page, title in (
        (seven, "ffi_call"),
        (six, "Function: ffi_status ffi_prep_cif (ffi_cif *cif)"),
    ):
        html = f"<body><h1>The Basics</h1>{page}</body>"
        _fmt, document = extract("html", html, "The-Basics.html")
        assert [entry.title for entry in document.entries] == [title]


def test_the_preview_outline_of_an_api_page_holds_its_entries_in_order(tmp_path):
    (tmp_path / "csv.html").write_text(API_PAGE, encoding="utf-8")
    page = preview_document("csv.html", tmp_path / "csv.html")
    lines = page.text.split("\n")
    outline = [(entry.level, entry.title) for entry in page.outline]
    assert outline[:4] == [
        (1, "csv — CSV File Reading"),
        (2, "Module Contents"),
        (3, "csv.reader"),
        (3, "csv.DictReader"),
    ]
    assert outline[-2:] == [(2, "Glossary"), (3, "dialect")]
    for entry in page.outline:
        assert entry.title.split(" ")[0].split(".")[-1] in lines[entry.line - 1]


def test_html_front_matter_wins_over_its_head():
    page = "---\ntitle: From front matter\ntags: [web]\n---\n<title>Head</title><p>Body</p>"
    _fmt, document = extract("html", page)
    assert document.metadata == {"title": "From front matter", "tags": ["web"]}
    assert document.text == "Body\n"


def test_html_without_a_charset_is_read_as_utf8():
    _fmt, document = extract("html", "<p>café naïve</p>".encode())
    assert document.text == "café naïve\n"


def test_html_page_chrome_goes_but_an_articles_header_stays():
    page = (
        "<body><header>Site banner</header><article><header><h1>Post</h1></header>"
        "<p>Words.</p><footer>by Ann</footer></article><footer>site footer</footer></body>"
    )
    _fmt, document = extract("html", page)
    assert document.text == "# Post\n\nWords.\n\nby Ann\n"


TEXINFO_BAR = (
    '<div class="header"><p>Next: <a href="b.html" accesskey="n" rel="next">Closures</a>, '
    'Up: <a href="index.html" accesskey="u" rel="up">libffi</a> &nbsp; '
    '[<a href="Index.html" title="Index" rel="index">Index</a>]</p></div>'
)
TEXINFO_BOTTOM = (
    '<div class="header"><p>Next: <a href="b.html">Closures</a>, Up: <a href="index.html">'
    'libffi</a> &nbsp; [<a href="Index.html" title="Index" rel="index">Index</a>]</p></div>'
)
TEXI2HTML_BAR = (
    '<table class="bar"><tr><td>[<a href="prev.html" rel="previous"> &lt; Before </a>]</td>'
    '<td>[<a href="up.html" rel="up"> Up : Chapter </a>]</td>'
    '<td>[<a href="next.html" rel="next"> After &gt; </a>]</td></tr></table>'
)


@pytest.mark.parametrize("bar", [TEXINFO_BAR, TEXI2HTML_BAR])
def test_a_manuals_bars_of_next_previous_and_up_links_are_chrome(bar):
    """Texinfo and texi2html write a bar of "Next: … Up: …" links atop and below each page
    of a GNU manual; they were its first line and its last, in every snippet and search. A
    bar is a block of little text holding two links of such relations (the copy below, with
    fewer relations marked, goes as the same text); prose that names the next page stays."""
    prose = (
        '<p>The <a href="next.html" rel="next">next chapter</a> builds on this one; its '
        + "long explanation goes on " * 12
        + '<a href="up.html" rel="up">up</a>.</p>'
    )
    bottom = TEXINFO_BOTTOM if bar is TEXINFO_BAR else bar
    page = f"<body>{bar}<h2>1 Types</h2><p>Words about types.</p>{prose}<hr>{bottom}</body>"
    _fmt, document = extract("html", page)
    assert document.text.startswith("## 1 Types\n\nWords about types.\n\nThe next chapter")
    assert document.text.rstrip().endswith("up.")
    for gone in ("Closures", "Before", "Index"):
        assert gone not in document.text
    assert [r.raw for r in document.references] == ["next.html", "up.html"]  # the prose's


def test_a_table_that_sets_long_lists_side_by_side_reads_as_its_lists():
    """Sphinx's general index is one table row of columns holding hundreds of entries: read as
    a row it was one line of 9,000 characters; it reads as its lists. A table of values whose
    cell holds a short list stays a row."""
    entries = "".join(
        f'<li><a href="lib/m{n}.html">m{n}() (in module m)</a></li>' for n in range(12)
    )
    index = (
        f"<h1>Index – M</h1><table class='indextable'><tr><td><ul>{entries}</ul></td></tr></table>"
    )
    _fmt, document = extract("html", index)
    lines = document.text.splitlines()
    assert lines[2:4] == ["- m0() (in module m)", "- m1() (in module m)"]
    assert len(lines) == 14 and max(len(line) for line in lines) < 40
    assert [ref.line for ref in document.references][:2] == [3, 4]
    values = (
        "<table><tr><td>type</td><td>value\n<ul>\n<li>1: string</li>\n<li>2: binary</li>"
        "</ul></td></tr>"
        "<tr><td>size</td><td>bytes</td></tr></table>"
    )
    _fmt, document = extract("html", values)
    assert document.text == "| type | value 1: string 2: binary |\n| size | bytes |\n"


def test_hostile_navigation_links_and_tables_are_read_in_linear_time():
    """Thousands of links marked ``rel="next"`` under hundreds of ``<span>`` were walked up to
    the root once each (5.3 s for 20,000), and one-row tables nested in one another counted
    every list item below each; each is bounded now."""

    links = '<a rel="next" href="n.html">n</a>' * 20_000
    deep = "<body>" + "<span>" * 900 + links + "</span>" * 900 + "</body>"
    nested = "<body>" + "<table><tr><td>" * 300 + "<ul>" + "<li>x</li>" * 20_000 + "</ul>"
    nested += "</td></tr></table>" * 300 + "</body>"
    with at_most_cpu_seconds(5):
        _fmt, document = extract("html", deep)
        assert document.text.count("n") == 20_000
        _fmt, document = extract("html", nested)
        assert document.text.count("- x") == 20_000


def test_inline_pieces_join_with_one_space_only_where_white_space_was():
    """A paragraph's pieces (text, a link's words, the text after it) keep the spaces between
    them as one space, and none where there was none; each piece's start is where its first word
    landed (a link's line is found by it)."""
    from explorer.core.ingest.formats.text_builder import collapse

    assert collapse(["see ", "the link", ", then"]) == ("see the link, then", [0, 4, 12])
    assert collapse(["x\u00a0\ty", "\n", "z"]) == ("x y z", [0, 3, 4])
    assert collapse(["  a", "b  ", "", "c"]) == ("ab c", [0, 1, 2, 3])
    assert collapse(["", " "]) == ("", [0, 0]) and collapse([]) == ("", [])


def test_html_lists_keep_their_bullets_and_numbers():
    page = "<ul><li>one</li><li>two<ol><li>a</li><li><p>b</p><p>more</p></li></ol></li></ul>"
    _fmt, document = extract("html", page)
    assert document.text == "- one\n- two\n  1. a\n  2. b\n     more\n"


def nested_page(levels: int, charset: str = "") -> str:
    head = f'<head><meta charset="{charset}"></head>' if charset else ""
    return (
        f"<html>{head}<body><h1>Nest</h1><p>before the nest</p>"
        + "<div><span>" * (levels // 2)
        + '<p>inside the nest, <a href="deep.html">deep</a></p><script>var wombat;</script>'
        + '<div class="sidebar">deep chrome</div>'
        + "</span></div>" * (levels // 2)
        + "<p>after the nest</p><ul><li>a last item</li></ul></body></html>"
    )


@pytest.mark.parametrize("levels", [250, 3_000, 40_000])
def test_html_nested_past_the_parsers_depth_keeps_its_text_before_in_and_after(levels):
    _fmt, document = extract("html", nested_page(levels), "pages/nested.html")
    assert document.text == (
        "# Nest\n\nbefore the nest\n\ninside the nest, deep\n\nafter the nest\n\n- a last item\n"
    )
    assert [(ref.line, ref.target) for ref in document.references or ()] == [(5, "pages/deep.html")]
    flat = ("markup nested over 1,000 levels deep was read flat",)
    assert document.notes == (() if levels < 1_000 else flat)


def test_deep_html_in_a_declared_encoding_keeps_its_characters():
    page = nested_page(5_000, charset="iso-8859-1").replace("after", "après")
    _fmt, document = extract("html", page.encode("latin-1"))
    assert "après the nest" in document.text


def test_html_lists_nested_past_every_limit_keep_their_words_but_not_their_scripts():
    page = (
        "<ul><li>" * 3_000
        + "deep words<script>var wombat;</script><nav>deep menu</nav> and more"
        + "</li></ul>" * 3_000
        + "<p>after the lists</p>"
    )
    _fmt, document = extract("html", page)
    assert "deep words and more" in document.text and "after the lists" in document.text
    assert "wombat" not in document.text and "deep menu" not in document.text


def test_html_that_stays_too_deep_to_read_says_why(monkeypatch):
    """Should the second reading stop too, the page says why (and when it gave no text at all,
    it is skipped with that reason rather than indexed empty)."""
    import lxml.html

    import explorer.core.ingest.formats.html as html_format

    halted = "Excessive depth in document: 2048, use XML_PARSE_HUGE option"
    monkeypatch.setattr(
        html_format,
        "shallow_tree",
        lambda source, *_limits: (lxml.html.document_fromstring(source[:25]), [halted]),
    )
    page = "<html><body>" + "<div>" * 3_000 + "only deep text" + "</div>" * 3_000 + "</body></html>"
    with pytest.raises(FileRefused) as refused:
        extract("html", page)
    assert refused.value.reason == SkipReason.UNREADABLE
    assert refused.value.detail == "the HTML parser stopped: Excessive depth in document: 2048"
    _fmt, document = extract("html", "<p>shallow words</p>" + page)
    assert document.text == "shallow words\n"
    assert document.notes[-1] == (
        "read up to where the HTML parser stopped (Excessive depth in document: 2048)"
    )


def test_html_with_a_run_of_text_over_10_mb_is_read_up_to_the_text_cap():
    lines = "".join(f"log line {n:07d} of the long block\n" for n in range(350_000))
    page = f"<p>first words</p><pre>{lines}</pre><p>closing words</p>"
    assert len(page) > 10_500_000  # libxml2 gives up on a text node over 10 MB by default
    fmt, document = extract("html", page)
    assert document.text.startswith("first words\n\n```\nlog line 0000000 of the long block\n")
    assert len(document.text) > 0.99 * fmt.limits.max_chars
    assert document.text.endswith(" of the long block\n")  # whole lines, up to the cap
    assert document.notes == (f"text cut at {fmt.limits.max_chars:,} characters",)


# -- DOCX -------------------------------------------------------------------------------------
def test_docx_heading_styles_tables_and_properties():
    data = make_docx(
        [
            ("title", "Field Guide"),
            ("para", "An opening paragraph about lanterns."),
            ("heading1", "Setup"),
            ("bullet", "first step"),
            ("heading2", "Details"),
            ("table", [["key", "value"], ["colour", "amber"]]),
            ("link", ("the notes", "notes/more.md")),
        ],
        title="Guide Title",
        author="Ann",
        keywords="lamps; oil",
    )
    fmt, document = extract("docx", data, "guides/field.docx")
    assert document.metadata == {"title": "Guide Title", "tags": ["lamps", "oil"]}
    assert document.text.startswith("Title: Guide Title\nAuthor: Ann\nKeywords: lamps; oil\n")
    chunks = chunk_document("guides/field.docx", fmt, document, words, max_tokens=12).chunks
    paths = {c.heading_path for c in chunks}
    assert {"Field Guide", "Field Guide > Setup", "Field Guide > Setup > Details"} <= paths
    text = document.text
    assert "- first step" in text and "| colour | amber |" in text
    assert all("Author" not in c.text for c in chunks)
    [reference] = document.references
    assert (reference.raw, reference.target) == ("notes/more.md", "guides/notes/more.md")
    assert "see the notes" in text.split("\n")[reference.line - 1]


def test_a_damaged_docx_is_refused():
    with pytest.raises(FileRefused) as refused:
        extract("docx", b"PK\x03\x04 not really a zip")
    assert refused.value.detail.startswith("not a valid DOCX")


# -- notebooks --------------------------------------------------------------------------------
NOTEBOOK = make_notebook(
    [
        ("markdown", "# Analysis\n\nWe load the [data](data/input.csv)."),
        ("code", "import pandas\nframe = pandas.read_csv('x')"),
        ("markdown", "## Results\n\nThe mean is high."),
        ("code", "print(frame.mean())"),
        ("raw", ""),
    ]
)


def test_a_notebook_is_markdown_with_fenced_code_and_no_outputs():
    _fmt, document = extract("notebook", NOTEBOOK, "work/analysis.ipynb")
    assert document.text == (
        "# Analysis\n\nWe load the [data](data/input.csv).\n\n"
        "```python\nimport pandas\nframe = pandas.read_csv('x')\n```\n\n"
        "## Results\n\nThe mean is high.\n\n```python\nprint(frame.mean())\n```\n"
    )
    assert "OUTPUT-NOT-INDEXED" not in document.text


def test_code_holding_long_backtick_runs_is_fenced_longer_at_once():
    """A fence outgrows the backticks in its code; it grew one backtick at a time, each time
    searching the code again: a cell ending in 60,000 backticks took 5 s."""
    with at_most_cpu_seconds(0.5):
        _fmt, document = extract(
            "notebook", make_notebook([("code", "x = 1\n" + "`" * 60_000)]), "work/ticks.ipynb"
        )
        assert document.text.startswith("`" * 60_001 + "python\nx = 1\n")


def test_notebook_headings_and_links_come_from_its_markdown_cells():
    chunks = chunk_file("work/analysis.ipynb", NOTEBOOK, words, max_tokens=30)
    assert [c.heading_path for c in chunks.chunks] == ["Analysis", "Analysis > Results"]
    [link] = chunks.references
    assert (link.kind, link.target, link.line) == (ReferenceKind.LINK, "work/data/input.csv", 3)


def test_a_file_that_is_not_a_notebook_is_refused():
    with pytest.raises(FileRefused) as refused:
        extract("notebook", "[1, 2")
    assert refused.value.detail.startswith("not a notebook (bad JSON")


def outline_of(path) -> list[tuple[int, str, int]]:
    """(level, title, line) of each entry ``t`` lists for the text file at ``path``."""
    return [(e.level, e.title, e.line) for e in text_outline(preview_document(path.name, path))]


def test_a_restructured_text_preview_outlines_its_titles(tmp_path):
    """t on a .rst file lists its titles (an overlined one, underlined ones of two levels),
    read as the index reads them; before, the outline of a text preview was always empty."""
    path = tmp_path / "howto.rst"
    path.write_text(
        "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nSteps.\n\nOn Linux\n~~~~~~~~\n\n"
        "apt.\n\nUpgrade\n-------\n\nLater.\n",
        encoding="utf-8",
    )
    assert outline_of(path) == [
        (0, "Guide", 1),
        (1, "Install", 7),
        (2, "On Linux", 12),
        (1, "Upgrade", 17),
    ]


def test_code_without_a_grammar_here_is_read_in_windows_not_skipped(tmp_path):
    """A Lua, Perl, R or Terraform project was skipped whole: no format claimed the files."""
    for name in ("init.lua", "lib/Tool.pm", "analysis.R", "main.tf", "schema.proto"):
        assert format_for(name).name == "code", name
        assert name.rsplit(".", 1)[1].lower() in SCANNED_EXTENSIONS
    text = "-- Retry a request with backoff\nlocal function retry(times)\n  return times * 2\nend\n"
    result = chunk_file("init.lua", text, FakeEmbedder().token_spans)
    assert [chunk.text for chunk in result.chunks] == [text.rstrip()]
    path = tmp_path / "init.lua"
    path.write_text(text, encoding="utf-8")
    assert preview_document("init.lua", path).language == "lua"


def test_a_source_files_outline_is_its_definitions(tmp_path):
    """t on a code file said it had no headings; it lists the definitions, a class's methods
    under it, by the grammar of the language (Python by ast, Go by tree-sitter)."""
    python = tmp_path / "store.py"
    python.write_text(
        "import os\n\n\nclass Store:\n    def open(self):\n        pass\n\n"
        "    @property\n    def size(self):\n        return 1\n\n\ndef main():\n    Store()\n",
        encoding="utf-8",
    )
    assert outline_of(python) == [
        (1, "class Store", 4),
        (2, "def open", 5),
        (2, "def size", 8),
        (1, "def main", 13),
    ]
    go = tmp_path / "main.go"
    go.write_text(
        "package main\n\n// Server serves.\ntype Server struct{}\n\n"
        "func (s *Server) Run() error {\n\treturn nil\n}\n",
        encoding="utf-8",
    )
    outline = [(e.title, e.line) for e in text_outline(preview_document("main.go", go))]
    assert outline == [("type Server struct", 3), ("func (s *Server) Run() error", 6)]
    broken = tmp_path / "broken.py"
    broken.write_text("def oops(:\n", encoding="utf-8")
    assert text_outline(preview_document("broken.py", broken)) == ()
