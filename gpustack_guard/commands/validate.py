"""gsg validate: specs against a fleet (snapshot file or live cluster)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Severity
from gpustack_guard.adapters.files.output import err, out


@dataclass
class ValidateOptions:
    specs: list[str]
    fleet: str | None = None
    output: str | None = None
    fail_level: str = "error"
    offline: bool = False
    templates: list[str] = field(default_factory=list)
    server_check: bool = False


def build_renderer(spec_paths: list[str], extra: list[str]):
    from pathlib import Path

    from gpustack_guard.adapters.templates import TemplateRenderer, default_search_path

    for directory in extra:
        if not Path(directory).is_dir():
            raise GsgError("template folder not found", where=directory)
    return TemplateRenderer([Path(d).resolve() for d in extra] + default_search_path(spec_paths))


def build_resolver(offline: bool):
    from gpustack_guard.adapters.model_sources.resolver import FactsResolver

    offline = offline or os.environ.get("GSG_OFFLINE", "") not in ("", "0") or \
        os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    return FactsResolver(offline=offline, hf_token=os.environ.get("HF_TOKEN"))


def run(opts: ValidateOptions, connection=None) -> int:
    from gpustack_guard.adapters.files.fleet_file import load_fleet
    from gpustack_guard.core.pipeline import validate
    from gpustack_guard.reporters import REPORTERS, resolve_format, summary_line
    from gpustack_guard.adapters.files.spec_loader import load_specs

    try:
        fail_level = Severity(opts.fail_level)
    except ValueError:
        raise GsgError(f"--fail-level must be error or warning, not '{opts.fail_level}'") from None
    fmt = resolve_format(opts.output)
    docs, load_findings = load_specs(opts.specs)
    if opts.fleet:
        fleet = load_fleet(opts.fleet)
    elif connection is not None:
        fleet = connection.fleet()
    else:
        raise GsgError("no fleet to validate against: pass --fleet FILE (a snapshot) or --server URL (GSG_URL)")
    report = validate(docs, load_findings, build_renderer(opts.specs, opts.templates),
                      build_resolver(opts.offline).resolve, fleet, os.environ)
    if opts.server_check:
        if connection is None:
            raise GsgError("--server-check needs a server (--server or GSG_URL)")
        from gpustack_guard.adapters.gpustack.evaluations import server_check

        report.findings.extend(server_check(connection, report))
    out(REPORTERS[fmt](report), report.secret_values)
    err(summary_line(report), report.secret_values)
    return EXIT_FAIL if report.failed(fail_level) else EXIT_OK
