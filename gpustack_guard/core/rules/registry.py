"""Every rule gsg has, in id order: the one list the pipeline runs and the docs, SARIF and JUnit read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from gpustack_guard.core.findings import Rule
from gpustack_guard.core.rules import documents, fleet, memory, placement, server, suppressions

if TYPE_CHECKING:
    from gpustack_guard.core.findings import Finding
    from gpustack_guard.core.stages.results import Evaluation, Results


def _by_id(*groups: tuple[Rule, ...]) -> dict[str, Rule]:
    rules = sorted((r for group in groups for r in group), key=lambda r: r.id)
    registry: dict[str, Rule] = {}
    for r in rules:
        if r.id in registry:
            raise ValueError(f"rule {r.id} registered twice")
        registry[r.id] = r
    return registry


RULES: dict[str, Rule] = _by_id(documents.RULES, placement.RULES, memory.RULES, fleet.RULES, server.RULES,
                                suppressions.RULES)

# The pipeline's two kinds of check (pipeline.run_rules): those over the whole results, and the per-spec ones
# (rules.per_spec), run for each spec in one pass rather than one pass over 10,000 specs per rule (issue 34).
_CHECKS = [(r.check, getattr(r.check, "per_spec", None)) for r in RULES.values() if r.check is not None]
WHOLE_CHECKS: tuple[Callable[[Results], Iterable[Finding]], ...] = tuple(c for c, one in _CHECKS if one is None)
PER_SPEC_CHECKS: tuple[Callable[[Evaluation], Iterable[Finding]], ...] = tuple(one for _, one in _CHECKS if one)


def lookup(key: str) -> Rule | None:
    """A rule by id (any case) or by name."""
    wanted = key.strip()
    return RULES.get(wanted.upper()) or next((r for r in RULES.values() if r.name == wanted.lower()), None)


def suggestions(key: str) -> list[str]:
    """Ids or names close to an unknown key, for a did-you-mean."""
    wanted = key.strip()
    import difflib  # on an unknown rule id only (start-up)
    ids = difflib.get_close_matches(wanted.upper(), list(RULES), n=3, cutoff=0.6)
    names = difflib.get_close_matches(wanted.lower(), [r.name for r in RULES.values()], n=3, cutoff=0.6)
    return list(dict.fromkeys(ids + names))
