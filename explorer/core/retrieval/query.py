"""Query text handling: FTS5 expressions that never fail, path filters, and snippets.

Anything a user types becomes a safe FTS5 expression: words are pulled out with a Unicode word
pattern, each is quoted, and they are OR-ed so BM25 ranks documents by how many and how rare the
words they hold are. Identifiers and quoted text stay whole phrases; function words of a question
in plain words are left out. Operators and punctuation in the input are never passed through.
Words of Chinese, Japanese and Korean become the keyword index's bigrams
(:mod:`explorer.core.ingest.keyword_text`); highlights and coverage match text folded for case
and accents, so ``zurich`` marks ``Zürich``.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from explorer.core.errors import ExplorerError
from explorer.core.ingest.function_words import FUNCTION_WORDS
from explorer.core.ingest.keyword_text import (
    bigrams,
    is_cjk,
    is_unspaced,
    match_fold,
    phrase_tokens,
    query_words,
    unspaced_pattern,
)
from explorer.core.ingest.stemming import word_terms
from explorer.core.ingest.wildcards import CharClass, Token, TokenKind, Wildcard, char_token
from explorer.core.safe_text import echoed
from explorer.core.safe_text import quoted as quoted_value

GLOB_CHARS = set("*?[")
MIN_PREFIX = 3
"""A word being typed is matched as a prefix only from this many characters on."""
LONGEST_CJK_WORD = 4
"""A run of CJK characters typed alone is matched as one word up to this many characters; a
longer one (a long word, or several, as a question is written) as that word and each of its
bigrams, each a piece of its own, so BM25 ranks the passages that hold the whole run first, then
those holding most of its bigrams. A run of Thai, Lao, Khmer or Burmese is always matched as
typed: one word of theirs is often longer than this (``คอมพิวเตอร์``, 11 characters), and its
bigrams alone found every page of the script for a word none held."""


class QueryError(ExplorerError, ValueError):
    """A query that cannot be run; the message is meant for the user."""


class PathPatternError(QueryError):
    """A path filter that is not a valid glob; names the pattern and what is wrong with it."""

    def __init__(self, pattern: str, problem: str) -> None:
        self.pattern = pattern
        self.problem = problem
        super().__init__(f"path filter {quoted_value(pattern)}: {problem}")


def query_terms(text: str) -> list[str]:
    """The distinct lowercase words of a query, in order (:func:`query_words`); a run of CJK
    characters longer than a word is followed by its bigrams."""
    seen: dict[str, None] = {}
    for word in query_words(text):
        seen.setdefault(word, None)
        if is_cjk(word) and len(word) > LONGEST_CJK_WORD:
            for pair in bigrams(word):
                seen.setdefault(pair, None)
    return list(seen)


HIGHLIGHT_STOPWORDS = FUNCTION_WORDS
"""Words too common to be worth marking in a snippet (the same list)."""
QUOTED = re.compile(r'"([^"]*)"')


IDENTIFIER = re.compile(r"\w[^\w\s]+\w|_|\d|[a-z][A-Z]")
"""What marks a piece as an identifier rather than a word: inner punctuation (``X-Tern-Signature``,
``nginx.org/x``), an underscore, a digit, or camelCase (``VirtualServerRoute``)."""


@dataclass(frozen=True)
class KeywordPiece:
    """One unit the keyword leg matches: a word, or a phrase of words in order."""

    words: tuple[str, ...]
    kept_whole: bool
    """A quoted phrase or an identifier (``proxy_cache_valid``, ``X-Tern-Signature``): its
    words are matched as one phrase and function words in it are kept."""
    identifier: bool = False
    """Typed as an identifier (see :data:`IDENTIFIER`), not as a word of a sentence."""

    @property
    def is_function_word(self) -> bool:
        return not self.kept_whole and self.words[0] in FUNCTION_WORDS


def keyword_pieces(text: str) -> list[KeywordPiece]:
    """The distinct pieces of a query for the keyword leg, in order, function words included.

    Text in double quotes is one phrase; elsewhere each white-space separated piece is one
    word, or (an identifier with inner punctuation such as ``TERN-E1042``, or a word glued to
    CJK text) a phrase of its words; a run of CJK characters longer than a word gives a piece
    of its own and one per bigram (see :data:`LONGEST_CJK_WORD`).
    """
    pieces: dict[tuple[str, ...], KeywordPiece] = {}

    def add(raw: str, quoted: bool) -> None:
        words = tuple(query_words(raw))
        sentence = len(words) == 1 and is_cjk(words[0]) and len(words[0]) > LONGEST_CJK_WORD
        if not quoted and sentence:
            pieces.setdefault(words, KeywordPiece(words, False))
            for pair in bigrams(words[0]):
                pieces.setdefault((pair,), KeywordPiece((pair,), False))
            return
        if words and words not in pieces:
            identifier = not quoted and IDENTIFIER.search(raw) is not None
            pieces[words] = KeywordPiece(words, quoted or len(words) > 1, identifier)

    position = 0
    for quoted in QUOTED.finditer(text):
        for raw in text[position : quoted.start()].split():
            add(raw, False)
        add(quoted.group(1), True)
        position = quoted.end()
    for raw in text[position:].split():
        add(raw, False)
    return list(pieces.values())


def is_lookup(pieces: Sequence[KeywordPiece]) -> bool:
    """Whether a query names only identifiers (an exact lookup, where meaning says little)."""
    topical = topic_pieces(pieces)
    return bool(topical) and all(piece.identifier for piece in topical)


def topic_pieces(pieces: Sequence[KeywordPiece]) -> list[KeywordPiece]:
    """``pieces`` without function words, unless nothing else is left."""
    topical = [piece for piece in pieces if not piece.is_function_word]
    return topical or list(pieces)


@dataclass(frozen=True)
class Query:
    """A query's text, parsed once for every stage of a search: its words (for highlights),
    its keyword pieces, the FTS5 phrases the keyword leg ORs together, whether it is an
    identifier lookup, and the patterns that measure how much of it a passage covers."""

    text: str
    prefix_last: bool
    """The last word is being typed: matched as a prefix."""
    terms: tuple[str, ...]
    """The distinct lowercase words, in order (:func:`query_terms`)."""
    pieces: tuple[KeywordPiece, ...]
    """Every keyword piece, function words included (:func:`keyword_pieces`)."""
    topical: tuple[KeywordPiece, ...]
    """The pieces without function words, unless nothing else is left (:func:`topic_pieces`)."""
    phrases: tuple[str, ...]
    """The FTS5 phrases, each a valid expression alone (``"proxy cache valid"``,
    ``"certif" *``); none when the text holds no words."""
    shaping: bool = False
    """The last piece is one or two letters being typed after other words: left out of the
    phrases and of the coverage until the word takes shape (:func:`_shaping`)."""
    prefix_word: str = ""
    """The word being typed, when the keyword leg matches it as a prefix (``"han" *`` finds
    "handler"): snippets mark the words it starts as well (:func:`snippet_and_matches`)."""

    @classmethod
    def parse(cls, text: str, prefix_last: bool = False) -> Query:
        pieces = keyword_pieces(text)
        topical = topic_pieces(pieces)
        typing = _typing_last(text, pieces, topical, prefix_last)
        shaping = typing and _shaping(pieces, topical)
        prefix_word = _prefix_word(pieces) if typing and not shaping else ""
        phrases = _phrases(topical, shaping, bool(prefix_word))
        terms = tuple(query_terms(text))
        return cls(
            text, prefix_last, terms, tuple(pieces), tuple(topical), phrases, shaping, prefix_word
        )

    @property
    def expression(self) -> str | None:
        """A safe FTS5 MATCH expression (the phrases OR-ed), or None when there are no words."""
        return " OR ".join(self.phrases) if self.phrases else None

    @property
    def lookup(self) -> bool:
        """The query names only identifiers (an exact lookup, where meaning says little)."""
        return is_lookup(self.topical)

    @property
    def meaning_text(self) -> str:
        """The text the query's vector is made of: the whole text, but for a word still taking
        shape (:attr:`shaping`), which the keyword leg leaves out too."""
        if not self.shaping:
            return self.text
        kept = self.text.rstrip().rsplit(None, 1)
        return kept[0] if len(kept) == 2 else self.text

    @property
    def typing(self) -> bool:
        """A word is still being typed at the end (results while typing, no space after it)."""
        return self.prefix_last and not self.text[-1:].isspace()

    @property
    def words_whole(self) -> bool:
        """Every phrase is of words typed whole: a space ends the text, or the word being typed
        is still taking shape and left out (:attr:`shaping`). The next keys add a word to
        these phrases rather than change one of them."""
        return not self.typing or self.shaping

    def coverage_matchers(self) -> list[re.Pattern[str]]:
        """One pattern per topical piece, for :func:`coverage` (the last one a prefix while
        it is being typed; left out while it takes shape)."""
        if self.shaping:
            return coverage_matchers(self.topical[:-1])
        return coverage_matchers(self.topical, self.typing)


def fts_expression(text: str, prefix_last: bool = False) -> str | None:
    """A safe FTS5 MATCH expression for ``text``, or None when it holds no words.

    Each piece (see :func:`keyword_pieces`) becomes a quoted FTS5 string, so an identifier such
    as ``TERN-E1042`` or ``max_snapshot_age`` is matched as the phrase of its words; function
    words are left out (see :data:`FUNCTION_WORDS`) and the rest are OR-ed. ``prefix_last``
    makes the last piece a prefix query, for results while typing.
    """
    return Query.parse(text, prefix_last).expression


def fts_phrases(text: str, prefix_last: bool = False) -> list[str]:
    """The phrases :func:`fts_expression` OR-s together (:attr:`Query.phrases`)."""
    return list(Query.parse(text, prefix_last).phrases)


def _typing_last(
    text: str, every: Sequence[KeywordPiece], pieces: Sequence[KeywordPiece], prefix_last: bool
) -> bool:
    """Whether the last topical piece of ``pieces`` is a word still being typed (the last of
    ``every`` piece, no space or closing quote after it, and not CJK: a CJK word comes whole
    from an input method, and one or two characters are a word)."""
    if not every or not prefix_last or text[-1:].isspace() or text.rstrip().endswith('"'):
        return False
    last = every[-1]
    return pieces[-1] is last and not is_unspaced(last.words[-1])


def _shaping(every: Sequence[KeywordPiece], pieces: Sequence[KeywordPiece]) -> bool:
    """For a last word being typed (:func:`_typing_last`): whether it is one or two letters
    after other words. Those expand to thousands of terms (or match most passages as a word,
    "s" of "it's") and only add noise: the query answers with the words before them until the
    word takes shape."""
    return len(" ".join(every[-1].words)) < MIN_PREFIX and len(pieces) > 1


def _phrases(pieces: Sequence[KeywordPiece], shaping: bool, prefix: bool) -> tuple[str, ...]:
    """The FTS5 phrases of the topical ``pieces`` (:func:`topic_pieces`: empty only when the
    query has no piece at all); ``shaping``: the last is a word being typed too short yet
    (:func:`_shaping`), ``prefix``: the last is a word being typed, matched as a prefix
    (:func:`_prefix_word`)."""
    if not pieces:
        return ()
    quoted = [phrase_tokens(piece.words).fts() for piece in pieces]
    if shaping:
        quoted.pop()
    elif prefix:
        quoted[-1] += " *"
    return tuple(quoted)


def _prefix_word(every: Sequence[KeywordPiece]) -> str:
    """For a last word being typed (:func:`_typing_last`): the word, when the keyword leg
    matches it as a prefix; "" when it is taken as typed.

    The keyword table stems what it is asked, prefixes too: "died" * is "di" *, every word that
    starts with "di". A word the stemmer changes is taken as typed (its stem already matches
    its other forms); only one it leaves alone is a prefix."""
    last = every[-1]
    word = last.words[-1]
    if len(" ".join(last.words)) >= MIN_PREFIX and not stemmer_changes(_last_token(word)):
        return word
    return ""


def stemmer_changes(word: str) -> bool:
    """Whether the keyword index's stemmer stores ``word`` as something other than the word
    itself (``died`` as ``di``, ``certificates`` as ``certif``; case and accents aside), asked
    of SQLite's own tokenizers so the two never disagree."""
    terms = word_terms(word)
    return terms.stemmed != terms.plain


