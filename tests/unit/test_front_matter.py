"""Front matter is untrusted: bounded parsing, values kept as written, every field capped."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from explorer.core.ingest.chunker import chunk_file
from explorer.core.ingest.front_matter import (
    FIELD_CAPS,
    MAX_FRONT_MATTER_CHARS,
    MAX_TAGS,
    front_matter_end,
    read_front_matter,
)
from tests.hostile.corpus import alias_bomb_yaml
from tests.timing import at_most_cpu_seconds

BOMB_DOC = f"---\n{alias_bomb_yaml()}---\n# Body\n\nText.\n"


def words(text: str) -> list[tuple[int, int]]:
    import re

    return [m.span() for m in re.finditer(r"\S+", text)]


def _limit_memory() -> None:  # in the child: 1 GiB of address space at most
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_alias_bomb_costs_milliseconds_and_bounded_memory() -> None:
    assert len(alias_bomb_yaml().encode()) < 400
    code = (
        "import sys, time\n"
        "from explorer.core.ingest.chunker import chunk_file\n"
        "doc = sys.stdin.read()\n"
        "started = time.perf_counter()\n"
        "result = chunk_file('bomb.md', doc, lambda t: [(0, len(t))] if t.strip() else [])\n"
        "print(time.perf_counter() - started, len(str(result.metadata)), result.notes)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=BOMB_DOC,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 0, done.stderr[-500:]
    seconds, metadata_chars, notes = done.stdout.split(" ", 2)
    assert float(seconds) < 0.5
    assert int(metadata_chars) < 100
    assert "alias" in notes


def test_alias_bomb_gives_a_note_and_a_body_after_the_block() -> None:
    with at_most_cpu_seconds(0.5):
        front = read_front_matter(BOMB_DOC)
    assert front.metadata == {}
    assert front.notes == ("front matter ignored: YAML aliases (*name) are not supported",)
    assert BOMB_DOC[front.body_start :].startswith("# Body")
    result = chunk_file("bomb.md", BOMB_DOC, words)
    assert result.notes == list(front.notes)
    assert all("lol" not in chunk.text for chunk in result.chunks)


def test_even_one_harmless_alias_is_refused() -> None:
    text = "---\nbase: &b Guide\ntitle: *b\n---\nbody\n"
    front = read_front_matter(text)
    assert front.metadata == {} and "alias" in front.notes[0]


def test_values_are_kept_as_written() -> None:
    text = "---\ntitle: yes\nversion: 1.10\ndescription: 2024-01-02\ntags: [1.0, on, x]\n---\nb\n"
    assert read_front_matter(text).metadata == {
        "title": "yes",
        "version": "1.10",
        "description": "2024-01-02",
        "tags": ["1.0", "on", "x"],
    }
    toml = '+++\ntitle = "T"\nversion = 1.10\ntags = ["a", 2]\ndescription = 2024-01-02\n+++\n'
    assert read_front_matter(toml).metadata == {
        "title": "T",
        "version": "1.10",
        "tags": ["a", "2"],
        "description": "2024-01-02",
    }


def test_null_and_empty_values_are_absent() -> None:
    text = "---\ntitle: null\ndescription: ~\nversion:\ntags: []\n---\nbody\n"
    front = read_front_matter(text)
    assert front.metadata == {} and front.notes == ()


def test_values_of_the_wrong_shape_are_dropped_with_a_note_never_a_repr() -> None:
    text = (
        "---\ntitle: {nested: mapping}\nversion: 1.10\ndescription: [one, two]\n"
        "tags: [red, [deep, list], {k: v}, blue]\n---\nbody\n"
    )
    front = read_front_matter(text)
    assert front.metadata == {"version": "1.10", "tags": ["red", "blue"]}
    assert "title ignored: dict, not text" in front.notes
    assert "description ignored: list, not text" in front.notes
    assert sum("a tag ignored" in note for note in front.notes) == 2
    kept = [front.metadata["version"], *front.metadata["tags"]]
    assert not any("{" in value or "[" in value for value in kept)


def test_every_field_is_capped() -> None:
    long = "word " * 700
    tags = ", ".join(f"t{i}" for i in range(500))
    text = f"---\ntitle: {long}\ndescription: {long}\nversion: {long}\ntags: [{tags}]\n---\nb\n"
    front = read_front_matter(text)
    for key in ("title", "description", "version"):
        assert len(front.metadata[key]) <= FIELD_CAPS[key], key
    assert len(front.metadata["tags"]) == MAX_TAGS
    assert front.metadata["title"].endswith("…")
    assert "title cut to 300 characters" in front.notes


def test_a_tag_may_hold_a_comma_and_a_string_of_tags_is_split_on_commas() -> None:
    listed = read_front_matter('---\ntags: ["C, C++", docs]\n---\nbody\n')
    assert listed.metadata["tags"] == ["C, C++", "docs"]
    toml = read_front_matter('+++\ntags = ["Data, AI"]\n+++\nbody\n')
    assert toml.metadata["tags"] == ["Data, AI"]
    written = read_front_matter("---\ntags: ops, backup ,, \n---\nbody\n")
    assert written.metadata["tags"] == ["ops", "backup"]


def test_long_tags_are_cut_whole_to_the_cap() -> None:
    tags = ", ".join("x" * 90 + str(i) for i in range(20))
    front = read_front_matter(f"---\ntags: [{tags}]\n---\nbody\n")
    kept = front.metadata["tags"]
    assert 0 < len(kept) < 20 and len(", ".join(kept)) <= FIELD_CAPS["tags"]
    assert all(tag.startswith("x" * 90) for tag in kept)
    assert f"tags cut to {FIELD_CAPS['tags']} characters" in front.notes


def test_oversized_or_deep_blocks_are_refused_quickly() -> None:
    big = "---\ntitle: " + "x" * (MAX_FRONT_MATTER_CHARS + 10) + "\n---\nbody\n"
    front = read_front_matter(big)
    assert front.metadata == {} and "longer than" in front.notes[0]
    assert big[front.body_start :] == "body\n"
    deep = "---\ntitle: " + "[" * 10_000 + "]" * 10_000 + "\n---\nbody\n"
    with at_most_cpu_seconds(0.5):
        front = read_front_matter(deep)
    assert front.metadata == {} and "nested deeper" in front.notes[0]


@pytest.mark.parametrize(
    "text",
    [
        "---\n!!python/object/apply:os.system ['echo hi']\n---\n",
        "---\ntitle: !!binary aGVsbG8=\n---\n",
        "---\n- a list\n---\n",
        "+++\ntitle = [\n+++\n",
    ],
)
def test_hostile_or_odd_blocks_never_raise(text: str) -> None:
    front = read_front_matter(text)
    assert front.metadata == {} or front.metadata.get("title") is None


def test_preview_and_index_agree_on_where_the_body_starts() -> None:
    text = "---\ntitle: A\n---\n# Top\n"
    assert front_matter_end(text) == read_front_matter(text).body_start == text.index("# Top")
    assert front_matter_end("+++\ntitle = 'a'\n+++\nbody") == len("+++\ntitle = 'a'\n+++\n")
    assert front_matter_end("no front matter") == 0


def test_link_names_aliases_slug_and_url_are_kept_as_written() -> None:
    obsidian = read_front_matter("---\naliases: [Nickname, 'Other Name']\n---\nBody\n").metadata
    assert obsidian == {"aliases": ["Nickname", "Other Name"]}
    # One string is one alias (a Hugo URL, or an older Obsidian note's single alias).
    hugo = "---\naliases: /old/path/\nslug: first-post\nurl: /blog/first/\n---\nBody\n"
    assert read_front_matter(hugo).metadata == {
        "aliases": ["/old/path/"],
        "slug": "first-post",
        "url": "/blog/first/",
    }
    jekyll = read_front_matter("---\nalias: Short\npermalink: /team/\n---\n").metadata
    assert jekyll == {"aliases": ["Short"], "url": "/team/"}


def test_link_names_of_the_wrong_shape_are_dropped_and_capped() -> None:
    front = read_front_matter("---\naliases: {a: 1}\nslug: [x]\nurl: 3\n---\n")
    assert front.metadata == {"url": "3"}
    assert "aliases ignored: dict, not text" in front.notes
    many = "---\naliases: [" + ", ".join(f"name{i}" for i in range(MAX_TAGS + 5)) + "]\n---\n"
    kept = read_front_matter(many)
    assert len(kept.metadata["aliases"]) <= MAX_TAGS
    assert len(", ".join(kept.metadata["aliases"])) <= FIELD_CAPS["aliases"]
