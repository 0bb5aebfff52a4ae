"""The Textual user interface of explorer (imports the core, never the other way round)."""