def _last_token(word: str) -> str:
    """The last token the keyword index makes of ``word`` (``va`` of ``proxy_cache_va``): the
    one a prefix query extends."""
    tokens = [token for token in re.split(r"[\W_]+", word) if token]
    return tokens[-1] if tokens else word


_LATIN_LETTER = "[0-9A-Za-z_\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]"
"""A letter or digit of a Latin script: where a word typed in Latin letters starts and ends, so
that CJK text right before or after it is no obstacle (``gen`` in ``重跑gen``). A small class:
one of every CJK block made each highlight pattern take milliseconds to compile."""
_LATIN_EDGES = (f"(?<!{_LATIN_LETTER})", f"(?!{_LATIN_LETTER})", f"{_LATIN_LETTER}*")
_WORD_EDGES = (r"\b", r"\b", r"\w*")
"""The same for a word of another alphabet (Greek, Cyrillic…)."""


def _stem_pattern(word: str, prefix: bool = False) -> str:
    """A word and its inflections, crudely: short words exactly, longer ones by a shared start
    (close to what the porter stemmer of the keyword leg matches), the whole word as a prefix
    with ``prefix``; a word of a script written without spaces exactly."""
    word = match_fold(word)
    if is_unspaced(word):
        return unspaced_pattern(word)
    start, end, rest = _LATIN_EDGES if word.isascii() else _WORD_EDGES
    if prefix:
        return start + re.escape(word) + rest
    if len(word) <= 4:
        return start + re.escape(word) + end
    return start + re.escape(word[: max(4, len(word) - 2)]) + rest


