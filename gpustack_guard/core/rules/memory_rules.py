"""Memory arithmetic rules: each finding prints the breakdown and names the flag to change."""

from __future__ import annotations

from gpustack_guard.core import args as A
from gpustack_guard.core import findings as F
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, KV_BELOW_MAX_LEN, NO_KV_MEMORY, Estimate, UnsupportedModel
from gpustack_guard.core.memory.weights import param_breakdown
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS
from gpustack_guard.core.rules import Context, Evaluation, spec_rule
from gpustack_guard.core.units import gib

LEN_FLAG = {"vllm": "--max-model-len", "sglang": "--context-length", "llamacpp": "--ctx-size"}
FRACTION_FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static"}


def flag_location(ev: Evaluation, flag: str) -> F.Location:
    """Point at the spec's own argument when it has one, else at what produced the arguments."""
    r = ev.rendered
    key = flag.lstrip("-")
    try:
        spec_args = A.parse(r.spec.backend_parameters, r.family)
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
    parts = [f"requested {gib(est.requested)}", f"weights {gib(est.weights)}"]
    if est.activation:
        parts.append(f"activation {gib(est.activation)}")
    parts.append(f"non-torch {gib(est.non_torch)}")
    if est.extra.get("cuda_graphs_in_budget") and est.cuda_graphs:
        parts.append(f"CUDA graphs {gib(est.cuda_graphs)}")
    return " − ".join(parts) + f" = KV {gib(est.kv_available)} per GPU"


@spec_rule("memory")
def estimate_memory(ev: Evaluation, ctx: Context):
    """Run the engine arithmetic on every replica's GPUs (no finding by itself unless facts are missing)."""
    r = ev.rendered
    if ev.blocked or r.family not in engine.ENGINES:
        return
    if r.facts is None:
        ev.blocked = True
        yield F.finding(F.MODEL_FACTS, r.doc.at(r.spec.source and _source_field(r)),
                        f"no memory arithmetic possible: {r.facts_error}", spec=r.name,
                        fix="set guard.model.catalog, guard.model.config, or the architecture fields in guard.model")
        return
    try:
        param_breakdown(r.facts) if not r.facts.layer_weight_bytes else None
    except ValueError as exc:
        if not r.facts.weight_bytes:
            ev.blocked = True
            yield F.finding(F.MODEL_FACTS, r.doc.at("guard", "model"),
                            f"weight bytes unknown ({exc} in {r.facts.source})", spec=r.name,
                            fix="set guard.model.weight_bytes (checkpoint size) and the missing fields")
            return
    if ev.placement is None:
        return
    for gpus in ev.placement.replicas:
        try:
            ev.estimates.append(engine.estimate(r.family, r.facts, [(g.total, g.gpu.name) for g in gpus], r.flags,
                                                r.spec.backend_version, r.spec.guard.policy))
        except UnsupportedModel as exc:
            ev.blocked = True
            yield F.finding(F.MODEL_FACTS, r.doc.at("backend"), str(exc), spec=r.name)
            return
        except ValueError as exc:
            ev.blocked = True
            yield F.finding(F.ARG_VALUE, r.doc.at("backend_parameters"), str(exc), spec=r.name)
            return
    for gpus, est in zip(ev.placement.replicas, ev.estimates):
        for ref in gpus:
            ev.ledger.add_footprint(ref.id, r.name, est.footprint)


def _source_field(r) -> str:
    return {"huggingface": "huggingface_repo_id", "model_scope": "model_scope_model_id"}.get(r.spec.source,
                                                                                           "local_path")


