"""Suppression rules (GSG026, GSG027): the `# gsg: ignore[...]` comments themselves. Their findings come from
core/suppressions.py, which matches the comments against the other rules' findings."""

from __future__ import annotations

from gpustack_guard.core.findings import Rule, Severity

UNUSED_SUPPRESSION = Rule(
    "GSG026", "unused-suppression", "A `# gsg: ignore[...]` comment suppresses nothing.",
    severity=Severity.WARNING,
    what="An inline suppression whose line has no finding of the rule it names, a rule id that does not exist, "
         "or a rule whose findings cannot be suppressed (those that stop a stage: the spec is not checked past "
         "them).",
    why="A suppression outlives the problem it accepted: once the spec is fixed, a stale comment would silently "
        "hide the next, different finding of that rule on that line.",
    example="name: qwen\n# gsg: ignore[GSG033] batch traffic, never 64 long prompts at once\nreplicas: 1",
    fix="Delete the comment, or move it to the line the finding names (`gsg validate` prints file:line).",
    emitted_by="the suppression matcher (core/suppressions.py)",
)

SUPPRESSION_WITHOUT_REASON = Rule(
    "GSG027", "suppression-without-reason", "A `# gsg: ignore[...]` comment gives no reason.",
    severity=Severity.ERROR,
    what="An inline suppression with nothing after the closing bracket.",
    why="Accepting a finding is a decision a reviewer must be able to read; a bare suppression hides it. The "
        "finding is still suppressed, but the run fails until the comment says why.",
    example="name: qwen\nreplicas: 1  # gsg: ignore[GSG033]",
    fix="Write the reason after the bracket: `# gsg: ignore[GSG033] batch traffic, short prompts only`.",
    emitted_by="the suppression matcher (core/suppressions.py)",
)

RULES = (UNUSED_SUPPRESSION, SUPPRESSION_WITHOUT_REASON)
