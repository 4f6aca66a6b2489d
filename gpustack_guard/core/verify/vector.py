"""A recorded test vector (pure): what one engine start-up showed, with everything needed to estimate the same
deployment again, as one JSON document. `gsg verify --log FILE --record DIR` writes them; tests replay every
vector under tests/fixtures/vectors/ through the estimate (docs/verify-vectors.md describes the format).

A vector holds the model's facts as gsg read them (not only its name), so it replays offline and unchanged
when the catalog or the hub moves on; its `estimated` terms are the regression expectation, `observed` the
engine's truth.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, NamedTuple

from gpustack_guard.core.fleet.model import MAX_GPUS_PER_WORKER
from gpustack_guard.core.memory.facts import EncoderDummy, ModelFacts, RopeTable
from gpustack_guard.core.memory.gguf import RecurrentState
from gpustack_guard.core.memory.max_len import LengthConfig, RopeEntry
from gpustack_guard.core.units import MAX_DEVICE_BYTES
from gpustack_guard.core.verify import patterns as P

FORMAT = "gsg-verify-vector"
FORMAT_VERSION = 1  # a newer major version is refused by name: its fields may mean something else
SUFFIX = ".json"
NAME_CHARS = 120  # of the readable part of a file name; the content digest follows
DIGEST_CHARS = 12
# The keys every vector has; a file lacking one is not a vector (named in the error).
REQUIRED = ("format", "format_version", "source", "engine", "backend", "model", "model_facts", "backend_args",
            "gpu", "started", "observed")

ASSUMED = " (assumed)"  # how an estimate marks a version it chose itself
_TUPLE_FIELDS = {"compress_ratios", "layer_weight_bytes", "layer_repack_bytes", "vit_shape"}
# facts that are dataclasses of their own: stored as an object of their fields (tuples as lists), read back by type
_OBJECT_FIELDS: dict[str, type] = {"vision_encoder": EncoderDummy, "recurrent_state": RecurrentState}
_NOT_STORED = {"block_tensors"}  # a GGUF's tensor list: large, and the per-layer sums above carry the verdict
# bounds of a vector's estimate_inputs (a file from elsewhere is read with them): the GPUs of one worker and one
# GPU's memory as the fleet and spec bound them, and an env no deployment needs more of
MAX_INPUT_GPUS = MAX_GPUS_PER_WORKER
MAX_INPUT_BYTES = MAX_DEVICE_BYTES
MAX_INPUT_ENV = 256
MAX_ROPE_COUNT = 10**9  # a rope table's positions or width (hfconfig.MAX_CONFIG_COUNT, the config reader's bound)
MAX_INPUT_ENV_CHARS = 4096


class VectorError(ValueError):
    """A file that is not a vector this gsg reads: one line, naming the key."""


# -- model facts to JSON and back ------------------------------------------------------------------------------

def _default(field_) -> Any:
    if field_.default is not MISSING:
        return field_.default
    if field_.default_factory is not MISSING:  # pragma: no cover - ModelFacts has no factory fields today
        return field_.default_factory()
    return MISSING  # pragma: no cover


def _rope_json(entries: tuple[RopeEntry, ...]) -> list[dict]:
    return [{"rope_type": e.rope_type, "factor": e.factor,
             "original_max_position_embeddings": e.original_max_position_embeddings} for e in entries]


def _length_json(config: LengthConfig) -> dict:
    return {"keys": [[name, value] for name, value in config.keys], "rope_scaling": _rope_json(config.rope_scaling),
            "rope_parameters": _rope_json(config.rope_parameters), "model_type": config.model_type,
            "sliding_window": config.sliding_window, "interleaved_attention": config.interleaved_attention,
            "original_max_position_embeddings": config.original_max_position_embeddings}


def facts_json(facts: ModelFacts) -> dict:
    """The facts that differ from ModelFacts' defaults, JSON-ready (sorted by name for stable files)."""
    found: dict[str, Any] = {}
    for field_ in fields(facts):
        value = getattr(facts, field_.name)
        if value == _default(field_) or field_.name in _NOT_STORED:
            continue
        if isinstance(value, LengthConfig):
            value = _length_json(value)
        elif field_.name == "rope_tables":
            value = [{f.name: getattr(t, f.name) for f in fields(t)} for t in value]
        elif field_.name in _OBJECT_FIELDS and is_dataclass(value):
            value = {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
        elif isinstance(value, tuple):
            value = list(value)
        found[field_.name] = value
    return dict(sorted(found.items()))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _object(name: str, value: Any) -> Any:
    """A dataclass fact (_OBJECT_FIELDS) from its JSON object: its fields by name, lists as tuples."""
    kind = _OBJECT_FIELDS[name]
    if not isinstance(value, dict):
        raise VectorError(f"model_facts.{name} must be an object")
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise VectorError(f"model_facts.{name} has an unknown key '{unknown[0]}'")
    try:
        return kind(**{key: tuple(v) if isinstance(v, list) else v for key, v in value.items()})
    except TypeError as exc:  # a required field missing
        raise VectorError(f"model_facts.{name}: {exc}") from None


def _rope(entries: Any, where: str) -> tuple[RopeEntry, ...]:
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise VectorError(f"model_facts.length_config.{where} must be a list of objects")
    try:
        return tuple(RopeEntry(**e) for e in entries)
    except TypeError:
        raise VectorError(f"model_facts.length_config.{where} has an unknown key") from None


def _rope_tables(value: Any) -> tuple[RopeTable, ...]:
    """model_facts.rope_tables: a list of objects of RopeTable's fields (a table the vector's gsg recorded)."""
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise VectorError("model_facts.rope_tables must be a list of objects")
    known = {f.name for f in fields(RopeTable)}
    tables = []
    for table in value:
        unknown = sorted(set(table) - known)
        if unknown:
            raise VectorError(f"model_facts.rope_tables has an unknown key '{unknown[0]}'")
        try:
            tables.append(RopeTable(**table))
        except TypeError:
            raise VectorError("model_facts.rope_tables: a table lacks rope_type, max_position or rotary_dim") from None
        if not all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_ROPE_COUNT
                   for n in (tables[-1].max_position, tables[-1].rotary_dim)):
            raise VectorError(f"model_facts.rope_tables: max_position and rotary_dim must be whole numbers in "
                              f"1..{MAX_ROPE_COUNT:,}")
    return tuple(tables)


