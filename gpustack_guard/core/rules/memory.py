"""Memory rules (GSG030-GSG045 but GSG035 and GSG041, and GSG053-GSG054): each reads the estimation stage's result for
one spec, prints the breakdown and names the flag to change."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from gpustack_guard.core import args as A
from gpustack_guard.core import echo
from gpustack_guard.core import findings as F
from gpustack_guard.core.engine_knobs import KNOBS
from gpustack_guard.core.findings import Finding, Rule, Severity, finding
from gpustack_guard.core.memory import demand
from gpustack_guard.core.memory import estimate as verdict
from gpustack_guard.core.memory import quant_support as QS
from gpustack_guard.core.memory.estimate import Estimate, NoEstimate
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS
from gpustack_guard.core.rules import per_spec
from gpustack_guard.core.units import gib
from gpustack_guard.core.versions import parse_version

if TYPE_CHECKING:
    from gpustack_guard.core.stages.results import Evaluation, Results

LEN_FLAG = {"vllm": "--max-model-len", "sglang": "--context-length", "llamacpp": "--ctx-size"}
MAX_DEMANDS_KEPT = 1024  # GSG033 demands and messages kept, one per distinct (estimate, workload) set of values
FRACTION_FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static"}


def flag_location(ev: Evaluation, flag: str) -> F.Location:
    """Point at the spec's own argument when it has one, else at what produced the arguments."""
    r = ev.rendered
    key = flag.lstrip("-")
    try:
        spec_args = A.parse(r.spec.backend_parameters, r.family, r.spec.backend_version)
    except A.ArgError:
        spec_args = []
    for arg in reversed(spec_args):
        if arg.key == key:
            return r.doc.at("backend_parameters", arg.index)
    if r.spec.guard.template:
        return r.doc.at("guard", "template")
    if r.spec.backend_parameters is not None:
        return r.doc.at("backend_parameters")
    return r.doc.at("name")


def _breakdown(est: Estimate) -> str:
    if est.engine == "llama.cpp":
        x = est.extra
        return (f"{x['offload_layers']}/{x['total_layers']} layers: weights {gib(est.weights)} + KV "
                f"{gib(est.kv_cache)} (ctx {x['ctx_size']}) + compute {gib(est.activation)} + output "
                f"{gib(x['output_buffer'])} + platform {gib(est.non_torch)} = {gib(est.requested)} "
                f"of {gib(est.gpu_total)}")
    if est.engine == "SGLang":  # the fraction is of the memory free after start-up: nothing else to subtract
        x = est.extra
        held = f" and {gib(x['foreign_bytes'])} already in use" if x.get("foreign_bytes") else ""
        return (f"mem_fraction_static {x['mem_fraction_static']:g} x {gib(x['free_before_weights'])} free after "
                f"{gib(est.non_torch)} of start-up{held} = {gib(est.requested)} − weights {gib(est.weights)} = KV "
                f"{gib(est.kv_available)} per GPU")
    parts = [f"requested {gib(est.requested)}", f"weights {gib(est.weights)}"]
    if est.activation:
        parts.append(f"activation {gib(est.activation)}")
    parts.append(f"non-torch {gib(est.non_torch)}")
    if est.extra.get("cuda_graphs_in_budget") and est.cuda_graphs:
        parts.append(f"CUDA graphs {gib(est.cuda_graphs)}")
    return " − ".join(parts) + f" = KV {gib(est.kv_available)} per GPU"


def fp8_hint(r) -> str:
    """The engine's own 8-bit KV flag (SGLang refuses `fp8`), unless the spec stores its KV in fp8 already."""
    current = (r.flags.get("kv-cache-dtype") or "auto").lower()
    knobs = KNOBS.get(r.family)
    if knobs is None or current.startswith("fp8"):
        return ""
    return f", or halve the KV cache with {knobs.compact_kv_args()}"


def policy_severity(policy, level: str) -> Severity:
    if policy.strict:
        return Severity.ERROR
    return Severity(level)


_FACTS_FIX = {
    NoEstimate.NO_FACTS: "set guard.model.catalog, guard.model.config, or the architecture fields in guard.model",
    NoEstimate.WEIGHTS_UNKNOWN: "set guard.model.weight_bytes (checkpoint size) and the missing fields",
}


@per_spec
def _model_facts(ev: Evaluation) -> Iterator[Finding]:
    failure = ev.failure
    if failure is not None and failure.reason in (NoEstimate.NO_FACTS, NoEstimate.WEIGHTS_UNKNOWN,
                                                  NoEstimate.UNSUPPORTED_MODEL):
        yield finding(MODEL_FACTS, failure.location, failure.message, spec=ev.rendered.name,
                      fix=_FACTS_FIX.get(failure.reason))


MODEL_FACTS = Rule(
    "GSG030", "model-facts", "The model's architecture or weight size is unknown: no arithmetic possible.",
    what="A model whose architecture (layers, heads, hidden size) or weight bytes gsg cannot learn from the "
         "catalog, a config.json, the hub or guard.model; or an architecture the engine has no memory model for.",
    why="Without them nothing about the deployment's memory can be checked, and an unchecked spec must not pass "
        "as if it fitted.",
    example="name: mystery\nsource: huggingface\nhuggingface_repo_id: acme/secret-model-13b   # offline, no catalog "
            "entry",
    fix="Set guard.model.catalog, guard.model.config, or the architecture fields and weight_bytes in guard.model.",
    check=_model_facts)


