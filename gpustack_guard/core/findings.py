"""Findings: the value every rule returns, and the Rule type itself (the rules live in core/rules/)."""

from __future__ import annotations

import enum
from dataclasses import field
from typing import TYPE_CHECKING, Callable, Iterable

from gpustack_guard.core import echo
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    from gpustack_guard.core.stages.results import Results


class Severity(str, enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Rule:
    """One rule: its stable id (SARIF ruleId, docs), its check and its documentation.

    `check` reads the stage results and yields findings of this rule only. Rules whose findings come out of
    a stage that must stop at them (the loader, the spec check, rendering, the server check) name that
    stage in `emitted_by`; their check is None, or covers what later stages report under the same id.
    """

    __repr__ = fields_repr

    id: str
    name: str
    summary: str
    severity: Severity = Severity.ERROR
    what: str = ""  # what it catches
    why: str = ""  # why it matters
    example: str = ""  # a spec snippet that triggers it (YAML)
    fix: str = ""  # how to fix it
    check: Callable[[Results], Iterable[Finding]] | None = field(default=None, compare=False, repr=False)
    emitted_by: str | None = None


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Location:
    """Where a finding points: a file (as shown) and a 1-based line and column (0: unknown)."""

    __repr__ = fields_repr

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        # a file's name is the file system's: a newline in it would start a line of the report's own (a forged
        # finding); it is written as an escape like every other control character (core/echo.py)
        file = echo.escape(self.file) if echo.has_unsafe(self.file) else self.file
        if self.line:
            return f"{file}:{self.line}:{self.column or 1}"
        return file


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Finding:
    """One problem a rule found: its rule and severity, where, the message and the fix."""

    __repr__ = fields_repr

    rule: Rule
    severity: Severity
    location: Location
    message: str
    spec: str | None = None
    fix: str | None = None
    # Numbers behind the message (bytes, tokens) for machine outputs.
    data: dict = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        """Every reporter prints these texts: cap them and escape control and bidi characters here, once
        (core/echo.py), so no rule can echo a 20 MB value or a terminal escape whole."""
        for name, limit in (("message", echo.MESSAGE_CHARS), ("fix", echo.MESSAGE_CHARS)):
            text = getattr(self, name)
            if text is not None:
                object.__setattr__(self, name, echo.message(text, limit))
        if self.spec is not None:
            object.__setattr__(self, "spec", echo.spec_name(self.spec))

    @property
    def rule_id(self) -> str:
        return self.rule.id


def finding(r: Rule, location: Location, message: str, *, spec: str | None = None, fix: str | None = None,
            severity: Severity | None = None, **data) -> Finding:
    return Finding(r, severity or r.severity, location, message, spec, fix, data)
