"""Resolving model facts for a spec (the I/O edge): overrides, local files, catalog, Hugging Face hub.

Precedence: `guard.model` fields > local config.json / GGUF named in guard.model or by local_path >
the standard hub cache (checked against the hub once per run for `main`, see hub.py) > the built-in catalog >
the hub over the network (skipped with --offline / HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpustack_guard.adapters.files.regular_file import (
    MAX_CONFIG_BYTES,
    MAX_INDEX_BYTES,
    Unreadable,
    open_regular,
    parse_json,
    read_json,
)
from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.adapters.model_sources.hub import HubFiles
from gpustack_guard.adapters.model_sources.hub_cache import HubCache
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import DeploymentSpec

if TYPE_CHECKING:  # httpx costs ~0.15 s to import; only a hub lookup needs it
    import httpx

HF_ENDPOINT = "https://huggingface.co"
CONFIG = "config.json"
INDEX = "model.safetensors.index.json"
@functools.cache  # compiled for the first GGUF file name (~3.2 M instructions: case-insensitive), not by every run
def _gguf_type() -> re.Pattern[str]:
    return re.compile(r"(?i)[-_.](i?q\d_[a-z0-9_]+|q\d_\d|f16|bf16|f32)(?=\.gguf$|-\d+-of-\d+\.gguf$)")


def gguf_type_from_filename(filename: str) -> str | None:
    match = _gguf_type().search(filename)
    return match.group(1).lower() if match else None


def read_local_gguf(path: Path) -> ModelFacts:
    from gpustack_guard.core.memory.gguf import facts_from_gguf, parse_header

    try:
        handle = open_regular(path)  # a FIFO or /dev/zero named .gguf: refused before a byte is read
    except Unreadable as exc:
        raise ValueError(f"{path.name}: {exc}") from None
    with handle:
        def read(offset: int, size: int) -> bytes:
            handle.seek(offset)
            return handle.read(size)
        return facts_from_gguf(parse_header(read), f"gguf:{path.name}")


def read_config(path: Path, shown: str) -> Any:
    """A config.json (or a config named otherwise): a regular file within MAX_CONFIG_BYTES (facts_from_config
    checks that it is an object)."""
    return read_json(path, MAX_CONFIG_BYTES, shown)


def _config_dir_facts(directory: Path, source: str) -> ModelFacts:
    facts = facts_from_config(read_config(directory / "config.json", f"{source}"), source)
    index = directory / INDEX
    if os.path.lexists(index):  # there but a FIFO, a folder or a broken link is said, not skipped
        data = read_json(index, MAX_INDEX_BYTES, index.name)
        if not isinstance(data, dict):
            raise ValueError(f"{index.name} must be a JSON object, not {type(data).__name__}")
        metadata = data.get("metadata")
        total = metadata.get("total_size") if isinstance(metadata, dict) else None
        if total is not None:
            if isinstance(total, bool) or not isinstance(total, int) or total < 1:
                raise ValueError(f"{index.name}: metadata.total_size must be a byte count, not {str(total)[:40]!r}")
            facts = facts.merged({"weight_bytes": total})
    return facts


_NOT_FACTS = frozenset({"catalog", "config", "gguf", "quantization"})  # guard.model keys that say where, not what


class FactsResolver:
    def __init__(self, *, offline: bool = False, hub_cache: HubCache | None = None, hf_token: str | None = None,
                 endpoint: str | None = None, transport: httpx.BaseTransport | None = None, timeout: float = 10.0):
        self.offline = offline
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or HF_ENDPOINT).rstrip("/")
        self.hub = HubFiles(hub_cache or HubCache.from_environ(), endpoint=self.endpoint, token=hf_token,
                            offline=offline, transport=transport, timeout=timeout)
        self._memo: dict[tuple, tuple[ModelFacts | None, str | None]] = {}

    # --- public ------------------------------------------------------------------------------------------
    def resolve(self, spec: DeploymentSpec, spec_file: str) -> tuple[ModelFacts | None, str | None]:
        override = spec.guard.model
        local = override.config or override.gguf or spec.source == "local_path"
        # The override record itself (hashable, equal by value): its to_json() would load pydantic-core's Python
        # package for the serializer (core/record_engine.py), ~11 % of a 1,000-spec run.
        key = (spec.source, spec.source_id, spec.huggingface_filename, spec_file if local else None,
               override if override.fields_set else None)
        if key not in self._memo:
            self._memo[key] = self._resolve(spec, Path(spec_file).parent)
        return self._memo[key]

    # --- internals -----------------------------------------------------------------------------------------
    def _resolve(self, spec: DeploymentSpec, base: Path) -> tuple[ModelFacts | None, str | None]:
        override = spec.guard.model
        try:
            facts = self._base_facts(spec, base)
        except (OSError, ValueError) as exc:  # GGUFError and HubError are ValueErrors
            return None, _one_line(exc)
        # The fields it sets, as to_dict(exclude=..., exclude_none=True) gives them: every one left is a plain
        # value (quantization, the one record, is merged below). Read off the record, not serialised: the
        # serializer's first call imports uuid, platform and pydantic-core's Python package (core/record_engine.py)
        fields = {name: value for name, value in override.__dict__.items()
                  if value is not None and name not in _NOT_FACTS} if override.fields_set else {}
        if facts is None and not fields:
            return None, self._unknown(spec)
        facts = (facts or ModelFacts(source="guard.model")).merged(fields)
        if override.quantization:
            q = override.quantization
            facts = facts.merged({"quant_method": q.method, "quant_bits": q.bits, "quant_group_size": q.group_size})
            # a stated method may not be the checkpoint config's: which loader the engine picks is unknown
            facts = replace(facts, quant_format=None)
        return facts, None

    def _base_facts(self, spec: DeploymentSpec, base: Path) -> ModelFacts | None:
        override = spec.guard.model
        if override.config:
            path = (base / override.config).resolve()
            source = f"config:{override.config}"
            return _config_dir_facts(path.parent, source) if path.name == "config.json" \
                else facts_from_config(read_config(path, source), source)
        if override.gguf:
            return read_local_gguf(base / override.gguf)  # not resolved: errors name the file the spec names
        if override.catalog:
            facts = catalog_facts(override.catalog)
            if facts is None:
                raise ValueError(f"guard.model.catalog '{override.catalog}' is not in the built-in catalog")
            return self._with_gguf_type(spec, facts)
        if spec.source == "local_path" and spec.local_path:
            local = Path(spec.local_path)
            if local.is_file() and local.suffix == ".gguf":
                return read_local_gguf(local)
            if os.path.lexists(local / "config.json"):
                return _config_dir_facts(local, f"local:{local}")
        repo = spec.source_id
        hub_repo = repo if spec.source == "huggingface" and repo else None  # None: not a Hugging Face model
        if hub_repo and self.hub.cached(hub_repo, _hub_file(spec)):
            return self._from_hub(spec, hub_repo)
        facts = catalog_facts(repo or "") if repo else None
        if facts is None and spec.local_path:
            facts = catalog_facts(Path(spec.local_path).name)
        if facts is not None:
            return self._with_gguf_type(spec, facts)
        if hub_repo and not self.offline:
            return self._from_hub(spec, hub_repo)
        return None

    def _from_hub(self, spec: DeploymentSpec, repo: str) -> ModelFacts | None:
        """Facts from the hub's files: the cache's copy, checked once per run for `main`, else fetched."""
        filename = _hub_file(spec)
        if filename == CONFIG:
            config = self.hub.text(repo, CONFIG)
            return None if config is None else self._with_gguf_type(spec, self._hub_facts(repo, config))
        _, entry = self.hub.locate(repo, filename)
        if isinstance(entry, Path):  # the whole GGUF is in the cache (`huggingface-cli download`)
            return read_local_gguf(entry)
        if self.offline:
            raise ValueError(f"offline: {self.hub.offline_miss(repo, filename)}")
        if entry is not None:
            raise ValueError(f"hub has no {repo}/{filename} at revision 'main' (HTTP 404)")
        return self._remote_gguf(repo, filename)

    def _unknown(self, spec: DeploymentSpec) -> str:
        where = spec.source_id or spec.name
        head = f"model '{where}' is not in the built-in catalog, has no local config.json, and"
        if spec.source != "huggingface" or not spec.source_id:
            return f"{head} hub lookup is off (--offline)" if self.offline else f"{head} the hub did not know it either"
        if self.offline:
            return f"{head} hub lookup is off (--offline): {self.hub.offline_miss(where, _hub_file(spec))}"
        return f"{head} the hub has no {where}/{CONFIG} at revision 'main' (HTTP 404)"

    def _with_gguf_type(self, spec: DeploymentSpec, facts: ModelFacts) -> ModelFacts:
        filename = spec.huggingface_filename or spec.model_scope_file_path or spec.local_path or ""
        kind = gguf_type_from_filename(filename) if filename.lower().endswith(".gguf") else None
        if kind and not spec.guard.model.quantization:
            return facts.merged({"quant_method": f"gguf:{kind}"})
        return facts

    def _hub_facts(self, repo: str, config_text: str) -> ModelFacts:
        facts = facts_from_config(_hub_json(repo, CONFIG, config_text), f"hub:{repo}")
        index = self.hub.text(repo, INDEX) if not self.offline or self.hub.cached(repo, INDEX) else None
        if index:
            total = _hub_json(repo, INDEX, index).get("metadata", {}).get("total_size")
            if total:
                facts = facts.merged({"weight_bytes": int(total)})
        return facts

    def _remote_gguf(self, repo: str, filename: str) -> ModelFacts:
        """Read only the GGUF header with HTTP range requests."""
        from gpustack_guard.core.memory.gguf import facts_from_gguf, parse_header

        return facts_from_gguf(parse_header(self.hub.range_reader(repo, filename)), f"hub-gguf:{repo}/{filename}")


def _hub_file(spec: DeploymentSpec) -> str:
    """The file a hub repo's facts come from: the GGUF the spec names, else config.json."""
    return spec.huggingface_filename if spec.is_gguf and spec.huggingface_filename else CONFIG


def _hub_json(repo: str, filename: str, text: str) -> dict:
    document = parse_json(text, f"hub file {repo}/{filename}")
    if not isinstance(document, dict):
        raise ValueError(f"hub file {repo}/{filename} is not a JSON object")
    return document


def _one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__



