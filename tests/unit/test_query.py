"""Query handling: safe FTS5 expressions, path filters and snippets with highlights."""

from __future__ import annotations

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.query import (
    PathFilter,
    Query,
    QueryError,
    coverage,
    coverage_matchers,
    fold_runs,
    fts_expression,
    is_lookup,
    keyword_pieces,
    make_snippet,
    query_terms,
    topic_pieces,
)
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

HOSTILE_QUERIES = [
    '"unbalanced',
    "a - b",
    "foo*",
    "key:value",
    "(x OR",
    "AND",
    "NOT",
    "NEAR(a b)",
    "ünïcödé 日本語",
    "'",
    "^",
    '""',
    "   ",
    "x\"y 'z' -w +v",
    "title:install OR body:*",
    "__",
]


@pytest.fixture(scope="module")
def keyword_index(tmp_path_factory):
    """One small keyword index shared by the module (read-only tests)."""
    base = tmp_path_factory.mktemp("query")
    root = write_files(
        base / "root",
        {
            "guide.md": "# Install\n\nRun pip install kubernetes. key value foo bar\n\n"
            "NEAR the AND gate, NOT the OR gate: a - b\n",
            "intl.md": "# Ünïcödé\n\nText in ünïcödé with 日本語 here.\n",
            "code.py": "def foo_bar(x):\n    return x * 2\n",
            "errors.md": "# Errors\n\nTERN-E1042 means the disk is full.\n",
            "other.md": "# Tern\n\nTern is a bookmark server; E1042 appears apart from it.\n",
            "outage.md": "# Outage\n\nThe old drive died last night.\n",
        },
    )
    settings = Settings.for_root(root, base / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


@pytest.mark.parametrize("prefix_last", [False, True])
@pytest.mark.parametrize("text", HOSTILE_QUERIES)
def test_fts_expression_never_makes_fts5_raise(keyword_index, text, prefix_last):
    expression = fts_expression(text, prefix_last=prefix_last)
    if expression is None:
        # Only text without a single word may give no expression.
        assert query_terms(text) == []
        return
    hits = keyword_index.keywords.search(expression, 10)
    known = {"guide.md", "intl.md", "code.py", "errors.md", "other.md"}
    assert all(path in known for _id, path, _score in hits)


def test_operator_words_are_searched_as_plain_words(keyword_index):
    """`AND`, `NOT`, `NEAR` are words to find, not FTS5 operators."""
    for word in ("AND", "NOT", "NEAR"):
        hits = keyword_index.keywords.search(fts_expression(word), 10)
        assert [path for _id, path, _score in hits] == ["guide.md"], word


def test_an_identifier_with_punctuation_is_matched_as_a_phrase(keyword_index):
    """`TERN-E1042` finds the file with that code, not every file that says "tern"."""
    hits = keyword_index.keywords.search(fts_expression("TERN-E1042"), 10)
    assert [path for _id, path, _score in hits] == ["errors.md"]
    hits = keyword_index.keywords.search(fts_expression("foo_bar"), 10)
    assert [path for _id, path, _score in hits][0] == "code.py"


def test_unicode_query_finds_unicode_text(keyword_index):
    hits = keyword_index.keywords.search(fts_expression("ünïcödé 日本語"), 10)
    assert {path for _id, path, _score in hits} == {"intl.md"}


def test_prefix_last_matches_a_partly_typed_word(keyword_index):
    assert keyword_index.keywords.search(fts_expression("kuber"), 10) == []
    hits = keyword_index.keywords.search(fts_expression("kuber", prefix_last=True), 10)
    assert {path for _id, path, _score in hits} == {"guide.md"}
    # A trailing space means the word is finished: no prefix query.
    assert fts_expression("kuber ", prefix_last=True) == fts_expression("kuber")


def test_a_whole_word_the_stemmer_shortens_is_not_a_prefix_of_everything(keyword_index):
    """The keyword table stems a prefix too: as a prefix, `died` would be `di*` and match
    `disk`. A word the stemmer changes is complete, and is searched as typed (its stem still
    matches its other forms); a word it leaves alone stays a prefix."""
    hits = keyword_index.keywords.search(fts_expression("drive died", prefix_last=True), 10)
    assert {path for _id, path, _score in hits} == {"outage.md"}
    assert fts_expression("drive died", prefix_last=True) == '"drive" OR "died"'
    assert fts_expression("drive di", prefix_last=True) == '"drive"'
    assert fts_expression("kubern", prefix_last=True) == '"kubern" *'
    # In an identifier only its last token is being typed: `va` of `proxy_cache_va`.
    assert fts_expression("proxy_cache_va", prefix_last=True) == '"proxy_cache_va" *'


def test_one_or_two_letters_being_typed_do_not_expand():
    """`configure s` searches `configure` until the next word has three letters."""
    assert fts_expression("configure s", prefix_last=True) == fts_expression("configure")
    assert fts_expression("configure ss", prefix_last=True) == fts_expression("configure")
    assert fts_expression("configure ssl", prefix_last=True) == '"configure" OR "ssl" *'
    assert fts_expression("ku", prefix_last=True) == '"ku"'  # alone, it is searched as typed
    # Nor do they count in the share of the query a passage covers: "configure s" weighs
    # passages as "configure" does, not by whether they hold a word starting with "s".
    waiting, finished = Query.parse("configure s", True), Query.parse("configure ", True)
    assert waiting.phrases == finished.phrases
    text = "Configure the server"
    assert [m.pattern for m in waiting.coverage_matchers()] == [
        m.pattern for m in finished.coverage_matchers()
    ]
    assert coverage(text, waiting.coverage_matchers()) == 1.0


def test_query_terms_are_distinct_lowercase_words_in_order():
    assert query_terms("Foo bar FOO, baz-bar!") == ["foo", "bar", "baz"]


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_empty_query_is_a_query_error(keyword_index, text, mode):
    with pytest.raises(QueryError, match="empty query"):
        search(keyword_index, SearchRequest(text, mode=mode))


@pytest.mark.parametrize("text", ["'", "^", '""', "?!", "-- * --"])
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_punctuation_only_query_is_a_query_error(keyword_index, text, mode):
    with pytest.raises(QueryError, match="no words"):
        search(keyword_index, SearchRequest(text, mode=mode))


# -- path filters ---------------------------------------------------------------------------------
PATHS = [
    "guides/install.md",
    "guides/deep/nested.md",
    "guidesextra/other.md",
    "guides.md",
    "notes/2026/01/a.md",
    "notes/2026/03/b.md",
    "notes/2026/04/c.md",
    "notes/2026/01/sub/d.md",
    "notes/2026/02/e.txt",
    "src/app.py",
    "src/pkg/deep/mod.py",
    "top.py",
    "README.md",
]


def test_prefix_with_and_without_slash_selects_the_folder_only():
    expected = ["guides/deep/nested.md", "guides/install.md"]
    assert PathFilter(("guides/",)).select(PATHS) == expected
    assert PathFilter(("guides",)).select(PATHS) == expected


def test_prefix_can_name_a_single_file():
    assert PathFilter(("guides.md",)).select(PATHS) == ["guides.md"]
    assert PathFilter(("guides/install.md",)).select(PATHS) == ["guides/install.md"]


def test_glob_star_and_class_do_not_cross_folders():
    selected = PathFilter(("notes/2026/0[1-3]/*.md",)).select(PATHS)
    assert selected == ["notes/2026/01/a.md", "notes/2026/03/b.md"]


def test_double_star_crosses_folders_including_none():
    assert PathFilter(("**/*.py",)).select(PATHS) == ["src/app.py", "src/pkg/deep/mod.py", "top.py"]
    assert PathFilter(("src/**/*.py",)).select(PATHS) == ["src/app.py", "src/pkg/deep/mod.py"]


def test_single_star_glob_is_one_level():
    assert PathFilter(("*.py",)).select(PATHS) == ["top.py"]
    assert PathFilter(("src/*.py",)).select(PATHS) == ["src/app.py"]


def test_question_mark_matches_one_character_not_a_slash():
    assert PathFilter(("notes/2026/0?/a.md",)).select(PATHS) == ["notes/2026/01/a.md"]
    assert PathFilter(("notes/2026?01/a.md",)).select(PATHS) == []


def test_several_patterns_are_or_ed():
    selected = PathFilter(("guides/deep", "**/*.py", "README.md")).select(PATHS)
    assert selected == [
        "README.md",
        "guides/deep/nested.md",
        "src/app.py",
        "src/pkg/deep/mod.py",
        "top.py",
    ]


def test_dot_slash_prefix_is_ignored():
    assert PathFilter(("./guides",)).select(PATHS) == PathFilter(("guides",)).select(PATHS)
    assert PathFilter(("./**/*.py",)).select(PATHS) == PathFilter(("**/*.py",)).select(PATHS)
    assert PathFilter(("./",)).select(PATHS) == sorted(PATHS)


def test_no_patterns_means_every_path():
    empty = PathFilter(())
    assert not empty.active
    assert empty.select(PATHS) == sorted(PATHS)
    assert empty.describe() == "all files"
    assert PathFilter(("a/", "b/*.md")).describe() == "a/ or b/*.md"


def test_regex_characters_in_patterns_are_literal():
    paths = ["a+b/x.md", "aab/x.md", "c(1)/y.md", "c1/y.md"]
    assert PathFilter(("a+b",)).select(paths) == ["a+b/x.md"]
    assert PathFilter(("c(1)/*.md",)).select(paths) == ["c(1)/y.md"]


# -- snippets -------------------------------------------------------------------------------------
def _marked_words(snippet: str, spans: list[tuple[int, int]]) -> list[str]:
    return [snippet[start:end] for start, end in spans]


def test_highlights_point_at_query_words_in_the_snippet():
    text = (
        "The quick brown fox jumps over the lazy dog. " * 10
        + "Installing   the\n\n  package is easy; install it with pip.   "
        + "Filler words here. " * 20
    )
    snippet, spans = make_snippet(text, query_terms("how to install the package"))
    assert _marked_words(snippet, spans) == ["Installing", "package", "install"]
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "\n" not in snippet and "  " not in snippet


def test_leaders_of_dots_read_as_one_mark_in_a_snippet():
    """A PDF's contents or index: entries joined to their pages by dots, a leader broken
    across lines too; the words after a leader stay marked."""
    text = (
        "Contents\n5.1 Defining new variants . . . . . . . . . . . . . . 30\n"
        "5.2 Methods for defining variants .\n. . . . . . . . . . 31\n"
        "5.3 Proxy settings ........................ 32 and so... on\n"
        "5.4 Limits .\t.\n.\t. 33"
    )
    snippet, spans = make_snippet(text, query_terms("defining variants"))
    assert snippet == (
        "Contents 5.1 Defining new variants … 30 5.2 Methods for defining variants … 31"
        " 5.3 Proxy settings … 32 and so... on 5.4 Limits … 33"
    )
    assert _marked_words(snippet, spans) == ["Defining", "variants", "defining", "variants"]
    plain, spans = make_snippet(text, ["absent"])
    assert plain.startswith("Contents 5.1 Defining new variants … 30") and spans == []
    assert fold_runs("5.4 Limits .\t.\n.\t. 33") == "5.4 Limits … 33"  # no two dots side by side


def test_stopwords_are_not_marked():
    text = "What is the best way to configure the proxy for the server?"
    snippet, spans = make_snippet(text, query_terms("what is the proxy"))
    assert snippet == text
    assert _marked_words(snippet, spans) == ["proxy"]


def test_only_stopwords_gives_no_highlights():
    snippet, spans = make_snippet("how to do it", query_terms("how to"))
    assert snippet == "how to do it"
    assert spans == []


def test_short_terms_match_whole_words_only():
    snippet, spans = make_snippet("api rapid apis api.", ["api"])
    assert spans == [(0, 3), (15, 18)]
    assert _marked_words(snippet, spans) == ["api", "api"]


def test_snippet_without_hits_is_the_shortened_start():
    text = "alpha beta gamma " * 40
    snippet, spans = make_snippet(text, ["zeta"], width=50)
    assert spans == []
    assert len(snippet) <= 50
    assert snippet.startswith("alpha beta gamma")
    assert snippet.endswith("…")


@pytest.mark.parametrize("blanks", [0, 100, 146, 147, 148, 149, 150, 600])
def test_a_long_passage_without_hits_shows_its_folded_start_whatever_its_length(blanks):
    """Only the start of a long passage is folded for its snippet: it reads as the start of the
    whole passage folded, wherever a run of blanks or a leader of dots meets that start's end."""
    text = "Chapter " * 5 + "\n" * blanks + "Entry . . . . . . . . 12\n" + "word " * 400
    whole = fold_runs(text)
    snippet, spans = make_snippet(text, ["absent"], width=50)
    assert spans == [] and whole.startswith(snippet.removesuffix("…"))
    assert snippet.endswith("…") and len(snippet) <= 50


def test_snippet_shows_a_late_hit_in_text_without_spaces_before_it():
    """Lines of single words (lists, code) have newlines but no spaces before the hit."""
    text = "\n".join(f"line{i}" for i in range(200)) + "\nkubernetes deployment\n"
    text += "\n".join(f"tail{i}" for i in range(50))
    snippet, spans = make_snippet(text, ["kubernetes"])
    assert "kubernetes" in snippet
    assert _marked_words(snippet, spans) == ["kubernetes"]


@pytest.mark.parametrize("width", [40, 80, 220])
def test_every_span_is_inside_the_snippet_and_a_query_word(width):
    text = ("Search results are ranked. " * 5 + "Ranking uses BM25 and vectors. ") * 6
    terms = query_terms("ranking vectors search")
    snippet, spans = make_snippet(text, terms, width=width)
    assert spans
    for start, end in spans:
        assert 0 <= start < end <= len(snippet)
        word = snippet[start:end].lower()
        assert any(word.startswith(term[:4]) for term in terms), word


def test_the_snippet_is_the_window_with_most_query_words_the_first_of_equals():
    lone = "A proxy is mentioned once here. " + "Unrelated filler text. " * 12
    dense = "The proxy cache: proxy buffers, proxy timeouts and proxy headers. "
    text = lone + dense + "More filler words. " * 12 + dense
    snippet, spans = make_snippet(text, ["proxy"], width=80)
    assert _marked_words(snippet, spans) == ["proxy"] * 4  # the first dense run, not the lone one
    assert text.index(snippet.strip("…")[:30]) < len(lone) + len(dense)


def test_highlights_fold_case_accents_and_wide_letters_one_character_for_one(monkeypatch):
    import explorer.core.ingest.keyword_text as keyword_text

    text = "Straße ＺÜRICH café İstanbul ﬁle naïve ÉCOLE 数据库 Zürich"
    folded = keyword_text.match_fold(text)
    assert len(folded) == len(text)
    assert folded == "straße zurich cafe istanbul ﬁle naive ecole 数据库 zurich"
    snippet, spans = make_snippet(text, ["zurich", "ecole"])
    assert _marked_words(snippet, spans) == ["ＺÜRICH", "ÉCOLE", "Zürich"]
    # The table of folds starts again when full, and folds the same.
    monkeypatch.setattr(keyword_text, "FOLD_TABLE_MOST", 3)
    assert keyword_text.match_fold(text) == folded


# -- the keyword leg's pieces: function words, identifiers, quoted phrases ------------------------
def test_function_words_of_a_plain_question_are_left_out():
    expression = fts_expression("how do I get my data back after the disk died")
    assert expression == '"data" OR "back" OR "disk" OR "died"'


def test_identifiers_and_quoted_phrases_stay_whole_with_their_function_words():
    assert fts_expression("X-Tern-Signature") == '"x tern signature"'
    assert fts_expression("otel.instrumentation.common.default-enabled") == (
        '"otel instrumentation common default enabled"'
    )
    assert fts_expression('"the way it is" and walrus') == '"the way it is" OR "walrus"'
    assert fts_expression("what is up-to-date") == '"up to date"'


def test_a_query_of_function_words_alone_keeps_them():
    assert fts_expression("the who") == '"the" OR "who"'
    assert fts_expression("how to ", prefix_last=True) == '"how" OR "to"'


def test_a_function_word_being_typed_is_not_expanded():
    assert fts_expression("configure the", prefix_last=True) == '"configure"'


def test_an_unclosed_quote_is_plain_text(keyword_index):
    expression = fts_expression('"unclosed words')
    assert expression == '"unclosed" OR "words"'
    keyword_index.keywords.search(expression, 10)  # never raises


def test_coverage_counts_the_query_pieces_a_text_holds():
    pieces = topic_pieces(keyword_pieces("restore a backup with max_snapshot_age"))
    assert [p.words for p in pieces] == [("restore",), ("backup",), ("max_snapshot_age",)]
    matchers = coverage_matchers(pieces)
    assert coverage("Restoring backups: set max_snapshot_age first.", matchers) == 1.0
    assert coverage("Backups run nightly.", matchers) == pytest.approx(1 / 3)
    assert coverage("max snapshot", matchers) == 0.0


def test_coverage_of_a_word_being_typed_matches_its_prefix():
    pieces = topic_pieces(keyword_pieces("restore conf"))
    assert coverage("Restore the configuration.", coverage_matchers(pieces)) == 0.5
    assert coverage("Restore the configuration.", coverage_matchers(pieces, True)) == 1.0


@pytest.mark.parametrize(
    ("query", "lookup"),
    [
        ("proxy_cache_valid", True),
        ("X-Tern-Signature", True),
        ("VirtualServerRoute", True),
        ("TERN-E1042 the", True),
        ("nginx.org/client-max-body-size", True),
        ("sticky learn", False),
        ("413 Request Entity Too Large", False),
        ("Hello world.", False),
        ('"max_snapshot_age"', False),
    ],
)
def test_a_query_of_identifiers_alone_is_a_lookup(query, lookup):
    assert is_lookup(keyword_pieces(query)) is lookup


def test_a_titles_underline_and_a_rule_read_as_a_space_in_a_snippet():
    """reStructuredText underlines its titles (a CMake page's snippet read
    ``add_compile_definitions ----------------------- .. versionadded``), Markdown draws rules;
    a table's short delimiters and a phrase's dashes stay."""
    text = (
        "add_compile_definitions\n-----------------------\n\nAdds definitions to the build.\n\n"
        "Notes\n=====\n\n| a | --- |\n\n****\n\nA word -- and another - here."
    )
    snippet, spans = make_snippet(text, query_terms("definitions notes"))
    assert snippet == (
        "add_compile_definitions Adds definitions to the build. Notes | a | --- | A word -- and"
        " another - here."
    )
    assert _marked_words(snippet, spans) == ["definitions", "Notes"]
    assert fold_runs("Title\n~~~~~\nText") == "Title Text"
