"""One pool or several: size a shared deployment, the shared one with priority, one pool per workload and (three
workloads or more) pools of several, compare their numbers, decide, and say what would make a target fit.

Every pool is sized by the same rule (sizing.size): its workloads' p99 requests, longest first, as validate's
GSG033 prices the emitted spec (core/memory/demand.py).
"""

from __future__ import annotations

from dataclasses import field, replace

from gpustack_guard.core.advise.candidates import Evaluate, Target, hypothetical_fleet, judge
from gpustack_guard.core.advise.sizing import COMPACT_KV, MAX_FRACTION, Sizing, peak_tokens, size
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.engine_knobs import KNOBS
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.fleet.model import MAX_GPUS_PER_WORKER
from gpustack_guard.core.rules import fleet as RF
from gpustack_guard.core.rules import memory as RM
from gpustack_guard.core.rules import placement as RP
from gpustack_guard.core.units import gib
from gpustack_guard.core.values import frozen_value

SHARED, SEPARATE, PRIORITY, GROUPED = "shared", "separate", "shared-with-priority", "grouped"
DOES_NOT_FIT = "does-not-fit"
MAX_WORKLOADS = 8  # workloads one advice compares: groupings grow as 2^(n-1), so the search is kept small
# Groupings tried for three workloads or more: the workloads sorted by request length, cut into consecutive
# groups (long prompts with long prompts: what delays short ones is a long prefill ahead of them), fewest
# groups first (each pays the weights once more), at most this many, each on one even split of the GPUs.
MAX_GROUPINGS = 16
MAX_EXTRA_GPUS = 16  # how far "add N GPUs" looks before saying the model needs a different GPU size
# the engine's own 8-bit KV arguments (llama.cpp's quantised V cache needs flash attention: all three go together)
KV_NAME = {family: f"{COMPACT_KV[family]} KV ({knobs.compact_kv_args()})" for family, knobs in KNOBS.items()}


@frozen_value(eq=True, repr=True)
class Share:
    """What one workload gets from one option."""

    workload: Workload
    deployment: Sizing
    at_peak: int  # its requests running at once when every workload is at peak (p99 lengths)

    @property
    def queued(self) -> int:
        return max(0, self.workload.concurrency - self.at_peak)

    @property
    def alone(self) -> int:
        return min(self.deployment.alone(self.workload), self.deployment.sequences)


@frozen_value(eq=True, repr=True)
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

    @property
    def full_gpu(self) -> bool:
        return all(d.full_gpu for d in self.deployments)

    def slos(self) -> dict[str, dict]:
        """Each workload's TTFT target, as the pool serving it would meet it (None: no estimate possible)."""
        return {name: report for d in self.deployments if d.fits for name, report in d.slo_report().items()}

    @property
    def meets_slos(self) -> bool:
        return self.fits and all(r["meets"] is not False for r in self.slos().values())


