"""Words that carry no topic (English function words, and a few verbs of asking).

Search leaves them out of a question in plain words and does not mark them in snippets; the
embedding priority leaves them out of the words it ranks a file's likely neighbours by.
"""

from __future__ import annotations

FUNCTION_WORDS = frozenset(
    """a about above after again all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours out over
    own same she should so some such than that the their theirs them then there these they
    this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours get got want need make let keep""".split()
)
"""Words that carry no topic: the keyword leg leaves them out of a question in plain words
(BM25 would otherwise rank passages by "how", "my" and "after"), and snippets do not mark them.
They stay in quoted phrases and identifiers, and a query made of nothing else keeps them all."""
