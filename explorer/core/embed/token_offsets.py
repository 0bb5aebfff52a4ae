"""Where a model's tokens stand in a text, read with the model's own ``tokenizer.json``.

The chunker asks for the token offsets of every section it cuts, once per section (and again
only for the rare window that ends inside a word): on the Linux kernel's ``driver-api`` pages
that is the whole text, 7.6 million characters, about 5 s of a 15 s keyword pass. That work
is needed (the windows are cut at token offsets); what need not be is the rest of the pass
stopping while it runs. ``Tokenizer.encode`` keeps the interpreter's lock throughout, so while the
indexer's thread tokenized a long section, the read-ahead thread could not hand the next
pages to the extraction worker, and the worker sat idle. ``Tokenizer.encode_batch`` runs the
same normalizer, pre-tokenizer and model and gives the same offsets, but lets go of the lock
while it works: the reading and parsing ahead go on beside it.

Letting go has a price: taking the lock back waits for whichever thread holds it to give it up,
up to the interpreter's switch interval (5 ms). In a sync that thread is the read-ahead, doing
the work the wait lets it do; but the vector phase asks for a heading path's tokens once per
chunk, in 25 us holding the lock and in 5 ms without it while another thread runs Python
(measured), so a short text is tokenized holding the lock.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

TokenSpans = Callable[[str], list[tuple[int, int]]]
"""Character spans of a model's tokens in a text."""

UNLOCKED_CHARS = 1024
"""Texts this long or longer are tokenized without the interpreter's lock. On the kernel's
driver-api pages, 39% of the sections the chunker counts are, and they hold 93% of the
characters: the keyword pass took 0.91 s of wall time per CPU second before, 0.82 with every
text tokenized without the lock, 0.84 with those of 4,096 characters or more."""


def tokenizer_file_spans(tokenizer_file: Path) -> TokenSpans:
    """Character ``(start, end)`` of each token of a text, as the tokenizer saved in
    ``tokenizer_file`` cuts it: no special tokens, no truncation, no padding. The interpreter's
    lock is free while a long text is tokenized (see the module's docstring)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def spans(text: str) -> list[tuple[int, int]]:
        if len(text) < UNLOCKED_CHARS:
            return tokenizer.encode(text, add_special_tokens=False).offsets
        # A batch of one: the same offsets, without the interpreter's lock while it works.
        (encoding,) = tokenizer.encode_batch([text], add_special_tokens=False)
        return encoding.offsets

    return spans
