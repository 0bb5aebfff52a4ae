"""Where a model's tokens stand in a text, read with the model's own ``tokenizer.json``.

The chunker asks for the token offsets of every section it cuts, once per section (and again
only for the rare window that ends inside a word): on the Linux kernel's ``driver-api`` pages
that is the whole text, 7.6 million characters, about 5 s of a 15 s keyword pass. The count
is the tokenizer's own work; what made it cost the pass more than its time was the
interpreter's lock. ``Tokenizer.encode`` keeps the lock for all of its work, so while the
indexer's thread tokenized a long section, the read-ahead thread could not hand the next
pages to the extraction worker, and the worker sat idle. ``Tokenizer.encode_batch`` runs the
same normalizer, pre-tokenizer and model and gives the same offsets, but lets go of the lock
while it works: the reading and parsing ahead go on beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

TokenSpans = Callable[[str], list[tuple[int, int]]]
"""Character spans of a model's tokens in a text."""


def tokenizer_file_spans(tokenizer_file: Path) -> TokenSpans:
    """Character ``(start, end)`` of each token of a text, as the tokenizer saved in
    ``tokenizer_file`` cuts it: no special tokens, no truncation, no padding. The interpreter's
    lock is free while a text is tokenized (see the module's docstring)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def spans(text: str) -> list[tuple[int, int]]:
        # A batch of one: ``encode`` would hold the interpreter's lock throughout.
        (encoding,) = tokenizer.encode_batch([text], add_special_tokens=False)
        return encoding.offsets

    return spans