def _length(value: Any) -> LengthConfig:
    if not isinstance(value, dict):
        raise VectorError("model_facts.length_config must be an object")
    known = {f.name for f in fields(LengthConfig)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise VectorError(f"model_facts.length_config has an unknown key '{unknown[0]}'")
    keys = value.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, list) and len(k) == 2 for k in keys):
        raise VectorError("model_facts.length_config.keys must be a list of [name, value] pairs")
    return LengthConfig(**{**value, "keys": tuple((str(k), v) for k, v in keys),
                           "rope_scaling": _rope(value.get("rope_scaling", []), "rope_scaling"),
                           "rope_parameters": _rope(value.get("rope_parameters", []), "rope_parameters")})


def facts_from_json(data: Any) -> ModelFacts:
    if not isinstance(data, dict):
        raise VectorError("model_facts must be an object")
    known = {f.name for f in fields(ModelFacts)}
    unknown = sorted(set(data) - known)
    if unknown:  # a fact this gsg does not know would be dropped silently and change the estimate
        raise VectorError(f"model_facts has an unknown key '{unknown[0]}' (a vector from a newer gsg?)")
    values = dict(data)
    for name in _TUPLE_FIELDS & set(values):
        if values[name] is not None:
            values[name] = tuple(values[name])
    if values.get("length_config") is not None:
        values["length_config"] = _length(values["length_config"])
    if "rope_tables" in values:
        values["rope_tables"] = _rope_tables(values["rope_tables"])
    for name in _OBJECT_FIELDS.keys() & set(values):
        if values[name] is not None:
            values[name] = _object(name, values[name])
    try:
        return ModelFacts(**values)
    except TypeError as exc:  # pragma: no cover - every key was checked against the fields above
        raise VectorError(f"model_facts: {exc}") from None


# -- the vector ------------------------------------------------------------------------------------------------

class EstimateInputs(NamedTuple):
    """What verify's rebuild gave the estimate besides the model, arguments, GPU and version: replay gives the
    same, or a vector of a multi-GPU llama.cpp log, an SGLang log with memory other processes held, or a log whose
    sampler line set the deployment's env would replay to another estimate than the one recorded."""

    gpus: int | None  # the GPUs a llama.cpp log split the model over (None: tensor x pipeline parallel size)
    gpu_used_bytes: int  # memory other processes held on each GPU at start
    env: tuple[str, ...]  # KEY=VALUE, the deployment's env the log and --env gave
    quantization: str | None  # --quantization as given


def inputs_json(inputs: EstimateInputs) -> dict:
    return {"gpus": inputs.gpus, "gpu_used_bytes": inputs.gpu_used_bytes, "env": list(inputs.env),
            "quantization": inputs.quantization}


def inputs_from_json(data: Any) -> EstimateInputs:
    """A vector's `estimate_inputs`, each field checked (VectorError names the first one that is not as written);
    a vector recorded before the key existed replays with none."""
    if data is None:
        return EstimateInputs(None, 0, (), None)
    if not isinstance(data, dict) or set(data) - {"gpus", "gpu_used_bytes", "env", "quantization"}:
        raise VectorError("'estimate_inputs' must be an object of gpus, gpu_used_bytes, env and quantization")
    gpus, used = data.get("gpus"), data.get("gpu_used_bytes", 0)
    env, quantization = data.get("env", []), data.get("quantization")
    if gpus is not None and (type(gpus) is not int or not 1 <= gpus <= MAX_INPUT_GPUS):
        raise VectorError(f"estimate_inputs.gpus must be a whole number from 1 to {MAX_INPUT_GPUS} or null")
    if type(used) is not int or not 0 <= used <= MAX_INPUT_BYTES:
        raise VectorError("estimate_inputs.gpu_used_bytes must be a whole number of bytes from 0 to "
                          f"{MAX_INPUT_BYTES:,}")
    if not isinstance(env, list) or len(env) > MAX_INPUT_ENV or \
            not all(isinstance(e, str) and "=" in e and len(e) <= MAX_INPUT_ENV_CHARS for e in env):
        raise VectorError(f"estimate_inputs.env must be a list of at most {MAX_INPUT_ENV} KEY=VALUE strings")
    if quantization is not None and (not isinstance(quantization, str) or len(quantization) > MAX_INPUT_ENV_CHARS):
        raise VectorError("estimate_inputs.quantization must be a string or null")
    return EstimateInputs(gpus, used, tuple(env), quantization)


