"""gsg validate: specs against a fleet (snapshot file or live cluster)."""

from __future__ import annotations

import os
import re
from dataclasses import field, replace

from gpustack_guard import wiring
from gpustack_guard.adapters.files.fleet_file import load_fleet
from gpustack_guard.adapters.files.output import (
    known_secrets,
    note,
    out,
    refuse_overwriting_inputs,
    refuse_replacing_unless,
    write_all_atomic,
)
from gpustack_guard.adapters.files.spec_loader import load_specs
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Severity
from gpustack_guard.core.pipeline import validate
from gpustack_guard.core.secrets import scrub
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import REPORTERS, ReportFormat, resolve_format, summary_line


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class ValidateOptions:
    """The options of `gsg validate`."""

    __repr__ = fields_repr

    sources: wiring.SpecSources
    fleet: str | None = None
    output: ReportFormat = ReportFormat.AUTO
    fail_level: Severity = Severity.ERROR
    server_check: bool = False
    connection: wiring.ConnectionOptions = field(default_factory=wiring.ConnectionOptions)
    reports: tuple[str, ...] = ()  # FORMAT=FILE: more reports of the same run (one run for CI's SARIF + summary)


def options_from(specs, fleet, output, fail_level, offline, templates, overlay, server_check, report, select, ignore,
                 connection) -> ValidateOptions:
    """ValidateOptions from the command line's values, as typer (cli.validate) and the typer-free path
    (quick_validate) both read them."""
    sources = wiring.spec_sources(specs, templates, offline, overlay=overlay, select=select, ignore=ignore)
    return ValidateOptions(sources, fleet, ReportFormat(output), Severity(fail_level), server_check, connection,
                           reports=tuple(report))


def report_files(values: tuple[str, ...]) -> list[tuple[ReportFormat, str]]:
    """--report FORMAT=FILE values, checked before any work (a typo is one line, not a lost report)."""
    known = [f.value for f in ReportFormat if f is not ReportFormat.AUTO]
    files = []
    for value in values:
        name, equals, path = value.partition("=")
        if not equals or not path or name.lower() not in known:
            raise GsgError(f"--report takes FORMAT=FILE with FORMAT one of {', '.join(known)}, not '{value[:200]}'")
        files.append((ReportFormat(name.lower()), path))
    paths = [path for _, path in files]
    if len(set(paths)) != len(paths):
        raise GsgError("--report names one file twice")
    return files


REPORT_HEAD_BYTES = 4096  # of an existing --report file: every format names gsg in its opening
# An earlier report of any format (a path may switch from json to sarif): the opening each reporter writes
_EARLIER_REPORT = (
    r'\A\s*\Z'  # empty: text and github write nothing when nothing is found
    r'|"(?:tool|driver)":\s*\{\s*"name":\s*"gsg"'  # json (tool.name), sarif (runs[].tool.driver.name)
    r'|<testsuites name="gsg"|<title>gsg validate|\A## gsg validate'  # junit, html, markdown
    r'|\A\s*\[\s*(?:\]|\{\s*"type":\s*"issue")'  # gitlab: a list of issues, or none
    r'|\A::\w+ [^\n]*title=GSG\d{3} '  # github workflow commands
    r'|\A[^\n]*: (?:error|warning|note) GSG\d{3} ')  # text


def refuse_replacing_what_is_no_report(paths: list[str]) -> None:
    """--report may replace an earlier report of gsg validate (of any format), never another existing file:
    `--report json=README.md` replaced the readme, exit 0. Checked after a file the run reads is refused (the more
    telling line), before anything is written. (The pattern is compiled here: a run without --report never needs it.)"""
    earlier = re.compile(_EARLIER_REPORT)
    for path in paths:
        refuse_replacing_unless(path, lambda head: earlier.search(head) is not None, "a gsg validate report",
                                "write the report elsewhere", max_bytes=REPORT_HEAD_BYTES, head_only=True)


