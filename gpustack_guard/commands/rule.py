"""gsg rule: a rule's documentation (what, why, example, fix), or the list of every rule."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack_guard.adapters.files.output import out
from gpustack_guard.core.errors import EXIT_OK, GsgError


@dataclass
class RuleOptions:
    rule: str | None = None  # an id (GSG033, any case) or a name (kv-oversubscribed)
    list_rules: bool = False


def run(opts: RuleOptions) -> int:
    from gpustack_guard.core.rules.registry import RULES, lookup, suggestions
    from gpustack_guard.reporters.rule_doc import rule_list, rule_markdown

    if opts.list_rules:
        if opts.rule:
            raise GsgError("give either a rule id or --list, not both")
        out(rule_list(RULES.values()))
        return EXIT_OK
    if not opts.rule:
        raise GsgError("give a rule id (gsg rule GSG033) or --list")
    found = lookup(opts.rule)
    if found is None:
        close = suggestions(opts.rule)
        hint = f" (did you mean {_either(close)}?)" if close else " (gsg rule --list shows them all)"
        raise GsgError(f"unknown rule '{opts.rule}'{hint}")
    out(rule_markdown(found))
    return EXIT_OK


def _either(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
