"""Running a script of SQL statements inside the transaction a connection has open.

``sqlite3.Connection.executescript`` commits any open transaction before it runs a script, so a
writer setting up its tables with it would make every statement a transaction of its own, and
another process could change the schema between them (SQLite then fails to connect a virtual
table whose schema moved under it: "vtable constructor failed").
"""

from __future__ import annotations

import sqlite3


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Run each statement of ``script`` on ``db`` in turn, in the transaction it has open.

    Statements are found with SQLite's own test of a whole statement, so a ``;`` inside a
    string or a trigger's body never cuts one.
    """
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                db.execute(pending)
            pending = ""
    if pending.strip(" \t\r\n;"):
        raise ValueError(f"an incomplete SQL statement ends the script: {pending.strip()!r}")
