"""Turn one raw YAML document into a DeploymentSpec, or into findings that point at file:line:column."""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from pydantic_core import ValidationError

from gpustack_guard.core import findings as F
from gpustack_guard.core.ports import LocatedData
from gpustack_guard.core.rules import documents as D
from gpustack_guard.core.spec.model import (
    BUILTIN_BACKENDS,
    COMMUNITY_BACKENDS,
    SERVER_MANAGED_FIELDS,
    SOURCE_ID_FIELD,
    DeploymentSpec,
)
from gpustack_guard.core.units import MAX_DEVICE_BYTES, MAX_MODEL_BYTES, TiB

GPU_ID = re.compile(r"^(?P<worker>.+):(?P<type>[^:]+):(?P<index>\d+)$")


@dataclass(frozen=True)
class SpecDoc:
    """A spec document as read from disk: where it is, its raw data and its positions; after the check stage,
    a copy carries the validated spec."""

    file: str
    index: int  # document number in the file
    located: LocatedData
    spec: DeploymentSpec | None = None

    @property
    def raw(self) -> Any:
        return self.located.data

    @property
    def name(self) -> str | None:
        if isinstance(self.raw, dict) and isinstance(self.raw.get("name"), str):
            return self.raw["name"]
        return None

    def at(self, *path, key: bool = False) -> F.Location:
        line, column = self.located.position(tuple(path), key=key)
        origin = getattr(self.located, "origin", None)  # an overlaid document: the overlay may have written it
        return F.Location((origin and origin(tuple(path))) or self.file, line, column)


def _suggest(value: str, options: tuple[str, ...] | list[str]) -> str | None:
    lowered = {o.lower(): o for o in options}
    if str(value).lower() in lowered:
        return lowered[str(value).lower()]
    close = difflib.get_close_matches(str(value), list(options), n=1, cutoff=0.6)
    return close[0] if close else None


_BRANCH = re.compile(r"^[a-z_]+\[|^function-")
_NO_DATA = object()


def field_path(loc: tuple, data: Any = _NO_DATA) -> tuple:
    """Pydantic locations may carry union branch names; keep only real keys and indexes. With the validated data,
    a part that is a key of it is always kept (a user key such as `n[ame` looks like a branch name)."""
    kept = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            kept.append(part)
            node = node[part]
        elif isinstance(part, int):
            kept.append(part)
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
        elif not _BRANCH.match(str(part)):
            kept.append(part)
            node = None
    return tuple(kept)


def _pydantic_findings(doc: SpecDoc, error: ValidationError) -> list[F.Finding]:
    result = []
    for err in error.errors(include_url=False, include_input=False):
        path = field_path(err["loc"], doc.raw)
        dotted = ".".join(str(p) for p in path) or "(document)"
        kind = err["type"]
        if kind == "extra_forbidden":
            parent_fields = _known_fields(path[:-1])
            hint = _suggest(str(path[-1]), parent_fields) if parent_fields and path else None
            message = f"unknown field '{dotted}' (GPUStack would silently drop it)"
            result.append(F.finding(D.UNKNOWN_FIELD, doc.at(*path, key=True), message, spec=doc.name,
                                    fix=f"did you mean '{hint}'?" if hint else "remove it"))
        elif kind in ("literal_error", "enum"):
            expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
            value = _get(doc.raw, path)
            hint = _suggest(str(value), expected)
            message = f"'{dotted}' is '{value}', expected one of: {', '.join(expected)}"
            result.append(F.finding(D.ENUM_SPELLING, doc.at(*path), message, spec=doc.name,
                                    fix=f"did you mean '{hint}'?" if hint else None))
        elif kind == "missing":
            result.append(F.finding(D.SCHEMA, doc.at(*path[:-1]) if path[:-1] else doc.at(),
                                    f"required field '{dotted}' is missing", spec=doc.name,
                                    fix=f"add '{path[-1]}:'"))
        else:
            result.append(F.finding(D.SCHEMA, doc.at(*path), f"'{dotted}': {_readable(err, _get(doc.raw, path))}",
                                    spec=doc.name))
    return result


