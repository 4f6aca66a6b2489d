"""Where output goes: the report to stdout, summaries and errors to stderr, secrets scrubbed from both; files
written whole or not at all."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from gpustack_guard.core.secrets import is_secret_key, scrub

_extra_secrets: list[str] = []
_quiet = False  # --quiet: progress and summaries off; errors and the report itself stay


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def register_secret(value: str | None) -> None:
    if value:
        _extra_secrets.append(value)


def known_secrets() -> list[str]:
    env = [v for k, v in os.environ.items() if (is_secret_key(k) or k == "GSG_API_KEY") and len(v) >= 6]
    return env + _extra_secrets


def out(text: str, secrets: list[str] | None = None) -> None:
    sys.stdout.write(scrub(text, known_secrets() + (secrets or [])))
    sys.stdout.flush()


def err(text: str, secrets: list[str] | None = None) -> None:
    sys.stderr.write(scrub(text, known_secrets() + (secrets or [])).rstrip("\n") + "\n")
    sys.stderr.flush()


def note(text: str, secrets: list[str] | None = None) -> None:
    """A progress or summary line on stderr, which --quiet leaves out."""
    if not _quiet:
        err(text, secrets)


def write_atomic(path_text: str, text: str) -> None:
    """Write via a temporary file and rename: an interrupted run never leaves half a file."""
    path = Path(path_text)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
