"""WAL checkpoints in a background thread, off the path of the next write or read.

In WAL mode a commit appends pages to the ``-wal`` file; a *checkpoint* later copies them into
the database file and syncs it to disk. SQLite runs one inside ``COMMIT`` once the WAL holds
1,000 pages (64 MiB with our pages), and one when the last connection closes: for a
32k-theorem import that is ~160 MiB copied and synced, 0.2–0.3 s during which the importing
process waits. A checkpoint is one SQLite call that releases the GIL, so it can run on
another core while Python parses the next source or exports.

:class:`BackgroundCheckpointer` does that: after each write transaction of a
:class:`~leantrain.export.Database` it starts a ``PASSIVE`` checkpoint on a connection of its
own (it never blocks the writer nor readers), and the database connection's automatic
checkpoints are turned off. Nothing about durability changes: a checkpoint is crash-safe
wherever it runs, and the last connection to close still checkpoints whatever is left.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path

_log = logging.getLogger(__name__)


def checkpoint(path: str | Path) -> tuple[int, int, int] | None:
    """One ``PRAGMA wal_checkpoint(PASSIVE)`` on a new connection to ``path``: ``(busy,
    frames in the WAL, frames copied)``, or None when SQLite could not run it (logged)."""
    try:
        conn = sqlite3.connect(os.fspath(path), isolation_level=None, check_same_thread=False)
        try:
            row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as e:  # an optimisation only: the next one (or close) catches up
        _log.debug("background checkpoint of %s failed: %s", path, e)
        return None
    return int(row[0]), int(row[1]), int(row[2])


class BackgroundCheckpointer:
    """Checkpoints the WAL of the database at ``path`` in a daemon thread, one at a time.

    Call :meth:`after_commit` after each write transaction and :meth:`wait` before closing
    the connection. ``conn``'s automatic checkpoints are
    turned off (``PRAGMA wal_autocheckpoint = 0``) so that ``COMMIT`` does not do the copy itself.
    """

    def __init__(self, conn: sqlite3.Connection, path: str | Path) -> None:
        self.path = Path(path)
        self._thread: threading.Thread | None = None
        conn.execute("PRAGMA wal_autocheckpoint = 0")

    def after_commit(self) -> None:
        """Start a checkpoint of what has been committed (after the one running, if any)."""
        self.wait()
        self._thread = threading.Thread(
            target=checkpoint, args=(self.path,), name="leantrain-checkpoint", daemon=True
        )
        self._thread.start()

    def wait(self) -> None:
        """Wait for the running checkpoint, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
