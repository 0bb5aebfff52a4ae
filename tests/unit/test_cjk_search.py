"""Keyword search in every language: words of Chinese, Japanese and Korean text written without
spaces, an identifier glued to them, English stemming beside them, accents folded, and an index
made before all this upgraded on open with its vectors kept."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.indexer import Indexer
from explorer.core.models import SearchMode
from explorer.core.retrieval.query import Query, make_snippet
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.keywords import UPGRADE_NOTE
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

FILES = {
    "备份.md": "# 备份策略\n\n每天晚上对数据库做一次快照，然后把备份复制到另一台服务器。"
    "重跑gen-itgc后检查日志。\n",
    "設定.md": "# 設定の手順\n\nサンドボックスを再起動してから、設定を確認してください。\n",
    "백업.md": "# 백업 안내\n\n데이터베이스를 매일 백업합니다. 서버를 재시작하세요.\n",
    "running.md": "# Running notes\n\nWe were running the benchmark at the café in Zürich.\n",
    "other.md": "# Garden\n\nTomatoes, beans and a compost heap. 花园里有西红柿。\n",
}
"""Every word below is taken from these files."""
WORDS = {
    # Chinese: words of two, three and one character inside sentences, and the words
    "备份": "备份.md",
    "数据库": "备份.md",
    "快照": "备份.md",
    "服务器": "备份.md",
    "日志": "备份.md",
    "晚": "备份.md",
    # Japanese: kanji, katakana, a word that ends a run, one followed by a particle
    "設定": "設定.md",
    "サンドボックス": "設定.md",
    "再起動": "設定.md",
    "確認": "設定.md",
    "手順": "設定.md",
    # Korean: words with particles and verb endings glued on
    "데이터베이스": "백업.md",
    "백업": "백업.md",
    "서버": "백업.md",
    "재시작": "백업.md",
    # an identifier glued to Chinese, and its parts
    "gen-itgc": "备份.md",
    "itgc": "备份.md",
    "重跑gen-itgc后": "备份.md",
    # English stemming and accents
    "run": "running.md",
    "runs": "running.md",
    "benchmarks": "running.md",
    "cafe": "running.md",
    "café": "running.md",
    "Zurich": "running.md",
    "zürich": "running.md",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    base = tmp_path_factory.mktemp("cjk")
    root = write_files(base / "root", FILES)
    settings = Settings.for_root(root, base / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


def keyword_search(index: Index, text: str, prefix_last: bool = False):
    request = SearchRequest(text, mode=SearchMode.KEYWORD, prefix_last=prefix_last)
    return search(index, request).results


def marked(passage) -> list[str]:
    return [passage.snippet[start:end] for start, end in passage.highlights]


@pytest.mark.parametrize("word", list(WORDS))
def test_every_word_is_found_in_its_file_first(index, word):
    results = keyword_search(index, word)
    assert results, f"{word!r} found nothing"
    assert results[0].path == WORDS[word]


@pytest.mark.parametrize(
    ("word", "shown"),
    [
        ("数据库", "数据库"),
        ("サンドボックス", "サンドボックス"),
        ("데이터베이스", "데이터베이스"),
        ("itgc", "itgc"),
        ("cafe", "café"),
        ("Zurich", "Zürich"),
        ("benchmarks", "benchmark"),
    ],
)
def test_the_snippet_marks_the_word_as_written(index, word, shown):
    passage = keyword_search(index, word)[0].passages[0]
    assert shown in marked(passage)


def test_a_word_is_not_found_where_only_its_characters_are(index):
    """Bigrams in order: 数据库 is not in a text holding 数 and 据 apart, nor in 花园."""
    assert keyword_search(index, "库数据") == []
    assert [hit.path for hit in keyword_search(index, "西红柿")] == ["other.md"]
    assert keyword_search(index, "西红花") == []


def test_a_word_being_typed_is_searched_as_it_stands(index):
    """Typing (results while typing) neither drops a CJK word of one or two characters nor
    turns English prefixes off."""
    assert [hit.path for hit in keyword_search(index, "快照", prefix_last=True)] == ["备份.md"]
    assert [hit.path for hit in keyword_search(index, "晚", prefix_last=True)] == ["备份.md"]
    assert [hit.path for hit in keyword_search(index, "benchm", prefix_last=True)] == ["running.md"]


def test_a_word_broken_across_a_line_is_found_and_marked(tmp_path):
    """Hard-wrapped Chinese text breaks lines inside words; the word is found all the same."""
    root = write_files(
        tmp_path / "root",
        {"wrapped.txt": "每天晚上对数据库做一次快照，然后把备份复制到另一台服\n    务器。\n"},
    )
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    try:
        Indexer(index).sync()
        results = keyword_search(index, "服务器")
        assert [hit.path for hit in results] == ["wrapped.txt"]
        assert marked(results[0].passages[0]) == ["服 务器"]
    finally:
        index.close()


def test_a_long_run_is_searched_by_its_bigrams(index):
    """A question written without spaces holds several words: the passage holding most of its
    bigrams comes first, rather than nothing for want of the whole sentence."""
    results = keyword_search(index, "如何备份数据库")
    assert results[0].path == "备份.md"


def test_a_long_word_comes_first_before_passages_holding_its_pieces(tmp_path):
    """ページング (paging) is a run of five characters: the page that holds it comes before
    short pages that hold ページ (page), エンジン and ロング, and so every bigram of it."""
    files = {f"page{n}.md": "ページのエンジンとロングページ。" * 3 for n in range(4)}
    files["paging.md"] = (
        "スワップとページングを行うデバイスの設定について説明します。"
        + "カーネルはメモリを管理します。" * 8
    )
    root = write_files(tmp_path / "root", files)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    try:
        Indexer(index).sync()
        assert keyword_search(index, "ページング")[0].path == "paging.md"
    finally:
        index.close()


def test_query_phrases_are_the_index_bigrams():
    assert Query.parse("数据库").phrases == ('"数据 据库"',)
    assert Query.parse("晚").phrases == ('"晚" *',)
    assert Query.parse("重跑gen-itgc后").phrases == ('"重跑 跑 gen itgc 后" *',)
    assert Query.parse("running café").phrases == ('"running"', '"café"')
    assert Query.parse("如何备份数据").phrases == (
        '"如何 何备 备份 份数 数据"',
        '"如何"',
        '"何备"',
        '"备份"',
        '"份数"',
        '"数据"',
    )


def test_a_snippet_of_text_without_spaces_is_centred_on_the_word():
    text = "前言" * 200 + "这里说明如何恢复数据库的快照。" + "后记" * 200
    snippet, spans = make_snippet(text, ["快照"])
    assert [snippet[start:end] for start, end in spans] == ["快照"]
    assert len(snippet) <= 222


def _as_schema_3(path) -> None:
    """Give a keyword index the tables today's index of schema 3 has: the text itself in the
    keyword tables, as ``unicode61`` splits it (one token per run of CJK characters)."""
    db = sqlite3.connect(path)
    try:
        db.executescript(
            """
            DELETE FROM chunks_fts;
            INSERT INTO chunks_fts(rowid, title, heading, body, description, tags)
                SELECT c.rowid, f.title, c.heading, c.text, '', ''
                FROM chunks c JOIN files f ON f.path = c.path;
            DELETE FROM files_fts;
            INSERT INTO files_fts(rowid, title, heading, body, description, tags)
                SELECT MIN(c.rowid), f.title, group_concat(c.heading, char(10)),
                    group_concat(c.text, char(10)), '', ''
                FROM chunks c JOIN files f ON f.path = c.path GROUP BY c.path;
            UPDATE meta SET value = '3' WHERE key = 'schema';
            """
        )
        db.commit()
    finally:
        db.close()


def test_an_older_index_is_upgraded_on_open_with_its_vectors_kept(tmp_path):
    root = write_files(tmp_path / "root", FILES)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    embedder = FakeEmbedder()
    index = Index.open_for_writing(settings, embedder)
    try:
        Indexer(index).sync()
        embedded = index.keywords.counts()["embedded"]
        vectors = index.vectors.count_chunks()
    finally:
        index.close()
    assert embedded and vectors
    _as_schema_3(settings.index_dir / "index.sqlite")
    reader = Index.open_existing(settings, embedder)
    try:
        assert keyword_search(reader, "快照") == [], "the old tables keep a sentence whole"
    finally:
        reader.close()

    calls = embedder.documents_embedded
    writer = Index.open_for_writing(settings, embedder)
    try:
        assert writer.notes == [UPGRADE_NOTE]
        report = Indexer(writer).sync()
        assert report.chunks_embedded == 0 and report.updated == 0
        assert embedder.documents_embedded == calls, "no passage embedded again"
        assert writer.keywords.counts()["embedded"] == embedded
        assert writer.vectors.count_chunks() == vectors
        for word in ("快照", "サンドボックス", "데이터베이스", "itgc", "run"):
            assert keyword_search(writer, word)[0].path == WORDS[word]
    finally:
        writer.close()
    again = Index.open_for_writing(settings, embedder)
    try:
        assert again.notes == [], "the note is said once"
    finally:
        again.close()


def test_explorer_index_says_it_upgraded_an_older_index_once(tmp_path, monkeypatch):
    import explorer.core.store.index

    monkeypatch.setattr(explorer.core.store.index, "load_embedder", lambda *a: FakeEmbedder())
    root = write_files(tmp_path / "root", FILES)
    index_dir = tmp_path / "index"
    runner = CliRunner()
    args = ["index", str(root), "--index-dir", str(index_dir), "--keywords-only"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert UPGRADE_NOTE not in first.output
    _as_schema_3(index_dir / "index.sqlite")
    upgraded = runner.invoke(main, args)
    assert upgraded.exit_code == 0, upgraded.output
    assert upgraded.output.count(UPGRADE_NOTE) == 1
    assert "0 added, 0 updated, 0 removed, 5 unchanged" in upgraded.output
    as_json = runner.invoke(main, [*args, "--json"])
    assert '"notes": []' in as_json.output


def test_a_live_index_says_it_upgraded_an_older_index_once(tmp_path):
    """The TUI and the MCP server open an index through a live index: an older one is
    upgraded there too, and its window says so once."""
    from explorer.core.live.events import ErrorEvent
    from explorer.core.live.writer import LiveIndex

    root = write_files(tmp_path / "root", FILES)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index.open_for_writing(settings, FakeEmbedder())
    try:
        Indexer(index).sync()
    finally:
        index.close()
    _as_schema_3(settings.index_dir / "index.sqlite")
    said: list[str] = []

    def on_event(event) -> None:
        if isinstance(event, ErrorEvent):
            said.append(event.message)

    live = LiveIndex(settings, on_event, embedder=FakeEmbedder(), watch=False)
    live.start()
    try:
        assert live.wait_idle(30)
        assert said.count(UPGRADE_NOTE) == 1, said
        assert keyword_search(live.index, "快照")[0].path == WORDS["快照"]
    finally:
        live.stop()


def test_the_words_a_cjk_file_is_about_are_its_bigrams(index):
    """Related files ask the index for the terms that tell a file apart: a CJK file's are its
    bigrams (a term of two characters, which an English word of two letters is not)."""
    terms = index.keywords.distinctive_terms("設定.md", 8)
    assert {"設定", "サン", "再起"} & set(terms)
    assert all(len(term) > 1 for term in terms)


SOUTHEAST_ASIAN = {
    "thai.md": "# บันทึกการสำรองข้อมูล\n\nเราสำรองฐานข้อมูลทุกคืน แล้วคัดลอกไปยังเซิร์ฟเวอร์อีกเครื่อง\n",
    "lao.md": "# ບັນທຶກ\n\nຂ້ອຍມັກພາສາລາວຫຼາຍ ແລະ ຮຽນທຸກມື້\n",
    "khmer.md": "# កំណត់ចំណាំ\n\nខ្ញុំចូលចិត្តភាសាខ្មែរណាស់។ យើងរៀនរាល់ថ្ងៃ។\n",
    "myanmar.md": "# မှတ်စု\n\nကျွန်တော်မြန်မာစာကိုကြိုက်တယ်။ နေ့တိုင်းလေ့လာတယ်။\n",
    "english.md": "# Notes\n\nNothing in another script here.\n",
}
"""Text of the scripts of South-East Asia written without spaces between words."""


@pytest.mark.parametrize(
    ("word", "path"),
    [
        ("ฐานข้อมูล", "thai.md"),  # database, inside a sentence
        ("เซิร์ฟเวอร์", "thai.md"),  # server, with vowel and tone marks
        ("สำรอง", "thai.md"),
        ("ພາສາລາວ", "lao.md"),
        ("ຮຽນ", "lao.md"),
        ("ភាសាខ្មែរ", "khmer.md"),
        ("រៀន", "khmer.md"),
        ("မြန်မာစာ", "myanmar.md"),
        ("လေ့လာ", "myanmar.md"),
    ],
)
def test_a_word_inside_thai_lao_khmer_or_myanmar_text_is_found_and_marked(
    southeast_index, word, path
):
    """``unicode61`` kept each of these sentences one token: no word inside could be found."""
    results = keyword_search(southeast_index, word)
    assert [hit.path for hit in results] == [path]
    assert word in marked(results[0].passages[0])
    assert keyword_search(southeast_index, word, prefix_last=True)[0].path == path  # typing


def test_a_thai_word_is_matched_as_typed_not_by_its_pairs_of_letters(southeast_index):
    """One Thai word is often longer than the four characters a CJK word may be: asked by its
    bigrams, a word no page holds (English language) found every Thai page at 1.00."""
    assert keyword_search(southeast_index, "ภาษาอังกฤษ") == []
    assert keyword_search(southeast_index, "ข้อมูลสำรอง") == []  # both words, not in this order


@pytest.fixture(scope="module")
def southeast_index(tmp_path_factory):
    base = tmp_path_factory.mktemp("southeast")
    root = write_files(base / "root", SOUTHEAST_ASIAN)
    index = Index(Settings.for_root(root, base / "index"), embedder=FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


def _as_schema_4(path) -> None:
    """Give a keyword index the tables schema 4 left: Thai, Lao, Khmer and Myanmar runs whole
    (the files here hold no CJK text, whose reading is the same in both)."""
    _as_schema_3(path)
    db = sqlite3.connect(path)
    try:
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
        db.commit()
    finally:
        db.close()


def test_an_index_of_schema_4_is_rebuilt_only_when_it_holds_such_text(tmp_path):
    """Schema 5 reads only these scripts otherwise: an index without them is marked 5 as it
    stands (a kernel-sized one was rebuilt for nothing), one with them is rebuilt once, its
    vectors kept, and its words found."""
    for name, files, rebuilt in (
        ("latin", {"english.md": SOUTHEAST_ASIAN["english.md"]}, False),
        ("thai", SOUTHEAST_ASIAN, True),
    ):
        root = write_files(tmp_path / name / "root", files)
        settings = Settings.for_root(root, tmp_path / name / "index", model=FakeEmbedder.name)
        embedder = FakeEmbedder()
        index = Index.open_for_writing(settings, embedder)
        try:
            Indexer(index).sync()
        finally:
            index.close()
        _as_schema_4(settings.index_dir / "index.sqlite")
        calls = embedder.documents_embedded
        writer = Index.open_for_writing(settings, embedder)
        try:
            assert writer.notes == ([UPGRADE_NOTE] if rebuilt else [])
            assert writer.keywords.get_meta("schema") == "5"
            report = Indexer(writer).sync()
            assert report.chunks_embedded == 0 and embedder.documents_embedded == calls
            assert [hit.path for hit in keyword_search(writer, "another")] == ["english.md"]
            if rebuilt:
                assert keyword_search(writer, "ฐานข้อมูล")[0].path == "thai.md"
        finally:
            writer.close()
