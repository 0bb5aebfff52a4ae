"""Markdown as its publisher shows it, for the preview: Hugo shortcodes, Obsidian callouts and
embedded images turned into plain Markdown, line for line.

A Hugo page is full of shortcodes (``{{< call-out "note" >}}``, ``{{% tab name="Linux" %}}``,
``{{< include "env-var-note.md" >}}``) that Hugo replaces when it builds the site; shown raw they
read as noise. An Obsidian callout (``> [!note] Title`` over quoted lines) runs together with
its body in plain Markdown. :func:`display_markdown` rewrites them as Markdown any renderer
shows well, and never adds or removes a line, so the lines a search result names are the lines
the preview shows:

- a note, tip, warning (``call-out``, ``note``, ``alert``, …) becomes a quote whose first line
  names it (``**Note:**`` and its title), its body quoted under it;
- a tab (``tab name="Linux"``) becomes a label line (``**▸ Linux**``); tab groups, tables and
  other wrappers vanish (their lines stay, empty);
- ``include "x.md"`` becomes a line saying what Hugo puts there;
- ``ref``/``relref`` become the page they name, a version shortcode its name, ``img`` an image;
- a callout becomes a quote whose title stands on its own line;
- an image (``![alt](x.png)``, ``![[x.png]]``, ``{{< img src=x.png >}}``) becomes a link naming
  it (``🖼 alt (x.png)``): following it opens the image's own preview.

:func:`wikilink_labels` shows ``[[Note|label]]`` as ``label`` in one-line excerpts. All of it
is plain string work (no UI toolkit), on text already read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from explorer.core.ingest.markdown_tokens import match_wikilink

IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".ico", ".svg", ".avif"}
)
"""Files an embed shows as an image (``![[x.png]]``), and the preview names as one."""
NOTE_SHORTCODES = frozenset(
    {
        "call-out",
        "callout",
        "note",
        "tip",
        "warning",
        "caution",
        "important",
        "danger",
        "alert",
        "admonition",
        "important-note",
        "see-also",
        "before-you-begin",
    }
)
"""Shortcodes that set their body apart as a note (its kind given by ``class=`` or the first
argument, else the shortcode's name)."""
TAB_SHORTCODES = frozenset({"tab", "tab-item", "tabitem"})
LABEL_SHORTCODES = frozenset({"details", "card", "card-section", "collapse", "expand"})
"""Shortcodes whose title (``summary=``, ``title=``) is shown as a label line."""
INCLUDE_SHORTCODES = frozenset({"include", "readfile", "include-md", "ghcode"})
LINK_SHORTCODES = frozenset({"ref", "relref", "link"})
ICONS = {"check": "✓", "check-circle": "✓", "circle-check": "✓", "x": "✗", "times": "✗"}

_SHORTCODE = re.compile(r"\{\{([<%])\s*(/?)\s*([\w.-]+)(.*?)[>%]\}\}")
"""A Hugo shortcode, its arguments with the blanks before the closing ``>}}`` (a ``\\s*`` there was
tried at every character of the lazy arguments: 32 s to show a line holding 20,000 spaces)."""
_ARGUMENT = re.compile(r'([\w-]+)\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|(\S+))|"([^"]*)"|(\S+)')
_CALLOUT = re.compile(r"^(\s*>\s*)\[!([\w-]+)\]([+-]?)\s*(.*)$")
_QUOTE = re.compile(r"^\s*>")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"(#{1,6}(\s|$)|[-*+](\s|$)|\d{1,9}[.)](\s|$)|`{3}|~{3}|\||<|>)")
"""The start of a block (a heading, a list item, a fence, a table, HTML, a quote)."""
_LABEL_END = "\u2060"
"""Marks a label line while rewriting (a word joiner, invisible); see :func:`_break_labels`."""


@dataclass
class _Shortcode:
    """One shortcode tag as written."""

    name: str
    closing: bool
    positional: list[str] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)

    def argument(self, *names: str) -> str:
        """The first of the named arguments ``names`` given, else the first positional one."""
        for name in names:
            if self.named.get(name):
                return self.named[name]
        return self.positional[0] if self.positional else ""


