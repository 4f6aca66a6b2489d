"""--workload FILE: the request shapes a soak cycles through (YAML or JSON)."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.soak.prompts import WorkloadEntry

EXAMPLE = "- {prompt_tokens: 6000, max_tokens: 256, weight: 1}"


def load_workload(path: str) -> list[WorkloadEntry]:
    """A list of {prompt_tokens, max_tokens, weight?}, or a mapping with that list under `requests`."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise GsgError(exc.strerror or "cannot be read", where=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise GsgError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", where=where) from None
    if isinstance(data, dict):
        data = data.get("requests")
    if not isinstance(data, list) or not data:
        raise GsgError(f"expected a list of request shapes, e.g. {EXAMPLE}", where=path)
    entries = []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise GsgError(f"entry {number} is not a mapping, e.g. {EXAMPLE}", where=path)
        unknown = sorted(set(item) - {"prompt_tokens", "max_tokens", "weight"})
        if unknown:
            raise GsgError(f"entry {number}: unknown field {unknown[0]!r} (prompt_tokens, max_tokens, weight)",
                           where=path)
        try:
            entry = WorkloadEntry(int(item["prompt_tokens"]), int(item["max_tokens"]), float(item.get("weight", 1)))
        except KeyError as exc:
            raise GsgError(f"entry {number}: {exc.args[0]} is missing", where=path) from None
        except (TypeError, ValueError):
            raise GsgError(f"entry {number}: prompt_tokens and max_tokens must be integers, weight a number",
                           where=path) from None
        if entry.prompt_tokens < 1 or entry.max_tokens < 1 or entry.weight <= 0:
            raise GsgError(f"entry {number}: prompt_tokens and max_tokens must be >= 1, weight > 0", where=path)
        entries.append(entry)
    return entries
