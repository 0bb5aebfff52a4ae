"""Ingest: find the files under a root, read them safely, parse front matter and references, chunk
them."""
