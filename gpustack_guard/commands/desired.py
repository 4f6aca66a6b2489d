"""Shared by plan, apply and drift: specs rendered and validated against the live fleet, plus live models."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.findings import Severity


@dataclass
class DesiredState:
    report: object  # pipeline.Report
    rendered: list
    live_models: list[dict]
    cluster_names: dict[int, str]
    cluster_ids: dict[str, int]
    specs: list[str]
    identity: object = None  # ownership.Identity, or None without a project
    recorded: dict[str, str] = None  # displayed spec path -> the path its ownership marker records

    @property
    def whole_project(self) -> bool:
        from gpustack_guard.adapters.files.project_file import covers_project

        return self.identity is not None and covers_project(self.identity, self.specs)

    @property
    def errors(self):
        return [f for f in self.report.findings if f.severity == Severity.ERROR]


def load_desired(connection, specs: list[str], *, offline: bool = False, templates: list[str] | None = None,
                 allow_empty: bool = False, project: str | None = None) -> DesiredState:
    from gpustack_guard.commands.validate import build_renderer, build_resolver
    from gpustack_guard.core.pipeline import Report, validate
    from gpustack_guard.adapters.files.spec_loader import load_specs
    from gpustack_guard.adapters.files.project_file import find_identity, recorded_path

    identity = find_identity(specs, project) if specs else None
    docs, problems = load_specs(specs, allow_empty=allow_empty)
    fleet = connection.fleet()
    report: Report = validate(docs, problems, build_renderer(specs, templates or []),
                              build_resolver(offline).resolve, fleet, os.environ)
    live = connection.last_models if connection.last_models is not None else connection.client.models()
    names = {c.id: c.name for c in fleet.clusters if c.id is not None}
    rendered = [ev.rendered for ev in report.evaluations]
    recorded = {r.doc.file: recorded_path(identity, r.doc.file) for r in rendered}
    return DesiredState(report, rendered, live, names, {name: cid for cid, name in names.items()}, list(specs),
                        identity, recorded)


def blocked(state: DesiredState, verb: str, *, prune: bool, allow_empty: bool) -> bool:
    """Whether plan/apply must stop before planning: validation errors (printed here) block it; prune needs a
    project identity and the whole project read; an empty spec set never prunes every model of the project unless
    --allow-empty says so."""
    from gpustack_guard.adapters.files.output import err
    from gpustack_guard.reporters import text
    from gpustack_guard.adapters.files.spec_loader import display_path
    from gpustack_guard.adapters.files.project_file import PRUNE_NEEDS_PROJECT

    if prune and state.identity is None:
        raise GsgError(PRUNE_NEEDS_PROJECT)
    if prune and not state.whole_project:
        raise GsgError(f"--prune needs the whole project '{state.identity.name}': pass its root folder "
                       f"{display_path(state.identity.root)} (where it is declared: {state.identity.declared_in}), "
                       "not a part of it")
    if state.errors:
        secrets = state.report.secret_values
        err(text.render(state.report), secrets)
        err(f"gsg: {verb} blocked: {len(state.errors)} validation error(s)", secrets)
        return True
    if not state.rendered and prune and not allow_empty:
        raise GsgError(f"no specs: refusing to prune every model of project '{state.identity.name}' "
                       "(pass --allow-empty to mean it)")
    return False


def claims_for(state: DesiredState, *, adopt: bool = False, claim_legacy: bool = False,
               take_over_from: list[str] | None = None):
    """What this run may take beyond its own project's models; the options that need a project say so."""
    from gpustack_guard.core.ownership import Claims

    project = state.identity.name if state.identity is not None else None
    if project is None and (claim_legacy or take_over_from):
        flag = "--claim-legacy" if claim_legacy else "--take-over-from"
        raise GsgError(f"{flag} needs a project identity to record: add a gsg.yaml with `project: NAME` at the "
                       "spec root, or pass --project NAME (GSG_PROJECT)")
    if project in (take_over_from or []):
        raise GsgError(f"--take-over-from {project}: that is this run's own project")
    return Claims(project, adopt=adopt, claim_legacy=claim_legacy, take_over_from=frozenset(take_over_from or []))
