"""LaTeX sources: indexed (they were skipped), with their sections as headings and their
``\\title`` as title; a manual's verbatim examples of ``\\section`` head nothing."""

from __future__ import annotations

from explorer.core.ingest.formats import PreviewKind, format_for
from explorer.core.ingest.formats.latex import LatexFormat, plain_title
from explorer.core.ingest.formats.preview import preview_document, text_outline
from explorer.core.ingest.scanner import DEFAULT_EXTENSIONS
from explorer.core.ingest.windows import Chunker
from explorer.core.models import SearchMode
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.links import file_links
from explorer.core.retrieval.search import SearchRequest, search
from tests.conftest import synced_index, write_files
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds

PAPER = r"""\documentclass{article}
\usepackage{amsmath}
% \section{A commented-out section}
\title{Sparse \emph{Arrays} for the \LaTeX~Kernel\thanks{Draft of 2023.}}
\author{A. Writer}
\begin{document}
\maketitle

\section{Introduction}\label{sec:intro}
Integer arrays give constant-time access, unlike sequences.

\subsection*[Short]{Creating an array of
  integers}
Use the creation command with a size.

\begin{verbatim}
\section{Not a heading: an example in the manual}
\end{verbatim}

\section{Storing values \& reading them}
Assignments are always global; 50\% of the entries may be zero.

\chapter{Stray}
\paragraph{Bounds} A position outside the array is an error.
\end{document}
"""


def headings_of(text: str) -> list[tuple[int, str]]:
    fmt = LatexFormat()
    document = fmt.from_text("paper.tex", text)
    chunker = Chunker(text, FakeEmbedder().token_spans, 240, 32)
    structure = fmt.structure("paper.tex", document, chunker)
    assert structure.sections is not None
    return [(section.start, section.heading) for section in structure.sections]


def test_sections_are_its_sectioning_commands_outside_verbatim_and_comments() -> None:
    found = [heading for _start, heading in headings_of(PAPER)]
    assert found == [
        "Sparse Arrays for the LaTeX Kernel",
        "Introduction",
        "Introduction > Creating an array of integers",
        "Storing values & reading them",
        "Stray > Bounds",
    ]


def test_the_title_is_the_title_commands_words() -> None:
    document = LatexFormat().from_text("paper.tex", PAPER)
    assert document.metadata == {"title": "Sparse Arrays for the LaTeX Kernel"}
    assert LatexFormat().from_text("notes.tex", "\\section{Only this}\n").metadata == {}
    assert plain_title(r"The \texttt{frac}, \texttt{dfrac} and~\verb|x| commands") == (
        "The frac, dfrac and |x| commands"
    )
    assert plain_title(r"Cross references\footnote{See \ref{eq} too.} to \LaTeXe") == (
        "Cross references to LaTeX2e"
    )


def test_a_title_that_never_closes_ends_at_its_line() -> None:
    text = "\\section{Broken {title\nNext line stays text.\n\\section{Fine}\nBody.\n"
    assert [heading for _s, heading in headings_of(text)][-2:] == ["Broken title", "Fine"]


def test_latex_is_claimed_indexed_and_searched_by_section(tmp_path) -> None:
    assert {"tex", "ltx", "latex"} <= DEFAULT_EXTENSIONS
    assert format_for("paper/main.tex").name == "latex"
    assert format_for("paper/main.tex").preview_kind is PreviewKind.CODE
    root = write_files(tmp_path / "docs", {"paper/main.tex": PAPER})
    with synced_index(root, tmp_path / "index") as index:
        assert index.keywords.file("paper/main.tex").title == "Sparse Arrays for the LaTeX Kernel"
        request = SearchRequest("assignments global", SearchMode.KEYWORD, limit=5)
        [hit] = search(index, request).results
    assert hit.path == "paper/main.tex"
    assert hit.passages[0].heading == "Storing values & reading them"


def test_the_files_a_source_pulls_in_are_its_links(tmp_path) -> None:
    main = (
        "\\documentclass{book}\n% \\input{old}\n\\begin{document}\n\\include{chapters/intro}\n"
        "\\begin{verbatim}\n\\input{shown-only}\n\\end{verbatim}\n"
        "\\bibliography{refs,missing}\n\\includegraphics[width=3in]{figs/plot.pdf}\n"
        "\\input{https://example.org/remote}\n\\input{\\jobname.ind}\n\\end{document}\n"
    )
    root = write_files(
        tmp_path / "thesis",
        {
            "main.tex": main,
            "chapters/intro.tex": "\\chapter{Introduction}\nWhy arrays.\n\\input{tables/sizes}\n",
            "tables/sizes.tex": "\\begin{tabular}{ll} a & b \\end{tabular}\n",
            "refs.bib": "@book{knuth, title={The TeXbook}}\n",
        },
    )
    with synced_index(root, tmp_path / "index") as index:
        found = file_links(index, "main.tex")
        intro = file_links(index, "chapters/intro.tex")
    assert [(link.line, link.raw, link.target, link.state) for link in found.outgoing] == [
        (4, "chapters/intro", "chapters/intro.tex", LinkState.RESOLVED),
        (8, "refs", "refs.bib", LinkState.RESOLVED),
        (8, "missing", "missing.bib", LinkState.MISSING),
        (9, "figs/plot.pdf", "figs/plot.pdf", LinkState.MISSING),
    ]
    assert [link.source for link in intro.backlinks] == ["main.tex"]
    # TeX reads from the main file's folder: the chapter's table is found one folder up.
    assert [(link.target, link.state) for link in intro.outgoing] == [
        ("tables/sizes.tex", LinkState.RESOLVED)
    ]


def test_the_preview_outlines_a_source_by_its_sections(tmp_path) -> None:
    path = tmp_path / "paper.tex"
    path.write_text(PAPER, encoding="utf-8")
    document = preview_document("paper.tex", path)
    assert document.outline == ()  # worked out when asked, not as the file is read
    assert document.kind == PreviewKind.CODE and document.language == "latex"
    outline = [(entry.level, entry.title, entry.line) for entry in text_outline(document)]
    assert outline == [
        (2, "Introduction", 9),
        (3, "Creating an array of integers", 12),
        (2, "Storing values & reading them", 20),
        (1, "Stray", 23),
        (5, "Bounds", 24),
    ]


def test_hostile_sources_read_in_linear_time() -> None:
    """Environments that never close, a megabyte on one line of commands, a title that never
    closes: read at once, never a hang (a scan from each opener to the end took time squared)."""

    fmt = LatexFormat()
    with at_most_cpu_seconds(5):
        assert fmt.from_text("h.tex", "\\begin{verbatim}\n\\section{A}\n" * 60_000).headings == ()
        inputs = "x % a comment\n" + "\\input{a}" * 60_000
        assert len(fmt.link_facts("h.tex", fmt.from_text("h.tex", inputs)).references) == 60_000
        [heading] = fmt.from_text("h.tex", "\\section{" + "x" * 1_000_000).headings or ()
        assert len(heading.title) <= 500
