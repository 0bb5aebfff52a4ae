"""Embed: the models that turn passages and queries into unit vectors."""