@spec_rule("memory")
def tp_divides_heads(ev: Evaluation, ctx: Context):
    r = ev.rendered
    if r.facts is None or r.family not in ("vllm", "sglang") or not r.facts.num_attention_heads:
        return
    tp, _ = r.parallel_size()
    heads, kv = r.facts.num_attention_heads, r.facts.kv_heads
    flag = "--tensor-parallel-size" if r.family == "vllm" else "--tp-size"
    if heads % tp:
        yield F.finding(F.TP_HEADS, flag_location(ev, flag),
                        f"total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})",
                        spec=r.name, fix=f"set {flag} to a divisor of {heads}")
    elif not r.facts.is_mla and kv and ((kv >= tp and kv % tp) or (kv < tp and tp % kv)):
        yield F.finding(F.TP_HEADS, flag_location(ev, flag),
                        f"KV heads ({kv}) and tensor parallel size ({tp}) must divide one another",
                        spec=r.name, fix=f"set {flag} to a divisor or multiple of {kv}")


@spec_rule("memory")
def kv_capacity(ev: Evaluation, ctx: Context):
    est, r = ev.estimate, ev.rendered
    if est is None:
        return
    len_flag = LEN_FLAG[r.family]
    if r.family == "llamacpp":
        if est.verdict == DOES_NOT_FIT:
            x = est.extra
            yield F.finding(F.OFFLOAD_OVER_GPU, flag_location(ev, "--gpu-layers"),
                            f"llama.cpp needs more than the GPU holds: {_breakdown(est)}", spec=r.name,
                            fix=f"lower --gpu-layers (now {x['offload_layers']}), --ctx-size or --parallel, "
                                "or enable --flash-attn", **est.as_json())
        return
    if est.verdict in (NO_KV_MEMORY, DOES_NOT_FIT):
        yield F.finding(F.NO_KV_MEMORY, flag_location(ev, FRACTION_FLAG[r.family]),
                        f"no memory left for the KV cache: {_breakdown(est)}", spec=r.name,
                        fix=f"raise {FRACTION_FLAG[r.family]}, add GPUs (tensor parallel) or use a smaller / "
                            "quantised model", **est.as_json())
    elif est.verdict == KV_BELOW_MAX_LEN:
        unset = len_flag.lstrip("-") not in r.flags
        length = f"{est.max_model_len:,}" + (" (unset: the model's native length)" if unset else "")
        yield F.finding(F.KV_BELOW_MAX_LEN, flag_location(ev, len_flag),
                        f"one sequence of {length} tokens needs {gib(est.kv_needed)} "
                        f"of KV cache but only {gib(max(est.kv_available, 0))} is available "
                        f"({_breakdown(est)}); the engine will refuse to start. Estimated maximum model length: "
                        f"{est.estimated_max_model_len:,}", spec=r.name,
                        fix=f"set {len_flag} {est.estimated_max_model_len} or lower" + _fp8_hint(r),
                        **est.as_json())


def _fp8_hint(r) -> str:
    current = (r.flags.get("kv-cache-dtype") or "auto").lower()
    return ", or halve the KV cache with --kv-cache-dtype fp8" if not current.startswith("fp8") else ""


def _severity(policy, level: str) -> F.Severity:
    if policy.strict:
        return F.Severity.ERROR
    return F.Severity(level)


@spec_rule("memory")
def kv_oversubscription(ev: Evaluation, ctx: Context):
    est, r = ev.estimate, ev.rendered
    policy = r.spec.guard.policy
    if est is None or est.verdict != "fits" or r.family == "llamacpp" or policy.kv_oversubscription == "off":
        return
    workload = r.spec.guard.workload
    per_seq = est.max_model_len
    basis = f"max_model_len {est.max_model_len:,}"
    if workload.prompt_tokens_p99 or workload.max_output_tokens:
        per_seq = (workload.prompt_tokens_p99 or 0) + (workload.max_output_tokens or 0)
        basis = f"workload p99 prompt + output = {per_seq:,}"
    seqs = est.max_num_seqs
    if not per_seq or seqs * per_seq <= est.kv_capacity_tokens:
        return
    fit = est.kv_capacity_tokens // per_seq
    flag = "--max-num-seqs" if r.family == "vllm" else "--max-running-requests"
    yield F.finding(F.KV_OVERSUBSCRIBED, flag_location(ev, flag),
                    f"{flag} {seqs} x {per_seq:,} tokens ({basis}) = {seqs * per_seq:,} tokens, but the KV pool "
                    f"holds {est.kv_capacity_tokens:,} tokens ({gib(est.kv_cache)} per GPU): {fit} such sequences "
                    f"fit at once (max concurrency {est.max_concurrency:.2f}x at {est.max_model_len:,}); the rest "
                    "queue or get preempted", spec=r.name, severity=_severity(policy, policy.kv_oversubscription),
                    fix=f"set {flag} {max(fit, 1)} or lower {LEN_FLAG[r.family]}" + _fp8_hint(r),
                    sequences_fitting=fit, **est.as_json())


