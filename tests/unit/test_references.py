"""Extracting references from files: Markdown links, definitions, images, backtick paths."""

from __future__ import annotations

import pytest

from explorer.core.ingest.chunker import chunk_file
from explorer.core.ingest.formats.registry import is_markdown
from explorer.core.ingest.references import (
    MAX_INLINE_TAGS,
    FileReference,
    LinkSyntax,
    ReferenceKind,
    extract_link_facts,
    extract_references,
    resolve_target,
)
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds


def references_of(rel_path: str, text: str, body_start: int = 0):
    """The references of a file as indexing reads them: as Markdown when its format's text is."""
    markdown = is_markdown(rel_path)
    return extract_references(rel_path, text, body_start, markdown=markdown)


LINK, IMAGE, DEFINITION, MENTION, EMBED = (
    ReferenceKind.LINK,
    ReferenceKind.IMAGE,
    ReferenceKind.DEFINITION,
    ReferenceKind.MENTION,
    ReferenceKind.EMBED,
)


def refs(rel_path: str, text: str) -> list[tuple[int, str, str, str]]:
    return [(r.line, r.kind, r.raw, r.target) for r in references_of(rel_path, text)]


@pytest.mark.parametrize(
    ("source", "raw", "target"),
    [
        ("docs/a.md", "b.md", "docs/b.md"),
        ("docs/a.md", "./b.md", "docs/b.md"),
        ("docs/a.md", "../guides/b.md", "guides/b.md"),
        ("docs/deep/a.md", "../../b.md", "b.md"),
        ("docs/a.md", "/guides/b.md", "guides/b.md"),  # absolute: from the root
        ("a.md", "guides/", "guides"),
        ("docs/a.md", "b.md#section", "docs/b.md"),
        ("docs/a.md", "b.md?plain=1#L3", "docs/b.md"),
        ("docs/a.md", "my%20notes.md", "docs/my notes.md"),
        ("docs/a.md", "sub/./../b.md", "docs/b.md"),
    ],
)
def test_targets_resolve_relative_to_the_file_or_from_the_root(source, raw, target):
    assert resolve_target(source, raw) == target


@pytest.mark.parametrize(
    "raw",
    [
        "https://example.org/a.md",
        "http://x",
        "mailto:someone@example.org",
        "ftp://host/file.txt",
        "//cdn.example.org/x.js",
        "#just-an-anchor",
        "?query-only",
        "",
        "../../outside.md",  # leaves the root
        "/../outside.md",
    ],
)
def test_urls_anchors_and_paths_outside_the_root_are_not_file_references(raw):
    assert resolve_target("docs/a.md", raw) is None


def test_markdown_links_definitions_and_images_with_their_lines():
    text = (
        "---\ntitle: T\ntags: [x]\n---\n"  # lines 1-4: front matter
        "# Heading with [a link](../up.md)\n"  # 5
        "\n"
        "A paragraph with [one](other.md#part) and\n"  # 7
        "on its second line [two](/from/root.md).\n"  # 8
        "![a picture](img/pic.png) and [by label][ref], <https://example.org>,\n"  # 9
        "[mail](mailto:a@b.c), [anchor](#top).\n"  # 10
        "\n"
        "[ref]: defs/target.md 'A title'\n"  # 12
        "\n"
        "```\n[not a link](code.md)\n```\n"  # 14-16
        "    [indented code](code2.md)\n"  # 17
        "\n"
        "| a | b |\n|---|---|\n| [in a cell](cell.md) | x |\n"  # 19-21
    )
    body = text.index("# Heading")
    found = [(r.line, r.kind, r.raw, r.target) for r in references_of("docs/a.md", text, body)]
    assert found == [
        (5, LINK, "../up.md", "up.md"),
        (7, LINK, "other.md#part", "docs/other.md"),
        (8, LINK, "/from/root.md", "from/root.md"),
        (9, IMAGE, "img/pic.png", "docs/img/pic.png"),
        (12, DEFINITION, "defs/target.md", "docs/defs/target.md"),  # once, where it is defined
        (21, LINK, "cell.md", "docs/cell.md"),
    ]


