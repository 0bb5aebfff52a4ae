"""Indexing: a sync in phases (keywords, then vectors), its order, its report, and rebuilds."""
