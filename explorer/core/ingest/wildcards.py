"""Wildcard patterns matched without backtracking: time linear in the path, whatever the pattern.

A glob compiled to a backtracking regular expression (``[^/]*`` per star) takes time exponential
in its stars: sixteen stars and a letter ran for minutes on one file name. Here a pattern is a
sequence of :class:`Token` values, and :class:`Wildcard` runs them as a set of positions moved
forward one character at a time (Thompson's construction), with the moves from each set of
positions cached as they are found (a lazy DFA). Every character of the path is then one cached
step, and a pattern can never make a match take more than ``len(path) * len(pattern)`` steps;
a pattern that needs more characters than the path has is refused at once.

The tokens are the common ground of two glob flavours, each parsed by its own module: the
``.gitignore`` patterns of :mod:`explorer.core.ingest.ignore_patterns` and the ``--path``
filters of :mod:`explorer.core.retrieval.query`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

__all__ = ["CharClass", "Token", "TokenKind", "Wildcard", "char_token"]

MAX_CACHED_MOVES = 4096
"""Moves (and so DFA states) remembered per pattern; beyond that each move is computed as it
is needed (still linear in the path), so no pattern makes the cache grow without bound."""


class TokenKind(Enum):
    """What one token of a pattern matches."""

    CHAR = "char"
    """Exactly its character."""
    ONE = "one"
    """Any one character but ``/`` (a ``?``)."""
    CLASS = "class"
    """One character of its :class:`CharClass` (``[a-z]``)."""
    STAR = "star"
    """Any run of characters without ``/``, the empty one too (a ``*``)."""
    ANY = "any"
    """Any run of characters, ``/`` included, the empty one too (a ``**`` within a name)."""
    FOLDERS = "folders"
    """Nothing, or any run of characters ending in ``/``: zero or more folders (a ``**/``)."""


_SKIPPABLE = frozenset({TokenKind.STAR, TokenKind.ANY, TokenKind.FOLDERS})
"""Tokens that may match the empty string."""


@dataclass(frozen=True)
class CharClass:
    """A bracket expression: characters and inclusive ranges, maybe negated."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...] = ()
    negated: bool = False
    slash_allowed: bool = False
    """Whether ``/`` can ever match (never in a ``.gitignore``; a path filter's ``[/]`` can)."""

    def accepts(self, char: str) -> bool:
        """True if ``char`` is one of the class's characters (or not, when negated)."""
        if char == "/" and (self.negated or not self.slash_allowed):
            return False
        listed = char in self.chars or any(low <= char <= high for low, high in self.ranges)
        return listed != self.negated


@dataclass(frozen=True)
class Token:
    """One element of a pattern: a character, a wildcard or a class."""

    kind: TokenKind
    char: str = ""
    """The character of a :attr:`TokenKind.CHAR`."""
    char_class: CharClass | None = None
    """The class of a :attr:`TokenKind.CLASS`."""

    @classmethod
    def literal(cls, text: str) -> list[Token]:
        """One :attr:`TokenKind.CHAR` token per character of ``text``."""
        return [char_token(char) for char in text]


@lru_cache(maxsize=1024)
def char_token(char: str) -> Token:
    """The :attr:`TokenKind.CHAR` token of ``char``, made once: a pattern of 100,000
    characters shares a few tokens instead of building one (a frozen dataclass) per character."""
    return Token(TokenKind.CHAR, char)


STAR = Token(TokenKind.STAR)
ONE = Token(TokenKind.ONE)
ANY = Token(TokenKind.ANY)
FOLDERS = Token(TokenKind.FOLDERS)


class _Shape(Enum):
    """How :class:`Wildcard` matches a pattern (see its docstring)."""

    EQUAL = "equal"
    STAR_SUFFIX = "star-suffix"
    PREFIX_STAR = "prefix-star"
    PREFIX_THEN = "prefix-then"
    LAST_NAME = "last-name"
    DFA = "dfa"


def _may_match_slash(token: Token) -> bool:
    """True if ``token`` can read a ``/``."""
    if token.kind is TokenKind.CHAR:
        return token.char == "/"
    if token.kind is TokenKind.CLASS:
        assert token.char_class is not None
        return token.char_class.accepts("/")
    return token.kind in (TokenKind.ANY, TokenKind.FOLDERS)


