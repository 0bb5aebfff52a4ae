"""``read`` gives every document ``search`` returns, as the index read it: through the SDK's
client against a real server.

The index takes an HTML page up to 20 MB (its format's cap, not ``max_file_bytes``), a PDF
named ``.md`` (told by its content), and refuses a zip bomb as a zip bomb; ``read`` used to
refuse the first two ("larger than the index takes", "not UTF-8") and the last as too large.
"""

from __future__ import annotations

import io
import os
import zipfile

from tests.documents import make_pdf, write, zip_bomb_docx
from tests.mcp_client import call, index_with_fake_model, server_params, with_session

MAX_FILE_BYTES = 2_000_000
"""The index's default cap for a text file (an HTML page's own cap is 20 MB)."""


def _large_html(word: str) -> str:
    """An HTML page over the text cap, with ``word`` in a paragraph near its end."""
    paragraph = "<p>Paragraph of filler text about nothing in particular, again and again.</p>\n"
    filler = paragraph * (MAX_FILE_BYTES // len(paragraph) + 2_000)
    return f"<html><body><h1>Scripts</h1>\n{filler}<p>The {word} runs last.</p>\n</body></html>\n"


def _large_zip_bomb() -> bytes:
    """A DOCX-looking zip bomb over the text cap (a stored part pads it) and under the DOCX cap
    of 50 MB: only its inflated size makes it unreadable."""
    bomb = io.BytesIO(zip_bomb_docx(210_000_000))
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_STORED) as archive:
        archive.writestr("word/media/padding.bin", os.urandom(MAX_FILE_BYTES + 100_000))
    return bomb.getvalue()


def test_read_gives_every_document_search_returns_and_names_a_refusals_true_reason(tmp_path):
    root, index_dir = tmp_path / "docs", tmp_path / "index"
    page = write(root / "scripts.html", _large_html("zanzibarscript"))
    assert page.stat().st_size > MAX_FILE_BYTES
    write(root / "paper.md", make_pdf([["Findings", "The quokkaline result holds."]]))
    write(root / "bomb.docx", _large_zip_bomb())
    assert (root / "bomb.docx").stat().st_size > MAX_FILE_BYTES
    write(root / "notes.md", "# Notes\n\nNothing here.\n")
    index_with_fake_model(root, index_dir)

    async def body(session):
        answers = {}
        for path, word in (("scripts.html", "zanzibarscript"), ("paper.md", "quokkaline")):
            error, found = await call(session, "search", query=word, mode="keyword")
            assert not error, found
            [hit] = [hit for hit in found["results"] if hit["path"] == path]
            passage = hit["passages"][0]
            answers[path] = await call(
                session,
                "read",
                path=path,
                start_line=passage["start_line"],
                end_line=passage["end_line"],
            )
        answers["bomb.docx"] = await call(session, "read", path="bomb.docx")
        answers["read_many"] = await call(session, "read_many", paths=["bomb.docx", "paper.md"])
        return answers

    answers = with_session(server_params(root, index_dir), body)
    error, html = answers["scripts.html"]
    assert not error, html
    assert "zanzibarscript runs last" in html["text"]
    error, pdf = answers["paper.md"]
    assert not error, pdf
    assert "quokkaline result holds" in pdf["text"]
    error, refusal = answers["bomb.docx"]
    assert error and "zip bomb" in refusal, refusal
    assert "larger than" not in refusal and "too-large" not in refusal
    error, many = answers["read_many"]
    assert not error
    assert [f["path"] for f in many["files"]] == ["paper.md"]
    [omitted] = many["omitted"]
    assert omitted["path"] == "bomb.docx" and "zip bomb" in omitted["detail"]
