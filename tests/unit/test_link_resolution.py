"""Links resolved the way each folder's publisher resolves them: Hugo, Jekyll, MkDocs and
Docusaurus sites, Obsidian vaults and plain folders, on real folders and indexes (fake model)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.ingest.site_layout import Mount, SiteKind, SiteLayout, detect_layout
from explorer.core.models import SearchMode
from explorer.core.retrieval.link_resolution import SiteRoutes
from explorer.core.retrieval.links import (
    FileLinks,
    LinksUnavailable,
    file_links,
    missing_references,
)
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import DATABASE_NAME, Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds


def build(root: Path, tmp_path: Path, **overrides: object) -> Index:
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name, **overrides)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync(embed=False)
    return index


def leads(found: FileLinks) -> dict[str, tuple[str, str]]:
    """Each outgoing link as written → (state, target)."""
    return {link.raw: (str(link.state), link.target) for link in found.outgoing}


@pytest.fixture
def indexes():
    opened: list[Index] = []

    def make(root: Path, tmp_path: Path, **overrides: object) -> Index:
        opened.append(build(root, tmp_path, **overrides))
        return opened[-1]

    yield make
    for index in opened:
        index.close()


# -- Hugo -----------------------------------------------------------------------------------------
HUGO_SITE = {
    "hugo.toml": 'baseURL = "https://example.org/"\n',
    "content/_index.md": "# Home\n\n[Docs](/docs/) and [the SDK](/docs/languages/java/sdk/).\n",
    "content/docs/_index.md": (
        "# Docs\n\n[Collector](collector/) from the section's own URL, [Java](languages/java),\n"
        "[the blog](../blog/) is a sibling section.\n"
    ),
    "content/docs/collector/_index.md": "# Collector\n",
    "content/docs/collector/install.md": "# Install\n",
    "content/docs/languages/java/_index.md": "# Java\n\n[The API](api/) and [SDK](sdk).\n",
    "content/docs/languages/java/sdk.md": (
        "# SDK\n\n[The API](../api/) is a sibling page, [Install](../../../collector/install/),\n"
        "[Bundle](../bundle/), [Readme](../readme-section/) and [a typo](../apy/),\n"
        "[the .md file](api.md), [site-absolute](/docs/collector/) and [moved](/new/place/),\n"
        "[an old URL](/legacy/page/), [by slug](/blog/first-post/),\n"
        "![a picture](/images/logo.png) and [text file](/files/notes.txt).\n"
        '{{< ref "/docs/collector/install.md" >}}, {{< relref "api" >}},\n'
        '{{< ref "api.md#usage" >}}, {{< ref "install.md" >}}, {{< ref "/docs/collector" >}},\n'
        '{{< ref "/docs/nowhere.md" >}}.\n'
    ),
    "content/docs/languages/java/api.md": "# API\n",
    "content/docs/languages/java/bundle/index.md": "# A page bundle\n",
    "content/docs/languages/java/readme-section/README.md": "# A README page\n",
    "content/old/moved.md": "---\nurl: /new/place/\naliases: [/legacy/page/]\n---\n# Moved\n",
    "content/blog/_index.md": "# Blog\n",
    "content/blog/post-1.md": "---\nslug: first-post\n---\n# First\n",
    "static/images/logo.png": "not really a picture\n",
    "static/files/notes.txt": "static text\n",
}


def test_hugo_links_resolve_from_the_pages_url(tmp_path, indexes):
    root = write_files(tmp_path / "site", HUGO_SITE)
    index = indexes(root, tmp_path)
    sdk = "content/docs/languages/java/sdk.md"
    assert leads(file_links(index, sdk)) == {
        "../api/": ("resolved", "content/docs/languages/java/api.md"),
        "../../../collector/install/": ("resolved", "content/docs/collector/install.md"),
        "../bundle/": ("resolved", "content/docs/languages/java/bundle/index.md"),
        "../readme-section/": ("resolved", "content/docs/languages/java/readme-section/README.md"),
        "../apy/": ("missing", "content/docs/languages/java/apy"),
        "api.md": ("resolved", "content/docs/languages/java/api.md"),
        "/docs/collector/": ("resolved", "content/docs/collector/_index.md"),
        "/new/place/": ("resolved", "content/old/moved.md"),
        "/legacy/page/": ("resolved", "content/old/moved.md"),
        "/blog/first-post/": ("resolved", "content/blog/post-1.md"),
        "/images/logo.png": ("resolved", "static/images/logo.png"),
        "/files/notes.txt": ("resolved", "static/files/notes.txt"),
        '{{< ref "/docs/collector/install.md" >}}': (
            "resolved",
            "content/docs/collector/install.md",
        ),
        '{{< relref "api" >}}': ("resolved", "content/docs/languages/java/api.md"),
        '{{< ref "api.md#usage" >}}': ("resolved", "content/docs/languages/java/api.md"),
        '{{< ref "install.md" >}}': ("resolved", "content/docs/collector/install.md"),
        '{{< ref "/docs/collector" >}}': ("resolved", "content/docs/collector/_index.md"),
        '{{< ref "/docs/nowhere.md" >}}': ("missing", "content/docs/nowhere"),
    }
    # An index page is served at its folder: its relative links start there.
    assert leads(file_links(index, "content/docs/languages/java/_index.md")) == {
        "api/": ("resolved", "content/docs/languages/java/api.md"),
        "sdk": ("resolved", "content/docs/languages/java/sdk.md"),
    }
    assert leads(file_links(index, "content/docs/_index.md")) == {
        "collector/": ("resolved", "content/docs/collector/_index.md"),
        "languages/java": ("resolved", "content/docs/languages/java/_index.md"),
        "../blog/": ("resolved", "content/blog/_index.md"),
    }
    check = missing_references(index)
    assert [link.raw for link in check.missing] == ["../apy/", '{{< ref "/docs/nowhere.md" >}}']
    assert check.layout == "hugo site: / is content/, / is static/"
    # Backlinks follow the same resolution.
    api_backlinks = file_links(index, "content/docs/languages/java/api.md").backlinks
    assert sorted({(link.source, link.raw) for link in api_backlinks}) == [
        ("content/docs/languages/java/_index.md", "api/"),
        ("content/docs/languages/java/sdk.md", "../api/"),
        ("content/docs/languages/java/sdk.md", "api.md"),
        ("content/docs/languages/java/sdk.md", '{{< ref "api.md#usage" >}}'),
        ("content/docs/languages/java/sdk.md", '{{< relref "api" >}}'),
    ]


def test_a_root_inside_a_sites_content_reads_site_urls_and_says_what_lies_outside(
    tmp_path, indexes
):
    # A multilingual site, its English docs as the root: served at /docs/, not /en/docs/.
    site = write_files(
        tmp_path / "site",
        {
            "hugo.yaml": "title: A site\n",
            "content/en/_index.md": "# Home\n",
            "content/en/blog/post.md": "# A post\n",
            "content/en/docs/_index.md": (
                "# Docs\n\n[Collector](/docs/collector/), [the blog](../blog/post/),\n"
                "[the blog, absolute](/blog/post/), [gone](/docs/gone/).\n"
            ),
            "content/en/docs/collector/_index.md": "# Collector\n\n[Home](../)\n",
            "content/en/docs/languages/java/sdk.md": "# SDK\n\n[API](../api/)\n",
            "content/en/docs/languages/java/api.md": "# API\n\n[up](../../../../)\n",
        },
    )
    root = site / "content" / "en" / "docs"
    layout = detect_layout(root)
    assert layout.kind is SiteKind.HUGO
    assert [reading[0].url for reading in layout.readings] == ["/en/docs/", "/docs/"]
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "_index.md")) == {
        "/docs/collector/": ("resolved", "collector/_index.md"),
        "../blog/post/": ("outside-root", "/blog/post/"),
        "/blog/post/": ("outside-root", "/blog/post/"),
        "/docs/gone/": ("missing", "gone"),
    }
    assert leads(file_links(index, "languages/java/sdk.md")) == {
        "../api/": ("resolved", "languages/java/api.md")
    }
    assert leads(file_links(index, "collector/_index.md")) == {"../": ("resolved", "_index.md")}
    assert leads(file_links(index, "languages/java/api.md")) == {
        "../../../../": ("outside-root", "/")
    }
    check = missing_references(index)
    assert [link.raw for link in check.missing] == ["/docs/gone/"]
    assert len(check.outside_root) == 3 and check.resolved == 3
    assert check.layout == "hugo site: /docs/ is ./"


DOCS_SECTION = {
    "_index.md": "# Docs\n\n[Concepts](/docs/concepts/), [dists](concepts/distributions/)\n",
    "concepts/_index.md": "# Concepts\n\n[Components](components/), [SDK](../languages/java/)\n",
    "concepts/distributions.md": (
        "# Distributions\n\n[components](../components) and [the glossary](/docs/glossary/),\n"
        "[the SDK](/docs/languages/java/sdk/), [the blog](/blog/post/), [gone](../nowhere/),\n"
        '[the file](components.md), {{< ref "/docs/languages/java/api.md" >}}\n'
    ),
    "concepts/components.md": "# Components\n\n[Home](../../)\n",
    "glossary.md": "# Glossary\n",
    "languages/_index.md": "# Languages\n",
    "languages/java/sdk.md": "# SDK\n\n[The API](../api/), [up](../../../concepts/components/)\n",
    "languages/java/api.md": "# API\n",
}
"""A Hugo site's docs section, as OpenTelemetry's content/en/docs is served at /docs/."""


def every_link(index: Index) -> dict[str, dict[str, tuple[str, str]]]:
    return {path: leads(file_links(index, path)) for path in sorted(DOCS_SECTION)}


@pytest.fixture
def docs_in_and_out_of_site(tmp_path, indexes) -> tuple[Index, Path]:
    """The docs section's index in its Hugo site, and a copy of the folder out of it (as
    vendored docs are), under a name that says nothing of its URL."""
    site = write_files(
        tmp_path / "site",
        {
            "hugo.toml": "title = 'site'\n",
            **{f"content/docs/{p}": t for p, t in DOCS_SECTION.items()},
        },
    )
    in_site = indexes(site / "content" / "docs", tmp_path / "in-site")
    return in_site, write_files(tmp_path / "vendor" / "otel-docs", DOCS_SECTION)


def test_a_hugo_folder_out_of_its_site_resolves_as_in_its_site(
    tmp_path, indexes, docs_in_and_out_of_site
):
    in_site, vendored = docs_in_and_out_of_site
    out_of_site = indexes(vendored, tmp_path / "out-of-site")
    links = every_link(out_of_site)
    assert links == every_link(in_site)
    assert links["concepts/distributions.md"] == {
        "../components": ("resolved", "concepts/components.md"),
        "/docs/glossary/": ("resolved", "glossary.md"),
        "/docs/languages/java/sdk/": ("resolved", "languages/java/sdk.md"),
        "/blog/post/": ("outside-root", "/blog/post/"),
        "../nowhere/": ("missing", "concepts/nowhere"),
        "components.md": ("resolved", "concepts/components.md"),
        '{{< ref "/docs/languages/java/api.md" >}}': ("resolved", "languages/java/api.md"),
    }
    check, expected = missing_references(out_of_site), missing_references(in_site)
    assert [link.raw for link in check.missing] == [link.raw for link in expected.missing]
    assert [link.raw for link in check.missing] == ["../nowhere/"]
    assert check.layout == (
        "hugo site: /docs/ is ./ (section pages without their site; the URL read from their links)"
    )
    backlinks = file_links(out_of_site, "concepts/components.md").backlinks
    assert sorted({link.source for link in backlinks}) == [
        "concepts/_index.md",
        "concepts/distributions.md",
        "languages/java/sdk.md",
    ]
    layout = detect_layout(vendored)
    assert (layout.kind, layout.detached) == (SiteKind.HUGO, True)
    assert [reading[0].url for reading in layout.readings] == ["/otel-docs/", "/"]


def test_link_base_on_a_hugo_folder_out_of_its_site_serves_each_page_at_its_url(
    tmp_path, indexes, docs_in_and_out_of_site
):
    in_site, vendored = docs_in_and_out_of_site
    with_base = indexes(vendored, tmp_path / "with-base", link_base="/docs/")
    assert leads(file_links(with_base, "concepts/distributions.md"))["../components"] == (
        "resolved",
        "concepts/components.md",
    )
    assert every_link(with_base) == every_link(in_site)
    assert missing_references(with_base).layout == "hugo site: /docs/ is ./ (link_base)"


def test_link_base_says_where_the_root_is_served(tmp_path, indexes):
    root = write_files(
        tmp_path / "docs",
        {"a.md": "# A\n\n[B](/guide/b/) and [elsewhere](/other/)\n", "b.md": "# B\n"},
    )
    index = indexes(root, tmp_path, link_base="guide")
    assert leads(file_links(index, "a.md")) == {
        "/guide/b/": ("resolved", "b.md"),
        "/other/": ("outside-root", "/other/"),
    }
    assert missing_references(index).layout == "plain site: /guide/ is ./ (link_base)"


def test_a_hugo_site_without_config_found_by_its_content_folder(tmp_path, indexes):
    # As the nginx docs are kept: content/ with _index.md pages, no hugo.toml. A section's
    # url moves the pages under it (docs.nginx.com serves nic/ at /nginx-ingress-controller/).
    root = write_files(
        tmp_path / "docs",
        {
            "content/_index.md": (
                "# Home\n\n[NIC install](/nginx-ingress-controller/install/helm/)\n"
            ),
            "content/nic/_index.md": "---\nurl: /nginx-ingress-controller/\n---\n# NIC\n",
            "content/nic/install/helm.md": (
                "# Helm\n\n[Home](/) and [NIC](/nginx-ingress-controller/)\n"
            ),
            "README.md": "# Repo\n\n[home page](content/_index.md)\n",
        },
    )
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "content/_index.md")) == {
        "/nginx-ingress-controller/install/helm/": ("resolved", "content/nic/install/helm.md")
    }
    assert leads(file_links(index, "content/nic/install/helm.md")) == {
        "/": ("resolved", "content/_index.md"),
        "/nginx-ingress-controller/": ("resolved", "content/nic/_index.md"),
    }
    # A file outside the content folder links by path.
    assert leads(file_links(index, "README.md")) == {
        "content/_index.md": ("resolved", "content/_index.md")
    }


# -- Jekyll, MkDocs, Docusaurus -----------------------------------------------------------------
def test_jekyll_pages_are_served_as_html_next_to_each_other(tmp_path, indexes):
    root = write_files(
        tmp_path / "site",
        {
            "_config.yml": "title: A Jekyll site\n",
            "index.md": "# Home\n\n[About](/about.html), [team](/team/), [setup](guides/setup)\n",
            "about.md": "# About\n",
            "team.md": "---\npermalink: /team/\n---\n# Team\n",
            "guides/setup.md": (
                "# Setup\n\n[Other](other.html), [up](../about.html), [no](nope.html)\n"
            ),
            "guides/other.md": "# Other\n",
        },
    )
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "index.md")) == {
        "/about.html": ("resolved", "about.md"),
        "/team/": ("resolved", "team.md"),
        "guides/setup": ("resolved", "guides/setup.md"),
    }
    assert leads(file_links(index, "guides/setup.md")) == {
        "other.html": ("resolved", "guides/other.md"),
        "../about.html": ("resolved", "about.md"),
        "nope.html": ("missing", "guides/nope.html"),
    }


def test_mkdocs_links_name_files_and_its_docs_dir_is_read(tmp_path, indexes):
    root = write_files(
        tmp_path / "project",
        {
            "mkdocs.yml": "site_name: Project\ndocs_dir: documentation\n",
            "documentation/index.md": (
                "# Home\n\n[Install](guide/install.md), [API](/reference/api/)\n"
            ),
            "documentation/guide/install.md": (
                "# Install\n\n[API](../reference/api.md), [home](../../)\n"
            ),
            "documentation/reference/api.md": "# API\n",
            "README.md": "# Repo\n",
        },
    )
    layout = detect_layout(root)
    assert (layout.kind, layout.mounts) == (SiteKind.MKDOCS, (Mount("/", "documentation/"),))
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "documentation/index.md")) == {
        "guide/install.md": ("resolved", "documentation/guide/install.md"),
        "/reference/api/": ("resolved", "documentation/reference/api.md"),
    }
    assert leads(file_links(index, "documentation/guide/install.md")) == {
        "../reference/api.md": ("resolved", "documentation/reference/api.md"),
        # served at /guide/install/ (directory URLs), ../../ is the home page
        "../../": ("resolved", "documentation/index.md"),
    }


def test_docusaurus_docs_blog_and_number_prefixes(tmp_path, indexes):
    root = write_files(
        tmp_path / "website",
        {
            "docusaurus.config.js": "module.exports = {};\n",
            "docs/intro.md": (
                "# Intro\n\n[Setup](/docs/guides/setup), [setup file](./guides/01-setup.md),\n"
                "[the post](/blog/hello), [home](/), [renamed](/docs/the-faq)\n"
            ),
            "docs/guides/01-setup.md": "# Setup\n\n[Intro](../intro)\n",
            "docs/faq.md": "---\nslug: the-faq\n---\n# FAQ\n",
            "blog/hello.md": "# Hello\n",
            "src/pages/index.md": "# Landing\n",
        },
    )
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "docs/intro.md")) == {
        "/docs/guides/setup": ("resolved", "docs/guides/01-setup.md"),
        "./guides/01-setup.md": ("resolved", "docs/guides/01-setup.md"),
        "/blog/hello": ("resolved", "blog/hello.md"),
        "/": ("resolved", "src/pages/index.md"),
        "/docs/the-faq": ("resolved", "docs/faq.md"),
    }
    # Served at /docs/guides/setup/, the page's ../intro is /docs/guides/intro: missing, as
    # in a browser.
    assert leads(file_links(index, "docs/guides/01-setup.md")) == {
        "../intro": ("missing", "docs/guides/intro")
    }


# -- plain folders --------------------------------------------------------------------------------
def test_a_plain_folder_links_by_path_with_readme_and_extensionless_pages(tmp_path, indexes):
    root = write_files(
        tmp_path / "notes",
        {
            "index.md": (
                "# Notes\n\n[Guides](guides/), [install](guides/install), [up](../elsewhere.md),\n"
                "[root](/guides/install.md), [folder](assets/)\n"
            ),
            "guides/README.md": "# Guides\n",
            "guides/install.md": "# Install\n",
            "assets/logo.png": "picture\n",
        },
    )
    index = indexes(root, tmp_path)
    assert detect_layout(root).kind is SiteKind.PLAIN
    assert leads(file_links(index, "index.md")) == {
        "guides/": ("resolved", "guides/README.md"),
        "guides/install": ("resolved", "guides/install.md"),
        "../elsewhere.md": ("outside-root", "../elsewhere.md"),
        "/guides/install.md": ("resolved", "guides/install.md"),
        "assets/": ("resolved", "assets"),
    }


ESCAPED = {
    "tab\tname.md": "# a TAB in the name\n",
    "C#.md": "# C sharp\n",
    "100%.md": "# a hundred\n",
    "a%41.md": "# a name holding an escape\n",
    "sub/x.md": "# below\n",
    "bad%zz.md": "# no escape\n",
    "café.md": "# accented\n",
    "q?.md": "# a question\n",
}
ESCAPED_LINKS = (
    "[tab](tab%09name.md) [sharp](C%23.md#intro) [percent](100%25.md) [twice](a%2541.md)\n"
    "[slash](sub%2Fx.md) [invalid](bad%zz.md) [accent](caf%C3%A9.md) [query](q%3F.md?x=1)\n"
    "[not utf-8](b%FF.md) [up](..%2F..%2Fetc%2Fpasswd) [gone](gone%09away.md)\n"
)


def test_every_percent_escape_is_decoded_once(tmp_path, indexes):
    root = write_files(
        tmp_path / "notes",
        {
            **ESCAPED,
            "hub.md": "# Hub\n\n" + ESCAPED_LINKS,
            "page.html": '<p><a href="tab%09name.md">tab</a> <a href="C%23.md">sharp</a></p>',
        },
    )
    (root / os.fsdecode(b"b\xff.md")).write_text("# not UTF-8\n")
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "hub.md")) == {
        "tab\tname.md": ("resolved", "tab\tname.md"),
        "C#.md#intro": ("resolved", "C#.md"),
        "100%.md": ("resolved", "100%.md"),
        "a%41.md": ("resolved", "a%41.md"),
        "sub/x.md": ("resolved", "sub/x.md"),
        "bad%zz.md": ("resolved", "bad%zz.md"),
        "café.md": ("resolved", "café.md"),
        "q?.md?x=1": ("resolved", "q?.md"),
        "b\ufffd.md": ("resolved", "b\\xff.md"),
        "../../etc/passwd": ("outside-root", "../../etc/passwd"),
        "gone\taway.md": ("missing", "gone\taway.md"),
    }
    assert leads(file_links(index, "page.html")) == {
        "tab\tname.md": ("resolved", "tab\tname.md"),
        "C#.md": ("resolved", "C#.md"),
    }
    assert [link.raw for link in missing_references(index).missing] == ["gone\taway.md"]


# -- Obsidian ---------------------------------------------------------------------------------
VAULT = {
    ".obsidian/app.json": "{}\n",
    "Daily notes.md": "# Daily\n",
    "a/Note.md": "# Note in a\n\n## Heading\n\nText ^block-id\n",
    "a/b/Note.md": "# Deeper note\n",
    "people/Ada Lovelace.md": "---\naliases: [Ada, The Enchantress]\n---\n# Ada\n",
    "attachments/diagram.png": "picture\n",
    "Hub.md": (
        "# Hub\n\n[[daily NOTES]], [[Note]], [[b/Note]], [[Note#Heading]], [[Note#^block-id]],\n"
        "[[Note|shown]], ![[diagram.png]], [[Ada]], [[the enchantress]], [[Nowhere]],\n"
        "[[people/Ada Lovelace.md]], ![[missing.png]], `[[In code]]`, [md link](a/Note.md)\n"
    ),
}


def test_wikilinks_resolve_as_obsidian_does(tmp_path, indexes):
    root = write_files(tmp_path / "vault", VAULT)
    assert detect_layout(root).vault
    index = indexes(root, tmp_path)
    assert leads(file_links(index, "Hub.md")) == {
        "[[daily NOTES]]": ("resolved", "Daily notes.md"),  # any case
        "[[Note]]": ("resolved", "a/Note.md"),  # the shortest path of two
        "[[b/Note]]": ("resolved", "a/b/Note.md"),  # a path's end
        "[[Note#Heading]]": ("resolved", "a/Note.md"),
        "[[Note#^block-id]]": ("resolved", "a/Note.md"),
        "![[diagram.png]]": ("resolved", "attachments/diagram.png"),  # by file name
        "[[Ada]]": ("resolved", "people/Ada Lovelace.md"),  # front matter aliases
        "[[the enchantress]]": ("resolved", "people/Ada Lovelace.md"),
        "[[Nowhere]]": ("missing", "Nowhere.md"),
        "[[people/Ada Lovelace.md]]": ("resolved", "people/Ada Lovelace.md"),
        "![[missing.png]]": ("missing", "missing.png"),
        "a/Note.md": ("resolved", "a/Note.md"),
    }
    backlinks = file_links(index, "a/Note.md").backlinks
    assert [(link.source, link.line, link.raw) for link in backlinks] == [
        ("Hub.md", 3, "[[Note#Heading]]"),
        ("Hub.md", 3, "[[Note#^block-id]]"),
        ("Hub.md", 3, "[[Note]]"),
        ("Hub.md", 4, "[[Note]]"),
        ("Hub.md", 5, "a/Note.md"),
    ]
    # A note that does not exist: its backlinks are the links to fix.
    gone = file_links(index, "Nowhere.md")
    assert not gone.exists and [link.raw for link in gone.backlinks] == ["[[Nowhere]]"]
    assert sorted(link.raw for link in missing_references(index).missing) == [
        "![[missing.png]]",
        "[[Nowhere]]",
    ]


def test_links_on_a_line_of_any_length_are_checked(tmp_path, indexes):
    long_line = " ".join(f"[[Daily notes]] word{n}" for n in range(2_000))  # 50,000 characters
    root = write_files(
        tmp_path / "vault", {**VAULT, "Long.md": f"# Long\n\n{long_line} [[Nowhere else]]\n"}
    )
    index = indexes(root, tmp_path)
    missing = missing_references(index).missing
    assert [(link.line, link.raw) for link in missing if link.source == "Long.md"] == [
        (3, "[[Nowhere else]]")
    ]
    backlinks = file_links(index, "Daily notes.md").backlinks
    assert len([link for link in backlinks if link.source == "Long.md"]) == 2_000


def test_a_new_note_mends_the_links_that_named_it(tmp_path, indexes):
    root = write_files(tmp_path / "vault", VAULT)
    index = indexes(root, tmp_path)
    assert "[[Nowhere]]" in [link.raw for link in missing_references(index).missing]
    (root / "deep" / "down").mkdir(parents=True)
    (root / "deep" / "down" / "nowhere.md").write_text("# Now here\n")
    Indexer(index).update_paths(["deep/down/nowhere.md"], embed=False)
    assert leads(file_links(index, "Hub.md"))["[[Nowhere]]"] == (
        "resolved",
        "deep/down/nowhere.md",
    )


# -- aliases and inline tags in search; an index made by an older explorer ----------------------
NAMED = {
    "people/Ada Lovelace.md": (
        "---\naliases: [The Enchantress of Numbers]\n---\n# Ada\n\nWrote the first program.\n"
    ),
    "people/Charles.md": "# Charles\n\nBuilt an engine. #victorian #history/computing\n",
    "people/Other.md": "# Other\n\nAbout numbers, enchanting ones. `#not-a-tag`\n",
    "Hub.md": "# Hub\n\n[[The Enchantress of Numbers]] and [[Charles]]\n",
}


def keyword_paths(index: Index, query: str, **options: object) -> list[str]:
    request = SearchRequest(query=query, mode=SearchMode.KEYWORD, **options)  # type: ignore[arg-type]
    return [hit.path for hit in search(index, request).results]


def test_aliases_are_searched_like_a_title_and_inline_tags_filter(tmp_path, indexes):
    index = indexes(write_files(tmp_path / "vault", NAMED), tmp_path)
    assert keyword_paths(index, "enchantress")[0] == "people/Ada Lovelace.md"
    assert keyword_paths(index, "engine", tags=("victorian",)) == ["people/Charles.md"]
    assert keyword_paths(index, "numbers", tags=("history/computing",)) == []
    assert keyword_paths(index, "engine", tags=("History/Computing",)) == ["people/Charles.md"]
    assert keyword_paths(index, "numbers", tags=("not-a-tag",)) == []


def test_an_index_made_by_an_older_explorer_learns_wikilinks_aliases_and_tags(tmp_path):
    root = write_files(tmp_path / "vault", NAMED)
    index = build(root, tmp_path)
    settings = index.settings
    index.close()
    with sqlite3.connect(settings.index_dir / DATABASE_NAME) as db:  # as explorer 1 left it
        db.execute("ALTER TABLE links DROP COLUMN syntax")
        db.execute("DELETE FROM links")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'links_complete'")
        db.execute("DELETE FROM file_fields")
        db.execute("UPDATE files SET metadata = '{}'")
        db.execute(
            "UPDATE chunks_fts SET title = 'Ada Lovelace', tags = '' WHERE title LIKE 'Ada%'"
        )
        db.execute("UPDATE files_fts SET title = 'Ada Lovelace', tags = '' WHERE title LIKE 'Ada%'")
        db.execute("UPDATE chunks_fts SET tags = ''")
    reopened = Index(settings, FakeEmbedder())
    try:
        with pytest.raises(LinksUnavailable, match="run: explorer index"):
            file_links(reopened, "Hub.md")
        assert "people/Ada Lovelace.md" not in keyword_paths(reopened, "enchantress")
        assert keyword_paths(reopened, "engine", tags=("victorian",)) == []
        report = Indexer(reopened).sync(embed=False)
        assert report.updated == 0 and report.added == 0  # nothing chunked again
        assert leads(file_links(reopened, "Hub.md")) == {
            "[[Charles]]": ("resolved", "people/Charles.md"),
            "[[The Enchantress of Numbers]]": ("resolved", "people/Ada Lovelace.md"),
        }
        assert keyword_paths(reopened, "enchantress")[0] == "people/Ada Lovelace.md"
        assert keyword_paths(reopened, "engine", tags=("victorian",)) == ["people/Charles.md"]
    finally:
        reopened.close()


def test_a_generators_config_is_read_safely(tmp_path):
    # MkDocs configs carry Python tags; an alias bomb is not expanded; neither stops detection.
    tagged = write_files(
        tmp_path / "tagged",
        {
            "mkdocs.yml": (
                "docs_dir: pages\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
                "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
            ),
            "pages/index.md": "# Home\n",
        },
    )
    assert detect_layout(tagged).mounts == (Mount("/", "pages/"),)
    bomb = "docs_dir: pages\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    bombed = write_files(tmp_path / "bombed", {"mkdocs.yml": bomb, "docs/index.md": "# Home\n"})
    assert detect_layout(bombed).mounts == (Mount("/", "docs/"),)  # the default docs_dir


def test_a_site_of_hundreds_of_moved_sections_routes_their_pages_at_once():
    """Each Hugo section whose ``_index.md`` sets ``url`` moves the pages under it; every
    section looked at every page (800 sections of 8,800 pages: 13 s per reading of the site)."""
    pages: dict[str, dict[str, object]] = {}
    for section in range(800):
        pages[f"content/s{section}/_index.md"] = {"url": f"/moved{section}/"}
        for number in range(10):
            pages[f"content/s{section}/deep/p{number}.md"] = {}
    layout = SiteLayout(SiteKind.HUGO, ((Mount("/", "content/"),),))
    with at_most_cpu_seconds(2.0):
        routes = SiteRoutes(layout, layout.mounts, pages)
    assert routes.page("content/moved799/deep/p9") == "content/s799/deep/p9.md"
    assert routes.page("content/moved0/deep/p0/") == "content/s0/deep/p0.md"
    assert routes.page("content/s5/deep/p3") == "content/s5/deep/p3.md"  # where it lies, too
