"""Resolving model facts for a spec (the I/O edge): overrides, local files, catalog, Hugging Face hub.

Precedence: `guard.model` fields > local config.json / GGUF named in guard.model or by local_path >
the on-disk hub cache > the built-in catalog > the hub over the network (skipped with --offline).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import DeploymentSpec

if TYPE_CHECKING:  # httpx costs ~0.15 s to import; only a hub lookup needs it
    import httpx

HF_ENDPOINT = "https://huggingface.co"
_GGUF_TYPE = re.compile(r"(?i)[-_.](i?q\d_[a-z0-9_]+|q\d_\d|f16|bf16|f32)(?=\.gguf$|-\d+-of-\d+\.gguf$)")


def default_cache_dir() -> Path:
    root = os.environ.get("GSG_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME")
                                                           or os.path.expanduser("~/.cache"), "gsg")
    return Path(root)


def gguf_type_from_filename(filename: str) -> str | None:
    match = _GGUF_TYPE.search(filename)
    return match.group(1).lower() if match else None


def read_local_gguf(path: Path) -> ModelFacts:
    from gpustack_guard.core.memory.gguf import facts_from_gguf, parse_header

    with path.open("rb") as handle:
        def read(offset: int, size: int) -> bytes:
            handle.seek(offset)
            return handle.read(size)
        return facts_from_gguf(parse_header(read), f"gguf:{path.name}")


def _config_dir_facts(directory: Path, source: str) -> ModelFacts:
    config = json.loads((directory / "config.json").read_text())
    facts = facts_from_config(config, source)
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        total = json.loads(index.read_text()).get("metadata", {}).get("total_size")
        if total:
            facts = facts.merged({"weight_bytes": int(total)})
    return facts


class FactsResolver:
    def __init__(self, *, offline: bool = False, cache_dir: Path | None = None, hf_token: str | None = None,
                 endpoint: str | None = None, transport: httpx.BaseTransport | None = None, timeout: float = 10.0):
        self.offline = offline
        self.cache_dir = cache_dir or default_cache_dir()
        self._token = hf_token
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or HF_ENDPOINT).rstrip("/")
        self._transport = transport
        self._timeout = timeout
        self._memo: dict[tuple, tuple[ModelFacts | None, str | None]] = {}
        self._disk: dict[tuple[str, str], str | None] = {}  # hub cache files read this run

    # --- public ------------------------------------------------------------------------------------------
    def resolve(self, spec: DeploymentSpec, spec_file: str) -> tuple[ModelFacts | None, str | None]:
        override = spec.guard.model
        local = override.config or override.gguf or spec.source == "local_path"
        key = (spec.source, spec.source_id, spec.huggingface_filename, spec_file if local else None,
               override.to_json() if override.fields_set else None)
        if key not in self._memo:
            self._memo[key] = self._resolve(spec, Path(spec_file).parent)
        return self._memo[key]

    # --- internals -----------------------------------------------------------------------------------------
    def _resolve(self, spec: DeploymentSpec, base: Path) -> tuple[ModelFacts | None, str | None]:
        override = spec.guard.model
        try:
            facts = self._base_facts(spec, base)
        except (OSError, ValueError) as exc:  # GGUFError is a ValueError
            return None, _one_line(exc)
        except Exception as exc:  # a hub lookup's transport failure (httpx is imported only for the hub)
            import httpx

            if isinstance(exc, httpx.HTTPError):
                return None, f"hub lookup failed: {_one_line(exc)}"
            raise
        fields = override.to_dict(exclude={"catalog", "config", "gguf", "quantization"}, exclude_none=True)
        if facts is None and not fields:
            where = spec.source_id or spec.name
            how = "hub lookup is off (--offline)" if self.offline else "the hub did not know it either"
            return None, (f"model '{where}' is not in the built-in catalog, has no local config.json, and {how}")
        facts = (facts or ModelFacts(source="guard.model")).merged(fields)
        if override.quantization:
            q = override.quantization
            facts = facts.merged({"quant_method": q.method, "quant_bits": q.bits, "quant_group_size": q.group_size})
        return facts, None

    def _base_facts(self, spec: DeploymentSpec, base: Path) -> ModelFacts | None:
        override = spec.guard.model
        if override.config:
            path = (base / override.config).resolve()
            return _config_dir_facts(path.parent, f"config:{override.config}") if path.name == "config.json" \
                else facts_from_config(json.loads(path.read_text()), f"config:{override.config}")
        if override.gguf:
            return read_local_gguf((base / override.gguf).resolve())
        if override.catalog:
            facts = catalog_facts(override.catalog)
            if facts is None:
                raise ValueError(f"guard.model.catalog '{override.catalog}' is not in the built-in catalog")
            return self._with_gguf_type(spec, facts)
        if spec.source == "local_path" and spec.local_path:
            local = Path(spec.local_path)
            if local.is_file() and local.suffix == ".gguf":
                return read_local_gguf(local)
            if (local / "config.json").is_file():
                return _config_dir_facts(local, f"local:{local}")
        repo = spec.source_id
        if spec.source == "huggingface" and repo:
            cached = self._cached(repo, "config.json")
            if cached is not None:
                return self._with_gguf_type(spec, self._hub_facts(repo, cached))
        facts = catalog_facts(repo or "") if repo else None
        if facts is None and spec.local_path:
            facts = catalog_facts(Path(spec.local_path).name)
        if facts is not None:
            return self._with_gguf_type(spec, facts)
        if spec.source == "huggingface" and repo and not self.offline:
            if spec.is_gguf and spec.huggingface_filename:
                return self._remote_gguf(repo, spec.huggingface_filename)
            config = self._fetch(repo, "config.json")
            if config is not None:
                return self._with_gguf_type(spec, self._hub_facts(repo, config))
        return None

    def _with_gguf_type(self, spec: DeploymentSpec, facts: ModelFacts) -> ModelFacts:
        filename = spec.huggingface_filename or spec.model_scope_file_path or spec.local_path or ""
        kind = gguf_type_from_filename(filename) if filename.lower().endswith(".gguf") else None
        if kind and not spec.guard.model.quantization:
            return facts.merged({"quant_method": f"gguf:{kind}"})
        return facts

    def _hub_facts(self, repo: str, config_text: str) -> ModelFacts:
        facts = facts_from_config(json.loads(config_text), f"hub:{repo}")
        index = self._cached(repo, "model.safetensors.index.json")
        if index is None and not self.offline:
            index = self._fetch(repo, "model.safetensors.index.json")
        if index:
            total = json.loads(index).get("metadata", {}).get("total_size")
            if total:
                facts = facts.merged({"weight_bytes": int(total)})
        return facts

    def _cache_path(self, repo: str, filename: str) -> Path:
        return self.cache_dir / "hf" / repo.replace("/", "--") / filename

    def _cached(self, repo: str, filename: str) -> str | None:
        key = (repo, filename)
        if key not in self._disk:
            path = self._cache_path(repo, filename)
            self._disk[key] = path.read_text() if path.is_file() else None
        return self._disk[key]

    def _client(self) -> httpx.Client:
        import httpx

        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        return httpx.Client(headers=headers, timeout=self._timeout, transport=self._transport,
                            follow_redirects=True)

    def _fetch(self, repo: str, filename: str) -> str | None:
        url = f"{self.endpoint}/{repo}/resolve/main/{filename}"
        with self._client() as client:
            response = client.get(url)
        if response.status_code == 404:
            return None
        if response.status_code in (401, 403):
            raise ValueError(f"the hub refused {repo}/{filename} (HTTP {response.status_code}: gated or private; "
                             "set HF_TOKEN)")
        response.raise_for_status()
        path = self._cache_path(repo, filename)
        self._disk[(repo, filename)] = response.text
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(response.text)
        tmp.replace(path)  # atomic: a crash never leaves half a cached file
        return response.text

    def _remote_gguf(self, repo: str, filename: str) -> ModelFacts:
        """Read only the GGUF header with HTTP range requests."""
        from gpustack_guard.core.memory.gguf import facts_from_gguf, parse_header

        url = f"{self.endpoint}/{repo}/resolve/main/{filename}"
        with self._client() as client:
            def read(offset: int, size: int) -> bytes:
                response = client.get(url, headers={"Range": f"bytes={offset}-{offset + size - 1}"})
                if response.status_code not in (200, 206):
                    raise ValueError(f"range request for {repo}/{filename} got HTTP {response.status_code}")
                return response.content if response.status_code == 206 else response.content[offset:offset + size]
            return facts_from_gguf(parse_header(read), f"hub-gguf:{repo}/{filename}")


def _one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__