def _simplified(tokens: Iterable[Token]) -> tuple[Token, ...]:
    """``tokens`` with runs of wildcards that match the same as one of them merged.

    ``**`` is one star, ``*`` next to an ``ANY`` is the ``ANY``; a ``FOLDERS`` is kept as it is
    (it must end on a ``/``).
    """
    out: list[Token] = []
    previous = None
    star, any_, folders = TokenKind.STAR, TokenKind.ANY, TokenKind.FOLDERS
    for token in tokens:
        kind = token.kind
        if kind is star or kind is any_:
            if previous is star or previous is any_:
                if kind is any_:
                    out[-1] = token
                    previous = kind
                continue
        elif kind is folders and previous is folders:
            continue
        out.append(token)
        previous = kind
    return tuple(out)


class Wildcard:
    """A compiled pattern; :meth:`matches` tells whether a whole text matches it.

    Common shapes skip the automaton: a plain name, or a star and a name, is compared as a
    string; a literal start (``docs/``) is compared and the rest matched; a leading ``**/``
    followed by a pattern that cannot match a ``/`` (``**/*.md``) matches the last name only.
    Any other pattern runs as a lazy DFA over the tokens (see the module's docstring).
    """

    def __init__(self, tokens: Sequence[Token]) -> None:
        """Compile ``tokens`` (in order; the whole text must match all of them)."""
        self.tokens = _simplified(tokens)
        kinds = [token.kind for token in self.tokens]
        self.min_length = sum(1 for kind in kinds if kind not in _SKIPPABLE)
        """The fewest characters a matching text has."""
        self._fixed_length = not any(kind in _SKIPPABLE for kind in kinds)
        literal = 0  # how many tokens the literal start has
        while literal < len(kinds) and kinds[literal] is TokenKind.CHAR:
            literal += 1
        self._literal = "".join(token.char for token in self.tokens[:literal])
        self._rest: Wildcard | None = None
        if literal == len(kinds):
            self._shape = _Shape.EQUAL
        elif literal == len(kinds) - 1 and kinds[-1] is TokenKind.STAR:
            self._shape = _Shape.PREFIX_STAR
        elif literal:
            self._shape, self._rest = _Shape.PREFIX_THEN, Wildcard(self.tokens[literal:])
        elif kinds[0] is TokenKind.STAR and all(k is TokenKind.CHAR for k in kinds[1:]):
            self._shape = _Shape.STAR_SUFFIX
            self._literal = "".join(token.char for token in self.tokens[1:])
        elif kinds[0] is TokenKind.FOLDERS and not any(map(_may_match_slash, self.tokens[1:])):
            self._shape, self._rest = _Shape.LAST_NAME, Wildcard(self.tokens[1:])
        else:
            self._shape = _Shape.DFA
        self._steps: list[tuple[_Step, Token]] = []
        self._skips: list[tuple[int, ...]] = []
        self._accept = 1
        self._states: list[int] = []
        """The DFA's states met so far (each a set of positions as bits), by number."""
        self._numbers: dict[int, int] = {}
        self._tables: list[dict[str, int]] = []
        """Per state number: the state number each character read leads to (-1: no match)."""
        self._learned = 0
        self._learning = threading.Lock()  # one compiled pattern may serve several threads

    def _start(self) -> None:
        """Build the automaton's program and its first state, at the first text long enough to
        need them: a hostile pattern that no path can match (50,000 characters at least)
        never pays for a program of 100,000 positions."""
        with self._learning:
            if self._tables:
                return
            self._steps, self._skips = _program(self.tokens)
            self._accept = 1 << len(self._steps)
            start = self._closure(1)
            self._states.append(start)
            self._numbers[start] = 0
            self._tables.append({})  # last: a thread that sees a table sees a whole automaton

    def matches(self, text: str) -> bool:
        """True if the whole of ``text`` matches the pattern."""
        if len(text) < self.min_length or (self._fixed_length and len(text) != self.min_length):
            return False
        shape, literal = self._shape, self._literal
        if shape is _Shape.EQUAL:
            return text == literal
        if shape is _Shape.STAR_SUFFIX:
            return text.endswith(literal) and "/" not in text[: len(text) - len(literal)]
        if shape is _Shape.PREFIX_STAR:
            return text.startswith(literal) and "/" not in text[len(literal) :]
        if shape is _Shape.PREFIX_THEN:
            assert self._rest is not None
            return text.startswith(literal) and self._rest.matches(text[len(literal) :])
        if shape is _Shape.LAST_NAME:
            assert self._rest is not None
            return self._rest.matches(text[text.rfind("/") + 1 :])
        return self._run(text)

    # -- the lazy DFA -----------------------------------------------------------------------------
    def _run(self, text: str) -> bool:
        if not self._tables:
            self._start()
        number, tables = 0, self._tables
        for index, char in enumerate(text):
            following = tables[number].get(char)
            if following is None:
                if self._learned >= MAX_CACHED_MOVES:  # a hostile pattern: stop learning
                    return self._run_uncached(self._states[number], text[index:])
                following = self._learn(number, char)
            if following < 0:
                return False
            number = following
        return bool(self._states[number] & self._accept)

    def _learn(self, number: int, char: str) -> int:
        """The DFA state (by number) reached from state ``number`` on ``char`` (-1: none),
        computed and remembered."""
        with self._learning:
            return self._learn_locked(number, char)

    def _learn_locked(self, number: int, char: str) -> int:
        known = self._tables[number].get(char)
        if known is not None:  # another thread learned it meanwhile
            return known
        reached = self._step(self._states[number], char)
        following = self._numbers.get(reached, -1) if reached else -1
        if reached and following < 0:
            following = len(self._states)
            self._states.append(reached)
            self._tables.append({})
            self._numbers[reached] = following
        self._tables[number][char] = following
        self._learned += 1
        return following

    def _run_uncached(self, state: int, text: str) -> bool:
        """The rest of a run, step by step: still linear, nothing more remembered."""
        for char in text:
            state = self._step(state, char)
            if not state:
                return False
        return bool(state & self._accept)

    def _closure(self, state: int) -> int:
        """``state`` (a bit per position) plus every position reached from it without reading
        a character."""
        pending, skips, last = state, self._skips, len(self._skips)
        while pending:
            lowest = pending & -pending
            pending ^= lowest
            position = lowest.bit_length() - 1
            if position < last:
                for target in skips[position]:
                    bit = 1 << target
                    if not state & bit:
                        state |= bit
                        pending |= bit
        return state

    def _step(self, state: int, char: str) -> int:
        """The positions reached from ``state`` by reading ``char``."""
        reached, pending, steps, last = 0, state, self._steps, len(self._steps)
        while pending:
            lowest = pending & -pending
            pending ^= lowest
            position = lowest.bit_length() - 1
            if position == last:
                continue
            kind, token = steps[position]
            if kind is _Step.NEXT:
                if token.kind is TokenKind.CHAR:
                    if char == token.char:
                        reached |= lowest << 1
                elif token.kind is TokenKind.ONE:
                    if char != "/":
                        reached |= lowest << 1
                else:
                    assert token.char_class is not None
                    if token.char_class.accepts(char):
                        reached |= lowest << 1
            elif kind is _Step.STAY_IN_NAME:
                if char != "/":
                    reached |= lowest
            elif kind is _Step.STAY:
                reached |= lowest
            elif kind is _Step.FOLDER_LOOP:
                reached |= lowest
                if char == "/":
                    reached |= lowest << 1
        return self._closure(reached) if reached else 0