def _parse(match: re.Match[str]) -> _Shortcode:
    shortcode = _Shortcode(match.group(3).lower(), bool(match.group(2)))
    for found in _ARGUMENT.finditer(match.group(4)):
        key, *values = found.groups()
        value = next((v for v in values if v is not None), "")
        if key is not None:
            shortcode.named[key.lower()] = value
        else:
            shortcode.positional.append(value)
    return shortcode


def _title(text: str) -> str:
    """A kind of note as a title: ``warning`` → ``Warning``."""
    return text.replace("-", " ").replace("_", " ").strip().capitalize()


def image_link(alt: str, source: str) -> str:
    """An image as a Markdown link naming it: ``[🖼 alt (x.png)](x.png)``."""
    name = PurePosixPath(source.split("#", 1)[0].split("?", 1)[0]).name or source
    alt = " ".join(alt.replace("[", "(").replace("]", ")").split())
    label = f"🖼 {alt} ({name})" if alt and alt != name else f"🖼 {name}"
    return f"[{label}](<{source}>)"


def is_image(path: str) -> bool:
    """Whether ``path`` names an image by its suffix."""
    return PurePosixPath(path.split("#", 1)[0]).suffix.lower() in IMAGE_SUFFIXES


class _Rewriter:
    """Walks the lines once, keeping the notes opened by shortcodes."""

    def __init__(self) -> None:
        self.quoting = 0
        """Notes open: their body lines are quoted."""

    def line(self, line: str) -> str:
        out: list[str] = []
        position = 0
        quote_from_here = False
        for match in _SHORTCODE.finditer(line):
            out.append(line[position : match.start()])
            position = match.end()
            replacement, opened = self._replace(_parse(match))
            if opened:
                quote_from_here = True
            out.append(replacement)
        out.append(line[position:])
        text = "".join(out)
        if quote_from_here:
            return text
        if self.quoting and text.strip():
            return "> " + text
        if self.quoting:
            return ">"
        return text

    def _replace(self, code: _Shortcode) -> tuple[str, bool]:
        """The Markdown for one tag, and whether it opened a note."""
        name = code.name
        if name in NOTE_SHORTCODES:
            if code.closing:
                self.quoting = max(0, self.quoting - 1)
                return "", False
            generic = name in ("call-out", "callout", "alert", "admonition")
            kind = code.argument("class", "type", "kind", "style") if generic else name
            title = code.named.get("title") or (code.positional[1:2] or [""])[0]
            heading = _title(kind or "note")
            words = f"**{heading}:** {title}" if title and title != heading else f"**{heading}:**"
            self.quoting += 1
            return f"> {words}{_LABEL_END}", True
        if name in TAB_SHORTCODES:
            label = code.argument("name", "title", "header", "label")
            return ("" if code.closing or not label else f"**▸ {label}**{_LABEL_END}"), False
        if name in LABEL_SHORTCODES:
            label = code.argument("summary", "title", "name")
            return ("" if code.closing or not label else f"**▸ {label}**{_LABEL_END}"), False
        if name in INCLUDE_SHORTCODES:
            source = code.argument("file", "path", "src")
            return ("" if code.closing else f"*⤷ included here: {source or name}*"), False
        if name in LINK_SHORTCODES:
            return ("" if code.closing else code.argument("path", "url", "href")), False
        if name == "img" or name == "figure" or name == "image":
            source = code.argument("src", "source", "path")
            alt = code.named.get("alt") or code.named.get("caption") or code.named.get("title")
            return ("" if code.closing or not source else image_link(alt or "", source)), False
        if name.startswith("icon"):
            return ICONS.get(code.argument("name"), ""), False
        if "version" in name:
            return ("" if code.closing else f"‹{name}›"), False
        return "", False  # a wrapper (tabs, table, nb, …): its content reads on its own