def build(verify_doc: dict, *, facts: ModelFacts | None, backend: str, gpu_name: str, gpu_memory_bytes: int | None,
          source: str, inputs: EstimateInputs | None = None) -> dict:
    """The vector of one verify report (its JSON document): the inputs of the estimate, what the engine logged,
    and what gsg estimated at the time."""
    version = verify_doc["estimated_version"]
    assumed = bool(version) and version.endswith(ASSUMED)  # the estimate's own default, not the log's
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "source": source,
        "engine": verify_doc["engine"], "engine_version": verify_doc["engine_version"],
        "estimated_version": version[:-len(ASSUMED)] if assumed else version, "estimated_version_assumed": assumed,
        "backend": backend,
        "model": verify_doc["model_resolved_as"] or verify_doc["model"], "model_logged": verify_doc["model"],
        "model_facts_source": verify_doc["model_facts"],
        "model_facts": facts_json(facts) if facts is not None else None,
        "backend_args": verify_doc["backend_args"], "arguments": verify_doc["arguments"],
        "gpu": {"name": gpu_name, "memory_bytes": gpu_memory_bytes},
        "started": verify_doc["started"], "failure": verify_doc["failure"],
        "failure_kind": verify_doc["failure_kind"], "observed_verdict": verify_doc["observed_verdict"],
        "binding_rank": verify_doc["binding_rank"], "observed": verify_doc["observed"],
        "estimated": verify_doc["estimated"], "engine_verdict": verify_doc["engine_verdict"],
        "tolerance_percent": verify_doc["tolerance_percent"], "result": verify_doc["result"],
        "reasons": [r for r in verify_doc["reasons"] if not r.startswith("the log lacks")],
        "estimate_inputs": inputs_json(inputs) if inputs is not None else None,
    }


def dumps(vector: dict) -> str:
    return json.dumps(vector, indent=2, sort_keys=False, ensure_ascii=True) + "\n"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def file_stem(vector: dict) -> str:
    """A readable, portable name from model, engine and version: `Llama-3.1-8B-Instruct-vllm-0.6.4`."""
    model = str(vector.get("model") or "model").rstrip("/").split("/")[-1]
    if model.lower().endswith(".json"):  # a config.json path: its folder names the model
        parts = [p for p in str(vector.get("model")).replace("\\", "/").split("/") if p]
        model = parts[-2] if len(parts) >= 2 else "model"
    version = vector.get("engine_version") or vector.get("estimated_version") or "unversioned"
    raw = f"{model}-{vector.get('engine') or 'engine'}-{version}"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")[:NAME_CHARS].rstrip("-.")
    return stem or "vector"


def file_name(vector: dict, text: str) -> str:
    """The stem and a digest of the vector's whole text: two different vectors never share a name (on a
    case-insensitive file system too: the digest is lower-case hex), and the same vector recorded twice
    gets the same name, so recording again adds nothing."""
    return f"{file_stem(vector)}-{digest(text)}{SUFFIX}"


def check(vector: Any) -> dict:
    """A vector as read from a file, its shape checked; VectorError names the first problem."""
    if not isinstance(vector, dict):
        raise VectorError("not a JSON object")
    if vector.get("format") != FORMAT:
        raise VectorError(f"'format' is not '{FORMAT}'")
    version = vector.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION or version < 1:
        raise VectorError(f"format_version {version!r} is not one this gsg reads (1 to {FORMAT_VERSION})")
    missing = [key for key in REQUIRED if key not in vector]
    if missing:
        raise VectorError(f"lacks '{missing[0]}'")
    if not isinstance(vector["observed"], dict):
        raise VectorError("'observed' must be an object")
    if not isinstance(vector["gpu"], dict):
        raise VectorError("'gpu' must be an object")
    if not isinstance(vector["backend_args"], list) or not all(isinstance(a, str) for a in vector["backend_args"]):
        raise VectorError("'backend_args' must be a list of strings")
    inputs_from_json(vector.get("estimate_inputs"))
    return vector


def kv_capacity(document: Any) -> tuple[int, str] | None:
    """The KV capacity (tokens) the engine really allocated, from a verify JSON document or a recorded vector,
    with what it was read from; None when the document holds none (the engine never reached its KV pool)."""
    if not isinstance(document, dict):
        return None
    observed = document.get("observed")
    if not isinstance(observed, dict):
        return None
    tokens = observed.get(P.KV_TOKENS)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        return None
    what = "recorded vector" if document.get("format") == FORMAT else "verify report"
    return tokens, what
