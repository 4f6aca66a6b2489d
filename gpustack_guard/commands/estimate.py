"""gsg estimate: the memory calculator (and the interface the accuracy benchmark uses)."""

from __future__ import annotations

import enum
import json
import os
import re
from dataclasses import replace
from pathlib import Path

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import out
from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.adapters.model_sources.resolver import read_config, read_local_gguf
from gpustack_guard.core import args as A
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Severity
from gpustack_guard.core.fleet.model import MAX_GPUS_PER_WORKER, Fleet
from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.quant import GGUF_FILE_TYPE_BPW, GGUF_TYPE_BYTES, GPTQ_LIKE, KNOWN_METHODS
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.memory.weights import param_breakdown, weight_layout
from gpustack_guard.core.pipeline import validate
from gpustack_guard.core.rules.memory import MODEL_FACTS
from gpustack_guard.core.spec.check import SpecDoc
from gpustack_guard.core.spec.model import DeploymentSpec
from gpustack_guard.core.units import MAX_DEVICE_BYTES, TiB, gib, parse_size
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verdict import deployment_verdict, version_notes
from gpustack_guard.reporters import TableFormat, json_head

FAMILY = {"vllm": "vllm", "sglang": "sglang", "llama.cpp": "llamacpp", "llamacpp": "llamacpp"}


PATH_PREFIXES = ("./", "../", "/", "~")
PATH_SUFFIXES = (".json", ".gguf")


def looks_like_path(model: str) -> bool:
    """A local path, not a catalog name or repo id: never looked up on the hub when it is missing."""
    return model.startswith(PATH_PREFIXES) or model.lower().endswith(PATH_SUFFIXES)


def _config_facts(path: Path, model: str):
    """A local config.json: a broken or hostile file (a FIFO, a device, 8 MiB, 10,000 levels deep) is one line
    naming it, never an internal error or a hang."""
    try:
        config = read_config(path, str(path))
    except ValueError as exc:  # read_json's reason starts with the path
        raise GsgError(f"not a JSON config: {_reason_after(str(exc), str(path))}", where=str(path)) from None
    try:
        return facts_from_config(config, f"config:{model}")
    except ValueError as exc:  # BadConfig: a value of the wrong type or size
        raise GsgError(f"{MODEL_FACTS.id} {MODEL_FACTS.name}: {exc}", where=str(path)) from None


def _reason_after(message: str, shown: str) -> str:
    """read_json's reason without the path it starts with (the error line names the path already)."""
    for head in (f"{shown}: ", f"{shown} is "):
        if message.startswith(head):
            return message[len(head):]
    return message


def model_facts(model: str, offline: bool):
    """MODEL: a config.json path, a GGUF path, a catalog name or a Hugging Face repo id."""
    path = Path(model).expanduser()
    if path.suffix == ".gguf" and os.path.lexists(path) and not path.is_dir():
        try:
            return read_local_gguf(path)
        except ValueError as exc:  # a bad header, an unknown tensor type, a FIFO: no arithmetic possible
            raise GsgError(f"{MODEL_FACTS.id} {MODEL_FACTS.name}: {exc}", where=model) from None
    if os.path.lexists(path) and not path.is_dir():  # a file, or a FIFO or device that reading refuses
        return _config_facts(path, model)
    if path.is_dir() and os.path.lexists(path / "config.json"):
        return _config_facts(path / "config.json", model)
    if looks_like_path(model):
        raise GsgError("file not found" if not path.is_dir() else "folder has no config.json", where=model)
    facts = catalog_facts(model)
    if facts is not None:
        return facts
    spec = DeploymentSpec(name="estimate", source="huggingface", huggingface_repo_id=model)
    facts, error = wiring.build_resolver(offline).resolve(spec, "estimate")
    if facts is None:
        raise GsgError(f"model '{model}' unknown: {error}")
    return facts


# (bits, weights per scale) a bare `-q NAME` implies: the formats' usual checkpoints
CHECKPOINT_DEFAULTS = {"awq": (4, 128), "gptq": (4, 128), "bitsandbytes": (4, None), "w4a16": (4, 128),
                       "mxfp4": (4, 32), "mxfp4_dense": (4, 32), "nvfp4": (4, 16)}


