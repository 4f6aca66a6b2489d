"""gsg templates: the guard templates gsg can find, their variables and defaults, and what each pins."""

from __future__ import annotations

import json

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import err, out
from gpustack_guard.adapters.files.spec_loader import display_path
from gpustack_guard.adapters.template_catalog import TemplateInfo, describe_templates
from gpustack_guard.adapters.templates import sandbox_limits
from gpustack_guard.core.echo import escape
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import TableFormat


@frozen_value(eq=True, repr=True)
class TemplatesOptions:
    specs: tuple[str, ...] = ()  # templates/ beside or above these folders are searched first, as when rendering
    templates: tuple[str, ...] = ()
    output: TableFormat = TableFormat.TEXT


def _json(t: TemplateInfo) -> dict:
    return {"name": t.name, "path": display_path(t.path), "summary": t.summary,
            "variables": [{"name": n, "default": d} for n, d in t.variables], "reads": list(t.reads),
            "pinned": list(t.pinned), "defaults": list(t.defaults), "problem": t.problem}


def _text(t: TemplateInfo) -> str:
    lines = [f"{t.name}  ({display_path(t.path)})", f"  {t.summary}" if t.summary else ""]
    lines += ["  variables (guard.vars):"] + [f"    {n} = {d if d is not None else '(required)'}"
                                             for n, d in t.variables]
    lines.append("  also reads: " + (", ".join(t.reads) or "nothing else"))
    lines += ["  pins (a spec may not contradict):"] + [f"    {a}" for a in t.pinned]
    lines += ["  defaults (a spec may override):"] + [f"    {a}" for a in t.defaults]
    return "\n".join(line for line in lines if line) + "\n"


def run(opts: TemplatesOptions) -> int:
    renderer = wiring.build_renderer(opts.specs or (".",), opts.templates)
    found = describe_templates(renderer.search_path)
    if opts.output is TableFormat.JSON:
        out(json.dumps({"format_version": "1.0", "templates": [_json(t) for t in found],
                        "sandbox_limits": sandbox_limits()}, indent=2) + "\n")
    else:
        out("\n".join(_text(t) for t in found))
    # listed all the same, but a template that cannot be read or parsed fails every spec naming it: not exit 0
    broken = [t for t in found if t.problem]
    for t in broken:
        err(f"gsg: error: {display_path(t.path)}: {escape(t.problem or '')}")
    return EXIT_FAIL if broken else EXIT_OK
