"""Output formats. Each reporter turns a Report into text; stdout gets the report, stderr the summary."""

from __future__ import annotations

import importlib
import os

FORMATS = ("text", "json", "github", "sarif", "junit", "markdown")
_WHERE = {"text": ("text", "render"), "json": ("machine", "render_json"), "github": ("github", "render"),
          "sarif": ("machine", "render_sarif"), "junit": ("junit", "render"), "markdown": ("markdown", "render")}


class _Registry(dict):
    """Format name -> render function, imported on first use (xml.etree alone costs more than text output)."""

    def __missing__(self, name):
        module, function = _WHERE[name]
        render = getattr(importlib.import_module(f"gpustack_guard.reporters.{module}"), function)
        self[name] = render
        return render

    def __contains__(self, name):
        return name in _WHERE


REPORTERS = _Registry()


def json_head(format_version: str) -> dict:
    """The first keys of every JSON document gsg writes (validate, plan, drift): its format and the tool."""
    from gpustack_guard import __version__

    return {"format_version": format_version, "tool": {"name": "gsg", "version": __version__}}


def resolve_format(name: str | None, environ=os.environ) -> str:
    """`auto` (the default) picks github under GitHub Actions, text elsewhere; GSG_OUTPUT is the env twin."""
    chosen = (name or environ.get("GSG_OUTPUT") or "auto").lower()
    if chosen == "auto":
        return "github" if environ.get("GITHUB_ACTIONS") == "true" else "text"
    if chosen not in REPORTERS:
        from gpustack_guard.core.errors import GsgError

        raise GsgError(f"unknown output format '{chosen}' (choose auto, {', '.join(FORMATS)})")
    return chosen


def summary_line(report) -> str:
    from gpustack_guard.core.findings import Severity

    e, w, i = (report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    return (f"gsg: {plural(e, 'error')}, {plural(w, 'warning')}, {plural(i, 'note')} in "
            f"{plural(report.specs, 'spec')} ({plural(report.files, 'file')})")
