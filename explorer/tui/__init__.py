"""The Textual user interface of explorer (imports the core, never the other way round)."""

import os

FRAMES_PER_SECOND = "120"
"""Textual paints at most this often (its default is 60). A frame painted right after a key
(the typed character) makes Textual's timer wait one to two frame periods before the next, so
at 60 the results of that key waited 9 ms on the median for their frame on the nginx corpus;
at 120 the wait halves. Frames are only painted when something changed, so an idle screen
costs nothing more. ``TEXTUAL_FPS`` in the environment still wins."""

os.environ.setdefault("TEXTUAL_FPS", FRAMES_PER_SECOND)
