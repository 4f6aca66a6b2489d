"""Shared by plan, apply and drift: specs rendered and validated against the live fleet, plus live models."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gpustack_guard.errors import GsgError
from gpustack_guard.findings import Severity


@dataclass
class DesiredState:
    report: object  # pipeline.Report
    rendered: list
    live_models: list[dict]
    cluster_names: dict[int, str]
    cluster_ids: dict[str, int]

    @property
    def errors(self):
        return [f for f in self.report.findings if f.severity == Severity.ERROR]


def load_desired(connection, specs: list[str], *, offline: bool = False, templates: list[str] | None = None,
                 allow_empty: bool = False) -> DesiredState:
    from gpustack_guard.commands.validate import build_renderer, build_resolver
    from gpustack_guard.pipeline import Report, validate
    from gpustack_guard.spec.loader import load_specs

    docs, problems = load_specs(specs, allow_empty=allow_empty)
    fleet = connection.fleet()
    report: Report = validate(docs, problems, build_renderer(specs, templates or []),
                              build_resolver(offline).resolve, fleet, os.environ)
    live = connection.last_models if connection.last_models is not None else connection.client.models()
    names = {c.id: c.name for c in fleet.clusters if c.id is not None}
    return DesiredState(report, [ev.rendered for ev in report.evaluations], live, names,
                        {name: cid for cid, name in names.items()})


def blocked(state: DesiredState, verb: str, *, prune: bool, allow_empty: bool) -> bool:
    """Whether plan/apply must stop before planning: validation errors (printed here) block it, and an empty
    spec set never prunes every gsg-managed model unless --allow-empty says so."""
    from gpustack_guard.output import err
    from gpustack_guard.reporters import text

    if state.errors:
        secrets = state.report.secret_values
        err(text.render(state.report), secrets)
        err(f"gsg: {verb} blocked: {len(state.errors)} validation error(s)", secrets)
        return True
    if not state.rendered and prune and not allow_empty:
        raise GsgError("no specs: refusing to prune every gsg-managed model (pass --allow-empty to mean it)")
    return False


def prune_scopes(specs: list[str]) -> list[str]:
    """Spec paths as the ownership marker records them (display paths), for scoping --prune."""
    from gpustack_guard.spec.loader import display_path

    return [display_path(s) for s in specs]
