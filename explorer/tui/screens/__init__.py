"""Screens of the explorer UI."""
