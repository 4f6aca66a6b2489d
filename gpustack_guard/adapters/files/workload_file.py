"""Reading workload files (`workloads/*.yaml`) with file:line:column errors."""

from __future__ import annotations

from pathlib import Path

from gpustack_guard.adapters.files.spec_loader import display_path, read_yaml_file
from gpustack_guard.core.advise.workload import Workload, ordering_problem
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.record_engine import ValidationError
from gpustack_guard.core.spec.check import field_path


def load_workload(path_text: str) -> Workload:
    path = Path(path_text)
    shown = display_path(path)
    docs = read_yaml_file(path, "workload file not found")
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise GsgError("a workload file is one mapping (name, prompt_tokens, output_tokens, concurrency)",
                       where=shown)
    doc = docs[0]
    try:
        workload = Workload.validate(doc.data)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        loc = field_path(first["loc"], doc.data)
        line, column = doc.position(loc, key=first["type"] == "extra_forbidden")
        dotted = ".".join(str(p) for p in loc) or "(document)"
        message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise GsgError(f"'{dotted}': {message}{more}", where=f"{shown}:{line}:{column}") from None
    problem = ordering_problem(doc.data)
    if problem is not None:
        where, message = problem
        line, column = doc.position(where)
        raise GsgError(message, where=f"{shown}:{line}:{column}")
    return workload


def load_workloads(paths: list[str]) -> tuple[Workload, ...]:
    """Every file given, in order; two workloads of one name would make their deployments collide."""
    workloads: list[Workload] = []
    seen: dict[str, str] = {}
    for path in paths:
        workload = load_workload(path)
        if workload.name in seen:
            raise GsgError(f"workload '{workload.name}' is also defined in {seen[workload.name]}",
                           where=display_path(Path(path)))
        seen[workload.name] = display_path(Path(path))
        workloads.append(workload)
    return tuple(workloads)
