"""--server-check: GPUStack's own /v2/model-evaluations verdict beside gsg's."""

from __future__ import annotations

from gpustack_guard.core import findings as F
from gpustack_guard.core.rules import server as S
from gpustack_guard.core.units import gib

def server_check(connection, report) -> list[F.Finding]:
    from gpustack_guard.adapters.gpustack.client import ApiError

    found = []
    for ev in report.evaluations:
        r = ev.rendered
        if ev.cluster is None or ev.cluster.id is None:
            continue
        try:
            result = connection.client.evaluate(ev.cluster.id, [r.request_body()])[0]
        except ApiError as exc:
            why = "rate limited (GPUStack allows 50 evaluations per 10 s)" if exc.status == 429 else exc.detail
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"), f"GPUStack could not evaluate: {why}",
                                   spec=r.name))
            continue
        if result.get("error"):
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"),
                                   f"GPUStack could not evaluate: {result.get('error_message') or 'error'} "
                                   "(offline Hugging Face or unknown model?)", spec=r.name))
            continue
        compatible = bool(result.get("compatible", True))
        claim = (result.get("resource_claim") or {}).get("vram")
        theirs = (f"compatible, would book {gib(claim)} VRAM" if compatible and claim
                  else "compatible" if compatible else "not compatible")
        messages = "; ".join((result.get("compatibility_messages") or []) + (result.get("scheduling_messages") or []))
        ours = [f for f in report.findings if f.spec == r.name and f.severity == F.Severity.ERROR]
        if compatible and ours:
            found.append(F.finding(S.SERVER_DISAGREES, r.doc.at("name"),
                                   f"GPUStack says {theirs}, gsg rejects it: {ours[0].rule.id} {ours[0].rule.name} "
                                   "(GPUStack's estimate is weights x 1.2 + 2 GiB and ignores context, KV x "
                                   "concurrency and CUDA graphs)", spec=r.name, server=result))
        elif not compatible and not ours:
            found.append(F.finding(S.SERVER_DISAGREES, r.doc.at("name"),
                                   f"GPUStack says {theirs}" + (f": {messages}" if messages else "")
                                   + "; gsg found no error", spec=r.name, server=result))
        else:
            found.append(F.finding(S.SERVER_AGREES, r.doc.at("name"), f"GPUStack agrees: {theirs}",
                                   spec=r.name, server=result))
    return found
