"""Public vLLM start-up logs as vectors: each fixture under tests/fixtures/logs/vllm/ that shows an outcome, with
what its thread says and the log does not print (model, GPU, version, command-line arguments), run through
`gsg verify --log` (commands/verify.rebuild), the way a user turns a log into a vector.

Used by tests/cli/test_public_vectors.py (asserts and prints the table) and benchmarks/accuracy.py (table P).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpustack_guard.commands import verify as V
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "logs" / "vllm"
CONFIGS = ROOT / "benchmarks" / "vectors"

# One GPU's memory as a GPUStack worker reports it (nvidia-smi / amd-smi total), by the name it reports.
H100 = ("NVIDIA H100 80GB HBM3", "81559MiB")
A100_80 = ("NVIDIA A100-SXM4-80GB", "81920MiB")
L40S = ("NVIDIA L40S", "46068MiB")
RTX_3090 = ("NVIDIA GeForce RTX 3090", "24576MiB")
RTX_4090 = ("NVIDIA GeForce RTX 4090", "24564MiB")
V100_32 = ("Tesla V100-SXM2-32GB", "32768MiB")
RTX_A5000 = ("NVIDIA RTX A5000", "24564MiB")
RTX_6000_ADA = ("NVIDIA RTX 6000 Ada Generation", "49140MiB")

KV_SCORED = 0.10  # every vector with a known version: KV capacity within this of the log (issue 32)
KV_TARGET = 0.05  # and this on at least TARGET_SHARE of them
TARGET_SHARE = 0.90


@dataclass(frozen=True)
class Vector:
    log: str  # file name under tests/fixtures/logs/vllm/
    model: str  # catalog name or benchmarks/vectors config the log's model resolves to
    gpu: tuple[str, str]  # (name, total) as GPUStack reports it
    version: str | None  # None: the log prints it
    args: tuple[str, ...] = ()  # the thread's command-line arguments the log does not print
    quantization: str | None = None  # a pre-quantized checkpoint of the catalog's model
    version_known: bool = True  # False: assumed from the date; the verdict is scored, KV capacity is not
    why: str = ""  # where model, GPU and version come from


@dataclass
class Outcome:
    vector: Vector
    version: str | None
    observed_verdict: str | None
    estimated_verdict: str | None
    observed_tokens: int | None
    estimated_tokens: int | None
    observed: dict = field(default_factory=dict)
    estimated: dict = field(default_factory=dict)
    problem: str | None = None

    @property
    def delta(self) -> float | None:
        if not self.observed_tokens or self.estimated_tokens is None:
            return None
        return (self.estimated_tokens - self.observed_tokens) / self.observed_tokens

    @property
    def verdict_right(self) -> bool:
        return self.observed_verdict is not None and self.observed_verdict == self.estimated_verdict

    @property
    def kv_scored(self) -> bool:
        return self.vector.version_known and self.observed_verdict == "fits" and self.delta is not None


def config(name: str) -> str:
    return str(CONFIGS / name / "config.json")


VECTORS = (
    Vector("v0.6.4-llama31-8b-rtx3090-20k.log", "meta-llama/Llama-3.1-8B", RTX_3090, "0.6.4",
           why="vllm#10517: Llama-3.1-8B-Instruct on an RTX 3090, 0.6.4's one-line profile"),
    Vector("v0.6.4-llama31-8b-rtx3090-29k-refused.log", "meta-llama/Llama-3.1-8B", RTX_3090, "0.6.4",
           why="vllm#10517: the same run at 29,000 tokens, refused"),
    Vector("v0.8-llama-h100-gateway.log", config("llama-2-7b"), H100, "0.8.1",
           why="gateway-api-inference-extension#550: 12.55 GiB of fp16 weights and 524,288 B/token "
               "(56.18 GiB / 7,191 blocks) are Llama-2-7B; V0 profile lines of 0.8.x (March 2025)"),
    Vector("v1-0.8.5-llama31-8b-l40s.log", "meta-llama/Llama-3.1-8B", L40S, "0.8.5",
           why="vllm PR #17122: Llama-3.1-8B-Instruct on one L40S, main before 0.8.5"),
    Vector("v1-qwen3-235b-fp8-h100-tp4.log", "Qwen/Qwen3-235B-A22B", H100, "0.10.0",
           ("--tensor-parallel-size=4",), "fp8", version_known=False,
           why="vllm#21348: Qwen3-235B-A22B-FP8 on 4x H100, July 2025 (version not printed)"),
    Vector("v1-0.7-llama31-70b-w8a8-gpu-blocks.log", "meta-llama/Llama-3.1-70B", H100, "0.7.1",
           ("--gpu-memory-utilization=0.98",), "int8", version_known=False,
           why="vllm PR #12569: Llama-3.1-70B W8A8 on one 80 GB GPU (GPU model not stated), main after 0.7.0"),
    Vector("v0.9-qwen3-4b-v100-40k.log", "Qwen/Qwen3-4B", V100_32, "0.9.0", version_known=False,
           why="vllm#18993: Qwen3-4B on one V100 32GB, V0 worker, June 2025 (0.9.0 by date)"),
    Vector("v0-qwen3-06b-h100-gmu080.log", "Qwen/Qwen3-0.6B", H100, "0.10.1", version_known=False,
           why="mellea PR #416: 1.12 GiB of weights and 114,688 B/token are Qwen3-0.6B's; a V0 engine, so "
               "before 0.11 (0.10.1 assumed)"),
    Vector("v1-0.10-qwen3-coder-30b-a3b-tp8-24gb.log", "Qwen/Qwen3-30B-A3B", RTX_A5000, "0.10.0",
           ("--tensor-parallel-size=8", "--enable-expert-parallel", "--gpu-memory-utilization=0.85"),
           version_known=False,
           why="vllm#22177: Qwen3-Coder-30B-A3B (Qwen3-30B-A3B's shape, 262,144 positions) on 8 Ampere 24 GB "
               "cards (24,564 MiB: RTX A5000), Aug 2025 (0.10.0 by date)"),
    Vector("v0.7-r1-distill-qwen14b-2x4090-refused.log", "Qwen/Qwen2.5-14B", RTX_4090, "0.7.2",
           ("--tensor-parallel-size=2", "--gpu-memory-utilization=0.98"), version_known=False,
           why="vllm#13061: DeepSeek-R1-Distill-Qwen-14B (Qwen2.5-14B's shape) on 2x RTX 4090, Feb 2025"),
    Vector("v1-0.29dev-qwen3-4b-awq-kv-memory-advice.log", "Qwen/Qwen3-4B", RTX_6000_ADA, "0.29.0",
           quantization="awq", version_known=False,
           why="vllm PR #57047: a 4B AWQ model (Qwen3-4B inferred) on a 47.37 GiB SM89 card, main Sept 2026"),
)


def run(vector: Vector) -> Outcome:
    """The vector through verify's own rebuild: the log's printed arguments, then the thread's."""
    path = LOGS / vector.log
    log, _ = parse_log(path.read_text(encoding="utf-8").splitlines(True), P.VLLM)
    name, total = vector.gpu
    opts = V.VerifyOptions(log=str(path), model=vector.model, gpu_memory=None if P.GPU_MEMORY in log.terms() else total,
                           gpu_name=name, backend_version=vector.version, quantization=vector.quantization,
                           backend_args=vector.args)
    rebuilt = V.rebuild(opts, log)
    doc = V.report(opts, log, rebuilt, [])
    observed, estimated = doc["observed"], doc["estimated"] or {}
    return Outcome(vector, rebuilt.version, doc["observed_verdict"], doc["engine_verdict"],
                   observed.get(P.KV_TOKENS), estimated.get(P.KV_TOKENS), observed, estimated, rebuilt.problem)


