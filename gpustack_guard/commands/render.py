"""gsg render: the final documents exactly as gsg would send them to GPUStack."""

from __future__ import annotations

import json
import os
from dataclasses import replace

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import (
    err,
    out,
    refuse_overwriting_inputs,
    refuse_replacing_unless,
    write_atomic,
    written_form,
)
from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, read_regular
from gpustack_guard.adapters.files.spec_loader import display_path, load_specs
from gpustack_guard.adapters.files.yaml_dump import dump
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Severity
from gpustack_guard.core.pipeline import Report, render_all
from gpustack_guard.core.secrets import scrub
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import DocumentFormat, text
from gpustack_guard.reporters.argument_origins import origin_comment

MAX_REPLACED_RENDER_BYTES = 64 << 20  # an earlier render of 10,000 specs is ~20 MB


@frozen_value(eq=True, repr=True)
class RenderOptions:
    sources: wiring.SpecSources
    output: DocumentFormat = DocumentFormat.YAML
    show_secrets: bool = False
    out_file: str | None = None
    check: bool = False  # with out_file: exit 1 when it is stale instead of writing it


def run(opts: RenderOptions) -> int:
    specs = list(opts.sources.specs)
    if opts.check and not opts.out_file:
        from gpustack_guard.adapters.files.project_file import project_settings

        project = project_settings(specs) if specs else None
        if project is None or not project.rendered:
            raise GsgError("--check needs --out FILE, or `rendered: PATH` in gsg.yaml (the committed rendered file "
                           "to compare)")
        opts = replace(opts, out_file=display_path(project.rendered))
    docs, problems = load_specs(specs, overlay=opts.sources.overlay)
    renderer = wiring.build_renderer(specs, opts.sources.templates)
    rendered, found = render_all(docs, renderer, wiring.build_resolver(opts.sources.offline).resolve, os.environ)
    errors = [f for f in problems + found if f.severity == Severity.ERROR]
    secrets = [] if opts.show_secrets else [v for r in rendered for v in r.secret_values]
    if errors:
        err(text.render(Report(errors)), secrets)
        return EXIT_FAIL
    documents = [r.document(show_secrets=opts.show_secrets) for r in rendered]
    if opts.output is DocumentFormat.JSON:
        body = json.dumps(documents, indent=2) + "\n"
    else:  # each document under a comment saying where its arguments come from (the worker's included)
        body = "---\n".join(origin_comment(r) + dump(d)
                             for r, d in zip(rendered, documents, strict=True))
    if opts.out_file:
        if not opts.check:
            refuse_overwriting_inputs([("--out", opts.out_file)], wiring.files_a_run_reads(
                specs, [d.file for d in docs], None, opts.sources.overlay, renderer))
        return _to_file(opts.out_file, body, opts.check, opts.show_secrets)
    out(body, secrets, reveal=opts.show_secrets)
    return EXIT_OK


def _committed_text(path: str, expected: str) -> str | None:
    """The committed rendered file's text with its line ends as Python reads them ('\r\n' a git checkout on
    Windows may write is '\n'); None, which is stale, for a file that is not a regular file, not UTF-8, or
    larger than the expected text could be with every line end doubled (read no further than that)."""
    limit = 2 * len(expected.encode("utf-8")) + 1
    try:
        data = read_regular(path, limit).decode("utf-8")
    except (Unreadable, TooLarge, UnicodeDecodeError):
        return None
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _to_file(path: str, body: str, check: bool, show_secrets: bool) -> int:
    if show_secrets:
        raise GsgError("refusing to write secrets to a file: drop --show-secrets")
    body = scrub(body, [])  # a token pasted in a plain flag or a name is not committed either (env secrets are masked)
    if check:
        if _committed_text(path, written_form(body)) != written_form(body):
            err(f"gsg: {path} is stale: run `gsg render ... --out {path}` and commit it")
            return EXIT_FAIL
        return EXIT_OK
    refuse_replacing_what_is_no_render(path)
    write_atomic(path, body)
    return EXIT_OK


def _is_render(text: str) -> bool:
    from gpustack_guard.adapters.files.yaml_documents import load_documents
    from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError

    try:
        documents = [d.data for d in load_documents(text)]
    except YamlSyntaxError:
        return False
    if len(documents) == 1 and isinstance(documents[0], list):  # -o json: one list of the documents
        documents = documents[0]
    return bool(documents) and all(isinstance(d, dict) and "name" in d for d in documents)


def refuse_replacing_what_is_no_render(path: str) -> None:
    """--out may replace an earlier render (YAML or JSON: documents that are each a mapping with a `name`, or one
    list of them), never another existing file: `--out README.md` or `--out docs/index.html` replaced it, exit 0."""
    refuse_replacing_unless(path, _is_render, "a file gsg render wrote (spec documents with a `name`)",
                            "render elsewhere", max_bytes=MAX_REPLACED_RENDER_BYTES)