def with_quantization(facts, quantization: str | None, family: str):
    """`--quantization q4_k_m` (GGUF type) or a checkpoint format (awq, gptq, fp8, int8, bitsandbytes, mxfp4,
    mxfp4_dense, nvfp4, w4a16) for a catalog model. A name that is both (mxfp4, bf16) is a GGUF type only for
    llama.cpp."""
    if not quantization:
        return facts
    kind = quantization.lower()
    gguf = kind in GGUF_FILE_TYPE_BPW or kind in GGUF_TYPE_BYTES
    if gguf and (family == "llamacpp" or kind not in KNOWN_METHODS):
        return replace(facts, quant_method=f"gguf:{kind}", quant_format=None, weight_bytes=None)
    bits, group = CHECKPOINT_DEFAULTS.get(kind, (None, None))
    return replace(facts, quant_method=kind, quant_format=None, quant_bits=bits, quant_group_size=group,
                   weight_bytes=None, quant_zero_point=kind in GPTQ_LIKE or None)


class FailOn(str, enum.Enum):
    """estimate's --fail-on: which verdicts exit 1 (for scripts)."""

    NONE = "none"
    WARNING = "warning"
    ERROR = "error"


@frozen_value(eq=True, repr=True)
class EstimateOptions:
    model: str  # catalog name, Hugging Face repo id, config.json or GGUF path
    gpu_memory: str  # one GPU's memory: a size with a unit
    backend: str = "vLLM"
    backend_args: tuple[str, ...] = ()
    gpus: int | None = None  # default: tensor x pipeline parallel size
    backend_version: str | None = None
    gpu_name: str = ""
    quantization: str | None = None
    platform_footprint: str | None = None
    output: TableFormat = TableFormat.TEXT
    offline: bool = False
    fail_on: FailOn = FailOn.NONE
    env: tuple[str, ...] = ()  # KEY=VALUE pairs of the deployment's env (VLLM_ALLOW_LONG_MAX_MODEL_LEN)
    gpu_used: int = 0  # bytes other processes hold on each GPU at start (gsg verify: what an SGLang log shows)


FORMAT_VERSION = "1.0"  # of the estimate JSON document; minor: additive, major: breaking
BACKEND_NAME = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp"}
WORKER = "estimate"


def size_with_unit(value: str, where: str) -> int:
    """A size flag: a number without a unit is refused (24 would be read as 24 bytes)."""
    text = str(value).strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        raise GsgError(f"'{text}' has no unit: write {text}GiB, {text}GB or {text}MiB", where=where)
    try:
        total = parse_size(text)
    except ValueError as exc:
        raise GsgError(str(exc), where=where) from None
    if total <= 0:
        raise GsgError("must be more than 0 bytes", where=where)
    if total > MAX_DEVICE_BYTES:  # the fleet's bound on one GPU: past it a size is a typo, not a device
        raise GsgError(f"'{text}' is over {MAX_DEVICE_BYTES // TiB} TiB, the most one GPU can have here", where=where)
    return total


class _InMemoryDocument:
    """LocatedData for the synthetic spec: it was never written anywhere, so every path is at line 0."""

    def __init__(self, data: dict):
        self.data, self.start_line = data, 0
        self.duplicate_keys: list[tuple[tuple, int, int]] = []

    def position(self, path, *, key: bool = False) -> tuple[int, int]:
        return 0, 0


class _NoTemplates:
    def render(self, name, context):
        raise AssertionError("the estimate's spec has no guard.template")


def synthetic_fleet(total: int, count: int, gpu_name: str, used: int = 0) -> Fleet:
    """One worker with `count` GPUs; `used`: live usage of other processes on each, foreign to the deployment as
    a fleet snapshot's `used` is in validate."""
    memory = {"total": total, "used": used} if used else {"total": total}
    gpus = [{"index": i, "name": gpu_name, "memory": dict(memory)} for i in range(count)]
    return Fleet.validate({"clusters": [{"name": WORKER, "workers": [{"name": WORKER, "gpus": gpus}]}]})


