"""gsg advise output: text, JSON (versioned) and markdown, all from the same numbers."""

from __future__ import annotations

import json

from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.units import gib

ADVICE_FORMAT_VERSION = "1.1"  # minor: additive; major: breaking (1.1: replicas, offload, slos, meets_slos)


def _offload_json(offload) -> dict | None:
    if offload is None:
        return None
    return {"cpu_layers": offload.cpu_layers, "total_layers": offload.total_layers,
            "cpu_weight_bytes": offload.cpu_bytes,
            "decode_slowdown_estimate": round(offload.decode_slowdown, 2) if offload.decode_slowdown else None,
            "explanation": offload.line()}


def _deployment_json(sizing) -> dict:
    best = sizing.best
    doc = {"name": sizing.name, "workloads": [w.name for w in sizing.workloads], "gpu_ids": list(sizing.gpu_ids),
           "fits": sizing.fits}
    if best is None:
        doc["why_not"] = sizing.why_not
        closest = sizing.closest
        doc["closest_estimate"] = closest.estimate.as_json() if closest is not None and closest.estimate else None
        return doc
    est = best.estimate
    doc.update({"backend_parameters": best.parameters, "kv_cache_dtype": sizing.kv_dtype,
                "kv_cache_dtype_reason": sizing.kv_choice(),
                "tensor_parallel_size": sizing.layout[0], "pipeline_parallel_size": sizing.layout[1],
                "replicas": sizing.replicas, "verdict": best.verdict,
                # per replica, as `gsg estimate` prints them; the totals are over every replica
                "kv_capacity_tokens": est.kv_capacity_tokens, "max_model_len": est.max_model_len,
                "max_num_seqs": est.max_num_seqs, "kv_capacity_tokens_total": sizing.capacity_tokens,
                "max_num_seqs_total": sizing.sequences, "peak_kv_tokens_p99": sizing.peak_tokens,
                "serves_peak": sizing.serves_peak, "offload": _offload_json(sizing.offload),
                "slos": sizing.slo_report(), "observed_kv": _observed_json(best),
                "spec": best.document, "estimate": est.as_json(),
                "validate": [{"rule_id": f.rule.id, "severity": f.severity.value, "message": f.message}
                             for f in best.findings]})
    return doc


def _observed_json(judged) -> dict | None:
    if judged.observed_scale is None:
        return None
    return {"scale": round(judged.observed_scale, 4), "estimated_kv_capacity_tokens": judged.estimated_kv_tokens,
            "kv_capacity_tokens": judged.numbers.kv_capacity_tokens}


def _observed_line(judged) -> str:
    return (f"observed: KV pool {judged.numbers.kv_capacity_tokens:,} tokens per replica: gsg's "
            f"{judged.estimated_kv_tokens:,} scaled by {judged.observed_scale:.3f}, as the engine allocated "
            "(--observed)")


def _share_json(share) -> dict:
    w = share.workload
    return {"concurrency": w.concurrency, "p95_tokens": w.p95_tokens, "p99_tokens": w.p99_tokens,
            "ttft_slo_s": w.ttft_slo_s,
            "deployment": share.deployment.name, "sequences_alone": share.alone, "running_at_peak": share.at_peak,
            "queued_at_peak": share.queued}


def _option_json(option) -> dict:
    slos = option.slos()
    return {"kind": option.kind, "fits": option.fits, "serves_peak": option.serves_peak,
            "full_gpu": option.full_gpu, "slos": slos,
            "meets_slos": [name for name, r in slos.items() if r["meets"] is True],
            "resident_weights_bytes": option.resident_weights, "queueing": option.queueing,
            **({"note": option.note} if option.note else {}),
            "deployments": [_deployment_json(d) for d in option.deployments],
            "workloads": {s.workload.name: _share_json(s) for s in option.shares}}


def advice_json(advice) -> dict:
    from gpustack_guard.reporters import json_head

    t = advice.target
    per_workload = {}
    if advice.chosen is not None:
        for share in advice.chosen.shares:
            best = share.deployment.best
            per_workload[share.workload.name] = {
                **_share_json(share),
                "backend_parameters": best.parameters if best else [],
                "kv_capacity_tokens": share.deployment.capacity_tokens}
    return {**json_head(ADVICE_FORMAT_VERSION),
            "model": t.model, "backend": t.backend, "backend_version": t.backend_version,
            "gpus": {"ids": list(t.gpu_ids), "count": len(t.gpu_ids), "memory_bytes": t.gpu_memory},
            "decision": advice.decision, "reason": advice.reason,
            "recommended": advice.chosen.kind if advice.chosen else None,
            "workloads": per_workload,
            "options": [_option_json(o) for o in advice.options],
            "would_fit": list(advice.would_fit),
            "observed": _observed_summary(advice)}


