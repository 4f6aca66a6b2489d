"""--workload FILE: the request shapes a soak cycles through (YAML or JSON)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from gpustack_guard.adapters.files.spec_loader import read_yaml_file
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_length_problem

EXAMPLE = "- {prompt_tokens: 6000, max_tokens: 256, weight: 1}"


def load_workload(path: str) -> list[WorkloadEntry]:
    """A list of {prompt_tokens, max_tokens, weight?}, or a mapping with that list under `requests`."""
    docs = read_yaml_file(Path(path), "No such file or directory")  # the shared loader and its limits
    if len(docs) > 1:
        raise GsgError("a workload file is one document", where=path)
    data = docs[0].data if docs else None
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
            entry = WorkloadEntry(_whole(item["prompt_tokens"]), _whole(item["max_tokens"]),
                                  _number(item.get("weight", 1)))
        except KeyError as exc:
            raise GsgError(f"entry {number}: {exc.args[0]} is missing", where=path) from None
        except (TypeError, ValueError):
            raise GsgError(f"entry {number}: prompt_tokens and max_tokens must be integers, weight a number",
                           where=path) from None
        # `not weight > 0`: also nan (every comparison false); inf would take every draw
        if entry.prompt_tokens < 1 or entry.max_tokens < 1 or not 0 < entry.weight < math.inf:
            raise GsgError(f"entry {number}: prompt_tokens and max_tokens must be >= 1, weight a finite number > 0",
                           where=path)
        if prompt_length_problem(entry.prompt_tokens):
            raise GsgError(f"entry {number}: {prompt_length_problem(entry.prompt_tokens)}", where=path)
        entries.append(entry)
    # each weight finite, their sum need not be: 1e308 twice drew the first prompt with "Total of weights must be
    # finite" out of the run as an internal error
    if not math.isfinite(sum(entry.weight for entry in entries)):
        raise GsgError(f"the weights add up past the largest number ({sys.float_info.max:.3g}): give them as shares, "
                       "e.g. 1 and 3", where=path)
    return entries


def _whole(value: object) -> int:
    """A token count: int() alone made `1.9` 1 and `true` 1, a request the file never described."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(value)
    return int(value)  # type: ignore[call-overload]  # anything else int() refuses is the same one line


def _number(value: object) -> float:
    if isinstance(value, bool):  # `weight: true` was 1.0
        raise ValueError(value)
    return float(value)  # type: ignore[arg-type]