def synthetic_spec(opts: EstimateOptions, family: str, count: int, env: dict[str, str], total: int,
                   world_size: int = 1) -> dict:
    """The deployment document validate would see for these numbers, on `count` GPUs of one worker."""
    # local_path only carries the model's name (and a .gguf suffix) here: the facts come from model_facts(), so
    # a hub id or a relative folder is written as an absolute path, the form the spec check asks of local_path
    local = opts.model if opts.model.startswith("/") else "/" + opts.model
    doc: dict = {"name": "estimate", "cluster_name": WORKER, "source": "local_path", "local_path": local,
                 "backend": BACKEND_NAME[family], "backend_parameters": list(opts.backend_args),
                 "gpu_selector": {"gpu_ids": [f"{WORKER}:cuda:{i}" for i in range(count)]}}
    if world_size == 1:
        # --gpus is one replica's count: stated, so GPUStack's default for manual gpu_ids without a parallel
        # size (the largest power of two, three GPUs run on two) does not drop a device
        doc["gpu_selector"]["gpus_per_replica"] = count
    if opts.backend_version:
        doc["backend_version"] = opts.backend_version
    if env:
        doc["env"] = env
    if opts.platform_footprint:
        doc["guard"] = {"policy": {"platform_footprint": footprint_bytes(opts.platform_footprint)}}
    return doc


def footprint_bytes(value: str) -> int:
    return size_with_unit(value, "--platform-footprint")


def parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise GsgError(f"'{pair}' is not KEY=VALUE", where="--env")
        env[key] = value
    return env


@frozen_value(eq=True, repr=True)
class Evaluation:
    """One deployment estimated through validate's pipeline: what `gsg estimate` prints and `gsg verify` compares."""

    facts: ModelFacts
    estimate: Estimate
    verdict: str
    severity: Severity | None
    findings: list


def evaluate(opts: EstimateOptions, facts: ModelFacts | None = None) -> Evaluation:
    """The estimate for these options; `facts` when the caller already has the model's (gsg verify)."""
    family = FAMILY.get(opts.backend.lower())
    if family is None:
        raise GsgError(f"--backend must be vLLM, SGLang or llama.cpp, not '{opts.backend}'")
    total = size_with_unit(opts.gpu_memory, "--gpu-memory")
    if opts.platform_footprint:
        footprint_bytes(opts.platform_footprint)
    try:
        flags = A.as_dict(A.parse(list(opts.backend_args), family, opts.backend_version), family)
    except A.ArgError as exc:
        raise GsgError(str(exc), where="backend arguments") from None
    env = parse_env(opts.env)
    if facts is None:
        facts = model_facts(opts.model, opts.offline)
    facts = with_quantization(facts, opts.quantization, family)
    tp, pp = A.parallel_size(flags, family)
    if tp * pp > MAX_GPUS_PER_WORKER:  # one synthetic worker holds them all: bounded as --gpus is
        raise GsgError(f"tensor x pipeline parallel size is {tp:,} x {pp:,} = {tp * pp:,} GPUs, over the "
                       f"{MAX_GPUS_PER_WORKER:,} one worker can hold", where="backend arguments")
    count = tp * pp if opts.gpus is None else opts.gpus

    # validate's own pipeline on a one-spec, one-worker fleet: the same rules, no second arithmetic
    doc = SpecDoc("estimate", 0, _InMemoryDocument(synthetic_spec(opts, family, count, env, total, tp * pp)))
    report = validate([doc], [], _NoTemplates(), lambda spec, file: (facts, None),
                      synthetic_fleet(total, count, opts.gpu_name, opts.gpu_used), {})
    est = report.evaluations[0].estimate if report.evaluations else None
    # --gpus that the parallel flags contradict (GSG022) is estimated on the flags' count: said, not passed over
    mismatch = opts.gpus is not None and any(f.rule_id == "GSG022" and f.severity is Severity.ERROR
                                             for f in report.findings)
    if est is None or mismatch:
        blocking = next((f for f in report.findings if f.severity is Severity.ERROR
                         and (f.rule_id == "GSG022" or not mismatch)), None)
        if blocking is not None:
            hint = " (--gpus is GPUs per replica)" if blocking.rule_id == "GSG022" else ""
            raise GsgError(f"{blocking.rule_id} {blocking.rule.name}: {blocking.message}{hint}")
        # a value the engine may take but gsg cannot size (a KV dtype's layout not read): the warning says why
        unsized = next((f for f in report.findings if f.rule_id == "GSG016"), None)
        raise GsgError(f"no estimate for backend '{opts.backend}'"
                       + (f": {unsized.message}" if unsized is not None else ""))
    verdict, severity, findings = deployment_verdict(report.findings, est)  # advise's too
    noted = version_notes(report.findings, bool(opts.backend_version))
    return Evaluation(facts, replace(est, notes=est.notes + noted) if noted else est, verdict, severity, findings)


