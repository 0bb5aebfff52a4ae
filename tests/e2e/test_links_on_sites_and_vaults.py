"""End to end, as processes: `explorer check-refs` and `explorer links` on a Hugo site whose
root is its `content/en/docs` folder and on an Obsidian vault, with the real bundled model's
tokenizer (check-refs builds the keyword index only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_explorer, write_files

pytestmark = pytest.mark.e2e

SITE = {
    "hugo.yaml": "title: A site\n",
    "content/en/_index.md": "# Home\n",
    "content/en/blog/post.md": "# A post\n",
    "content/en/docs/_index.md": (
        "# Docs\n\nStart with the [collector](/docs/collector/) or the"
        " [Java SDK](languages/java/sdk/).\n"
        "News is on the [blog](/blog/post/).\n"
    ),
    "content/en/docs/collector/_index.md": "# Collector\n\n[Install it](install/)\n",
    "content/en/docs/collector/install.md": "# Install\n",
    "content/en/docs/languages/java/sdk.md": (
        '# SDK\n\nSee [the API](../api/), {{< ref "/docs/collector/install.md" >}}\n'
        "and [the exporters](../exporters/).\n"
    ),
    "content/en/docs/languages/java/api.md": "# API\n",
}

VAULT = {
    ".obsidian/app.json": "{}\n",
    "Home.md": (
        "# Home\n\n[[Daily notes]], [[Projects/Garden|the garden]], ![[plan.png]], [[Someday]]\n"
    ),
    "Daily notes.md": "# Daily\n\nBack [[home]].\n",
    "Projects/Garden.md": "---\naliases: [Allotment]\n---\n# Garden\n\n#outdoors\n",
    "attachments/plan.png": "picture\n",
    "Later.md": "# Later\n\n[[allotment]]\n",
}


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("e2e-links-env")
    environ = {**os.environ, "EXPLORER_DATA_DIR": str(base / "data"), "HF_HUB_OFFLINE": "1"}
    for name in ("EXPLORER_INDEX_DIR", "EXPLORER_MODEL", "EXPLORER_CHROMA_URL"):
        environ.pop(name, None)
    return environ


def test_a_hugo_docs_folder_checks_clean_but_for_one_page_and_says_what_lies_outside(
    tmp_path: Path, env: dict[str, str]
):
    root = write_files(tmp_path / "site", SITE) / "content" / "en" / "docs"
    done = run_explorer("check-refs", root, env=env)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "languages/java/sdk.md:4: missing ../exporters/ → languages/java/exporters"
    ]
    assert "1 missing reference in 1 file (7 checked: 5 resolved, 1 outside the root)" in (
        done.stderr
    )
    assert "links resolved as: hugo site: /docs/ is ./" in done.stderr
    data = json.loads(run_explorer("check-refs", root, "--json", env=env).stdout)
    assert (data["references"], data["resolved"]) == (7, 5)
    assert [(link["raw"], link["state"]) for link in data["outside_root"]] == [
        ("/blog/post/", "outside-root")
    ]

    links = json.loads(
        run_explorer("links", root / "languages/java/api.md", "--json", env=env, check=True).stdout
    )
    assert [(link["source"], link["raw"]) for link in links["backlinks"]] == [
        ("languages/java/sdk.md", "../api/")
    ]
    text = run_explorer("links", root / "_index.md", env=env, check=True).stdout
    assert "L3 → collector/_index.md  /docs/collector/" in text
    assert "L3 → languages/java/sdk.md  languages/java/sdk/" in text
    assert "L4 → /blog/post/  /blog/post/  outside the root" in text


def test_an_obsidian_vault_links_by_note_name(tmp_path: Path, env: dict[str, str]):
    root = write_files(tmp_path / "vault", VAULT)
    done = run_explorer("check-refs", root, "--json", env=env)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert [(link["raw"], link["target"]) for link in data["missing"]] == [
        ("[[Someday]]", "Someday.md")
    ]
    assert data["layout"] == "Obsidian vault: links by path and by note name"
    links = json.loads(
        run_explorer("links", root / "Projects/Garden.md", "--json", env=env, check=True).stdout
    )
    assert [(link["source"], link["raw"]) for link in links["backlinks"]] == [
        ("Home.md", "[[Projects/Garden]]"),
        ("Later.md", "[[allotment]]"),
    ]
    home = json.loads(run_explorer("links", root / "Home.md", "--json", env=env, check=True).stdout)
    assert [(link["target"], link["state"]) for link in home["links"]] == [
        ("attachments/plan.png", "resolved"),
        ("Daily notes.md", "resolved"),
        ("Projects/Garden.md", "resolved"),
        ("Someday.md", "missing"),
    ]
    # The inline #tag is a tag for filters, beside front-matter tags.
    found = run_explorer(
        "search", "garden", root, "--mode", "keyword", "--tag", "outdoors", "--json", env=env
    )
    assert [hit["path"] for hit in json.loads(found.stdout)["results"]] == ["Projects/Garden.md"]
