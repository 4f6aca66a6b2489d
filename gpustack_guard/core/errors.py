"""Exit codes and the one exception type that means "the user must fix something"."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAIL = 1  # findings at/above the fail level, or a user error
EXIT_CHANGES = 2  # plan/drift with --detailed-exitcode: changes present
EXIT_INTERNAL = 3  # a bug in gsg
EXIT_DEGRADED = 4  # drift with --detailed-exitcode: a deployment is Degraded (6 = out of sync and Degraded)
EXIT_INTERRUPTED = 130


class GsgError(Exception):
    """A problem the user can fix; printed as one line, exit 1. The message must never hold a secret."""

    def __init__(self, message: str, *, where: str | None = None):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)
