"""The preview's reading of Markdown (issue 30): Hugo shortcodes, Obsidian callouts and
embedded images rewritten line for line; wikilinks shown by their labels in excerpts."""

from __future__ import annotations

from explorer.core.ingest.formats.preview import preview_document
from explorer.core.ingest.formats.preview_markup import display_markdown, wikilink_labels
from explorer.tui.text_fit import plain_passage
from tests.timing import at_most_cpu_seconds

HUGO = """Intro
{{< call-out class="note" title="Mind this" >}}
Body line one
{{< /call-out >}}
{{< tabs name="install" >}}
{{% tab name="NGINX Plus" %}}
Install it.
{{% /tab %}}
{{< /tabs >}}
{{% include "env-var-note.md" %}}
See [the page]({{< ref "/waf/install.md" >}}) now.
{{< call-out class="warning" >}}Inline warning.{{< /call-out >}}
```shell
helm install --version {{< nic-helm-version >}}
```
"""


def test_hugo_shortcodes_read_as_their_content_line_for_line():
    shown = display_markdown(HUGO).split("\n")
    assert len(shown) == len(HUGO.split("\n"))
    assert shown[1] == "> **Note:** Mind this\\"  # a note, its title on its own line
    assert shown[2] == "> Body line one"
    assert shown[3] == ""
    assert shown[4] == "" and shown[8] == ""  # the tab group's wrapper is gone
    assert shown[5] == "**▸ NGINX Plus**\\"  # a tab is a labelled section
    assert shown[6] == "Install it."
    assert shown[9] == "*⤷ included here: env-var-note.md*"
    assert shown[10] == "See [the page](/waf/install.md) now."
    assert shown[11] == "> **Warning:** Inline warning."
    assert shown[13] == "helm install --version <nic-helm-version>"  # in code: named
    assert "{{" not in display_markdown(HUGO)


def test_a_shortcode_holding_a_long_run_of_spaces_is_shown_at_once():
    """A shortcode's arguments were matched lazily before a pattern of blanks, tried at every
    blank of a long run: a preview line holding 20,000 of them took 32 s to show, on the UI's side.
    (The heading after it, its spaces folded, finds its ``{#id}`` at once.)"""
    from explorer.tui.widgets.anchors import anchor_line

    spaces = " " * 20_000
    text = (
        f"# Intro\n\n{{{{< note{spaces}x\n\n## Far{spaces}away {{#far}}\n\nbody {{{{< tip >}}}}\n"
    )
    with at_most_cpu_seconds(0.5):
        shown = display_markdown(text).split("\n")
        line = anchor_line(text, "far")
    assert shown[2].startswith("{{< note") and "{{" not in shown[6]  # unclosed: kept as written
    assert line == 5


def test_an_obsidian_callout_has_its_title_on_its_own_line():
    text = "> [!note] Vertical bars in tables\n> If you want a bar, escape it.\n\n> [!tip]-\n"
    shown = display_markdown(text).split("\n")
    assert shown[0] == "> **Note: Vertical bars in tables**\\"
    assert shown[1] == "> If you want a bar, escape it."
    assert shown[3] == "> **Tip**"  # nothing under it: no hard break to show as a backslash
    heading_under = display_markdown("> [!NOTE]\n> ## Idea\n> text\n").split("\n")
    assert heading_under[0] == "> **Note**"  # a heading follows: a break would show as "\"


def test_embedded_images_become_links_naming_them():
    text = "![Diagram](img/arch.png) and ![[photo.jpg|300]] and ![[Other note]]\n[![b](b.svg)](u)"
    shown = display_markdown(text).split("\n")
    assert shown[0] == (
        "[🖼 Diagram (arch.png)](<img/arch.png>) and ![[photo.jpg|🖼 photo.jpg]] and ![[Other note]]"
    )
    assert shown[1] == "[🖼 b](u)"  # a badge inside a link: named, the link kept


def test_text_without_markup_comes_back_as_it_is():
    text = "# Title\n\nPlain *text* with `code`.\n"
    assert display_markdown(text) is text


def test_excerpts_show_a_wikilinks_label():
    assert wikilink_labels("See [[Core plugins|core plugin]] and [[Daily]].") == (
        "See core plugin and Daily."
    )
    assert plain_passage("A [[Core plugins|core plugin]] here.", "note.md") == (
        "A core plugin here."
    )


def test_an_image_opened_names_itself_and_how_to_see_it(tmp_path):
    (tmp_path / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 3000)
    document = preview_document("shot.png", tmp_path / "shot.png")
    assert document.note == (
        "Image shot.png (PNG, 3 KB): ctrl+o opens it in the system's image viewer."
    )
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 100)
    assert preview_document("blob.bin", tmp_path / "blob.bin").note == (
        "Binary file: nothing to preview."
    )
