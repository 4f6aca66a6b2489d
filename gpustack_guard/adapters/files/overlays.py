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

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.ports import LocatedData, YamlPath

OVERLAYS_FOLDER = "overlays"


def _flag_key(item: Any) -> str:
    text = str(item)
    return text.split("=", 1)[0] if text.startswith("-") else text


def merge_parameters(base: list, patch: list) -> list:
    """backend_parameters by flag name: a patched flag takes the base's place, a new one goes last."""
    patched = {_flag_key(p): p for p in patch}
    merged = [patched.pop(_flag_key(b), b) for b in base]
    return merged + [p for p in patch if _flag_key(p) in patched]


def merge(base: Any, patch: Any, path: YamlPath = ()) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merge(base.get(key), value, path + (key,)) if key in base else value
        return out
    if path == ("backend_parameters",) and isinstance(base, list) and isinstance(patch, list):
        return merge_parameters(base, patch)
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
