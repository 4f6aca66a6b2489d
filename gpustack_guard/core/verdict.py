"""The one verdict of a deployment, from the estimate and validate's findings: what `gsg estimate` prints and
what `gsg advise` calls "fits", so the two never disagree on the same deployment."""

from __future__ import annotations

from typing import Iterable

from gpustack_guard.core.findings import Finding, Severity
from gpustack_guard.core.memory.estimate import FITS, Estimate

# The rules that judge a deployment's shape and memory (placement GSG02x, memory GSG03x, engine refusals GSG04x:
# length, start-up check, scheduler limits; GSG053 / GSG054: a weights format the release / the GPU cannot run);
# document rules (spelling, unknown backend) say nothing about whether the model fits.
JUDGING_PREFIXES = ("GSG02", "GSG03", "GSG04", "GSG053", "GSG054", "GSG056")
# Refusals the engine makes while it checks the deployment's shape, before it loads or sizes anything (GSG037: the
# tensor-parallel size does not divide the heads; GSG053 / GSG054: no loader for the weights format in this release,
# or not on this GPU): its verdict whatever the memory arithmetic says
SHAPE_REFUSAL_RULES = ("GSG037", "GSG053", "GSG054")


def deployment_verdict(findings: Iterable[Finding], est: Estimate | None) -> tuple[str, Severity | None,
                                                                                    list[Finding]]:
    """(verdict, its severity, the judging findings worst first): the engine's verdict when it fails, else the
    name of the worst shape or memory finding, `fits` when there is none of warning severity or above."""
    judging = [f for f in findings if f.rule_id.startswith(JUDGING_PREFIXES) and f.severity.rank >= 1]
    judging.sort(key=lambda f: -f.severity.rank)
    refused = [f for f in judging if f.rule_id in SHAPE_REFUSAL_RULES and f.severity is Severity.ERROR]
    if refused:
        return refused[0].rule.name, Severity.ERROR, judging
    if est is not None and est.verdict != FITS:
        return est.verdict, Severity.ERROR, judging
    if judging:
        return judging[0].rule.name, judging[0].severity, judging
    if est is None:
        return "no-estimate", Severity.ERROR, judging
    return FITS, None, judging


# Informational findings about the engine version that `gsg estimate` prints as notes beside its numbers, in
# validate's words: the version the arithmetic assumed (GSG039) and a weights format only some releases load
# (GSG053). GSG039's "not pinned" is left to the estimate's header, which marks the version "(assumed)".
VERSION_NOTE_RULES = ("GSG039", "GSG053")


def version_notes(findings: Iterable[Finding], version_given: bool) -> tuple[str, ...]:
    """The notes those findings make, as `rule name: message`."""
    return tuple(f"{f.rule_id} {f.rule.name}: {f.message}" for f in findings
                 if f.rule_id in VERSION_NOTE_RULES and f.severity is Severity.INFO
                 and (version_given or f.rule_id != "GSG039"))