@spec_rule("memory")
def headroom(ev: Evaluation, ctx: Context):
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
        pieces.append(f"sampler warm-up {gib(x['sampler_warmup'])} ({est.max_num_seqs} seqs)")
        pieces.append(f"allocator slack {gib(est.headroom_needed - sum_known(x, est))}")
        needed = " + ".join(pieces)
        fraction = est.extra["gpu_memory_utilization"]
        best = max(0.0, 1 - est.headroom_needed / est.gpu_total)
    else:
        needed = f"activations and CUDA graphs (SGLang's own reserve heuristic) {gib(est.headroom_needed)}"
        fraction = est.extra["mem_fraction_static"]
        best = max(0.0, 1 - est.headroom_needed / est.gpu_total)
    flag = FRACTION_FLAG[r.family]
    yield F.finding(F.HEADROOM, flag_location(ev, flag),
                    f"{flag} {fraction} leaves {gib(est.headroom)} of {gib(est.gpu_total)} outside the engine's "
                    f"budget, but {gib(est.headroom_needed)} is needed there: {needed}; expect an OOM at graph "
                    "capture or under load", spec=r.name, severity=_severity(policy, policy.headroom),
                    fix=f"set {flag} {int(best * 100) / 100:.2f} or lower"
                        + (", or --enforce-eager" if r.family == "vllm" else ""), **est.as_json())


def sum_known(x: dict, est: Estimate) -> int:
    graphs = 0 if x["cuda_graphs_in_budget"] else est.cuda_graphs
    return x["cuda_context"] + x["comm_buffers"] + graphs + x["sampler_warmup"]


@spec_rule("memory")
def unpinned(ev: Evaluation, ctx: Context):
    est, r = ev.estimate, ev.rendered
    if est is None:
        return
    if r.family in ("vllm", "sglang") and LEN_FLAG[r.family].lstrip("-") not in r.flags and \
            est.verdict != KV_BELOW_MAX_LEN:
        extra = (" GPUStack's worker injects --max-model-len 8192 for vLLM when the native length is larger."
                 if r.family == "vllm" else "")
        yield F.finding(F.MAX_LEN_UNSET, flag_location(ev, LEN_FLAG[r.family]),
                        f"{LEN_FLAG[r.family]} is not pinned; gsg evaluated {est.max_model_len:,} tokens.{extra}",
                        spec=r.name, fix=f"pin {LEN_FLAG[r.family]}")
    native = r.facts.max_position_embeddings if r.facts else None
    if native and r.family == "vllm" and est.max_model_len > native:
        yield F.finding(F.MAX_LEN_ABOVE_NATIVE, flag_location(ev, "--max-model-len"),
                        f"--max-model-len {est.max_model_len:,} exceeds the model's native {native:,} tokens; vLLM "
                        "refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", spec=r.name,
                        fix=f"set --max-model-len {native} or lower")
    if not r.spec.backend_version and r.family in ("vllm", "sglang"):
        yield F.finding(F.VERSION_UNSET, r.doc.at("name"),
                        f"backend_version is not pinned; gsg assumed {DEFAULT_VERSIONS[r.family]} for "
                        "version-dependent arithmetic (CUDA-graph accounting, defaults)", spec=r.name,
                        fix="pin backend_version")
