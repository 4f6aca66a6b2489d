"""gsg drift: read-only report of live state against the specs (a constant number of list calls)."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import out
from gpustack_guard.core.deploy.drift import drift_report, has_drift
from gpustack_guard.core.errors import EXIT_CHANGES, EXIT_OK
from gpustack_guard.reporters import ChangeFormat
from gpustack_guard.reporters.drift_output import render_json, render_markdown, render_text

RENDERERS = {ChangeFormat.TEXT: render_text, ChangeFormat.JSON: render_json, ChangeFormat.MARKDOWN: render_markdown}


@dataclass(frozen=True)
class DriftOptions:
    sources: wiring.SpecSources
    connection: wiring.ConnectionOptions
    output: ChangeFormat = ChangeFormat.TEXT
    detailed_exitcode: bool = False


def run(opts: DriftOptions) -> int:
    connection = wiring.connect(opts.connection)
    state = wiring.load_desired(connection, opts.sources)
    report = drift_report(state.rendered, state.live_models, state.cluster_names, connection.last_fleet,
                          claims=wiring.claims_for(state), whole_project=state.whole_project,
                          recorded=state.recorded)
    out(RENDERERS[opts.output](report), state.report.secret_values)
    return EXIT_CHANGES if opts.detailed_exitcode and has_drift(report) else EXIT_OK
