"""A Sphinx project's pages link to each other by name: its links are read and resolved."""

from __future__ import annotations

from explorer.core.ingest.formats.restructured_text import rst_references
from explorer.core.retrieval.link_resolution import LinkState, sphinx_paths
from explorer.core.retrieval.links import file_links
from tests.conftest import synced_index, write_files
from tests.timing import at_most_cpu_seconds

INDEX = """Project
=======

.. toctree::
   :maxdepth: 2
   :caption: Contents

   install
   Using it <guide/usage>
   self
   reference/*
   https://example.org/elsewhere

See :doc:`the FAQ <faq>` and :doc:`/guide/usage`, or :ref:`a label <Somewhere  Else>`.
Also :ref:`genindex` and :ref:`nowhere`.

.. include:: /snippets/note.txt
.. include:: <isonum.txt>

A literal block::

    :doc:`not-a-link`
    .. include:: not-a-file.txt

.. code-block:: rst

   :doc:`shown-only`

Back to text: `the changelog <changes.html>`_ and `a site <https://example.org>`_.
A section by its page: :ref:`guide/usage:Usage`; a row's label: :ref:`row two <Row-2>`.

.. list-table::

   * - .. _row-2:
     - the second row
"""

USAGE = """Usage
=====

Install first (:doc:`../install`); the sample is :download:`this file <../files/sample.cfg>`.

.. image:: ../images/flow.png

.. literalinclude:: ../files/sample.cfg
   :language: ini

As built: `the second step <../install.html#step-2>`_.
"""


FAQ = """# FAQ

(faq-top)=
## Questions, in MyST Markdown

See {doc}`the install page <install>`, {ref}`a row <row-2>` and {download}`files/sample.cfg`;
the page [by its name](install); `{doc}` alone is code.

```{toctree}
:maxdepth: 1

guide/usage
Install <install>
```

```{include} snippets/note.txt
```

```python
# {doc}`in code` is no link
```
"""


def test_a_pages_sphinx_links_are_read_outside_literal_text() -> None:
    found = [
        (r.line, r.kind.value, r.raw, r.syntax.value) for r in rst_references("index.rst", INDEX)
    ]
    assert found == [
        (8, "link", "install", "sphinx"),
        (9, "link", "guide/usage", "sphinx"),
        (14, "link", "faq", "sphinx"),
        (14, "link", "/guide/usage", "sphinx"),
        (14, "link", "Somewhere  Else", "sphinx-ref"),
        (15, "link", "nowhere", "sphinx-ref"),
        (17, "embed", "/snippets/note.txt", "sphinx"),
        (29, "link", "changes.html", "sphinx"),
        (30, "link", "guide/usage:Usage", "sphinx-ref"),
        (30, "link", "Row-2", "sphinx-ref"),
        (34, "definition", "row-2", "sphinx-label"),
    ]


def test_a_pages_name_is_tried_with_the_source_suffixes_from_its_folder_or_a_root() -> None:
    assert sphinx_paths("docs/guide/usage.rst", "../install", [""]) == [
        "docs/install.rst",
        "docs/install.md",
        "docs/install.txt",
        "docs/install",
    ]
    assert sphinx_paths("docs/a/b.rst", "/api/index", ["docs", ""])[:2] == [
        "docs/api/index.rst",
        "docs/api/index.md",
    ]
    assert sphinx_paths("b.rst", "release/3.25", [""])[:2] == ["release/3.25", "release/3.25.rst"]
    assert sphinx_paths("b.rst", "notes.txt", [""]) == ["notes.txt"]
    assert sphinx_paths("a/b.rst", "usage.html", [""])[:2] == ["a/usage.html", "a/usage.rst"]


def test_a_sphinx_projects_pages_link_to_each_other(tmp_path) -> None:
    """The project sits in a folder of the indexed root (``docs/``, beside the code): a name
    from ``/`` is read from the folder of its ``conf.py``."""
    root = write_files(
        tmp_path / "repo",
        {
            "docs/conf.py": "project = 'demo'\n",
            "docs/index.rst": INDEX,
            "docs/install.rst": (
                "Install\n=======\n\n.. _somewhere else:\n\nElsewhere\n---------\n\nRun it.\n"
            ),
            "docs/guide/usage.rst": USAGE,
            "docs/faq.md": FAQ,
            "docs/snippets/note.txt": "A note included in pages.\n",
            "docs/files/sample.cfg": "[sample]\nkey = value\n",
        },
    )
    with synced_index(root, tmp_path / "index") as index:
        home = file_links(index, "docs/index.rst")
        usage = file_links(index, "docs/guide/usage.rst")
        install = file_links(index, "docs/install.rst")
        faq = file_links(index, "docs/faq.md")
    assert [(link.line, link.target, link.state) for link in home.outgoing] == [
        (8, "docs/install.rst", LinkState.RESOLVED),
        (9, "docs/guide/usage.rst", LinkState.RESOLVED),
        (14, "docs/guide/usage.rst", LinkState.RESOLVED),
        (14, "docs/install.rst", LinkState.RESOLVED),  # the label's page, without case
        (14, "docs/faq.md", LinkState.RESOLVED),
        (15, "#nowhere", LinkState.MISSING),
        (17, "docs/snippets/note.txt", LinkState.RESOLVED),
        (29, "docs/changes.html", LinkState.MISSING),
        (30, "docs/index.rst", LinkState.RESOLVED),  # the row's label, on this page
        (30, "docs/guide/usage.rst", LinkState.RESOLVED),
    ]
    assert [(link.line, link.target, link.state) for link in usage.outgoing] == [
        (4, "docs/files/sample.cfg", LinkState.RESOLVED),  # ../files/… sorts before ../install
        (4, "docs/install.rst", LinkState.RESOLVED),
        (6, "docs/images/flow.png", LinkState.MISSING),
        (8, "docs/files/sample.cfg", LinkState.RESOLVED),
        (11, "docs/install.rst", LinkState.RESOLVED),  # the page built from it
    ]
    assert [(link.line, link.target, link.state) for link in faq.outgoing] == [
        (6, "docs/files/sample.cfg", LinkState.RESOLVED),
        (6, "docs/install.rst", LinkState.RESOLVED),
        (6, "docs/index.rst", LinkState.RESOLVED),  # the row's label, on the index page
        (7, "docs/install.rst", LinkState.RESOLVED),  # a page by its name, in Markdown
        (12, "docs/guide/usage.rst", LinkState.RESOLVED),
        (13, "docs/install.rst", LinkState.RESOLVED),
        (16, "docs/snippets/note.txt", LinkState.RESOLVED),
    ]
    assert sorted(link.source for link in install.backlinks) == [
        "docs/faq.md",
        "docs/faq.md",
        "docs/faq.md",
        "docs/guide/usage.rst",
        "docs/guide/usage.rst",
        "docs/index.rst",
        "docs/index.rst",
    ]
    assert install.outgoing == []  # a label is a place, not a link


def test_hostile_pages_read_in_linear_time() -> None:
    """Roles, hyperlinks and directives that never close, in a page of 100,000 lines."""
    text = "".join(
        f":doc:`a{n} <b{n} `x <y `_ .. toctree::\n   {n}\n.. include::\n`<`_ ::\n"
        for n in range(25_000)
    )
    text += ".. toctree::\n\n   a" + " " * 200_000 + "b <c\n:doc:`a" + " " * 200_000 + "b`\n"
    with at_most_cpu_seconds(3.0):
        rst_references("big.rst", text)