def run(opts: ValidateOptions) -> int:
    extra_reports = report_files(opts.reports)
    if opts.fleet is None or opts.connection.context:
        # a context named beside --fleet is still read (an unknown one is an error, its overlay applies); the
        # snapshot given on the command line is the fleet, and the run says so when the context names another
        fleet_file, _, overlay = wiring.context_defaults(opts.connection)
        if opts.fleet is not None and fleet_file and fleet_file != opts.fleet:
            note(f"gsg: validating against --fleet {opts.fleet}, not context '{opts.connection.context}''s "
                 f"fleet {fleet_file}")
        opts = replace(opts, fleet=opts.fleet or fleet_file, sources=wiring.with_overlay(opts.sources, overlay))
    specs = list(opts.sources.specs)
    from gpustack_guard.adapters.files.project_file import find_identity, project_settings
    from gpustack_guard.adapters.files.suppressions import acceptance

    find_identity(specs, opts.sources.project)  # the project file apply will read: checked here, in CI, first
    accepted = acceptance(specs, opts.sources.select, opts.sources.ignore)  # an unknown id stops before any work
    # A server is read only when it is needed: no fleet file, or GPUStack's own evaluation asked for.
    has_server = bool(opts.connection.server or opts.connection.context)
    if opts.fleet is None and not has_server:  # last: gsg.yaml's committed snapshot (a pre-commit hook's case)
        project = project_settings(specs) if specs else None
        if project is not None and project.fleet:
            opts = replace(opts, fleet=project.fleet)
    needs_server = has_server and (not opts.fleet or opts.server_check)
    connection = wiring.connect(opts.connection) if needs_server else None
    comments: dict = {}  # each spec file's suppression comments, scanned while loading, for accept below
    with wiring.long_lived():
        docs, load_findings = load_specs(specs, overlay=opts.sources.overlay, comments=comments)
        if opts.fleet:
            fleet = load_fleet(opts.fleet)
        elif connection is not None:
            fleet = connection.fleet()
        else:
            raise GsgError("no fleet to validate against: pass --fleet FILE (a snapshot) or --server URL (GSG_URL), "
                           "or name the snapshot in gsg.yaml (`fleet: PATH`)")
    renderer = wiring.build_renderer(specs, opts.sources.templates)
    resolve = wiring.build_resolver(opts.sources.offline).resolve
    # The report is kept until the command ends too, and the stages make no cyclic garbage (none on the scale
    # trees): without the collector's passes over their ~1,000,000 young objects, 10,000 specs x 5,000 GPUs
    # went ~2,080 -> ~1,990 ms CPU (benchmarks/scale.py, docs/performance.md fifth round).
    with wiring.long_lived():
        report = validate(docs, load_findings, renderer, resolve, fleet, os.environ)
    if opts.server_check:
        if connection is None:
            raise GsgError("--server-check needs a server (--server or GSG_URL)")
        from gpustack_guard.adapters.gpustack.evaluations import server_check

        report.findings.extend(server_check(connection, report))
    report = accepted.accept(report, (d.file for d in docs), comments)
    secrets = report.secret_values  # once: it renders every spec's arguments again (~10 ms for 1,000 specs)
    out(REPORTERS[resolve_format(opts.output)](report, fail_level=opts.fail_level), secrets)
    if extra_reports:
        refuse_overwriting_inputs([("--report", path) for _, path in extra_reports], wiring.files_a_run_reads(
            specs, [d.file for d in docs] + list(comments), opts.fleet, opts.sources.overlay, renderer))
        refuse_replacing_what_is_no_report([path for _, path in extra_reports])
        write_all_atomic([(path, scrub(REPORTERS[fmt](report, fail_level=opts.fail_level), known_secrets() + secrets))
                          for fmt, path in extra_reports])
    note(summary_line(report), secrets)
    wiring.keep_until_exit(docs, report, fleet)  # freed by the process's end, not one by one
    return EXIT_FAIL if report.failed(opts.fail_level) else EXIT_OK
