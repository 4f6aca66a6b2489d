"""Start the slow `gsg soak` processes of test_soak.py as soon as collection finishes: they then run while the
in-process scenario matrix (tests/adapters/soak) does, and the two fit the time budget together."""

from __future__ import annotations

from soak_cli_runs import close_soak_runs, soak_runs


def pytest_collection_finish(session):
    if any(item.path.name == "test_soak.py" and item.path.parent.name == "cli" for item in session.items):
        soak_runs()


def pytest_sessionfinish(session, exitstatus):
    close_soak_runs()