def _observed_summary(advice) -> dict | None:
    pool = advice.target.observed
    if pool is None:
        return None
    deployments = [d for o in advice.options for d in o.deployments]
    chosen = sorted({d.name for d in deployments if d.fits and d.chosen.observed_scale is not None})
    # every candidate of the observed configuration, chosen or beaten (a scaled pool may lose to another dtype)
    tried = {id(j) for d in deployments for _, _, j in d.tried if j.observed_scale is not None}
    return {**pool.as_json(), "scaled_deployments": chosen, "scaled_candidates": len(tried),
            "summary": pool.summary()}


def render_json(advice) -> str:
    return json.dumps(advice_json(advice), indent=2) + "\n"


def _option_lines(option) -> list[str]:
    head = f"{option.kind}: " + ("fits" if option.fits else "does not fit") + \
        (f", resident weights {gib(option.resident_weights)}" if option.fits else "")
    lines = [head] + ([f"  {option.note}"] if option.note else [])
    for d in option.deployments:
        if not d.fits:
            lines.append(f"  {d.name} on {len(d.gpu_ids)} GPU(s): does not fit — {d.why_not}")
            continue
        # GPU ids name the server's workers: one escaped line
        replicas = f" in {d.replicas} replicas" if d.replicas > 1 else ""
        lines.append(f"  {d.name} on {len(d.gpu_ids)} GPU(s){replicas} ({untrusted(', '.join(d.gpu_ids))}): KV pool "
                     f"{d.capacity_tokens:,} tokens, {d.sequences} sequences at once, max length "
                     f"{d.chosen.numbers.max_model_len:,}")
        lines.append(f"    {' '.join(d.chosen.parameters)}")
        if d.chosen.observed_scale is not None:
            lines.append(f"    {_observed_line(d.chosen)}")
        if d.offload is not None:
            lines.append(f"    {d.offload.line()}")
        if d.kv_choice():
            lines.append(f"    {d.kv_choice()}")
        for f in d.chosen.findings:
            lines.append(f"    validate: {f.severity.value} {f.rule.id} {f.message}")
    slos = option.slos()
    for s in option.shares:
        slo = slos.get(s.workload.name)
        lines.append(f"  {s.workload.name}: {s.at_peak} of {s.workload.concurrency} running at peak"
                     f" ({s.alone} alone at {s.workload.p99_tokens:,} tokens p99)"
                     + (f", {s.queued} queue" if s.queued else "") + (f"; {_slo_text(slo)}" if slo else ""))
    lines.append(f"  queues: {option.queueing}")
    return lines


def _slo_text(slo: dict) -> str:
    if slo["meets"] is None:
        return f"TTFT target {slo['ttft_slo_s']:g} s: not estimated (no compute figures for this GPU)"
    verdict = "meets" if slo["meets"] else "misses"
    return (f"estimated TTFT {slo['ttft_estimate_s']:.2f} s at peak {verdict} its {slo['ttft_slo_s']:g} s target "
            "(first order: the pool's longest prompt prefilling ahead)")


def render_text(advice) -> str:
    t = advice.target
    lines = [f"{t.model} on {len(t.gpu_ids)} x {gib(t.gpu_memory)}, {t.backend} {t.backend_version}; workloads: "
             + ", ".join(f"{w.name} ({w.concurrency} x {w.p95_tokens:,} tokens p95)" for w in advice.workloads)]
    if t.observed is not None:
        lines.append(f"observed: {untrusted(t.observed.summary())}")  # the file's model name is the file's text
    lines.append("")
    for option in advice.options:
        lines += _option_lines(option) + [""]
    lines.append(f"decision: {advice.decision} — {advice.reason}")
    lines += [f"  would fit: {hint}" for hint in advice.would_fit]
    return "\n".join(lines) + "\n"


def render_markdown(advice) -> str:
    t = advice.target
    lines = [f"### gsg advise: {t.model} on {len(t.gpu_ids)} × {gib(t.gpu_memory)} ({t.backend} {t.backend_version})",
             "", f"**Decision: {advice.decision}** — {advice.reason}", "",
             "| option | fits | resident weights | workload | running at peak | queued | sequences alone | KV pool "
             "| TTFT target |",
             "|---|---|---|---|---|---|---|---|---|"]
    for o in advice.options:
        slos = o.slos()
        for s in o.shares:
            slo = slos.get(s.workload.name)
            ttft = "—" if slo is None else ("not estimated" if slo["meets"] is None else
                                            f"{'met' if slo['meets'] else 'missed'} ({slo['ttft_estimate_s']:.2f} s)")
            lines.append(f"| {o.kind} | {'yes' if o.fits else 'no'} | {gib(o.resident_weights) if o.fits else '—'} "
                         f"| {s.workload.name} | {s.at_peak}/{s.workload.concurrency} | {s.queued} | {s.alone} | "
                         f"{s.deployment.capacity_tokens:,} | {ttft} |")
    if advice.chosen is not None:
        lines += ["", "Recommended flags:", ""]
        for d in advice.chosen.deployments:
            lines += [f"- `{d.name}`: `{' '.join(d.chosen.parameters)}`"]
    lines += [f"- would fit: {hint}" for hint in advice.would_fit]
    return "\n".join(lines) + "\n"