@per_spec
def _no_kv_memory(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family == "llamacpp" or est.verdict not in (verdict.NO_KV_MEMORY, verdict.DOES_NOT_FIT):
        return
    yield finding(NO_KV_MEMORY, flag_location(ev, FRACTION_FLAG[r.family]),
                  f"no memory left for the KV cache: {_breakdown(est)}", spec=r.name,
                  fix=f"raise {FRACTION_FLAG[r.family]}, add GPUs (tensor parallel) or use a smaller / "
                      "quantised model", **est.as_json())


NO_KV_MEMORY = Rule(
    "GSG031", "no-kv-memory", "Nothing is left for the KV cache after weights, activations and overheads.",
    what="A vLLM/SGLang deployment whose requested memory (gmu x total, or the static fraction) minus weights, "
         "activation peak, non-torch memory and CUDA graphs leaves no KV cache on the worst rank.",
    why="The engine fails at startup (no blocks for the cache), after GPUStack has already booked the GPU.",
    example="huggingface_repo_id: meta-llama/Llama-3.3-70B-Instruct   # 131 GiB of bf16 weights\n"
            "gpu_selector: {gpu_ids: [gpu-b:cuda:0]}               # one 48 GB card\n"
            "backend_parameters: [--gpu-memory-utilization=0.9]",
    fix="Raise --gpu-memory-utilization, add GPUs (tensor parallel), or use a smaller or quantised model.",
    check=_no_kv_memory)


@per_spec
def _kv_below_max_len(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family == "llamacpp":
        return
    len_flag = LEN_FLAG[r.family]
    unset = len_flag.lstrip("-") not in r.flags
    length = f"{est.max_model_len:,}" + (" (unset: the model's native length)" if unset else "")
    if r.family == "sglang":
        yield from _sglang_pool_below_context(ev, est, len_flag, length)
        return
    if est.verdict != verdict.KV_BELOW_MAX_LEN:
        return
    yield finding(KV_BELOW_MAX_LEN, flag_location(ev, len_flag),
                  f"one sequence of {length} tokens needs {gib(est.kv_needed)} "
                  f"of KV cache but only {gib(max(est.kv_available, 0))} is available "
                  f"({_breakdown(est)}); the engine will refuse to start. Estimated maximum model length: "
                  f"{est.estimated_max_model_len:,}", spec=r.name,
                  fix=f"set {len_flag} {est.estimated_max_model_len} or lower" + fp8_hint(r),
                  **est.as_json())


def _sglang_pool_below_context(ev: Evaluation, est: Estimate, len_flag: str, length: str) -> Iterator[Finding]:
    """SGLang starts with a pool shorter than its context and refuses the longer inputs: a warning."""
    if est.verdict != verdict.FITS or not est.max_model_len or est.kv_capacity_tokens >= est.max_model_len:
        return
    yield finding(KV_BELOW_MAX_LEN, flag_location(ev, len_flag),
                  f"the KV pool holds {est.kv_capacity_tokens:,} tokens, fewer than a context of {length}: SGLang "
                  f"starts, but refuses every input over {est.extra['max_input_len']:,} tokens ('exceeds the maximum "
                  f"allowed length') ({_breakdown(est)})", spec=ev.rendered.name, severity=Severity.WARNING,
                  fix=f"set {len_flag} {est.kv_capacity_tokens} or lower, or raise --mem-fraction-static"
                      + fp8_hint(ev.rendered), **est.as_json())


KV_BELOW_MAX_LEN = Rule(
    "GSG032", "kv-below-max-model-len",
    "The KV cache cannot hold one sequence of max_model_len: vLLM refuses to start, SGLang refuses long inputs.",
    what="A KV cache that is too small for a single sequence of the maximum model length (unset: the model's "
         "native length, vLLM's default), or an SGLang pool shorter than --context-length.",
    why="vLLM checks this at startup and exits: the KV cache must hold at least one request of max_model_len. "
        "SGLang starts, caps a request at the pool's length and refuses longer inputs, so the advertised context "
        "fails at request time (a warning).",
    example="huggingface_repo_id: meta-llama/Llama-3.3-70B-Instruct\n"
            "backend_parameters:\n  - --tensor-parallel-size=4   # --max-model-len unset: 131,072",
    fix="Set --max-model-len to the estimated maximum or lower, or halve the KV cache with --kv-cache-dtype fp8.",
    check=_kv_below_max_len)


@per_spec
def _kv_oversubscription(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    policy = r.spec.guard.policy
    if est is None or est.verdict != verdict.FITS or r.family == "llamacpp" or policy.kv_oversubscription == "off":
        return
    workload, seqs = r.spec.guard.workload, est.max_num_seqs
    declared = demand.declared(workload)
    capacity = est.kv_capacity_tokens if declared else \
        demand.full_length_capacity(est.kv_capacity_tokens, est.max_concurrency, est.max_model_len)
    if not declared and _classic_fits(seqs, est.max_model_len, capacity):
        return
    oversubscribed = _oversubscribed(r.family, workload, seqs, est.max_model_len, capacity, est.kv_capacity_tokens,
                                     est.kv_cache, est.max_concurrency)
    if oversubscribed is None:
        return
    fit, message = oversubscribed
    flag = KNOBS[r.family].max_running
    yield finding(KV_OVERSUBSCRIBED, flag_location(ev, flag), message, spec=r.name,
                  severity=policy_severity(policy, policy.kv_oversubscription),
                  fix=f"set {flag} {max(fit, 1)} or lower {LEN_FLAG[r.family]}" + fp8_hint(r),
                  sequences_fitting=fit, **est.as_json())


# Kept per value of everything the demand and its message are made of: specs with the same inputs share one estimate
# and workload, and 10,000 specs gave 2,250 findings of two messages (~12 us each to build; docs/performance.md,
# fourteenth round). test_kv_oversubscription_memo.py changes each key part alone.
@lru_cache(maxsize=MAX_DEMANDS_KEPT, typed=True)
def _oversubscribed(family: str, workload, seqs: int, max_model_len: int, capacity: int, kv_capacity_tokens: int,
                    kv_cache: int, max_concurrency: float) -> tuple[int, str] | None:
    """(sequences that fit, the message) when the declared demand exceeds the KV capacity, else None."""
    streams, basis = demand.streams_of(workload, max_model_len)
    needed = demand.peak_kv_tokens(streams, seqs)
    if not needed or needed <= capacity:
        return None
    fit = demand.seats_fitting(streams, capacity, seqs)
    flag = KNOBS[family].max_running
    asked = f"{seqs} x {streams[0].tokens:,} tokens ({basis})" if streams[0].in_flight is None else f"{seqs} ({basis})"
    return fit, (f"{flag} {asked} = {needed:,} tokens, but the KV pool "
                 f"holds {kv_capacity_tokens:,} tokens ({gib(kv_cache)} per GPU): {fit} such sequences "
                 f"fit at once (max concurrency {max_concurrency:.2f}x at {max_model_len:,}); the rest "
                 "queue or get preempted")


def _classic_fits(seqs: int, max_model_len: int, capacity: int) -> bool:
    """No workload declared: demand.peak_kv_tokens of the one max_model_len stream (seats x its length, 0 without
    a seat) fits, decided before the stream and its message are built (10,000 specs: 7,750 fit, ~3 us each;
    docs/performance.md ninth round). A test compares it with the long way."""
    needed = seqs * max_model_len if seqs > 0 else 0
    return not needed or needed <= capacity


KV_OVERSUBSCRIBED = Rule(
    "GSG033", "kv-oversubscribed",
    "max_num_seqs x tokens per sequence exceeds the KV capacity: requests queue or get preempted.",
    Severity.WARNING,
    what="More concurrent sequences (--max-num-seqs / --max-running-requests) times the tokens of one sequence "
         "(guard.workload's p99 prompt + output, else max_model_len) than the KV pool holds. A pool several "
         "workloads share (guard.workload.mix) is priced as its declared peak, the longest requests first.",
    why="The engine starts, but under full load it queues or preempts requests: latency and throughput are far "
        "from what the concurrency setting promises.",
    example="backend_parameters: [--max-model-len=32768, --max-num-seqs=64]\n"
            "guard:\n  workload: {prompt_tokens_p99: 16000, max_output_tokens: 4000}",
    fix="Lower --max-num-seqs to the number that fits, lower --max-model-len, or use --kv-cache-dtype fp8. "
        "guard.policy.kv_oversubscription sets the severity (off | warning | error; guard.policy.strict: error).",
    check=_kv_oversubscription)


@per_spec
def _headroom(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    policy = r.spec.guard.policy
    if est is None or r.family == "llamacpp" or policy.headroom == "off" or est.headroom >= est.headroom_needed:
        return
    x = est.extra
    if r.family == "vllm":
        pieces = [f"CUDA context {gib(x['cuda_context'])}"]
        if x["comm_buffers"]:
            pieces.append(f"NCCL/all-reduce {gib(x['comm_buffers'])}")
        if not x["cuda_graphs_in_budget"] and est.cuda_graphs:
            pieces.append(f"CUDA graphs {gib(est.cuda_graphs)} (captured after the KV cache in vLLM {est.version})")
        pieces.append(f"allocator slack {gib(est.headroom_needed - sum_known(x, est))}")
        needed = " + ".join(pieces)
        fraction = est.extra["gpu_memory_utilization"]
        held = 0
    else:
        needed = f"activations and CUDA graphs (SGLang's own reserve heuristic) {gib(est.headroom_needed)}"
        fraction = est.extra["mem_fraction_static"]
        held = est.extra.get("foreign_bytes", 0)  # other processes' memory: outside the budget, not free
    best = max(0.0, 1 - (est.headroom_needed + held) / est.gpu_total)
    others = f" (beside {gib(held)} other processes hold)" if held else ""
    flag = FRACTION_FLAG[r.family]
    yield finding(HEADROOM, flag_location(ev, flag),
                  f"{flag} {fraction} leaves {gib(est.headroom)} of {gib(est.gpu_total)} outside the engine's "
                  f"budget{others}, but {gib(est.headroom_needed)} is needed there: {needed}; expect an OOM at graph "
                  "capture or under load", spec=r.name, severity=policy_severity(policy, policy.headroom),
                  fix=f"set {flag} {int(best * 100) / 100:.2f} or lower"
                      + (", or --enforce-eager" if r.family == "vllm" else ""), **est.as_json())


def sum_known(x: dict, est: Estimate) -> int:
    graphs = 0 if x["cuda_graphs_in_budget"] else est.cuda_graphs
    return x["cuda_context"] + x["comm_buffers"] + graphs


HEADROOM = Rule(
    "GSG034", "headroom",
    "The memory left after gpu_memory_utilization cannot hold CUDA graphs, sampler warm-up and CUDA/NCCL context.",
    Severity.WARNING,
    what="A --gpu-memory-utilization (SGLang: --mem-fraction-static) so high that the rest of the GPU cannot hold "
         "what the engine allocates outside its budget: CUDA context, NCCL buffers, CUDA graphs captured after "
         "the KV cache, sampler warm-up.",
    why="The engine passes its startup check, then OOMs at CUDA-graph capture or under the first full batch.",
    example="backend_parameters:\n  - --tensor-parallel-size=4\n  - --gpu-memory-utilization=0.92",
    fix="Lower the fraction to the value the message gives, or pass --enforce-eager (vLLM). guard.policy.headroom "
        "sets the severity (off | warning | error; guard.policy.strict: error).",
    check=_headroom)


@per_spec
def _llamacpp_offload(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family != "llamacpp":
        return
    x = est.extra
    fitted = x.get("fit") or {}
    if fitted.get("action") in ("context", "offload"):
        # the arguments do not fit, but llama.cpp's --fit changes them before loading: say to what
        if fitted["action"] == "context":
            flag, outcome = "--ctx-size", f"a context of {fitted['ctx_size']:,} cells"
            started = (x.get("context") or {}).get("from")
            if started:  # the unset context it shortens: the build's default, often the model's trained length
                outcome += f" (not the {started:,} it takes without --ctx-size)"
        else:
            flag, outcome = "--gpu-layers", (f"{fitted['gpu_layers']} of {x['total_layers']} layers on the GPU at "
                                             f"{fitted['ctx_size']:,} cells")
        yield finding(OFFLOAD_OVER_GPU, flag_location(ev, flag),
                      f"the arguments do not fit: llama.cpp {est.version} --fit starts it with {outcome} instead "
                      f"(leaving --fit-target free); then {_breakdown(est)}", spec=r.name,
                      severity=Severity.WARNING, fix=f"set {flag} to what you want served, or --fit off to refuse "
                                                     "a smaller deployment", **est.as_json())
        return
    if est.verdict != verdict.DOES_NOT_FIT:
        return
    context = x.get("context") or {}
    if context.get("source") == "engine-default":
        # no -c: the context is the build's default (the model's trained one on recent builds); say which and how
        # long a context the GPU holds, the one flag that fixes it
        longest = est.estimated_max_model_len
        fix = (f"set --ctx-size {longest} (the longest context that fits) or less" if longest
               else f"lower --gpu-layers (now {x['offload_layers']}) and set --ctx-size")
        yield finding(OFFLOAD_OVER_GPU, flag_location(ev, "--ctx-size"),
                      f"{context['why']}, whose KV cache needs {gib(est.kv_cache)}: llama.cpp needs more than the "
                      f"GPU holds: {_breakdown(est)}", spec=r.name, fix=fix, **est.as_json())
        return
    yield finding(OFFLOAD_OVER_GPU, flag_location(ev, "--gpu-layers"),
                  f"llama.cpp needs more than the GPU holds: {_breakdown(est)}", spec=r.name,
                  fix=f"lower --gpu-layers (now {x['offload_layers']}), --ctx-size or --parallel, "
                      "or enable --flash-attn", **est.as_json())


OFFLOAD_OVER_GPU = Rule(
    "GSG036", "llamacpp-offload", "llama.cpp offloaded layers, KV cache and compute buffers exceed the GPU.",
    what="A llama.cpp deployment whose offloaded layers (--gpu-layers), their KV cache for --ctx-size, the compute "
         "buffer and the platform footprint add up to more than the GPU.",
    why="llama.cpp fails to allocate its buffers while loading the model and the instance does not start.",
    example="huggingface_filename: Llama-3.3-70B-Instruct-Q4_K_M.gguf   # 40 GiB of weights\n"
            "gpu_selector: {gpu_ids: [gpu-d:cuda:0]}                   # a 24 GB card\n"
            "backend: llama.cpp\nbackend_parameters: [--gpu-layers=80, --ctx-size=8192]",
    fix="Lower --gpu-layers, --ctx-size or --parallel, or enable --flash-attn. From llama.cpp b7474 --fit (on by "
        "default) shortens an unset --ctx-size or offloads fewer layers when --gpu-layers is unset: gsg then warns "
        "with the context or layer count it starts with; set them yourself, or --fit off, to decide.",
    check=_llamacpp_offload)


def _tp_heads(results: Results) -> Iterator[Finding]:
    if results.fleet is None:  # the memory rules need a fleet, as the engine arithmetic does
        return
    for ev in results.evaluations:
        r = ev.rendered
        if r.facts is None or r.family not in ("vllm", "sglang") or not r.facts.num_attention_heads:
            continue
        tp, _ = A.parallel_size(ev.flags, r.family)  # the worker's injected size when the spec sets none
        heads, kv = r.facts.num_attention_heads, r.facts.kv_heads
        flag = "--tensor-parallel-size" if r.family == "vllm" else "--tp-size"
        # where only for a finding: looking positions up for every spec cost ~40 ms at 10,000 specs
        if heads % tp:
            yield finding(TP_HEADS, _tp_location(ev, flag),
                          f"total number of attention heads ({heads}) must be divisible by tensor parallel size "
                          f"({tp})", spec=r.name, fix=f"set {flag} to a divisor of {heads}")
        elif not r.facts.is_mla and kv and ((kv >= tp and kv % tp) or (kv < tp and tp % kv)):
            yield finding(TP_HEADS, _tp_location(ev, flag),
                          f"KV heads ({kv}) and tensor parallel size ({tp}) must divide one another",
                          spec=r.name, fix=f"set {flag} to a divisor or multiple of {kv}")


def _tp_location(ev: Evaluation, flag: str) -> F.Location:
    r = ev.rendered
    return flag_location(ev, flag) if flag.lstrip("-") in r.flags else r.doc.at("gpu_selector", "gpu_ids")


TP_HEADS = Rule(
    "GSG037", "tp-heads", "The tensor-parallel size does not divide the attention heads / KV heads.",
    what="A tensor-parallel size that does not divide the model's attention heads, or KV heads and TP size of "
         "which neither divides the other (MLA models aside).",
    why="vLLM and SGLang refuse to start: each rank must hold whole heads.",
    example="huggingface_repo_id: Qwen/Qwen2.5-7B-Instruct   # 28 attention heads\n"
            "backend_parameters: [--tensor-parallel-size=3]",
    fix="Set the tensor-parallel size to a divisor of the head count (and a divisor or multiple of the KV heads).",
    check=_tp_heads)


@per_spec
def _max_len_unset(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family not in ("vllm", "sglang") or LEN_FLAG[r.family].lstrip("-") in r.flags \
            or est.verdict == verdict.KV_BELOW_MAX_LEN:
        return
    extra = (" GPUStack's worker injects --max-model-len 8192 for vLLM when the native length is larger."
             if r.family == "vllm" else "")
    yield finding(MAX_LEN_UNSET, flag_location(ev, LEN_FLAG[r.family]),
                  f"{LEN_FLAG[r.family]} is not pinned; gsg evaluated {est.max_model_len:,} tokens.{extra}",
                  spec=r.name, fix=f"pin {LEN_FLAG[r.family]}")


MAX_LEN_UNSET = Rule(
    "GSG038", "max-model-len-unset",
    "--max-model-len is not pinned, so the served length depends on engine and GPUStack defaults.", Severity.INFO,
    what="A vLLM/SGLang deployment without --max-model-len / --context-length (reported unless GSG032 already "
         "says the default does not fit).",
    why="The served length then follows the engine's default (the model's native length) or GPUStack's injected "
        "8192, and changes when either changes.",
    example="backend: vLLM\nbackend_parameters: [--gpu-memory-utilization=0.9]",
    fix="Pin --max-model-len (SGLang: --context-length).",
    check=_max_len_unset)


MAX_SPELLINGS_KEPT = 256  # distinct backend_version texts whose runner spelling is kept (a fleet has a few)
_UNPINNED_WORDS = ("latest", "main", "nightly", "dev", "master", "head", "stable")


@per_spec
def _version_unset(ev: Evaluation) -> Iterator[Finding]:
    r = ev.rendered
    if ev.estimate is None or r.family not in ("vllm", "sglang"):
        return
    version = r.spec.backend_version
    if not version or not version.strip():
        yield finding(VERSION_UNSET, r.doc.at("backend_version" if version is not None else "name"),
                      f"backend_version is not pinned; gsg assumed {DEFAULT_VERSIONS[r.family]} for "
                      "version-dependent arithmetic (CUDA-graph accounting, defaults)", spec=r.name,
                      fix="pin backend_version")
    elif parse_version(version) is None:
        word = version.strip().lower()
        kind = "a moving tag" if word in _UNPINNED_WORDS else "not a version gsg can read"
        yield finding(VERSION_UNSET, r.doc.at("backend_version"),
                      f"backend_version '{version}' is not a pinned version ({kind}); gsg assumed "
                      f"{DEFAULT_VERSIONS[r.family]}, as for no version, for version-dependent arithmetic (CUDA-graph "
                      "accounting, defaults), and GPUStack runs whatever it resolves to at deploy time", spec=r.name,
                      fix="pin backend_version to a release, e.g. " + DEFAULT_VERSIONS[r.family])
    elif (spelled := _runner_spelling(version)) != version:
        yield finding(VERSION_UNSET, r.doc.at("backend_version"),
                      f"backend_version '{echo.value(version)}' is not spelled as GPUStack's runners name releases "
                      f"('{spelled}'): GPUStack looks the version up exactly, so it finds no built-in image unless "
                      f"the backend's settings define '{echo.value(version)}'; gsg read it as {spelled}",
                      spec=r.name, severity=Severity.WARNING, fix=f"write backend_version: '{spelled}'")


# Kept per version text (the answer depends on nothing else), as parse_version's are: packaging's str(Version) is
# ~4 us and every vLLM/SGLang spec asks (10,000 specs: _version_unset ~19 -> ~6 ms, docs/performance.md).
@lru_cache(maxsize=MAX_SPELLINGS_KEPT, typed=True)
def _runner_spelling(version: str) -> str:
    """How gpustack-runner names a release (runner.py.json's service_version: '0.11.0', '0.5.4.post3'): packaging's
    normal form without a local part; 'v0.11.0', '0.11.0+cu128' and ' 0.11.0' are looked up as written and match
    none."""
    parsed = parse_version(version)
    return version if parsed is None else str(parsed).split("+", 1)[0]


VERSION_UNSET = Rule(
    "GSG039", "backend-version-unset",
    "backend_version is not pinned; gsg assumed a version for version-dependent arithmetic.", Severity.INFO,
    what="A vLLM/SGLang deployment without backend_version, with an empty one, or with one that names no release "
         "(`latest`, `main`, `nightly`, `dev`, a branch): the note says which version gsg's arithmetic assumed. "
         "A release spelled otherwise than gpustack-runner names it (`v0.11.0`, `0.11.0+cu128`, ' 0.11.0') is a "
         "warning: GPUStack looks the version up exactly and finds no built-in image for it.",
    why="Defaults and CUDA-graph accounting change between engine versions; gsg's arithmetic used its assumed "
        "version, GPUStack will pick whatever it ships.",
    example="backend: vLLM\nbackend_version: latest",
    fix="Pin backend_version to a release as GPUStack's runners spell it (`0.11.0`, `0.5.5`).",
    check=_version_unset)


@per_spec
def _max_len_above_native(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    native = r.facts.max_position_embeddings if r.facts else None
    if est is None or not native or r.family != "vllm" or est.max_model_len <= native:
        return
    refused = est.extra.get("max_model_len_refused")
    if refused:  # vLLM's own verification fails: the engine will not start
        yield finding(MAX_LEN_ABOVE_NATIVE, flag_location(ev, "--max-model-len"),
                      f"--max-model-len {est.max_model_len:,} exceeds the {native:,} tokens vLLM derives for this "
                      f"model and version; vLLM refuses to start: {refused}", spec=r.name,
                      severity=Severity.ERROR, fix=f"set --max-model-len {native} or lower")
        return
    yield finding(MAX_LEN_ABOVE_NATIVE, flag_location(ev, "--max-model-len"),
                  f"--max-model-len {est.max_model_len:,} exceeds the model's native {native:,} tokens; vLLM "
                  "allows it only because VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and quality degrades past the native "
                  "length", spec=r.name, fix=f"set --max-model-len {native} or lower")


MAX_LEN_ABOVE_NATIVE = Rule(
    "GSG040", "max-model-len-above-native", "--max-model-len exceeds the model's native context length.",
    Severity.WARNING,
    what="A vLLM --max-model-len above the length vLLM derives for the model and engine version (config keys, "
         "rope scaling by type and version, sliding-window caps: core/memory/max_len.py). An error when vLLM's own "
         "verification refuses it; a warning when the spec's env sets VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
    why="vLLM refuses to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and beyond the native length quality "
        "degrades without RoPE scaling.",
    example="huggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct   # native 32,768\n"
            "backend_parameters: [--max-model-len=65536]",
    fix="Set --max-model-len to the native length or lower (or configure RoPE scaling deliberately).",
    check=_max_len_above_native)

@per_spec
def _scheduler_limits(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family != "vllm":
        return
    refusal = est.extra.get("scheduler_refusal")
    if refusal:
        flag = "--max-num-batched-tokens" if "max-num-batched-tokens" in r.flags else "--max-num-seqs"
        yield finding(SCHEDULER_LIMITS, flag_location(ev, flag), refusal, spec=r.name,
                      fix="raise --max-num-batched-tokens (or lower --max-num-seqs / --max-model-len), or keep "
                          "chunked prefill on")
    align = est.extra.get("align_block_refusal")
    if align:  # prefix caching of a Gated DeltaNet model: the raised block must fit one step
        flag = "--enable-prefix-caching" if "enable-prefix-caching" in r.flags and \
            "max-num-batched-tokens" not in r.flags else "--max-num-batched-tokens"
        yield finding(SCHEDULER_LIMITS, flag_location(ev, flag), f"vLLM {est.version} refuses to start: {align}",
                      spec=r.name, fix=f"set --max-num-batched-tokens {est.block_size} or more, or turn prefix "
                                       "caching off (--no-enable-prefix-caching)")


SCHEDULER_LIMITS = Rule(
    "GSG042", "scheduler-limits",
    "vLLM refuses the batching limits: fewer batched tokens than sequences, or than max_model_len unchunked.",
    what="A vLLM deployment whose --max-num-batched-tokens (given, or vLLM's default for its release and GPU) is "
         "below --max-num-seqs, or below --max-model-len with chunked prefill off. Before 0.10.1 the default 256 "
         "or 1024 sequences were not capped by a small given --max-num-batched-tokens. Also a Gated DeltaNet "
         "model (Qwen3-Next, Qwen3.5/3.6) with prefix caching on vLLM 0.17.0-0.26.x whose attention block, raised "
         "to hold a state page, exceeds --max-num-batched-tokens (mamba cache mode 'align').",
    why="vLLM's scheduler configuration raises ValueError at start-up: the deployment never serves.",
    example="backend_version: 0.10.0\n"
            "backend_parameters: [--max-num-batched-tokens=128]   # default max_num_seqs 256",
    fix="Raise --max-num-batched-tokens to at least --max-num-seqs (and --max-model-len without chunked prefill).",
    check=_scheduler_limits)


@per_spec
def _sampler_warmup_oom(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family != "vllm" or est.verdict != verdict.SAMPLER_WARMUP_OOM:
        return
    x = est.extra
    fix, free = x["sampler_warmup_fix"], max(x["sampler_warmup_free_bytes"], 0)
    yield finding(SAMPLER_WARMUP_OOM, flag_location(ev, FRACTION_FLAG[r.family]),
                  f"after the KV cache ({gib(est.kv_cache)}) is allocated, {gib(free)} of {gib(est.gpu_total)} "
                  f"is free, but vLLM {est.version} warms its sampler up with "
                  f"{x['sampler_warmup_rows']} dummy requests ({x['sampler_kernel']} top-k/top-p) needing "
                  f"{gib(x['sampler_warmup_bytes'])}: the engine dies at start-up with CUDA out of memory",
                  spec=r.name, fix=_warmup_fix_text(fix), **est.as_json())


def _warmup_fix_text(fix: dict) -> str:
    """Only the flags with a value that starts the engine: a fraction or a sequence count of 0 is no fix."""
    fraction, seqs = fix.get("gpu_memory_utilization", 0), fix.get("max_num_seqs", 0)
    options = ([f"set --gpu-memory-utilization {fraction:.2f} or lower"] if fraction > 0 else []) + \
        ([f"--max-num-seqs {seqs} or lower"] if seqs > 0 else [])
    return ", or ".join(options) if options else "the sampler warm-up does not fit at any --max-num-seqs on this " \
        "GPU: use a GPU with more memory or a smaller model"


SAMPLER_WARMUP_OOM = Rule(
    "GSG043", "sampler-warmup-oom",
    "vLLM's sampler warm-up after the KV cache needs more memory than is left: the engine dies at start-up.",
    what="A vLLM V1 deployment whose KV cache fits its budget, but whose sampler warm-up (max_num_seqs dummy "
         "requests sampled with top-k/top-p after the KV cache and CUDA graphs are allocated) needs more than the "
         "activation memory the profile released plus the headroom the outside terms leave. Where the profile "
         "ran the same pass (0.8-0.28, 0.33+) that only happens when the outside terms overflow, which is "
         "GSG034's finding; the V2 runner of 0.29-0.32 profiles the sampler without top-k/top-p, so its warm-up "
         "can need more than was ever budgeted.",
    why="vLLM raises 'CUDA out of memory occurred when warming up sampler' after loading the weights and "
        "allocating the cache: the deployment never serves.",
    example="huggingface_repo_id: Qwen/Qwen3-8B\nbackend_version: 0.29.0\n"
            "backend_parameters: [--max-model-len=8192, --max-num-seqs=1024, --max-num-batched-tokens=2048,\n"
            "                     --gpu-memory-utilization=0.97]   # one RTX A6000",
    fix="Lower --gpu-memory-utilization or --max-num-seqs to the values the message gives.",
    check=_sampler_warmup_oom)


@per_spec
def _state_blocks_below_seqs(ev: Evaluation) -> Iterator[Finding]:
    est, r = ev.estimate, ev.rendered
    if est is None or r.family != "vllm" or est.verdict != verdict.STATE_BLOCKS_BELOW_SEQS:
        return
    blocks = est.extra["state_blocks"]
    yield finding(STATE_BLOCKS_BELOW_SEQS, flag_location(ev, "max-num-seqs"),
                  f"the KV pool ({gib(est.kv_cache)}) holds {blocks} state blocks of this hybrid model, but "
                  f"max_num_seqs is {est.max_num_seqs}: with {est.extra['cuda_graph_mode']} CUDA graphs every decode "
                  f"sequence needs one, and vLLM {est.version} refuses to start ('max_num_seqs ({est.max_num_seqs}) "
                  f"exceeds available Mamba cache blocks ({blocks})')",
                  spec=r.name, fix=(f"set --max-num-seqs {blocks} or lower, " if blocks > 0 else "") +
                  "raise --gpu-memory-utilization, or run without FULL CUDA graphs (--enforce-eager)",
                  **est.as_json())


STATE_BLOCKS_BELOW_SEQS = Rule(
    "GSG056", "mamba-blocks-below-max-num-seqs",
    "A vLLM hybrid model's KV pool holds fewer state blocks than --max-num-seqs: the engine refuses to start.",
    what="A vLLM 0.20+ deployment of a model with state layers (Gated DeltaNet: Qwen3-Next, Qwen3.5/3.6; Mamba-2: "
         "Nemotron-H, Granite-4.0-H, Bamba) under a CUDA graph mode with FULL graphs (the default "
         "FULL_AND_PIECEWISE, FULL_DECODE_ONLY, FULL), whose KV pool "
         "holds fewer blocks than --max-num-seqs (given, or the release's default for the GPU: 1,024 on an H100). "
         "The blocks are the pool's bytes over one block of every layer group, each page the attention page a "
         "state is padded to (config/compilation.py resolve_cudagraph_mode_and_sizes). 0.18-0.19 cut the capture "
         "sizes to the blocks instead and start.",
    why="vLLM sizes the KV cache, then raises 'ValueError: max_num_seqs (N) exceeds available Mamba cache blocks "
        "(M)' before capturing the graphs: the deployment never serves, and the default max_num_seqs is enough "
        "to hit it on one GPU.",
    example="huggingface_repo_id: Qwen/Qwen3.6-27B\nbackend_version: 0.28.0\n"
            "backend_parameters: [--max-model-len=32768]   # one H100 80GB: 339 blocks, 1,024 sequences",
    fix="Set --max-num-seqs to the block count the message gives or lower, raise --gpu-memory-utilization, or run "
        "without FULL CUDA graphs (--enforce-eager, or --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}').",
    check=_state_blocks_below_seqs)


# Held against what a running engine logged at start-up: emitted by `gsg verify SPECS` (core/verify/live.py),
# which reads each instance's log from the server, so no check runs on the stage results.
LIVE_VERIFY = "the live verify (core/verify/live.py, `gsg verify SPECS`)"

OBSERVED_KV_BELOW_WORKLOAD = Rule(
    "GSG044", "observed-kv-below-workload",
    "A running instance's engine logged less KV cache than the spec's workload needs at its concurrency.",
    Severity.WARNING,
    what="A running vLLM/SGLang instance whose start-up log gives a KV capacity (tokens) below what the "
         "sequences the engine admits (--max-num-seqs / --max-running-requests, as it logged them) need at "
         "guard.workload's p99 prompt + output (a guard.workload.mix at its declared peak, longest first), else "
         "at max_model_len: GSG033's arithmetic on the pool the engine really allocated.",
    why="The estimate admitted the deployment, but the engine's own figure is what serves: under full load "
        "requests queue or get preempted on this instance, whatever the arithmetic said.",
    example="gsg verify specs/ --server https://gpustack.example   # a spec with\n"
            "backend_parameters: [--max-model-len=32768, --max-num-seqs=64]\n"
            "guard:\n  workload: {prompt_tokens_p99: 16000, max_output_tokens: 4000}",
    fix="Lower --max-num-seqs to the number the logged pool holds, lower --max-model-len, or use "
        "--kv-cache-dtype fp8. guard.policy.kv_oversubscription sets the severity (off | warning | error).",
    emitted_by=LIVE_VERIFY)

OBSERVED_KV_OFF_ESTIMATE = Rule(
    "GSG045", "observed-kv-off-estimate",
    "A running instance's logged KV capacity differs from gsg's estimate by more than the tolerance.",
    Severity.WARNING,
    what="A running instance whose engine logged a KV capacity (tokens) more than --tolerance percent (default "
         "5) away from the spec's estimate rebuilt on that instance's worker and GPUs.",
    why="Every memory rule reads the estimate: when the engine disagrees, headroom and admission are judged on "
        "numbers that are not the deployment's. A pool smaller than estimated is the dangerous side.",
    example="gsg verify specs/ --server https://gpustack.example --tolerance 5",
    fix="Compare term by term with `gsg verify --log` on the instance's log; set backend_version, guard.model "
        "or the GPU the estimate should use, or report the log to gsg as an accuracy case.",
    emitted_by=LIVE_VERIFY)

@per_spec
def _quant_unloadable(ev: Evaluation) -> Iterator[Finding]:
    r = ev.rendered
    version = r.spec.backend_version
    found = QS.loader_verdict(r.family, r.facts, version)
    if found is None or found.loads:
        return
    engine, row = QS.ENGINE_NAMES[r.family], found.rows[0]
    where = r.doc.at("backend_version" if version is not None else "name")
    if found.loads is False:
        yield finding(QUANT_UNLOADABLE, where,
                      f"{engine} {version} cannot load {found.weights} weights: {engine} loads them "
                      f"{QS.releases_text(row)} ({row.source}); the deployment fails at start-up", spec=r.name,
                      fix=QS.first_fix(row) + ", or serve a checkpoint this release loads")
        return
    said = "is not pinned" if not version or not version.strip() else f"'{echo.value(version)}' names no release"
    yield finding(QUANT_UNLOADABLE, where,
                  f"backend_version {said}: whether the engine loads {found.weights} weights depends on the "
                  f"release GPUStack runs; {engine} loads them {QS.releases_text(row)} ({row.source})",
                  spec=r.name, severity=Severity.INFO, fix=QS.first_fix(row))


QUANT_UNLOADABLE = Rule(
    "GSG053", "quantization-unloadable",
    "The engine release cannot load the checkpoint's weights format: the deployment fails at start-up.",
    what="A vLLM/SGLang deployment whose backend_version predates (or follows the removal of) the loader of the "
         "checkpoint's quantisation format: the release ranges per format are read from each engine's "
         "quantization registry at its tags (profiles.QUANT_LOADERS: e.g. vLLM loads gpt-oss's mxfp4 from "
         "0.10.1, compressed-tensors MXFP4 from 0.14.0, ModelOpt NVFP4 from 0.8.0, GGUF before 0.24.0, "
         "bitsandbytes before 0.28.0; SGLang mxfp4 from 0.5.0rc0, ModelOpt NVFP4 from 0.4.6). The format is the "
         "checkpoint config's quant_method, or every loader of the method when guard.model.quantization or "
         "--quantization states it. A note (info) when backend_version is unset or names no release and the "
         "format is not loaded by every release read.",
    why="gsg sizes the weights at any release, so the estimate says the deployment fits; the engine raises at "
        "start-up ('Unknown quantization method', 'No compressed-tensors compatible scheme was found') and never "
        "serves.",
    example="huggingface_repo_id: openai/gpt-oss-20b   # mxfp4 weights\nbackend: vLLM\nbackend_version: 0.10.0",
    fix="Set backend_version to a release that loads the format (the message names the range), or serve a "
        "checkpoint in a format the pinned release loads.",
    check=_quant_unloadable)

def _chosen_gpu_names(ev: Evaluation) -> list[str]:
    """The distinct GPU names the placement chose, first-seen order (every replica's)."""
    placement = ev.placement
    if placement is None:
        return []
    return list(dict.fromkeys(ref.gpu.name for gpus in placement.replicas for ref in gpus))


@per_spec
def _quant_gpu_unsupported(ev: Evaluation) -> Iterator[Finding]:
    r = ev.rendered
    if r.facts is None or not r.facts.quant_method or r.family not in QS.ENGINE_NAMES:
        return
    version = r.spec.backend_version
    loader = QS.loader_verdict(r.family, r.facts, version)
    if loader is not None and loader.loads is False:  # GSG053 says it: no loader at all, whatever the GPU
        return
    engine = QS.ENGINE_NAMES[r.family]
    where = r.doc.at("gpu_selector") if r.spec.gpu_selector is not None else r.doc.at("name")
    for name in _chosen_gpu_names(ev):
        short = QS.capability_shortfall(r.family, r.facts, version, name)
        if short is None:
            continue
        row, minimum = short.row, QS.capability_text(short.row.capability)
        gpu = f"{echo.value(name)} (compute capability {QS.capability_text(short.capability)})"
        if parse_version(version) is None:  # refused at every release read, whichever GPUStack runs
            said = f"{engine} refuses {short.weights} weights on {gpu} at every release read: {row.config} needs " \
                   f"compute capability {minimum} or more"
        else:
            said = f"{engine} {version} refuses {short.weights} weights on {gpu}: {row.config} needs compute " \
                   f"capability {minimum}"
        fix = f"place it on GPUs of compute capability {minimum} or newer"
        if short.admitted_from is not None:
            fix += (f", or set backend_version to {short.admitted_from.since} or later (minimum "
                    f"{QS.capability_text(short.admitted_from.capability)})")
        yield finding(QUANT_GPU_UNSUPPORTED, where,
                      f"{said} ({row.source}); the deployment fails at start-up", spec=r.name,
                      fix=fix + f", or serve a checkpoint in a format {echo.value(name)} runs")


QUANT_GPU_UNSUPPORTED = Rule(
    "GSG054", "quantization-gpu-unsupported",
    "The engine refuses the checkpoint's weights format on the chosen GPU: the deployment fails at start-up.",
    what="A vLLM/SGLang deployment placed on a GPU whose compute capability (known from its name) is below the "
         "minimum the engine's quantization config asks of the checkpoint's format at the pinned release "
         "(profiles.QUANT_MIN_CAPABILITY, each config's get_min_capability() read at the engine's tags: e.g. vLLM "
         "fp8 8.0 before 0.14.0 and 7.5 from it, ModelOpt FP8 8.9 before 0.27.0, ModelOpt NVFP4 10.0 before "
         "0.9.0, mxfp4 8.0, AWQ 7.5, bitsandbytes and compressed-tensors 7.0; SGLang ModelOpt FP8 8.9, ModelOpt "
         "NVFP4 10.0 before 0.5.13). One finding per GPU model the placement chose; none for a GPU name gsg does "
         "not know. With backend_version unset or unreadable, only a GPU every release read refuses. A separate "
         "rule from GSG053 because the fix is another GPU (or checkpoint), not another release; the message names "
         "a later release when one lowers the minimum below the GPU.",
    why="gsg sizes the weights whatever the GPU, so the estimate says the deployment fits; the engine raises "
        "before loading ('The quantization method X is not supported for the current GPU. Minimum capability: N. "
        "Current capability: M.') and never serves, after GPUStack has booked the GPU.",
    example="huggingface_repo_id: nvidia/Llama-3.1-8B-Instruct-FP8   # ModelOpt FP8\n"
            "gpu_selector: {gpu_ids: [gpu-b:cuda:0]}                 # an RTX A6000, compute capability 8.6\n"
            "backend: vLLM\nbackend_version: 0.11.0",
    fix="Place the deployment on GPUs of the capability the message names (gpu_selector), set backend_version to "
        "the later release it names where one exists, or serve a checkpoint in a format the GPU runs.",
    check=_quant_gpu_unsupported)

RULES = (MODEL_FACTS, NO_KV_MEMORY, KV_BELOW_MAX_LEN, KV_OVERSUBSCRIBED, HEADROOM, OFFLOAD_OVER_GPU,
         TP_HEADS, MAX_LEN_UNSET, VERSION_UNSET, MAX_LEN_ABOVE_NATIVE, SCHEDULER_LIMITS, SAMPLER_WARMUP_OOM,
         STATE_BLOCKS_BELOW_SEQS, OBSERVED_KV_BELOW_WORKLOAD, OBSERVED_KV_OFF_ESTIMATE, QUANT_UNLOADABLE,
         QUANT_GPU_UNSUPPORTED)
