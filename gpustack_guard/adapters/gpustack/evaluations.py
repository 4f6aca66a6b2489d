"""--server-check: GPUStack's own /v2/model-evaluations verdict beside gsg's."""

from __future__ import annotations

from gpustack_guard.core import findings as F
from gpustack_guard.core.rules import server as S
from gpustack_guard.core.units import gib

EVALUATIONS = "/v2/model-evaluations"


def _messages(item, key: str) -> list[str]:
    values = item.get(key, list, [])
    for index, value in enumerate(values):
        if not isinstance(value, str):
            item.fail(f"{key}[{index}]", value, "text")
    return [value[:300] for value in values]


def server_check(connection, report) -> list[F.Finding]:
    from gpustack_guard.adapters.gpustack.client import ApiError
    from gpustack_guard.adapters.gpustack.fields import Item

    found = []
    outage: str | None = None  # the spec the server failed on: when it is down or too slow, ask no more
    for ev in report.evaluations:
        r = ev.rendered
        if ev.cluster is None or ev.cluster.id is None:
            continue
        if outage:
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"),
                                   f"GPUStack could not evaluate: not asked after the server failed on '{outage}'",
                                   spec=r.name))
            continue
        try:
            results = connection.client.evaluate(ev.cluster.id, [r.request_body()])
        except ApiError as exc:
            why = "rate limited (GPUStack allows 50 evaluations per 10 s)" if exc.status == 429 else exc.detail
            if exc.status is None or exc.status >= 500 or exc.status == 429:
                outage = r.name  # down, too slow or refusing: asking for every other spec would only wait
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"), f"GPUStack could not evaluate: {why}",
                                   spec=r.name))
            continue
        try:  # the server answered, badly: this spec's finding says so and the next spec is asked
            if not results:
                raise ApiError("POST", EVALUATIONS, "unexpected answer: an empty 'results' list")
            result = Item("POST", EVALUATIONS, "results[0]", results[0])
            failed = result.get("error", bool, False)
            reason = result.get("error_message", str, "") if failed else ""
            compatible = result.get("compatible", bool, True)
            claim_item = result.child("resource_claim")
            claim = claim_item.count("vram", None) if claim_item else None
            messages = "; ".join(_messages(result, "compatibility_messages") + _messages(result, "scheduling_messages"))
        except ApiError as exc:
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"),
                                   f"GPUStack could not evaluate: {exc.detail}", spec=r.name))
            continue
        result = results[0]
        if failed:
            found.append(F.finding(S.SERVER_UNAVAILABLE, r.doc.at("name"),
                                   f"GPUStack could not evaluate: {reason[:300] or 'error'} "
                                   "(offline Hugging Face or unknown model?)", spec=r.name))
            continue
        theirs = (f"compatible, would book {gib(claim)} VRAM" if compatible and claim
                  else "compatible" if compatible else "not compatible")
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