class _Step(Enum):
    """What one position of the compiled program does with a character."""

    NEXT = "next"
    """A one-character token: on a match, move to the next position."""
    STAY_IN_NAME = "stay-in-name"
    """A ``*``: stay on any character but ``/`` (and leave at any time)."""
    STAY = "stay"
    """An ``ANY``: stay on any character (and leave at any time)."""
    FOLDER_GATE = "folder-gate"
    """The entry of a ``FOLDERS``: reads nothing; skips it, or enters its loop."""
    FOLDER_LOOP = "folder-loop"
    """Inside a ``FOLDERS``: stay on any character, leave only right after a ``/``."""


def _program(
    tokens: Sequence[Token],
) -> tuple[list[tuple[_Step, Token]], list[tuple[int, ...]]]:
    """Positions of the automaton for ``tokens`` and, for each, the positions it reaches
    without reading (a ``FOLDERS`` takes two positions, so that once it has read a character it
    can only be left after a ``/``)."""
    steps: list[tuple[_Step, Token]] = []
    skips: list[tuple[int, ...]] = []
    for token in tokens:
        here = len(steps)
        if token.kind is TokenKind.FOLDERS:
            steps += [(_Step.FOLDER_GATE, token), (_Step.FOLDER_LOOP, token)]
            skips += [(here + 1, here + 2), ()]
        elif token.kind is TokenKind.STAR:
            steps.append((_Step.STAY_IN_NAME, token))
            skips.append((here + 1,))
        elif token.kind is TokenKind.ANY:
            steps.append((_Step.STAY, token))
            skips.append((here + 1,))
        else:
            steps.append((_Step.NEXT, token))
            skips.append(())
    return steps, skips
