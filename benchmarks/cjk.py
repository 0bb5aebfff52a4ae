"""Keyword search in Chinese and Japanese, and English keyword ranking, side by side with a
baseline checkout of explorer (today's main).

The words were written down from the corpora's text before any search was run: content words of
paragraphs read in four Debian packages (the Chinese and Japanese LilyPond manuals, HTML; the
Chinese and Japanese manual pages, roff in ``.gz`` as the packages install them: until stop 51
explorer read neither, and they were rendered to text by ``groff`` first), a few one-character
words and a few identifiers glued to CJK text. For each
word, the relevant files are those whose passages, headings or title hold it (``instr`` over the
index's own chunks, the same for both checkouts); a keyword search (limit 10) is scored by
whether it found one of them (found), the share of them in its top 10 (recall@10, over at most
10), the share of its results that hold the word (precision) and whether the files holding it
come first (first: the results before the first one that does not hold it, over at most 10).
Each checkout builds its own keyword-only index of each corpus (no model loaded), timed; the
index's size is the SQLite file's. ``--migrate`` also times
opening the baseline's index with this checkout (the keyword tables rebuilt, nothing else).

English: the keyword leg on SciFact (train claims, nDCG@10 and recall@100, as
``benchmarks/beir.py``) and on the nginx development set (MRR@10 and nDCG@10 per question type,
as ``benchmarks/ranking.py``), each checkout indexing keyword-only.

    flock /tmp/explorer-heavy.lock nice -n 5 /work/main/.venv/bin/python benchmarks/cjk.py \\
        --baseline /work/main --work ~/.cache/explorer-dev/cjk/bench --migrate --english

Each checkout runs in a process of its own (``PYTHONPATH`` set to it), one after the other per
corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "explorer-dev"
LILYPOND = "usr/share/doc/lilypond/html"
CORPORA = {
    "lilypond-zh": CACHE / "debian" / "lilypond-doc-html-zh" / LILYPOND,
    "lilypond-ja": CACHE / "debian" / "lilypond-doc-html-ja" / LILYPOND,
    "manpages-zh": CACHE / "debian" / "man" / "zh" / "usr/share/man",  # dpkg-deb -x
    "manpages-ja": CACHE / "debian" / "man" / "ja" / "usr/share/man",
}
WORDS = {
    "lilypond-zh": """术语 记谱法 母语 术语表 错误报告 邮件列表 志愿者 通知 空格 语法元素
        大括号 省略 音乐家 乐谱 程序员 软件 优雅 编程 教程 图片 尝试 翻译 懊恼 例子""".split(),
    "lilypond-ja": """古代音楽 譜刻 記譜法 事例 解決法 入力ファイル 同時進行 楽譜 譜表 明示的
        コンテキスト プロパティ エフェクト チャンネル 音符 楽器 ボイス デフォルト メッセージ
        コンソール リダイレクト マニュアル ドキュメント 形式 譜""".split(),
    "manpages-ja": """改訂 機能 オプション 英語マニュアル デバイス メジャー番号 キャラクターデバイス
        パスワード グループ データベース 名前サービス ライブラリ モジュール ジャーナル
        トランザクション ブロックデバイス 破棄 不正ブロック バージョンコントロールシステム
        ソースコード リポジトリ ページング スワッピング util-linux""".split(),
    "manpages-zh": """运行时参数 变量 语句 环境变量 命令行参数 细节 檔案字尾 間隔 字母 編譯器
        剪貼簿 介面 機制 儲存 序列 事件迴圈 配置檔案 正確性 標準輸入 破折號 標準輸出 类型转换
        权限 删除 檔 删 libpq postmaster testparm smbd""".split(),
}
"""Written down from the text before searching (see the module docstring)."""


# -- one checkout, in its own process ---------------------------------------------------------
def _index(root: Path, index_dir: Path) -> dict:
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    shutil.rmtree(index_dir, ignore_errors=True)
    settings = Settings.for_root(root, index_dir)
    started = time.perf_counter()
    index = Index.open_for_writing(settings)
    try:
        report = Indexer(index).sync(embed=False)
    finally:
        index.close()
    seconds = time.perf_counter() - started
    return _facts(index_dir) | {
        "seconds": round(seconds, 2),
        "keyword_seconds": round(report.keyword_seconds, 2),
    }


def _facts(index_dir: Path) -> dict:
    """Files and chunks of a built index, and its database's size."""
    database = index_dir / "index.sqlite"
    with sqlite3.connect(database) as db:
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        files = db.execute("SELECT COUNT(*) FROM files WHERE chunk_count > 0").fetchone()[0]
    return {"files": files, "chunks": chunks, "bytes": database.stat().st_size}


