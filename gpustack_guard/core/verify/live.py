"""gsg verify SPECS, the pure half: a running instance's logged start-up held against its spec's estimate rebuilt
on that instance's own GPUs, and the two findings that come of it (GSG044, GSG045).

The adapter fetches the log and feeds it through StartUpWatch (the same parser as `gsg verify --log`); this module
never does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from gpustack_guard.core import echo
from gpustack_guard.core.engine_knobs import KNOBS
from gpustack_guard.core.findings import Finding, Severity, finding
from gpustack_guard.core.memory import demand, engine
from gpustack_guard.core.memory.estimate import FITS, Estimate
from gpustack_guard.core.rules import memory as M
from gpustack_guard.core.stages.placement import replica_injection
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import LogParser, ObservedLog

if TYPE_CHECKING:
    from gpustack_guard.core.fleet.model import GpuRef
    from gpustack_guard.core.render import RenderedSpec
    from gpustack_guard.core.stages.results import Evaluation

# Once the engine has printed its KV pool (or failed), the figures verify reads follow within a few dozen lines
# (max concurrency, CUDA graphs, compute buffers); this many lines without another figure means the start-up part
# is in and the rest (request logs of a long-running server) is left unread.
START_UP_GRACE_LINES = 2_000
# The engine the log names, as the spec's backend family spells it
FAMILY = {P.VLLM: "vllm", P.SGLANG: "sglang", P.LLAMACPP: "llamacpp"}
ENGINE_NAME = {P.VLLM: "vLLM", P.SGLANG: "SGLang", P.LLAMACPP: "llama.cpp"}


class StartUpWatch:
    """The --log parser fed line by line, saying when the start-up part of the log is in."""

    def __init__(self, grace_lines: int = START_UP_GRACE_LINES):
        self.parser = LogParser()
        self.grace_lines = grace_lines
        self._hits = 0
        self._last_figure = 0  # the line of the last pattern hit, once the outcome is known
        self._outcome_known = False

    def feed(self, line: str) -> bool:
        """Parse one line; False once the outcome is known and no figure came for `grace_lines` lines."""
        self.parser.feed(line)
        hits = self.parser.matches  # engine-neutral lines count: torch's OOM is an outcome
        if hits != self._hits:
            self._hits, self._last_figure = hits, self.parser.lines
            # not kept once known: a restart drops the outcome with the start-up that printed it
            self._outcome_known = any(_outcome(state.log) for state in self.parser.states.values())
        return not (self._outcome_known and self.parser.lines - self._last_figure >= self.grace_lines)

    def result(self) -> tuple[ObservedLog, list[str]]:
        return self.parser.result(), self.parser.secret_values()


def _outcome(log: ObservedLog) -> bool:
    """The engine printed its KV pool or a start-up failure."""
    if log.failure or P.KV_TOKENS in log.engine_terms:
        return True
    return any(P.KV_CACHE in terms or P.GPU_BLOCKS in terms for terms in log.ranks.values())


def estimate_on(rendered: RenderedSpec, gpus: Sequence[GpuRef], env: dict[str, str] | None = None) -> Estimate:
    """The spec's estimate on these GPUs (one replica, leader first), with the arguments GPUStack's worker adds
    for that layout, as the estimation stage computes it; ValueError when the arithmetic cannot run. `env`: the
    deployment's environment when not the spec's own (env_seen_in)."""
    if rendered.facts is None:
        raise ValueError(f"no memory arithmetic possible: {rendered.facts_error}")
    spec, facts = rendered.spec, rendered.facts
    added = replica_injection(rendered, gpus)  # as placement computes it for a planned replica
    return engine.estimate(rendered.family, facts, [(g.total, g.gpu.name) for g in gpus],
                           rendered.flags | added.flags(), spec.backend_version, spec.guard.policy,
                           # the env the deployment is sent, as the estimation stage reads it
                           env=rendered.env if env is None else env)


def env_seen_in(rendered: RenderedSpec, log: ObservedLog) -> dict[str, str] | None:
    """The spec's environment with what the instance's log printed over it (the sampler path it took, the engine
    generation, a group without P2P): printed lines win, as in `gsg verify --log`. What the log does not print
    stays as the spec says; unlike `--log`, nothing is assumed for it (a spec is a deployment gsg knows, a bare log
    is not). None when the log changes nothing (the estimate already made stands)."""
    own = dict(rendered.env)  # what the deployment is sent: the template's env too, references resolved
    seen = {**own, **C.printed_env(log)}
    return None if seen == own else seen


@frozen_value(eq=True, repr=True)
class Instance:
    """A running instance as verify names it in lines and findings."""

    id: int
    name: str
    worker: str
    gpu_ids: tuple[str, ...] = ()

    def label(self) -> str:
        return f"instance {echo.value(self.name, 120)} on {echo.value(self.worker, 80)}"


@dataclass
class Verified:
    """One instance's comparison: the JSON record and its findings."""

    record: dict
    findings: list[Finding] = field(default_factory=list)


