"""gsg render: the final documents exactly as gsg would send them to GPUStack."""

from __future__ import annotations

import json
import os

import yaml

from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Severity
from gpustack_guard.adapters.files.output import err, out


def run(specs: list[str], output: str = "yaml", show_secrets: bool = False, offline: bool = False,
        templates: list[str] | None = None, out_file: str | None = None, check: bool = False) -> int:
    from gpustack_guard.commands.validate import build_renderer, build_resolver
    from gpustack_guard.core.pipeline import render_all
    from gpustack_guard.reporters import text
    from gpustack_guard.adapters.files.spec_loader import load_specs

    if output not in ("yaml", "json"):
        raise GsgError(f"--output must be yaml or json, not '{output}'")
    docs, problems = load_specs(specs)
    rendered, found = render_all(docs, build_renderer(specs, templates or []), build_resolver(offline).resolve,
                                 os.environ)
    found = problems + found
    errors = [f for f in found if f.severity == Severity.ERROR]
    secrets = [] if show_secrets else [v for r in rendered for v in r.secret_values]
    if errors:
        from gpustack_guard.core.pipeline import Report

        err(text.render(Report(errors)), secrets)
        return EXIT_FAIL
    documents = [r.document(show_secrets=show_secrets) for r in rendered]
    if output == "json":
        body = json.dumps(documents, indent=2) + "\n"
    else:
        body = yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    if check and not out_file:
        raise GsgError("--check needs --out FILE (the committed rendered file to compare)")
    if out_file:
        return _to_file(out_file, body, check, show_secrets)
    out(body, secrets, reveal=show_secrets)
    return EXIT_OK


def _to_file(path: str, text: str, check: bool, show_secrets: bool) -> int:
    from pathlib import Path

    from gpustack_guard.adapters.files.output import write_atomic

    if show_secrets:
        raise GsgError("refusing to write secrets to a file: drop --show-secrets")
    current = Path(path).read_text() if Path(path).is_file() else None
    if check:
        if current != text:
            err(f"gsg: {path} is stale: run `gsg render ... --out {path}` and commit it")
            return EXIT_FAIL
        return EXIT_OK
    write_atomic(path, text)
    return EXIT_OK
