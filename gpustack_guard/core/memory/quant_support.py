"""Whether an engine release loads a checkpoint's weights format (profiles.QUANT_LOADERS, rule GSG053), and on
which GPUs (profiles.QUANT_MIN_CAPABILITY, rule GSG054).

gsg's memory arithmetic sizes any format it knows at any release; the engine refuses at start-up a format its
release has no loader for. Pure: the facts and the version text in, the rows that decide out.
"""

from __future__ import annotations

import functools

from gpustack_guard.core.memory import gpu_arch
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.table_row import TableRow
from gpustack_guard.core.versions import Version, parse_version

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


class LoaderVerdict(TableRow):
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


def _covers(row: P.QuantLoaderRow | P.QuantCapabilityRow, release: Version) -> bool:
    return P.known_version(row.since) <= release and (row.until is None or release < P.known_version(row.until))


def gated(row: P.QuantLoaderRow) -> bool:
    """A row that leaves some release out: one loaded by every release read says nothing to check."""
    return row.since != "0.0.0" or row.until is not None


def loader_verdict(family: str, facts: ModelFacts | None, version: str | None) -> LoaderVerdict | None:
    """None when nothing is known to gate: an engine or method without rows, an unquantised checkpoint."""
    if facts is None or not facts.quant_method or family not in ENGINE_NAMES:
        return None
    method, checkpoint = _weights_format(facts)
    rows = _rows(family, method, checkpoint)
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


class CapabilityShortfall(TableRow):
    """A GPU the engine refuses the weights on (rule GSG054): its name and capability, the row that decides (the
    release's row, or the row with the lowest minimum when no release is pinned: every release refuses), and the
    first later row whose minimum the GPU meets, if any (a release that runs it)."""

    gpu_name: str
    capability: tuple[int, int]
    weights: str
    row: P.QuantCapabilityRow
    admitted_from: P.QuantCapabilityRow | None


@functools.cache
def _capability_rows(family: str, method: str, checkpoint: str) -> tuple[P.QuantCapabilityRow, ...]:
    key = (family, method, checkpoint)
    return tuple(r for r in P.QUANT_MIN_CAPABILITY if (r.family, r.method, r.checkpoint) == key)


def _weights_format(facts: ModelFacts) -> tuple[str, str | None]:
    """(gsg's method, the format the engine looks its config up by, None when no checkpoint config names one: a
    method stated in --quantization or guard.model.quantization). GGUF types (q4_k_m, ...) are one format."""
    method = (facts.quant_method or "").lower()
    method = "gguf" if method.startswith("gguf") else method
    checkpoint = "gguf" if method == "gguf" else facts.quant_format
    return method, checkpoint.lower() if checkpoint else None


def capability_shortfall(family: str, facts: ModelFacts | None, version: str | None,
                         gpu_name: str) -> CapabilityShortfall | None:
    """None when the GPU runs the format, when its name (capability) is unknown, or when no row covers the format
    at this release; with no readable release, only a GPU every release read refuses."""
    if facts is None or not facts.quant_method or family not in ENGINE_NAMES:
        return None
    capability = gpu_arch.compute_capability(gpu_name)
    if capability is None:
        return None
    method, named = _weights_format(facts)
    checkpoint = named or method  # a stated method is the engine's method of that name
    rows = _capability_rows(family, method, checkpoint)
    if not rows:
        return None
    weights = method if checkpoint == method else f"{method} ({checkpoint})"
    release = parse_version(version)
    if release is None:
        lowest = min(rows, key=lambda r: r.capability)
        if capability >= lowest.capability:
            return None
        return CapabilityShortfall(gpu_name, capability, weights, lowest, None)
    row = next((r for r in rows if _covers(r, release)), None)
    if row is None or capability >= row.capability:
        return None
    later = next((r for r in rows if r.since != "0.0.0" and P.known_version(r.since) > release
                  and capability >= r.capability), None)
    return CapabilityShortfall(gpu_name, capability, weights, row, later)


def capability_text(capability: tuple[int, int]) -> str:
    return f"{capability[0]}.{capability[1]}"
