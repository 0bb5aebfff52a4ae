"""What search results show of HTML pages: snippets with markup, passages without a heading.

Issue 22 counted, for ten questions over the Python manual's HTML, the snippets that contained
tags (132 of 140) and those with a heading (none). This asks the HTML questions of
``benchmarks/devsets/documents.jsonl`` of an index (keyword mode: no model, so an index built
with ``--keywords-only`` by any version of explorer can be compared) and counts, over the first
``--limit`` files' passages, the snippets holding a tag and the passages with a heading::

    python -m explorer index DIR/pydoc --keywords-only --index-dir OLD   # with the old code
    python benchmarks/html_snippets.py --root DIR/pydoc --index-dir OLD
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from explorer.core.models import SearchMode
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings

QUESTIONS = Path(__file__).resolve().parent / "devsets" / "documents.jsonl"
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--mode", default="keyword", choices=[str(mode) for mode in SearchMode])
    args = parser.parse_args()
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    questions = [row["query"] for row in rows if row["format"] == "html"]
    index = Index(Settings.for_root(args.root.resolve(), args.index_dir), read_only=True)
    snippets = tagged = headed = 0
    try:
        for query in questions:
            request = SearchRequest(query, mode=SearchMode(args.mode), limit=args.limit)
            for hit in search(index, request).results:
                for passage in hit.passages:
                    snippets += 1
                    tagged += bool(_TAG.search(passage.snippet))
                    headed += bool(passage.heading)
    finally:
        index.close()
    print(
        json.dumps(
            {
                "questions": len(questions),
                "snippets": snippets,
                "with_tags": tagged,
                "with_heading": headed,
            }
        )
    )


if __name__ == "__main__":
    main()
