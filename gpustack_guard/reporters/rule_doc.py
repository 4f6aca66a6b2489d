"""A rule's documentation as text: `gsg rule`, docs/rules/GSG0NN.md, the README table and SARIF help."""

from __future__ import annotations

from typing import Iterable

from gpustack_guard.core.findings import Rule

PROJECT_URL = "https://github.com/gpustack-guard/gpustack-guard"
RULE_DOCS_DIR = "docs/rules"
README_START = "<!-- rules:start -->"
README_END = "<!-- rules:end -->"


def doc_path(rule: Rule) -> str:
    """The rule's doc, relative to the repository root."""
    return f"{RULE_DOCS_DIR}/{rule.id}.md"


def doc_url(rule: Rule) -> str:
    return f"{PROJECT_URL}/blob/main/{doc_path(rule)}"


def rule_markdown(rule: Rule) -> str:
    """The whole documentation of one rule (markdown that reads as plain text too)."""
    lines = [f"# {rule.id} {rule.name}", "", f"Default severity: {rule.severity.value}"]
    if rule.emitted_by:
        lines.append(f"Emitted by: {rule.emitted_by}")
    lines += ["", rule.summary, "", "## What it catches", "", rule.what, "", "## Why it matters", "", rule.why,
              "", "## Example", "", "```yaml", rule.example, "```", "", "## Fix", "", rule.fix, ""]
    return "\n".join(lines)


def rule_list(rules: Iterable[Rule]) -> str:
    """One line per rule: id, name, default severity, summary (columns aligned)."""
    rules = list(rules)
    width = max((len(r.name) for r in rules), default=0)
    return "".join(f"{r.id}  {r.name:<{width}}  {r.severity.value:<7}  {r.summary}\n" for r in rules)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def readme_table(rules: Iterable[Rule]) -> str:
    rows = ["| id | name | default | what |", "|---|---|---|---|"]
    rows += [f"| [`{r.id}`]({doc_path(r)}) | {r.name} | {r.severity.value} | {_cell(r.summary)} |" for r in rules]
    return "\n".join(rows) + "\n"


def with_readme_table(readme: str, rules: Iterable[Rule]) -> str:
    """The README with the text between the rule markers replaced by the generated table."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no {README_START} ... {README_END} block")
    head = readme[:start + len(README_START)]
    return f"{head}\n{readme_table(rules)}{readme[end:]}"
