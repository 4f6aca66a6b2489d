"""Turn one raw YAML document into a DeploymentSpec, or into findings that point at file:line:column."""

from __future__ import annotations

import datetime
import functools
import math
import re
import unicodedata
from typing import Any, Mapping

from gpustack_guard.core import echo
from gpustack_guard.core import findings as F
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.ports import LocatedData
from gpustack_guard.core.record_engine import ValidationError
from gpustack_guard.core.rules import documents as D
from gpustack_guard.core.spec import source_ids
from gpustack_guard.core.spec.model import (
    BUILTIN_BACKENDS,
    COMMUNITY_BACKENDS,
    SERVER_MANAGED_FIELDS,
    SOURCE_ID_FIELD,
    DeploymentSpec,
)
from gpustack_guard.core.units import MAX_DEVICE_BYTES, MAX_MODEL_BYTES, TiB
from gpustack_guard.core.values import frozen_value

GPU_ID = re.compile(r"^(?P<worker>.+):(?P<type>[^:]+):(?P<index>\d+)$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Characters an env value cannot carry into a process (NUL ends a C string) or should not (other control
# characters). Line breaks inside a multi-line value (a PEM key) are legitimate; a one-line value that ends in
# a line break is the one a YAML `|` block leaves, and it becomes part of a token or a URL.
_ENV_VALUE_BAD = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ONE_LINE_WITH_BREAK = re.compile(r"\A[^\n]*(\n)\Z")


@frozen_value(eq=True)
class SpecDoc:
    """A spec document as read from disk: where it is, its raw data and its positions; after the check stage,
    a copy carries the validated spec."""

    __repr__ = fields_repr

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


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _branch() -> re.Pattern[str]:
    return re.compile(r"^[a-z_]+\[|^function-")


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
        elif not _branch().match(str(part)):
            kept.append(part)
            node = None
    return tuple(kept)


def _pydantic_findings(doc: SpecDoc, error: ValidationError) -> list[F.Finding]:
    from gpustack_guard.core.spec import spelling  # only for a spec with errors: ~0.6 ms of start-up (issue 34)

    result = []
    for err in error.errors(include_url=False, include_input=False):
        path = field_path(err["loc"], doc.raw)
        dotted = ".".join(str(p) for p in path) or "(document)"
        kind = err["type"]
        if kind == "invalid_key" and (bad := _bad_key(doc, path)):
            result.append(bad)
        elif kind == "extra_forbidden":
            parent_fields = _known_fields(path[:-1])
            hint = spelling.suggest(str(path[-1]), parent_fields) if parent_fields and path else None
            # the guard block is gsg's own and never reaches GPUStack: an unknown key there is a setting unread
            dropped = ("gsg reads no such guard setting: it has no effect" if path and path[0] == "guard"
                       else "GPUStack would silently drop it")
            message = f"unknown field '{echo.value(dotted)}' ({dropped})"
            result.append(F.finding(D.UNKNOWN_FIELD, doc.at(*path, key=True), message, spec=doc.name,
                                    fix=f"did you mean '{hint}'?" if hint else "remove it"))
        elif kind in ("literal_error", "enum"):
            expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
            value = _get(doc.raw, path)
            miss = spelling.near_miss(value, expected) if isinstance(value, str) else None
            hint = miss.known if miss else spelling.suggest(str(value), expected)
            if miss:
                message = (f"'{dotted}' is '{echo.value(value)}', not '{miss.known}' as GPUStack spells it "
                           f"(it differs in {miss.why}); GPUStack compares it exactly")
            else:
                message = f"'{dotted}' is '{echo.value(value)}', expected one of: {', '.join(expected)}" + (
                    "" if isinstance(value, str) else _unquoted(doc, path, value))
            result.append(F.finding(D.ENUM_SPELLING, doc.at(*path), message, spec=doc.name,
                                    fix=f"did you mean '{hint}'?" if hint else None))
        elif kind == "missing":
            result.append(F.finding(D.SCHEMA, doc.at(*path[:-1]) if path[:-1] else doc.at(),
                                    f"required field '{dotted}' is missing", spec=doc.name,
                                    fix=f"add '{path[-1]}:'"))
        else:
            value = _get(doc.raw, path)
            result.append(F.finding(D.SCHEMA, doc.at(*path), f"'{dotted}': {_readable(err, value)}"
                                    + (_unquoted(doc, path, value) if kind == "string_type" else ""), spec=doc.name))
    return result


def _yaml11_number(doc: SpecDoc, path: tuple, text: str, value: Any) -> F.Finding:
    """An unquoted number that YAML 1.1 (gsg, PyYAML, GPUStack) and YAML 1.2 (editors' schema checks) read as two
    different things: `replicas: 1:30` is 90 here and the text '1:30' there, `010` is 8 here and 10 there."""
    secret = bool(path) and path[0] == "env"  # an env value may be a secret: neither its text nor its value
    # at(): an overlay's number is on the overlay's file
    return F.finding(D.SCHEMA, doc.at(*path), yaml11_reading(path, text, value, "gsg and GPUStack read",
                                                             secret=secret),
                     spec=doc.name, fix=YAML11_FIX)


YAML11_FIX = "write the number meant in plain decimal, or quote the value if text is meant"


def yaml11_reading(path: tuple, text: str, value: Any, readers: str, *, secret: bool = False) -> str:
    """What YAML 1.1 (`readers`: the programs reading the file) and YAML 1.2 make of one unquoted number: the text
    of a spec finding and of a settings file's (fleet, workload, contexts) one-line error alike."""
    dotted = ".".join(map(str, path)) or "(document)"
    shown = "the value" if secret else f"'{echo.value(text)}'"
    base, other = ("a base-60 number", "the text" if secret else f"the text '{echo.value(text)}'") if ":" in text \
        else ("a base-8 number (its leading zero)", "a decimal number" if secret else str(int(text.replace("_", ""))))
    read = "another number" if secret else str(value)
    return (f"'{echo.value(dotted)}': {shown} is {base} in YAML 1.1, so {readers} {read}, while YAML 1.2 tools "
            f"(editors) read {other}")


_YAML_KINDS = {bool: "a boolean", int: "a number", float: "a number", type(None): "null", datetime.date: "a date",
               datetime.datetime: "a date"}


def _bad_key(doc: SpecDoc, path: tuple) -> F.Finding | None:
    """A mapping key YAML read as a boolean, number, null or date (`yes:`, `1:`, `~:`), at the key, naming what was
    written; pydantic's 'Keys should be strings' at '1' (True's number) pointed at the value."""
    parent = _get(doc.raw, path[:-1]) if path else None
    if not isinstance(parent, dict):
        return None
    # pydantic's loc holds a key as str() of it, except a date's (its repr: 'datetime.date(2024, 1, 1)')
    key = next((k for k in parent if not isinstance(k, str) and (k == path[-1] or str(path[-1]) in (str(k), repr(k)))),
               _NO_KEY)
    if key is _NO_KEY:
        return None
    plain_text = getattr(doc.located, "plain_text", None)
    text = plain_text((*path[:-1], key), key=True) if plain_text else None
    return F.finding(D.SCHEMA, doc.at(*path[:-1], key, key=True), key_reading(path[:-1], key, text),
                     spec=doc.name, fix=KEY_FIX)


KEY_FIX = "quote the key, or correct it"
# Why YAML read an unquoted key as something other than text, by what it read
_KEY_WHY = {bool: "YAML 1.1 reads unquoted yes/no/on/off/true/false as booleans",
            type(None): "YAML reads an unquoted ~ or null as null",
            int: "YAML reads unquoted digits as a number", float: "YAML reads unquoted digits as a number",
            datetime.date: "YAML 1.1 reads an unquoted YYYY-MM-DD as a date",
            datetime.datetime: "YAML 1.1 reads an unquoted YYYY-MM-DD as a date"}


def key_reading(parent: tuple, key: Any, text: str | None, noun: str = "a field name") -> str:
    """Why a mapping key YAML read as a boolean, number, null or date names nothing: the text of a spec finding
    and of a settings file's (fleet, workload, project, contexts) one-line error alike. `noun`: what a key of
    that mapping names (a context name under `contexts:`)."""
    where = ".".join(map(str, parent)) or "the document"
    if parent and isinstance(parent[0], int):  # a document that is a list (soak's workload): `item 0`, not `0`
        where = f"item {where}"
    kind = _YAML_KINDS.get(type(key), "a value that is not text")
    shown = f" (written '{echo.value(text)}')" if text else ""
    why = _KEY_WHY.get(type(key), "only text names a field")
    return f"a key of {echo.value(where)} is {kind}{shown}, not {noun}: {why}"


_NO_KEY = object()


def _unquoted(doc: SpecDoc, path: tuple, value: Any) -> str:
    """Why a text field holds no text when the file shows one: YAML 1.1 read an unquoted word as another type
    (`name: no` is false, `name: 1:30` is 90, `description: ~` is null)."""
    kind = _YAML_KINDS.get(type(value))
    plain_text = getattr(doc.located, "plain_text", None)
    text = plain_text(path) if kind and plain_text else None
    if text is None:
        return ""
    if path and path[0] == "env":  # an env value may be a secret: not shown
        return f" (YAML read the unquoted value as {kind}: quote it)"
    return f" (YAML read the unquoted '{echo.value(text)}' as {kind}: quote it, '{echo.value(text)}', for text)"


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
                               f"key '{echo.value('.'.join(map(str, path)))}' appears twice; YAML keeps only the last",
                               spec=doc.name, fix="remove one of them"))
    yaml11 = [_yaml11_number(doc, path, text, value)
              for path, text, value in getattr(doc.located, "yaml11_numbers", ())]
    found.extend(yaml11)
    data = dict(raw)
    # asked first: nearly every spec declares none (sorting the empty intersection was ~0.4 us a spec)
    managed = sorted(set(data) & SERVER_MANAGED_FIELDS) if not SERVER_MANAGED_FIELDS.isdisjoint(data) else []
    for key in managed:
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
        # the number's own finding says why it is not text: once is enough
        told = {(f.location.file, f.location.line, f.location.column) for f in yaml11}
        return doc, found + [f for f in _pydantic_findings(doc, error)
                             if (f.location.file, f.location.line, f.location.column) not in told]
    found.extend(_check_source(doc, spec))
    found.extend(_check_env(doc, spec))
    found.extend(_check_name(doc, spec))
    found.extend(_check_gpu_ids(doc, spec))
    found.extend(_check_gpu_type_selector(doc, spec))
    if found and any(f.severity == F.Severity.ERROR for f in found):
        return doc, found
    # SpecDoc's constructor, not dataclasses.replace (which reads the fields list every call): ~3 us a spec
    return SpecDoc(doc.file, doc.index, doc.located, spec), found


