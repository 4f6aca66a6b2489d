"""gsg drift: read-only report of live state against the specs (a constant number of list calls)."""

from __future__ import annotations

from gpustack_guard.core.errors import EXIT_CHANGES, EXIT_OK, GsgError
from gpustack_guard.adapters.files.output import out


def run(connection, specs: list[str], *, output: str | None = None, detailed_exitcode: bool = False,
        offline: bool = False, templates: list[str] | None = None, project: str | None = None) -> int:
    from gpustack_guard.commands.desired import claims_for, load_desired
    from gpustack_guard.core.deploy.drift import drift_report, has_drift
    from gpustack_guard.reporters.drift_output import render_json, render_markdown, render_text

    fmt = (output or "text").lower()
    renderers = {"text": render_text, "json": render_json, "markdown": render_markdown}
    if fmt not in renderers:
        raise GsgError(f"drift --output must be text, json or markdown, not '{fmt}'")
    state = load_desired(connection, specs, offline=offline, templates=templates, project=project)
    report = drift_report(state.rendered, state.live_models, state.cluster_names, connection.last_fleet,
                          claims=claims_for(state), whole_project=state.whole_project, recorded=state.recorded)
    out(renderers[fmt](report), state.report.secret_values)
    return EXIT_CHANGES if detailed_exitcode and has_drift(report) else EXIT_OK
