"""JSON (gsg's own, versioned) and SARIF 2.1.0 (code scanning)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from gpustack_guard import __version__
from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.reporters.rule_doc import PROJECT_URL, doc_url, rule_markdown

JSON_FORMAT_VERSION = "1.0"  # minor: additive; major: breaking (consumers must check)
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def finding_json(f) -> dict:
    return {"rule_id": f.rule.id, "rule": f.rule.name, "severity": f.severity.value, "file": f.location.file,
            "line": f.location.line, "column": f.location.column, "spec": f.spec, "message": f.message,
            "fix": f.fix, "data": f.data or {}}


def deployment_json(ev) -> dict:
    r = ev.rendered
    out = {"name": r.name, "file": r.doc.file, "cluster": ev.cluster.name if ev.cluster else r.spec.cluster_name,
           "backend": r.spec.effective_backend, "model_facts": r.facts.source if r.facts else None}
    if ev.placement:
        out["placement"] = {"manual": ev.placement.manual, "fraction": ev.placement.fraction,
                            "replicas": [[g.id for g in gpus] for gpus in ev.placement.replicas]}
    if ev.estimate:
        out["estimate"] = ev.estimate.as_json()
    return out


def render_json(report, fail_level=None) -> str:  # fail_level: read by junit only
    from gpustack_guard.core.findings import Severity
    from gpustack_guard.reporters import json_head

    doc = {
        **json_head(JSON_FORMAT_VERSION),
        "summary": {"errors": report.count(Severity.ERROR), "warnings": report.count(Severity.WARNING),
                    "notes": report.count(Severity.INFO), "specs": report.specs, "files": report.files},
        "findings": [finding_json(f) for f in report.findings],
        "deployments": [deployment_json(ev) for ev in report.evaluations],
    }
    return json.dumps(doc, indent=2) + "\n"


def fingerprints(findings) -> list[str]:
    """One fingerprint per finding, unique in the run and stable across runs: rule, file, spec and the message's
    first clause (up to ": ", as GPU ids hold colons), so a finding keeps its identity when lines move. Findings
    that would share one (two documents declaring the same name) also take their line and column, and then their
    order: code scanning merges results with equal fingerprints."""
    bases = [f"{f.rule.id}|{f.location.file}|{f.spec}|{f.message.split(': ')[0]}" for f in findings]
    shared = {b for b, n in Counter(bases).items() if n > 1}
    located = [f"{b}|{f.location.line}:{f.location.column}" if b in shared else b for b, f in zip(bases, findings)]
    seen: dict[str, int] = {}
    unique = []
    for basis in located:
        seen[basis] = seen.get(basis, 0) + 1
        unique.append(basis if seen[basis] == 1 else f"{basis}|#{seen[basis]}")
    return [hashlib.sha256(b.encode()).hexdigest()[:32] for b in unique]


def render_sarif(report, fail_level=None) -> str:  # fail_level: read by junit only
    rules = sorted(RULES.values(), key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f, fingerprint in zip(report.findings, fingerprints(report.findings)):
        region = {"startLine": max(f.location.line, 1), "startColumn": max(f.location.column, 1)}
        results.append({
            "ruleId": f.rule.id, "ruleIndex": index[f.rule.id], "level": SARIF_LEVEL[f.severity.value],
            "message": {"text": (f"[{f.spec}] " if f.spec else "") + f.message + (f" Fix: {f.fix}" if f.fix else "")},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.location.file.replace("\\", "/")},
                                                "region": region}}],
            "partialFingerprints": {"gsgFinding/v1": fingerprint},
        })
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gsg", "version": __version__, "informationUri": PROJECT_URL,
                "rules": [{"id": r.id, "name": r.name, "shortDescription": {"text": r.summary},
                           "fullDescription": {"text": r.summary},
                           "defaultConfiguration": {"level": SARIF_LEVEL[r.severity.value]},
                           "helpUri": doc_url(r),
                           "help": {"text": rule_markdown(r), "markdown": rule_markdown(r)}} for r in rules],
            }},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2) + "\n"