def run(opts: EstimateOptions) -> int:
    evaluation = evaluate(opts)
    facts, est, verdict, severity, findings = (evaluation.facts, evaluation.estimate, evaluation.verdict,
                                               evaluation.severity, evaluation.findings)
    if opts.output is TableFormat.JSON:
        out(json.dumps({**json_head(FORMAT_VERSION), "model": opts.model, "model_facts": facts.source,
                        **model_summary(facts), **est.as_json(), "engine_verdict": est.verdict,
                        "verdict": verdict, "verdict_severity": severity.value if severity else None,
                        "findings": [finding_json(f) for f in findings]}, indent=2) + "\n")
    else:
        out(text_table(opts.model, facts.source, est, verdict, findings))
    failing = {FailOn.NONE: None, FailOn.WARNING: 1, FailOn.ERROR: 2}[opts.fail_on]
    if failing is not None and severity is not None and severity.rank >= failing:
        return EXIT_FAIL
    return EXIT_OK


def finding_json(f) -> dict:
    return {"rule": f.rule_id, "name": f.rule.name, "severity": f.severity.value, "message": f.message,
            "fix": f.fix}


def model_summary(facts) -> dict:
    try:
        params = param_breakdown(facts).total
    except ValueError:
        params = None
    return {"parameters": params, "weight_bytes": weight_layout(facts).total}


BUDGET_NAME_WIDTH = len("compute_buffer_bytes_per_gpu")  # the longest term name


def text_table(model: str, source: str, est, verdict: str, findings: list) -> str:
    rows = [("GPU memory", gib(est.gpu_total)), ("requested by the engine", gib(est.requested)),
            ("weights", gib(est.weights)), ("activation peak", gib(est.activation)),
            ("non-torch / platform", gib(est.non_torch)), ("CUDA graphs", gib(est.cuda_graphs)),
            ("KV cache", gib(est.kv_cache)),
            *([("recurrent state", gib(est.extra["recurrent_state"]["bytes_per_gpu"]))]
              if est.extra.get("recurrent_state") else []),
            *([("mamba state pool", gib(est.extra["mamba_pool"]["bytes"]))] if est.extra.get("mamba_pool") else []),
            ("headroom (outside the budget)", gib(est.headroom)),
            ("headroom needed", gib(est.headroom_needed))]
    numbers = [*([("weights / KV cache dtype", f"{est.dtype} / {est.kv_cache_dtype}")] if est.dtype else []),
               ("KV bytes / token / GPU", f"{est.kv_bytes_per_token:,}"),
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
    lines += ["", "budget, term by term (rule, source):"]
    terms = budget_terms(est)
    name_width = max([BUDGET_NAME_WIDTH, *(len(term.term) for term in terms)])
    for term in terms:  # the rows of --output json's "budget", under the same names
        shown = f"{term.value:,} tokens" if term.unit == "tokens" else gib(term.value)
        lines.append(f"  {term.term:<{name_width}}  {shown:>14}  {term.rule}; {term.source}")
    lines += ["", f"verdict: {verdict}"]
    lines += [f"{f.severity.value} {f.rule_id} {f.rule.name}: {f.message}" + (f"\n    fix: {f.fix}" if f.fix else "")
              for f in findings]
    lines += [f"note: {n}" for n in est.notes]
    return "\n".join(lines) + "\n"