def _words(root: Path, index_dir: Path, words: list[str]) -> dict:
    from explorer.core.retrieval.search import SearchRequest, search
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    index = Index.open_existing(Settings.for_root(root, index_dir))
    db = sqlite3.connect(index_dir / "index.sqlite")
    rows = {}
    try:
        for word in words:
            holding = {
                path
                for (path,) in db.execute(
                    "SELECT DISTINCT c.path FROM chunks c JOIN files f ON f.path = c.path"
                    " WHERE instr(c.text, ?1) > 0 OR instr(c.heading, ?1) > 0"
                    " OR instr(f.title, ?1) > 0",
                    (word,),
                )
            }
            request = SearchRequest(word, mode="keyword", limit=10, per_file=1)
            found = [hit.path for hit in search(index, request).results]
            right = [path for path in found if path in holding]
            leading = next((n for n, path in enumerate(found) if path not in holding), len(found))
            rows[word] = {
                "holding": len(holding),
                "returned": len(found),
                "found": bool(right),
                "recall@10": round(len(right) / min(10, len(holding)), 4) if holding else None,
                "precision": round(len(right) / len(found), 4) if found else None,
                "first": round(leading / min(10, len(holding)), 4) if holding else None,
            }
    finally:
        db.close()
        index.close()
    return rows


def _migrate(root: Path, old_index: Path, index_dir: Path) -> dict:
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    shutil.rmtree(index_dir, ignore_errors=True)
    shutil.copytree(old_index, index_dir)
    started = time.perf_counter()
    index = Index.open_for_writing(Settings.for_root(root, index_dir))
    seconds = time.perf_counter() - started
    notes = list(getattr(index, "notes", []))
    index.close()
    return {
        "seconds": round(seconds, 2),
        "notes": notes,
        "bytes": (index_dir / "index.sqlite").stat().st_size,
    }


def _english(work: Path, tag: str) -> dict:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from beir import evaluate, read_jsonl, read_qrels, write_corpus
    from ranking import nginx_set, summarise

    from explorer.core.retrieval.search import SearchRequest, search
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    scifact = REPO.parent / "shared" / "bench" / "scifact"
    if not scifact.exists():
        scifact = Path("/work/shared/bench/scifact")
    docs = work / "scifact-docs"
    write_corpus(read_jsonl(scifact / "corpus.jsonl"), docs)
    built = {"scifact": _index(docs, work / f"scifact-{tag}")}
    queries = {q["_id"]: q["text"] for q in read_jsonl(scifact / "queries.jsonl")}
    qrels = read_qrels(scifact / "qrels" / "train.tsv")
    index = Index.open_existing(Settings.for_root(docs, work / f"scifact-{tag}"))
    try:
        import beir

        beir.MODES = ("keyword",)
        scifact_scores = evaluate(index, queries, qrels)["keyword"]
    finally:
        index.close()

    nginx_root = Path("/work/shared/corpora/nginx-docs")
    built["nginx"] = _index(nginx_root, work / f"nginx-{tag}")
    qset = nginx_set(work / f"nginx-{tag}", nginx_root)
    index = Index.open_existing(Settings.for_root(nginx_root, work / f"nginx-{tag}"))
    try:
        rankings = {}
        for question in qset.questions:
            request = SearchRequest(question.text, mode="keyword", limit=10, per_file=1)
            rankings[question.qid] = [hit.path for hit in search(index, request).results]
    finally:
        index.close()
    return {
        "built": built,
        "scifact_train_keyword": scifact_scores,
        "nginx_keyword": summarise(qset.questions, rankings),
    }


