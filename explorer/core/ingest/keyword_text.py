"""The text the keyword index matches, for languages written with or without spaces.

SQLite's ``unicode61`` tokenizer splits text at whatever is not a letter or a digit, so a sentence
of Chinese, Japanese or Thai (written without spaces between words) is one token and no word
inside it can match. Before text goes into the keyword index, and before a query's words become
FTS5 phrases, each run of characters of a script written without spaces (CJK: Han, Hiragana,
Katakana, Hangul, Bopomofo; South-East Asian: Thai, Lao, Khmer, Myanmar) is written as its
overlapping bigrams, as Lucene's CJK analyzer makes them, then its last character alone::

    重跑gen-itgc后检查  ->  重跑 跑 gen-itgc 后检 检查 查

(a run goes on across a line break: hard-wrapped text breaks lines inside words), so a word of
two or more characters is the phrase of its bigrams (``检查`` one token, ``数据库`` the
phrase ``数据 据库``) and a word of one character is a prefix (``后*``: the one token each
of its places in a run starts with). An identifier glued to CJK text is a word of its own.
Text that is not CJK is left as it is (the index's porter stemmer and its accent folding see
it as before); compatibility forms (full-width ``ＡＢＣ``, half-width ｶﾀｶﾅ, ligatures) are
folded to their usual letters on both sides (NFKC).

Highlights match a folded copy of a text that keeps its length (:func:`match_fold`): case, the
accents of Latin letters and compatibility forms folded one character for one, so a snippet marks
``Zürich`` for ``zurich`` and shows it as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"  # 々〆〇, numerals, kana repeats
    "\u3041-\u3096\u309d-\u309f"  # Hiragana
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana (the middle dot ・ separates)
    "\u3105-\u312f\u3131-\u318e\u31a0-\u31bf\u31f0-\u31ff"  # Bopomofo, Hangul jamo, kana
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs and extension A
    "\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"  # Hangul syllables and jamo
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f\uffa0-\uffdc"  # half-width Katakana and Hangul
    "\U0001b000-\U0001b16f"  # kana supplement
    "\U00020000-\U0002fa1f\U00030000-\U000323af"  # CJK extensions B to H
)
"""Chinese, Japanese and Korean: written without spaces between words (Korean puts spaces
between phrases, its particles glued on)."""
SOUTHEAST_ASIAN_SPANS = (
    (0x0E01, 0x0E3A),  # Thai letters, vowels and tone marks (not ฿, ๏, its digits, ๚ ๛)
    (0x0E40, 0x0E4E),
    (0x0E81, 0x0ECF),  # Lao letters, vowels and tone marks (not its digits)
    (0x1000, 0x1049),  # Myanmar, but its section marks ၊ ။
    (0x104C, 0x109F),
    (0xA9E0, 0xA9FE),  # Myanmar extended B and A
    (0xAA60, 0xAA7F),
    (0x1780, 0x17D3),  # Khmer letters and signs (not ។ ៕ ៖, ៘–៚, ៛)
    (0x17D7, 0x17D7),
    (0x17DC, 0x17DD),
)
"""Thai, Lao, Khmer and Myanmar, first and last code points: written without spaces between
words, a space at most between phrases or sentences; their digits and punctuation split runs as
any other's do."""
SOUTHEAST_ASIAN_RANGES = "".join(
    f"{chr(first)}-{chr(last)}" for first, last in SOUTHEAST_ASIAN_SPANS
)
UNSPACED_RANGES = CJK_RANGES + SOUTHEAST_ASIAN_RANGES
"""The characters written without spaces between words that this module splits into bigrams."""


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: a class of every CJK block takes milliseconds to
    compile, which a program that never meets such text should not spend as it starts."""
    return re.compile(pattern)


CJK_RUN = f"[{CJK_RANGES}]+"
"""A run of CJK characters (a regular expression)."""
UNSPACED_RUN = f"[{UNSPACED_RANGES}]+"
"""A run of characters written without spaces (a regular expression)."""
LINE_BREAK = r"[ \t]*\r?\n[ \t]*"
"""A line break with the indentation around it: hard-wrapped CJK text (a Markdown source, a
rendered manual page) breaks lines inside words, and a reader reads on across it."""
_WRAPPED_RUN = f"[{UNSPACED_RANGES}]+(?:{LINE_BREAK}[{UNSPACED_RANGES}]+)*"
_SPACE = re.compile(r"\s+")
WORD_CHAR_OUTSIDE_UNSPACED = f"[^\\W{UNSPACED_RANGES}]"
"""A regular-expression class: a letter, digit or underscore of a script written with spaces
(to split a query into words; a class this large takes milliseconds to compile, so it is
compiled once)."""
_WORD = f"[{UNSPACED_RANGES}]+|{WORD_CHAR_OUTSIDE_UNSPACED}+"
_LATIN_BASE = re.compile(r"[A-Za-z]")


def is_cjk(text: str) -> bool:
    """Whether ``text`` is one run of Chinese, Japanese or Korean characters (see
    :data:`CJK_RANGES`)."""
    return _compiled(CJK_RUN).fullmatch(text) is not None


def is_unspaced(text: str) -> bool:
    """Whether ``text`` is one run of characters written without spaces (CJK, Thai…: see
    :data:`UNSPACED_RANGES`), matched by its bigrams."""
    return _compiled(UNSPACED_RUN).fullmatch(text) is not None


def run_tokens(run: str) -> list[str]:
    """The index tokens of one CJK run: its overlapping bigrams, then its last character."""
    return [run[place : place + 2] for place in range(len(run) - 1)] + [run[-1:]]


def keyword_text(text: str) -> str:
    """``text`` as the keyword index holds it for matching (see the module docstring); text of
    plain ASCII is returned as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    return _compiled(_WRAPPED_RUN).sub(_run_text, text)


