"""gsg plan: what apply would do, per model, Terraform style."""

from __future__ import annotations

import json

from gpustack_guard.core.errors import EXIT_CHANGES, EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.adapters.files.output import err, out


def build_plan(state, *, prune: bool, targets: list[str] | None, claims):
    from gpustack_guard.core.deploy.plan import plan

    chosen = set(targets) if targets else None
    changes = plan(state.rendered, state.live_models, state.cluster_names, claims=claims, prune=prune,
                   recorded=state.recorded, targets=chosen)
    if chosen:
        known = {r.name for r in state.rendered} | {m["name"] for m in state.live_models}
        unknown = sorted(chosen - known)
        if unknown:
            raise GsgError(f"--target {', '.join(unknown)} matches no spec and no live model")
        err(f"gsg: targeting {', '.join(sorted(chosen))}: other deployments are left alone")
    return changes


def run(connection, specs: list[str], *, output: str | None = None, out_file: str | None = None,
        prune: bool = False, adopt: bool = False, targets: list[str] | None = None, detailed_exitcode: bool = False,
        allow_empty: bool = False, offline: bool = False, templates: list[str] | None = None,
        project: str | None = None, claim_legacy: bool = False, take_over_from: list[str] | None = None) -> int:
    from gpustack_guard.commands.desired import blocked, claims_for, load_desired
    from gpustack_guard.adapters.files.output import write_atomic
    from gpustack_guard.core.deploy.plan import CONFLICT
    from gpustack_guard.reporters import text
    from gpustack_guard.reporters.plan_output import plan_json, render_markdown, render_text

    fmt = (output or "text").lower()
    if fmt not in ("text", "json", "markdown"):
        raise GsgError(f"plan --output must be text, json or markdown, not '{fmt}'")
    state = load_desired(connection, specs, offline=offline, templates=templates, allow_empty=allow_empty,
                         project=project)
    claims = claims_for(state, adopt=adopt, claim_legacy=claim_legacy, take_over_from=take_over_from)
    if blocked(state, "plan", prune=prune, allow_empty=allow_empty):
        return EXIT_FAIL
    secrets = state.report.secret_values
    changes = build_plan(state, prune=prune, targets=targets, claims=claims)
    document = plan_json(changes, connection.client.base_url, validated=True, project=claims.project)
    if out_file:
        document["specs"] = specs
        write_atomic(out_file, json.dumps(document, indent=2) + "\n")
    if fmt == "json":
        out(json.dumps(document, indent=2) + "\n", secrets)
    elif fmt == "markdown":
        out(render_markdown(changes, state.report.evaluations, state.report.findings), secrets)
    else:
        out(render_text(changes, text.render(state.report)), secrets)
    if any(c.action == CONFLICT for c in changes):
        return EXIT_FAIL
    if detailed_exitcode and any(c.is_change for c in changes):
        return EXIT_CHANGES
    return EXIT_OK
