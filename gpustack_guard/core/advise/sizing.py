"""Size one deployment for a set of workloads: search layouts and KV dtypes, tune the memory fraction, the
maximum length and the sequences at once, each step judged by the validate pipeline.

What the workloads decide (the vLLM tuning guide's rules of thumb, stated where they are used):
- the maximum length holds the longest p99 prompt + p99 output, rounded up to whole KV blocks;
- the sequences at once are what the KV pool holds at p95 lengths, never more than the summed peak concurrency;
- prefill chunks stay small (2,048 tokens) when someone waits for tokens, large (8,192) for batch throughput.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack_guard.core.advise.candidates import BACKEND_NAME, Evaluate, Judged, Target, document, judge
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.rules import fleet as RF
from gpustack_guard.core.rules import memory as RM
from gpustack_guard.core.rules import placement as RP

KV_BLOCK = 16  # vLLM's default block; SGLang and llama.cpp get the same rounding (harmless, and comparable)
INTERACTIVE_CHUNK = 2048
BATCH_CHUNK = 8192
MAX_FRACTION = 0.95  # above this a driver update or a second context is an OOM; nobody should be advised more
MIN_FRACTION = 0.30
FULL_PRECISION_KV = {"vllm": "auto", "sglang": "auto", "llamacpp": "f16"}
COMPACT_KV = {"vllm": "fp8", "sglang": "fp8_e5m2", "llamacpp": "q8_0"}
FRACTION_FLAG = {"vllm": "gpu-memory-utilization", "sglang": "mem-fraction-static"}
ADMISSION = (RP.ADMISSION_FRACTION.id, RP.ADMISSION_BOOKING.id, RF.GPU_OVERCOMMIT.id, RF.STARTUP_FREE_MEMORY.id)
TUNABLE = ADMISSION + (RM.NO_KV_MEMORY.id, RM.KV_BELOW_MAX_LEN.id)  # errors a different fraction may clear


def block_round(tokens: int) -> int:
    return -(-tokens // KV_BLOCK) * KV_BLOCK


def layouts(gpus: int) -> list[tuple[int, int]]:
    """(tensor, pipeline) parallel sizes using every GPU, tensor parallel first: the pipeline rejects the ones
    the model's heads do not allow (GSG037), so no head arithmetic is repeated here."""
    return [(tp, gpus // tp) for tp in range(gpus, 0, -1) if gpus % tp == 0]


def mixed_p95_tokens(workloads: tuple[Workload, ...]) -> int:
    """The mean p95 request length of the mix at peak, weighted by each workload's requests in flight."""
    total = sum(w.concurrency for w in workloads)
    return -(-sum(w.concurrency * w.p95_tokens for w in workloads) // total)


@dataclass(frozen=True)
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
    def capacity_tokens(self) -> int:
        return self.chosen.numbers.kv_capacity_tokens if self.fits else 0

    @property
    def sequences(self) -> int:
        return self.chosen.numbers.max_num_seqs if self.fits else 0

    @property
    def peak_tokens(self) -> int:
        """KV tokens every workload's peak needs at once, at p95 lengths."""
        return sum(w.concurrency * w.p95_tokens for w in self.workloads)

    @property
    def serves_peak(self) -> bool:
        return self.fits and self.sequences >= sum(w.concurrency for w in self.workloads) and \
            self.peak_tokens <= self.capacity_tokens

    def alone(self, workload: Workload) -> int:
        """Sequences of this workload (p95 length) the pool holds when it has the pool to itself."""
        return self.capacity_tokens // workload.p95_tokens if self.fits else 0

    def kv_choice(self) -> str:
        """Why the chosen KV dtype: what the full-precision candidate of the same layout held, when it lost."""
        full = FULL_PRECISION_KV[_family(self)]
        if not self.fits or self.kv_dtype == full:
            return ""
        lost = [j for dtype, layout, j in self.tried if dtype == full and layout == self.layout and j.estimate]
        if not lost:
            return ""
        est = lost[-1].numbers
        if lost[-1].clean and lost[-1].warnings and not self.chosen.warnings:
            first = lost[-1].warnings[0]
            return (f"{self.kv_dtype} KV because with {full} validate warns {first.rule.id} "
                    f"({first.rule.name}): its {est.kv_capacity_tokens:,}-token pool holds fewer than "
                    f"{est.max_num_seqs} sequences of the longest p99 request")
        if lost[-1].clean:
            return (f"{self.kv_dtype} KV because {full} holds {est.kv_capacity_tokens:,} tokens, "
                    f"{est.max_num_seqs} sequences at once, against a peak of {self.peak_tokens:,} tokens")
        return f"{self.kv_dtype} KV because {full} does not pass validate ({est.verdict})"

    def compact_kv_alternative(self) -> Judged | None:
        """The compact-KV (fp8 / q8_0) candidate of the same layout, for "fp8 KV gives X"."""
        compact = COMPACT_KV[_family(self)]
        found = [j for dtype, layout, j in self.tried if dtype == compact and j.clean]
        return max(found, key=lambda j: j.numbers.kv_capacity_tokens, default=None)


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


class _Sizer:
    def __init__(self, target: Target, evaluate: Evaluate, fleet: Fleet | None, name: str,
                 gpu_ids: tuple[str, ...], workloads: tuple[Workload, ...], priority: bool):
        self.target, self.evaluate, self.fleet, self.name = target, evaluate, fleet, name
        self.gpu_ids, self.workloads, self.priority = gpu_ids, workloads, priority
        self.family = target.family
        self.max_len = block_round(max(w.p99_tokens for w in workloads))
        self.peak = sum(w.concurrency for w in workloads)
        self.chunk = _chunk(workloads)

    def judge(self, layout, kv_dtype, fraction, seqs, gpu_layers=999) -> Judged:
        params = _parameters(self.family, layout, kv_dtype, fraction, self.max_len, seqs, self.chunk,
                             priority=self.priority, gpu_layers=gpu_layers)
        doc = document(self.target, self.name, self.gpu_ids, params, self.workloads)
        return judge(self.evaluate, [doc], self.fleet)[0]

    def seqs_for(self, judged: Judged) -> int:
        """Sequences at once: what the pool holds at the mix's p95 length, capped by the summed peak."""
        est = judged.numbers
        return max(1, min(self.peak, est.kv_capacity_tokens // mixed_p95_tokens(self.workloads)))

    def engine_candidate(self, layout, kv_dtype) -> Judged:
        """vLLM / SGLang: the largest fraction that keeps the headroom rule green and GPUStack admitting it,
        then as many sequences as the pool holds."""
        fraction, seqs = 0.90, self.peak
        judged = self.judge(layout, kv_dtype, fraction, seqs)
        for _ in range(4):  # fraction and sequences settle in two or three rounds (sampler warm-up moves a bit)
            est = judged.estimate
            if est is None or any(f.rule.id not in TUNABLE for f in judged.errors):
                return judged
            best = int((est.gpu_total - est.headroom_needed) / est.gpu_total * 100) / 100
            new_fraction = max(MIN_FRACTION, min(MAX_FRACTION, best))
            new_seqs = self.seqs_for(judged) if est.verdict == "fits" else seqs
            if (new_fraction, new_seqs) == (fraction, seqs) and not judged.has(RM.HEADROOM):
                break
            if judged.has(RM.HEADROOM) and new_fraction >= fraction:
                new_fraction = round(fraction - 0.01, 2)
            fraction, seqs = new_fraction, new_seqs
            judged = self.judge(layout, kv_dtype, fraction, seqs)
        # GPUStack admits a GPU only with that fraction free; other deployments may force it lower.
        while any(f.rule.id in ADMISSION for f in judged.errors) and fraction > MIN_FRACTION:
            fraction = round(fraction - 0.02, 2)
            judged = self.judge(layout, kv_dtype, fraction, seqs)
            if judged.estimate is not None and judged.estimate.verdict == "fits":
                seqs = min(seqs, self.seqs_for(judged))
        if judged.estimate is not None and judged.estimate.verdict == "fits" and judged.estimate.max_num_seqs != \
                self.seqs_for(judged) and not judged.errors:
            judged = self.judge(layout, kv_dtype, fraction, self.seqs_for(judged))
        return self._within_p99(judged, layout, kv_dtype, fraction)

    def _within_p99(self, judged: Judged, layout, kv_dtype, fraction) -> Judged:
        """One workload: its emitted guard.workload is what GSG033 prices (p99 lengths), so the advised sequence
        cap is what that rule lets fit, and the spec validates without a warning. Several workloads share a pool
        at their p95 mix on purpose (the comparison says what queues): the warning is explained, not avoided."""
        if len(self.workloads) != 1 or judged.errors or not judged.has(RM.KV_OVERSUBSCRIBED):
            return judged
        fitting = next(f.data.get("sequences_fitting") for f in judged.findings if f.rule.id == RM.KV_OVERSUBSCRIBED.id)
        return self.judge(layout, kv_dtype, fraction, max(1, int(fitting or 1))) if fitting else judged

    def llamacpp_candidate(self, kv_dtype) -> Judged:
        """llama.cpp: one slot per request in flight; as many layers on the GPUs as fit (bisected)."""
        slots = self.peak
        judged = self.judge((1, 1), kv_dtype, 0, slots)
        if judged.clean or judged.estimate is None:
            return judged
        low, high, best = 0, int(judged.estimate.extra.get("total_layers", 0)), None
        while low <= high:
            mid = (low + high) // 2
            attempt = self.judge((1, 1), kv_dtype, 0, slots, gpu_layers=mid)
            if attempt.clean:
                best, low = attempt, mid + 1
            else:
                high = mid - 1
        return best or judged

    def run(self) -> Sizing:
        tried = []
        kv_options = (FULL_PRECISION_KV[self.family], COMPACT_KV[self.family])
        layout_options = [(1, 1)] if self.family == "llamacpp" else layouts(len(self.gpu_ids))
        for layout in layout_options:
            for kv_dtype in kv_options:
                judged = (self.llamacpp_candidate(kv_dtype) if self.family == "llamacpp"
                          else self.engine_candidate(layout, kv_dtype))
                tried.append((kv_dtype, layout, judged))
                if judged.errors and any(f.rule.id == RM.TP_HEADS.id for f in judged.errors):
                    break  # the layout itself is refused; its other KV dtype would be too
            if any(j.clean for _, lay, j in tried if lay == layout):
                break  # the widest tensor-parallel layout that validates wins: fewer pipeline bubbles
        clean = [(dtype, lay, j) for dtype, lay, j in tried if j.clean]
        if not clean:
            closest = tried[-1][2] if tried else None
            why = "; ".join(f"{f.rule.id} {f.message}" for f in (closest.errors if closest else ())[:1])
            if closest is not None and not why and closest.estimate is not None:
                why = f"verdict {closest.estimate.verdict}"
            return Sizing(self.name, self.workloads, self.gpu_ids, None, tried=tuple(tried), why_not=why)
        dtype, layout, best = max(clean, key=lambda c: self._rank(*c))
        return Sizing(self.name, self.workloads, self.gpu_ids, best, dtype, layout, tuple(tried))

    def _rank(self, dtype: str, layout, judged: Judged):
        """Serving the whole peak first; then full-precision KV (no quality question); then more capacity."""
        est = judged.numbers
        serves = est.max_num_seqs >= self.peak and \
            sum(w.concurrency * w.p95_tokens for w in self.workloads) <= est.kv_capacity_tokens
        on_gpu = est.extra.get("offload_layers", 0) if self.family == "llamacpp" else 0  # layers run on GPU
        return (serves, not judged.warnings, on_gpu, dtype == FULL_PRECISION_KV[self.family] if serves else False,
                est.max_num_seqs, est.kv_capacity_tokens)


def size(target: Target, evaluate: Evaluate, name: str, gpu_ids: tuple[str, ...], workloads: tuple[Workload, ...],
         *, fleet: Fleet | None = None, priority: bool = False) -> Sizing:
    """The best deployment of `target` on `gpu_ids` for `workloads`, as the validate pipeline judges it."""
    return _Sizer(target, evaluate, fleet, name, gpu_ids, workloads, priority).run()