def _seats(observed: dict, log: ObservedLog, est: Estimate) -> int:
    """The sequences the engine admits: as it logged them, else as the estimate derived them from the flags."""
    for value in (observed.get(P.MAX_RUNNING), log.args.get("max_num_seqs"), log.args.get("max_running_requests")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return est.max_num_seqs


def workload_need(rendered: RenderedSpec, est: Estimate, observed: dict, log: ObservedLog
                  ) -> tuple[int, int, str, tuple[demand.Stream, ...]]:
    """(KV tokens the admitted sequences need at worst, seats, how the need is named, the streams)."""
    seats = _seats(observed, log, est)
    length = observed.get(P.MAX_MODEL_LEN)
    max_len = int(length) if isinstance(length, (int, float)) and length > 0 else est.max_model_len
    streams, basis = demand.streams_of(rendered.spec.guard.workload, max_len)
    return demand.peak_kv_tokens(streams, seats), seats, basis, streams


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def verify_instance(ev: Evaluation, instance: Instance, est: Estimate, log: ObservedLog,
                    tolerance_percent: float) -> Verified:
    """The instance's logged figures beside the estimate on its GPUs; GSG044 and GSG045 when they apply."""
    r = ev.rendered
    observed = log.terms()
    estimated = C.estimated_terms(est)
    compared = C.deltas(observed, estimated)
    kv = next((d for d in compared if d.term == P.KV_TOKENS), None)
    needed, seats, basis, streams = workload_need(r, est, observed, log)
    seen_kv = observed.get(P.KV_TOKENS)
    record: dict = {
        "instance": instance.name, "id": instance.id, "worker": instance.worker, "gpus": list(instance.gpu_ids),
        "gpu_name": log.gpu_name, "engine": log.engine, "engine_version": log.engine_version,
        "estimated_version": est.version, "started": log.started, "failure": log.failure,
        "observed_verdict": C.observed_verdict(log), "estimated_verdict": est.verdict,
        "observed": observed, "estimated": estimated, "deltas": [d.as_json() for d in compared],
        "kv_capacity_tokens": kv.as_json() if kv is not None else None,
        "workload": {"needed_tokens": needed, "sequences": seats, "basis": basis,
                     "headroom_observed_tokens": int(seen_kv) - needed if seen_kv is not None else None,
                     "headroom_estimated_tokens": est.kv_capacity_tokens - needed},
        "missing": log.missing(est.version), "notes": list(log.notes), "findings": [],
    }
    result = Verified(record)
    policy = r.spec.guard.policy
    started = C.observed_verdict(log) == FITS
    capacity = seen_kv
    if seen_kv is not None and not demand.declared(r.spec.guard.workload):  # full-length sequences (hybrids)
        capacity = demand.full_length_capacity(int(seen_kv), observed.get(P.MAX_CONCURRENCY), streams[0].tokens)
    if started and seen_kv is not None and capacity is not None and r.family != "llamacpp" \
            and policy.kv_oversubscription != "off" and needed > capacity:
        result.findings.append(_below_workload(ev, instance, int(seen_kv), int(capacity), needed, seats, basis,
                                               streams))
    if started and kv is not None and kv.percent is not None and abs(kv.percent) > tolerance_percent:
        result.findings.append(finding(
            M.OBSERVED_KV_OFF_ESTIMATE, r.doc.at("name"),
            f"{instance.label()}: the engine logged a KV pool of {kv.observed:,} tokens, the estimate on its "
            f"GPUs is {kv.estimated:,} ({kv.percent:+.1f} %, tolerance {tolerance_percent:g} %)",
            spec=r.name, severity=M.policy_severity(policy, Severity.WARNING.value), fix=M.OBSERVED_KV_OFF_ESTIMATE.fix,
            instance=instance.name, worker=instance.worker, observed_kv_tokens=kv.observed,
            estimated_kv_tokens=kv.estimated, percent=kv.percent, tolerance_percent=tolerance_percent))
    record["findings"] = [f.rule.id for f in result.findings]
    return result


def _below_workload(ev: Evaluation, instance: Instance, logged: int, capacity: int, needed: int, seats: int,
                    basis: str, streams: tuple[demand.Stream, ...]) -> Finding:
    r = ev.rendered
    policy = r.spec.guard.policy
    flag = KNOBS[r.family].max_running
    fit = demand.seats_fitting(streams, capacity, seats)
    asked = f"{seats} x {streams[0].tokens:,} tokens ({basis})" if streams[0].in_flight is None \
        else f"{seats} ({basis})"
    return finding(
        M.OBSERVED_KV_BELOW_WORKLOAD, M.flag_location(ev, flag),
        f"{instance.label()}: the engine logged a KV pool of {logged:,} tokens, but {flag} {asked} needs "
        f"{needed:,} tokens ({_percent(logged, needed):g} % of it): {fit} such sequences fit at once; the rest "
        "queue or get preempted",
        spec=r.name, severity=M.policy_severity(policy, policy.kv_oversubscription),
        fix=f"set {flag} {max(fit, 1)} or lower {M.LEN_FLAG[r.family]}" + M.fp8_hint(r),
        instance=instance.name, worker=instance.worker, observed_kv_tokens=logged, needed_kv_tokens=needed,
        sequences=seats, sequences_fitting=fit)


def _model_names(text: str | None) -> set[str]:
    """The names a model path or id can be known by, compared without case; ModelScope's cache writes a dot in a
    folder name as '___' (Qwen2___5-7B)."""
    return {name.lower().replace("___", ".") for name in C.model_candidates(text)}


def model_mismatch(rendered: RenderedSpec, log: ObservedLog) -> str | None:
    """Why the log is another model's (its start-up names a model the spec's source is not), or None. Told only
    when both sides name a model folder or repo: a GGUF file's name (llama.cpp, a quantised download) need not
    carry its repo's, and ollama's runner loads a blob by its digest, so a llama.cpp log, a .gguf log model or spec
    is never called another model."""
    spec = rendered.spec
    if not log.model or log.engine == P.LLAMACPP or log.model.lower().endswith(".gguf") or spec.is_gguf \
            or not spec.source_id:
        return None
    ours = _model_names(spec.source_id) | {spec.name.lower()}  # the deployment's name: a served-model-name
    if ours & _model_names(log.model):
        return None
    return (f"the log is of model '{echo.value(log.model, 160)}', but the spec deploys "
            f"'{echo.value(spec.source_id, 160)}': another model's log (a reused instance id, or a log the server "
            "mixed up), not compared")


def nothing_to_compare(log: ObservedLog) -> str | None:
    """Why a log of the right engine still cannot be judged: it holds no KV pool figure (the start-up failed first,
    or the log stops before the pool was printed), or None."""
    if log.pool_sized():
        return None
    if log.failure:
        return (f"the engine's start-up failed before it logged a KV pool ({echo.value(log.failure, 300)}): nothing "
                "to compare")
    return ("the log stops before the engine logged its KV pool (still starting, or the start-up part was cut): "
            "nothing to compare")


def engine_mismatch(rendered: RenderedSpec, log: ObservedLog) -> str | None:
    """Why the log cannot be this spec's engine (a log of another backend), or None."""
    if log.engine is None or FAMILY.get(log.engine) == rendered.family:
        return None
    return (f"the log is {ENGINE_NAME[log.engine]}'s, but the spec deploys {rendered.spec.backend}: not compared")
