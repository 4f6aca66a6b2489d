"""gsg verify --log: an engine's start-up log held against gsg's estimate of the same deployment."""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

from gpustack_guard.adapters.files.logs import LogLimits, LogReading, read_log_lines
from gpustack_guard.adapters.files.output import out
from gpustack_guard.commands.estimate import EstimateOptions, Evaluation, evaluate, model_facts, parse_env
from gpustack_guard.core import echo
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.secrets import scrub
from gpustack_guard.core.units import gib
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import live as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import ObservedLog, mask_secrets, parse_log
from gpustack_guard.reporters import json_head
from gpustack_guard.reporters.markdown import untrusted_cell

FORMAT_VERSION = "1.0"  # of the verify JSON document; minor: additive, major: breaking
ENGINES = {"vllm": P.VLLM, "sglang": P.SGLANG, "llama.cpp": P.LLAMACPP, "llamacpp": P.LLAMACPP}
BACKEND = L.ENGINE_NAME  # the spec's backend name of each engine the parser knows


class VerifyFormat(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


@frozen_value(eq=True, repr=True)
class VerifyOptions:
    log: str
    backend: str | None = None  # default: the engine whose lines the log holds
    tolerance_percent: float = C.DEFAULT_TOLERANCE_PERCENT
    output: VerifyFormat = VerifyFormat.TEXT
    model: str | None = None  # default: the model the log names
    gpu_memory: str | None = None  # default: the total the log prints (vLLM V0, failures)
    gpu_name: str = ""
    backend_version: str | None = None  # default: the version the log prints
    quantization: str | None = None  # a pre-quantized checkpoint the model name resolves to unquantized
    backend_args: tuple[str, ...] = ()  # the deployment's arguments the log does not print (its command line)
    record: str | None = None  # a folder: write what the log showed as a test vector there
    source: str | None = None  # where the log is from, kept in the vector
    env: tuple[str, ...] = ()  # KEY=VALUE pairs of the deployment's env the log does not print


@dataclass
class Rebuilt:
    evaluation: Evaluation | None
    model: str | None  # the name the facts were found under
    backend_args: list[str]
    problem: str | None  # why no estimate was made
    version: str | None = None  # the engine version the estimate used
    foreign: int = 0  # memory the log shows other processes held at start (compare.foreign_at_start)
    options: EstimateOptions | None = None  # what the estimate was asked (--record keeps what replay needs of it)


def _engine(backend: str | None) -> str | None:
    if backend is None:
        return None
    engine = ENGINES.get(backend.lower())
    if engine is None:
        raise GsgError(f"--backend must be vllm, sglang or llama.cpp, not '{echo.value(backend)}'")
    return engine


# setuptools-scm's version for a vLLM checkout whose git history holds no release tag (a shallow clone, a fork):
# "0.1.dev8168+g475c1a0" in a V1 engine's own line (search-index file 21240355802), which no 0.1 release printed
_SCM_FALLBACK = re.compile(r"0\.1\.dev\d+")


def _version(log: ObservedLog, given: str | None) -> str | None:
    if given:
        return given
    version = log.engine_version
    if log.engine == P.LLAMACPP and version:  # llama.cpp prints its build number; gsg names builds b1234
        return f"b{version}" if version.isdigit() and version != "0" else None
    if log.engine == P.VLLM and version and _SCM_FALLBACK.match(version):
        return None  # a source build without its release tags: the number names no release (give --backend-version)
    return version


def _flag_name(token: str) -> str:
    return token.split("=", 1)[0].lstrip("-").replace("_", "-")


def merged_args(printed: list[str], given: tuple[str, ...]) -> list[str]:
    """The log's arguments, then each given one the log did not print: what the engine printed it ran with
    wins over a command line copied from elsewhere. A given flag's value may be its own token (`--k v`)."""
    seen = {_flag_name(flag) for flag in printed}
    merged, skipping = list(printed), False
    for token in given:
        if token.startswith("-"):
            skipping = _flag_name(token) in seen
        if not skipping:
            merged.append(token)
        elif not token.startswith("-") or "=" in token:
            skipping = False  # the printed flag's value is consumed; the next token stands on its own
    return merged


def rebuild(opts: VerifyOptions, log: ObservedLog) -> Rebuilt:
    """The same deployment estimated from the log's own model, arguments, GPU and version (offline)."""
    version = _version(log, opts.backend_version)
    args = merged_args(C.backend_args(log, version), opts.backend_args)
    observed = log.terms()
    total = opts.gpu_memory or (f"{observed[P.GPU_MEMORY]}B" if P.GPU_MEMORY in observed else None)
    if total is None:
        return Rebuilt(None, None, args, "the log does not print the GPU's memory: give --gpu-memory (e.g. 80GiB)")
    names = [opts.model] if opts.model else C.model_candidates(log.model)
    if not names:
        return Rebuilt(None, None, args, "the log does not name the model: give --model")
    facts, found, last_error = None, None, ""
    for name in names:
        try:
            facts, found = model_facts(name, offline=True), name
            break
        except GsgError as exc:
            last_error = str(exc)
    if facts is None:
        what = opts.model or log.model or ""
        return Rebuilt(None, None, args, f"model '{echo.value(what)}' cannot be resolved offline from gsg's catalog "
                                         f"or the hub cache ({echo.value(last_error, 160)}): give --model NAME or "
                                         f"a config.json path")
    # llama.cpp names each device it splits the model over (CUDA0, CUDA1, ...): they are the deployment's GPUs
    devices = len(log.gpu_ranks()) if log.engine == P.LLAMACPP else 0
    gpu_name = opts.gpu_name or log.gpu_name or ""
    foreign = _foreign(log, total, args, gpu_name)
    options = EstimateOptions(model=found or "", gpu_memory=total, backend=BACKEND[log.engine or P.VLLM],
                              backend_args=tuple(args), gpus=devices if devices > 1 else None,
                              backend_version=version,
                              gpu_name=gpu_name,
                              quantization=opts.quantization or C.logged_gguf_quantization(log),
                              offline=True, gpu_used=foreign,
                              env=tuple(f"{key}={value}" for key, value in
                                        C.deployment_env(log, parse_env(opts.env), version).items()))
    try:
        evaluation = evaluate(options, facts)
        return Rebuilt(evaluation, found, args, None, evaluation.estimate.version, foreign, options)
    except GsgError as exc:
        return Rebuilt(None, found, args, f"no estimate for the logged arguments: {exc}", version)


def _foreign(log: ObservedLog, total_text: str, args: list[str], gpu_name: str) -> int:
    """compare.foreign_at_start for the rebuilt layout (0 when the size or the arguments do not read)."""
    from gpustack_guard.core import args as A
    from gpustack_guard.core.units import parse_size

    try:
        total = parse_size(total_text)
        if log.engine == P.LLAMACPP:  # each device prints its own free memory: no layout to take first
            return C.llamacpp_foreign_at_start(log, total)
        tp, pp = A.parallel_size(A.as_dict(A.parse(list(args), "sglang")), "sglang")
    except (A.ArgError, ValueError):
        return 0  # the estimate itself names what does not read
    return C.foreign_at_start(log, total, tp, pp, gpu_name)


def report(opts: VerifyOptions, log: ObservedLog, rebuilt: Rebuilt, notes: list[str]) -> dict:
    observed = log.terms()
    est = rebuilt.evaluation.estimate if rebuilt.evaluation else None
    estimated = C.same_device_terms(log, est, C.estimated_terms(est)) if est is not None else None
    compared = C.deltas(observed, estimated) if estimated is not None else []
    estimated_verdict = rebuilt.evaluation.verdict if rebuilt.evaluation else None
    engine_verdict = C.engine_verdict(est.verdict, estimated_verdict) if est is not None else None
    reasons = C.reasons(log, engine_verdict, compared, opts.tolerance_percent) if engine_verdict else []
    missing = log.missing(_version(log, opts.backend_version))
    if rebuilt.problem:
        reasons.append(f"no estimate: {rebuilt.problem}")
    if missing:
        reasons.append("the log lacks " + ", ".join(missing))
    elif C.observed_verdict(log) is None:
        reasons.append("the log stops before the engine started or failed")
    return {
        **json_head(FORMAT_VERSION), "log": opts.log, "engine": log.engine, "engine_version": log.engine_version,
        "model": log.model, "model_resolved_as": rebuilt.model, "estimated_version": rebuilt.version,
        "model_facts": rebuilt.evaluation.facts.source if rebuilt.evaluation else None,
        "gpu_name": log.gpu_name, "started": log.started, "failure": log.failure, "failure_kind": log.failure_kind,
        "failure_line": log.failure_line, "observed_verdict": C.observed_verdict(log),
        "estimated_verdict": estimated_verdict, "engine_verdict": engine_verdict,
        "binding_rank": log.binding_rank(), "ranks": log.ranks, "observed": observed, "estimated": estimated,
        "deltas": [d.as_json() for d in compared], "arguments": log.args, "backend_args": rebuilt.backend_args,
        "missing": missing, "notes": [*notes, *log.notes, *(est.notes if est is not None else ()),
                                      *C.kernel_notes(log, est.extra.get("mxfp4_backend") if est is not None else None),
                                      *C.output_layer_notes(log, rebuilt.version),
                                      *C.graph_took_notes(log, rebuilt.version),
                                      *([f"{gib(rebuilt.foreign)} of the GPU was in use by other processes when "
                                         "the engine started (its free memory before the weights, against a clean "
                                         "GPU): counted as foreign memory, as validate counts a worker's"]
                                        if rebuilt.foreign else [])],
        "estimate_problem": rebuilt.problem, "tolerance_percent": opts.tolerance_percent,
        "reasons": reasons, "result": "fail" if reasons else "pass",
    }


def _shown(term: str, value) -> str:
    if value is None:
        return "-"
    kind = next((k for t, _, k in C.ROWS if t == term), "tokens")
    if kind == "bytes":
        return gib(value)
    if kind == "times":
        return f"{value:.2f}x"
    return f"{value:,}"


def _difference(term: str, delta: dict) -> str:
    if delta["difference"] is None:
        return ""
    diff = delta["difference"]
    kind = next((k for t, _, k in C.ROWS if t == term), "tokens")
    text = (f"{'+' if diff >= 0 else '-'}{gib(abs(diff))}" if kind == "bytes"
            else f"{diff:+.2f}x" if kind == "times" else f"{diff:+,}")
    return text + (f" ({delta['percent']:+.1f} %)" if delta["percent"] is not None else "")


def _rows(doc: dict) -> list[tuple[str, str, str, str]]:
    by_term = {d["term"]: d for d in doc["deltas"]}
    rows = []
    for term, label, _ in C.ROWS:
        observed = doc["observed"].get(term)
        estimated = (doc["estimated"] or {}).get(term)
        if observed is None and estimated is None:
            continue
        delta = by_term.get(term, {"difference": None, "percent": None})
        rows.append((label, _shown(term, observed), _shown(term, estimated), _difference(term, delta)))
    return rows


def _headline(doc: dict) -> str:
    engine = BACKEND.get(doc["engine"] or "", "unknown engine")
    version = doc["engine_version"] or (f"{doc['estimated_version']} (not in the log)"
                                        if doc["estimated_version"] else "version not printed")
    model = echo.value(doc["model_resolved_as"] or doc["model"] or "model not printed", 120)
    facts = f" (facts: {doc['model_facts']})" if doc["model_facts"] else ""
    return f"{echo.value(doc['log'], 160)}: {engine} {echo.value(version)}, {model}{facts}"


def _status(doc: dict) -> str:
    if doc["failure"]:
        return f"failed at start-up (line {doc['failure_line']:,}): {echo.message(doc['failure'], 300)}"
    return "started" if doc["started"] else "no start-up outcome in the log"


def render_text(doc: dict) -> str:
    lines = [_headline(doc), f"engine: {_status(doc)}"]
    if len(doc["ranks"]) > 1:
        lines.append(f"binding rank: {echo.value(doc['binding_rank'])} of {len(doc['ranks'])} "
                     f"({', '.join(echo.value(r) for r in doc['ranks'])})")
    rows = _rows(doc)
    if rows:
        width = max(len(r[0]) for r in rows)
        lines.append(f"  {'':<{width}}  {'observed':>14}  {'estimated':>14}  difference")
        lines += [f"  {label:<{width}}  {seen:>14}  {est:>14}  {diff}".rstrip() for label, seen, est, diff in rows]
    if doc["engine_verdict"]:
        lines.append(f"verdict: engine {doc['observed_verdict'] or 'unknown'}, estimate {doc['engine_verdict']}"
                     + (f" ({doc['estimated_verdict']})" if doc["estimated_verdict"] != doc["engine_verdict"] else ""))
    lines += [f"note: {echo.message(n, 300)}" for n in doc["notes"]]
    result = "pass" if doc["result"] == "pass" else "fail: " + "; ".join(doc["reasons"])
    lines.append(f"result: {echo.message(result, 1000)}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Log text in a markdown cell: the shared escaping (no HTML, links or column breaks), backticks too (the log
    chose them)."""
    return untrusted_cell(echo.value(text, 200)).replace("`", "\\`")


def render_markdown(doc: dict) -> str:
    lines = [f"### gsg verify: {_cell(_headline(doc))}", "", f"Engine: {_cell(_status(doc))}", ""]
    if len(doc["ranks"]) > 1:
        lines += [f"Binding rank: {_cell(doc['binding_rank'] or '')} of {len(doc['ranks'])}", ""]
    rows = _rows(doc)
    if rows:
        lines += ["| term | observed | estimated | difference |", "|---|---:|---:|---:|"]
        lines += [f"| {label} | {seen} | {est} | {diff} |" for label, seen, est, diff in rows]
        lines.append("")
    lines += [f"- note: {_cell(n)}" for n in doc["notes"]]
    result = "**pass**" if doc["result"] == "pass" else "**fail**: " + _cell("; ".join(doc["reasons"]))
    lines.append(f"Result: {result}")
    return "\n".join(lines) + "\n"


def _record(opts: VerifyOptions, directory: str, doc: dict, rebuilt: Rebuilt, secrets: list[str]) -> None:
    """--record DIR: the report's inputs and figures as a test vector (commands/verify_record.py)."""
    from gpustack_guard.commands.verify_record import record, source_of
    from gpustack_guard.core.verify import vector

    evaluation = rebuilt.evaluation
    total = evaluation.estimate.gpu_total if evaluation else doc["observed"].get(P.GPU_MEMORY)
    asked = rebuilt.options
    inputs = None if asked is None else vector.EstimateInputs(asked.gpus, asked.gpu_used, asked.env,
                                                              asked.quantization)
    built = vector.build(doc, facts=evaluation.facts if evaluation else None, backend=BACKEND[doc["engine"]],
                         gpu_name=opts.gpu_name or doc["gpu_name"] or "", gpu_memory_bytes=total,
                         source=source_of(opts.source, opts.log), inputs=inputs)
    record(directory, built, secrets)


def run(opts: VerifyOptions) -> int:
    if opts.source is not None and not opts.record:
        raise GsgError("--source names where a recorded log is from: it needs --record DIR")
    engine = _engine(opts.backend)
    problem = C.tolerance_problem(opts.tolerance_percent)
    if problem:
        raise GsgError(problem)
    limits = LogLimits.from_env()
    reading = LogReading()
    log, secrets = parse_log(read_log_lines(opts.log, limits, reading), engine)
    if log.engine is None:
        cut = f" ({'; '.join(reading.notes)})" if reading.notes else ""
        raise GsgError(f"no start-up line of vLLM, SGLang or llama.cpp in its {reading.lines:,} line(s){cut}",
                       where=opts.log)
    rebuilt = rebuild(opts, log)
    doc = report(opts, log, rebuilt, reading.notes)
    if opts.record:
        _record(opts, opts.record, doc, rebuilt, secrets)
    if opts.output is VerifyFormat.JSON:
        text = json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
    elif opts.output is VerifyFormat.MARKDOWN:
        text = render_markdown(doc)
    else:
        text = render_text(doc)
    out(scrub(mask_secrets(text), secrets))
    return EXIT_FAIL if doc["reasons"] else EXIT_OK
