"""Search over documents that are not plain text: hit@5 per format on a folder of PDFs, HTML,
DOCX and notebooks.

``build`` makes the folder: the texlive-latex-base-doc PDFs of at most ``--max-pages`` pages
(plus every PDF a question names), the Python 3.11 manual's tutorial and how-to pages and a
share of its library pages (plus every page a question names), and the DOCX files and notebooks
of ``benchmarks/devsets/documents/office.json`` (written with python-docx and as nbformat 4).
``run`` indexes it with the real model (hybrid search, as a user would get it) and asks each
question of ``benchmarks/devsets/documents.jsonl``: a hit when the answer file is among the
first 5 files; for a PDF, the page is right when one of that file's passages shown is on an
answer page. Get the sources with::

    cd /tmp && apt-get download texlive-latex-base-doc python3.11-doc
    dpkg-deb -x texlive-latex-base-doc_*.deb /tmp/texdoc
    dpkg-deb -x python3.11-doc_*.deb /tmp/pydoc

then, under the CPU lock::

    python benchmarks/documents.py build --out ~/.cache/explorer-dev/formats/docbench
    flock /tmp/explorer-cpu.lock python benchmarks/documents.py run \\
        --corpus ~/.cache/explorer-dev/formats/docbench \\
        --index-dir ~/.cache/explorer-dev/formats/docbench-index --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "devsets" / "documents.jsonl"
OFFICE = HERE / "devsets" / "documents" / "office.json"
TEXDOC = Path("/tmp/texdoc/usr/share/doc/texlive-doc")
PYDOC = Path("/tmp/pydoc/usr/share/doc/python3.11/html")


def questions() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


def answer_files(rows: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for row in rows:
        files = row["file"]
        found.update([files] if isinstance(files, str) else files)
    return found


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def build(out: Path, texdoc: Path, pydoc: Path, max_pages: int, library_share: int) -> None:
    import pypdfium2

    answers = answer_files(questions())
    if out.exists():
        shutil.rmtree(out)
    counts: dict[str, int] = defaultdict(int)
    pages = 0
    for pdf in sorted(texdoc.rglob("*.pdf")):
        rel = f"texdoc/{pdf.relative_to(texdoc).as_posix()}"
        document = pypdfium2.PdfDocument(pdf)
        count = len(document)
        document.close()
        if count <= max_pages or rel in answers:
            _copy(pdf, out / rel)
            counts["pdf"] += 1
            pages += count
    for section in ("tutorial", "howto", "library"):
        for number, page in enumerate(sorted((pydoc / section).glob("*.html"))):
            rel = f"pydoc/{section}/{page.name}"
            if section != "library" or number % library_share == 0 or rel in answers:
                _copy(page, out / rel)
                counts["html"] += 1
    office = json.loads(OFFICE.read_text())
    for name, spec in office["docx"].items():
        _write_docx(out / "office" / name, spec)
        counts["docx"] += 1
    for name, cells in office["notebooks"].items():
        _write_notebook(out / "notebooks" / name, cells)
        counts["notebook"] += 1
    missing = [rel for rel in answers if not (out / rel).exists()]
    if missing:
        sys.exit(f"answer files missing from the sources: {missing}")
    print(json.dumps({"files": counts, "pdf_pages": pages, "out": str(out)}))


def _write_docx(path: Path, spec: dict[str, Any]) -> None:
    import docx

    document = docx.Document()
    for kind, value in spec["blocks"]:
        if kind == "title":
            document.add_heading(value, level=0)
        elif kind.startswith("heading"):
            document.add_heading(value, level=int(kind[len("heading") :]))
        elif kind == "bullet":
            document.add_paragraph(value, style="List Bullet")
        elif kind == "table":
            table = document.add_table(rows=len(value), cols=len(value[0]))
            for r, row in enumerate(value):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
        else:
            document.add_paragraph(value)
    document.core_properties.title = spec["title"]
    document.core_properties.author = spec["author"]
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))


def _write_notebook(path: Path, cells: list[list[str]]) -> None:
    body = []
    for kind, source in cells:
        cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=1, outputs=[])
        body.append(cell)
    notebook = {
        "cells": body,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))


def run(corpus: Path, index_dir: Path, limit: int) -> dict[str, Any]:
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.retrieval.search import SearchRequest, search
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    settings = Settings.for_root(corpus.resolve(), index_dir)
    index = Index(settings)
    try:
        started = time.perf_counter()
        report = Indexer(index).sync()
        index_seconds = time.perf_counter() - started
        status = index.status()
        rows = []
        for question in questions():
            expected = question["file"]
            expected = {expected} if isinstance(expected, str) else set(expected)
            began = time.perf_counter()
            response = search(index, SearchRequest(question["query"], limit=limit, per_file=3))
            seconds = time.perf_counter() - began
            paths = [hit.path for hit in response.results]
            rank = next((n for n, path in enumerate(paths, 1) if path in expected), None)
            row: dict[str, Any] = {
                "id": question["id"],
                "format": question["format"],
                "hit": rank is not None,
                "rank": rank,
                "top": paths[:3],
                "ms": round(seconds * 1000, 1),
            }
            if "pages" in question and rank is not None:
                hit = response.results[rank - 1]
                shown = [passage.page for passage in hit.passages]
                row["pages_shown"] = shown
                row["page_hit"] = any(page in question["pages"] for page in shown)
            elif "pages" in question:
                row["page_hit"] = False
            rows.append(row)
    finally:
        index.close()
    by_format: dict[str, dict[str, Any]] = {}
    for name in sorted({row["format"] for row in rows}):
        mine = [row for row in rows if row["format"] == name]
        summary: dict[str, Any] = {
            "questions": len(mine),
            f"hit@{limit}": round(sum(row["hit"] for row in mine) / len(mine), 3),
            "mrr": round(sum(1 / row["rank"] for row in mine if row["rank"]) / len(mine), 3),
        }
        if any("page_hit" in row for row in mine):
            summary[f"page@{limit}"] = round(sum(row["page_hit"] for row in mine) / len(mine), 3)
        by_format[name] = summary
    return {
        "corpus": str(corpus),
        "files_indexed": status.indexed,
        "skipped": status.skip_reasons,
        "skipped_files": [list(pair) for pair in status.skipped_files],
        "chunks": status.chunks,
        "index_seconds": round(index_seconds, 1),
        "chunks_embedded": report.chunks_embedded,
        "by_format": by_format,
        "questions": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="make the corpus folder")
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--texdoc", type=Path, default=TEXDOC)
    make.add_argument("--pydoc", type=Path, default=PYDOC)
    make.add_argument("--max-pages", type=int, default=12)
    make.add_argument("--library-share", type=int, default=3, help="every Nth library page")
    ask = commands.add_parser("run", help="index the corpus and ask the questions")
    ask.add_argument("--corpus", type=Path, required=True)
    ask.add_argument("--index-dir", type=Path, required=True)
    ask.add_argument("--limit", type=int, default=5)
    ask.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "build":
        build(args.out, args.texdoc, args.pydoc, args.max_pages, args.library_share)
        return
    result = run(args.corpus, args.index_dir, args.limit)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name, summary in result["by_format"].items():
        print(name, summary)
    for row in result["questions"]:
        print(row)


if __name__ == "__main__":
    main()