def _readable(err: Mapping[str, Any], value: Any) -> str:
    """Pydantic's message, with a non-finite input named and a byte bound in TiB."""
    message = err["msg"]
    if isinstance(value, float) and not math.isfinite(value) and err["type"] != "value_error":
        message += f", not {value}"
    limit = err.get("ctx", {}).get("le")
    if limit in (MAX_DEVICE_BYTES, MAX_MODEL_BYTES):
        message += f" ({limit // TiB} TiB)"
    return message


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _known_fields(path: tuple) -> list[str]:
    """Field names of the record at `path` (for did-you-mean on unknown fields)."""
    DeploymentSpec.core()  # builds the schema, which resolves every field's annotation
    record: Any = DeploymentSpec
    for part in path:
        if isinstance(part, int):
            continue
        declared = record.record_fields.get(part)
        record = declared.record if declared else None
        if record is None:
            return []
    return list(record.record_fields)


def check_document(doc: SpecDoc) -> tuple[SpecDoc, list[F.Finding]]:
    """The check stage for one document: the document carrying its validated spec (unchanged when an error was
    found), and the findings (maybe warnings only)."""
    raw = doc.raw
    if not isinstance(raw, dict):
        return doc, [F.finding(D.SCHEMA, doc.at(), "a spec document must be a mapping of GPUStack fields")]
    found: list[F.Finding] = []
    for path, line, column in doc.located.duplicate_keys:
        found.append(F.finding(D.DUPLICATE_KEY, F.Location(doc.file, line, column),
                               f"key '{'.'.join(map(str, path))}' appears twice; YAML keeps only the last",
                               spec=doc.name, fix="remove one of them"))
    data = dict(raw)
    for key in sorted(set(data) & SERVER_MANAGED_FIELDS):
        found.append(F.finding(D.SERVER_MANAGED, doc.at(key, key=True),
                               f"'{key}' is managed by the GPUStack server and cannot be declared",
                               spec=doc.name, fix=f"remove '{key}'"))
        data.pop(key)
    backend = data.get("backend")
    if isinstance(backend, str):
        found.extend(_check_backend(doc, backend))
    try:
        spec = DeploymentSpec.validate(data)
    except ValidationError as error:
        return doc, found + _pydantic_findings(doc, error)
    found.extend(_check_source(doc, spec))
    found.extend(_check_gpu_ids(doc, spec))
    if any(f.severity == F.Severity.ERROR for f in found):
        return doc, found
    return replace(doc, spec=spec), found


def _check_backend(doc: SpecDoc, backend: str) -> list[F.Finding]:
    known = BUILTIN_BACKENDS + COMMUNITY_BACKENDS
    if backend in known:
        return []
    hint = _suggest(backend, known)
    if hint and hint.lower() == backend.lower():
        why = " lowercase makes GPUStack book it as a Custom backend" if hint in BUILTIN_BACKENDS else ""
        return [F.finding(D.ENUM_SPELLING, doc.at("backend"),
                          f"backend '{backend}' is not spelled as GPUStack expects (case-sensitive);{why}",
                          spec=doc.name, fix=f"did you mean '{hint}'?")]
    return [F.finding(D.BACKEND_UNKNOWN, doc.at("backend"),
                      f"backend '{backend}' is not a built-in or known community backend; "
                      "gsg checks it like Custom (weights only)", spec=doc.name,
                      fix=f"did you mean '{hint}'?" if hint else None)]


def _check_source(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    field = SOURCE_ID_FIELD[spec.source]
    if spec.source_id:
        return []
    return [F.finding(D.SOURCE_ID, doc.at("source"), f"source '{spec.source}' needs '{field}'",
                      spec=spec.name, fix=f"add '{field}:'")]


def _check_gpu_ids(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    if not spec.gpu_selector or not spec.gpu_selector.gpu_ids:
        return []
    return [F.finding(D.GPU_ID_FORMAT, doc.at("gpu_selector", "gpu_ids", i),
                      f"gpu id '{gpu_id}' is not 'worker:type:index' (e.g. 'gpu-a:cuda:0')", spec=spec.name)
            for i, gpu_id in enumerate(spec.gpu_selector.gpu_ids) if not GPU_ID.match(gpu_id)]
