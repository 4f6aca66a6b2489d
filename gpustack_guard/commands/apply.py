"""gsg apply: carry out the plan (from specs, or exactly a saved plan file)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, GsgError
from gpustack_guard.adapters.files.output import err, out


def _saved_plan(path: str) -> dict:
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GsgError(f"not a readable plan file: {exc}", where=path) from None
    if not isinstance(document, dict) or str(document.get("format_version", "")).split(".")[0] != "1":
        raise GsgError("not a gsg plan file (format_version 1.x expected)", where=path)
    return document


def _confirm(summary: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise GsgError("apply needs --yes when not run from a terminal")
    answer = input(f"{summary}\nDo you want to perform these actions? Only 'yes' will be accepted: ")
    return answer.strip() == "yes"


def _saved_claims(saved: dict) -> dict:
    """The ownership options a saved plan was made with, read back from its changes."""
    taken = [c.get("owner") or {} for c in saved["changes"] if c.get("adopt")]
    return {"adopt": any(o.get("kind") == "unmanaged" for o in taken),
            "claim_legacy": any(o.get("kind") == "legacy" for o in taken),
            "take_over_from": sorted({o["project"] for o in taken if o.get("kind") == "project" and o.get("project")})}


def run(connection, specs_or_plan: list[str], *, assume_yes: bool = False, prune: bool = False,
        adopt: bool = False, targets: list[str] | None = None, allow_empty: bool = False, restart: bool = True,
        wait: bool = False, wait_timeout: float = 900.0, concurrency: int = 8, offline: bool = False,
        templates: list[str] | None = None, poll: float = 2.0, project: str | None = None,
        claim_legacy: bool = False, take_over_from: list[str] | None = None) -> int:
    from gpustack_guard.adapters.gpustack.applier import Applier, describe, unresolved_references
    from gpustack_guard.commands.desired import blocked, claims_for, load_desired
    from gpustack_guard.commands.plan import build_plan
    from gpustack_guard.core.deploy.plan import CONFLICT, desired_digest, summary_line
    from gpustack_guard.reporters.plan_output import render_text

    saved = None
    specs = specs_or_plan
    if len(specs_or_plan) == 1 and specs_or_plan[0].endswith(".json"):
        saved = _saved_plan(specs_or_plan[0])
        specs = saved.get("specs") or []
        prune = any(c["action"] == "delete" for c in saved["changes"])
        targets = [c["name"] for c in saved["changes"]] or None
        options = _saved_claims(saved)
        adopt, claim_legacy, take_over_from = options["adopt"], options["claim_legacy"], options["take_over_from"]
        project = project or saved.get("project")
    state = load_desired(connection, specs, offline=offline, templates=templates,
                         allow_empty=allow_empty or bool(saved), project=project)
    claims = claims_for(state, adopt=adopt, claim_legacy=claim_legacy, take_over_from=take_over_from)
    if saved and saved.get("project") != claims.project:
        raise GsgError(f"the saved plan was made for project {saved.get('project')!r}, these specs are "
                       f"{claims.project!r}; plan again", where=specs_or_plan[0])
    if blocked(state, "apply", prune=prune, allow_empty=allow_empty or bool(saved)):
        return EXIT_FAIL
    secrets = state.report.secret_values
    changes = build_plan(state, prune=prune, targets=targets, claims=claims)
    expected = {}
    if saved:
        planned = {c["name"]: c for c in saved["changes"]}
        for c in changes:
            before = planned.get(c.name)
            if before is None or before["action"] != c.action or before.get("desired_digest") != desired_digest(c):
                raise GsgError(f"'{c.name}' no longer matches the saved plan (specs or server changed); plan again")
            if before.get("live"):
                expected[c.name] = before["live"]
    conflicts = [c for c in changes if c.action == CONFLICT]
    if conflicts:
        out(render_text(changes), secrets)
        return EXIT_FAIL
    missing = unresolved_references(changes)
    if missing:
        raise GsgError("env references with no value in the environment: " + "; ".join(missing))
    if not any(c.is_change for c in changes):
        out(summary_line(changes) + "\n")
        return EXIT_OK
    out(render_text(changes), secrets)
    if not _confirm(summary_line(changes), assume_yes):
        err("gsg: apply cancelled")
        return EXIT_FAIL
    applier = Applier(connection.client, state.cluster_ids, restart=restart, wait=wait, wait_timeout=wait_timeout,
                      poll=poll, concurrency=concurrency, progress=lambda m: err(f"gsg: {m}", secrets),
                      expected=expected)
    outcome = applier.run(changes)
    (out if outcome.ok else err)(describe(outcome) + "\n", secrets)
    return EXIT_OK if outcome.ok else EXIT_INTERRUPTED if outcome.interrupted and not outcome.failed else EXIT_FAIL