def test_backtick_paths_are_mentions_with_both_readings():
    text = (
        "See `src/app.py`, `./notes/b.md` and `/etc/nginx/nginx.conf`.\n"
        "Not paths: `tern.toml`, `./tern.toml`, `../up.md`, `a.b`, `https://x.org/a.md`,"
        " `some code()`, `dir/`, `~/.config/x.toml`.\n"
        "```\n`src/in_code.py`\n```\n"
    )
    found = references_of("docs/a.md", text)
    assert references_of("a.md", "`.github/workflows/ci.yml`")[0].target == (
        ".github/workflows/ci.yml"
    )
    assert found == [
        FileReference(1, MENTION, "./notes/b.md", "docs/notes/b.md", ""),
        FileReference(1, MENTION, "/etc/nginx/nginx.conf", "etc/nginx/nginx.conf", ""),
        FileReference(1, MENTION, "src/app.py", "docs/src/app.py", "src/app.py"),
    ]


def test_backtick_paths_in_code_and_plain_text_files():
    source = (
        '"""Backups.\n\nSee `guides/backups.md` and ``docs/restore.rst``.\n"""\n'
        "x = '`not/closed.md'\n"
        "# also `runbooks/failed.md`\n"
    )
    found = refs("src/tern/backup.py", source)
    assert found == [
        (3, MENTION, "docs/restore.rst", "src/tern/docs/restore.rst"),
        (3, MENTION, "guides/backups.md", "src/tern/guides/backups.md"),
        (6, MENTION, "runbooks/failed.md", "src/tern/runbooks/failed.md"),
    ]
    assert references_of("src/tern/backup.py", source)[1].alternative == "guides/backups.md"


def test_the_chunker_returns_the_references_with_the_chunks():
    text = "---\ntitle: T\n---\n# A\n\nSee [b](b.md).\n"
    chunked = chunk_file("docs/a.md", text, FakeEmbedder().token_spans)
    assert chunked.references == [FileReference(6, LINK, "b.md", "docs/b.md")]
    assert chunked.chunks and chunked.metadata["title"] == "T"


# -- wikilinks, embeds and Hugo refs -----------------------------------------------------------
WIKILINK, REF = LinkSyntax.WIKILINK, LinkSyntax.HUGO_REF


def forms(rel_path: str, text: str) -> list[tuple[int, str, str, str, str]]:
    return [(r.line, r.kind, str(r.syntax), r.raw, r.target) for r in references_of(rel_path, text)]


def test_every_wikilink_form_is_a_reference_with_its_target():
    text = (
        "# Notes\n"  # 1
        "\n"
        "[[Note]], [[Note|shown text]] and [[folder/Other Note#Heading]].\n"  # 3
        "A block [[Note#^block-id]], an embed ![[diagram.png]], a note embed ![[Note]].\n"  # 4
        "This note's heading [[#Local]] is no file, nor is [[ ]] or [[a\nb]].\n"  # 5-6
    )
    assert forms("vault/a.md", text) == [
        (3, LINK, WIKILINK, "[[Note]]", "Note"),
        (3, LINK, WIKILINK, "[[Note]]", "Note"),
        (3, LINK, WIKILINK, "[[folder/Other Note#Heading]]", "folder/Other Note"),
        (4, EMBED, WIKILINK, "![[Note]]", "Note"),
        (4, EMBED, WIKILINK, "![[diagram.png]]", "diagram.png"),
        (4, LINK, WIKILINK, "[[Note#^block-id]]", "Note"),
    ]


def test_a_line_of_100000_wikilinks_is_read_whole():
    line = " ".join(f"[[Note {n}]]" for n in range(100_000))  # 1.49 MB on one line
    text = "# Hub\n\n" + line + " [a link](far/page.md)\nA short line: [[Last]]\n"
    found = references_of("hub.md", text)
    assert len(found) == 100_002
    assert {ref.line for ref in found[:100_001]} == {3}
    assert {ref.target for ref in found} >= {"Note 0", "Note 50000", "Note 99999"}
    assert [(r.line, r.raw) for r in found if not r.target.startswith("Note")] == [
        (3, "far/page.md"),
        (4, "[[Last]]"),
    ]