@frozen_value(eq=True, repr=True)
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
    served on average). Requests are priced at p99 lengths, the rule the pool was sized by."""
    if not sizing.fits:
        return tuple(Share(w, sizing, 0) for w in workloads)
    capacity, seqs = sizing.capacity_tokens, sizing.sequences
    demand = peak_tokens(workloads)
    total = sum(w.concurrency for w in workloads)
    if demand <= capacity and total <= seqs:
        return tuple(Share(w, sizing, w.concurrency) for w in workloads)
    if priority:
        shares, tokens_left, seqs_left = {}, capacity, seqs
        for w in sorted(workloads, key=lambda w: (not w.interactive, w.p99_tokens)):
            n = max(0, min(w.concurrency, tokens_left // w.p99_tokens, seqs_left))
            shares[w.name] = n
            tokens_left -= n * w.p99_tokens
            seqs_left -= n
        return tuple(Share(w, sizing, shares[w.name]) for w in workloads)
    scale = min(capacity / demand, seqs / total, 1.0)
    return tuple(Share(w, sizing, int(w.concurrency * scale)) for w in workloads)


def _queueing(kind: str, shares: tuple[Share, ...]) -> str:
    waiting = [s for s in shares if s.queued]
    if not shares or not shares[0].deployment.fits:
        return "nothing runs: the deployment does not fit"
    if kind in (SEPARATE, GROUPED):
        if not waiting:
            return "each pool holds its own peak; nothing queues"
        return "; ".join(f"{s.workload.name}'s pool queues {s.queued} of {s.workload.concurrency} at peak"
                         for s in waiting)
    if kind == PRIORITY and any(not s.workload.interactive for s in shares):
        return _priority_queueing(shares)
    if not waiting:
        return "the pool holds every workload's peak at p99 lengths; nothing queues"
    return "first come, first served: " + "; ".join(
        f"{s.workload.name} waits for {s.queued} of {s.workload.concurrency}" for s in waiting)


def batch_room(shares: tuple[Share, ...]) -> dict[str, int]:
    """Requests of each batch workload the pool holds beside every interactive workload's peak (p99 lengths)."""
    sizing = shares[0].deployment
    interactive = sum(s.workload.concurrency * s.workload.p99_tokens for s in shares if s.workload.interactive)
    busy = sum(s.workload.concurrency for s in shares if s.workload.interactive)
    left_tokens, left_seqs = max(sizing.capacity_tokens - interactive, 0), max(sizing.sequences - busy, 0)
    return {s.workload.name: min(left_tokens // s.workload.p99_tokens, left_seqs)
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
    if kind in (SEPARATE, GROUPED):
        shares = tuple(share for d in deployments for share in _peak_shares(d, d.workloads, priority=False))
        order = {w.name: i for i, w in enumerate(workloads)}
        shares = tuple(sorted(shares, key=lambda sh: order[sh.workload.name]))
        return Option(kind, deployments, shares, _queueing(kind, shares))
    shares = _peak_shares(deployments[0], workloads, priority=kind == PRIORITY)
    return Option(kind, deployments, shares, _queueing(kind, shares))


def _splits(gpus: int, groups: tuple[tuple[Workload, ...], ...]) -> list[tuple[int, ...]]:
    """GPU counts per pool: every split for two pools, an even split (the remainder to the pools of the heaviest
    KV demand, every workload of a pool counted) for more."""
    k = len(groups)
    if gpus < k:
        return []
    if k == 2:
        return [(a, gpus - a) for a in range(1, gpus)]
    counts = [gpus // k] * k
    heaviest = sorted(range(k), key=lambda i: -peak_tokens(groups[i]))
    for i in heaviest[: gpus % k]:
        counts[i] += 1
    return [tuple(counts)]


def groupings(workloads: tuple[Workload, ...], gpus: int) -> list[tuple[tuple[Workload, ...], ...]]:
    """Pools of several workloads for three or more: consecutive runs of the workloads sorted by p99 length,
    two pools or more (one pool is `shared`, one each is `separate`), fewest pools first, at most MAX_GROUPINGS."""
    ordered = sorted(workloads, key=lambda w: w.p99_tokens)
    k = len(ordered)
    found = []
    for cuts in range(1, 2 ** (k - 1)):
        bounds = [i + 1 for i in range(k - 1) if cuts >> i & 1]
        groups = tuple(tuple(ordered[a:b]) for a, b in zip([0] + bounds, bounds + [k]))
        if 2 <= len(groups) < k and len(groups) <= gpus:
            found.append(groups)
    found.sort(key=len)
    return found[:MAX_GROUPINGS]


def _pool_name(base: str, group: tuple[Workload, ...]) -> str:
    return f"{base}-{group[0].name}" if len(group) == 1 else f"{base}-{group[0].name}-and-{len(group) - 1}-more"


def _pools(kind: str, target: Target, evaluate: Evaluate, base: str, workloads: tuple[Workload, ...],
           groups: tuple[tuple[Workload, ...], ...], cache: dict) -> Option | None:
    """The best GPU split for these pools, each sized by the same rule as the shared pool; None when no split
    exists or none passes validate together."""
    best: Option | None = None
    for split in _splits(len(target.gpu_ids), groups):
        start, deployments = 0, []
        for count, group in zip(split, groups):
            ids = target.gpu_ids[start:start + count]
            start += count
            key = (ids, tuple(w.name for w in group), kind == SEPARATE)  # every input of size() below
            if key not in cache:  # the same pool on the same GPUs recurs across groupings and splits
                cache[key] = size(target, evaluate, _pool_name(base, group), ids, group, replicas=kind == SEPARATE)
            deployments.append(cache[key])
        option = _option(kind, tuple(deployments), workloads)
        if option.fits:  # judged together once more: GPU bookings and overcommit are fleet-wide
            together = judge(evaluate, [d.chosen.document for d in deployments])
            if any(not j.clean for j in together):
                continue
        else:
            option = replace(option, note=_weights_twice(target, option.deployments))
        if best is None or _pool_key(option) > _pool_key(best):
            best = option
    return best


def _pool_key(o: Option):
    """The most served, then every layer on the GPUs and the TTFT targets met, then the fewest weight bytes, then
    the most even split (the natural one to show)."""
    return (o.fits, o.serves_peak, o.full_gpu, o.meets_slos, o.served_fraction, -o.resident_weights,
            -(max(len(d.gpu_ids) for d in o.deployments) - min(len(d.gpu_ids) for d in o.deployments)))


def _separate(target: Target, evaluate: Evaluate, base: str, workloads: tuple[Workload, ...],
              cache: dict) -> Option:
    gpus = len(target.gpu_ids)
    if gpus < len(workloads):
        return Option(SEPARATE, (), (), "nothing runs: there is no split",
                      f"{gpus} GPU{'s' if gpus > 1 else ''} cannot hold {len(workloads)} separate pools "
                      "(one GPU each at least)")
    best = _pools(SEPARATE, target, evaluate, base, workloads, tuple((w,) for w in workloads), cache)
    if best is None:  # every split fitted alone but not together (bookings or overcommit on shared GPUs)
        return Option(SEPARATE, (), (), "nothing runs: no split passes validate together")
    return best


def _grouped(target: Target, evaluate: Evaluate, base: str, workloads: tuple[Workload, ...],
             cache: dict) -> Option | None:
    """The best pools-of-several option (three workloads or more), or None when no grouping is possible."""
    best: Option | None = None
    for groups in groupings(workloads, len(target.gpu_ids)):
        option = _pools(GROUPED, target, evaluate, base, workloads, groups, cache)
        if option is not None and (best is None or _pool_key(option) > _pool_key(best)):
            best = option
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
    return replace(shared, best=judged)


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
        if attempts:  # the layout that comes closest
            est = max(attempts, key=lambda j: j.numbers.kv_available).numbers
            if est.kv_available < 0:
                hints.append(f"{KV_NAME[target.family]} alone is not enough: weights, activation and overheads "
                             f"exceed the engine's budget by {gib(-est.kv_available)} per GPU before any KV cache")
            else:
                hints.append(f"{KV_NAME[target.family]} alone is not enough: estimated maximum length "
                             f"{est.estimated_max_model_len:,}, the workloads need {shared_max_len(workloads):,}")
    have = len(target.gpu_ids)
    # Start where the weights alone could fit: the candidates' own weight bytes over 95 % of a GPU, with a 10 %
    # margin for what is replicated per rank; the search, not this bound, decides.
    # the model's weights: one candidate's per-GPU bytes times the GPUs of one replica (tensor x pipeline)
    weights = min((j.estimate.weights * tp * pp for _, (tp, pp), j in shared.tried if j.estimate), default=0)
    first = max(1, int(0.9 * weights / (target.gpu_memory * MAX_FRACTION)) - have)
    # the hypothetical worker holds at most MAX_GPUS_PER_WORKER (the fleet's bound): a search past it built a
    # fleet the model refuses (an internal error), or of millions of GPUs for a tiny --gpu-memory (a hang)
    last = min(first + MAX_EXTRA_GPUS, MAX_GPUS_PER_WORKER - have + 1)
    if first >= last:
        hints.append(f"more than {MAX_GPUS_PER_WORKER:,} GPUs of {gib(target.gpu_memory)} would be needed, one "
                     "worker's most: use larger GPUs or a quantised checkpoint")
        return tuple(hints)
    for extra in range(first, last):
        fleet, ids = hypothetical_fleet(target, have + extra)
        trial = size(target, evaluate, base, ids, workloads, fleet=fleet)
        if trial.serves_peak or (not shared.fits and trial.fits):
            what = "holds every workload's peak" if trial.serves_peak else "starts"
            hints.insert(0, f"add {extra} GPU{'s' if extra > 1 else ''} of {gib(target.gpu_memory)} "
                            f"({have + extra} in all): it {what} with {' '.join(trial.chosen.parameters)}")
            break
    else:
        hints.append(f"{have + last - 1} GPUs of {gib(target.gpu_memory)} are still not "
                     "enough: use larger GPUs or a quantised checkpoint")
    return tuple(hints)


def shared_max_len(workloads: tuple[Workload, ...]) -> int:
    return max(w.p99_tokens for w in workloads)


# What more GPUs, another layout or another fraction can change; any other error means no candidate can be judged.
SIZE_RULES = {r.id for r in (RP.PARALLEL_SIZE, RP.ADMISSION_FRACTION, RP.ADMISSION_BOOKING, RP.NO_PLACEMENT,
                             RM.NO_KV_MEMORY, RM.KV_BELOW_MAX_LEN, RF.GPU_OVERCOMMIT, RF.STARTUP_FREE_MEMORY,
                             RM.OFFLOAD_OVER_GPU, RM.TP_HEADS, RM.SAMPLER_WARMUP_OOM, RM.STATE_BLOCKS_BELOW_SEQS)}


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
    if len(workloads) > MAX_WORKLOADS:
        raise GsgError(f"{len(workloads)} workloads: advise compares at most {MAX_WORKLOADS} (the groupings it "
                       "tries double with each one); advise a subset at a time", where="--workload")
    shared = size(target, evaluate, base, target.gpu_ids, workloads)
    _refuse_unjudgeable(shared)
    options = [_option(SHARED, (shared,), workloads)]
    if len(workloads) > 1:
        cache: dict = {}
        options.append(_option(PRIORITY, (_with_priority(target, evaluate, shared),), workloads))
        options.append(_separate(target, evaluate, base, workloads, cache))
        grouped = _grouped(target, evaluate, base, workloads, cache) if len(workloads) > 2 else None
        if grouped is not None:
            options.append(grouped)
    decision, chosen, reason = _decide(options, workloads)
    hints: tuple[str, ...] = ()
    if chosen is None or not chosen.serves_peak:
        hints = _would_fit(target, evaluate, base, workloads, shared)
    return Advice(target, workloads, decision, tuple(options), chosen, reason, hints)


def _slo_misses(option: Option) -> str:
    """The TTFT targets an option misses, with its estimates, in a clause."""
    missed = [(name, r) for name, r in option.slos().items() if r["meets"] is False]
    return "; ".join(f"{name}'s estimated time to first token {r['ttft_estimate_s']:.2f} s misses its "
                     f"{r['ttft_slo_s']:g} s target" for name, r in missed)


def _decide(options: list[Option], workloads: tuple[Workload, ...]) -> tuple[str, Option | None, str]:
    by_kind = {o.kind: o for o in options}
    shared, priority = by_kind[SHARED], by_kind.get(PRIORITY)
    mixed = len({w.interactive for w in workloads}) > 1
    one_pool = priority if (priority is not None and mixed and priority.fits) else shared
    if len(workloads) == 1:
        if shared.fits:
            reason = "one workload, one deployment"
            if shared.deployments[0].offload is not None:
                reason += f"; it keeps layers on the CPU ({shared.deployments[0].offload.line()})"
            return SHARED, shared, reason
        return DOES_NOT_FIT, None, f"does not fit: {shared.deployments[0].why_not}"
    pools = [o for o in options if o.kind in (SEPARATE, GROUPED)]
    fitting = [o for o in (one_pool, *pools) if o.fits]
    if not fitting:
        why = shared.deployments[0].why_not
        return DOES_NOT_FIT, None, f"no option fits these GPUs: {why}"
    # Serving every peak first, then every layer on the GPUs, then the TTFT targets; the one pool wins a tie
    # (weights paid once, no router hop), then fewer pools.
    key = lambda o: (o.serves_peak, o.full_gpu, o.meets_slos)  # noqa: E731
    top = max(key(o) for o in fitting)
    best = next(o for o in fitting if key(o) == top)
    kind = SHARED if best in (shared, priority) else best.kind
    slo = _slo_misses(best)
    if best.serves_peak and best is one_pool:
        others = [o for o in pools if o.serves_peak]
        also = (f" ({others[0].kind} pools would hold it too, paying {gib(others[0].resident_weights)} of weights "
                f"instead of {gib(best.resident_weights)})" if others else "")
        ahead = ""
        if mixed:
            vllm = best.deployments[0].chosen.document["backend"] == "vLLM"
            ahead = (", and priority keeps the interactive workload ahead when the batch job bursts" if vllm else
                     ", and the batch client's cap keeps room for the interactive peak")
        text = "one deployment holds every workload's peak: the weights are paid once and no router hop is added"
        text += also + ahead
        if slo:
            text += f"; no option meets every TTFT target: {slo}"
        return SHARED, best, text
    if best.serves_peak:
        pooled = "separate pools" if best.kind == SEPARATE else "pools of " + ", ".join(
            "+".join(w.name for w in d.workloads) for d in best.deployments)
        why = ("the shared pool misses a TTFT target: " + _slo_misses(one_pool) if one_pool.serves_peak
               else "only they hold every workload's peak at p99 lengths")
        text = f"{pooled}: {why}"
        if one_pool.fits:
            text += f" (resident weights {gib(best.resident_weights)} instead of {gib(one_pool.resident_weights)})"
        return kind, best, text + (f"; still: {slo}" if slo else "")
    best = max(fitting, key=lambda o: (o.full_gpu, sum(s.at_peak for s in o.shares)))  # the one pool on a tie
    kind = SHARED if best in (shared, priority) else best.kind
    running = sum(s.at_peak for s in best.shares)
    total = sum(w.concurrency for w in workloads)
    return kind, best, (f"no option holds every peak; {best.kind} runs the most requests at once ({running} of "
                        f"{total}): {best.queueing}" + (f"; {slo}" if slo else ""))
