"""Widgets of the explorer UI; each talks to the screen with messages."""
