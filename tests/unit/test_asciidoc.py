"""AsciiDoc: sections at its titles, the document title, and the files a page names."""

from __future__ import annotations

from explorer.core.ingest.formats import format_for
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.links import file_links
from tests.conftest import synced_index, write_files
from tests.timing import at_most_cpu_seconds

PAGE = """= Installing the Widget
:toc:

Intro text, see xref:configure.adoc#ports[the ports] and <<reference.adoc#,the reference>>.

== Requirements

image::diagram.png[A diagram]

----
== Not a title: a listing block
xref:shown-only.adoc[]
----

// == Not a title: a comment

=== On Linux ===

include::partial$linux.adoc[]

include::{snippets}/shared.adoc[]

## Markdown-style title

link:https://example.org[a site] and link:notes.txt[notes].
"""


def test_titles_outside_blocks_and_comments_are_sections_and_the_first_is_the_documents():
    document = format_for("guide/install.adoc").from_text("guide/install.adoc", PAGE)
    assert document.metadata["title"] == "Installing the Widget"
    assert [(h.level, h.title) for h in document.headings or ()] == [
        (1, "Installing the Widget"),
        (2, "Requirements"),
        (3, "On Linux"),
        (2, "Markdown-style title"),
    ]
    links = [(r.line, r.kind.value, r.raw) for r in document.references or ()]
    assert links == [
        (4, "link", "configure.adoc#ports"),
        (4, "link", "reference.adoc"),
        (8, "image", "diagram.png"),
        (19, "embed", "partial$linux.adoc"),
        (25, "link", "notes.txt"),
    ]


def test_a_pages_links_read_alone_hold_its_backtick_paths_too():
    """An index made before reads a page's links alone once (no chunking): they are the ones
    a full reading stores, the paths mentioned in backticks with them."""
    asciidoc = format_for("a/page.adoc")
    document = asciidoc.from_text("a/page.adoc", "= T\n\nSee `docs/setup.md` and xref:b.adoc[].\n")
    found = asciidoc.link_facts("a/page.adoc", document).references
    assert [(r.line, r.kind.value, r.raw) for r in found] == [
        (3, "link", "b.adoc"),
        (3, "mention", "docs/setup.md"),
    ]


def test_an_antora_modules_pages_link_from_its_pages_folder(tmp_path):
    """Asciidoctor reads a path from the page's folder; Antora reads a page's ``xref`` from its
    module's ``pages/``, an ``image`` from ``images/``."""
    root = write_files(
        tmp_path / "docs",
        {
            "modules/ROOT/pages/guide/install.adoc": PAGE,
            "modules/ROOT/pages/configure.adoc": "= Configure\n\nPorts.\n",
            "modules/ROOT/pages/guide/reference.adoc": "= Reference\n\nAll of it.\n",
            "modules/ROOT/images/diagram.png": "png",
            "modules/ROOT/partials/linux.adoc": "On Linux, run the package manager.\n",
            "modules/ROOT/pages/guide/notes.txt": "notes\n",
        },
    )
    with synced_index(root, tmp_path / "index") as index:
        found = file_links(index, "modules/ROOT/pages/guide/install.adoc")
        hit = index.keywords.chunks_by_id(
            index.keywords.chunk_ids("modules/ROOT/pages/configure.adoc")
        )
    assert [(link.line, link.target, link.state) for link in found.outgoing] == [
        (4, "modules/ROOT/pages/configure.adoc", LinkState.RESOLVED),
        (4, "modules/ROOT/pages/guide/reference.adoc", LinkState.RESOLVED),
        (8, "modules/ROOT/images/diagram.png", LinkState.RESOLVED),
        (19, "modules/ROOT/partials/linux.adoc", LinkState.RESOLVED),
        (25, "modules/ROOT/pages/guide/notes.txt", LinkState.RESOLVED),
    ]
    assert any(chunk.heading.startswith("Configure") for chunk in hit.values())


def test_a_named_family_outside_an_antora_module_is_missing_not_the_root():
    from explorer.core.ingest.references import ReferenceKind
    from explorer.core.retrieval.link_resolution import asciidoc_paths

    assert asciidoc_paths("a/b.adoc", "partial$x.adoc", ReferenceKind.EMBED) == ["a/partial$x.adoc"]
    assert asciidoc_paths("m/pages/b.adoc", "image$d.png", ReferenceKind.IMAGE) == [
        "m/images/d.png"
    ]


def test_hostile_pages_read_in_linear_time():
    text = (
        "".join(f"== T{n}\n----\nxref:a{n}[ <<b.adoc#,x\n" for n in range(30_000)) + "=" * 100_000
    )
    # A title with a long run of blanks (a pattern that cut closing marks took over a minute),
    # before the last line opens a block of its own.
    text = "== a" + " " * 100_000 + "b\n" + text
    with at_most_cpu_seconds(3.0):
        format_for("big.adoc").from_text("big.adoc", text)


def test_an_armoured_key_is_not_asciidoc():
    """``.asc`` is also a PGP key or signature (``/etc/apt/trusted.gpg.d/*.asc``): not claimed."""
    from explorer.core.ingest.scanner import DEFAULT_EXTENSIONS

    assert (
        format_for("docs/guide.adoc").name == format_for("docs/guide.asciidoc").name == "asciidoc"
    )
    assert "asc" not in DEFAULT_EXTENSIONS