def _phrase_pattern(words: Sequence[str], patterns: Sequence[str]) -> str:
    """The ``patterns`` of ``words`` in order: apart, or (next to CJK text) maybe glued."""
    joined = patterns[0]
    for place in range(1, len(words)):
        glue = r"\W*" if is_unspaced(words[place - 1]) or is_unspaced(words[place]) else r"\W+"
        joined += glue + patterns[place]
    return joined


def coverage_matchers(
    pieces: Sequence[KeywordPiece], prefix_last: bool = False
) -> list[re.Pattern[str]]:
    """One pattern per piece, for :func:`coverage`; ``prefix_last``: the last piece is a word
    being typed, matched as a prefix."""
    patterns = [[_stem_pattern(word) for word in piece.words] for piece in pieces]
    if prefix_last and patterns:
        patterns[-1][-1] = _stem_pattern(pieces[-1].words[-1], prefix=True)
    return [
        re.compile(_phrase_pattern(piece.words, words))
        for piece, words in zip(pieces, patterns, strict=True)
    ]


def coverage(text: str, matchers: Sequence[re.Pattern[str]]) -> float:
    """The share of a query's pieces (patterns from :func:`coverage_matchers`) found in ``text``
    (folded for case and accents, see :func:`~explorer.core.ingest.keyword_text.match_fold`)."""
    if not matchers:
        return 0.0
    folded = match_fold(text)
    return sum(1 for matcher in matchers if matcher.search(folded)) / len(matchers)


