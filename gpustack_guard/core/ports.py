"""What the pure core needs from the edges, as types: the adapters implement these, the core only names them.

Keeping them here lets `core/` import nothing from `adapters/` (tests/architecture checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    from gpustack_guard.core.fleet.model import Fleet
    from gpustack_guard.core.memory.facts import ModelFacts
    from gpustack_guard.core.pipeline import Report
    from gpustack_guard.core.spec.check import SpecDoc
    from gpustack_guard.core.spec.model import DeploymentSpec

YamlPath = tuple  # tuple[str | int, ...]: keys and list indexes from the document root


class LocatedData(Protocol):
    """A parsed document that can say where each of its paths was written (1-based line, column)."""

    data: Any
    start_line: int
    duplicate_keys: list[tuple[YamlPath, int, int]]

    def position(self, path: YamlPath, *, key: bool = False) -> tuple[int, int]: ...


@frozen_value(eq=True)
class TemplateOutput:
    """What a guard template renders: arguments the spec may not contradict, overridable defaults, env."""

    __repr__ = fields_repr

    pinned: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    # the guard.vars keys the template (and what it includes or imports) reads; None when that is not known
    # statically (vars used whole: looped over, passed to a filter; an include whose name is computed)
    variables: frozenset[str] | None = None
    source: str = ""  # the template file used, as shown to the user
    shadows: tuple[str, ...] = ()  # files of the same name further down the search path, which it hides


class TemplateError(Exception):
    """A template that cannot be found, parsed or rendered; `file`/`line` point into the template."""

    def __init__(self, message: str, file: str, line: int = 0):
        self.file, self.line = file, line
        super().__init__(message)


class TemplateRenderer(Protocol):
    def render(self, name: str, context: dict[str, Any]) -> TemplateOutput: ...


# Model facts for a spec: (facts, None) or (None, why they are unknown). `str` is the spec file, for relative paths.
Resolve = Callable[["DeploymentSpec", str], "tuple[ModelFacts | None, str | None]"]

# Judge spec documents as `gsg validate` does (the advisor's only arithmetic): the edge wires the pipeline with its
# renderer and resolver. Fleet None means the fleet the user gave; a Fleet is a hypothetical one ("more GPUs").
EvaluateSpecs = Callable[["list[SpecDoc]", "Fleet | None"], "Report"]