def _check_backend(doc: SpecDoc, backend: str) -> list[F.Finding]:
    """A near-miss of a known backend (look-alike letter, invisible character, stray space, case, separators)
    is GSG004; any other unknown name is a community or custom backend (GSG015, a warning)."""
    known = BUILTIN_BACKENDS + COMMUNITY_BACKENDS
    if backend in known:
        return []
    from gpustack_guard.core.spec import spelling  # only for an unknown backend (see _pydantic_findings)

    shown = echo.value(backend)
    miss = spelling.near_miss(backend, known)
    if miss:
        effect = ("books it as a Custom backend, without vLLM's, SGLang's or MindIE's handling"
                  if miss.known in BUILTIN_BACKENDS else f"finds no '{miss.known}' backend under that name")
        return [F.finding(D.ENUM_SPELLING, doc.at("backend"),
                          f"backend '{shown}' is not spelled as GPUStack expects: it differs from '{miss.known}' "
                          f"in {miss.why}; GPUStack compares backend names exactly and {effect}",
                          spec=doc.name, fix=f"did you mean '{miss.known}'?", expected=miss.known)]
    hint = spelling.suggest(backend, known)
    return [F.finding(D.BACKEND_UNKNOWN, doc.at("backend"),
                      f"backend '{shown}' is not a built-in or known community backend; "
                      "gsg checks it like Custom (weights only)", spec=doc.name,
                      fix=f"did you mean '{hint}'?" if hint else None)]