# -- path filters -----------------------------------------------------------------------------
def _glob_class(pattern: str, body: str) -> CharClass:
    """A glob's ``[...]`` class: its characters taken literally, ``a-z`` ranges checked, a
    leading ``!`` or ``^`` negating (a negated class matches no ``/``, as ``*`` does not)."""
    if "[:" in body or "[=" in body or "[." in body:
        raise PathPatternError(
            pattern, "POSIX classes such as [:alpha:] are not supported; use ranges like [a-z]"
        )
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if low > high:
                raise PathPatternError(pattern, f"bad character range {low}-{high}")
            ranges.append((low, high))
            i += 3
        else:
            chars.add(body[i])
            i += 1
    if not chars and not ranges:
        raise PathPatternError(pattern, "empty character class []")
    return CharClass(frozenset(chars), tuple(ranges), negate, slash_allowed=True)


def _glob_wildcard(pattern: str) -> Wildcard:
    """Translate a path glob: ``*`` and ``?`` stay within a folder, ``**`` crosses folders,
    ``[...]`` is a character class (a ``]`` right after the ``[`` or ``[!`` is literal).

    Matched without backtracking (:class:`~explorer.core.ingest.wildcards.Wildcard`), so no
    glob, however many stars it has, makes a search take long.
    """
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            tokens.append(Token(TokenKind.FOLDERS))
            i += 3
            continue
        if pattern.startswith("**", i):
            tokens.append(Token(TokenKind.ANY))
            i += 2
            continue
        if char == "*":
            tokens.append(Token(TokenKind.STAR))
        elif char == "?":
            tokens.append(Token(TokenKind.ONE))
        elif char == "[":
            start = i + 1
            if pattern[start : start + 1] in ("!", "^"):
                start += 1
            if pattern[start : start + 1] == "]":
                start += 1
            end = pattern.find("]", start)
            if end == -1:
                tokens.append(char_token(char))
            else:
                char_class = _glob_class(pattern, pattern[i + 1 : end])
                tokens.append(Token(TokenKind.CLASS, char_class=char_class))
                i = end
        else:
            tokens.append(char_token(char))
        i += 1
    return Wildcard(tokens)