def _run_text(run: re.Match[str]) -> str:
    """One run of CJK characters (on one line or across line breaks) as its index tokens."""
    return " " + " ".join(run_tokens(_SPACE.sub("", run.group()))) + " "


def unspaced_pattern(word: str) -> str:
    """A regular expression finding ``word`` (a run written without spaces, from
    :func:`query_words`: NFKC) in text as written: across a line break, as the keyword index
    reads on, and a character NFKC writes as two (Thai's SARA AM ``ำ`` as ``ํา``) either way."""
    composed = _composed_forms()
    pieces, place = [], 0
    while place < len(word):
        pair = word[place : place + 2]
        if pair in composed:
            pieces.append(f"(?:{re.escape(pair)}|{re.escape(composed[pair])})")
            place += 2
        else:
            pieces.append(re.escape(word[place]))
            place += 1
    return f"(?:{LINE_BREAK})?".join(pieces)


@cache
def _composed_forms() -> dict[str, str]:
    """The characters of the South-East Asian scripts that NFKC writes as two (Thai's and Lao's
    AM), by those two."""
    found = {}
    for first, last in SOUTHEAST_ASIAN_SPANS:
        for point in range(first, last + 1):
            written = unicodedata.normalize("NFKC", chr(point))
            if len(written) == 2:
                found[written] = chr(point)
    return found


def query_words(text: str) -> list[str]:
    """The lowercase words of query text, in order: runs of characters written without spaces
    and runs of other letters and digits apart (``重跑gen-itgc后``: ``重跑``, ``gen``, ``itgc``,
    ``后``)."""
    return _compiled(_WORD).findall(unicodedata.normalize("NFKC", text).lower())


@dataclass(frozen=True)
class PhraseTokens:
    """A query phrase as the keyword index's tokens."""

    tokens: tuple[str, ...]
    prefix: bool
    """The last token is a prefix: a CJK word of one character that ends the phrase."""

    def fts(self) -> str:
        """The phrase as an FTS5 string (with `` *`` for a prefix)."""
        return '"' + " ".join(self.tokens).replace('"', '""') + '"' + (" *" if self.prefix else "")


