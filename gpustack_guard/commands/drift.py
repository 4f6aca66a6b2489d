"""gsg drift: read-only report of live state against the specs (a constant number of list calls); with
--all-contexts, every server of the contexts file in one run and one exit code."""

from __future__ import annotations

import json
from dataclasses import replace

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import err, out
from gpustack_guard.core.deploy.drift import degraded, drift_report, has_drift
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import EXIT_CHANGES, EXIT_DEGRADED, EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.secrets import mask_url
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import ChangeFormat, json_head
from gpustack_guard.reporters.drift_output import (
    DRIFT_FORMAT_VERSION,
    DRIFT_POINTER,
    render_json,
    render_markdown,
    render_text,
)
from gpustack_guard.reporters.markdown import capped, untrusted_cell

RENDERERS = {ChangeFormat.TEXT: render_text, ChangeFormat.JSON: render_json, ChangeFormat.MARKDOWN: render_markdown}


@frozen_value(eq=True, repr=True)
class DriftOptions:
    sources: wiring.SpecSources
    connection: wiring.ConnectionOptions
    output: ChangeFormat = ChangeFormat.TEXT
    detailed_exitcode: bool = False
    all_contexts: bool = False


def _report(opts: DriftOptions) -> tuple[dict, list[str]]:
    connection = wiring.connect(opts.connection)
    state = wiring.load_desired(connection, opts.sources)
    _refuse_unread_specs(state)
    fleet = connection.last_fleet
    assert fleet is not None  # load_desired fetched it (the cluster names come from it)
    report = drift_report(state.rendered, state.live_models, state.cluster_names, fleet,
                          claims=wiring.claims_for(state), whole_project=state.whole_project,
                          recorded=state.recorded, removals=state.removals)
    return report, state.report.secret_values


def _refuse_unread_specs(state: wiring.DesiredState) -> None:
    """A spec file that could not be read or rendered has nothing to compare: left out, drift would call its live
    model in sync (or, with a project, orphaned). Stop on the first such error, at its file:line."""
    rendered_files = {spec.doc.file for spec in state.rendered}
    unread = [f for f in state.errors if f.location.file not in rendered_files]
    if unread:
        first = unread[0]
        files = len({f.location.file for f in unread})
        raise GsgError(f"{first.location}: {first.rule.id} {first.rule.name}: {first.message} (drift cannot "
                       f"compare {files} unreadable spec file(s) with live: fix them, see gsg validate)")


def run(opts: DriftOptions) -> int:
    if opts.all_contexts:
        return _all_contexts(opts)
    report, secrets = _report(opts)
    out(RENDERERS[opts.output](report), secrets)
    return _detailed([report]) if opts.detailed_exitcode else EXIT_OK


def _detailed(reports: list[dict]) -> int:
    """Sync and health apart, so CI can tell them: 2 out of sync, 4 Degraded, 6 both, 0 neither."""
    code = EXIT_OK
    if any(has_drift(r) for r in reports):
        code |= EXIT_CHANGES
    if any(degraded(r) for r in reports):
        code |= EXIT_DEGRADED
    return code


def _all_contexts(opts: DriftOptions) -> int:
    """Each context with its own server, key and overlay; a server that fails is reported and the rest go on."""
    from gpustack_guard.adapters.files.contexts import config_path, load_contexts

    contexts = load_contexts(config_path())
    if not contexts.contexts:
        raise GsgError("the contexts file names no context", where=contexts.path)
    results: list[tuple[str, dict | None, str | None]] = []
    secrets: list[str] = []
    for name in sorted(contexts.contexts):
        one = replace(opts, all_contexts=False, connection=replace(opts.connection, context=name, server=None))
        try:
            report, found = _report(one)
            results.append((name, report, None))
            secrets += found
        except GsgError as exc:
            err(f"gsg: context {name}: error: {untrusted(str(exc))}")
            results.append((name, None, str(exc)))
    out(_render_all(results, contexts, opts.output), secrets)
    if any(error for _, _, error in results):
        return EXIT_FAIL
    reports = [report for _, report, _ in results if report is not None]
    return _detailed(reports) if opts.detailed_exitcode else EXIT_OK


def _render_all(results, contexts, output: ChangeFormat) -> str:
    if output is ChangeFormat.JSON:
        return json.dumps({**json_head(DRIFT_FORMAT_VERSION), "contexts": [
            {"context": name, "server": mask_url(contexts.contexts[name].server),
             "drift": has_drift(report) if report is not None else None,
             "sync": report["sync"] if report is not None else None,
             "health": report["health"] if report is not None else None, "error": error, "report": report}
            for name, report, error in results]}, indent=2) + "\n"
    parts = []
    for name, report, error in results:
        server = mask_url(contexts.contexts[name].server)
        if output is ChangeFormat.MARKDOWN:
            body = render_markdown(report).replace("## gsg drift", f"## gsg drift: {name}", 1) if report \
                else f"## gsg drift: {name}\n\n**Error:** {untrusted_cell(error)}\n"
        else:
            body = f"== context {name} ({server}) ==\n" + (render_text(report) if report
                                                             else f"error: {untrusted(error)}\n")
        parts.append(body)
    if output is ChangeFormat.MARKDOWN:  # every context's report in one comment: the comment's cap holds for all
        return capped("\n".join(parts).splitlines(), DRIFT_POINTER)
    return "\n".join(parts)
