"""explorer: a terminal document explorer with live hybrid search."""

__version__ = "0.1.0"
