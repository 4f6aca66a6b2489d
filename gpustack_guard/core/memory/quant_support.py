"""Whether an engine release loads a checkpoint's weights format (profiles.QUANT_LOADERS, rule GSG053).

gsg's memory arithmetic sizes any format it knows at any release; the engine refuses at start-up a format its
release has no loader for. Pure: the facts and the version text in, the rows that decide out.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.versions import Version, parse_version

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


class LoaderVerdict(NamedTuple):
    """What the table says of one deployment: `loads` is None when the release is unknown (no version, or one that
    names no release); `rows` are the rows of the format, the first the one a message names."""

    loads: bool | None
    weights: str
    rows: tuple[P.QuantLoaderRow, ...]


@functools.cache
def _rows(family: str, method: str, checkpoint: str | None) -> tuple[P.QuantLoaderRow, ...]:
    """The rows of this format: the checkpoint's own loader when its config names one, every loader of gsg's
    method otherwise (a method stated in guard.model or --quantization: the most permissive reading)."""
    rows = tuple(r for r in P.QUANT_LOADERS if r.family == family and r.method == method)
    if checkpoint is None:
        return rows
    return tuple(r for r in rows if r.checkpoint == checkpoint)


def _covers(row: P.QuantLoaderRow, release: Version) -> bool:
    return P.known_version(row.since) <= release and (row.until is None or release < P.known_version(row.until))


def gated(row: P.QuantLoaderRow) -> bool:
    """A row that leaves some release out: one loaded by every release read says nothing to check."""
    return row.since != "0.0.0" or row.until is not None


def loader_verdict(family: str, facts: ModelFacts | None, version: str | None) -> LoaderVerdict | None:
    """None when nothing is known to gate: an engine or method without rows, an unquantised checkpoint."""
    if facts is None or not facts.quant_method or family not in ENGINE_NAMES:
        return None
    method = facts.quant_method.lower()
    method = "gguf" if method.startswith("gguf") else method
    checkpoint = "gguf" if method == "gguf" else facts.quant_format
    rows = _rows(family, method, checkpoint.lower() if checkpoint else None)
    if not rows or not any(gated(r) for r in rows):
        return None
    weights = method if not checkpoint or checkpoint == method else f"{method} ({checkpoint})"
    release = parse_version(version)
    if release is None:
        return LoaderVerdict(None, weights, rows)
    return LoaderVerdict(any(_covers(r, release) for r in rows), weights, rows)


def releases_text(row: P.QuantLoaderRow) -> str:
    """The releases a row covers, as a message says them."""
    if row.since == "0.0.0":
        return f"before {row.until}"
    return f"from {row.since}" + (f" to before {row.until}" if row.until else " on")


def first_fix(row: P.QuantLoaderRow) -> str:
    if row.until is None:
        return f"set backend_version to {row.since} or later"
    if row.since == "0.0.0":
        return f"set backend_version to a release before {row.until}"
    return f"set backend_version to a release from {row.since} to before {row.until}"
