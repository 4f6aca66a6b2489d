"""`gsg verify --log FILE --record DIR`: the start-up a log showed, written as a test vector; and the replay of a
vector through today's estimate (the regression test of every recorded vector uses it)."""

from __future__ import annotations

import os
from pathlib import Path

from gpustack_guard.adapters.files.output import known_secrets, note, write_atomic
from gpustack_guard.adapters.files.regular_file import Unreadable, open_regular
from gpustack_guard.commands.estimate import EstimateOptions, evaluate
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.secrets import scrub
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import vector as V
from gpustack_guard.core.verify.logparse import ObservedLog, mask_secrets

SOURCE_MARK = "## source:"  # the first line of the project's fixture logs names where the log was published
SOURCE_PROBE_BYTES = 4096
MAX_SOURCE_CHARS = 500


def _source_line(log_path: str) -> str | None:
    """The `## source: URL` line at the top of a fixture log, if there is one (never more than 4 KiB read)."""
    try:
        with open_regular(log_path) as handle:
            head = handle.read(SOURCE_PROBE_BYTES)
    except (Unreadable, OSError):
        return None
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    if not first.startswith(SOURCE_MARK):
        return None
    return first[len(SOURCE_MARK):].strip() or None


def source_of(given: str | None, log_path: str) -> str:
    """Where the log came from: --source, else the log's own `## source:` line, else the log's file name (not
    its path: a path names users and hosts). A URL's password and tokens are masked."""
    text = given if given is not None else (_source_line(log_path) or os.path.basename(log_path))
    text = " ".join(text.split())[:MAX_SOURCE_CHARS]
    if not text:
        raise GsgError("--source is empty: give a URL or a short text naming where the log is from")
    return mask_secrets(text)


def record(directory: str, vector: dict, secrets: list[str]) -> str:
    """Write the vector into `directory` under its collision-free name, atomically; never over another file.
    Returns the path written (or already holding this very vector)."""
    text = scrub(V.dumps(vector), known_secrets() + secrets)
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise GsgError("--record must name a folder, not a file", where=directory)
    path = folder / V.file_name(vector, text)
    if path.exists():
        try:
            with open_regular(path) as handle:
                same = handle.read(len(text.encode("utf-8")) + 1) == text.encode("utf-8")
        except (Unreadable, OSError):
            same = False
        if not same:
            raise GsgError("exists and differs from this vector; nothing written (remove it or record into "
                           "another folder)", where=str(path))
        note(f"gsg: {path} already holds this vector")
        return str(path)
    try:
        write_atomic(str(path), text)
    except OSError as exc:
        raise GsgError(f"cannot write: {(exc.strerror or str(exc)).lower()}", where=str(folder)) from None
    note(f"gsg: recorded {path}")
    return str(path)


def replay(vector: dict, tolerance_percent: float | None = None) -> tuple[dict, str, list[str]]:
    """Estimate the vector's deployment again from its own facts, arguments, GPU and version: the estimated
    terms, the estimate's engine verdict, and the reasons verify would fail for (the same rules as verify)."""
    if vector.get("model_facts") is None:
        raise GsgError("the vector holds no model facts (it was recorded without an estimate): nothing to replay")
    gpu = vector["gpu"]
    if not isinstance(gpu.get("memory_bytes"), int):
        raise GsgError("the vector holds no GPU memory (gpu.memory_bytes)")
    facts = V.facts_from_json(vector["model_facts"])
    try:
        inputs = V.inputs_from_json(vector.get("estimate_inputs"))
    except V.VectorError as exc:
        raise GsgError(str(exc)) from None
    options = EstimateOptions(model=str(vector["model"]), gpu_memory=f"{gpu['memory_bytes']}B",
                              backend=str(vector["backend"]), backend_args=tuple(vector["backend_args"]),
                              backend_version=vector.get("estimated_version"), gpu_name=str(gpu.get("name") or ""),
                              offline=True, gpus=inputs.gpus, gpu_used=inputs.gpu_used_bytes, env=inputs.env,
                              quantization=inputs.quantization)
    estimate = evaluate(options, facts).estimate
    estimated = C.estimated_terms(estimate)
    log = ObservedLog(engine=vector["engine"], started=bool(vector["started"]),
                      failure_kind=vector.get("failure_kind"))
    tolerance = vector.get("tolerance_percent", C.DEFAULT_TOLERANCE_PERCENT) if tolerance_percent is None \
        else tolerance_percent
    reasons = C.reasons(log, estimate.verdict, C.deltas(vector["observed"], estimated), tolerance)
    return estimated, estimate.verdict, reasons
