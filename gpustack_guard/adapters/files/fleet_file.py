"""Reading and writing fleet snapshot files (YAML or JSON) with file:line errors."""

from __future__ import annotations

from pathlib import Path

from gpustack_guard.adapters.files.spec_loader import display_path, read_yaml_file
from gpustack_guard.core import echo
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.fleet.model import FORMAT_VERSION, WORKER_STATES, Fleet, gpu_name_problem
from gpustack_guard.core.record_engine import ValidationError
from gpustack_guard.core.spec.check import field_path


def load_fleet(path_text: str) -> Fleet:
    path = Path(path_text)
    shown = display_path(path)
    docs = read_yaml_file(path, "fleet snapshot file not found")
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise GsgError("a fleet snapshot is one mapping with 'clusters:'", where=shown)
    doc = docs[0]
    version = doc.data.get("format_version", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise GsgError(f"snapshot format_version {version} is newer than this gsg understands ({FORMAT_VERSION})",
                       where=shown)
    try:
        fleet = Fleet.validate(doc.data)
    except ValidationError as error:
        err = error.errors(include_url=False, include_input=False)[0]
        loc = field_path(err["loc"], doc.data)
        line, column = doc.position(loc, key=err["type"] == "extra_forbidden")
        dotted = ".".join(str(p) for p in loc) or "(document)"
        more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise GsgError(f"'{dotted}': {err['msg']}{more}", where=f"{shown}:{line}:{column}") from None
    if fleet.format_version > FORMAT_VERSION:  # written as text ("2"), which the check above does not see
        line, column = doc.position(("format_version",))
        raise GsgError(f"snapshot format_version {fleet.format_version} is newer than this gsg understands "
                       f"({FORMAT_VERSION})", where=f"{shown}:{line}:{column}")
    _check_names(fleet, doc, shown)
    _check_workers(fleet, doc, shown)
    return fleet


def _check_workers(fleet: Fleet, doc, shown: str) -> None:
    """What the record's own bounds cannot see: a state GPUStack never writes, a GPU name that is not a device
    name, one GPU listed twice."""
    for c, cluster in enumerate(fleet.clusters):
        for w, worker in enumerate(cluster.workers):
            if worker.state not in WORKER_STATES:
                # placement counts "ready" only: 'Ready' or 'online' would drop the worker without a word
                line, column = doc.position(("clusters", c, "workers", w, "state"))
                raise GsgError(f"'clusters.{c}.workers.{w}.state': worker '{echo.value(worker.name)}' has state "
                               f"'{echo.value(worker.state)}', not one of GPUStack's ({', '.join(WORKER_STATES)})",
                               where=f"{shown}:{line}:{column}")
            for g, gpu in enumerate(worker.gpus):
                problem = gpu_name_problem(gpu.name)
                if problem is not None:
                    line, column = doc.position(("clusters", c, "workers", w, "gpus", g, "name"))
                    raise GsgError(f"'clusters.{c}.workers.{w}.gpus.{g}.name': {problem}",
                                   where=f"{shown}:{line}:{column}")
            repeat = worker.repeated_gpu()
            if repeat is not None:
                gpu = worker.gpus[repeat[0]]
                line, column = doc.position(("clusters", c, "workers", w, "gpus", repeat[0], "index"))
                raise GsgError(f"'clusters.{c}.workers.{w}.gpus.{repeat[0]}.index': worker '{worker.name}' lists GPU "
                               f"{gpu.type}:{gpu.index} twice (gpus {repeat[1]} and {repeat[0]}): one GPU would "
                               "count as two", where=f"{shown}:{line}:{column}")


def _check_names(fleet: Fleet, doc, shown: str) -> None:
    """Cluster and worker names that --cluster and GPU ids can match. Two clusters of one name, or two workers of
    one name in a cluster, are one thing listed twice: --cluster could pick either, and GPU ids (worker:type:index)
    of the two workers would collide, one hiding the other's GPUs and bookings. GPUStack keeps both unique, so a
    snapshot that repeats one was edited or merged by hand."""
    clusters: dict[str, int] = {}
    for c, cluster in enumerate(fleet.clusters):
        _usable_name("cluster", cluster.name, ("clusters", c, "name"), doc, shown)
        first = clusters.setdefault(cluster.name, c)
        if first != c:
            line, column = doc.position(("clusters", c, "name"))
            raise GsgError(f"'clusters.{c}.name': cluster '{echo.value(cluster.name)}' is listed twice (clusters "
                           f"{first} and {c}): merge them or rename one", where=f"{shown}:{line}:{column}")
        workers: dict[str, int] = {}
        for w, worker in enumerate(cluster.workers):
            _usable_name("worker", worker.name, ("clusters", c, "workers", w, "name"), doc, shown)
            first = workers.setdefault(worker.name, w)
            if first != w:
                line, column = doc.position(("clusters", c, "workers", w, "name"))
                raise GsgError(f"'clusters.{c}.workers.{w}.name': worker '{echo.value(worker.name)}' is listed twice "
                               f"in cluster '{echo.value(cluster.name)}' (workers {first} and {w}): its GPUs would "
                               "hide each other", where=f"{shown}:{line}:{column}")


def _usable_name(kind: str, name: str, path: tuple, doc, shown: str) -> None:
    """A cluster or worker name is what --cluster, gpu_selector ids and labels match: an empty one, `prod ` beside
    `prod`, or one holding an escape sequence matches nothing as it is shown (GPUStack's names never do)."""
    if name and name == name.strip() and name.isprintable():
        return
    line, column = doc.position(path)
    dotted = ".".join(map(str, path))
    problem = "is empty" if not name else "has surrounding whitespace or a control character"
    raise GsgError(f"'{dotted}': {kind} name '{echo.value(name)}' {problem}", where=f"{shown}:{line}:{column}")


def dump_fleet(fleet: Fleet) -> str:
    from gpustack_guard.adapters.files.yaml_dump import dump  # PyYAML's emitter: only a snapshot writes a fleet

    return dump(fleet.to_dict(mode="json", exclude_none=True), allow_unicode=False)
