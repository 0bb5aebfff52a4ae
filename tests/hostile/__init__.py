"""Hostile inputs: folders built to break the scanner, the parser, the stores and the terminal."""
