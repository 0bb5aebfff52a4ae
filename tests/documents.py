"""Real documents made for tests: PDFs (pages of text, an outline, properties), DOCX files and
notebooks, built byte by byte or with the libraries explorer reads them with.

A PDF here is a valid PDF 1.4 file written directly (objects, a cross-reference table, a
trailer): each page a content stream of Helvetica lines, so PDFium extracts exactly those lines.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def make_pdf(
    pages: Sequence[Sequence[str]],
    outline: Sequence[tuple[int, str, int]] = (),
    info: dict[str, str] | None = None,
    content_stream: bytes | None = None,
) -> bytes:
    """A PDF whose page ``n`` shows the lines ``pages[n]``; ``outline`` holds ``(level, title,
    page index)`` bookmarks in order (level 0 at the top); ``info`` the document information
    (``Title``, ``Author``, ``Subject``, ``Keywords``). ``content_stream`` replaces the first
    page's content (to make a page that is slow to read)."""
    objects: dict[int, bytes] = {}
    page_ids = [4 + 2 * index for index in range(len(pages))]
    next_id = 4 + 2 * len(pages)
    outline_root = next_id if outline else None
    objects[1] = (
        b"<< /Type /Catalog /Pages 2 0 R"
        + (f" /Outlines {outline_root} 0 R /PageMode /UseOutlines".encode() if outline else b"")
        + b" >>"
    )
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects[2] = f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode()
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    for index, lines in enumerate(pages):
        page_id = page_ids[index]
        if index == 0 and content_stream is not None:
            stream = content_stream
        else:
            ops = ["BT", "/F1 11 Tf", "14 TL", "72 760 Td"]
            for line in lines:
                ops.append(f"{_pdf_string(line)} Tj T*")
            ops.append("ET")
            stream = "\n".join(ops).encode("latin-1")
        objects[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {page_id + 1} 0 R"
            " /Resources << /Font << /F1 3 0 R >> >> >>"
        ).encode()
        objects[page_id + 1] = (
            f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream"
        )
    if outline:
        _outline_objects(objects, outline, outline_root or 0, page_ids)
    info_id = None
    if info:
        info_id = max(objects) + 1
        fields = " ".join(f"/{key} {_pdf_string(value)}" for key, value in info.items())
        objects[info_id] = f"<< {fields} >>".encode("latin-1")
    return _assemble(objects, info_id)


def _outline_objects(
    objects: dict[int, bytes],
    outline: Sequence[tuple[int, str, int]],
    root: int,
    page_ids: list[int],
) -> None:
    """Outline items as a tree (each item's parent is the last item one level up)."""
    ids = [root + 1 + index for index in range(len(outline))]
    parents: list[int] = []
    stack: list[tuple[int, int]] = []  # (level, id)
    for (level, _title, _page), item_id in zip(outline, ids, strict=True):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents.append(stack[-1][1] if stack else root)
        stack.append((level, item_id))
    children: dict[int, list[int]] = {}
    for item_id, parent in zip(ids, parents, strict=True):
        children.setdefault(parent, []).append(item_id)
    for (_level, title, page), item_id, parent in zip(outline, ids, parents, strict=True):
        siblings = children[parent]
        place = siblings.index(item_id)
        links = [f"/Parent {parent} 0 R"]
        if place > 0:
            links.append(f"/Prev {siblings[place - 1]} 0 R")
        if place + 1 < len(siblings):
            links.append(f"/Next {siblings[place + 1]} 0 R")
        kids = children.get(item_id, [])
        if kids:
            links.append(f"/First {kids[0]} 0 R /Last {kids[-1]} 0 R /Count {len(kids)}")
        destination = f"/Dest [{page_ids[page]} 0 R /XYZ 0 792 0]"
        objects[item_id] = (
            f"<< /Title {_pdf_string(title)} {' '.join(links)} {destination} >>".encode("latin-1")
        )
    top = children.get(root, [])
    objects[root] = (
        f"<< /Type /Outlines /First {top[0]} 0 R /Last {top[-1]} 0 R /Count {len(top)} >>"
    ).encode()


def _assemble(objects: dict[int, bytes], info_id: int | None) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n")
    xref = out.tell()
    size = max(objects) + 1
    out.write(f"xref\n0 {size}\n0000000000 65535 f \n".encode())
    for number in range(1, size):
        if number in offsets:
            out.write(f"{offsets[number]:010d} 00000 n \n".encode())
        else:
            out.write(b"0000000000 65535 f \n")
    trailer = f"<< /Size {size} /Root 1 0 R" + (f" /Info {info_id} 0 R" if info_id else "") + " >>"
    out.write(f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def encrypt_pdf(data: bytes, password: str = "secret") -> bytes:
    """The PDF ``data`` encrypted with a user password (it cannot be opened without it)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password=password + "-owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def slow_pdf(operations: int = 400_000) -> bytes:
    """A one-page PDF whose content is ``operations`` tiny text objects: slow to extract."""
    stream = b"BT /F1 1 Tf " + b"(a) Tj 0.01 0 Td " * operations + b"ET"
    return make_pdf([["x"]], content_stream=stream)


def looping_pdf() -> bytes:
    """A PDF whose page tree contains itself and whose outline items point at each other."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
        2: b"<< /Type /Pages /Kids [2 0 R 4 0 R 2 0 R] /Count 3 /Parent 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R"
        b" /Resources << /Font << /F1 3 0 R >> >> >>",
        5: b"<< /Length 44 >>\nstream\nBT /F1 11 Tf 72 700 Td (loop page) Tj ET\nendstream",
        6: b"<< /Type /Outlines /First 7 0 R /Last 8 0 R /Count 2 >>",
        7: b"<< /Title (One) /Parent 6 0 R /Next 8 0 R /First 7 0 R /Dest [4 0 R /Fit] >>",
        8: b"<< /Title (Two) /Parent 6 0 R /Next 7 0 R /Prev 7 0 R /Dest [4 0 R /Fit] >>",
    }
    return _assemble(objects, None)


