"""Which env values are secrets, masking them, and `${NAME}` references resolved from the environment."""

from __future__ import annotations

import re
from typing import Mapping

MASK = "********"
_SECRET_KEY = re.compile(r"(TOKEN|SECRET|PASSW(OR)?D|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE|CREDENTIAL|AUTH)",
                         re.IGNORECASE)
REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) or key.upper().startswith("HF_") and "ENDPOINT" not in key.upper()


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str]) -> tuple[dict[str, str], set[str], list[str]]:
    """(resolved env, keys holding secrets, names of unresolved references).

    A value written as `${NAME}` is read from the environment at render time and always counts as a secret.
    """
    resolved, secret, missing = {}, set(), []
    for key, value in env.items():
        match = REFERENCE.match(value)
        if match:
            secret.add(key)
            if match.group(1) in environ:
                resolved[key] = environ[match.group(1)]
            else:
                resolved[key] = value
                missing.append(match.group(1))
            continue
        resolved[key] = value
        if is_secret_key(key):
            secret.add(key)
    return resolved, secret, missing


def masked(env: Mapping[str, str], secret_keys: set[str]) -> dict[str, str]:
    return {k: (MASK if k in secret_keys else v) for k, v in env.items()}


def scrub(text: str, secrets: list[str]) -> str:
    """Remove known secret values from any text before it is printed (defence in depth)."""
    for value in secrets:
        if value and len(value) >= 4:
            text = text.replace(value, MASK)
    return text