def display_markdown(text: str, rendered: bool = True) -> str:
    """``text`` (Markdown) with shortcodes, callouts and images rewritten for reading (see the
    module's docstring); exactly as many lines as ``text``. ``rendered``: the text goes to a
    Markdown renderer, so a title line ends in a hard break (``\\``); else it is shown as
    source, line for line, and needs none."""
    if "{{" not in text and "[!" not in text and "![" not in text:
        return text
    rewriter = _Rewriter()
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    for number, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            out.append(_SHORTCODE.sub(_in_code, line) if "{{" in line else line)
            continue
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        if "{{" in line or rewriter.quoting:
            line = rewriter.line(line)
        callout = _CALLOUT.match(line)
        if callout is not None:
            following = lines[number + 1] if number + 1 < len(lines) else ""
            line = _callout_title(callout, following if rendered else "")
        if "![" in line:
            line = _images(line)
        out.append(line)
    return "\n".join(_break_labels(out, rendered))


def _break_labels(lines: list[str], rendered: bool) -> list[str]:
    """A label line followed by more of its paragraph ends in a hard break (``\\``), so it
    stands on its own line."""
    out = []
    for number, line in enumerate(lines):
        if line.rstrip().endswith(_LABEL_END):
            line = line.replace(_LABEL_END, " ").rstrip()
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if rendered and _continues_paragraph(following):
                line += "\\"
        out.append(line.replace(_LABEL_END, " "))
    return out


def _in_code(match: re.Match[str]) -> str:
    """A shortcode inside a code block: the value Hugo would put there, named."""
    code = _parse(match)
    if code.name in LINK_SHORTCODES:
        return code.argument("path", "url", "href")
    return "" if code.closing else f"<{code.name}>"


def _callout_title(callout: re.Match[str], following: str) -> str:
    """``> [!note] Title`` as a quote line naming the callout, broken before its body."""
    prefix, kind, _fold, title = callout.groups()
    heading = _title(kind)
    shown = f"**{heading}: {title.strip()}**" if title.strip() else f"**{heading}**"
    body_follows = bool(_QUOTE.match(following)) and _continues_paragraph(following)
    return prefix + shown + ("\\" if body_follows else "")


def _continues_paragraph(line: str) -> bool:
    """Whether ``line`` (quote marks aside) would continue a paragraph rather than be blank or
    open a block of its own (a heading, a list, a fence, a table): only then does a hard break
    before it show as a break (else CommonMark shows the backslash)."""
    text = line.strip().lstrip(">").strip()
    return bool(text) and not _BLOCK_START.match(text)


def _images(line: str) -> str:
    """``![alt](x.png)`` and ``![[x.png]]`` as links naming the image."""

    def replaced(found: re.Match[str]) -> str:
        alt, source = found.group(1), found.group(2)
        if found.start() and line[found.start() - 1] == "[":  # a badge inside a link
            return f"🖼 {alt or PurePosixPath(source).name}"
        return image_link(alt, source)

    line = _IMAGE.sub(replaced, line)
    if "![[" not in line:
        return line
    out: list[str] = []
    position = 0
    while (start := line.find("![[", position)) >= 0:
        found = match_wikilink(line, start, len(line))
        if found is None:
            out.append(line[position : start + 3])
            position = start + 3
            continue
        out.append(line[position:start])
        target = found.link.target
        if is_image(target):  # still a wikilink (resolved by name), labelled as an image
            out.append(f"![[{found.link.target}|🖼 {PurePosixPath(target).name}]]")
        else:
            out.append(line[start : found.end])
        position = found.end
    out.append(line[position:])
    return "".join(out)


def wikilink_labels(text: str) -> str:
    """``text`` with every wikilink ``[[Note|label]]`` shown as Obsidian shows it (``label``,
    else the note's name), an embed's ``!`` dropped."""
    if "[[" not in text:
        return text
    out: list[str] = []
    position = 0
    while (start := text.find("[[", position)) >= 0:
        begin = start - 1 if start > 0 and text[start - 1] == "!" else start
        end_of_line = text.find("\n", start)
        found = match_wikilink(text, begin, len(text) if end_of_line < 0 else end_of_line)
        if found is None:
            out.append(text[position : start + 2])
            position = start + 2
            continue
        out.append(text[position:begin])
        out.append(found.text)
        position = found.end
    out.append(text[position:])
    return "".join(out)