FILE_FIELD = {"huggingface": "huggingface_filename", "model_scope": "model_scope_file_path"}
# every field a source reads (its id, then its file): another source's beside them is stored unread
SOURCE_FIELDS = {source: (id_field, FILE_FIELD[source]) if source in FILE_FIELD else (id_field,)
                 for source, id_field in SOURCE_ID_FIELD.items()}
# per source, (field, the source that reads it) of every other source's field, in SOURCE_FIELDS' order: worked out
# once, not per spec (10,000 specs: _check_source ~14 -> ~10 ms)
OTHER_SOURCES_FIELDS = {source: tuple((unused, other) for other, fields in SOURCE_FIELDS.items() if other != source
                                      for unused in fields)
                        for source in SOURCE_FIELDS}


def _check_source(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    """The source's id field is present and of the form its hub (or GPUStack's workers) accept."""
    field = SOURCE_ID_FIELD[spec.source]
    value = spec.source_id
    if not value:
        return [F.finding(D.SOURCE_ID, doc.at("source"), f"source '{spec.source}' needs '{field}'",
                          spec=spec.name, fix=f"add '{field}:'")]
    found = []
    problem = (source_ids.local_path(value) if spec.source == "local_path" else source_ids.repo_id(value, field))
    if problem:
        fix = f"write '{field}: {problem.fix}'" if problem.fix else (
            "write the absolute path on the workers, e.g. /models/NAME" if spec.source == "local_path"
            else "write the hub's repo id, `namespace/name` (e.g. Qwen/Qwen2.5-7B-Instruct)")
        if problem.filename and not getattr(spec, FILE_FIELD[spec.source]):
            fix += f" and '{FILE_FIELD[spec.source]}: {echo.value(problem.filename)}'"
        found.append(F.finding(D.SOURCE_ID, doc.at(field), f"{field} '{echo.value(value)}' {problem.why}",
                               spec=spec.name, fix=echo.value(fix, echo.MESSAGE_CHARS)))
    for unused, other in OTHER_SOURCES_FIELDS[spec.source]:
        if getattr(spec, unused) is not None:
            # GPUStack's ModelSource checks only the source's own field and stores the rest unread
            found.append(F.finding(
                D.SOURCE_ID, doc.at(unused), f"{unused} is set but source is '{spec.source}': GPUStack "
                f"reads only {SOURCE_ID_FIELD[spec.source]} and keeps this one unused (gsg sizes "
                f"{SOURCE_ID_FIELD[spec.source]} too)", spec=spec.name, severity=F.Severity.WARNING,
                fix=f"remove '{unused}', or set 'source: {other}'"))
    file_field = FILE_FIELD.get(spec.source)
    filename = getattr(spec, file_field) if file_field else None
    if file_field and filename is not None:
        problem = source_ids.repo_file(filename)
        if problem:
            found.append(F.finding(
                D.SOURCE_ID, doc.at(file_field), f"{file_field} '{echo.value(filename)}' {problem.why}",
                spec=spec.name, fix=f"write '{file_field}: {echo.value(problem.fix)}'" if problem.fix else None))
    return found


def _check_env(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    """Env names a process can carry and values without NUL, control characters or a stray final line break.
    A value is never echoed (it may be a secret): the message names the character and its position."""
    found = []
    for name, value in (spec.env or {}).items():
        if not ENV_NAME.match(name):
            found.append(F.finding(
                D.SCHEMA, doc.at("env", name, key=True),
                f"env name '{echo.value(name)}' is not a valid variable name (letters, digits and '_', not "
                "starting with a digit); the backend's shell and most programs cannot read it", spec=spec.name,
                fix=f"rename it, e.g. '{echo.value(fixed)}'" if (fixed := _env_name_fix(name)) else "rename it"))
        bad = _ENV_VALUE_BAD.search(value) or _ONE_LINE_WITH_BREAK.search(value)
        if bad:
            char = bad.group(bad.lastindex or 0)
            what, effect = {"\x00": ("a NUL byte", "a process environment cannot carry it (execve ends the value "
                                                   "there)"),
                            "\n": ("a line break", "it becomes part of the value (a token or URL that no longer "
                                                  "matches)")}.get(
                char, (f"a control character U+{ord(char):04X}", "it becomes part of the value"))
            trailing = " at its end (a YAML `|` block keeps the last line break: use `|-` or a plain scalar)" \
                if char == "\n" else f" at character {bad.start() + 1:,}"
            found.append(F.finding(
                D.SCHEMA, doc.at("env", name), f"env '{echo.value(name)}' has {what}{trailing}; {effect}",
                spec=spec.name,
                fix="remove the character (the value is not shown: it may be a secret)"))
    return found


# control, format, line/paragraph separator, surrogate, private-use and unassigned characters
NAME_REFUSED_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def _check_name(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    """A model name is a route, a URL path and a key a person types: no control or invisible format character
    (NUL, line breaks, bidi overrides, zero-width joiners), no space around it."""
    name = spec.name
    if name != name.strip():
        return [F.finding(D.SCHEMA, doc.at("name"), f"model name '{echo.value(name)}' has a space before or after "
                          "it: GPUStack keeps it, and every client must then type it exactly", spec=name,
                          fix=f"write 'name: {echo.value(name.strip())}'")]
    if name.isascii() and name.isprintable():
        # nearly every name: the only such categories in ASCII are the Cc controls (0-31, 127), exactly what
        # isprintable() refuses there; one category lookup per character was ~1.2 us a spec (docs/performance.md)
        return []
    bad = next((c for c in name if unicodedata.category(c) in NAME_REFUSED_CATEGORIES), None)
    if bad is None:
        return []
    return [F.finding(D.SCHEMA, doc.at("name"), f"model name '{echo.value(name)}' holds U+{ord(bad):04X} "
                      f"({unicodedata.name(bad, 'a control character')}), which displays as nothing or reorders "
                      "the text around it: two names that look alike would be different models", spec=name,
                      fix="retype the name in visible characters")]


def _env_name_fix(name: str) -> str | None:
    fixed = re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_")
    if fixed and fixed[0].isdigit():
        fixed = "_" + fixed
    return fixed if fixed and ENV_NAME.match(fixed) and fixed != name else None


def _check_gpu_type_selector(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    """What GPUStack 2.3 refuses or rewrites in a gpu_type_selector (schemas/models.py GPUTypeSelector): the
    selectors contradicting each other, and slice settings that contradict themselves."""
    selector = spec.gpu_type_selector
    if selector is None:
        return []
    found: list[F.Finding] = []
    gpus = spec.gpu_selector
    if gpus is not None and gpus.gpu_ids:
        found.append(F.finding(D.SCHEMA, doc.at("gpu_selector", "gpu_ids"), "gpu_selector.gpu_ids and "
                               "gpu_type_selector contradict each other: with a gpu_type_selector the operator's "
                               "device plugin chooses the card, not an index", spec=spec.name,
                               fix="drop gpu_ids, or drop gpu_type_selector to pin cards"))
    if gpus is not None and (gpus.gpus_per_replica or 1) > 1:
        found.append(F.finding(D.SCHEMA, doc.at("gpu_selector", "gpus_per_replica"), "a gpu_type_selector gives "
                               f"one card per worker per replica: gpus_per_replica {gpus.gpus_per_replica} is "
                               "constrained to 1", spec=spec.name, fix="set gpus_per_replica: 1 or drop it"))
    memory, cores = selector.accelerator_sliced_memory_percentage, selector.accelerator_sliced_cores_percentage
    memory_sliced, cores_sliced = bool(memory), bool(cores)
    here = ("gpu_type_selector",)
    if selector.accelerator_partitioned_profile and (memory_sliced or cores_sliced):
        found.append(F.finding(D.SCHEMA, doc.at(*here, "accelerator_partitioned_profile"), "a hardware partition "
                               "profile and slice percentages contradict each other: one card is partitioned or "
                               "sliced, not both", spec=spec.name, fix="drop the percentages or the profile"))
    elif not selector.accelerator_partitioned_profile and cores_sliced and not memory_sliced:
        found.append(F.finding(D.SCHEMA, doc.at(*here, "accelerator_sliced_cores_percentage"), "a sliced request "
                               "needs accelerator_sliced_memory_percentage 1-100 (0 or unset only when both are 0: "
                               "a whole card)", spec=spec.name, fix="set the memory percentage"))
    elif not selector.accelerator_partitioned_profile and memory_sliced and cores == 0:
        found.append(F.finding(D.SCHEMA, doc.at(*here, "accelerator_sliced_cores_percentage"), "accelerator_sliced_"
                               "cores_percentage 0 is only valid with memory 0 (a whole card); a sliced request "
                               "takes 1-100 (unset: 100)", spec=spec.name, fix="set it to 1-100 or drop it"))
    return found


def _check_gpu_ids(doc: SpecDoc, spec: DeploymentSpec) -> list[F.Finding]:
    if not spec.gpu_selector or not spec.gpu_selector.gpu_ids:
        return []
    found = [F.finding(D.GPU_ID_FORMAT, doc.at("gpu_selector", "gpu_ids", i),
                       f"gpu id '{echo.value(gpu_id)}' is not 'worker:type:index' (e.g. 'gpu-a:cuda:0')",
                       spec=spec.name)
             for i, gpu_id in enumerate(spec.gpu_selector.gpu_ids) if not GPU_ID.match(gpu_id)]
    first: dict[str, int] = {}
    for i, gpu_id in enumerate(spec.gpu_selector.gpu_ids):
        if gpu_id not in first:
            first[gpu_id] = i
            continue
        # GPUStack keeps a repeat (gpustack/utils/gpu.py parse_gpu_ids_by_worker groups and sorts, never dedupes):
        # one GPU counted as two, which gsg's placement would then book twice (an overcommit of the spec itself)
        found.append(F.finding(D.SCHEMA, doc.at("gpu_selector", "gpu_ids", i),
                               f"gpu id '{echo.value(gpu_id)}' is listed twice in gpu_selector.gpu_ids (items "
                               f"{first[gpu_id] + 1} and {i + 1}); GPUStack keeps both and counts that GPU twice",
                               spec=spec.name, fix="remove the repeat"))
    return found
