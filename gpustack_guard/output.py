"""Where output goes: the report to stdout, summaries and errors to stderr, secrets scrubbed from both."""

from __future__ import annotations

import os
import sys

from gpustack_guard.secrets import is_secret_key, scrub

_extra_secrets: list[str] = []


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
