"""The rules: one `Rule` object per id, grouped by topic, each with its check and its documentation.

documents.py (GSG001-GSG019 and GSG055: the files, the spec fields, the backend arguments), placement.py (GSG008,
GSG020-GSG025), memory.py (GSG030-GSG045 but GSG035 and GSG041, and GSG053-GSG054), fleet.py (GSG035, GSG041),
server.py (GSG050-GSG052); registry.py lists them all in id order. A check is a pure function of the stage results
(core/stages/results.py) and yields findings of its own rule only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator

if TYPE_CHECKING:
    from gpustack_guard.core.findings import Finding
    from gpustack_guard.core.stages.results import Evaluation, Results


def per_spec(check: Callable[[Evaluation], Iterable[Finding]]) -> Callable[[Results], Iterator[Finding]]:
    """A check over one spec's results, run for every spec in apply order."""
    def over_all(results: Results) -> Iterator[Finding]:
        for ev in results.evaluations:
            yield from check(ev)
    over_all.__name__ = check.__name__
    over_all.__doc__ = check.__doc__
    over_all.per_spec = check  # type: ignore[attr-defined]  # the pipeline runs these in one pass (registry.py)
    return over_all