def page_tree_loop_pdf() -> bytes:
    """A PDF whose page tree is a loop of two nodes, with no page in it to load."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>",
    }
    return _assemble(objects, None)


def make_docx(
    blocks: Sequence[tuple[str, object]],
    title: str = "",
    author: str = "",
    keywords: str = "",
) -> bytes:
    """A DOCX made with python-docx: ``("heading1", text)``, ``("title", text)``,
    ``("para", text)``, ``("bullet", text)``, ``("table", rows)``, ``("link", (text, url))``."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    for kind, value in blocks:
        if kind == "title":
            document.add_heading(str(value), level=0)
        elif kind.startswith("heading"):
            document.add_heading(str(value), level=int(kind[len("heading") :]))
        elif kind == "para":
            document.add_paragraph(str(value))
        elif kind == "bullet":
            document.add_paragraph(str(value), style="List Bullet")
        elif kind == "table":
            rows = list(value)  # type: ignore[call-overload]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
        elif kind == "link":
            text, url = value  # type: ignore[misc]
            paragraph = document.add_paragraph("see ")
            rel = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
            link = OxmlElement("w:hyperlink")
            link.set(qn("r:id"), rel)
            run = OxmlElement("w:r")
            text_element = OxmlElement("w:t")
            text_element.text = text
            run.append(text_element)
            link.append(run)
            paragraph._p.append(link)
    properties = document.core_properties
    properties.title = title
    properties.author = author
    properties.keywords = keywords
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb_docx(inflated_bytes: int = 300_000_000) -> bytes:
    """A small DOCX-looking zip whose document part inflates to ``inflated_bytes`` bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1 << 20)
            for _ in range(inflated_bytes // len(block)):
                part.write(block)
            part.write(block[: inflated_bytes % len(block)])
    return out.getvalue()


def make_notebook(cells: Sequence[tuple[str, str]], language: str = "python") -> str:
    """A notebook (nbformat 4) of ``(cell type, source)`` cells; code cells get an output."""
    body = []
    for kind, source in cells:
        cell: dict[str, object] = {
            "cell_type": kind,
            "metadata": {},
            "source": source.splitlines(keepends=True),
        }
        if kind == "code":
            cell["outputs"] = [
                {"output_type": "stream", "name": "stdout", "text": ["OUTPUT-NOT-INDEXED\n"]}
            ]
            cell["execution_count"] = 1
        body.append(cell)
    notebook = {
        "cells": body,
        "metadata": {"kernelspec": {"language": language, "name": language}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1)


def write(path: Path, data: bytes | str) -> Path:
    """Write ``data`` at ``path`` (folders made), return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


# An API manual's page as Sphinx writes it: functions, a class with a member, a C function, a
# command-line option and a glossary term (entries), a field list and a footnote (not entries).
PRE, NAME = '<span class="sig-prename descclassname">', '<span class="sig-name descname">'
API_PAGE = (
    "<html><head><title>csv — CSV File Reading</title></head><body>\n"
    '<div role="main"><section><h1>csv — CSV File Reading</h1>\n'
    "<section><h2>Module Contents</h2>\n<p>The module defines the following functions:</p>\n"
    '<dl class="py function"><dt class="sig sig-object py" id="csv.reader">\n'
    f"{PRE}csv.</span>{NAME}reader</span>(<em>csvfile</em>)"
    '<a class="headerlink" href="#csv.reader">¶</a></dt>\n'
    "<dd><p>Return a reader object.</p></dd></dl>\n"
    '<dl class="py class"><dt class="sig sig-object py" id="csv.DictReader">\n'
    f'<em class="property">class </em>{PRE}csv.</span>{NAME}DictReader</span>'
    "(<em>f</em>, <em>fieldnames=None</em>)</dt>\n"
    "<dd><p>Map each row to a dict.</p>\n"
    '<dl class="field-list simple"><dt class="field-odd">Parameters</dt><dd>the file</dd></dl>\n'
    '<dl class="py attribute"><dt class="sig sig-object py" id="csv.DictReader.fieldnames">\n'
    f"{NAME}fieldnames</span></dt><dd><p>The field names.</p></dd></dl>\n</dd></dl>\n"
    '<dl class="c function"><dt class="sig sig-object c" id="c.PyList_New">\n'
    f"<span>PyObject *</span>{NAME}PyList_New</span>(Py_ssize_t len)"
    '<a class="headerlink" href="#c.PyList_New">¶</a><br></dt>\n'
    "<dd><p>Return a new list.</p></dd></dl>\n"
    '<dl class="std option"><dt class="sig sig-object std" id="cmdoption-c">\n'
    f"{NAME}-c</span>{PRE} &lt;command&gt;</span></dt>\n"
    "<dd><p>Run the command.</p></dd></dl>\n</section>\n"
    "<section><h2>Glossary</h2>\n"
    '<dl class="glossary simple"><dt id="term-dialect">dialect</dt><dd>A set of rules.</dd></dl>\n'
    '<p>A note<a class="footnote-reference" href="#f1">1</a>.</p>\n'
    '<dl class="footnote brackets"><dt class="label" id="f1">1</dt><dd>A footnote.</dd></dl>\n'
    "</section></section></div></body></html>"
)
