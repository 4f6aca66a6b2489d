"""Size one deployment for a set of workloads: search layouts and KV dtypes, tune the memory fraction, the
maximum length and the sequences at once, each step judged by the validate pipeline.

What the workloads decide (the vLLM tuning guide's rules of thumb, stated where they are used):
- the maximum length holds the longest p99 prompt + p99 output, rounded up to whole KV blocks;
- the sequences at once are what the KV pool holds of the workloads' p99 requests, longest first, never more than
  the summed peak concurrency: the rule validate's GSG033 applies to the emitted spec (core/memory/demand.py);
- prefill chunks stay small (2,048 tokens) when someone waits for tokens, large (8,192) for batch throughput.
"""

from __future__ import annotations

from dataclasses import field

from gpustack_guard.core.advise import latency
from gpustack_guard.core.advise.candidates import BACKEND_NAME, Evaluate, Judged, Target, document, judge
from gpustack_guard.core.advise.observed import DEFAULT_KV_DTYPE, scaled
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.memory import demand
from gpustack_guard.core.rules import fleet as RF
from gpustack_guard.core.rules import memory as RM
from gpustack_guard.core.rules import placement as RP
from gpustack_guard.core.spec.model import Workload as GuardWorkload
from gpustack_guard.core.values import frozen_value

KV_BLOCK = 16  # vLLM's default block; SGLang and llama.cpp get the same rounding (harmless, and comparable)
INTERACTIVE_CHUNK = 2048
BATCH_CHUNK = 8192
MAX_FRACTION = 0.95  # above this a driver update or a second context is an OOM; nobody should be advised more
MIN_FRACTION = 0.30
MAX_REPLICAS = 8  # replicas tried per deployment: one shape per divisor of the GPU count, so the search stays small
FULL_PRECISION_KV = DEFAULT_KV_DTYPE  # the engines' own KV dtype default, one table with observed.py's
COMPACT_KV = {"vllm": "fp8", "sglang": "fp8_e5m2", "llamacpp": "q8_0"}
FRACTION_FLAG = {"vllm": "gpu-memory-utilization", "sglang": "mem-fraction-static"}
ADMISSION = (RP.ADMISSION_FRACTION.id, RP.ADMISSION_BOOKING.id, RF.GPU_OVERCOMMIT.id, RF.STARTUP_FREE_MEMORY.id)
# errors a different fraction (or, for the sampler warm-up and a hybrid's state blocks, fewer sequences) may clear
TUNABLE = ADMISSION + (RM.NO_KV_MEMORY.id, RM.KV_BELOW_MAX_LEN.id, RM.SAMPLER_WARMUP_OOM.id,
                       RM.STATE_BLOCKS_BELOW_SEQS.id)


