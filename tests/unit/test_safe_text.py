"""The one sanitiser every display goes through: controls escaped, real text kept."""

from __future__ import annotations

import json

import pytest

from explorer.core.safe_text import (
    LABEL_MAX,
    safe_json,
    safe_label,
    safe_name,
    safe_spans,
    safe_text,
)


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


def test_a_tab_in_a_name_is_escaped_and_a_tab_in_text_is_kept():
    assert safe_name("tab\tname.md") == r"tab\x09name.md"
    assert safe_name("esc\x1bname.md") == r"esc\x1bname.md"
    assert safe_text("a\tb") == "a\tb"
    plain = "plain/name.md"
    assert safe_name(plain) is plain
    safe, spans = safe_spans("tab\tname", [(4, 8)], name=True)
    assert safe == r"tab\x09name" and safe[spans[0][0] : spans[0][1]] == "name"


def test_labels_are_cut_with_an_ellipsis_and_short_ones_kept():
    assert safe_label("Install > Linux") == "Install > Linux"
    long = "H" * 100_000
    shown = safe_label(long)
    assert len(shown) == LABEL_MAX and shown.endswith("…") and shown.startswith("HHH")
    assert safe_label("x" * 50, limit=10) == "x" * 9 + "…"
    assert safe_label("a\x1b" + "b" * 300).startswith(r"a\x1bb")  # cut, then escaped
    assert safe_label("link\tname") == r"link\x09name"


def test_spans_past_a_cut_are_dropped_or_shortened():
    text = "zebra " + "x" * 300 + " zebra"
    safe, spans = safe_spans(text, [(0, 5), (len(text) - 5, len(text))], limit=LABEL_MAX)
    assert len(safe) == LABEL_MAX and spans == [(0, 5)]
    assert safe_spans("abcdefghij", [(6, 10)], limit=8)[1] == [(6, 7)]
