"""The command-line front end: ``explorer [ROOT]`` opens the TUI; subcommands serve scripts.

:mod:`~explorer.cli.entry` declares the commands, :mod:`~explorer.cli.targets` resolves what a
command line names (folder settings, FILE, output format), :mod:`~explorer.cli.commands` runs
them on the core, :mod:`~explorer.cli.render` prints their answers, and the resident reader
(:mod:`~explorer.cli.resident_client`, :mod:`~explorer.cli.resident_server`, which speak
:mod:`~explorer.cli.reader_protocol` and answer with :mod:`~explorer.cli.reader_answers`)
answers one-shot reads from a process that is already warm.
"""

from explorer.cli.entry import main, run

__all__ = ["main", "run"]
