"""Output formats. Each reporter turns a Report into text; stdout gets the report, stderr the summary."""

from __future__ import annotations

import enum
import importlib
import os


class ReportFormat(str, enum.Enum):
    """validate's --output: `auto` picks github under GitHub Actions, text elsewhere."""

    AUTO = "auto"
    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    SARIF = "sarif"
    JUNIT = "junit"
    MARKDOWN = "markdown"
    GITLAB = "gitlab"  # GitLab Code Quality
    HTML = "html"  # the memory picture: a stacked bar per GPU (memory_html.py)


class ChangeFormat(str, enum.Enum):
    """plan's and drift's --output."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


class DocumentFormat(str, enum.Enum):
    """render's --output."""

    YAML = "yaml"
    JSON = "json"


class AdviceFormat(str, enum.Enum):
    """advise's --output."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"


class TableFormat(str, enum.Enum):
    """estimate's --output."""

    TEXT = "text"
    JSON = "json"


FORMATS = tuple(f.value for f in ReportFormat if f is not ReportFormat.AUTO)
_WHERE = {"text": ("text", "render"), "json": ("machine", "render_json"), "github": ("github", "render"),
          "sarif": ("machine", "render_sarif"), "junit": ("junit", "render"), "markdown": ("markdown", "render"),
          "gitlab": ("gitlab", "render"), "html": ("memory_html", "render_report")}


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


def resolve_format(chosen: ReportFormat, environ=os.environ) -> str:
    """The reporter name for a chosen format (the CLI reads GSG_OUTPUT as the option's env twin)."""
    if chosen is ReportFormat.AUTO:
        return "github" if environ.get("GITHUB_ACTIONS") == "true" else "text"
    return chosen.value


def summary_line(report) -> str:
    from gpustack_guard.core.findings import Severity

    e, w, i = (report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    accepted = len(report.suppressed)  # counted apart: they neither show nor fail the run
    return (f"gsg: {plural(e, 'error')}, {plural(w, 'warning')}, {plural(i, 'note')} in "
            f"{plural(report.specs, 'spec')} ({plural(report.files, 'file')})"
            + (f"; {accepted} suppressed" if accepted else ""))
