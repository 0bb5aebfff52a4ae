"""Allow ``python -m explorer``."""

from explorer.cli import run

run()
