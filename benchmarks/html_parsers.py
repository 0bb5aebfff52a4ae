"""How fast each HTML parser explorer could use reads a folder of real pages.

For every ``.html`` file under a folder, each parser builds its tree from the bytes and the
text outside ``script``/``style`` is collected by walking it: the work the HTML format does,
without its rules for headings and chrome. Reports files, MB and pages per second, failures,
and characters of text found (a parser that loses text shows fewer).

Candidates: lxml (libxml2), selectolax (lexbor), html5lib (pure Python, the HTML5 algorithm),
BeautifulSoup over Python's ``html.parser``, and ``html.parser`` alone (the standard library,
streaming, no tree). Run it under the CPU lock::

    flock /tmp/explorer-cpu.lock python benchmarks/html_parsers.py \\
        /tmp/pydoc/usr/share/doc/python3.11/html --libs ~/.cache/explorer-dev/formats/benchlibs

``--libs`` is a folder the candidates not installed in the venv were installed into with
``pip install --target``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

_SKIP = {"script", "style"}


def with_lxml(data: bytes) -> int:
    import lxml.html

    root = lxml.html.document_fromstring(data)
    chars = 0
    for element in root.iter():
        if element.tag in _SKIP:
            continue
        chars += len(element.text or "") if isinstance(element.tag, str) else 0
        chars += len(element.tail or "")
    return chars


def with_selectolax(data: bytes) -> int:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(data)
    for node in tree.css("script, style"):
        node.decompose()
    return len(tree.body.text(deep=True)) if tree.body is not None else 0


def with_html5lib(data: bytes) -> int:
    import html5lib

    root = html5lib.parse(data, treebuilder="etree", namespaceHTMLElements=False)
    chars = 0
    for element in root.iter():
        if element.tag in _SKIP:
            continue
        chars += len(element.text or "") if isinstance(element.tag, str) else 0
        chars += len(element.tail or "")
    return chars


def with_bs4(data: bytes) -> int:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "html.parser")
    for node in soup(["script", "style"]):
        node.decompose()
    return len(soup.get_text())


class _TextCounter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chars = 0
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skipping += tag in _SKIP

    def handle_endtag(self, tag: str) -> None:
        self.skipping -= tag in _SKIP and self.skipping > 0

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.chars += len(data)


def with_html_parser(data: bytes) -> int:
    counter = _TextCounter()
    counter.feed(data.decode("utf-8", "replace"))
    counter.close()
    return counter.chars


PARSERS: dict[str, Callable[[bytes], int]] = {
    "lxml": with_lxml,
    "selectolax": with_selectolax,
    "html5lib": with_html5lib,
    "bs4 (html.parser)": with_bs4,
    "html.parser": with_html_parser,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--libs", type=Path, help="extra folder of installed packages")
    parser.add_argument("--parser", choices=sorted(PARSERS), action="append")
    args = parser.parse_args()
    if args.libs:
        sys.path.append(str(args.libs))
    files = sorted(path for path in args.folder.rglob("*.html") if "_sources" not in path.parts)
    contents = [path.read_bytes() for path in files]
    megabytes = sum(map(len, contents)) / 1e6
    results = []
    for name in args.parser or list(PARSERS):
        extract = PARSERS[name]
        failed = chars = 0
        started = time.perf_counter()
        for data in contents:
            try:
                chars += extract(data)
            except Exception:  # noqa: BLE001 - a benchmark counts every failure
                failed += 1
        seconds = time.perf_counter() - started
        result = {
            "parser": name,
            "files": len(files),
            "megabytes": round(megabytes, 1),
            "seconds": round(seconds, 2),
            "files_per_second": round(len(files) / seconds, 1),
            "mb_per_second": round(megabytes / seconds, 2),
            "failed": failed,
            "text_chars": chars,
        }
        results.append(result)
        print(json.dumps(result), file=sys.stderr, flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
