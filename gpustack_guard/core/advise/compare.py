"""One pool or two: size a shared deployment, separate deployments and the shared one with priority, compare
their numbers, decide, and say what would make a target fit that does not."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack_guard.core.advise.candidates import Evaluate, Target, hypothetical_fleet, judge
from gpustack_guard.core.advise.sizing import COMPACT_KV, MAX_FRACTION, Sizing, size
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.rules import fleet as RF
from gpustack_guard.core.rules import memory as RM
from gpustack_guard.core.rules import placement as RP
from gpustack_guard.core.units import gib

SHARED, SEPARATE, PRIORITY = "shared", "separate", "shared-with-priority"
DOES_NOT_FIT = "does-not-fit"
MAX_EXTRA_GPUS = 16  # how far "add N GPUs" looks before saying the model needs a different GPU size
KV_NAME = {"vllm": "fp8 KV (--kv-cache-dtype fp8)", "sglang": "fp8 KV (--kv-cache-dtype fp8_e5m2)",
           "llamacpp": "q8_0 KV (--cache-type-k/v q8_0)"}


@dataclass(frozen=True)
class Share:
    """What one workload gets from one option."""

    workload: Workload
    deployment: Sizing
    at_peak: int  # its requests running at once when every workload is at peak (p95 lengths)

    @property
    def queued(self) -> int:
        return max(0, self.workload.concurrency - self.at_peak)

    @property
    def alone(self) -> int:
        return min(self.deployment.alone(self.workload), self.deployment.sequences)


@dataclass(frozen=True)
class Option:
    kind: str
    deployments: tuple[Sizing, ...]
    shares: tuple[Share, ...]
    queueing: str  # what queues where, in a sentence
    note: str = ""  # why it does not fit, when the reason is the option itself (weights paid twice)

    @property
    def fits(self) -> bool:
        return bool(self.deployments) and all(d.fits for d in self.deployments)

    @property
    def serves_peak(self) -> bool:
        return self.fits and all(s.queued == 0 for s in self.shares)

    @property
    def resident_weights(self) -> int:
        """Weight bytes resident on the GPUs, summed over deployments (two pools pay them twice)."""
        return sum(d.chosen.numbers.weights * len(d.gpu_ids) for d in self.deployments if d.fits)

    @property
    def served_fraction(self) -> float:
        return min(s.at_peak / s.workload.concurrency for s in self.shares) if self.shares else 0.0


@dataclass(frozen=True)
class Advice:
    target: Target
    workloads: tuple[Workload, ...]
    decision: str  # shared | separate | does-not-fit
    options: tuple[Option, ...]
    chosen: Option | None
    reason: str
    would_fit: tuple[str, ...] = field(default=())  # for does-not-fit (and partial fits): what would make it fit


def _peak_shares(sizing: Sizing, workloads: tuple[Workload, ...], *, priority: bool) -> tuple[Share, ...]:
    """Requests of each workload running at once at the joint peak. With priority, interactive workloads take
    the pool first and batch gets the rest; without it the pool is shared in proportion (first come, first
    served on average)."""
    if not sizing.fits:
        return tuple(Share(w, sizing, 0) for w in workloads)
    capacity, seqs = sizing.capacity_tokens, sizing.sequences
    demand = sum(w.concurrency * w.p95_tokens for w in workloads)
    total = sum(w.concurrency for w in workloads)
    if demand <= capacity and total <= seqs:
        return tuple(Share(w, sizing, w.concurrency) for w in workloads)
    if priority:
        shares, tokens_left, seqs_left = {}, capacity, seqs
        for w in sorted(workloads, key=lambda w: (not w.interactive, w.p95_tokens)):
            n = max(0, min(w.concurrency, tokens_left // w.p95_tokens, seqs_left))
            shares[w.name] = n
            tokens_left -= n * w.p95_tokens
            seqs_left -= n
        return tuple(Share(w, sizing, shares[w.name]) for w in workloads)
    scale = min(capacity / demand, seqs / total, 1.0)
    return tuple(Share(w, sizing, int(w.concurrency * scale)) for w in workloads)


def _queueing(kind: str, shares: tuple[Share, ...]) -> str:
    waiting = [s for s in shares if s.queued]
    if not shares or not shares[0].deployment.fits:
        return "nothing runs: the deployment does not fit"
    if kind == SEPARATE:
        if not waiting:
            return "each pool holds its own peak; nothing queues"
        return "; ".join(f"{s.workload.name}'s pool queues {s.queued} of {s.workload.concurrency} at peak"
                         for s in waiting)
    if kind == PRIORITY and any(not s.workload.interactive for s in shares):
        return _priority_queueing(shares)
    if not waiting:
        return "the pool holds every workload's peak at p95 lengths; nothing queues"
    return "first come, first served: " + "; ".join(
        f"{s.workload.name} waits for {s.queued} of {s.workload.concurrency}" for s in waiting)


def batch_room(shares: tuple[Share, ...]) -> dict[str, int]:
    """Requests of each batch workload the pool holds beside every interactive workload's peak (p95 lengths)."""
    sizing = shares[0].deployment
    interactive = sum(s.workload.concurrency * s.workload.p95_tokens for s in shares if s.workload.interactive)
    busy = sum(s.workload.concurrency for s in shares if s.workload.interactive)
    left_tokens, left_seqs = max(sizing.capacity_tokens - interactive, 0), max(sizing.sequences - busy, 0)
    return {s.workload.name: min(left_tokens // s.workload.p95_tokens, left_seqs)
            for s in shares if not s.workload.interactive}


def _priority_queueing(shares: tuple[Share, ...]) -> str:
    room = batch_room(shares)
    sends = {s.workload.name: s.workload.concurrency for s in shares}
    caps = ", ".join(f"{name} at {n} in flight (it sends {sends[name]})" if n else
                     f"{name}: none fits beside that peak, it runs only while the interactive side is quieter"
                     for name, n in room.items())
    backend = shares[0].deployment.chosen.document["backend"]
    first = ("interactive requests go first (request priority 0, batch 1: vLLM's scheduler preempts batch before "
             "chat)" if backend == "vLLM" else f"{backend} gets no priority flag from gsg, so first come, first served")
    return f"{first}; the batch side holds the queue: cap its client at what fits beside the interactive peak — {caps}"


def _option(kind: str, deployments: tuple[Sizing, ...], workloads: tuple[Workload, ...]) -> Option:
    if kind == SEPARATE:
        shares = tuple(_peak_shares(d, d.workloads, priority=False)[0] for d in deployments)
        return Option(kind, deployments, shares, _queueing(kind, shares))
    shares = _peak_shares(deployments[0], workloads, priority=kind == PRIORITY)
    return Option(kind, deployments, shares, _queueing(kind, shares), _mixed_pool_note(deployments[0]))


def _mixed_pool_note(sizing: Sizing) -> str:
    """validate's GSG033 prices every sequence at the longest workload's p99; say what the mix really needs."""
    if len(sizing.workloads) < 2 or not sizing.fits or not sizing.chosen.has(RM.KV_OVERSUBSCRIBED):
        return ""
    longest = max(w.p99_tokens for w in sizing.workloads)
    return (f"validate warns GSG033 because it counts all {sizing.sequences} sequences at the longest p99 "
            f"({longest:,} tokens); at p95 lengths the workloads' peak needs {sizing.peak_tokens:,} tokens and the "
            f"pool holds {sizing.capacity_tokens:,}")


def _splits(gpus: int, workloads: tuple[Workload, ...]) -> list[tuple[int, ...]]:
    """GPU counts per workload for separate deployments: every split for two workloads, an even split (the
    remainder to the heaviest KV demand) for more."""
    k = len(workloads)
    if gpus < k:
        return []
    if k == 2:
        return [(a, gpus - a) for a in range(1, gpus)]
    counts = [gpus // k] * k
    heaviest = sorted(range(k), key=lambda i: -workloads[i].concurrency * workloads[i].p95_tokens)
    for i in heaviest[: gpus % k]:
        counts[i] += 1
    return [tuple(counts)]


def _separate(target: Target, evaluate: Evaluate, base: str, workloads: tuple[Workload, ...]) -> Option:
    gpus = len(target.gpu_ids)
    if gpus < len(workloads):
        return Option(SEPARATE, (), (), "nothing runs: there is no split",
                      f"{gpus} GPU{'s' if gpus > 1 else ''} cannot hold {len(workloads)} separate pools "
                      "(one GPU each at least)")
    best: Option | None = None
    for split in _splits(len(target.gpu_ids), workloads):
        start, deployments = 0, []
        for count, w in zip(split, workloads):
            ids = target.gpu_ids[start:start + count]
            start += count
            deployments.append(size(target, evaluate, f"{base}-{w.name}", ids, (w,)))
        option = _option(SEPARATE, tuple(deployments), workloads)
        if option.fits:  # judged together once more: GPU bookings and overcommit are fleet-wide
            together = judge(evaluate, [d.chosen.document for d in deployments])
            if any(j.errors for j in together):
                continue
        else:
            option = Option(option.kind, option.deployments, option.shares, option.queueing,
                            _weights_twice(target, option.deployments))
        # the most served, then the fewest weight bytes, then the most even split (the natural one to show)
        key = lambda o: (o.fits, o.serves_peak, o.served_fraction, -o.resident_weights,  # noqa: E731
                         -(max(len(d.gpu_ids) for d in o.deployments) - min(len(d.gpu_ids) for d in o.deployments)))
        if best is None or key(option) > key(best):
            best = option
    if best is None:  # every split fitted alone but not together (bookings or overcommit on shared GPUs)
        return Option(SEPARATE, (), (), "nothing runs: no split passes validate together")
    return best


def _weights_twice(target: Target, deployments: tuple[Sizing, ...]) -> str:
    """Resident weights of every pool, from the candidates' own estimates, against the GPUs' memory."""
    weights = []
    for d in deployments:
        est = next((j.estimate for _, _, j in d.tried if j.estimate is not None), None)
        if est is None:
            return ""
        weights.append(est.weights * len(d.gpu_ids))
    memory = target.gpu_memory * len(target.gpu_ids)
    times = "twice" if len(weights) == 2 else f"{len(weights)} times"
    return (f"resident weights are paid {times}: {' + '.join(gib(w) for w in weights)} = "
            f"{gib(sum(weights))} of {gib(memory)} GPU memory")


def _with_priority(target: Target, evaluate: Evaluate, shared: Sizing) -> Sizing:
    """The shared deployment with vLLM's priority scheduler on (the flag changes no memory; judged anyway)."""
    if not shared.fits or target.family != "vllm":
        return shared
    doc = dict(shared.chosen.document, backend_parameters=shared.chosen.parameters + ["--scheduling-policy=priority"])
    judged = judge(evaluate, [doc])[0]
    if not judged.clean:
        return shared
    return Sizing(shared.name, shared.workloads, shared.gpu_ids, judged, shared.kv_dtype, shared.layout,
                  shared.tried)


def _would_fit(target: Target, evaluate: Evaluate, base: str, workloads: tuple[Workload, ...],
               shared: Sizing) -> tuple[str, ...]:
    hints = []
    compact = shared.compact_kv_alternative()
    if compact is not None and compact is not shared.best:
        est = compact.numbers
        hints.append(f"{KV_NAME[target.family]} gives a pool of {est.kv_capacity_tokens:,} tokens, "
                     f"{est.max_num_seqs} sequences at once")
    elif not shared.fits:
        attempts = [j for dtype, _, j in shared.tried if dtype == COMPACT_KV[target.family] and j.estimate]
        if attempts:
            est = attempts[-1].numbers
            if est.kv_available < 0:
                hints.append(f"{KV_NAME[target.family]} alone is not enough: weights, activation and overheads "
                             f"exceed the engine's budget by {gib(-est.kv_available)} per GPU before any KV cache")
            else:
                hints.append(f"{KV_NAME[target.family]} alone is not enough: estimated maximum length "
                             f"{est.estimated_max_model_len:,}, the workloads need {shared_max_len(workloads):,}")
    have = len(target.gpu_ids)
    # Start where the weights alone could fit: the candidates' own weight bytes over 95 % of a GPU, with a 10 %
    # margin for what is replicated per rank; the search, not this bound, decides.
    weights = max((j.estimate.weights * len(shared.gpu_ids) for _, _, j in shared.tried if j.estimate), default=0)
    first = max(1, int(0.9 * weights / (target.gpu_memory * MAX_FRACTION)) - have)
    for extra in range(first, first + MAX_EXTRA_GPUS):
        fleet, ids = hypothetical_fleet(target, have + extra)
        trial = size(target, evaluate, base, ids, workloads, fleet=fleet)
        if trial.serves_peak or (not shared.fits and trial.fits):
            what = "holds every workload's peak" if trial.serves_peak else "starts"
            hints.insert(0, f"add {extra} GPU{'s' if extra > 1 else ''} of {gib(target.gpu_memory)} "
                            f"({have + extra} in all): it {what} with {' '.join(trial.chosen.parameters)}")
            break
    else:
        hints.append(f"{have + first + MAX_EXTRA_GPUS - 1} GPUs of {gib(target.gpu_memory)} are still not "
                     "enough: use larger GPUs or a quantised checkpoint")
    return tuple(hints)


def shared_max_len(workloads: tuple[Workload, ...]) -> int:
    return max(w.p99_tokens for w in workloads)


# What more GPUs, another layout or another fraction can change; any other error means no candidate can be judged.
SIZE_RULES = {r.id for r in (RP.PARALLEL_SIZE, RP.ADMISSION_FRACTION, RP.ADMISSION_BOOKING, RP.NO_PLACEMENT,
                             RM.NO_KV_MEMORY, RM.KV_BELOW_MAX_LEN, RF.GPU_OVERCOMMIT, RF.STARTUP_FREE_MEMORY,
                             RM.OFFLOAD_OVER_GPU, RM.TP_HEADS)}


def _refuse_unjudgeable(shared: Sizing) -> None:
    """A model without facts (or a spec the checker refuses) fits nowhere: one line, not a GPU count."""
    if shared.fits:
        return
    errors = [f for _, _, j in shared.tried for f in j.errors]
    blocking = [f for f in errors if f.rule.id not in SIZE_RULES]
    if blocking and len(blocking) == len(errors):
        raise GsgError(f"no candidate can be judged: {blocking[0].rule.id} {blocking[0].message}")


def advise(target: Target, evaluate: Evaluate, workloads: tuple[Workload, ...], base: str) -> Advice:
    """Advice for `workloads` of `target` on its GPUs: every number comes from `evaluate` (the validate
    pipeline), so advice validate rejects cannot be produced."""
    shared = size(target, evaluate, base, target.gpu_ids, workloads)
    _refuse_unjudgeable(shared)
    options = [_option(SHARED, (shared,), workloads)]
    if len(workloads) > 1:
        options.append(_option(PRIORITY, (_with_priority(target, evaluate, shared),), workloads))
        options.append(_separate(target, evaluate, base, workloads))
    decision, chosen, reason = _decide(options, workloads)
    hints: tuple[str, ...] = ()
    if chosen is None or not chosen.serves_peak:
        hints = _would_fit(target, evaluate, base, workloads, shared)
    return Advice(target, workloads, decision, tuple(options), chosen, reason, hints)


def _decide(options: list[Option], workloads: tuple[Workload, ...]) -> tuple[str, Option | None, str]:
    by_kind = {o.kind: o for o in options}
    shared, priority, separate = by_kind[SHARED], by_kind.get(PRIORITY), by_kind.get(SEPARATE)
    mixed = len({w.interactive for w in workloads}) > 1
    one_pool = priority if (priority is not None and mixed and priority.fits) else shared
    if len(workloads) == 1:
        if shared.fits:
            return SHARED, shared, "one workload, one deployment"
        return DOES_NOT_FIT, None, f"does not fit: {shared.deployments[0].why_not}"
    if shared.serves_peak:
        also = (f" (separate pools would hold it too, paying {gib(separate.resident_weights)} of weights instead "
                f"of {gib(shared.resident_weights)})" if separate is not None and separate.serves_peak else "")
        ahead = ""
        if mixed:
            vllm = one_pool.fits and one_pool.deployments[0].chosen.document["backend"] == "vLLM"
            ahead = (", and priority keeps the interactive workload ahead when the batch job bursts" if vllm else
                     ", and the batch client's cap keeps room for the interactive peak")
        return SHARED, one_pool, ("one deployment holds every workload's peak: the weights are paid once and "
                                  "no router hop is added" + also + ahead)
    if separate is not None and separate.serves_peak:
        return SEPARATE, separate, ("only separate pools hold every workload's peak at p95 lengths"
                                    + (f" (resident weights {gib(separate.resident_weights)} instead of "
                                       f"{gib(shared.resident_weights)})" if shared.fits else ""))
    fitting = [o for o in (one_pool, separate) if o is not None and o.fits]
    if not fitting:
        why = shared.deployments[0].why_not
        return DOES_NOT_FIT, None, f"neither one pool nor separate pools fit these GPUs: {why}"
    best = max(fitting, key=lambda o: sum(s.at_peak for s in o.shares))  # first: the one pool, on a tie
    kind = SEPARATE if best.kind == SEPARATE else SHARED
    running = sum(s.at_peak for s in best.shares)
    total = sum(w.concurrency for w in workloads)
    return kind, best, (f"no option holds every peak; {best.kind} runs the most requests at once ({running} of "
                        f"{total}): {best.queueing}")
