"""gsg estimate: the memory calculator (and the interface the accuracy benchmark uses)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic_core import ValidationError

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import out
from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.adapters.model_sources.resolver import read_local_gguf
from gpustack_guard.core import args as A
from gpustack_guard.core.errors import EXIT_OK, GsgError
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.quant import GGUF_FILE_TYPE_BPW, GGUF_TYPE_BYTES
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout
from gpustack_guard.core.spec.model import DeploymentSpec, Policy
from gpustack_guard.core.units import gib, parse_size
from gpustack_guard.reporters import TableFormat

FAMILY = {"vllm": "vllm", "sglang": "sglang", "llama.cpp": "llamacpp", "llamacpp": "llamacpp"}


def model_facts(model: str, offline: bool):
    """MODEL: a config.json path, a GGUF path, a catalog name or a Hugging Face repo id."""
    path = Path(model)
    if path.is_file() and path.suffix == ".gguf":
        return read_local_gguf(path)
    if path.is_file():
        try:
            return facts_from_config(json.loads(path.read_text()), f"config:{model}")
        except json.JSONDecodeError as exc:
            raise GsgError(f"not a JSON config: {exc.msg}", where=f"{model}:{exc.lineno}") from None
    if path.is_dir() and (path / "config.json").is_file():
        return facts_from_config(json.loads((path / "config.json").read_text()), f"config:{model}")
    facts = catalog_facts(model)
    if facts is not None:
        return facts
    spec = DeploymentSpec(name="estimate", source="huggingface", huggingface_repo_id=model)
    facts, error = wiring.build_resolver(offline).resolve(spec, "estimate")
    if facts is None:
        raise GsgError(f"model '{model}' unknown: {error}")
    return facts


def with_quantization(facts, quantization: str | None, family: str):
    """`--quantization q4_k_m` (GGUF type) or awq/gptq/fp8/int8/bitsandbytes for a catalog model."""
    if not quantization:
        return facts
    kind = quantization.lower()
    if kind in GGUF_FILE_TYPE_BPW or kind in GGUF_TYPE_BYTES:
        return replace(facts, quant_method=f"gguf:{kind}", weight_bytes=None)
    bits = 4 if kind in ("awq", "gptq", "bitsandbytes") else None
    return replace(facts, quant_method=kind, quant_bits=bits, weight_bytes=None)


@dataclass(frozen=True)
class EstimateOptions:
    model: str  # catalog name, Hugging Face repo id, config.json or GGUF path
    gpu_memory: str  # one GPU's memory: bytes or a size with a unit
    backend: str = "vLLM"
    backend_args: tuple[str, ...] = ()
    gpus: int | None = None  # default: tensor x pipeline parallel size
    backend_version: str | None = None
    gpu_name: str = ""
    quantization: str | None = None
    platform_footprint: str | None = None
    output: TableFormat = TableFormat.TEXT
    offline: bool = False


def run(opts: EstimateOptions) -> int:
    model, gpu_memory, gpus, backend_version = opts.model, opts.gpu_memory, opts.gpus, opts.backend_version
    backend_args, offline, gpu_name, platform_footprint = list(opts.backend_args), opts.offline, opts.gpu_name, \
        opts.platform_footprint
    family = FAMILY.get(opts.backend.lower())
    if family is None:
        raise GsgError(f"--backend must be vLLM, SGLang or llama.cpp, not '{opts.backend}'")
    try:
        total = parse_size(gpu_memory)
    except ValueError as exc:
        raise GsgError(str(exc), where="--gpu-memory") from None
    if total <= 0:
        raise GsgError("must be more than 0 bytes", where="--gpu-memory")
    try:
        flags = A.as_dict(A.parse(backend_args, family))
    except A.ArgError as exc:
        raise GsgError(str(exc), where="backend arguments") from None
    facts = with_quantization(model_facts(model, offline), opts.quantization, family)
    count = gpus
    if count is None:
        tp, pp = A.parallel_size(flags, family)
        count = tp * pp
    try:
        policy = Policy(platform_footprint=platform_footprint)
    except ValidationError:
        raise GsgError(f"'{platform_footprint}' is not a size", where="--platform-footprint") from None
    try:
        est = engine.estimate(family, facts, [(total, gpu_name)] * count, flags, backend_version, policy)
    except ValueError as exc:
        raise GsgError(str(exc)) from None
    if opts.output is TableFormat.JSON:
        out(json.dumps({"model": model, "model_facts": facts.source, **model_summary(facts), **est.as_json()},
                       indent=2) + "\n")
    else:
        out(text_table(model, facts.source, est))
    return EXIT_OK


def model_summary(facts) -> dict:
    try:
        params = param_breakdown(facts).total
    except ValueError:
        params = None
    return {"parameters": params, "weight_bytes": weight_layout(facts).total}


def text_table(model: str, source: str, est) -> str:
    rows = [("GPU memory", gib(est.gpu_total)), ("requested by the engine", gib(est.requested)),
            ("weights", gib(est.weights)), ("activation peak", gib(est.activation)),
            ("non-torch / platform", gib(est.non_torch)), ("CUDA graphs", gib(est.cuda_graphs)),
            ("KV cache", gib(est.kv_cache)), ("headroom (outside the budget)", gib(est.headroom)),
            ("headroom needed", gib(est.headroom_needed))]
    numbers = [("KV bytes / token / GPU", f"{est.kv_bytes_per_token:,}"),
               ("KV capacity", f"{est.kv_capacity_tokens:,} tokens"),
               *([("KV for one max-length request", gib(est.kv_needed))] if est.kv_needed else []),
               ("max model length", f"{est.max_model_len:,}"),
               ("estimated max model length", f"{est.estimated_max_model_len:,}"),
               ("max sequences", f"{est.max_num_seqs:,}"),
               ("max concurrency at max length", f"{est.max_concurrency:.2f}x")]
    width = max(len(k) for k, _ in rows + numbers)
    lines = [f"{model} on {est.gpus} GPU(s), {est.engine} {est.version} (facts: {source}), per GPU, worst rank:"]
    lines += [f"  {k:<{width}}  {v:>12}" for k, v in rows]
    lines.append("")
    lines += [f"  {k:<{width}}  {v:>12}" for k, v in numbers]
    lines += ["", f"verdict: {est.verdict}"] + [f"note: {n}" for n in est.notes]
    return "\n".join(lines) + "\n"
