"""Retrieval: queries, filters, the two legs and their fusion, related files, links and fuzzy
jumps."""