def phrase_tokens(words: Sequence[str]) -> PhraseTokens:
    """The index tokens of a phrase of ``words`` (from :func:`query_words`), matched in order.

    A CJK word followed by another word ends its run in the text as in the query, so it brings
    its last character too (as :func:`run_tokens` does); the CJK word that ends the phrase may
    go on in the text, so it brings its bigrams only, or, of one character, that character as
    a prefix of the token its place in the text starts.
    """
    tokens: list[str] = []
    for place, word in enumerate(words):
        if not is_unspaced(word):
            tokens.append(word)
        elif place < len(words) - 1:
            tokens.extend(run_tokens(word))
        else:
            tokens.extend(run_tokens(word)[:-1] or [word])
    return PhraseTokens(tuple(tokens), is_unspaced(words[-1]) and len(words[-1]) == 1)


def bigrams(word: str) -> list[str]:
    """The overlapping bigrams of a CJK word (the word itself when it has one character)."""
    return run_tokens(word)[:-1] or [word]


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """One character folded for matching, always one character: compatibility form, case and
    the accents of a Latin letter (``Ü`` -> ``u``, ``Ａ`` -> ``a``); unchanged where a fold
    would give more or fewer characters (``ß``, ``ﬁ``)."""
    folded = unicodedata.normalize("NFKC", char)
    folded = folded if len(folded) == 1 else char
    lower = folded.lower()
    folded = lower if len(lower) == 1 else folded
    parts = unicodedata.normalize("NFD", folded)
    marks = parts[1:]
    if marks and _LATIN_BASE.match(parts[0]) and all(map(unicodedata.combining, marks)):
        return parts[0].lower()  # ``İ``, whose lower case is two characters: ``i``
    return folded


class _FoldTable(dict[int, str]):
    """Code point -> :func:`_fold_char` of it, filled as characters are met: ``str.translate``
    then folds a text in C (a passage of kernel documentation with one typographic quote
    took 0.2 ms a character at a time, a snippet's largest part)."""

    def __missing__(self, code: int) -> str:
        if len(self) >= FOLD_TABLE_MOST:  # a text of very many distinct characters
            self.clear()
        folded = _fold_char(chr(code))
        self[code] = folded
        return folded


FOLD_TABLE_MOST = 65_536
"""Characters the fold table keeps before it starts again."""

_FOLDS = _FoldTable()


def match_fold(text: str) -> str:
    """``text`` folded for highlights, one character for one, so that a match in the folded
    text is at the same place in ``text`` (see :func:`_fold_char`)."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLDS)


@lru_cache(maxsize=1)
def _accented() -> dict[str, str]:
    """Each ASCII letter and the Latin letters written as it with accents (``e``: ``éèêë…``),
    case kept."""
    variants: dict[str, list[str]] = {}
    for point in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00)):
        char = chr(point)
        parts = unicodedata.normalize("NFD", char)
        marks = parts[1:]
        if marks and _LATIN_BASE.match(parts[0]) and all(map(unicodedata.combining, marks)):
            variants.setdefault(parts[0], []).append(char)
    return {base: "".join(chars) for base, chars in variants.items()}


def accent_pattern(text: str) -> str:
    """A regular expression for ``text`` as typed, accents aside: each Latin letter matches
    itself with any accent (``cafe`` finds ``café``, ``café`` finds ``cafe``)."""
    accented = _accented()
    pattern = []
    for char in text:
        parts = unicodedata.normalize("NFD", char)
        base = parts[0] if _LATIN_BASE.match(parts[0]) else char
        if base in accented:
            pattern.append(f"[{base}{accented[base]}]")
        else:
            pattern.append(re.escape(char))
    return "".join(pattern)
