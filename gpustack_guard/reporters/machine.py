"""JSON (gsg's own, versioned) and SARIF 2.1.0 (code scanning)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from gpustack_guard import __version__
from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.reporters.ci_paths import every_finding, fingerprints, repository_path, root_of
from gpustack_guard.reporters.json_text import Shared, indented
from gpustack_guard.reporters.rule_doc import PROJECT_URL, doc_url, rule_markdown

JSON_FORMAT_VERSION = "1.1"  # minor: additive; major: breaking (consumers must check). 1.1: suppressions
SOURCE_ROOT = "SRCROOT"  # SARIF's name for the repository root, which every relative artifact URI is based on
# v2: the basis is the repository path and the message with its figures masked (v1: cwd path, figures kept)
FINGERPRINT_KEY = "gsgFinding/v2"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def finding_json(f) -> dict:
    return {"rule_id": f.rule.id, "rule": f.rule.name, "severity": f.severity.value, "file": f.location.file,
            "line": f.location.line, "column": f.location.column, "spec": f.spec, "message": f.message,
            "fix": f.fix, "data": f.data or {}}


def deployment_json(ev, estimate_json=None) -> dict:
    """One deployment's entry; `estimate_json` gives the estimate's JSON (render_json shares one per estimate)."""
    r = ev.rendered
    out = {"name": r.name, "file": r.doc.file, "cluster": ev.cluster.name if ev.cluster else r.spec.cluster_name,
           "backend": r.spec.effective_backend, "model_facts": r.facts.source if r.facts else None}
    if ev.placement:
        out["placement"] = {"manual": ev.placement.manual, "fraction": ev.placement.fraction,
                            "replicas": [[g.id for g in gpus] for gpus in ev.placement.replicas]}
    if ev.estimate:
        out["estimate"] = estimate_json(ev.estimate) if estimate_json else ev.estimate.as_json()
    return out


def shared_estimates():
    """The estimate's JSON, one per estimate and written once per indentation level: specs with the same inputs
    share one estimate (core/memory/engine), and at 10,000 specs the JSON report repeated ~16 estimates' text
    10,000 times (benchmarks/report_formats.py). Keyed by identity: the report keeps every estimate alive."""
    made: dict[int, Shared] = {}

    def estimate_json(estimate) -> Shared:
        shared = made.get(id(estimate))
        if shared is None:
            shared = made[id(estimate)] = Shared(estimate.as_json())
        return shared
    return estimate_json


def render_json(report, fail_level=None) -> str:  # fail_level: read by junit only
    from gpustack_guard.core.findings import Severity
    from gpustack_guard.reporters import json_head

    estimate_json = shared_estimates()
    doc = {
        **json_head(JSON_FORMAT_VERSION),
        "summary": {"errors": report.count(Severity.ERROR), "warnings": report.count(Severity.WARNING),
                    "notes": report.count(Severity.INFO), "specs": report.specs, "files": report.files,
                    "suppressed": len(report.suppressed)},
        "findings": [finding_json(f) for f in report.findings],
        "suppressed": [{**finding_json(s.finding), "suppression": {"kind": s.kind, "justification": s.justification}}
                       for s in report.suppressed],
        "deployments": [deployment_json(ev, estimate_json) for ev in report.evaluations],
    }
    return indented(doc, end="\n")  # json.dumps(doc, indent=2)'s bytes, ~2x faster (json_text.py)


def _artifact(file: str, root: str) -> dict:
    """A file relative to SRCROOT (the repository root); one outside it as an absolute file URI."""
    path = repository_path(file, root)
    if path.startswith("/") or re.match(r"[A-Za-z]:/", path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": SOURCE_ROOT}


def render_sarif(report, fail_level=None) -> str:  # fail_level: read by junit only
    rules = sorted(RULES.values(), key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    root = root_of(report)
    rows = every_finding(report)
    results = []
    for (f, accepted), fingerprint in zip(rows, fingerprints([f for f, _ in rows], root)):
        region = {"startLine": max(f.location.line, 1), "startColumn": max(f.location.column, 1)}
        result = {
            "ruleId": f.rule.id, "ruleIndex": index[f.rule.id], "level": SARIF_LEVEL[f.severity.value],
            "message": {"text": (f"[{f.spec}] " if f.spec else "") + f.message + (f" Fix: {f.fix}" if f.fix else "")},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(f.location.file, root),
                                                "region": region}}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        }
        if accepted is not None:  # kept as a result, so code scanning shows it as dismissed, not as fixed
            suppression = {"kind": accepted.kind}
            if accepted.justification:
                suppression["justification"] = accepted.justification
            result["suppressions"] = [suppression]
        results.append(result)
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
            "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
            "results": results,
        }],
    }
    return indented(doc, end="\n")  # json.dumps(doc, indent=2)'s bytes, ~2x faster (json_text.py)
