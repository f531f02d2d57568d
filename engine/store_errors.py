"""What reading or writing a store raises when its file is damaged, unreadable or locked.

A module of its own, without numpy or the import pipeline, so that the command line can catch these
errors at its edge without paying for `engine.health`'s imports.
"""

from __future__ import annotations

import sqlite3

from engine.store import StoreError

# What reading or writing a store raises when its file is damaged, unreadable or locked.
STORE_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError, StoreError)


def is_damage_report(reason: str) -> bool:
    """Whether a failure an import recorded for a file (`ImportReport.files_failed`) is a damaged database.

    The import records `<exception class>: <message>`; SQLite raises the base `DatabaseError` exactly for
    a malformed file or one that is not a database (a lock or a full disk raise `OperationalError`).
    """
    return reason.startswith(f"{sqlite3.DatabaseError.__name__}:")