def test_wikilinks_in_code_are_not_links_and_a_bracketed_link_text_is_commonmark():
    text = (
        "Code `[[Not a link]]` and\n"
        "```\n[[Not either]]\n```\n"
        "    [[Indented code]]\n"
        "\n"
        "A link whose text is [1]: [[1]](https://example.org) and [[2]](other.md).\n"  # 7
        "| a | b |\n|---|---|\n| [[Table Note\\|alias]] | x |\n"  # 8-10: the bar escaped
    )
    assert forms("a.md", text) == [
        (7, LINK, "path", "other.md", "other.md"),
        (10, LINK, WIKILINK, "[[Table Note]]", "Table Note"),
    ]


def test_hugo_ref_and_relref_shortcodes_wherever_they_stand():
    text = (
        '[A]({{< ref "/waf/policies/configuration.md#default-policy" >}}) and\n'  # 1
        '[B](<{{< relref "install" >}}>), bare {{< ref "page.md" >}},\n'  # 2
        'named {{< ref path="a/b" lang="en" >}}, with percent {{% relref "c/d.md" %}}.\n'  # 3
        'Other shortcodes are text: {{< note >}} and {{<card titleUrl="/x/">}}.\n'  # 4
        '`{{< ref "in/code.md" >}}`\n'  # 5
    )
    assert forms("content/a.md", text) == [
        (
            1,
            LINK,
            REF,
            '{{< ref "/waf/policies/configuration.md#default-policy" >}}',
            "/waf/policies/configuration.md",
        ),
        (2, LINK, REF, '{{< ref "page.md" >}}', "page.md"),
        (2, LINK, REF, '{{< relref "install" >}}', "install"),
        (3, LINK, REF, '{{% relref "c/d.md" %}}', "c/d.md"),
        (3, LINK, REF, '{{< ref "a/b" >}}', "a/b"),
    ]


def test_a_link_leaving_the_root_is_kept_for_the_resolver_to_judge():
    # On a site whose root is its docs folder, ../blog/ may lead into the site around it.
    assert forms("a.md", "[blog](../blog/) and [up](../../x.md)\n") == [
        (1, LINK, "path", "../../x.md", ""),
        (1, LINK, "path", "../blog/", ""),
    ]


# -- inline tags --------------------------------------------------------------------------------
def tags_of(text: str) -> list[str]:
    return extract_link_facts("note.md", text, markdown=True).tags


def test_inline_tags_follow_obsidians_grammar():
    text = (
        "#rough idea, then #todo/later and #Rough again; a #tag_with-dash.\n"
        "Not tags: C#, issue #123, #2024/01, a#b, https://example.org/page#fragment,\n"
        "[a link](https://example.org/#anchor), `#code` and\n"
        "```\n#fenced\n```\n"
        "#ünïcode-tag\n"
    )
    assert tags_of(text) == ["rough", "todo/later", "tag_with-dash", "ünïcode-tag"]


def test_a_heading_is_no_tag_and_its_text_holds_none():
    assert tags_of("# Heading\n\n## Section #notatag\n\nBody #real\n") == ["real"]


def test_inline_tags_join_the_front_matter_tags_as_the_chunker_keeps_them():
    text = "---\ntags: [Project]\n---\n# A\n\nSome #project work and #draft notes.\n"
    chunked = chunk_file("notes/a.md", text, FakeEmbedder().token_spans)
    assert chunked.metadata["tags"] == ["Project", "draft"]
    assert chunk_file("a.py", "# #not-a-tag\n", FakeEmbedder().token_spans).metadata == {}


def test_a_paragraph_of_thousands_of_tags_keeps_the_first_hundred_at_once():
    """The tags found so far were folded again for each new one, and the cap was looked at
    only between paragraphs: one paragraph of 8,000 tags kept all of them, in 6 s."""
    with at_most_cpu_seconds(1.0):
        tags = tags_of("Tagged: " + " ".join(f"#tag{n}" for n in range(8_000)) + "\n")
    assert tags == [f"tag{n}" for n in range(MAX_INLINE_TAGS)]
