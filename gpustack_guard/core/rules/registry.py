"""Every rule gsg has, in id order: the one list the pipeline runs and the docs, SARIF and JUnit read."""

from __future__ import annotations

import difflib

from gpustack_guard.core.findings import Rule
from gpustack_guard.core.rules import documents, fleet, memory, placement, server, suppressions


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


def lookup(key: str) -> Rule | None:
    """A rule by id (any case) or by name."""
    wanted = key.strip()
    return RULES.get(wanted.upper()) or next((r for r in RULES.values() if r.name == wanted.lower()), None)


def suggestions(key: str) -> list[str]:
    """Ids or names close to an unknown key, for a did-you-mean."""
    wanted = key.strip()
    ids = difflib.get_close_matches(wanted.upper(), list(RULES), n=3, cutoff=0.6)
    names = difflib.get_close_matches(wanted.lower(), [r.name for r in RULES.values()], n=3, cutoff=0.6)
    return list(dict.fromkeys(ids + names))