@dataclass(frozen=True)
class PathFilter:
    """Prefixes and globs that a path must match one of (all paths when there are none)."""

    patterns: tuple[str, ...]
    _globs: tuple[Wildcard, ...] = field(init=False, repr=False, compare=False)
    _prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        globs: list[Wildcard] = []
        prefixes: list[str] = []
        for raw in self.patterns:
            pattern = raw.strip()
            while pattern.startswith("./"):
                pattern = pattern[2:]
            pattern = "" if pattern == "." else pattern.lstrip("/")
            if GLOB_CHARS & set(pattern):
                globs.append(_glob_wildcard(pattern))
            else:
                prefixes.append(pattern.rstrip("/"))
        object.__setattr__(self, "_globs", tuple(globs))
        object.__setattr__(self, "_prefixes", tuple(prefixes))

    @property
    def active(self) -> bool:
        return bool(self.patterns)

    def matches(self, path: str) -> bool:
        if not self.patterns:
            return True
        if any(glob.matches(path) for glob in self._globs):
            return True
        return any(
            not prefix or path == prefix or path.startswith(prefix + "/")
            for prefix in self._prefixes
        )

    def select(self, paths: Iterable[str]) -> list[str]:
        return sorted(p for p in paths if self.matches(p))

    def describe(self) -> str:
        return " or ".join(map(echoed, self.patterns)) if self.patterns else "all files"


# -- snippets ---------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _word_matcher(terms: tuple[str, ...], typed_word: str = "") -> re.Pattern[str] | None:
    """A pattern for the words a snippet marks in text folded by
    :func:`~explorer.core.ingest.keyword_text.match_fold`: short terms exactly, longer ones by
    stem, CJK words as they are; the term that is the word being typed (``typed_word``, see
    :attr:`Query.prefix_word`) as the start of any word, as the keyword leg matched it."""
    typed = match_fold(typed_word) if typed_word else None
    parts = [
        _stem_pattern(term, prefix=match_fold(term) == typed)
        for term in terms
        if term and term not in HIGHLIGHT_STOPWORDS
    ]
    if not parts:
        return None
    return re.compile("|".join(parts))


SNIPPET_WIDTH = 220
"""Characters of a passage a result's snippet shows."""