def block_round(tokens: int) -> int:
    return -(-tokens // KV_BLOCK) * KV_BLOCK


def layouts(gpus: int) -> list[tuple[int, int]]:
    """(tensor, pipeline) parallel sizes using every GPU, tensor parallel first: the pipeline rejects the ones
    the model's heads do not allow (GSG037), so no head arithmetic is repeated here."""
    return [(tp, gpus // tp) for tp in range(gpus, 0, -1) if gpus % tp == 0]


def shapes(gpus: int) -> list[tuple[int, int, int]]:
    """(tensor, pipeline, replicas) using every GPU: one replica with every layout first, then more replicas of
    narrower ones (throughput without all-reduce), at most MAX_REPLICAS. For 4 GPUs: 6 shapes; 8 GPUs: 10."""
    found = []
    for replicas in range(1, min(gpus, MAX_REPLICAS) + 1):
        if gpus % replicas == 0:
            found += [(tp, pp, replicas) for tp, pp in layouts(gpus // replicas)]
    return found


def mixed_p95_tokens(workloads: tuple[Workload, ...]) -> int:
    """The mean p95 request length of the mix at peak, weighted by each workload's requests in flight."""
    total = sum(w.concurrency for w in workloads)
    return -(-sum(w.concurrency * w.p95_tokens for w in workloads) // total)


def peak_tokens(workloads: tuple[Workload, ...]) -> int:
    """KV tokens the workloads' peaks need at once, p99 requests (the rule validate applies)."""
    return sum(w.concurrency * w.p99_tokens for w in workloads)


def streams(judged: Judged) -> tuple[demand.Stream, ...]:
    """The traffic a candidate declares, read from its own guard.workload as validate's GSG033 reads it."""
    guard = GuardWorkload.validate(judged.document["guard"]["workload"])
    return demand.streams_of(guard, judged.estimate.max_model_len if judged.estimate else 0)[0]


@frozen_value(eq=True, repr=True)
class Sizing:
    """The best candidate found for one deployment, and the ones it beat."""

    name: str
    workloads: tuple[Workload, ...]
    gpu_ids: tuple[str, ...]
    best: Judged | None  # None: no candidate passes validate
    kv_dtype: str = ""
    layout: tuple[int, int] = (1, 1)
    tried: tuple[tuple[str, tuple[int, int], Judged], ...] = field(default=())  # (kv dtype, layout, verdict)
    why_not: str = ""  # when best is None: what validate said of the closest candidate
    replicas: int = 1
    offload: latency.Offload | None = None  # llama.cpp layers left on the CPU, with their cost
    gpu_name: str = ""

    @property
    def fits(self) -> bool:
        return self.best is not None

    @property
    def chosen(self) -> Judged:
        """The best candidate of a sizing that fits (callers check `fits` first)."""
        if self.best is None:
            raise ValueError(f"{self.name} does not fit: {self.why_not}")
        return self.best

    @property
    def closest(self) -> Judged | None:
        """The chosen candidate, else the tried one with an estimate that overshoots least (its memory bar)."""
        if self.best is not None:
            return self.best
        judged = [j for _, _, j in self.tried if j.estimate is not None]
        return max(judged, key=lambda j: j.numbers.kv_available, default=None)

    @property
    def capacity_tokens(self) -> int:
        """KV tokens of every replica together."""
        return self.chosen.numbers.kv_capacity_tokens * self.replicas if self.fits else 0

    @property
    def sequences(self) -> int:
        return self.chosen.numbers.max_num_seqs * self.replicas if self.fits else 0

    @property
    def peak(self) -> int:
        return sum(w.concurrency for w in self.workloads)

    @property
    def peak_tokens(self) -> int:
        """KV tokens every workload's peak needs at once, p99 requests (the rule validate applies)."""
        return peak_tokens(self.workloads)

    @property
    def serves_peak(self) -> bool:
        """Seats for the whole peak, each replica's worst case inside its pool (validate found no GSG033)."""
        return self.fits and self.sequences >= self.peak and self.peak_tokens <= self.capacity_tokens

    @property
    def full_gpu(self) -> bool:
        return self.offload is None

    def alone(self, workload: Workload) -> int:
        """Sequences of this workload (p99 length) the pool holds when it has the pool to itself."""
        return self.capacity_tokens // workload.p99_tokens if self.fits else 0

    def step(self) -> latency.StepCost | None:
        if not self.fits:
            return None
        est = self.chosen.numbers
        return latency.step_cost(est, self.chosen.facts, self.gpu_name, self.layout[0],
                                 self.offload.cpu_bytes if self.offload else 0)

    def ttft(self, workload: Workload) -> float | None:
        """Estimated time to first token of `workload` at the joint peak: the longest prompt in the pool prefilling
        ahead of it, then its own (latency.py), with every replica's running sequences decoding meanwhile."""
        step = self.step()
        if step is None or workload not in self.workloads:
            return None
        ahead = max(w.prompt_tokens.p95 for w in self.workloads)
        decoding = min(self.chosen.numbers.max_num_seqs, -(-self.peak // self.replicas))
        return step.prefill_seconds(ahead + workload.prompt_tokens.p95, decoding)

    def slo_report(self) -> dict[str, dict]:
        """Per workload with a TTFT target: the target, the estimate and whether it is met (None: no estimate)."""
        report = {}
        for w in self.workloads:
            if w.ttft_slo_s is None:
                continue
            estimate = self.ttft(w)
            report[w.name] = {"ttft_slo_s": w.ttft_slo_s,
                              "ttft_estimate_s": round(estimate, 3) if estimate is not None else None,
                              "meets": None if estimate is None else estimate <= w.ttft_slo_s}
        return report

    @property
    def misses_slo(self) -> bool:
        return any(r["meets"] is False for r in self.slo_report().values())

    def decode_rate(self) -> float | None:
        """Estimated decode tokens/s of every replica at the peak (memory-bound steps, latency.py)."""
        if not self.fits:
            return None
        est = self.chosen.numbers
        running = min(est.max_num_seqs, -(-self.peak // self.replicas))
        rate = latency.decode_tokens_per_second(est, self.gpu_name, running, mixed_p95_tokens(self.workloads))
        return None if rate is None else rate * self.replicas

    def kv_choice(self) -> str:
        """Why the chosen KV dtype: what the full-precision candidate of the same layout held, when it lost."""
        full = FULL_PRECISION_KV[_family(self)]
        if not self.fits or self.kv_dtype == full:
            return ""
        lost = [j for dtype, layout, j in self.tried if dtype == full and layout == self.layout and j.estimate]
        if not lost:
            return ""
        est = lost[-1].numbers
        total = int(est.extra.get("total_layers", 0))
        if lost[-1].clean and self.offload is None and _layers_on_gpu(lost[-1]) < total:
            return (f"{self.kv_dtype} KV because with {full} at {est.max_num_seqs} slots only "
                    f"{_layers_on_gpu(lost[-1])} of {total} layers fit on the GPUs; {self.kv_dtype} keeps every "
                    f"layer there with {self.chosen.numbers.max_num_seqs} slots")
        if lost[-1].clean:
            return (f"{self.kv_dtype} KV because {full} holds {est.kv_capacity_tokens * self.replicas:,} tokens, "
                    f"{est.max_num_seqs * self.replicas} sequences at once, against a peak of "
                    f"{self.peak_tokens:,} tokens")
        return f"{self.kv_dtype} KV because {full} does not pass validate clean ({lost[-1].verdict})"

    def compact_kv_alternative(self) -> Judged | None:
        """The compact-KV (fp8 / q8_0) candidate of the same layout, for "fp8 KV gives X"."""
        compact = COMPACT_KV[_family(self)]
        found = [j for dtype, layout, j in self.tried if dtype == compact and j.clean and not _partial(j)]
        return max(found, key=lambda j: j.numbers.kv_capacity_tokens, default=None)


def _warmup_limits(fix: dict, top_fraction: float, top_seqs: int) -> tuple[float, int]:
    """The highest fraction and sequence count to try after a sampler warm-up OOM (GSG043), from the two fixes
    its estimate gives: the fraction that leaves the warm-up its memory, which keeps every seat, when it is one
    advise may use; else the most sequences whose warm-up fits (0: none does)."""
    fraction = float(fix.get("gpu_memory_utilization") or 0)
    if fraction >= MIN_FRACTION:
        return min(top_fraction, fraction), top_seqs
    return top_fraction, min(top_seqs, int(fix.get("max_num_seqs") or 0))


def _family(sizing: Sizing) -> str:
    judged = sizing.best or (sizing.tried[0][2] if sizing.tried else None)
    backend = judged.document["backend"] if judged else "vLLM"
    return next(family for family, name in BACKEND_NAME.items() if name == backend)


def _chunk(workloads: tuple[Workload, ...]) -> int:
    return INTERACTIVE_CHUNK if any(w.interactive for w in workloads) else BATCH_CHUNK


def _parameters(family: str, layout: tuple[int, int], kv_dtype: str, fraction: float, max_len: int,
                seqs: int, chunk: int, *, priority: bool = False, gpu_layers: int = 999) -> list[str]:
    tp, pp = layout
    if family == "vllm":
        params = [f"--gpu-memory-utilization={fraction:.2f}", f"--max-model-len={max_len}",
                  # vLLM refuses a token budget below the sequence count
                  f"--max-num-seqs={seqs}", f"--max-num-batched-tokens={max(chunk, seqs)}", "--enable-chunked-prefill",
                  f"--kv-cache-dtype={kv_dtype}"]
        params += [f"--tensor-parallel-size={tp}"] if tp > 1 else []
        params += [f"--pipeline-parallel-size={pp}"] if pp > 1 else []
        params += ["--scheduling-policy=priority"] if priority else []
        return params
    if family == "sglang":
        params = [f"--mem-fraction-static={fraction:.2f}", f"--context-length={max_len}",
                  f"--max-running-requests={seqs}", f"--chunked-prefill-size={chunk}", f"--kv-cache-dtype={kv_dtype}"]
        params += [f"--tp-size={tp}"] if tp > 1 else []
        params += [f"--pp-size={pp}"] if pp > 1 else []
        return params
    # llama.cpp shares --ctx-size across --parallel slots; quantised V needs flash attention, which also
    # drops the no-FA attention scratch from the compute buffer.
    return [f"--ctx-size={max_len * seqs}", f"--parallel={seqs}", f"--gpu-layers={gpu_layers}", "--flash-attn=on",
            f"--cache-type-k={kv_dtype}", f"--cache-type-v={kv_dtype}",
            f"--batch-size={chunk}", f"--ubatch-size={min(chunk, 512)}"]


def _layers_on_gpu(judged: Judged) -> int:
    return int(judged.estimate.extra.get("offload_layers", 0)) if judged.estimate else 0


def _partial(judged: Judged) -> bool:
    """A llama.cpp candidate that keeps layers on the CPU."""
    est = judged.estimate
    return est is not None and "total_layers" in est.extra and _layers_on_gpu(judged) < int(est.extra["total_layers"])


def _gpu_weight_bytes(judged: Judged) -> int:
    """llama.cpp: weight bytes on every GPU together (per_device), else the estimate's per-GPU weights."""
    assert judged.estimate is not None
    devices = judged.estimate.extra.get("per_device") or []
    return sum(int(d["weights"]) for d in devices) or judged.estimate.weights


class _Sizer:
    def __init__(self, target: Target, evaluate: Evaluate, fleet: Fleet | None, name: str,
                 gpu_ids: tuple[str, ...], workloads: tuple[Workload, ...], priority: bool, shapes_tried):
        self.target, self.evaluate, self.fleet, self.name = target, evaluate, fleet, name
        self.gpu_ids, self.workloads, self.priority = gpu_ids, workloads, priority
        self.family = target.family
        self.max_len = block_round(max(w.p99_tokens for w in workloads))
        self.peak = sum(w.concurrency for w in workloads)
        self.chunk = _chunk(workloads)
        self.replicas = 1
        self.shapes = shapes_tried
        self.all_layers: dict[str, Judged] = {}  # llama.cpp: the every-layer candidate per KV dtype

    def judge(self, layout, kv_dtype, fraction, seqs, gpu_layers=999) -> Judged:
        params = _parameters(self.family, layout, kv_dtype, fraction, self.max_len, seqs, self.chunk,
                             priority=self.priority, gpu_layers=gpu_layers)
        doc = document(self.target, self.name, self.gpu_ids, params, self.workloads, self.replicas)
        # the engine's own pool where --observed saw this configuration; validate's findings stay as judged
        return scaled(judge(self.evaluate, [doc], self.fleet)[0], self.target.observed, self.family, layout[0],
                      kv_dtype)

    def replica_peak(self) -> int:
        return -(-self.peak // self.replicas)

    def seqs_for(self, judged: Judged) -> int:
        """Sequences at once per replica: the most whose worst case fits the pool by the rule validate's GSG033
        applies (core/memory/demand.py), capped by the replica's share of the peak."""
        seats = demand.seats_fitting(streams(judged), judged.numbers.kv_capacity_tokens, self.replica_peak())
        return max(1, seats)

    def engine_candidate(self, layout, kv_dtype) -> Judged:
        """vLLM / SGLang: the largest fraction that keeps the headroom rule green and GPUStack admitting it,
        then as many sequences as the pool holds."""
        fraction, seqs = 0.90, self.replica_peak()
        # what vLLM's sampler warm-up (GSG043) allows: it runs after the KV cache, so a lower fraction or fewer
        # sequences let it fit, and later rounds must not climb back past either
        top_fraction, top_seqs = MAX_FRACTION, seqs
        passed: list[Judged] = []  # clean candidates on the way: a pool that shrinks as the sequences grow can
        # leave the rounds swinging between too many and too few, and the last of them oversubscribed

        def attempt(fraction: float, seqs: int) -> Judged:
            judged = self.judge(layout, kv_dtype, fraction, seqs)
            if judged.clean:
                passed.append(judged)
            return judged

        judged = attempt(fraction, seqs)
        for _ in range(4):  # fraction and sequences settle in two or three rounds (sampler warm-up moves a bit)
            est = judged.estimate
            if est is None or any(f.rule.id not in TUNABLE for f in judged.errors):
                return judged
            if judged.has(RM.SAMPLER_WARMUP_OOM):
                top_fraction, top_seqs = _warmup_limits(est.extra.get("sampler_warmup_fix") or {}, top_fraction,
                                                        top_seqs)
                if top_seqs < 1:
                    return judged  # no fraction and no sequence count lets it start on these GPUs
            if judged.has(RM.STATE_BLOCKS_BELOW_SEQS):
                # FULL decode graphs take one state block a sequence (GSG056): no more sequences than blocks
                top_seqs = min(top_seqs, int(est.extra.get("state_blocks") or 0))
                if top_seqs < 1:
                    return judged
            best = int((est.gpu_total - est.headroom_needed) / est.gpu_total * 100) / 100
            new_fraction = max(MIN_FRACTION, min(top_fraction, best))
            new_seqs = min(self.seqs_for(judged) if est.verdict == "fits" else seqs, top_seqs)
            if (new_fraction, new_seqs) == (fraction, seqs) and not judged.has(RM.HEADROOM):
                break
            if judged.has(RM.HEADROOM) and new_fraction >= fraction:
                new_fraction = round(fraction - 0.01, 2)
            fraction, seqs = new_fraction, new_seqs
            judged = attempt(fraction, seqs)
        # GPUStack admits a GPU only with that fraction free; other deployments may force it lower.
        while any(f.rule.id in ADMISSION for f in judged.errors) and fraction > MIN_FRACTION:
            fraction = round(fraction - 0.02, 2)
            judged = attempt(fraction, seqs)
            if judged.estimate is not None and judged.estimate.verdict == "fits":
                seqs = min(seqs, self.seqs_for(judged))
        if judged.estimate is not None and judged.estimate.verdict == "fits" and not judged.errors and \
                judged.estimate.max_num_seqs != min(self.seqs_for(judged), top_seqs):
            judged = attempt(fraction, min(self.seqs_for(judged), top_seqs))
        if not judged.clean and passed:
            return max(passed, key=lambda j: (j.numbers.max_num_seqs, j.numbers.kv_capacity_tokens))
        return judged

    def llamacpp_candidate(self, kv_dtype) -> Judged:
        """llama.cpp: every layer on the GPUs with one slot per request in flight; else every layer with fewer
        slots (the rest queue) and, as the fallback ranked last, as many layers on the GPUs as fit (bisected)."""
        slots = self.peak
        judged = self.judge((1, 1), kv_dtype, 0, slots)
        self.all_layers[kv_dtype] = judged
        if judged.clean or judged.estimate is None:
            return judged
        low, high, best = 1, slots - 1, None
        while low <= high:  # the most slots that still keep every layer on the GPUs
            mid = (low + high) // 2
            attempt = self.judge((1, 1), kv_dtype, 0, mid)
            if attempt.clean:
                best, low = attempt, mid + 1
            else:
                high = mid - 1
        if best is not None:
            self.extra_candidates.append((kv_dtype, (1, 1), best))
        low, high, partial = 0, int(judged.estimate.extra.get("total_layers", 0)), None
        while low <= high:
            mid = (low + high) // 2
            attempt = self.judge((1, 1), kv_dtype, 0, slots, gpu_layers=mid)
            if attempt.clean:
                partial, low = attempt, mid + 1
            else:
                high = mid - 1
        return partial or best or judged

    def offload(self, kv_dtype: str, judged: Judged) -> latency.Offload | None:
        """The CPU layers of a llama.cpp candidate and their cost, from its own estimate and the every-layer one."""
        est = judged.estimate
        if self.family != "llamacpp" or est is None:
            return None
        total = int(est.extra.get("total_layers", 0))
        on_gpu = _layers_on_gpu(judged)
        if on_gpu >= total:
            return None
        everything = self.all_layers.get(kv_dtype)
        gpu_bytes = _gpu_weight_bytes(judged)
        all_bytes = _gpu_weight_bytes(everything) if everything is not None and everything.estimate else gpu_bytes
        return latency.offload_cost(total - on_gpu, total, max(all_bytes - gpu_bytes, 0), gpu_bytes,
                                    self.target.gpu_name)

    def run(self) -> Sizing:
        tried: list[tuple[str, tuple[int, int], Judged, int]] = []
        kv_options = (FULL_PRECISION_KV[self.family], COMPACT_KV[self.family])
        shape_options = [(1, 1, 1)] if self.family == "llamacpp" else self.shapes
        for tp, pp, replicas in shape_options:
            self.replicas = replicas
            for kv_dtype in kv_options:
                self.extra_candidates: list[tuple[str, tuple[int, int], Judged]] = []
                judged = (self.llamacpp_candidate(kv_dtype) if self.family == "llamacpp"
                          else self.engine_candidate((tp, pp), kv_dtype))
                tried += [(d, lay, j, replicas) for d, lay, j in self.extra_candidates]
                tried.append((kv_dtype, (tp, pp), judged, replicas))
                if judged.errors and any(f.rule.id == RM.TP_HEADS.id for f in judged.errors):
                    break  # the layout itself is refused; its other KV dtype would be too
        verdicts = tuple((d, lay, j) for d, lay, j, _ in tried)
        sizings = [self._sizing(d, lay, j, r, verdicts) for d, lay, j, r in tried if j.clean]
        if not sizings:
            estimated = [j for _, _, j, _ in tried if j.estimate is not None]
            # the candidate that overshoots least says best why nothing fits (its bar is the page's too)
            closest = max(estimated, key=lambda j: j.numbers.kv_available, default=tried[-1][2] if tried else None)
            why = "; ".join(f"{f.rule.id} {f.message}" for f in (closest.errors if closest else ())[:1])
            if closest is not None and not why and closest.findings:
                first = max(closest.findings, key=lambda f: f.severity.rank)
                why = f"{first.rule.id} {first.message}"
            if closest is not None and not why and closest.estimate is not None:
                why = f"verdict {closest.verdict}"
            return Sizing(self.name, self.workloads, self.gpu_ids, None, tried=verdicts, why_not=why,
                          gpu_name=self.target.gpu_name)
        return max(sizings, key=_rank)

    def _sizing(self, dtype, layout, judged, replicas, verdicts) -> Sizing:
        return Sizing(self.name, self.workloads, self.gpu_ids, judged, dtype, layout, verdicts, replicas=replicas,
                      offload=self.offload(dtype, judged), gpu_name=self.target.gpu_name)


def _rank(sizing: Sizing):
    """Every layer on the GPUs first (llama.cpp's CPU layers decode at host-memory speed: serving the peak that
    way is a promise it cannot keep); then serving the whole peak; then the TTFT targets met; then no pipeline
    stages (bubbles); then full-precision KV (no quality question) while it serves the peak; then the estimated
    decode throughput, the sequences and the pool."""
    serves = sizing.serves_peak
    rate = sizing.decode_rate() or 0.0
    return (sizing.full_gpu, serves, not sizing.misses_slo, sizing.layout[1] == 1,
            sizing.kv_dtype == FULL_PRECISION_KV[_family(sizing)] if serves else False,
            round(rate, -1), sizing.sequences, sizing.capacity_tokens, sizing.layout[0])


def size(target: Target, evaluate: Evaluate, name: str, gpu_ids: tuple[str, ...], workloads: tuple[Workload, ...],
         *, fleet: Fleet | None = None, priority: bool = False, replicas: bool = True) -> Sizing:
    """The best deployment of `target` on `gpu_ids` for `workloads`, as the validate pipeline judges it.
    `replicas=False` keeps one replica (the layouts of every GPU only): the cheaper search for pool splits."""
    tried = shapes(len(gpu_ids)) if replicas else [(tp, pp, 1) for tp, pp in layouts(len(gpu_ids))]
    return _Sizer(target, evaluate, fleet, name, gpu_ids, workloads, priority, tried).run()
