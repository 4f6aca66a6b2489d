"""Reading recorded test vectors and verify reports from files: bounded, regular files only, one-line errors."""

from __future__ import annotations

from pathlib import Path

from gpustack_guard.adapters.files.regular_file import read_json
from gpustack_guard.core.advise.observed import ObservedError, ObservedPool, read_observed
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.verify import vector as V

MAX_VECTOR_BYTES = 4 << 20  # 4 MiB: a vector or a verify report is a few KB (arguments and ranks included)


def read_document(path: str | Path) -> object:
    """A JSON file of at most MAX_VECTOR_BYTES; GsgError naming the file otherwise."""
    try:
        return read_json(path, MAX_VECTOR_BYTES, str(path))
    except ValueError as exc:
        raise GsgError(str(exc)) from None


def load_vector(path: str | Path) -> dict:
    try:
        return V.check(read_document(path))
    except V.VectorError as exc:
        raise GsgError(f"not a gsg verify vector: {exc}", where=str(path)) from None


def vector_files(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).glob(f"*{V.SUFFIX}"))


def load_observed_kv(path: str) -> tuple[int, str]:
    """The KV capacity (tokens) an engine really allocated, from `gsg verify -o json` output or a recorded
    vector: (tokens, what the file is); GsgError when the file holds none."""
    return _observed_kv(read_document(path), path)


def load_observed_pool(path: str) -> ObservedPool:
    """The engine's KV pool with gsg's estimate of the same run and its configuration, for `gsg advise`."""
    document = read_document(path)
    tokens, kind = _observed_kv(document, path)
    try:
        return read_observed(document if isinstance(document, dict) else {}, path, tokens, kind)
    except ObservedError as exc:
        raise GsgError(str(exc), where=path) from None


def _observed_kv(document: object, path: str) -> tuple[int, str]:
    found = V.kv_capacity(document)
    if found is None:
        raise GsgError("holds no observed kv_capacity_tokens (give the JSON of `gsg verify --log FILE -o json` "
                       "or a vector `gsg verify --record` wrote, of an engine that started)", where=path)
    return found