def make_snippet(
    text: str, terms: Sequence[str], width: int = SNIPPET_WIDTH
) -> tuple[str, list[tuple[int, int]]]:
    """A window of ``text`` around the densest run of query words, and where they stand in it.

    Words match by a crude stem (a shared prefix), which is close to what the porter stemmer of
    the keyword leg matches, case and accents aside. Returns (snippet, [(start, end), ...] spans
    within the snippet).
    """
    snippet, spans, _matches = snippet_and_matches(text, terms, width)
    return snippet, spans


def snippet_and_matches(
    text: str, terms: Sequence[str], width: int = SNIPPET_WIDTH, typed_word: str = ""
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """:func:`make_snippet`'s snippet and spans, and every match of the query's words in
    ``text`` (:func:`word_matches`), found once for both; ``typed_word``: the word being typed,
    matched as the start of a word (:attr:`Query.prefix_word`)."""
    hits, best_start = _densest_run(text, terms, width, typed_word)
    if not hits:
        return _shorten(_folded_start(text, width), width), [], []
    lead = max(0, best_start - width // 4)
    if lead:
        # Start at a word: the nearest white space before ``lead``, unless it is so far back that
        # the window would miss the hits (a long run without white space).
        space = max(text.rfind(c, 0, lead) for c in " \t\r\n")
        lead = space + 1 if space >= lead - width // 4 else lead
    window = text[lead : lead + width]
    prefix = "…" if lead else ""
    suffix = "…" if lead + width < len(text) else ""
    snippet, spans = _collapse(window, [(s - lead, e - lead) for s, e in hits], len(prefix))
    return prefix + snippet + suffix, spans, hits


def word_matches(text: str, terms: Sequence[str], typed_word: str = "") -> list[tuple[int, int]]:
    """Where the query's words stand in ``text`` (as :func:`make_snippet` marks them), in
    order; ``typed_word`` as in :func:`snippet_and_matches`. The bigrams a long run written
    without spaces brings (:func:`query_terms`) mark only what its whole words leave: found in
    one pass, a bigram the text holds just before the word (``်မ`` before ``မြန်မာစာ``) took
    the word's first character, and the word went unmarked."""
    whole, pieces = _whole_and_pieces(tuple(terms))
    folded = match_fold(text)
    matcher = _word_matcher(whole, typed_word)  # the same few terms for every passage shown
    found = [(m.start(), m.end()) for m in matcher.finditer(folded)] if matcher else []
    piece_matcher = _word_matcher(pieces) if pieces else None
    if piece_matcher is None:
        return found
    starts = [start for start, _end in found]
    for match in piece_matcher.finditer(folded):
        place = bisect_left(starts, match.end())  # the first whole match starting after it
        if place and found[place - 1][1] > match.start():
            continue  # within (or across the end of) a whole word's match
        found.insert(place, (match.start(), match.end()))
        starts.insert(place, match.start())
    return found


@lru_cache(maxsize=256)
def _whole_and_pieces(terms: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``terms`` apart: the query's words, and the bigrams of its long unspaced runs."""
    runs = [term for term in terms if len(term) > 2 and is_unspaced(term)]
    pieces = tuple(
        term
        for term in terms
        if len(term) == 2 and is_unspaced(term) and any(term in run for run in runs)
    )
    return tuple(term for term in terms if term not in pieces), pieces


def _densest_run(
    text: str, terms: Sequence[str], width: int, typed_word: str
) -> tuple[list[tuple[int, int]], int]:
    """Every match of ``terms`` in ``text``, and the start of the one that begins the window
    of ``width`` characters holding the most."""
    hits = word_matches(text, terms, typed_word)
    return hits, densest_start(hits, width)


def densest_start(hits: Sequence[tuple[int, int]], width: int = SNIPPET_WIDTH) -> int:
    """The start of the match (of ``hits``, in order) that begins the window of ``width``
    characters holding the most of them: where a snippet's marked words are (0 without any)."""
    if not hits:
        return 0
    starts = [start for start, _end in hits]  # increasing: the matches do not overlap
    best_start, best_count = starts[0], 0
    for place, start in enumerate(starts):
        count = bisect_left(starts, start + width, lo=place) - place  # hits in the window
        if count > best_count:
            best_start, best_count = start, count
    return best_start


_RULE_MARKS = "-=~^*_+\"'`"
"""The characters a line of text is ruled or underlined with (a Markdown rule, a
reStructuredText title's underline, a table's border)."""
FOLDED_RUN = re.compile(
    rf"\s*(?:\.\s?){{4,}}\s*|\s*([{re.escape(_RULE_MARKS)}])\1{{3,}}\s*|\s{{2,}}|[^\S ]"
)
"""What a snippet folds: a leader of dots (``Setup . . . . 12`` in a PDF's contents or index)
with the blanks around it, a rule (``-------`` under a title) with the blanks around it, and a
run of white space other than one plain space (which folds to itself, so it is not matched:
most of a passage's runs are such spaces)."""
WHITE_RUN = re.compile(r"\s{2,}|[^\S ]")
""":data:`FOLDED_RUN` for a text without two dots in a row (:data:`TWO_DOTS`) or a rule: half
the time, as the other alternatives are not tried at every character."""
TWO_DOTS = re.compile(r"\.\s?\.")
"""Two dots in a row, as a leader of dots has them (a blank between them or not)."""
_RULES = tuple(mark * 4 for mark in _RULE_MARKS)
"""The starts of a rule (looked for as strings: quicker than a pattern)."""
LEADER = " … "
"""What a leader of dots reads as in a snippet."""


def fold_runs(text: str) -> str:
    """``text`` with white space folded to one space and leaders of dots to :data:`LEADER`."""
    return _runs_of(text).sub(_folded, text).strip()


def _runs_of(text: str) -> re.Pattern[str]:
    """The pattern of the runs to fold in ``text``."""
    if TWO_DOTS.search(text) or any(rule in text for rule in _RULES):
        return FOLDED_RUN
    return WHITE_RUN


def _folded(match: re.Match[str]) -> str:
    return LEADER if match.group().lstrip()[:1] == "." else " "


def _folded_start(text: str, width: int) -> str:
    """The start of :func:`fold_runs` of ``text``, its first ``width`` characters as the whole
    would fold them (all of it when shorter), folding only as much of a long passage as that
    takes. The cut may end in a run or a leader folded otherwise than in the whole: its last
    :data:`CUT_MARGIN` characters may differ."""
    take = 4 * width
    while take < len(text):
        folded = fold_runs(text[:take])
        if len(folded) > width + CUT_MARGIN:
            return folded
        take *= 4
    return fold_runs(text)


CUT_MARGIN = 16
"""More than a partial leader of dots (and its blank) folds to, at a cut."""


def _collapse(
    window: str, hits: list[tuple[int, int]], offset: int
) -> tuple[str, list[tuple[int, int]]]:
    """Fold runs of white space and leaders of dots (:func:`fold_runs`), carrying the hit spans
    along."""
    pieces: list[str] = []
    run_ends: list[int] = []
    removed_before: list[int] = []  # characters dropped by all runs up to and including this one
    removed = 0
    last = 0
    for match in _runs_of(window).finditer(window):
        folded = _folded(match)
        pieces += (window[last : match.start()], folded)
        last = match.end()
        dropped = len(match.group()) - len(folded)
        if dropped:
            removed += dropped
            run_ends.append(last)
            removed_before.append(removed)
    pieces.append(window[last:])

    def moved(position: int) -> int:
        runs = bisect_right(run_ends, position)
        return position - (removed_before[runs - 1] if runs else 0)

    collapsed = "".join(pieces)
    shift = offset - (len(collapsed) - len(collapsed.lstrip()))
    spans = [(moved(s) + shift, moved(e) + shift) for s, e in hits if s >= 0 and e <= len(window)]
    return collapsed.strip(), spans


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0] + "…"
