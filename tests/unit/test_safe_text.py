"""The one sanitiser every display goes through: controls escaped, real text kept."""

from __future__ import annotations

import json

import pytest

from explorer.core.safe_text import safe_json, safe_spans, safe_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("title\x1b]0;PWNED\x07", r"title\x1b]0;PWNED\x07"),
        ("clear\x1b[2J", r"clear\x1b[2J"),
        ("c1 \x9b31m csi", r"c1 \x9b31m csi"),
        ("del\x7f cr\r", r"del\x7f cr\x0d"),
        ("\u202egnp.exe", r"\u202egnp.exe"),
        ("isolate \u2066x\u2069", r"isolate \u2066x\u2069"),
        ("two\nlines", r"two\x0alines"),
        ("bad\udcff\udcfename.md", r"bad\xff\xfename.md"),  # undecodable bytes of a name
    ],
)
def test_controls_are_shown_escaped(raw, shown):
    assert safe_text(raw) == shown


def test_real_text_is_kept_as_is():
    text = "Café 🦓 naïve — 東京 עברית\ttab"
    assert safe_text(text) is text
    assert safe_text("line one\nline two\n", keep_lines=True) == "line one\nline two\n"
    assert safe_text("a\x1b[2Jb\nc", keep_lines=True) == "a\\x1b[2Jb\nc"


def test_spans_follow_the_escapes():
    text = "\x1b[2J zebra \x1b]0;x\x07 zebra"
    first, second = text.index("zebra"), text.rindex("zebra")
    safe, spans = safe_spans(text, [(first, first + 5), (second, second + 5)])
    assert [safe[a:b] for a, b in spans] == ["zebra", "zebra"]
    assert "\x1b" not in safe


def test_json_keeps_the_value_and_writes_no_raw_control():
    value = {"path": "a\x1b]0;x\x07\x9b\u202e\x7f.md", "bytes": "bad\udcff"}
    encoded = safe_json(json.dumps(value, ensure_ascii=False))
    assert all(char not in encoded for char in "\x1b\x07\x9b\u202e\x7f\udcff")
    assert json.loads(encoded) == value
