"""Per-environment overlays: `specs/overlays/<name>/*.yaml` patch the specs of the same `name:`, so prod and
staging differ by the lines that differ, not by copies.

    # specs/overlays/prod/llama-70b.yaml
    name: llama-70b
    replicas: 2
    backend_parameters: [--max-num-seqs=48]   # flags merge by name: this one replaces the base's value

Merging: mappings merge key by key, `backend_parameters` merge by flag (new flags are appended), other lists and
scalars are replaced. A finding about a patched field points at the overlay's line; everything else at the base.

Beyond patches, as kustomize's strategic-merge directive spells it, an overlay document may be:
- a whole spec (with `source:`) of a name no base spec declares: a deployment only this context has;
- `name: X` + `$patch: exclude`: X is not managed in this context (not planned, applied, drifted or pruned);
- `name: X` + `$patch: delete`: this context wants X gone (plan deletes it when this project owns it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpustack_guard.core import args as A
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.ports import LocatedData, YamlPath

OVERLAYS_FOLDER = "overlays"


def _flags_of(item: Any, family: str) -> tuple[str, ...]:
    """The canonical names of the flags GPUStack's worker reads in one backend_parameters item (one for
    `--max-model-len=4096` or `-tp 2`, two for a pasted `--enforce-eager --max-model-len 4096`, none for a value
    such as `4096` that belongs to the flag before it)."""
    text = str(item).strip()
    if not text.startswith("-"):
        return ()
    try:
        tokens = A.worker_tokens(text)
    except ValueError:  # a quote the worker cannot close: the spec check says so; keyed by the flag it opens with
        tokens = [text]
    return tuple(A.canonical_key(A.flag_name_part(t), family) for t in tokens if A.is_flag(t))


def _arguments(items: list, family: str) -> list[tuple[tuple[str, ...], list]]:
    """The items grouped as the engine reads them: each flag item with the value items after it."""
    groups: list[tuple[tuple[str, ...], list]] = []
    for item in items:
        flags = _flags_of(item, family)
        if flags or not groups:
            groups.append((flags, [item]))
        else:
            groups[-1][1].append(item)
    return groups


def merge_parameters(base: list, patch: list, family: str = "other") -> list:
    """backend_parameters by flag, as the engine reads them: a patched flag takes the place of the base's (its
    value items, an alias such as `-tp` for `--tensor-parallel-size` and every later occurrence included), a
    new one goes last. A base item holding several flags is kept whole: the patch's flag follows it, and the
    last one wins. Before, `--max-model-len` + `4096` patched with `--max-model-len=8192` left `4096` behind as a
    stray value (the engine refuses it), and patched with `--max-model-len` + `8192` lost the 8192."""
    by_flag: dict[str, list] = {}
    for flags, items in _arguments(patch, family):
        if len(flags) == 1:
            by_flag.setdefault(flags[0], []).extend(items)
    merged: list = []
    placed: set[str] = set()
    for flags, items in _arguments(base, family):
        if len(flags) != 1 or flags[0] not in by_flag:
            merged.extend(items)
        elif flags[0] not in placed:
            merged.extend(by_flag[flags[0]])
            placed.add(flags[0])
    for flags, items in _arguments(patch, family):
        if not (len(flags) == 1 and flags[0] in placed):
            merged.extend(items)
    return merged


def _family(base: Any, patch: Any) -> str:
    """The engine whose flag names (and aliases) the merged document's backend_parameters are read by."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return "other"
    backend = patch.get("backend", base.get("backend"))
    files = [patch.get(key, base.get(key)) for key in ("huggingface_filename", "model_scope_file_path", "local_path")]
    gguf = any(isinstance(f, str) and f.lower().endswith(".gguf") for f in files)
    return A.backend_family(backend if isinstance(backend, str) else None, gguf)


def merge(base: Any, patch: Any, path: YamlPath = (), family: str | None = None) -> Any:
    if family is None:
        family = _family(base, patch)
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merge(base.get(key), value, path + (key,), family) if key in base else value
        return out
    if path == ("backend_parameters",) and isinstance(base, list) and isinstance(patch, list):
        return merge_parameters(base, patch, family)
    return patch


def _covers(patch: Any, path: YamlPath) -> bool:
    """Whether the overlay wrote this path (or a parent of it that it replaced whole)."""
    node = patch
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return isinstance(node, list)  # inside a list the overlay set: its lines; elsewhere the base's
    return True


@dataclass(eq=False, repr=False)  # identity equality: cheaper to define, never compared or hashed
class OverlaidDocument:
    """A base document with an overlay merged in; answers positions from whichever file wrote the path."""

    __repr__ = fields_repr

    base: LocatedData
    patch: LocatedData
    patch_file: str
    data: Any = None
    start_line: int = 0
    duplicate_keys: list = field(default_factory=list)
    yaml11_numbers: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.data = merge(self.base.data, self.patch.data)
        self.start_line = self.base.start_line
        self.duplicate_keys = list(self.base.duplicate_keys)  # the overlay's own stop the run (_apply_overlay)
        # numbers YAML 1.1 and 1.2 read differently: the base's the overlay left, and the overlay's own (the spec
        # check finds each by its path, so position() and origin() name the file that wrote it)
        self.yaml11_numbers = [n for n in getattr(self.base, "yaml11_numbers", ()) if not self._patched(n[0])] + \
            list(getattr(self.patch, "yaml11_numbers", ()))

    def plain_text(self, path: YamlPath, *, key: bool = False) -> str | None:
        side = self.patch if self._patched(path) else self.base
        plain = getattr(side, "plain_text", None)
        return plain(path, key=key) if plain else None

    def _patched(self, path: YamlPath) -> bool:
        return bool(path) and path[0] != "name" and _covers(self.patch.data, path)

    def position(self, path: YamlPath, *, key: bool = False) -> tuple[int, int]:
        return (self.patch if self._patched(path) else self.base).position(path, key=key)

    def origin(self, path: YamlPath) -> str | None:
        """The overlay file when it wrote `path`; None: the base document's own file."""
        return self.patch_file if self._patched(path) else None