def table(outcomes: list[Outcome]) -> str:
    """One line per vector: model, version, GPU, observed and estimated KV tokens, delta, verdicts."""
    head = (f"{'log':<48} {'model':<28} {'version':<9} {'GPU':<24} {'observed':>10} {'estimated':>10} "
            f"{'delta':>8}  verdict (log / estimate)")
    lines = [head, "-" * len(head)]
    for o in outcomes:
        model = Path(o.vector.model).parent.name if o.vector.model.endswith(".json") else o.vector.model
        delta = f"{o.delta * 100:+.1f} %" if o.delta is not None else "-"
        if o.delta is not None and not o.kv_scored:
            delta += "*"
        seen = f"{o.observed_tokens:,}" if o.observed_tokens is not None else "-"
        est = f"{o.estimated_tokens:,}" if o.estimated_tokens is not None else "-"
        lines.append(f"{o.vector.log[:48]:<48} {model.split('/')[-1][:28]:<28} {(o.version or '-')[:9]:<9} "
                     f"{o.vector.gpu[0][:24]:<24} {seen:>10} {est:>10} {delta:>8}  "
                     f"{o.observed_verdict} / {o.estimated_verdict}")
    scored = [o for o in outcomes if o.kv_scored]
    within = sum(abs(o.delta or 0) <= KV_TARGET for o in scored)
    lines.append(f"verdicts right: {sum(o.verdict_right for o in outcomes)}/{len(outcomes)}; KV capacity within "
                 f"±{KV_TARGET:.0%}: {within}/{len(scored)}, within ±{KV_SCORED:.0%}: "
                 f"{sum(abs(o.delta or 0) <= KV_SCORED for o in scored)}/{len(scored)} "
                 f"(* not scored: version not printed, or the engine refused; target {TARGET_SHARE:.0%} within ±{KV_TARGET:.0%})")
    return "\n".join(lines)
