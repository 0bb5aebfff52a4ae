"""Allow ``python -m explorer``."""

from explorer.cli import main

main()