def worker(spec: dict) -> dict:
    work, tag = Path(spec["work"]), spec["tag"]
    if spec["job"] == "english":
        return _english(work, tag)
    root, name = Path(spec["root"]), spec["name"]
    index_dir = work / f"{name}-{tag}"
    if spec["job"] == "migrate":
        return _migrate(root, Path(spec["old_index"]), work / f"{name}-{tag}-migrated")
    if spec["reuse"]:  # times as measured when it was built (see --out of that run)
        built = _facts(index_dir) | {"seconds": None, "keyword_seconds": None}
    else:
        built = _index(root, index_dir)
    return {"build": built, "words": _words(root, index_dir, WORDS[name])}


# -- the comparison ---------------------------------------------------------------------------
def run_in(tree: Path, spec: dict) -> dict:
    """Run :func:`worker` with the explorer of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    completed = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"the worker of {tree} failed:\n{completed.stderr[-3000:]}")
    result: dict = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def summary(words: dict) -> dict:
    rows = list(words.values())
    judged = [row for row in rows if row["holding"]]
    precise = [row["precision"] for row in judged if row["precision"] is not None]
    return {
        "words": len(rows),
        "words_in_text": len(judged),
        "found": sum(row["found"] for row in judged),
        # a checkout that indexes none of the corpus (main before manual pages) holds no word
        "recall@10": round(sum(row["recall@10"] for row in judged) / len(judged), 4)
        if judged
        else 0.0,
        "precision": round(sum(precise) / len(precise), 4) if precise else None,
        "first": round(sum(row["first"] for row in judged) / len(judged), 4) if judged else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", type=Path, default=Path("/work/main"))
    parser.add_argument("--work", type=Path, default=CACHE / "cjk" / "bench")
    parser.add_argument("--corpus", action="append", choices=[*sorted(CORPORA), "none"])
    parser.add_argument("--migrate", action="store_true", help="Time the baseline's upgrade.")
    parser.add_argument("--english", action="store_true", help="SciFact and nginx keyword.")
    parser.add_argument("--reuse", action="store_true", help="Search the indexes built before.")
    parser.add_argument("--out", type=Path, help="Write the JSON report here, corpus by corpus.")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    trees = {"baseline": args.baseline.resolve(), "this": REPO}
    report: dict = {"uptime_before": os.getloadavg()}
    for name in [] if args.corpus == ["none"] else args.corpus or sorted(CORPORA):
        entry: dict = {}
        for tag, tree in trees.items():
            spec = {
                "job": "corpus",
                "work": str(args.work),
                "tag": tag,
                "name": name,
                "reuse": args.reuse,
            }
            result = run_in(tree, spec | {"root": str(CORPORA[name])})
            entry[tag] = {"build": result["build"], "summary": summary(result["words"])}
            entry[tag]["words"] = result["words"]
        if args.migrate:
            spec = {
                "job": "migrate",
                "work": str(args.work),
                "tag": "this",
                "name": name,
                "root": str(CORPORA[name]),
                "old_index": str(args.work / f"{name}-baseline"),
            }
            entry["migrate"] = run_in(REPO, spec)
        report[name] = entry
        if args.out:
            args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
        base, this = entry["baseline"], entry["this"]
        print(
            f"{name}: {this['build']['files']} files, {this['build']['chunks']} chunks;"
            f" found {base['summary']['found']} -> {this['summary']['found']}"
            f" of {this['summary']['words_in_text']} words;"
            f" recall@10 {base['summary']['recall@10']} -> {this['summary']['recall@10']};"
            f" precision {base['summary']['precision']} -> {this['summary']['precision']};"
            f" first {base['summary']['first']} -> {this['summary']['first']};"
            f" index {base['build']['bytes'] / 1e6:.1f} -> {this['build']['bytes'] / 1e6:.1f} MB;"
            f" keyword seconds {base['build']['keyword_seconds']}"
            f" -> {this['build']['keyword_seconds']}"
            + (f"; upgrade {entry['migrate']['seconds']} s" if args.migrate else ""),
            file=sys.stderr,
        )
    if args.english:
        report["english"] = {
            tag: run_in(tree, {"job": "english", "work": str(args.work), "tag": tag})
            for tag, tree in trees.items()
        }
        for tag, result in report["english"].items():
            print(
                f"english {tag}: scifact keyword {result['scifact_train_keyword']};"
                f" nginx keyword {result['nginx_keyword']['all']};"
                f" built {result['built']}",
                file=sys.stderr,
            )
    report["uptime_after"] = os.getloadavg()
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
