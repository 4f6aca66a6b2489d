"""gsg plan: what apply would do, per model, Terraform style."""

from __future__ import annotations

import json
from dataclasses import field

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import out, refuse_overwriting_inputs, refuse_replacing_unless, write_atomic
from gpustack_guard.core.deploy.plan import CONFLICT
from gpustack_guard.core.errors import EXIT_CHANGES, EXIT_FAIL, EXIT_OK
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import ChangeFormat, text
from gpustack_guard.reporters.plan_output import plan_json, render_markdown, render_text


@frozen_value(eq=True, repr=True)
class PlanOptions:
    sources: wiring.SpecSources
    connection: wiring.ConnectionOptions
    ownership: wiring.Ownership = field(default_factory=wiring.Ownership)
    output: ChangeFormat = ChangeFormat.TEXT
    out_file: str | None = None
    detailed_exitcode: bool = False
    targets: tuple[str, ...] = ()
    allow_empty: bool = False


def refuse_replacing_what_is_no_plan(out_file: str, sources: wiring.SpecSources) -> None:
    """--out may replace an earlier saved plan, never a file this run reads (`--out specs/gsg.yaml` replaced the
    project file with the plan's JSON, exit 0) nor any other existing file (`--out README.md`). Checked before the
    specs are read or any model is asked for."""
    from gpustack_guard.adapters.files.contexts import config_path
    from gpustack_guard.adapters.files.spec_loader import spec_files

    specs = list(sources.specs)
    read = spec_files(specs, allow_empty=True) + [str(config_path())]
    refuse_overwriting_inputs([("--out", out_file)], wiring.files_a_run_reads(
        specs, read, None, sources.overlay, wiring.build_renderer(specs, sources.templates)))
    from gpustack_guard.commands.apply import MAX_PLAN_BYTES, read_saved_plan  # what apply takes as a plan

    refuse_replacing_unless(out_file, lambda _text: isinstance(read_saved_plan(out_file).get("changes"), list),
                            "a gsg plan file", "save the plan elsewhere", max_bytes=MAX_PLAN_BYTES)


def run(opts: PlanOptions) -> int:
    connection = wiring.connect(opts.connection)
    if opts.out_file:
        refuse_replacing_what_is_no_plan(opts.out_file, wiring.with_overlay(opts.sources, connection.options.overlay))
    own = opts.ownership
    state = wiring.load_desired(connection, opts.sources, allow_empty=opts.allow_empty)
    claims = wiring.claims_for(state, adopt=own.adopt, claim_legacy=own.claim_legacy,
                               take_over_from=own.take_over_from)
    if wiring.blocked(state, "plan", prune=own.prune, allow_empty=opts.allow_empty):
        return EXIT_FAIL
    secrets = state.report.secret_values
    changes = wiring.build_plan(state, prune=own.prune, targets=opts.targets, claims=claims)
    document = plan_json(changes, connection.client.base_url, validated=True, project=claims.project)
    if opts.out_file:
        document["specs"] = list(opts.sources.specs)
        # apply refuses this file against another server, context or overlay (a stale or stray plan)
        document["target"] = {"server": connection.client.base_url, "context": connection.options.context,
                              "overlay": wiring.with_overlay(opts.sources, connection.options.overlay).overlay}
        write_atomic(opts.out_file, json.dumps(document, indent=2) + "\n")
    if opts.output is ChangeFormat.JSON:
        out(json.dumps(document, indent=2) + "\n", secrets)
    elif opts.output is ChangeFormat.MARKDOWN:
        out(render_markdown(changes, state.report.evaluations, state.report.findings), secrets)
    else:
        out(render_text(changes, text.render(state.report)), secrets)
    if any(c.action == CONFLICT for c in changes):
        return EXIT_FAIL
    if opts.detailed_exitcode and any(c.is_change for c in changes):
        return EXIT_CHANGES
    return EXIT_OK
