"""The validation pipeline: checked documents -> rendered specs -> placed -> estimated -> rules -> a report.

Each stage returns immutable results; the rules (core/rules/registry.py) are pure functions of them. No I/O
of its own: facts resolution and template files come in through the objects passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from gpustack_guard.core import echo
from gpustack_guard.core import findings as F
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.fleet.placement import Ledger
from gpustack_guard.core.render import RenderedSpec, render_spec
from gpustack_guard.core.rules.registry import PER_SPEC_CHECKS, WHOLE_CHECKS
from gpustack_guard.core.spec.check import SpecDoc, check_document
from gpustack_guard.core.stages.estimation import estimate_all
from gpustack_guard.core.stages.placement import place_all
from gpustack_guard.core.stages.results import Evaluation, Results

if TYPE_CHECKING:  # the edges that do I/O come in as objects; the pipeline only names their types
    from gpustack_guard.core.ports import Resolve, TemplateRenderer
    from gpustack_guard.core.suppressions import Suppressed


@dataclass(eq=False, repr=False)  # identity equality: cheaper to define, never compared or hashed
class Report:
    """What validate found: the findings, every spec's evaluation and the final ledgers."""

    __repr__ = fields_repr

    findings: list[F.Finding]
    evaluations: tuple[Evaluation, ...] = ()
    files: int = 0
    specs: int = 0
    units: list[tuple[str, str]] = field(default_factory=list)  # (file, spec) pairs, for per-spec reports
    ledgers: Mapping[str, Ledger] = field(default_factory=dict)  # by cluster, with every deployment's footprint
    # findings accepted on purpose (inline comments, select/ignore): kept for SARIF, left out of counts and exit
    suppressed: list[Suppressed] = field(default_factory=list)
    root: str | None = None  # the repository root CI reports' paths are relative to (None: the working directory)

    def count(self, severity: F.Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def failed(self, fail_level: F.Severity) -> bool:
        return any(f.severity.rank >= fail_level.rank for f in self.findings)

    @property
    def secret_values(self) -> list[str]:
        return [v for ev in self.evaluations for v in ev.rendered.secret_values]


def _order(f: F.Finding):
    return (f.location.file, f.location.line, f.location.column, f.rule.id)


def render_all(docs: list[SpecDoc], renderer: TemplateRenderer, resolve: Resolve,
               environ: Mapping[str, str]) -> tuple[list[RenderedSpec], list[F.Finding]]:
    """The check and render stages: findings of both, and the specs that rendered without an error."""
    rendered: list[RenderedSpec] = []
    found: list[F.Finding] = []
    for doc in docs:
        checked, problems = check_document(doc)
        found.extend(problems)
        if checked.spec is None:
            continue
        facts, error = resolve(checked.spec, checked.file)
        result, problems = render_spec(checked, renderer, facts, error, environ)
        found.extend(problems)
        if result is not None and not any(p.severity == F.Severity.ERROR for p in problems):
            rendered.append(result)
    return rendered, found


def apply_order(rendered: list[RenderedSpec]) -> list[RenderedSpec]:
    """Lower waves first, then file order: the order apply creates them in, so bookings accumulate alike."""
    return sorted(rendered, key=lambda r: (r.spec.guard.wave, r.doc.file, r.doc.index))


def evaluate(rendered: list[RenderedSpec], fleet: Fleet | None) -> Results:
    """The placement and estimation stages (none without a fleet), in apply order."""
    placed, ledgers = place_all(apply_order(rendered), fleet)
    if fleet is None:
        return Results(None, tuple(Evaluation(p) for p in placed), ledgers)
    evaluations, ledgers = estimate_all(placed, ledgers)
    return Results(fleet, evaluations, ledgers)


def run_rules(results: Results) -> list[F.Finding]:
    """Every rule's findings. The per-spec checks run in one pass over the specs (a rule's findings keep their
    spec order, and validate sorts them by place and rule id: the same report as one pass per rule)."""
    found = [f for check in WHOLE_CHECKS for f in check(results)]
    for ev in results.evaluations:
        for check in PER_SPEC_CHECKS:
            found.extend(check(ev))
    return found


def validate(docs: list[SpecDoc], load_findings: list[F.Finding], renderer: TemplateRenderer, resolve: Resolve,
             fleet: Fleet | None, environ: Mapping[str, str]) -> Report:
    rendered, found = render_all(docs, renderer, resolve, environ)
    results = evaluate(rendered, fleet)
    found = list(load_findings) + found + run_rules(results)
    files = len({d.file for d in docs} | {f.location.file for f in load_findings})
    units = [(f.location.file, "(file)") for f in load_findings]
    # shown as findings show it (Finding caps and escapes its spec name), so a unit and its findings match
    # `name` is a property that inspects the raw document: read once a spec (10,000 specs: ~15 -> ~12 ms)
    units += [(d.file, echo.spec_name(name) if (name := d.name) else f"document {d.index + 1}") for d in docs]
    units = list(dict.fromkeys(units))  # two documents may share a name (a GSG005 finding), one test unit
    return Report(sorted(found, key=_order), results.evaluations, files=files, specs=len(docs), units=units,
                  ledgers=results.ledgers)
