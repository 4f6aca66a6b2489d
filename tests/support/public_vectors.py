"""Public start-up logs as vectors: each fixture under tests/fixtures/logs/{vllm,sglang,llama.cpp}/ with what its
thread says and the log does not print (model, GPU, version, command-line arguments), run through
`gsg verify --log` (commands/verify.rebuild), the way a user turns a log into a vector. A fixture that cannot be
one (its model, GPU or deployment is not recoverable, or gsg does not model it) is in EXCLUDED with the reason.

Compared per row: the engine's verdict where the log shows one, and the KV pool: its capacity in tokens where
vLLM or SGLang prints it, else its size in bytes (vLLM V0's profile table, llama.cpp's KV buffer).

Used by tests/cli/test_public_vectors.py (asserts and prints the table) and benchmarks/accuracy.py (table P).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpustack_guard.commands import verify as V
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import ObservedLog, parse_log

ROOT = Path(__file__).resolve().parents[2]
LOGS_ROOT = ROOT / "tests" / "fixtures" / "logs"
LOGS = LOGS_ROOT / "vllm"
CONFIGS = ROOT / "benchmarks" / "vectors"
ENGINES = {"vllm": P.VLLM, "sglang": P.SGLANG, "llama.cpp": P.LLAMACPP}  # fixture folder -> parser
MiB = 1024**2

# One GPU's memory as a GPUStack worker reports it (nvidia-smi / amd-smi total), by the name it reports.
H100 = ("NVIDIA H100 80GB HBM3", "81559MiB")
H200 = ("NVIDIA H200", "143771MiB")
A100_80 = ("NVIDIA A100-SXM4-80GB", "81920MiB")
A100_40 = ("NVIDIA A100-SXM4-40GB", "40960MiB")
# a 40 GB MIG instance as nvidia-smi lists it (40192MiB), named as the 40 GB A100 (the parent card is not printed)
A100_MIG_40 = ("NVIDIA A100-SXM4-40GB", "40192MiB")
L40S = ("NVIDIA L40S", "46068MiB")
A10G = ("NVIDIA A10G", "23028MiB")
RTX_3090 = ("NVIDIA GeForce RTX 3090", "24576MiB")
RTX_4090 = ("NVIDIA GeForce RTX 4090", "24564MiB")
RTX_4080 = ("NVIDIA GeForce RTX 4080", "16376MiB")
RTX_5080 = ("NVIDIA GeForce RTX 5080", "16303MiB")
V100_32 = ("Tesla V100-SXM2-32GB", "32768MiB")
RTX_A5000 = ("NVIDIA RTX A5000", "24564MiB")
RTX_A6000 = ("NVIDIA RTX A6000", "49140MiB")
RTX_6000_ADA = ("NVIDIA RTX 6000 Ada Generation", "49140MiB")
B200 = ("NVIDIA B200", "183359MiB")
MI355X = ("AMD Instinct MI355X", "294896MiB")
L4 = ("NVIDIA L4", "23034MiB")
ASCEND_910B2 = ("Ascend 910B2", "65536MiB")
RTX_2000_ADA = ("NVIDIA RTX 2000 Ada Generation", "16380MiB")
H100_PCIE = ("NVIDIA H100 PCIe", "81559MiB")
RTX_5090 = ("NVIDIA GeForce RTX 5090", "32607MiB")
MI250X_GCD = ("AMD Instinct MI250X", "65520MiB")  # one of the card's two GCDs, each its own ROCm device
A40 = ("NVIDIA A40", "46068MiB")
L40 = ("NVIDIA L40", "46068MiB")
A10 = ("NVIDIA A10", "23028MiB")
MI300X = ("AMD Instinct MI300X", "196592MiB")
T4 = ("Tesla T4", "15360MiB")
RTX_3060 = ("NVIDIA GeForce RTX 3060", "12288MiB")
RTX_5060_TI = ("NVIDIA GeForce RTX 5060 Ti", "16311MiB")
RTX_4070_LAPTOP = ("NVIDIA GeForce RTX 4070 Laptop GPU", "8188MiB")
# DGX Spark's unified memory as CUDA reports it (the figure MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#204 quotes per
# node; NVML prints no framebuffer total for it), matching the V4 reply's own line: 0.70 GiB / 0.0057 of the total
GB10 = ("NVIDIA GB10", "121.69GiB")
RTX_PRO_6000 = ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "97887MiB")
RTX_PRO_6000_WS = ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "97887MiB")
RTX_PRO_6000_MAXQ = ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "97887MiB")
RTX_3050_LAPTOP = ("NVIDIA GeForce RTX 3050 Laptop GPU", "4096MiB")
H100_NVL = ("NVIDIA H100 NVL", "95830MiB")
H20 = ("NVIDIA H20", "97871MiB")  # 95.58 GiB, as vLLM prints it on an H20
H100_NVL = ("NVIDIA H100 NVL", "95830MiB")  # the 94 GB PCIe board nvidia-smi lists

RADEON_VII = ("AMD Radeon VII", "16368MiB")  # an MI50 16 GB as ROCm names it (llama.cpp#12369)
RX_7900_GRE = ("AMD Radeon RX 7900 GRE", "16368MiB")  # 16 GiB less 16 MiB, as ROCm lists the 16 GB Radeon VII
RX_7900_XTX = ("AMD Radeon RX 7900 XTX", "24560MiB")  # as llama.cpp's device line prints it (llama.cpp#23244)
MI100 = ("AMD Instinct MI100", "32752MiB")

KV_SCORED = 0.10  # every vector with a known version and GPU: KV capacity within this of the log (issue 32)
KV_TARGET = 0.05  # and this on at least TARGET_SHARE of them
TARGET_SHARE = 0.90


@dataclass(frozen=True)
class Vector:
    log: str  # file name under tests/fixtures/logs/<engine>/
    model: str  # catalog name or benchmarks/vectors config the log's model resolves to
    gpu: tuple[str, str]  # (name, total) as GPUStack reports it
    version: str | None  # None: the log prints it
    args: tuple[str, ...] = ()  # the thread's command-line arguments the log does not print
    quantization: str | None = None  # a pre-quantized checkpoint of the catalog's model
    version_known: bool = True  # False: assumed from the date; the verdict is scored, KV capacity is not
    why: str = ""  # where model, GPU and version come from
    engine: str = "vllm"  # the fixture folder: vllm, sglang or llama.cpp
    gpu_known: bool = True  # False: the thread does not name the GPU (assumed); KV capacity is not scored
    env: tuple[str, ...] = ()  # the thread's deployment env the log does not print (KEY=VALUE, `gsg verify --env`)
    # False: the log itself shows arguments off their defaults (a max-model-len in the concurrency line, say) and
    # the thread's command is not recoverable, so the fraction that sizes the pool is unknown; KV is not scored
    args_known: bool = True
    # False: a pre-quantized checkpoint the log does not name, so which layers it keeps unquantized and its group
    # size (the weights, and the pool with them) are unknown; the verdict is scored, KV capacity is not
    checkpoint_known: bool = True

    @property
    def path(self) -> Path:
        return LOGS_ROOT / self.engine / self.log

    @property
    def key(self) -> str:
        return f"{self.engine}/{self.log}"


@dataclass
class Outcome:
    vector: Vector
    version: str | None
    observed_verdict: str | None  # None: the log stops before the engine started or failed
    estimated_verdict: str | None
    quantity: str  # the KV term compared: P.KV_TOKENS or P.KV_CACHE (bytes per GPU)
    observed_kv: int | None
    estimated_kv: int | None
    observed: dict = field(default_factory=dict)
    estimated: dict = field(default_factory=dict)
    problem: str | None = None

    @property
    def delta(self) -> float | None:
        if not self.observed_kv or self.estimated_kv is None:
            return None
        return (self.estimated_kv - self.observed_kv) / self.observed_kv

    @property
    def verdict_scored(self) -> bool:
        # a crash that names no memory (an assertion, a dead worker) is no memory verdict: nothing to judge
        return self.observed_verdict not in (None, P.ENGINE_ERROR)

    @property
    def verdict_right(self) -> bool:
        return self.verdict_scored and C.verdicts_agree(self.observed_verdict, self.estimated_verdict)

    @property
    def kv_scored(self) -> bool:
        # a log that stops after the pool is sized is scored too: the engine sized it before starting or not
        return (self.vector.version_known and self.vector.gpu_known and self.vector.args_known
                and self.vector.checkpoint_known
                and self.observed_verdict in ("fits", None)
                and self.delta is not None)


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
    Vector("v1-0.8.5-llama31-8b-l40s.log", "meta-llama/Llama-3.1-8B", L40S, "0.8.5", args_known=False,
           why="vllm PR #17122: Llama-3.1-8B-Instruct on one L40S, main before 0.8.5; the concurrency line's "
               "32,768 tokens per request is not the model's 131,072, so the run passed arguments the PR thread "
               "(not in the index) does not give: --gpu-memory-utilization among them is unknown"),
    Vector("v1-qwen3-235b-fp8-h100-tp4.log", "Qwen/Qwen3-235B-A22B", H100, "0.10.0",
           ("--tensor-parallel-size=4",), "fp8", version_known=False,
           why="vllm#21348: Qwen3-235B-A22B-FP8 on 4x H100, July 2025 (version not printed)"),
    Vector("v1-0.7-llama31-70b-w8a8-gpu-blocks.log", "meta-llama/Llama-3.1-70B", H100, "0.7.1",
           ("--gpu-memory-utilization=0.98",), "int8", version_known=False, env=("VLLM_USE_V1=1",),
           why="vllm PR #12569: Llama-3.1-70B W8A8 on one 80 GB GPU (GPU model not stated), main after 0.7.0; "
               "VLLM_USE_V1=1 on the log's own command line (its gpu_model_runner.py lines are V1's)"),
    Vector("v0.9-qwen3-4b-v100-40k.log", "Qwen/Qwen3-4B", V100_32, "0.9.0.1",
           why="vllm#18993: `VLLM_USE_V1=0 vllm serve Qwen3-4B --dtype half`, 'vLLM API server version 0.9.0.1' "
               "(the thread's full log; torch 2.7.0 in its environment); one V100 32GB (the title; 31.73 GiB total "
               "in the log, single GPU, so SXM2 or PCIe does not change the budget)"),
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
    # -- vLLM: the rest of the fixtures, each with what its thread gives ---------------------------------------
    Vector("v0.6.5dev-llama3-8b-h100-tp1.log", "meta-llama/Meta-Llama-3-8B", H100, "0.6.5",
           why="vllm PR #10511: `vllm serve meta-llama/Meta-Llama-3-8B` on the author's H100 (79.22 GiB logged), "
               "the PR's build of what shipped as 0.6.5; the profile table has no blocks line: the pool in bytes"),
    Vector("v0.6.5dev-llama3-8b-h100-tp2-cut.log", "meta-llama/Meta-Llama-3-8B", H100, "0.6.5",
           ("--tensor-parallel-size=2",),
           why="vllm PR #10511: the same with -tp 2; the quoted table stops before the pool"),
    Vector("v0.8.5-qwen3-30b-a3b-w4a16-rtx3090-cut.log", "Qwen/Qwen3-30B-A3B", RTX_3090, "0.8.5",
           ("--max-num-seqs=8",), "w4a16", version_known=False,
           why="vllm#17327: nytopop/Qwen3-30B-A3B.w4a16 (Qwen3-30B-A3B, 4-bit weights) on one RTX 3090 at gmu "
               "0.9, 8 sequences, VLLM_USE_V1=0; May 2025, 0.8.5 by date; the pool in bytes (the blocks line is cut)"),
    Vector("v1-0.10-h100-log-outputs.log", "meta-llama/Llama-3.1-8B", H200, "0.10.1", gpu_known=False,
           why="vllm PR #20707 (Aug 2025, 0.10.1 by its merge): 112.61 GiB / 922,496 tokens = 131,072 B/token is a "
               "32-layer, 8-KV-head model (Llama-3.1-8B's shape); 112.61 GiB of pool is more than an 80 GB card "
               "holds, an H200 assumed"),
    Vector("v1-0.11-small-model-2k.log", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", A100_40, "0.11.1", gpu_known=False,
           why="vllm PR #29335 (Nov 2025, 0.11.1 by date): 2.05 GiB of weights and 33.31 GiB / 1,587,648 tokens "
               "= 22,528 B/token are TinyLlama-1.1B's (22 layers x 4 KV heads x 64); a 40 GB A100 assumed"),
    Vector("v1-fp8-kv-100k.log", "Qwen/Qwen3-30B-A3B", L40S, "0.10.2", ("--kv-cache-dtype=fp8",), "fp8",
           version_known=False, gpu_known=False,
           why="vllm#25350 (Sept 2025): 29.09 GiB of weights and 10.55 GiB / 230,528 tokens = 49,152 B/token are "
               "Qwen3-30B-A3B-FP8 with an fp8 cache; gmu default; a 48 GB card assumed (L40S); 0.10.2 by date"),
    Vector("v0.4-qwen15-7b-kv-below-max-len.log", "Qwen/Qwen1.5-7B", RTX_3090, "0.4.0", version_known=False,
           gpu_known=False,
           why="QwenLM/Qwen3#295: `--model Qwen1.5-7B-Chat` at defaults (32,768 tokens), April 2024 (0.4.0 by "
               "date); the GPU is not stated, a 24 GB card assumed: 7,344 tokens = 0.9 GiB of KV"),
    Vector("v1-0.7-llama31-8b-int8-65k-started.log", "meta-llama/Llama-3.1-8B", RTX_4090, "0.7.3",
           quantization="int8", version_known=False, gpu_known=False, env=("VLLM_USE_V1=1",),
           why="vllm#14286: VLLM_USE_V1=1 with a Llama-3.1-8B INT8 (W8A8) checkpoint at 65,536 tokens, March 2025 "
               "(0.7.3 by date); 1.46 x 65,536 tokens of 128 KiB is ~11.7 GiB of pool, a 24 GB card assumed"),
    Vector("v0.6-internvl-tp3-not-divisible.log", "Qwen/Qwen2.5-72B", A100_80, "0.6.4", ("--tensor-parallel-size=3",),
           "awq", version_known=False, gpu_known=False,
           why="gpustack#814: InternVL2_5-78B-AWQ (its language model is Qwen2.5-72B: 64 heads) placed on 3 GPUs "
               "by GPUStack's scheduler, Dec 2024 (0.6.4 by date); refused before any memory is sized"),
    Vector("v0.6-llama31-8b-tp2-weights.log", "meta-llama/Llama-3.1-8B", RTX_4090, "0.6.6",
           ("--tensor-parallel-size=2",), version_known=False, gpu_known=False,
           why="vllm#11550: Llama-3.1-8B at TP 2 on 23.55 GiB cards (an RTX 4090 assumed), Jan 2025 (0.6.6 by "
               "date); the excerpt stops before the pool"),
    Vector("v1-0.19-gpt-oss-20b-a100-gmu065.log", "openai/gpt-oss-20b", A100_80, None,
           why="myoceane.fr 'vLLM A100' post (April 2026): openai/gpt-oss-20b on one NVIDIA A100 at gmu 0.65 and "
               "131,072 tokens, vLLM 0.19.0 (the banner); the 80 GB card by the log's own figures (0.65 of a 40 GB "
               "card is less than its 13.72 + 36.56 GiB); the pool in bytes (the post quotes no token line)"),
    # logs that stop before an outcome or a pool: the rebuild and the estimated verdict are shown, not judged
    Vector("v0.5.4-llama31-70b-2xh100-config.log", "meta-llama/Llama-3.1-70B", H100, None,
           why="vllm#10517's first post: Llama-3.1-70B-Instruct float16 on 2x H100 80GB, v0.5.4 (the log); "
               "at its native 131,072 tokens the estimate refuses, the thread's fix was a shorter length"),
    Vector("v0.4.0-qwen15-05b-namespace.log", "Qwen/Qwen2-0.5B-Instruct", RTX_4090, None, gpu_known=False,
           why="QwenLM/Qwen3#410: Qwen1.5-0.5B-Chat (Qwen2-0.5B's shape), --dtype=half, 0.4.0.post1 (the log); "
               "GPU not stated"),
    Vector("v0.8.1-kserve-llama32-1b-config.log", "meta-llama/Llama-3.2-1B", A10G, None, gpu_known=False,
           why="kserve PR #4368: meta-llama/Llama-3.2-1B-Instruct, V0 0.8.1 (the log); a CI GPU, A10G assumed"),
    Vector("v0.8.5.post1-kserve-qwen3-14b-config.log", "Qwen/Qwen3-14B", A100_80, None, gpu_known=False,
           why="kserve PR #4470: Qwen/Qwen3-14B at 4,096 tokens, V0 0.8.5.post1 (the log); GPU not stated"),
    Vector("v0.8.5-gpustack-gemma3-namespace.log", "google/gemma-3-27b-it", RTX_4090, None,
           ("--max-model-len=8192", "--tensor-parallel-size=3"), gpu_known=False,
           why="gpustack#2259: gemma-3-27b-it at --tensor-parallel-size 3 and 8,192 tokens (the worker's command "
               "line, cut in the Namespace), 0.8.5.post1 (the log); 32 heads over 3 ranks: refused"),
    Vector("v1-0.10.2dev-qwen25-05b-tp2-args.log", "Qwen/Qwen2.5-0.5B", H100, None, gpu_known=False,
           why="vllm PR #24162: Qwen2.5-0.5B at TP 2, 0.10.2.dev378 (the log); GPU not stated"),
    Vector("v1-0.8-torch-oom-two-ranks.log", config("qwq-32b"), RTX_3090, "0.8.0",
           ("--tensor-parallel-size=2", "--gpu-memory-utilization=0.95", "--max-model-len=30000", "--block-size=32",
            "--disable-custom-all-reduce"), quantization="awq",
           why="vllm#15105's first post: `vllm serve Qwen_QwQ-32B-AWQ` with the fixture header's flags on 2x RTX 3090 "
               "(the title; 23.57 GiB in the OOM line), the banner's 0.8.0; both ranks die allocating the sampler "
               "warm-up's 1,024 x 152,064 x 12 B after graph capture (128 MiB in private pools)"),
    # -- vLLM 0.11 and later, dense models: new public logs ----------------------------------------------------
    # (add rows below this block, in version order)
    Vector("v1-0.16-llama3-70b-awq-2xl40s-tp2.log", "meta-llama/Meta-Llama-3-70B", L40S, None, quantization="awq",
           why="kagaho/VLLM_Serve_llama3-70b-awq_on_L40S_with_Tensor_Parallelism_2 README: TechxGenus/Meta-Llama-3-"
               "70B-Instruct-AWQ (Meta-Llama-3-70B, AWQ) at TP 2 on NVIDIA L40S (the repo's nvidia-smi: 46068MiB, "
               "two VLLM::Worker_TP ranks), vLLM 0.16.0 (the banner), defaults otherwise (8,192 tokens, gmu 0.9)"),
    Vector("v1-0.14-qwen3-17b-one-seq-24gb.log", "Qwen/Qwen3-1.7B", RTX_4090, "0.14.0",
           ("--max-num-seqs=1", "--max-model-len=1024"), version_known=False, gpu_known=False,
           why="vllm#33263 (2026-01-28): LLM(model='Qwen/Qwen3-1.7B', max_num_seqs=1, max_model_len=1024) at the "
               "default fraction on 'a 24 GB GPU' (not named: an RTX 4090 assumed); 18.78 GiB / 175,856 tokens = "
               "114,688 B/token is Qwen3-1.7B's (28 layers x 8 KV heads x 128); the version is not printed: "
               "gpu_worker.py:358 is 0.14.0's line of the KV-memory message (0.14.0 assumed, 0.14.1 not read)"),
    Vector("v1-0.15.1-llama31-8b-a100-40gb-eager.log", "meta-llama/Llama-3.1-8B", A100_40, None,
           why="ilseokoh/vllm-gce README (the output of its test.py): LLM(model=Meta-Llama-3.1-8B-Instruct, "
               "enforce_eager=True) at defaults (131,072 tokens, gmu 0.9, 8,192 batched tokens as the log prints); "
               "vLLM 0.15.1 (the engine's config line); the README's GCE a2-highgpu-1g is one A100 40GB, and the "
               "log agrees: 14.99 + 19.28 GiB is under 0.9 of a 40 GB card, far under an 80 GB one"),
    Vector("v1-0.11-qwen3-32b-tp2-h100-gmu095-sampler-oom.log", "Qwen/Qwen3-32B", H100, "0.11.0",
           ("--tensor-parallel-size=2", "--gpu-memory-utilization=0.95"), gpu_known=False,
           why="llm-d#787: the inference-scheduling guide's decode pods (Qwen/Qwen3-32B, TP 2, "
               "--gpu-memory-utilization=0.95 and no other memory flag: the guide's ms-inference-scheduling/values.yaml), "
               "image llm-d-cuda-dev with vLLM v0.11.0 (the issue), die warming the sampler up with 1,024 dummy "
               "requests after graph capture; the nightly cluster's GPU is not named (H100 assumed: the guide "
               "benchmarks on 2 H100s per server); the issue's 41.87 GiB pool is its summary, not a log line"),
    Vector("v0.10.2-qwen3-next-80b-tp2-h200.log", "Qwen/Qwen3-Next-80B-A3B-Instruct", H200, "0.10.2",
           ("--tensor-parallel-size=2",),
           why="a public log file (index file id 7292846353, repository not named): Qwen3-Next-80B-A3B-Instruct "
               "(the log's model path and Qwen3NextForCausalLM) at TP 2, vLLM 0.10.2 and its only arguments (both "
               "printed), on H200 (its fused-MoE config file is device_name=NVIDIA_H200, 139.81 GiB CUDA total); "
               "FlashInfer missing (the sampler falls back to PyTorch, printed); a Gated DeltaNet hybrid: block 544, "
               "7,162 blocks of 12 x 557,056 B (gated_delta.py)"),
    Vector("v1-0.26-qwen25-7b-awq-rtx4080-wsl2.log", "Qwen/Qwen2.5-7B", RTX_4080, "0.26.0",
           ("--max-model-len=32768", "--gpu-memory-utilization=0.9"), "awq", env=("VLLM_USE_FLASHINFER_SAMPLER=0",),
           why="a public markdown file 'Phase 1 实验记录：vLLM 基线' (2026-08-02; index file id 57428438798, repository "
               "not named): Qwen2.5-7B-Instruct-AWQ (Qwen2.5-7B's shape, AWQ) on an RTX 4080 16376 MiB under WSL2 "
               "(the file's environment table), vLLM 0.26.0 (the same table), its section-3 command (32,768 tokens, "
               "gmu 0.90) and VLLM_USE_FLASHINFER_SAMPLER=0; its own budget line (14.39 GiB = 15.99 x 0.9) agrees "
               "with the card's CUDA total"),
    Vector("v1-0.26-llama31-8b-a40-4k.log", "meta-llama/Llama-3.1-8B", A40, None,
           ("--max-model-len=4096", "--gpu-memory-utilization=0.9", "--max-num-seqs=256"),
           why="a public test file of an 'llmbench' harness (index file id 70947466353, repository not named): its "
               "VLLM_BANNER_LOG is 'verbatim from a real v0.26.0 startup' of Llama-3.1-8B-Instruct 'on the target "
               "A40', vLLM 0.26.0 (the banner); the same file pins the command (4,096 tokens, gmu 0.9, 256 "
               "sequences)"),
    Vector("v1-0.27.1-qwen25-05b-rtx4090-wsl2-gmu085.log", "Qwen/Qwen2.5-0.5B", RTX_4090, None,
           why="a public markdown lab record of vLLM on WSL2 (index file id 61918553602, repository not named), "
               "its seventh, successful run: `vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 2048 "
               "--gpu-memory-utilization 0.85` (the log's non-default args) on one RTX 4090 24564MiB (the "
               "record's nvidia-smi), vLLM 0.27.1 (the banner); the log's lines are the V2 model runner's"),
    Vector("v1-0.11.2-qwen25-15b-rtx2000-ada-gmu06.log", "Qwen/Qwen2.5-1.5B", RTX_2000_ADA, None,
           ("--gpu-memory-utilization=0.6",),
           why="a public markdown lab guide (index file id 7256429456, repository not named), Task 3.1's sample "
               "output: `vllm serve Qwen/Qwen2.5-1.5B-Instruct --gpu-memory-utilization 0.6` on a 16 GB NVIDIA RTX "
               "2000 Ada (the sample's heading), vLLM 0.11.2 (the log), the model's 32,768 tokens"),
    Vector("v1-0.13-gemma3-1b-llm-class-gmu095-2k.log", "google/gemma-3-1b-it", RTX_5090, None, gpu_known=False,
           why="a public benchmark note (index file id 45665312624, repository not named): LLM(model='google/gemma-3-"
               "1b-it', max_model_len=2048, gpu_memory_utilization=0.95) under vLLM 0.13.0 (the log); the GPU is not "
               "named: 25.39 + 1.91 GiB at 0.95 is a ~32 GB card (an RTX 5090 assumed)"),
    # -- round 19: public logs in the version gaps (0.5, 0.17, 0.19, 0.20) ----------------------------------------
    Vector("v1-0.17.1-qwen25-14b-mi300x-rocm.log", "Qwen/Qwen2.5-14B", MI300X, None,
           why="a public deployment guide 'AMD MI300X Deployment' (index file id 55116362269, repository not named), "
               "step 6: `vllm serve Qwen/Qwen2.5-14B-Instruct` with no memory flag (gmu 0.9, the model's 32,768 "
               "tokens) on one AMD Instinct MI300X 192 GB of the AMD Developer Cloud, its Quick Start image's vLLM "
               "0.17.1 + ROCm 7.0 (the banner and the guide)"),
    Vector("v1-0.17.0-qwen3-8b-awq-tp2-sm89-gmu02.log", "Qwen/Qwen3-8B", L40S, None, quantization="awq",
           gpu_known=False,
           why="a public file holding one vLLM 0.17.0 start-up (index file id 54810965301, repository not named): "
               "Qwen3-8B-AWQ at TP 2, gmu 0.2, 32,768 tokens and --performance-mode throughput (the log's "
               "non-default args) on two compute-capability 8.9 cards without P2P, not named; 2.85 + 4.89 GiB is "
               "over 0.2 of a 24 GB card, so a 48 GB one (an L40S assumed: +7.6 %, an RTX 6000 Ada would be "
               "+22.5 %)"),
    Vector("v1-0.19.1-qwen3-8b-a100-40gb-defaults.log", "Qwen/Qwen3-8B", A100_40, None,
           why="a public blog-style note of 2026-06-25 (index file id 57978845466, repository not named): `vllm serve "
               "Qwen/Qwen3-8B` with no memory flag (gmu 0.9, 40,960 tokens: the log's non-default args) on one "
               "A100 of a 4x A100 box, CUDA_VISIBLE_DEVICES=4 in PCI_BUS_ID order, which the note's nvidia-smi lists "
               "as NVIDIA A100-SXM4-40GB (40960MiB); vLLM 0.19.1 (the banner)"),
    Vector("v1-0.19.0-qwen25-72b-4x-l40s-tp4-8k.log", "Qwen/Qwen2.5-72B", L40S, None,
           why="round 30: a Korean EKS lesson (index file id 53041548781; its manifest is gnosia93/eks-agentic-ai's "
               "vllm-qwen.yaml): Qwen/Qwen2.5-72B-Instruct bf16 at --tensor-parallel-size=4 --max-model-len=8192 "
               "--gpu-memory-utilization=0.90 on g6e.12xlarge (4x NVIDIA L40S 48GB, the lesson), vLLM 0.19.0 (the "
               "banner); the pool of TP0, the one rank that prints it"),
    Vector("v1-0.19.0-qwen35-9b-l40s-llm-class-262k.log", config("qwen3.5-9b"), L40S, None,
           why="round 30: a public notebook note 'L40s 48G' (index file id 51781852921, repository not named): "
               "LLM(model='Qwen/Qwen3.5-9B') at the class defaults (gmu 0.9, 262,144 tokens) on one NVIDIA L40S, "
               "vLLM 0.19.0 (the engine line); a Gated DeltaNet hybrid with its vision tower (attention block 528)"),
    Vector("v1-0.18.1dev-qwen35-35b-a3b-fp8-gb10-gmu080-262k.log", "Qwen/Qwen3.5-35B-A3B", GB10, None,
           quantization="fp8", version_known=False,
           why="round 30: a public `docker logs` capture (index file id 55195690679, repository not named): "
               "Qwen/Qwen3.5-35B-A3B-FP8 at gmu 0.8, 262,144 tokens, prefix caching ('align') on one GB10 (torch's "
               "capability warning), a development build 0.18.1rc1.dev147 (the banner); not scored: a development "
               "build, and on this host's unified memory +9.6 % (5.3 GiB more non-KV memory than gsg books, as the "
               "same host's 0.13.0 log: benchmarks/vectors/MISSES.md)"),
    Vector("v1-0.9.2-qwen3-8b-a100-40gb-defaults.log", "Qwen/Qwen3-8B", A100_40, None,
           why="round 30: the 0.19.1 A100 40GB note's author's earlier start (index file id 58028398527): `vllm "
               "serve Qwen/Qwen3-8B` with no memory flag (gmu 0.9, 40,960 tokens) on GPU 4 of the same 4x A100 box "
               "(its nvidia-smi: NVIDIA A100-SXM4-40GB, 40960MiB), vLLM 0.9.2 (the API server line)"),
    Vector("v1-0.9.2-qwen25-vl-7b-2x-l4-tp2-kserve.log", config("qwen2.5-vl-7b"), L4, "0.9.2",
           ("--tensor-parallel-size=2",),
           why="round 30: an OpenShift AI walkthrough of 2025-08-31 (index file id 71589812318): KServe's "
               "qwen25-vl-7b-instruct (Qwen2.5-VL-7B-Instruct) at --max-model-len 8192 --tensor-parallel-size 2 on "
               "two NVIDIA L4 (the pod's nvidia-smi, 23034MiB); no version line, but its file:line tags are 0.9.2's "
               "(cli_args.py:325, gpu_worker.py:232, kv_cache_utils.py:716 in the 0.9.2 wheel; 309/227/715 in "
               "0.9.1's, 298/864 in 0.10.2's). -5.0 % until the ViT's per-rank step at TP 2 (round 30)"),
    Vector("v1-0.9.1-r1-0528-qwen3-8b-rtx3090-32k-refused.log", "Qwen/Qwen3-8B", RTX_3090, "0.9.1",
           args=("--max-model-len=32768",),
           why="search-index file 21124328751 (an AutoDL how-to whose images are github.com/solodba/LLMOps day01): "
               "`vllm serve deepseek-ai/DeepSeek-R1-0528-Qwen3-8B --tensor-parallel-size 1 --max-model-len 32768` "
               "(Qwen3-8B's shape; gmu 0.9) on one RTX 3090 24GB (its AutoDL order), vllm 0.9.1 (its pip list); "
               "refused by 0.03 GiB (4.50 GiB needed, 4.47 available)"),
    Vector("v1-0.10.1.1-llama31-8b-fp16-ansi-131k.log", "meta-llama/Llama-3.1-8B", A100_40, None, gpu_known=False,
           why="search-index file 46454478915 (a study note's 'sample log' from a /home/jupyter notebook VM): `vllm "
               "serve Meta-Llama-3.1-8B-Instruct --dtype float16` (gmu 0.9, 131,072 tokens), vLLM 0.10.1.1 (the "
               "log); the card is not named: 14.99 GiB of weights and a 19.25 GiB pool fit a 40 GB A100's budget"),
    Vector("v1-0.11-llava16-mistral-7b-rtx5080-wsl-no-cache-blocks.log", config("llava-v1.6-mistral-7b"), RTX_5080,
           None,
           why="search-index file 10873344026 (a WSL2 + vLLM note tested on an RTX 5080 16GB): LLaVA-1.6-Mistral-7B "
               "through the LLM class at gmu 0.85, 4,096 tokens, one sequence, vLLM 0.11.0 (the log): 14.08 GiB of "
               "weights against a 13.5 GiB budget, 'No available memory for the cache blocks'"),
    Vector("v1-0.10.2-llava16-mistral-7b-h100-llm-class-terms.log", config("llava-v1.6-mistral-7b"), H100, None,
           why="search-index file 34680831065 (a vlm_inference_with_vllm.py run): LLaVA-1.6-Mistral-7B through the "
               "LLM class, 4,096 tokens, vLLM 0.10.2 (the log); the card is not named, but its 79.19 GiB CUDA total "
               "and the LLM class's 16,384 batched tokens (>= 70 GiB and not an A100: arg_utils.py) are an 80 GB "
               "H100's, SXM or PCIe alike at TP 1. Its budget line prints every term: 14.08 weights, 1.97 peak "
               "activation, 0.07 non-torch, 0.67 GiB CUDA graphs (gsg: 14.07, 1.72, 0.35, 0.79)"),
    Vector("v1-0.23-qwen25-vl-7b-a100-80gb-gmu022-video-refused.log", config("qwen2.5-vl-7b"), A100_80, None,
           why="search-index file 55021192520: Qwen2.5-VL-7B-Instruct on one A100-SXM4-80GB (its nvidia-smi), vLLM "
               "0.23.0 (the image tag and the log), gmu 0.22, default 128,000 tokens: the encoder profile is one "
               "video of 114,688 tokens (profiles.VLLM_VIDEO_ROWS), -14.28 GiB of KV memory, refused"),
    Vector("v1-0.8.2-qwen25-vl-7b-h100-llm-class-10-images-10-videos.log", config("qwen2.5-vl-7b"), H100, "0.8.2",
           args=("--max-num-batched-tokens=16384", "--max-num-seqs=1024", "--limit-mm-per-prompt=image=10,video=10"),
           why="QwenLM/Qwen3-VL#1057: Qwen2.5-VL-7B-Instruct on one H100-SXM-80GB, vllm==0.8.2 (the issue's "
               "environment), the README's LLM(limit_mm_per_prompt={'image': 10, 'video': 10}) at the default "
               "128,000 tokens; the LLM class's 16,384 batched tokens and 1,024 sequences on an H100 "
               "(engine/arg_utils.py@v0.8.2). 10 images' tokens leave no frames, so the one-frame video ties the "
               "image and the image is profiled (profiles.VLLM_VIDEO_ROWS), as the log says"),
    Vector("v1-0.10dev-llama32-1b-debug-profile.log", "meta-llama/Llama-3.2-1B", L40S, "0.10.1", version_known=False,
           gpu_known=False,
           why="search-index file 21240355802: `VLLM_LOGGING_LEVEL=DEBUG vllm serve meta-llama/Llama-3.2-1B` on a "
               "development build between 0.10.0 and 0.10.1 (0.1.dev8168+g475c1a0; 0.10.1 assumed); the card is "
               "not named: its budget line gives a 44.31 GiB CUDA total, an L40S-class card (44.42) assumed"),
    Vector("v1-0.18-qwen25-7b-fp16-eager-llm-class-sm70.log", "Qwen/Qwen2.5-7B", V100_32, None, gpu_known=False,
           why="search-index file 53128951888 (an interference-study run log): Qwen2.5-7B-Instruct fp16, eager, "
               "through the LLM class (8,192 batched tokens), gmu 0.9, 32,768 tokens, vLLM 0.18.0 (the log); the "
               "card is not named, only that FlashAttention 2 refuses it (compute capability < 8): a V100 32GB is "
               "assumed (14.25 GiB of weights and a 13.1 GiB pool fill 0.9 of a 32 GB card)"),
    Vector("v1-0.20.0-llama31-8b-awq-t4-g4dn-cut.log", "meta-llama/Llama-3.1-8B", T4, None, quantization="awq",
           why="a public blog post on vLLM on EKS (index file id 67429437017, repository not named): hugging-quants/"
               "Meta-Llama-3.1-8B-Instruct-AWQ-INT4 with --dtype half --quantization awq --max-model-len 4096 (the "
               "log's non-default args) on one g4dn.xlarge (one T4 16 GB, the post), vLLM 0.20.0 (the banner); the "
               "post cuts the log after the arguments and says the model served"),
    Vector("v0.4.0.post1-opt-125m-a100-80gb-llm-class.log", config("opt-125m"), A100_80, None,
           why="a public cluster-setup README (index file id 23744917045, repository not named): src/test_vllm.py's "
               "LLM(model='facebook/opt-125m') at the class defaults (gmu 0.9, 2,048 tokens: the config line) under "
               "vLLM 0.4.0.post1 (the log) on one NVIDIA A100-SXM4-80GB (torch.cuda.get_device_name and nvidia-smi "
               "in the same README, 81920MiB, no other process)"),
    Vector("v0.2.4-codellama-13b-2x4090-tp2-16k.log", config("codellama-13b"), RTX_4090, "0.2.4",
           args=("--max-model-len=16384", "--max-num-seqs=16", "--tensor-parallel-size=2", "--swap-space=8",
                 "--gpu-memory-utilization=0.95"),
           why="vllm#2136: TheBloke/CodeLlama-13B-Instruct-fp16 on 2x RTX 4090 at TP 2, 16,384 tokens, 16 sequences, "
               "gmu 0.95 (the issue's command); 1,464 blocks under 0.2.3 and 0.2.4 alike (the issue). 0.2.4 budgets "
               "torch's peak alone (profiles VllmProfile.torch_peak_only); +5.2 %: the 4090's CUDA total "
               "(benchmarks/vectors/MISSES.md)"),
    Vector("v0.2.7-llama2-13b-chat-llm-class-80gb.log", "meta-llama/Llama-2-13b-hf", A100_80, "0.2.7", gpu_known=False,
           why="a public blog post (index file id 26999117841, repository not named): LLM() over Llama-2-13b-chat-hf "
               "at the class defaults (gmu 0.9, 4,096 tokens: the config line), vllm==0.2.7 (the post's pins; the "
               "blocks line's llm_engine.py:275 is that line in the 0.2.7 sdist), GPU 6 of an eight-GPU host not "
               "named: the pool (41.72 GiB) and the weights need an 80 GB card, A100 80GB assumed: +12.5 % "
               "(benchmarks/vectors/MISSES.md)"),
    Vector("v0.2.6-mistral-7b-2xa10g-tp2-gmu095-32k-modal.log", "mistralai/Mistral-7B-Instruct-v0.3", A10G, "0.2.6",
           args=("--gpu-memory-utilization=0.95", "--tensor-parallel-size=2"),
           why="a fork's README of modal-labs/llm-finetuning (index file id 21938132461): a merged Mistral-7B-v0.1 "
               "fine-tune (v0.3's shape, as the 0.3.3 row says) in bf16 at 32,768 tokens (the config line) served by "
               "src/inference.py at that date: AsyncEngineArgs(gpu_memory_utilization=0.95, tensor_parallel_size=2) "
               "on gpu='a10g:2', vllm==0.2.6 (src/common.py; the blocks line's llm_engine.py:223 is that line in the "
               "0.2.6 wheel); +4.8 % with the A10G's CUDA total (profiles.CUDA_TOTALS)"),
    Vector("v0.2.7-mistral-7b-v01-openllm-gmu09-15k.log", "mistralai/Mistral-7B-Instruct-v0.3", L4, "0.2.7",
           args=("--gpu-memory-utilization=0.9",), gpu_known=False,
           why="an OpenLLM notes page (index file id 49808966296): `openllm start mistralai/Mistral-7B-Instruct-v0.1 "
               "--gpu_memory_utilization=.9 --max_model_len=15120 --backend vllm` (15,120 in the config line), "
               "bf16, vllm 0.2.7 (llm_engine.py:70 and :275, as the 0.2.7 Llama-2-13b row); the GPU is not named: "
               "the page's T4 has no bf16 and too little memory, the page asks for 24 GB: an L4 assumed "
               "(benchmarks/vectors/MISSES.md)"),
    Vector("v0.6.6.post1-qwen25-05b-t4-colab-llm-class.log", "Qwen/Qwen2.5-0.5B", T4, None,
           why="Korean study notes on orca3/llm-model-inference's ch2 notebook (index file id 69421856836): "
               "LLM(model='Qwen/Qwen2.5-0.5B', dtype='float16') at the class defaults (gmu 0.9, 32,768 tokens) under "
               "vllm==0.6.6.post1 (the config line) on Colab's Turing card, a T4 (XFormers: 'Cannot use "
               "FlashAttention-2 backend for Volta and Turing GPUs'); the profile line's CUDA total is 14.56 GiB"),
    Vector("v0.4.1-llama3-8b-rtx3090-8k-xformers.log", "meta-llama/Meta-Llama-3-8B", RTX_3090, None,
           why="a Chinese inference-framework benchmark README (index file id 29195317024): api_server --model "
               "Meta-Llama-3-8B-Instruct --dtype auto (the Namespace line: gmu 0.9, 256 sequences, 8,192 tokens), "
               "bf16, XFormers, vLLM 0.4.1 (the log) on the README's one RTX 3090 24G (driver 535); -3.5 % "
               "with the profile's reserved segments (+7.1 % without; benchmarks/vectors/MISSES.md)"),
    Vector("v0.4.1-llama3-8b-rtx3090-8k-flashattn-bench.log", "meta-llama/Meta-Llama-3-8B", RTX_3090, None,
           why="public notes on an RX 7900 with 'a 3090' as reference (index file id 43499199491): "
               "benchmark_throughput.py over NousResearch/Meta-Llama-3-8B (the Namespace line: gmu 0.9, 8,192 "
               "tokens, 256 sequences), bf16, FlashAttention, vLLM 0.4.1 (the log); 2,354 blocks here and with "
               "XFormers, against the other 3090 README's 2,358: -3.3 % (+7.3 % before the reserved-segment rule)"),
    Vector("v0.4.1-nim-1.0-llama3-8b-tp1-80gb.log", "meta-llama/Meta-Llama-3-8B", H100, None, gpu_known=False,
           args_known=False,
           why="NVIDIA's NIM-on-NVCF documentation page (index file id 32852581390): NIM LLM 1.0.0's vllm-fp16-tp1 "
               "profile of llama3-8b-instruct, vLLM 0.4.1 (the engine line), bf16, 8,192 tokens; neither the GPU nor "
               "NIM's engine arguments are printed: 27,793 blocks (54.3 GiB) need an 80 GB card, an H100 and vLLM's "
               "defaults assumed: +0.3 % with the 0.4.1 profile's reserved segments (+1.3 % without), +1.7 % on an "
               "A100 80GB"),
    Vector("v0.3.3-mistral-7b-v01-mig-40gb-ray.log", "mistralai/Mistral-7B-Instruct-v0.3", A100_MIG_40, "0.3.3",
           gpu_known=False,
           why="a public notes page (index file id 9907432117, repository not named): mistralai/Mistral-7B-Instruct-"
               "v0.1 (v0.3's shape: 32 layers, 8 KV heads x 128, 14,336 wide; v0.3 adds 768 vocabulary rows and "
               "drops v0.1's 4,096-token window, which V0 0.3.3 sizes no pool by) through api_server --worker-use-"
               "ray at gmu 0.9 and 32,768 tokens (the Namespace and config lines); 0.3.3 because the blocks line's "
               "llm_engine.py:357 is that line in the 0.3.3 sdist (no version printed before 0.4.1); the GPU is a "
               "40192MiB MIG slice (the page's nvidia-smi), the parent card not named: not scored"),
    Vector("v0.5.4-llama31-8b-bf16-a100-bench-512.log", "meta-llama/Llama-3.1-8B", A100_40, None, gpu_known=False,
           why="a public README comparing quantization methods (index file id 5655614781, repository not named): "
               "benchmark_throughput.py --max-model-len 512 at gmu 0.9 (the Namespace line) under vLLM 0.5.4 (the "
               "log) on the author's host 'david1a100'; the A100's size is not printed: 9,930 blocks fit a 40 GB "
               "one (+1.9 %), an 80 GB one would hold 2.9 times as many"),
    Vector("v0.5.4-llama31-8b-gptq-marlin-a100-bench-512.log", "meta-llama/Llama-3.1-8B", A100_40, None,
           quantization="gptq", gpu_known=False,
           why="the same README's GPTQ 4-bit run (kaitchup/Meta-Llama-3.1-8B-Instruct-gptq-4bit as gptq_marlin) on "
               "the same host, command and vLLM 0.5.4: a second weights figure on the card the bf16 run sizes"),
    Vector("v1-0.10.1-gpt-oss-120b-h100-pcie-no-kv-memory.log", "openai/gpt-oss-120b", H100_PCIE, "0.10.1",
           version_known=False, args_known=False,
           why="vllm#23278 (2025-08-20): openai/gpt-oss-120b on one NVIDIA H100 PCIe (the reporter's collect_env), "
               "torch 2.7.1 (0.10.1 by date and pin); no command beyond the model: defaults assumed; the excerpt "
               "stops at the traceback's first line after a negative KV budget (-2.14 GiB): refused"),
    Vector("v1-0.24-qwen25-7b-shape-8k-vast-serve.log", "Qwen/Qwen2.5-7B", RTX_5090, None, gpu_known=False,
           why="a public test file's verbatim vLLM 0.24.0 serve log (index file id 62752965317, repository not "
               "named): /workspace/base at 8,192 tokens and gmu 0.9; 57,344 B per token and a 14.19 GiB checkpoint "
               "are Qwen2.5-7B's shape; the GPU is not named (a rented box, '<70 GiB'; an RTX 5090 assumed)"),

    # -- vLLM: MoE, multimodal and hybrid-attention models ---------------------------------------------------
    # (add rows below this block)
    Vector("v1-0.21dev-dsv4-flash-2x-gb10-tp2-ep-1m.log", "deepseek-ai/DeepSeek-V4-Flash", GB10, "0.21.0",
           args=("--tensor-parallel-size=2", "--enable-expert-parallel", "--kv-cache-dtype=fp8", "--block-size=256"),
           version_known=False,
           why="NVIDIA developer forum thread 370416, a reply of 05-17 quoting its start-up: DeepSeek-V4-Flash on two "
               "DGX Sparks (TP 2 with expert parallel, Worker_TP0_EP0), a community build of the SM12x V4 branch "
               "(gpu_worker.py:462 and kv_cache_utils.py:1710 sit between 0.20.0 and 0.21.0), gmu 0.9 (its own "
               "graph-profiling line), 1,048,576 tokens, fp8 KV and block 256 (the recipe's); a development build, "
               "so KV is shown, not scored (+13.1 % at the GB10's 2,048 default batched tokens, +2.2 % at 8,192: "
               "benchmarks/vectors/MISSES.md, the second V4 log and round 26)"),
    Vector("v0.7.2-qwen25-math-15b-l40-gmu085-4k.log", "Qwen/Qwen2.5-1.5B", L40, None,
           why="public course notes (index file id 60430572081, repository not named): Qwen2.5-Math-1.5B (Qwen2.5-"
               "1.5B's shape: 28 layers, 2 KV heads x 128, tied 151,936-row vocabulary; its own 4,096 positions are "
               "the engine line's max_seq_len) through the LLM class, V0 of 0.7.2 (printed), gmu 0.85 (the profile "
               "line) on the notes' NVIDIA L40 (nvidia-smi 46068MiB)"),
    Vector("v0.7.2-qwen25-math-15b-a10-gmu09-4k.log", "Qwen/Qwen2.5-1.5B", A10, None,
           why="the same notes' test script (index file id 60663571995): the same model and 0.7.2 at gmu 0.90; "
               "22.06 GiB CUDA total is the notes' NVIDIA A10 (nvidia-smi 23028MiB, 【环境1】)"),
    Vector("v0.6.3dev-llama2-7b-mi300x-rocm-bench.log", config("llama-2-7b"), MI300X, None,
           why="public notes on vLLM and MI300X (index file id 43425326930, repository not named): "
               "benchmark_throughput.py with meta-llama/Llama-2-7b-chat-hf at gmu 0.9 (the Namespace line), vLLM "
               "0.6.3.dev114 built for ROCm 6.2.2 (printed), one MI300X (the notes' '1 x MI300', gfx942)"),
    Vector("v0.6.3dev-llama2-7b-8xmi300x-tp8-rocm-bench.log", config("llama-2-7b"), MI300X, None,
           why="the same notes' TP 8 run (-tp 8, multiprocessing workers, 1.5874 GB of weights per rank) on 8x MI300X"),
    Vector("v0.4.1-llama3-8b-w7900-rocm-navi-8k-bench.log", "meta-llama/Meta-Llama-3-8B",
           ("AMD Radeon PRO W7900", "49136MiB"), None, env=("VLLM_USE_TRITON_FLASH_ATTN=0",), gpu_known=False,
           why="the RX 7900/3090 notes (index file id 43499199491), their first ROCm run: NousResearch Meta-Llama-3-"
               "8B through benchmark_throughput.py at gmu 0.9 (the Namespace line) on the Radeon PRO W7900 the notes "
               "received (48 GB, gfx1100), vLLM 0.4.1 (printed) built with BUILD_FA=0; V0 of 0.4.1 prints no total "
               "and no profile terms, so the card's total as ROCm reports it is assumed (48 GiB less the 3090-like "
               "reserve): KV not scored, +14.7 % (MISSES.md, round 27)"),
    Vector("v1-0.8.4-qwen25-7b-rtx3090-4k-llm-class.log", "Qwen/Qwen2.5-7B", RTX_3090, None,
           why="a public blog post on deploying vLLM (index file id 60295104134, repository not named): "
               "LLM(model=Qwen2.5-7B from ModelScope, max_model_len=4096) at the default gmu on one of the "
               "author's four RTX 3090s ('配置 4 张 3090 显卡'), V1 of 0.8.4 (printed), FlashInfer absent (the "
               "sort path, the log's own line)"),
    Vector("v1-0.8.4-qwen25-7b-2x-rtx3090-tp2-gmu08-4k.log", "Qwen/Qwen2.5-7B", RTX_3090, None,
           ("--tensor-parallel-size=2", "--gpu-memory-utilization=0.8"),
           why="the same post's TP 2 call (tensor_parallel_size=2, gpu_memory_utilization=0.8 in its code; the V1 "
               "config line prints the TP size but not gmu) on two of the 3090s, custom all-reduce off (no P2P)"),
    Vector("v1-0.8.4-r1-distill-qwen7b-2x-rtx3090-tp2-gmu08-4k.log", "Qwen/Qwen2.5-7B", RTX_3090, None,
           ("--tensor-parallel-size=2", "--gpu-memory-utilization=0.8"),
           why="the same post's DeepSeek-R1-Distill-Qwen-7B call (Qwen2.5-7B's shape: 28 layers, 4 KV heads x 128, "
               "152,064-row vocabulary) with the same arguments as its Qwen2.5-7B TP 2 call"),
    Vector("v0.7.3-phi4-mini-a100-40gb-fp16-2k.log", "microsoft/Phi-4-mini-instruct", A100_40, None,
           why="a public notebook export (index file id 25017508238, repository not named), a Colab fine-tuning "
               "pipeline's vLLM evaluation of 2025-08-06: microsoft/phi-4-mini-instruct with a merged LoRA adapter "
               "(the same shape), fp16 and 2,048 tokens (the engine line), gmu 0.90 (the profile line), V0 of "
               "0.7.3 (printed); 39.56 GiB CUDA total is an A100 40GB"),
    Vector("v0.7.1-deepseek-coder-v2-lite-8xa100-40gb-tp8-djl.log", "deepseek-ai/DeepSeek-V2-Lite", A100_40, None,
           args=("--max-num-seqs", "2"),
           why="search-index file 3706561278, a SageMaker LMI walkthrough (DJL 0.32.0, vLLM 0.7.1 printed): "
               "DeepSeek-Coder-V2-Lite-Instruct (DeepSeek-V2-Lite's shape) on ml.p4d.24xlarge (8x A100-SXM4-40GB, "
               "NVSwitch) at TP 8 ('max'), fp16, 8,192 tokens, gmu 0.9; OPTION_MAX_ROLLING_BATCH_SIZE=2 is DJL's "
               "max_num_seqs. One worker's profile line: non-torch 2.10 GiB at TP 8 on NVLink, V0"),
    Vector("v0.8.2-llama32-3b-t4-fp16-2k-vllm-stdout.log", "meta-llama/Llama-3.2-3B", T4, None,
           why="a public notebook export 'Documentation Chatbot with Meta Synthetic Data Kit' (index file id "
               "7884883735, repository not named), run on Colab's free T4 (its 'Hardware Used'; 14.74 GiB CUDA "
               "total): Unsloth's SyntheticDataKit serves unsloth/Llama-3.2-3B-Instruct with vLLM 0.8.2, which "
               "falls back to V0 below compute capability 8.0; every argument is in the printed args line "
               "(fp16, 2,048 tokens, gmu 0.894, 192 sequences, prefix caching); lines carry a 'vLLM STDOUT: ' prefix"),
    Vector("v0.7-deepseek-r1-8xh200-tp8-gmu085-128k.log", "deepseek-ai/DeepSeek-R1", H200, "0.7.3",
           ("--tensor-parallel-size=8", "--gpu-memory-utilization=0.85", "--max-model-len=128000",
            "--max-num-batched-tokens=32000", "--max-num-seqs=1024", "--trust-remote-code"), version_known=False,
           why="a public markdown note on offline installs (index file id 20903468563, repository not named): its "
               "`vllm serve .../DeepSeek-R1` command (TP 8, gmu 0.85, 128,000 tokens, 32,000 batched tokens, 1,024 "
               "sequences) on 8 x H200 143771MiB (its nvidia-smi); the version is not printed: `pip download "
               "vllm` on 2025-03-15 gives 0.7.3, whose V0 pads the MLA latent to 640 elements (78,080 B/token, "
               "the log's 21.43 GiB / 294,688 tokens); its weights (+5.5 GiB, the absorbed W_Q_UK / W_UV_O) and "
               "non-torch memory (7.16 GiB) are not modelled: KV shown, not scored (benchmarks/vectors/MISSES.md)"),
    Vector("v0.6.4dev-llama31-8b-24gb-131k-refused.log", "meta-llama/Llama-3.1-8B", RTX_4090, None, gpu_known=False,
           why="a Korean vLLM practice repository's 'Example Source Code' notes (index file id 49009726947, repository "
               "not named): LLM(model='meta-llama/Llama-3.1-8B-Instruct') at defaults under 0.6.4.dev26 (printed), "
               "refused: 41,200 tokens of KV below 131,072; the GPU is not named (a 24 GB card by its figures)"),
    Vector("v0.6.4dev-llama31-8b-24gb-40k.log", "meta-llama/Llama-3.1-8B", RTX_4090, None, gpu_known=False,
           why="the same notes' fixed run: gpu_memory_utilization=0.9, max_model_len=40960 (its code), started"),
    Vector("v0.8-llama32-3b-gguf-q8-rtx4070-laptop-10k.log", "meta-llama/Llama-3.2-3B", RTX_4070_LAPTOP, "0.8.2",
           ("--enforce-eager", "--max-model-len=10000"), "gguf:q8_0", version_known=False,
           why="eformat/ragit-dev docs/2-local-rag (LangChain walk-through, 2025-03-29): `vllm.entrypoints.openai."
               "api_server --model Llama-3.2-3B-Instruct-Q8_0.gguf --quantization gguf --enforce-eager "
               "--max-model-len=10000` on an 'NVIDIA GeForce RTX 4070 - 8GB VRAM' laptop (7.65 GiB CUDA total); "
               "the version is not printed: `pip install vllm --upgrade` that day is 0.8.2 (V0 for GGUF)"),
    Vector("v1-0.8-gemma3-1b-32k-kv-tokens.log", "google/gemma-3-1b-it", L40S, "0.8.2", version_known=False,
           gpu_known=False,
           why="vllm#14696 (a comment of 2025-03-28): Gemma 3 on V1 at its default 32,768 tokens; 1,139,728 tokens x "
               "26,624 B (26 layers x 1 KV head x 256, every window layer at full length: no hybrid KV-cache "
               "manager before 0.9.2) and 1.91 GiB of weights are gemma-3-1b-it; the version is not printed "
               "(gpu_model_runner.py line 1201 lies between 0.8.0's 1140 and 0.8.5's 1347: 0.8.2 by date); the "
               "GPU is not named: 28.26 GiB of pool + 1.91 GiB of weights at gmu 0.9 fits no 40 or 80 GB card, "
               "a 48 GB-class card assumed (L40S)"),
    Vector("v1-0.11-gpt-oss-120b-h100-gmu095-pool.log", "openai/gpt-oss-120b", H100, "0.11.0",
           ("--gpu-memory-utilization=0.95", "--max-num-batched-tokens=1024"),
           why="vllm#27508: openai/gpt-oss-120b on one 'NVIDIA H100 80GB HBM3' (the reporter's collect_env), the "
               "second run's command (gmu 0.95, 1,024 batched tokens); vLLM 0.11.0 by the thread's own traceback "
               "(kv_cache_utils.py lines 699 and 1243, gpu_model_runner.py line 3221 are 0.11.0's and neither "
               "0.10.2's nor 0.11.1's; torch 2.8.0); the log stops after the pool (refused at 131,072 tokens, "
               "the reporter's words): the pool in bytes"),
    Vector("v1-0.14.1-gpt-oss-120b-h100-cut.log", "openai/gpt-oss-120b", H100, "0.14.1",
           ("--gpu-memory-utilization=0.97", "--max-num-seqs=1", "--max-model-len=5120", "--enable-prefix-caching",
            "--async-scheduling"), gpu_known=False,
           why="vllm#33155: gpt-oss-120b on 'one H100' (SXM or PCIe not said) with v0.14.1 (the title), the "
               "issue's second command (gmu 0.97, -O3, 1 sequence, 5,120 tokens); the quoted log stops after "
               "torch.compile (64.38 GiB of Triton MXFP4 weights logged); the thread reports OOM after it"),
    Vector("v1-0.10.1.1-gpt-oss-120b-4xa100-80gb-tp4-four-nodes.log", "openai/gpt-oss-120b", A100_80, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 9', log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log): "
               "gpt-oss-120b at TP 4 over Ray on four A100 80GB pods of four nodes (the file name, the README's "
               "platform; 'Custom allreduce is disabled because this process group spans across nodes'), gmu 0.8, "
               "16,384 tokens, vLLM 0.10.1.1 (the log), MXFP4 through Marlin (no native FP4 on SM80)"),
    Vector("v1-0.10.2-qwen3-235b-fp8-8xl40s-tp8-ep.log", "Qwen/Qwen3-235B-A22B", L40S, None,
           quantization="fp8",
           why="a public markdown file 'Hosting Qwen3-235B-A22B-Instruct-2507-FP8 on 8xL40S' (index file id "
               "38962983769, repository not named): its 'vllm logs' section, `vllm serve ...-FP8 "
               "--tensor-parallel-size 8 --enable-expert-parallel --gpu-memory-utilization 0.90 --swap-space 0 "
               "--max-model-len 32K` (the log's own non-default args), vLLM 0.10.2 (the log), eight NVIDIA L40S "
               "46068MiB (the file's nvidia-smi, eight VLLM::Worker_TP*_EP* processes)"),
    Vector("v1-0.24-qwen3-coder-30b-a3b-4xl40s-tp4.log", "Qwen/Qwen3-30B-A3B", L40S, "0.24.0",
           ("--tensor-parallel-size=4", "--max-model-len=32768", "--gpu-memory-utilization=0.9",
            "--enable-prefix-caching"), env=("VLLM_USE_FLASHINFER_SAMPLER=0",),
           why="aws-samples/sample-claude-code-multi-model self-hosted/vllm/README.md: Qwen3-Coder-30B-A3B-Instruct "
               "(Qwen3-30B-A3B's shape, BF16) on a g6e.12xlarge, 4x NVIDIA L40S (the README's reference node), vLLM "
               "0.24.0 (its verified stack), scripts/vllm-serve.sh's defaults (TP 4, 32,768 tokens, gmu 0.90, "
               "prefix caching) with VLLM_USE_FLASHINFER_SAMPLER=0 (the README's DLAMI fix)"),
    # -- round 21: public logs of 0.30+ ----------------------------------------------------------------------------
    Vector("v1-0.31.0-llama31-8b-a100-80gb-defaults.log", "meta-llama/Llama-3.1-8B", A100_80, "0.31.0",
           why="a public lab record (index file id 70682754770, repository not named): Llama-3.1-8B-Instruct on one "
               "A100 80GB (SXM or PCIe not stated, 81,920 MiB either way; the log's 79.25 GiB CUDA total), image "
               "vllm/vllm-openai:v0.31.0-ubuntu2404 with `--model` alone (the record's docker run): 0.31.0's "
               "defaults (gmu 0.92, as the log's budget line prints; 131,072 tokens)"),
    # -- round 24: a public 0.31.0 log on a B200 ---------------------------------------------------------------------
    Vector("v1-0.31.0-qwen3-32b-nvfp4-b200-gmu090.log", "Qwen/Qwen3-32B", B200, None,
           ("--max-model-len=4096", "--max-num-seqs=512", "--max-num-batched-tokens=16384",
            "--gpu-memory-utilization=0.90", "--no-enable-prefix-caching", "--api-server-count=4",
            "--kv-cache-dtype=bfloat16"), quantization="nvfp4",
           why="https://github.com/cezarc1/decodebench/blob/1d177176acc9c56c6bd505938be332cdcff5f9f9/tests/"
               "vllm_logs.py (NV_LINES, verbatim lines of its smoke-r2-2 run; index file id 70402968748): "
               "Qwen3-32B as ggamecrazy/Qwen3-32B-NVFP4-W4A4 (W4A4 NVFP4, lm_head kept 16-bit) on one NVIDIA B200 "
               "SXM (the README's results), vLLM 0.31.0 (the log), the command of fp4bench/studies/base.py "
               "ServerSettings.args (4,096 tokens, 512 sequences, 16,384 batched tokens, gmu 0.90, no prefix "
               "caching, 4 API servers, bf16 KV)"),
    Vector("v1-0.31.0-qwen3-32b-mxfp4-b200-gmu090.log", "Qwen/Qwen3-32B", B200, None,
           ("--max-model-len=4096", "--max-num-seqs=512", "--max-num-batched-tokens=16384",
            "--gpu-memory-utilization=0.90", "--no-enable-prefix-caching", "--api-server-count=4",
            "--kv-cache-dtype=bfloat16"), quantization="mxfp4_dense",
           why="https://github.com/cezarc1/decodebench/blob/1d177176acc9c56c6bd505938be332cdcff5f9f9/tests/"
               "vllm_logs.py (MX_LINES, verbatim lines of its smoke-r2-2 run; index file id 70402968748): "
               "Qwen3-32B as ggamecrazy/Qwen3-32B-MXFP4-W4A4 (llm-compressor W4A4 MXFP4, compressed-tensors "
               "mxfp4-pack-quantized on every Linear but lm_head: 4.25 bits, quant.MXFP4_DENSE) on one NVIDIA B200 "
               "SXM, vLLM 0.31.0 (the log), the same command as the NVFP4 twin above (4,096 tokens, 512 sequences, "
               "16,384 batched tokens, gmu 0.90, no prefix caching, 4 API servers, bf16 KV)"),
    # -- round 22: 0.19-0.20 logs on cards of 80 GB and more (issue 32's 0.19 H100 item) ---------------------------
    Vector("v1-0.19.2dev-glm4-9b-h200-gmu060-llm-class.log", "THUDM/glm-4-9b-chat", H200, None,
           ("--gpu-memory-utilization=0.6", "--trust-remote-code", "--max-num-batched-tokens=16384"),
           why="an audit trail (index file id 54092400981, repository not named): GLM-4-9B-Chat through the LLM "
               "class (its benchmark script with --gpu-mem-util 0.60) on one NVIDIA H200 (the audit's nvidia-smi), "
               "vLLM 0.19.2rc1.dev100 (the engine line), the model's 131,072 tokens; 16,384 batched tokens is the "
               "LLM class's default on a card of 70 GiB or more that is not an A100 (arg_utils.py@v0.19.0 "
               "_set_default_args), which the excerpt does not print"),
    Vector("v1-0.18.0-qwen35-9b-fp8kv-l40s-modal-64k.log", config("qwen3.5-9b"), L40S, None,
           why="a public research note of 2026-03-27 (index file id 57489989625, repository not named), its Modal log "
               "of LLM(model='Qwen/Qwen3.5-9B', max_model_len=65536, gpu_memory_utilization=0.90, "
               "kv_cache_dtype='fp8', dtype='bfloat16', enable_prefix_caching=True) on Modal's L40S 48GB (the note's "
               "config), vLLM 0.18.0 (the engine line), 8,192 batched tokens (the log)"),
    Vector("v1-0.19.1-qwen3-8b-80gb-pod-profiled.log", "Qwen/Qwen3-8B", H100, None, gpu_known=False, args_known=False,
           why="a public test file (index file id 70933724306, repository not named) quoting its project's 0.19.1 "
               "start of 2026-09-30 verbatim: Qwen3-8B's pool on an 80 GB card (another start prints 77.91 GiB free "
               "on it), neither the card nor the profiled start's flags named; an H100 at gmu 0.9 is assumed (+0.1 "
               "%; an A100 80GB at 0.9 gives +4.3 %), so it is not scored"),
    Vector("v1-0.20-qwen3-reranker-8b-rtx-pro-6000-gmu085-1k.log", "Qwen/Qwen3-8B", RTX_PRO_6000, "0.20.1",
           ("--gpu-memory-utilization=0.85", "--max-model-len=1024", "--trust-remote-code",
            "--max-num-batched-tokens=16384"),
           why="a notebook summary (index file id 67126228976, repository not named): Qwen3-Reranker-8B (Qwen3-8B's "
               "shape) through the LLM class at gmu 0.85 and 1,024 tokens on Colab's RTX PRO 6000 Blackwell Server "
               "Edition; vLLM 0.20.1 or 0.20.2 (kv_cache_utils.py:1708 is theirs, 0.20.0 prints 1711; "
               "gpu_worker.py is the same in all three); 16,384 batched tokens: the LLM class on a >= 70 GiB card"),
    Vector("v1-0.27.1-qwen3-235b-fp8-4x-rtx-pro-6000-tp4.log", "Qwen/Qwen3-235B-A22B", RTX_PRO_6000, "0.27.1",
           ("--tensor-parallel-size=4", "--gpu-memory-utilization=0.9", "--max-model-len=32768",
            "--max-num-seqs=32"), "fp8", env=("VLLM_USE_DEEP_GEMM=0",),
           why="a public blog post (index file id 57976227484, kubesimplify, 2026-08-18): "
               "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 (block FP8) at TP 4 on four RTX PRO 6000 Blackwell Server "
               "Edition without NVLink (the post's machine and topology), vLLM 0.27.1 (the post's software; "
               "gpu_worker.py:789 and kv_cache_utils.py:2235 are 0.27's), the post's docker command: gmu 0.90, "
               "32,768 tokens, 32 sequences, VLLM_USE_DEEP_GEMM=0"),
    Vector("v1-0.27.1-qwen25-05b-rtx4090-wsl2-llm-class-gmu092.log", "Qwen/Qwen2.5-0.5B", RTX_4090, "0.27.1",
           why="a public lab record (index file id 61815222665, repository not named; the same RTX 4090 24564MiB "
               "under WSL2 as the 0.27.1 `vllm serve` row): a notebook's offline LLM() run of "
               "Qwen2.5-0.5B-Instruct under vLLM 0.27.1 (the record), gmu 0.92 and 8,192 batched tokens (the log's "
               "lines), the model's own 32,768 tokens"),
    Vector("v1-0.30-hermes4-14b-fp8-gb10-gmu055.log", "Qwen/Qwen3-14B", GB10, "0.30.0", quantization="fp8",
           why="a public benchmark page (index file id 70267910602, repository not named): 'GB10, vLLM 0.30, "
               "gpu-mem-util 0.55' for every candidate (the log's graph-profiling line prints 0.5500); "
               "NousResearch/Hermes-4-14B-FP8 is Qwen3-14B's shape in compressed-tensors FP8; 32,768 tokens (the "
               "concurrency line); the page quotes no command, and a dense model's pool moves under 1 % with the "
               "batched tokens (2,048 to 8,192)"),
    Vector("v1-0.30-qwen3-30b-a3b-fp8-gb10-gmu055.log", "Qwen/Qwen3-30B-A3B", GB10, "0.30.0", quantization="fp8",
           why="the same page: Qwen/Qwen3-30B-A3B-Thinking-2507-FP8 (Qwen3-30B-A3B's shape, block FP8) on the GB10 "
               "at gmu 0.55 and 32,768 tokens"),
    Vector("v1-0.30-gpt-oss-20b-gb10-gmu055.log", "openai/gpt-oss-20b", GB10, "0.30.0",
           ("--gpu-memory-utilization=0.55",), args_known=False,
           why="the same page: openai/gpt-oss-20b on the GB10 at gmu 0.55 (the page) and 32,768 tokens; not scored: "
               "its window group's pages follow the in-flight tokens (max_concurrent_batches x batched tokens, "
               "config/vllm.py@v0.30.0), which the bench's unquoted command sets (benchmarks/vectors/MISSES.md)"),
    Vector("v1-0.30-qwen36-35b-a3b-fp8-gb10-gmu055.log", "Qwen/Qwen3.6-35B-A3B", GB10, "0.30.0",
           quantization="fp8", args_known=False,
           why="the same page: Qwen/Qwen3.6-35B-A3B-FP8 on the GB10 at gmu 0.55 and 32,768 tokens; not scored: the "
               "pool the printed capacity implies does not fit the budget at gsg's block and state sizes, and the "
               "bench's command is not quoted (benchmarks/vectors/MISSES.md)"),
    # round 27: the GB10 twin of the excluded RTX 5090 row (the same author's compose file, aarch64 image)
    Vector("v1-0.20-qwen36-35b-a3b-nvfp4-gb10-cutlass.log", config("qwen3.6-35b-a3b-nvfp4-llmc"), GB10, None,
           why="a public docker-compose note (index file id 51912001300, repository not named): "
               "RedHatAI/Qwen3.6-35B-A3B-NVFP4 under vLLM 0.20.0 (the banner; image v0.20.0-aarch64-cu130, "
               "platform linux/arm64, the file's comments name 'DGX Spark (Grace Blackwell)'), the compose command "
               "the log's non-default args repeat (gmu 0.90, 65,536 tokens, fp8_e4m3 KV, 8,192 batched tokens, one "
               "sequence, capture size 1); llm-compressor's NVFP4 recipe as the RTX 5090 row. Within 5 %, but the "
               "same unread profile term as that row (benchmarks/vectors/MISSES.md) is inside the +3.9 %"),
    # round 29: a hybrid's state blocks below max_num_seqs under FULL decode graphs (GSG056): verdicts only, the
    # one line each thread quotes names max_num_seqs, not the pool
    Vector("v1-0.25.1-qwen36-27b-h100-kaito-mamba-blocks-refused.log", "Qwen/Qwen3.6-27B", H100, "0.25.1",
           args_known=False,
           why="kaito#2319 (2026-09-03): KAITO's Qwen3.6-27B on an H100 under vLLM 0.25.1 (the issue) with the "
               "default 1,024 sequences, refused with 614 blocks; KAITO's max-model-len and gmu are not quoted, "
               "so vLLM's defaults are taken (gsg: 339 blocks at gmu 0.9); the verdict is scored, no KV is printed"),
    Vector("v1-0.28.0-qwen38-27b-h100-mamba-blocks-refused.log", "Qwen/Qwen3.6-27B", H100, "0.28.0",
           ("--max-model-len=132000", "--gpu-memory-utilization=0.90"), checkpoint_known=False,
           why="vllm#49064 (cadamcat, 2026-09-03): Qwen3.8-27B on an H100 80GB under 0.28.0 at 132,000 tokens and "
               "gmu 0.90 with the default 1,024 sequences, refused with 969 blocks. Qwen3.8-27B is not in the "
               "catalog: Qwen3.6-27B stands in for its layout (the comment's 48 Gated DeltaNet + 16 attention "
               "layers); its checkpoint and state sizes are not known (969 blocks where the stand-in gives 339), so "
               "only the verdict is scored"),

    # -- vLLM 0.4 to 0.10, dense models: new public logs -----------------------------------------------------
    # (add rows below this block, in version order)
    Vector("v1-0.10.1.1-qwen2-7b-a100-80gb-gmu025.log", "Qwen/Qwen2-7B-Instruct", A100_80, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 4'): Qwen2-7B-Instruct on one NVIDIA A100 80GB (the "
               "README's platform, the log's file name; SXM or PCIe not stated, 81,920 MiB either way), vLLM "
               "0.10.1.1 (the log), gmu 0.25, 16,384 tokens; the install adds flashinfer-python (README), so "
               "the sampler is FlashInfer's, as the log says"),
    Vector("v1-0.10.1.1-qwen2-7b-a100-80gb-gmu050.log", "Qwen/Qwen2-7B-Instruct", A100_80, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 5'): the same at gmu 0.5"),
    Vector("v1-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu050.log", "Qwen/Qwen2-7B-Instruct", A100_80, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 3'): the same at TP 2 on two A100 80GB of one node "
               "(custom all-reduce off: no P2P between the pods' GPUs), gmu 0.5"),
    Vector("v1-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu025.log", "Qwen/Qwen2-7B-Instruct", A100_80, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 2', vllm-7B-2gpuA10080GB-same-node.log): the same pair "
               "of A100 80GB pods of one node at gmu 0.25 (custom all-reduce off: no P2P), FlashInfer's sampler as "
               "the log says"),
    Vector("v1-0.10.1.1-qwen2-7b-2xa100-40gb-tp2-two-nodes.log", "Qwen/Qwen2-7B-Instruct", A100_40, None,
           why="dennislee22/vLLM-benchmarking (README 'Test 1', log/vllm-7B-2gpuA10040GB-0.5GRAM-diff-nodes.log): TP 2 "
               "over Ray on two A100 40GB pods of two nodes (the file name; worker-19 and worker-20 in the README; "
               "the log: 'Custom allreduce is disabled because this process group spans across nodes'), gmu 0.5, "
               "16,384 tokens, vLLM 0.10.1.1 (the log); 7.12 + 11.03 GiB at gmu 0.5 is a 40 GB card, not an 80 GB "
               "one (Test 3's 31.83 GiB); these workers print the PyTorch-native sampler fallback"),

    # -- SGLang ----------------------------------------------------------------------------------------------
    Vector("qwen3-235b-fp8-h100-tp4.log", "Qwen/Qwen3-235B-A22B", H100, "0.4.9",
           ("--tp-size=4", "--mem-fraction-static=0.93"), "fp8", version_known=False, engine="sglang",
           why="vllm#21348: the same Qwen3-235B-A22B-FP8 on 4x H100 under SGLang, --tp 4 --mem-fraction-static "
               "0.93 (the issue's command); July 2025, 0.4.9 by date"),
    Vector("gpt-oss-20b-load-weight.log", "openai/gpt-oss-20b", B200, "0.5.3", version_known=False,
           engine="sglang",
           why="kvcached#198: GptOssForCausalLM (gpt-oss-20b) with 163.13 + 14.53 GB free and used at load: a "
               "B200; Oct 2025, 0.5.3 by date; the plugin raised before the pool"),
    Vector("llama31-8b-tp1-load-begin.log", "meta-llama/Llama-3.1-8B", L40S, "0.5.7", version_known=False,
           gpu_known=False, engine="sglang",
           why="sglang PR #15426: meta-llama/Llama-3.1-8B-Instruct on one GPU (46.8 GiB free at load: a 48 GB "
               "card assumed), Dec 2025 (0.5.7 by date); stops while the shards load"),
    Vector("server-args-llama31-8b.log", "meta-llama/Llama-3.1-8B", L40S, "0.5.5", version_known=False,
           engine="sglang",
           why="sglang PR #13023: Meta-Llama-3.1-8B-Instruct, mem_fraction_static 0.851 printed, Nov 2025 (0.5.5 "
               "by date, the PR's branch); the PR's nvidia-smi paste shows one NVIDIA L40S (46,068 MiB); stops "
               "inside server_args"),
    # -- SGLang: new public logs (add rows below this block) ------------------------------------------------
    Vector("llama31-8b-docs-quickstart.log", "meta-llama/Llama-3.1-8B", H100, "0.4.1.post7", version_known=False,
           gpu_known=False, engine="sglang",
           why="docs.sglang.ai 'Quick Start: Sending Requests' built 2025-01-23: Meta-Llama-3.1-8B-Instruct at "
               "defaults (0.4.1.post7 by date); 78.81 GB free before the weights is an 80 GB card, the docs do not "
               "name it (an H100 assumed); the 0.4.1 lines print the pool's K and V sizes without #tokens"),
    Vector("r1-distill-qwen7b-rtx3090-wsl.log", "Qwen/Qwen2.5-7B", RTX_3090, "0.4.2.post1", version_known=False,
           engine="sglang",
           why="jerryzsj/my-deepseek-r1 README: DeepSeek-R1-Distill-Qwen-7B (Qwen2.5-7B's shape: 28 layers, 4 KV "
               "heads x 128) on the author's RTX 3090 ('System Information'), Docker Desktop on WSL2, image "
               "lmsysorg/sglang:latest of 2025-02-04 (0.4.2.post1 by date); 22.76 GB free before the weights: "
               "the desktop holds ~0.7 GB the log does not itemise"),
    Vector("qwq-32b-4x-l4-tp4.log", config("qwq-32b"), L4, "0.4.3.post4", engine="sglang",
           why="didier-durand/llms-in-clouds docs/sglang.md: QwQ-32B (Qwen2.5-32B's shape, 131,072 positions by its "
               "context_len with context_length unset) on a g6.12xlarge, 4x "
               "NVIDIA L4 (the doc), TP 4, f 0.85 printed; sglang[all]==0.4.3.post4 (the Dockerfile the doc "
               "quotes); PCIe only: the log prints custom all-reduce disabled"),
    Vector("llama31-8b-fa3-hopper.log", "meta-llama/Llama-3.1-8B", H100, "0.4.4.post1", version_known=False,
           engine="sglang",
           why="sglang PR #4760 (main of 2025-03-25, 0.4.4.post1 by date): Meta-Llama-3.1-8B-Instruct under the "
               "FlashAttention 3 backend, which runs on Hopper only; 63.48 + 15.11 = 78.59 GB free before the "
               "weights is an 80 GB Hopper card (H100 / H800, 81,559 MiB alike); default fraction"),
    Vector("qwen3-14b-48gb-xinference.log", "Qwen/Qwen3-14B", RTX_A6000, "0.4.6.post4", version_known=False,
           gpu_known=False, engine="sglang",
           why="xorbitsai/inference#3481: Qwen3-14B on one GPU under Xinference's SGLang engine, May 2025 "
               "(0.4.6.post4 by date); 19.67 + 27.57 = 47.24 GB free before the weights is a 48 GB card (more "
               "than an L40S's 44.99 GiB), not named: an RTX A6000 assumed"),
    Vector("qwen3-8b-ascend-910b2-fraction-02.log", "Qwen/Qwen3-8B", ASCEND_910B2, "0.5.6.post1", engine="sglang",
           why="gpustack#3831: Qwen/Qwen3-8B on an Ascend 910B2 (the issue's GPU field), GPUStack's runner image "
               "cann8.3-910b-sglang0.5.6.post1; the engine ran with mem_fraction_static 0.2 (its error line) "
               "and refused: the weights alone are more than 0.2 of the card"),
    Vector("gemma3-4b-it-vlm-fraction-h200.log", "google/gemma-3-4b-it", H200, "0.4.4.post2", version_known=False,
           engine="sglang",
           why="sglang PR #4826 (main of 2025-03-27, 0.4.4.post2 by date): google/gemma-3-4b-it at defaults, f 0.88 "
               "printed, cut to 0.836 for a multimodal model (model_runner.py@0.4.4.post2 x 0.95); 131.08 + 8.13 = "
               "139.21 GB free before the weights is a 140 GiB card: an H200 (143,771 MiB), not named in the PR"),
    Vector("qwen3-06b-rtx5080-v0.4.9.post6.log", "Qwen/Qwen3-0.6B", RTX_5080, "0.4.9.post6", engine="sglang",
           why="SlimRAG/MinerU-docker README: Qwen/Qwen3-0.6B at defaults (its Taskfile's run-qwen3: model, host and "
               "port only) on the author's NVIDIA GeForce RTX 5080 (the README's nvidia-smi, 16,303 MiB), image "
               "built FROM lmsysorg/sglang:v0.4.9.post6-cu128-b200 (the Dockerfile)"),
    Vector("qwen3-14b-4x-rtx4090-tp4-f080.log", "Qwen/Qwen3-14B", RTX_4090, "0.5.6",
           ("--tp-size=4", "--mem-fraction-static=0.8"), version_known=False, engine="sglang",
           why="ugyhybnb/sglang-performance-test 项目A-v2-服务基线.md: Qwen3-14B on 4x NVIDIA GeForce RTX 4090 "
               "(the doc's environment table: 24,564 MiB each), the doc's command (--tp-size 4 "
               "--mem-fraction-static 0.80); SGLang from source at commit ebaf86d4, a release not named: torch "
               "2.9.1 in the doc's environment is pinned from sglang 0.5.6 on (0.5.5 pins 2.8.0), 0.5.6 assumed"),
    Vector("qwen3-8b-b200-main-2026-04-trtllm-mha.log", "Qwen/Qwen3-8B", B200, "0.5.10", version_known=False,
           engine="sglang",
           why="sglang .claude/skills/clean-startup-log/SKILL.md (the reference log of 2026-04-27): `sglang serve "
               "--model-path Qwen/Qwen3-8B`, all defaults, TP 1; trtllm_mha chosen by default and 177.57 GB free at "
               "start are a B200's; main between the 0.5.10 and 0.5.11 releases (0.5.10 by date, same rules)"),
    Vector("qwen35-9b-2x-rtx4090-tp2-gdn-f080.log", config("qwen3.5-9b"), RTX_4090, "0.5.10",
           ("--tp-size=2", "--mem-fraction-static=0.8", "--context-length=262144"), version_known=False,
           engine="sglang",
           why="search-index file 53944457073 (a notebook of 2026-04-14, its repository not named): Qwen/Qwen3.5-9B "
               "on two of five RTX 4090s (the doc's environment, 24,063 MiB free each), the doc's command (--tp-size "
               "2 --mem-fraction-static 0.8 --context-length 262144); SGLang 0.0.0.dev11582+g4df60434d, main after "
               "0.5.10.post1 (2026-04-08): 0.5.10 by date"),
    Vector("deepseek-r1-2x8-h100-tp16-pd-prefill-0.5.8.post1.log", "deepseek-ai/DeepSeek-R1", H100, "0.5.8.post1",
           ("--tp-size=16", "--nnodes=2", "--mem-fraction-static=0.8", "--disaggregation-mode=prefill",
            "--disable-cuda-graph"), engine="sglang",
           why="devopsrustem/slurmv4 3/10.sh@e65cafe: DeepSeek-R1 (FP8) as the prefill side of a 2P+2D run, TP 16 "
               "over two HGX H100 nodes (the repo's 2.md: 'сервера hgx, Roce 400g, H100'), the prefill node 0's "
               "command in the file; SGLang from the venv named sglang-0.5.8.post1 (its shell prompt)"),
    Vector("qwen3-reranker-06b-h100-0.5.18-f030.log", "Qwen/Qwen3-0.6B", H100, "0.5.18",
           ("--mem-fraction-static=0.3", "--disable-radix-cache"), engine="sglang",
           why="farbodtavakkoli/OTel inference/sglang/reranker/README.md: Qwen3-Reranker-0.6B (Qwen3-0.6B's shape, "
               "served as Qwen3ForCausalLM) on one H100 80GB HBM3, `pip install sglang[all]` = 0.5.18, the README's "
               "command (--mem-fraction-static 0.3 --disable-radix-cache)"),
    Vector("qwen3-06b-mi355x-0.5.17-pip-f060-graph-crash.log", "Qwen/Qwen3-0.6B", MI355X, "0.5.17",
           ("--mem-fraction-static=0.6",), engine="sglang",
           why="farbodtavakkoli/OTel inference/sglang/llm/README.md ('Single-GPU results (measured, gfx950)'): "
               "Qwen3-0.6B on one MI355X, `pip install --no-deps sglang==0.5.17` on ROCm torch (the README), "
               "--mem-fraction-static 0.6 (its table); the default aiter backend cuts that to 0.51 for the 40,960 "
               "context (SGLANG_AITER_CUTS); the pool is sized before the shimmed kernel fails the graph capture"),
    Vector("mistral-7b-v01-24gb-quickstart.log", "mistralai/Mistral-7B-Instruct-v0.3", RTX_4090, "0.4.0.post1",
           version_known=False, gpu_known=False, engine="sglang",
           why="sglang#2468: Mistral-7B-Instruct-v0.1 at defaults (the issue's command), Dec 2024 (0.4.0.post1 by "
               "date); v0.3's catalog shape (32 layers, 8 KV heads; 768 more vocabulary rows, 12 MiB); 9.69 GB "
               "free after the weights is a 24 GB card, not named (an RTX 4090 assumed)"),
    Vector("deepseek-r1-2x8-h20-tp16-lws.log", "deepseek-ai/DeepSeek-R1", H20, "0.4.3",
           ("--tp=16", "--nnodes=2", "--mem-fraction-static=0.93", "--torch-compile-max-bs=8"),
           version_known=False, args_known=False, engine="sglang",
           why="sglang docs/references/deploy_on_k8s.md: DeepSeek-R1 on two nodes of 8x H20 (the doc's "
               "prerequisites) by LeaderWorkerSet, image sglang:latest of 2025-02-17 (0.4.3 by date); the doc's "
               "YAML passes --mem-fraction-static 0.93 --max-running-requests 20 --tp 16, but the quoted log "
               "prints max_running_requests=50, so it is not that command's run: the fraction is not known"),
    Vector("llama31-8b-24gb-docker-desktop.log", "meta-llama/Llama-3.1-8B", RTX_4090, "0.4.9.post2",
           version_known=False, gpu_known=False, engine="sglang",
           why="MaxUhl98/Thesis inference_server/readme.md: Meta-Llama-3.1-8B-Instruct under lmsysorg/sglang:latest "
               "(start_server.sh) on Docker Desktop for Windows, July 2025 (0.4.9.post2 by date); 7.37 + 15.02 = "
               "22.39 GB free before the weights is a 24 GB card, not named (an RTX 4090 assumed); the log's "
               "context_len of 131,072 shows the run had no --context-length (the script's later 8192)"),
    Vector("llama3-8b-mi300x-bench-latency-0.3.3.log", "meta-llama/Meta-Llama-3-8B", MI300X, "0.3.3",
           version_known=False, engine="sglang",
           why="AUGMXNT/MI300-testing README.md ('SGLang'): `python -m sglang.bench_latency --model-path "
               "meta-llama/Meta-Llama-3-8B-Instruct --batch 32 --input-len 256 --output-len 32` (TP 1, default "
               "fraction 0.88) on one MI300X of a Hot Aisle node (the host name; 191.33 GB free at the load), SGLang "
               "built from source on 2024-10-10 with ROCm 6.2 (0.3.3 of 2024-10-08 by date; 0.3.3.post1 is the same "
               "rule); 0.3's time-only prefix and unprefixed benchmark capacity line"),
    Vector("ornith-9b-bf16-0.5.14-beside-a-resident-primary.log", config("qwen3.5-9b"), GB10, "0.5.14",
           ("--mem-fraction-static=0.8", "--context-length=32768", "--max-running-requests=1"), gpu_known=False,
           engine="sglang",
           why="search-index file 56671970114 (a project's 'v0.2 Phase 0 — Results', 2026-06-30): Ornith-1.0-9B "
               "(a Qwen3.5-9B fine-tune, BF16) on sglang 0.5.14 (the doc's image), --mem-fraction-static 0.80 "
               "(the doc's TOML), 32,768 context and one running request (the log), beside a resident "
               "Qwen3.6-27B server at 0.60; the doc follows host MemAvailable through co-residency, so a "
               "unified-memory GPU, not named: a DGX Spark's GB10 assumed"),
    Vector("qwen25-05b-h100-nvl-0.5.13-beside-foreign-memory-no-graphs.log", "Qwen/Qwen2.5-0.5B", H100_NVL, "0.5.13",
           engine="sglang",
           why="search-index file 55068335887 (a public 'sglang-play' README, 2026-07-08): Qwen2.5-0.5B-Instruct on "
               "one H100 NVL (its environment dump) holding 56.5 GiB of other processes; 0.5.13 by the log's "
               "wording ('Load weight end. elapsed=' from 0.5.13, cuda_graph_max_bs renamed in 0.5.14), not the "
               "dump's 0.5.10.post1; triton attention, decode and piecewise graphs off, fraction 0.86 printed"),
    Vector("qwen25-05b-h100-docs-ci-max-total-tokens.log", "Qwen/Qwen2.5-0.5B", H100, "0.5.8",
           version_known=False, engine="sglang",
           why="docs.sglang.ai basic_usage/native_api (the notebook as the docs CI built it on 2026-02-04, main "
               "between 0.5.8 and 0.5.8.post1: 0.5.8 by date): qwen/qwen2.5-0.5b-instruct at the CI's "
               "--max-total-tokens 20480 and --max-running-requests 128 (server_args); the same run's MoE config "
               "path names an NVIDIA H100 80GB HBM3; default fraction printed 0.841 (the 0.5.8 reserve with "
               "cuda_graph_max_bs 4)"),
    Vector("qwen3-06b-4gb-wsl-0.4.6.post2-f088.log", "Qwen/Qwen3-0.6B", RTX_3050_LAPTOP, "0.4.6.post2",
           gpu_known=False, engine="sglang",
           why="search-index file 9542409931 (a note's run of 2025-05-02): Qwen3-0.6B at defaults under WSL2, `pip "
               "install sglang[all]>=0.4.6.post1` = 0.4.6.post2 (the note); 3.23 GB free at the load and the small-GPU "
               "defaults printed (chunked prefill 2048, cuda_graph_max_bs 8) are a 4 GB card the desktop shares, not "
               "named: an RTX 3050 Laptop assumed. SGLang sizes the pool from the free memory the log prints, so "
               "15,387 tokens against gsg's 15,493 (+0.7 %) whatever the card"),
    Vector("llama31-8b-lora-docs-ci-h100-max-total-tokens.log", "meta-llama/Llama-3.1-8B", H100, "0.5.8",
           version_known=False, engine="sglang",
           why="search-index file 14968382678 (SGLang's LoRA notebook as the docs CI built it on 2026-02-09, main "
               "between 0.5.8 and 0.5.8.post1: 0.5.8 by date): Meta-Llama-3.1-8B-Instruct with --enable-lora, three "
               "adapters, max_loras_per_batch 2, rank 256, on the docs CI's H100 80GB HBM3 (the native_api run of "
               "2026-02-04), its --max-total-tokens 20480 and --max-running-requests 128 (server_args). The pool is "
               "the cap. The LoRA pool is booked from the printed server_args (lora.sglang_slots: 2 slots x rank 256 "
               "over the four linear modules the adapters target, 2.50 GiB) against 2.73 GB between the weights "
               "and the pool end; the same notebook cell on 2026-02-11 leaves 2.52 GB (benchmarks/vectors/MISSES.md)"),
    # EAGLE drafts: the draft worker's own load, pool and graph lines follow the target's (logparse.is_draft_line);
    # gsg sizes the target and says it does not size a draft of its own checkpoint
    Vector("llama2-7b-chat-eagle-docs-ci-80gb-0.4.2-f070.log", "meta-llama/Llama-2-7b-hf", H100, "0.4.2.post4",
           version_known=False, engine="sglang",
           why="the docs.sglang.ai 'Speculative Decoding' notebook as the docs CI built it on 2025-02-13 "
               "(Stars1233/sgl-project.github.io@2a310876, a mirror of the docs site's builds): Llama-2-7b-chat-hf "
               "with an EAGLE-2 draft (steps 5, top-k 8, 64 draft tokens) at --mem-fraction 0.7 on the CI's 80 GB "
               "card (78.81 GB free at the load, the H100 80GB HBM3 of the later docs vectors), before the CI capped "
               "the pool (2025-02-16); main between 0.4.2.post4 (wheel of 2025-02-10) and 0.4.3 (2025-02-14): "
               "0.4.2.post4 by date"),
    Vector("llama31-8b-eagle3-docs-ci-h100-2025-08-cap.log", "meta-llama/Llama-3.1-8B", H100, "0.4.10.post2",
           version_known=False, engine="sglang",
           why="the same notebook as the docs CI built it on 2025-08-13 (Stars1233/sgl-project.github.io@21c4b325): "
               "Llama-3.1-8B-Instruct in float16 with an EAGLE-3 draft (steps 5, top-k 8, 32 draft tokens) at "
               "--mem-fraction 0.6 on the CI's H100, its --max-total-tokens 20480 and --max-running-requests 128 "
               "(server_args): the pool is the cap; main between 0.4.10.post2 (wheel of 2025-08-03) and 0.5.1 "
               "(2025-08-23): 0.4.10.post2 by date"),
    # the docs CI's uncapped builds (before 2025-02-16) across releases, from the same mirror: the release is the
    # newest sglang wheel on PyPI built before the notebook's log date (the wheel's file dates), main ran in between
    Vector("llama31-8b-docs-ci-h100-2024-10-0.3.4.post2.log", "meta-llama/Llama-3.1-8B", H100, "0.3.4.post2",
           version_known=False, engine="sglang",
           why="docs.sglang.ai 'Quick Start: Sending Requests' as the docs CI built it on 2024-10-28 "
               "(Stars1233/sgl-project.github.io@02a2a713): Meta-Llama-3.1-8B-Instruct at defaults on the CI's H100 "
               "(78.59 GB free at the load); main between 0.3.4.post2 (wheel of 2024-10-25) and 0.3.5 (2024-11-03): "
               "0.3.4.post2 by date"),
    Vector("llama31-8b-completions-docs-ci-h100-2024-12-0.4.0.post2.log", "meta-llama/Llama-3.1-8B", H100,
           "0.4.0.post2", version_known=False, engine="sglang",
           why="docs.sglang.ai 'OpenAI APIs - Completions' as the docs CI built it on 2024-12-22 (Stars1233/"
               "sgl-project.github.io@4e7c750f): Meta-Llama-3.1-8B-Instruct at defaults on the CI's H100 (78.81 GB "
               "free at the load); main after 0.4.0.post2 (wheel of 2024-12-21): 0.4.0.post2 by date"),
    Vector("llama31-8b-tool-calling-docs-ci-h100-2025-02-0.4.2.post1.log", "meta-llama/Llama-3.1-8B", H100,
           "0.4.2.post1", version_known=False, engine="sglang",
           why="docs.sglang.ai 'Tool and Function Calling' as the docs CI built it on 2025-02-01 (Stars1233/"
               "sgl-project.github.io@b50a9e01): Meta-Llama-3.1-8B-Instruct with --tool-call-parser llama3 at "
               "defaults on the CI's H100; main between 0.4.2.post1 (wheel of 2025-01-31) and 0.4.2.post2 "
               "(2025-02-05): 0.4.2.post1 by date"),
    Vector("gte-qwen2-7b-embedding-docs-ci-h100-2024-11-0.3.5.post2.log", "Qwen/Qwen2-7B-Instruct", H100, "0.3.5.post2",
           version_known=False, engine="sglang",
           why="docs.sglang.ai 'OpenAI APIs - Embedding' as the docs CI built it on 2024-11-18 (Stars1233/"
               "sgl-project.github.io@80015735): Alibaba-NLP/gte-Qwen2-7B-instruct (Qwen2-7B's shape: 28 layers, 4 KV "
               "heads x 128) with --is-embedding at defaults on the CI's H100; main between 0.3.5.post2 (wheel of "
               "2024-11-15) and 0.3.6 (2024-11-22): 0.3.5.post2 by date"),
    Vector("llama32-1b-docs-ci-h100-2024-12-0.4.0.post1.log", "meta-llama/Llama-3.2-1B", H100, "0.4.0.post1",
           version_known=False, engine="sglang",
           why="docs.sglang.ai 'SGLang Native APIs' as the docs CI built it on 2024-12-10 (Stars1233/"
               "sgl-project.github.io@186a5153), its first server: Llama-3.2-1B-Instruct at defaults on the CI's H100 "
               "(78.81 GB free at the load); main between 0.4.0.post1 (wheel of 2024-12-06) and 0.4.0.post2 "
               "(2024-12-21): 0.4.0.post1 by date"),
    Vector("gte-qwen2-7b-embedding-docs-ci-h100-2024-12-0.4.0.post1.log", "Qwen/Qwen2-7B-Instruct", H100,
           "0.4.0.post1", version_known=False, engine="sglang",
           why="the same 'SGLang Native APIs' build of 2024-12-10, its embedding server: gte-Qwen2-7B-instruct with "
               "--is-embedding, 0.4.0.post1 by date (the 0.3.5.post2 run's model a release later)"),
    Vector("skywork-reward-llama31-8b-docs-ci-h100-2024-12-0.4.0.post1.log", config("skywork-reward-llama-3.1-8b"), H100,
           "0.4.0.post1", version_known=False, engine="sglang",
           why="the same 'SGLang Native APIs' build of 2024-12-10, its reward-model server: Skywork-Reward-Llama-3.1-"
               "8B-v0.2 (Llama-3.1-8B's shape, LlamaForSequenceClassification) with --is-embedding, 0.4.0.post1 by "
               "date; the class the log prints has a one-label score head where the causal model has its lm_head "
               "(benchmarks/vectors/skywork-reward-llama-3.1-8b: 14.01 GiB of weights against 14.11 logged)"),
    Vector("qwen3-coder-30b-awq-rtx-pro-6000-maxq-fp8e5m2-f088.log", "Qwen/Qwen3-30B-A3B", RTX_PRO_6000_MAXQ, "0.5.14",
           ("--mem-fraction-static=0.88", "--context-length=131072", "--max-running-requests=16",
            "--kv-cache-dtype=fp8_e5m2"), "awq", version_known=False, engine="sglang",
           why="search-index file 56816597900 (a two-tier benchmark note of 2026-06-28, `docker logs sglang`): "
               "Qwen3-Coder-30B-A3B AWQ (Qwen3-30B-A3B's shape) alone on an RTX PRO 6000 Blackwell Max-Q (97,887 "
               "MiB, the note's nvidia-smi), fp8_e5m2 KV, f 0.88, 131,072 context, 16 running requests (the "
               "note's summary of server_args); the release is not named (0.5.14 by date, as the 2026-06-30 run "
               "above). Verdict right (fits); KV +4.0 %, not scored (version assumed)"),

    # -- llama.cpp: the KV buffer is compared, in bytes ------------------------------------------------------
    Vector("trilm-3.9b-rtx4080.log", config("trilm-3.9b"), RTX_4080, "b3000", version_known=False,
           engine="llama.cpp",
           why="llamafile PR #552: TriLM-3.9B (F16 by its 7,317.71 MiB of weights) on an RTX 4080 16 GB, n_ctx 512, "
               "no flash attention; llamafile's llama.cpp of mid 2024 (b3000 assumed)"),
    Vector("command-r-two-gpus.log", config("command-r-v01"), RTX_4090, "b2450", ("--tensor-split=12,29",),
           "q4_k_m", version_known=False, engine="llama.cpp",
           why="llama.cpp PR #6122 (March 2024, b2450 by date): Command-R v01 (40 layers, 8,192 wide, 64 KV heads "
               "by its 1,536 MiB for 12 layers x 4,096 cells) on a 4070 Ti + 3090 Ti, 12/28 layers (-ts 12,29), "
               "Q4_K_M by its 13,990 MiB for 28 layers"),
    Vector("pp-compute-oom-two-gpus.log", config("mistral-small-24b"), RTX_3090, "b7300",
           ("--ctx-size=150272", "--batch-size=4096", "--ubatch-size=4096", "--flash-attn=on"), "q8_0",
           version_known=False, gpu_known=False, engine="llama.cpp",
           why="llama.cpp PR #16748: a koboldcpp run quoted in the thread (Dec 2025, b7300 by date), Mistral-Small-"
               "24B's shape (40 layers, 8 KV heads x 128), two 24 GB GPUs assumed, n_ctx 150,272, n_ubatch 4096, "
               "flash attention; CUDA0's compute buffer with four input copies failed to allocate. The user's own "
               "thread (koboldcpp#1882: KoboldCpp 1.102.3, -c 150000 -b 4096 -ngl 99 -ts 1 1, the same n_ctx) names "
               "Cydonia-24B-v4zk-Q8_0.gguf, and its model buffers (11,826.45 + 11,380.14 MiB on the GPUs) are "
               "Q8_0's: so Q8_0, not an assumed Q4_K_M"),
    Vector("devstral-rtx4070s-server.log", config("mistral-small-24b"), ("NVIDIA GeForce RTX 4070 SUPER", "12282MiB"),
           "b5750", ("--ctx-size=524288", "--flash-attn", "--n-gpu-layers=99", "--cache-type-k=q4_0",
                     "--cache-type-v=q4_0", "--no-kv-offload", "--parallel=4"), "q2_k", version_known=False,
           engine="llama.cpp",
           why="llama.cpp PR #14363: Devstral-Small-2507 (Mistral-Small-24B's shape) Q2_K_L on an RTX 4070 SUPER "
               "12 GB, the PR's command line (June 2025, b5750 by date; the log prints build 0; -fa the switch it "
               "was before b6325); stops at metadata"),
    Vector("phi35-build-exits.log", "microsoft/Phi-3.5-mini-instruct", RTX_4090, None, quantization="q4_k_m",
           gpu_known=False, engine="llama.cpp",
           why="llama.cpp#18546: Phi-3.5-mini, build 6945 (the log), 4 slots, unified KV; the server exited before "
               "loading; GPU and quantisation not stated"),
    # -- llama.cpp: new public logs (add rows below this block) ---------------------------------------------
    Vector("qwen25-coder-32b-q8-kv-two-3090ti.log", "Qwen/Qwen2.5-32B", ("NVIDIA GeForce RTX 3090 Ti", "24564MiB"),
           "b4462", ("--batch-size=512", "--ubatch-size=256", "--tensor-split=10,6", "--n-gpu-layers=99",
                     "--ctx-size=32768", "--flash-attn", "--cache-type-k=q8_0", "--cache-type-v=q8_0"), "q8_0",
           engine="llama.cpp",
           why="llama.cpp#11200: qwen2.5-coder:32b-instruct-q8_0 (Qwen2.5-32B's shape) on 2x RTX 3090 Ti (the "
               "reporter's device lines), version 4462 (their `llama-cli --version`), the issue's llama-server "
               "command (-b 512 -ub 256 -ts 10,6 -ngl 99 -c 32768 -fa, q8_0 K and V); the draft model's lines cut"),
    # round 30: ROCm, several devices and llama-cpp-python
    Vector("qwen25-32b-q4km-5x-radeon-vii-rocm-32768-no-fa.log", "Qwen/Qwen2.5-32B", RADEON_VII, "b4880",
           ("--ctx-size=32768", "--n-gpu-layers=100"), "q4_k_m", version_known=False, engine="llama.cpp",
           why="llama.cpp#12369 (2025-03-13): Qwen2.5-32B-Instruct-Q4_K_M.gguf on five MI50 that ROCm names AMD Radeon "
               "VII (16 GB each), the issue's llama-cli command (--n-gpu-layers 100 -c 32768, no flash attention); "
               "`version: 1 (10f2e81)` is a local build: b4880 by date. 65 slots (64 layers and the output) over "
               "five equal cards: 13 layers on ROCm0-3, 12 on ROCm4 (1,664 / 1,536 MiB of KV)"),
    Vector("qwen25-coder-32b-q8kv-rx7900xtx-rocm-32768.log", "Qwen/Qwen2.5-32B", RX_7900_XTX, "b4500",
           ("--ctx-size=32768", "--n-gpu-layers=99", "--flash-attn", "--cache-type-k=q8_0", "--cache-type-v=q8_0"),
           "q4_k_m", version_known=False, engine="llama.cpp",
           why="llama.cpp#11337 (a comment of Jan 2025, llama_new_context_with_model: b4500 by date): "
               "Qwen2.5-Coder-32B (Qwen2.5-32B's shape) with a 0.5B draft on one RX 7900 XTX (the draft's device "
               "line), 32,768 cells of q8_0 K and V (flash attention, which a quantised V needs); the main model's "
               "quantisation is not quoted (the 1,840 MiB left for the draft fit a 4-bit one: Q4_K_M assumed)"),
    Vector("mistral-7b-v02-q5km-4x-mi100-rocm-llama-cpp-python-4096.log", "mistralai/Mistral-7B-Instruct-v0.3",
           MI100, "b2400", ("--ctx-size=4096", "--n-gpu-layers=-1"), "q5_k_m", version_known=False,
           engine="llama.cpp",
           why="search-index file 31013830295 (the AMD HPC Fund user guide, 'Hosting LLM server'): "
               "mistral-7b-instruct-v0.2.Q5_K_M.gguf (v0.3's shape but its 32,000-token vocabulary) under "
               "llama-cpp-python's server on a node of the mi1004x partition, four MI100, --n_gpu_layers -1 "
               "--n_ctx 4096 (the job script). The guide is of April 2024, the log's format older: a host input "
               "buffer and 'graph splits (measure)' come before pipeline parallelism (PR #6017, b2431): b2400"),
    Vector("mixtral-8x7b-q8-partial-10-layers.log", "mistralai/Mixtral-8x7B-v0.1", RTX_4080, "b1880",
           ("--n-gpu-layers=10",), "q8_0", version_known=False, gpu_known=False, engine="llama.cpp",
           why="llama.cpp PR #4957 (its author's comment of 2024-01-17, b1880 by date): Mixtral-8x7B with 10 of 33 "
               "layers offloaded, n_ctx 512 (the log); Q8_0 by its 14,705.94 MiB for 10 layers (1.0625 B a "
               "parameter); the GPU is not named, a 16 GB card assumed; the KV of the 22 host layers is CUDA_Host's"),
    Vector("qwen25-3b-rtx4080s-llamasharp.log", "Qwen/Qwen2.5-3B", ("NVIDIA GeForce RTX 4080 SUPER", "16376MiB"),
           "b4701", ("--ctx-size=4096",), version_known=False, engine="llama.cpp",
           why="LLamaSharp#1099: 36 layers of 2 KV heads x 128 are Qwen2.5-3B's (the reporter's model), 144 MiB of "
               "f16 KV = 4,096 cells; the RTX 4080 SUPER is the reporter's (their llama-cli run, build 4701, on the "
               "same machine); LLamaSharp's own llama.cpp build is not printed (b4701 assumed)"),
    Vector("qwen25-7b-28-layers-2048-cells.log", "Qwen/Qwen2.5-7B", RTX_4090, "b4500", ("--ctx-size=2048",),
           version_known=False, gpu_known=False, engine="llama.cpp",
           why="JamePeng/llama-cpp-python PR #1: 28 layers of 4 KV heads x 128 are Qwen2.5-7B's, 112 MiB of f16 KV "
               "= 2,048 cells; llama_init_from_model names a build from b4500 on (assumed); GPU not stated"),
    Vector("mixtral-8x7b-instruct-q8-partial-15-layers.log", "mistralai/Mixtral-8x7B-v0.1", ("Tesla P40", "24576MiB"),
           "b1880", ("--n-gpu-layers=15", "--ctx-size=512"), "q8_0", version_known=False, gpu_known=False,
           engine="llama.cpp",
           why="llama.cpp PR #4957 (a tester's comment, Jan 2024, b1880 by date): Mixtral-8x7B-Instruct-v0.1 "
               "ggml-model-q8.gguf (Q8_0, their path) with 15 of 33 layers on CUDA0 (30 MiB of KV at 2 MiB a layer) "
               "at n_ctx 512 (64 MiB in all); the device is not named in the run (the tester's P40 assumed)"),
    Vector("mistral-large-2411-q8-4090-cut.log", config("mistral-large-2411"), RTX_4090, None,
           ("--ctx-size=4096", "--flash-attn", "--cache-type-k=q8_0", "--cache-type-v=q8_0", "--n-gpu-layers=1"),
           "q8_0", engine="llama.cpp",
           why="llama.cpp#10560: Mistral-Large-Instruct-2411-Q8_0.gguf (the shape the log prints: 88 layers, 12,288 "
               "wide, 96 heads, 8 KV heads x 128, a 32,768 vocabulary; benchmarks/vectors/mistral-large-2411) on one "
               "RTX 4090 (the reporter's device line), build 4202 (the log), the issue's command (-c 4096 -fa, q8_0 K "
               "and V, 1 GPU layer); the excerpt stops before the buffer lines: the rebuild is shown, not judged"),
    Vector("qwen3-vl-32b-4060ti-3060-cut.log", "Qwen/Qwen3-32B", ("NVIDIA GeForce RTX 4060 Ti", "16380MiB"), None,
           ("--tensor-split=15001,11822",), "q4_k_m", engine="llama.cpp",
           why="llama.cpp PR #16962 (theo77186, 2025-11-03): Qwen3VL-32B-Instruct-Q4_K_M.gguf, whose language model "
               "is Qwen3-32B's shape, on an RTX 4060 Ti 16 GB + RTX 3060 (the device lines), build 6934 (the log), 4 "
               "slots and one unified cache (the server's own line); layers split by the free memory the log prints "
               "(15,001 and 11,822 MiB: llama.cpp's default split); the excerpt stops before the metadata"),
    Vector("qwen3-30b-a3b-q4km-4090-5090-b5622-experts-on-cpu-foreign.log", "Qwen/Qwen3-30B-A3B", RTX_5090, None,
           ("--ctx-size=16384", "--n-gpu-layers=99", "--override-tensor=.ffn_.*_exps.=CPU",
            "--tensor-split=9862,31518"), engine="llama.cpp",
           why="ikawrakow/ik_llama.cpp#514 (mtcl, 2025-06-10): mainline llama-cli build 5622 (the log) with "
               "unsloth's Qwen3-30B-A3B Q4_K_M (its file type line) on an RTX 4090 holding other memory (9,862 MiB "
               "free) and an RTX 5090 (31,518 MiB free): layers split by that free memory (llama.cpp's default), "
               "the routed experts on the CPU by the command's -ot; the pool compared on the 5090"),
    Vector("bielik-11b-q8-rocm-pro-vii-b7972-q8kv-40-of-51-kv-oom.log", config("bielik-11b-v3"),
           ("AMD Radeon (TM) Pro VII", "16368MiB"), None, ("--cache-type-k=q8_0", "--cache-type-v=q8_0"),
           engine="llama.cpp",
           why="search-index file 51961927824 (a coding-agent transcript quoting the user's log, 2026-03-19): "
               "llama-server 7972 on ROCm, Bielik-11B Q8_0 with -ngl 40 -c 32768 on a Radeon Pro VII (16,368 MiB by "
               "the same log's breakdown table) that had 10,874 MiB free (another server and the desktop held the "
               "rest: foreign memory); the cache is q8_0 by its 68 MiB a layer (748 MiB for the 11 host layers), "
               "the KV buffer's cudaMalloc fails"),
    Vector("ollama-qwen15-7b-a10-8192-cells.log", "Qwen/Qwen1.5-7B", ("NVIDIA A10", "23028MiB"), "b3600",
           ("--ctx-size=8192", "--batch-size=512", "--parallel=4"), "q4_0", version_known=False, engine="llama.cpp",
           why="ollama#6926: qwen:7b (the log's Qwen2-beta-7B-Chat: 32 layers of 32 KV heads x 128, Qwen1.5-7B's "
               "shape; Q4_0 by its 333.84 MiB token_embd of 151,936 x 4,096) on one of the reporter's A10s (the "
               "issue's first line), ollama's runner at its n_ctx 8,192 (2,048 x 4 slots) and n_batch 512 (the "
               "log); Sept 2024, ollama's vendored llama.cpp not printed (b3600 by date)"),
    Vector("ollama-llama3-70b-q4km-three-gpus.log", "meta-llama/Meta-Llama-3-70B", RTX_4090, "b4600",
           ("--ctx-size=8192", "--parallel=4", "--tensor-split=27,27,27"), "q4_k_m", version_known=False,
           gpu_known=False, engine="llama.cpp",
           why="ollama#8922: a Llama-3 70B (80 layers of 8 KV heads x 128, the 128,256 vocabulary by its 563.62 "
               "MiB q4_K token_embd: Q4_K_M) over three GPUs, 4 slots of 2,048 (the log); ollama passes its layer "
               "counts as --tensor-split (27 per device, the output the 81st slot: the KV lines' 27/27/26 layers); "
               "Feb 2025 (b4600 by date); the GPUs are not named (24 GB cards assumed)"),
    Vector("ollama-deepseek-r1-671b-q4km-8x-mi250x.log", "deepseek-ai/DeepSeek-R1", MI250X_GCD, "b5100",
           ("--tensor-split=8,8,8,8,8,8,7,7",), "q4_k_m", version_known=False, engine="llama.cpp",
           why="uv-genai/llm-setonix setup.md: `ollama run deepseek-r1:671b` (the library's Q4_K_M) on a Setonix node, "
               "four MI250X seen as 8 ROCm GCDs (the doc); 4 slots of 2,048 (the log); ollama passes its layer counts "
               "as --tensor-split (the KV lines' 8 x 6, 7, 6 layers, the output on the last); April 2025, a build "
               "before llama.cpp PR #12801 (the log's `can_shift = 0`; b5100 by date): DeepSeek's legacy cache"),
    Vector("ramalama-llama3-70b-q4km-two-3090-cut.log", "meta-llama/Meta-Llama-3-70B", RTX_3090, "b5300",
           ("--ctx-size=2048", "--flash-attn"), "q4_k_m", version_known=False, engine="llama.cpp",
           why="containers/ramalama#1354: `ramalama serve` of a Llama-3 70B Q4_K_M (80 layers, its q4_K token_embd "
               "of 563.62 MiB) on two RTX 3090s (the title), n_ctx 2,048 and flash attention (the log), split by "
               "llama.cpp's default; llama_context lines of spring 2025 (b5300 by date); stops before the KV lines"),
    Vector("yi-34b-iq4xs-3090-3060-weights.log", config("yi-1.5-34b"), RTX_3090, "b2849",
           ("--n-gpu-layers=61", "--batch-size=512", "--tensor-split=1,1", "--flash-attn", "--ctx-size=2048"),
           "iq4_xs", engine="llama.cpp",
           why="llama.cpp#7217: Merged-RP-Stew-V2-34B.i1-IQ4_XS (a Yi-34B merge: 60 layers, 7,168 wide, 8 KV "
               "heads, a 64,000 vocabulary; benchmarks/vectors/yi-1.5-34b has that shape) on an RTX 3090 + RTX "
               "3060 (the device lines), build b2849 and the command (-ngl 61 -b 512 -ts 1,1 -fa -c 2048) from the "
               "issue; the excerpt stops after the weights (the run without -nkvo)"),
    Vector("qwen3-1.7b-jetson-orin-node-llama-cpp.log", "Qwen/Qwen3-1.7B", ("Orin (nvgpu)", "15656MiB"), "b8100",
           ("--ctx-size=4096", "--flash-attn=on"), "q4_k_m", version_known=False, gpu_known=False,
           engine="llama.cpp",
           why="node-llama-cpp#560 (mcr-ksh, 2026-02-25): qmd-query-expansion-1.7B-q4_k_m.gguf, a Qwen3-1.7B "
               "fine-tune (the log's 28 layers of 8 KV heads x 128: 448 MiB at 4,096 cells; the 300.75 MiB compute "
               "buffer is Qwen3-1.7B's logits, (2,048 + 151,936) x 512 x 4 B), the comment's command (--contextSize "
               "4096 --fa); a Jetson Orin, not which (a 16 GB Orin NX assumed); the bundled llama.cpp is not printed "
               "(b8100 by date, between b7474 and b8651 of 2026-04-03); node-llama-cpp does not run common's --fit"),
    Vector("tinyllama-f32-gtx1050ti-llamafile.log", "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
           ("NVIDIA GeForce GTX 1050 Ti", "4096MiB"), "b2700", ("--n-gpu-layers=9999", "--ctx-size=512"), "f32",
           version_known=False, engine="llama.cpp",
           why="llamafile#372 (2024-04-26): TinyLlama-1.1B-Chat-v1.0.F32.llamafile with -ngl 9999 (the issue's "
               "command) on a GTX 1050 Ti (the device line), n_ctx 512 and n_ubatch 512 (the log); llamafile 0.8's "
               "llama.cpp is not printed (b2700 by date: the CUDA_USE_TENSOR_CORES line and n_ubatch both show); "
               "the excerpt stops before the KV line, the thread says a 66.50 MB allocation then fails"),
    # -- round 19: llama.cpp builds after b7000 --------------------------------------------------------------
    Vector("ollama-0.20.2-qwen25-coder-7b-q4km-rtx3060-4096.log", "Qwen/Qwen2.5-7B", RTX_3060, "b8700",
           ("--ctx-size=4096", "--parallel=1"), "q4_k_m", version_known=False, engine="llama.cpp",
           why="a public chat transcript of an ollama set-up (index file id 56818628539, repository not named): "
               "ollama 0.20.2 (its Listening line) runs qwen2.5-coder:7b (Qwen2.5-7B's shape: 28 layers of 4 KV "
               "heads x 128, Q4_K_M) on one RTX 3060 12 GB (its inference-compute line) at its VRAM-based default "
               "4,096 cells and one slot, fully offloaded; the vendored llama.cpp is not printed (May 2026: b8700 "
               "assumed). ollama's runner leaves n_outputs_max at n_batch, so its compute buffer holds 512 rows of "
               "logits (304.00 MiB, exactly gsg's) in any build, as llama-server did before b9518"),
    Vector("ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log", config("qwq-32b"), RTX_3060, "b9500", (), "q4_k_m",
           version_known=False, engine="llama.cpp",
           why="a public bug list of 2026-08-30 (index file id 65940070224, repository not named): ollama's llama "
               "runner (cuda_v13) loads QwQ 32B Q4_K_M, Qwen2.5-32B's shape by its GGUF header (64 layers of 8 KV "
               "heads x 128; general.base_model Qwen2.5 32B), on one RTX 3060 12 GB (its device and NVML lines): "
               "29 of 65 layers, 8,192 cells, one slot, q8_0 K and V, flash attention on; the vendored build is not "
               "printed (August 2026: b9500 assumed); its load lines put the 29 repeating layers before the output "
               "layer, the placement and order of builds before the output-first change "
               "(profiles.LLAMACPP_OUTPUT_FIRST_SINCE, b8164), which verify takes from the log over the build "
               "(compare.output_layer_env; at b8100 every figure is the same). "
               "KV is exact with the cache line's q8_0 types; the compute "
               "buffer holds the host-resident output weight copied for the batch (benchmarks/vectors/MISSES.md)"),
    Vector("qwen3-4b-q4km-8192-sched-reserve.log", "Qwen/Qwen3-4B", RTX_4090, "b10434",
           ("--ctx-size=8192", "--n-gpu-layers=99"), "q4_k_m", version_known=False, gpu_known=False,
           engine="llama.cpp",
           why="a public evidence note of 2026-10-08 (index file id 71453436919, repository not named): "
               "Qwen3-4B-Q4_K_M.gguf under llama-server -ngl 99 -c 8192 (its command), a source build with "
               "sched_reserve lines, not numbered (b10434 or later: that build ran on 2026-08-19); GPU not named. "
               "Its 85.01 MiB compute buffer is llama-server's per-slot output rows "
               "(profiles.LLAMACPP_SERVER_OUTPUTS_SINCE), not 512 rows of logits (301.75 MiB)"),
    Vector("qwen3-1.7b-rtx5060ti-16384-one-line.log", "Qwen/Qwen3-1.7B", RTX_5060_TI, "b10434",
           ("--ctx-size=16384", "--n-gpu-layers=99"), "q4_k_m", version_known=False, engine="llama.cpp",
           why="a public measurement note of 2026-08-19 on an RTX 5060 Ti 16 GB (index file id 60037570205, "
               "repository not named), evidence D: a Qwen3-1.7B control run at --ctx-size 16384 on CUDA0; the note "
               "quotes only the KV line (1,792 MiB = 16,384 x 112 KiB); the same machine's llama-server reports "
               "b10434 in /props, the control's own build is not printed"),
    # -- round 21: Metal and Vulkan builds of 2026 ----------------------------------------------------------
    Vector("gpt-oss-20b-metal-m5-b8164-iswa.log", "openai/gpt-oss-20b", ("Apple M5", "18186MiB"), None,
           engine="llama.cpp",
           why="a public note (index file id 32713047379, repository not named): llama-completion -hf "
               "ggml-org/gpt-oss-20b-GGUF (MXFP4) on an Apple M5, build 8164 (the log); Metal's device total is its "
               "recommendedMaxWorkingSetSize, 19,069.67 MB = 18,186 MiB (the log; 18,185 MiB free at load); the "
               "context is the model's 131,072 (no -c; --fit left it), one sequence, flash attention auto"),
    Vector("ollama-gemma2-2b-rocm-rx6600-swa-full-two-streams.log", "google/gemma-2-2b",
           ("AMD Radeon RX 6600", "8176MiB"), "b8700", ("--batch-size=512", "--ubatch-size=256", "--flash-attn=off"),
           "q4_0", version_known=False, engine="llama.cpp",
           why="a public desktop-app debug log of 2026-05-20 (index file id 55586255430, repository not named): "
               "ollama's llama.cpp runner loads gemma2:2b (Q4_0, Gemma 2 2B's shape in its metadata) on a Radeon RX "
               "6600 (8,573,157,376 B by ggml's AMD memory line) with the load request's Parallel 2, BatchSize 256 "
               "(n_batch 512, n_ubatch 256 in the log) and flash attention disabled; the runner's full-size SWA "
               "cache and two split streams are the log's; ollama's vendored llama.cpp is not printed (b8700 "
               "assumed, May 2026, as for ollama 0.20.2)"),
    # -- round 24: 2026 builds through a library front end ------------------------------------------------------
    Vector("llamasharp-llama32-3b-q4km-sched-reserve.log", "meta-llama/Llama-3.2-3B", RTX_4090, "b9500",
           ("--ctx-size=2048", "--n-gpu-layers=99"), "q4_k_m", version_known=False, gpu_known=False,
           engine="llama.cpp",
           why="search-index file 54573746480 (TheOrc's NativeLoadAllocationParser.cs, a spike of 2026-07-19): "
               "Llama-3.2-3B Q4_K_M through LLamaSharp's native llama.cpp on a Windows GPU under WDDM, not named; "
               "224.00 MiB of f16 KV = 2,048 cells of 28 layers x 8 KV heads x 128; every layer on CUDA0 (the "
               "host keeps only the mapped file). The build is not printed: sched_reserve lines are in llama.cpp "
               "since before April 2026 (llama-cpp-python 0.3.20's f49e9178), and a library context leaves "
               "n_outputs_max at 0 = n_batch (llama.h, llama-context.cpp@7c158fbb4) in every build, so b9500, "
               "before llama-server's per-slot outputs (profiles.LLAMACPP_SERVER_OUTPUTS_SINCE), is assumed"),
    # -- round 25: public logs of 0.20+ on current models --------------------------------------------------------
    Vector("v1-0.23-gemma4-31b-96gb-gmu094-32k-kaggle.log", "google/gemma-4-31B-it", RTX_PRO_6000, None,
           gpu_known=False,
           why="search-index file 63102470423 (a Kaggle notebook's server log, repository not named): "
               "gemma-4-31b-it bf16, vLLM 0.23.0 (its banner), gmu 0.94, 32,768 tokens, 20 sequences, prefix "
               "caching (its non-default args line). The GPU is not printed; 58.99 GiB of weights and 28.41 GiB "
               "of KV at gmu 0.94 need a 96 GB card, an RTX PRO 6000 Blackwell assumed. Weights 58.99 logged "
               "against the checkpoint's 58.25 (the log's prefetch line); gsg books 58.83 with the k_eq_v layers' "
               "V slices and the two rope caches (profiles.VLLM_GEMMA4), KV +1.3 % (was +3.4 %; MISSES.md)"),
    Vector("v1-0.21dev-dsv4-flash-2x-gb10-tp2-mtp2-200k-gmu08.log", "deepseek-ai/DeepSeek-V4-Flash", GB10, "0.21.0",
           version_known=False,
           why="search-index file 56725819772 (a compose file and its vLLM log, repository not named): "
               "DeepSeek-V4-Flash on two DGX Sparks (--nnodes 2, one GB10 each), TP 2, fp8 KV, block 256, 200,000 "
               "tokens, gmu 0.8, MTP with 2 speculative tokens (its non-default args line), a community image of "
               "0.21.1rc1.dev339 (its banner; 0.21.0 assumed). Verdict right (fits); KV -14.4 %, not scored (a "
               "development build): the V4 MTP drafter is not modelled (2.60 GiB of weights; MISSES.md)"),
    # round 28: the first 0.22 log; AsyncLLMEngine runs under UsageContext.ENGINE_CONTEXT, which get_batch_defaults
    # has no row for (engine/arg_utils.py@v0.22.0), so the scheduler keeps SchedulerConfig's own defaults
    Vector("v1-0.22.0-qwen25-7b-async-engine-gmu095-4k-48gb.log", "Qwen/Qwen2.5-7B", L40S, None,
           ("--max-num-seqs=128",), gpu_known=False,
           why="search-index file 67144197265 (a request-abort test script whose docstring holds its console "
               "output; repository not named): Qwen2.5-7B-Instruct bf16 through AsyncEngineArgs (gmu 0.95, 4,096 "
               "tokens), vLLM 0.22.0 (its engine line). AsyncLLMEngine.from_engine_args passes "
               "UsageContext.ENGINE_CONTEXT, for which arg_utils.py@v0.22.0 get_batch_defaults has no entry, so "
               "config/scheduler.py@v0.22.0's DEFAULT_MAX_NUM_SEQS (128) and DEFAULT_MAX_NUM_BATCHED_TOKENS (2,048, "
               "the log's scheduler line) hold: 35 PIECEWISE graphs up to 256 and 19 FULL up to 128, as logged. The "
               "GPU is not named: FlashAttention 2 (not Hopper) and 14.29 + 0.37 + 26.32 GiB at gmu 0.95 fit a 48 GB "
               "card; a 46,068 MiB L40S assumed (an RTX A6000's 49,140 MiB gives +15.5 %). KV +2.7 %, graphs "
               "0.36 GiB estimated against 0.37 (the log's estimate) and 0.31 (the capture)"),
    Vector("qwen3-30b-a3b-fp8-h100-main-2026-08-prefill-graphs-f083.log", "Qwen/Qwen3-30B-A3B", H100, "0.5.23",
           quantization="fp8", version_known=False, engine="sglang",
           why="search-index file 69624180828 (an evaluation dump of 2026-08-27, its server.log; repository not "
               "named): Qwen/Qwen3-30B-A3B-FP8 on one H100 80GB HBM3 (its kernel-config warnings), an SGLang main "
               "build of August 2026 (breakable prefill graphs, no version printed; 0.5.23, the newest modelled, by "
               "date), mem_fraction_static 0.83, TP 1. The first public log of the 0.5.14+ target-graph lines: KV "
               "+0.3 %, verdict right; prefill graphs 1.71 GiB logged against 0.45 booked, after the pool (MISSES.md)"),
    # -- round 26: public V0 and early-V1 logs on common GPUs ----------------------------------------------------------
    Vector("v0.6.4.post1-rho-1b-sft-h200-llm-class-2k.log", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", H200, None,
           why="search-index file 54021851790 (a GRPO project's run report with its terminal paste, repository not "
               "named): realtreetune/rho-1b-sft-GSM8K (rho-math-1b: TinyLlama-1.1B's architecture, 2.05 GiB of "
               "weights as logged) through vllm.LLM, bf16, 2,048 tokens, gmu 0.90, prefix caching, vLLM "
               "0.6.4.post1 (the config line) on host h200-066-044: an H200 (139.80 GiB CUDA total)"),
    Vector("v1-0.7.3-granite30-3b-a800m-l40s-4k.log", config("granite-3.0-3b-a800m"), L40S, None,
           env=("VLLM_USE_V1=1",),
           why="search-index file 44357983106 (a server start-up latency tool's README, repository not named): "
               "ibm-granite/granite-3.0-3b-a800m-instruct (GraniteMoe, 40 experts) by `vllm serve` at its defaults "
               "(the Namespace line: gmu 0.9, 4,096 tokens from the config), vLLM 0.7.3 (the API server line) "
               "with the V1 engine (its V1 lines: VLLM_USE_V1=1) on one L40S (the fused_moe warning's device)"),
    Vector("v0.6.6-ui-tars-7b-24gb-8k.log", config("qwen2-vl-7b"), RTX_4090, None, gpu_known=False,
           why="search-index file 61933690157 (a UI-TARS agent note, repository not named): UI-TARS 7B (a "
               "Qwen2-VL-7B fine-tune) from a local path by api_server, -tp 1, 8,192 tokens, gmu 0.9 (the Namespace "
               "line), vLLM 0.6.6 (the log). The card is not named: 23.67 GiB to CUDA is a 24 GB one, an RTX 4090 "
               "assumed; KV -2.3 % with the log's own total"),
    Vector("v1-0.11-mistral-7b-v02-gptq-gb10-32k.log", "mistralai/Mistral-7B-Instruct-v0.3", GB10, "0.11.0",
           quantization="gptq",
           why="search-index file 9009555428 (an Arm Learning Path page on a DGX Spark, repository not named): "
               "TheBloke/Mistral-7B-Instruct-v0.2-GPTQ (v0.3's shape but its 32,000 vocabulary: 12 MiB less of "
               "fp16 embeddings and head) by `vllm serve --quantization gptq --gpu-memory-utilization 0.9 --dtype "
               "float16`, NVIDIA's 25.11 container (0.11.0+582e4e37.nv25.11) on one GB10: the small batch tier "
               "(2,048 tokens, 256 sequences; NVML has no total for a GB10, profiles.VLLM_BATCH_GB10_SMALL_SINCE)"),
    # -- round 28: 0.12-0.19 logs on common GPUs: TP, MoE, hybrid, quantized checkpoints, fp8 KV -----------------
    Vector("v1-0.13.0-qwen3-next-80b-w4a16-2xl40s-tp2-fp8kv.log", "Qwen/Qwen3-Next-80B-A3B-Instruct", L40S, None,
           quantization="w4a16", checkpoint_known=False,
           why="search-index file 33676930891 (a docker-compose log, repository not named): a compressed-tensors "
               "WNA16 checkpoint of Qwen3-Next-80B-A3B-Instruct (Qwen3NextForCausalLM, Marlin MoE; the checkpoint "
               "is not named) at TP 2 on host l40s-180-us-west-or-1 (compute capability 8.9: L40S), vLLM 0.13.0, "
               "fp8 KV, gmu 0.92, 32,768 tokens, 8 sequences, --enable-prefix-caching, which 0.13.0 turns off for "
               "this model (its own line). No verdict before round 28; now block 1,072 and the pool's layout agree, "
               "weights -2.90 GiB (the checkpoint keeps layers unquantized it does not name): KV +16.2 %, not scored "
               "(MISSES.md)"),
    Vector("v1-0.13.0-qwen3-vl-30b-a3b-h100-nvl-kserve-8k.log", config("qwen3-vl-30b-a3b"), H100_NVL, None,
           why="search-index file 67592774702 (a KServe-style start-up, repository not named): a "
               "Qwen3VLMoeForConditionalGeneration checkpoint served as 'qwen-custom' (128 experts of 768, 58.23 GiB "
               "of bf16 weights: Qwen3-VL-30B-A3B), vLLM 0.13.0, 8,192 tokens, the rest at defaults (printed), on "
               "one H100 NVL (the fused-MoE config's device_name): the H100 tier's 1,024 sequences sorted in the "
               "profile sampler and one image profiled by the encoder; KV +1.9 %"),
    Vector("v1-0.11.2-qwen3-06b-l40s-llm-d-guide-16k.log", "Qwen/Qwen3-0.6B", L40S, "0.11.2",
           ("--max-model-len=16000",),
           why="search-index file 51824034485 (an OpenShift AI guide benchmarking llm-d's scheduler, repository not "
               "named): Qwen/Qwen3-0.6B, one replica per L40S, its ServingRuntime's --max-model-len=16000 and no "
               "other argument; vLLM 0.11.2 by the line numbers (gpu_worker.py:359, kv_cache_utils.py:1229/1234 "
               "are 0.11.2's, 0.11.0 and 0.12.0 print others); KV -0.8 %"),
    Vector("v1-0.11.2rhai-llama33-70b-fp8-tp4-141gb-8k.log", "meta-llama/Llama-3.3-70B-Instruct", H200, None,
           quantization="fp8", gpu_known=False,
           why="search-index file 54698501030 (a memory estimator's test module quoting 'real log snippets', "
               "repository not named): RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic at TP 4, 8,192 tokens, Red Hat's "
               "vLLM 0.11.2rc1 build (the config line). The card is not printed: 106.17 GiB of KV per GPU fits a "
               "141 GB card at the default gmu (H200 assumed, as the module's CSV rows name it); weights exact, "
               "KV -2.8 %"),
    Vector("v1-0.11.2-deepseek-r1-0528-tp8-141gb-8k.log", "deepseek-ai/DeepSeek-R1", H200, None, gpu_known=False,
           why="search-index file 54698501030 (the same module's DeepSeek snippet): deepseek-ai/DeepSeek-R1-0528 "
               "(R1's shape, fp8) at TP 8, 8,192 tokens, vLLM 0.11.2 (the config line); the card is not printed "
               "(79.74 + 41.60 GiB per GPU: a 141 GB card at the default gmu, H200 assumed); KV -2.2 %"),
    Vector("v1-0.14.0-mistral-7b-lora-rtx-pro-6000-gmu095-4k-ptx-error.log", "mistralai/Mistral-7B-Instruct-v0.3",
           RTX_PRO_6000, "0.14.0",
           ("--max-model-len=4096", "--gpu-memory-utilization=0.95", "--max-num-seqs=256", "--enable-lora",
            "--max-loras=1", "--max-lora-rank=16"),
           why="search-index file 54377340947 (a support report to RunPod, repository not named): "
               "mistralai/Mistral-7B-Instruct-v0.2 (v0.3's shape, its 32,000 vocabulary: 12 MiB less) with LoRA "
               "(1 slot, rank 16), 4,096 tokens, gmu 0.95, 256 sequences (the worker's env), "
               "madiatorlabs/worker-v1-vllm:v0.14.0 (line numbers 0.14.0's) on an 'RTX 6000 Blackwell' as the "
               "report names it (a 96 GB card: 13.58 + 75.99 GiB at 0.95). The capture dies on a PTX toolchain "
               "error, not memory: no verdict. KV -0.7 %; the bars count 102 + 70 graphs, each size with and "
               "without LoRA (gsg counted 51 + 35 before round 28)"),
    Vector("v1-0.14-32b-fp16-2xh100-tp2-10k-excerpt.log", "Qwen/Qwen2.5-32B", H100, "0.14.1",
           ("--tensor-parallel-size=2", "--max-model-len=10000"), args_known=False,
           why="search-index file 56356184875 (a Korean vLLM triage guide after Red Hat's '5 steps to triage vLLM "
               "performance', repository not named): 'a 32B FP16 model on two H100 80GB', three lines at 10,000 "
               "tokens, 0.14.x by line numbers (0.14.0 and 0.14.1 print the same); 131,072 B per token per rank is "
               "Qwen2.5/Qwen3-32B's shape (Qwen2.5-32B taken; Qwen3-32B's weights differ by 0.01 GiB per rank). "
               "The rest of the command is not quoted: KV -12.0 % at vllm serve's H100 defaults (1,024 sequences "
               "sorted in the profile sampler, 5.6 GiB), not scored (MISSES.md)"),
    # -- round 27: llama.cpp's newest builds on other backends ----------------------------------------------------
    Vector("qwen25-7b-mathtutor-f16-sycl-a770-b7300-decimal-comma.log", "Qwen/Qwen2.5-7B-Instruct",
           ("Intel(R) Arc(TM) A770 Graphics", "15473MiB"), None, engine="llama.cpp",
           why="search-index file 21163070082 (XAIGPUARC's README, an install script for llama.cpp's SYCL backend, "
               "repository not named): llama-cli of build 7300 runs MathTutor-7B-H_v0.0.1.f16 (a Qwen2.5-7B "
               "fine-tune, F16) on an Arc A770 at 4,096 cells, every layer on SYCL0; the device total is the memory "
               "breakdown's (15,473 MiB). A German locale prints decimal commas (1039,50 MiB), which gsg read as "
               "no buffer before round 27; flash attention resolved to disabled by its own line"),
    # -- round 27: older builds (b1000-b6000) and their wrappers ---------------------------------------------------
    Vector("ollama-deepseek-v3-q4km-1-of-62-layers-kv-host.log", "deepseek-ai/DeepSeek-V3", RTX_4090, "b4400",
           (), "q4_k_m", version_known=False, gpu_known=False, engine="llama.cpp",
           why="ollama#8447 (SlavikCA, 2025-01-16): ollama in Docker offloads 1 of 62 layers of DeepSeek-V3 Q4_K_M "
               "(its 378,582.96 + 7,106.67 MiB), n_ctx 2048, f16 K and V without MLA: CUDA0 holds one layer's KV "
               "(160 MiB = 2,048 cells x 128 heads x (192 + 128) x 2 B), the CPU the other 60 (9,600 MiB). The GPU "
               "is not named (a 24 GB card assumed); ollama's vendored llama.cpp of January 2025 is not printed "
               "(llama_new_context_with_model's n_ctx_per_seq lines: b4400 assumed). KV exact; CUDA0's weights "
               "are 6.5 % under the log's (Q4_K_M's q6_K ffn_down in the last layers, not modelled per layer)"),
    # -- round 31: llama.cpp logs (h-llogs31) -------------------------------------------------------------------
    Vector("ollama-0.5-phi4-q4km-rtx4060-laptop-29-of-41-no-mmap-swa-assert.log", "microsoft/phi-4",
           ("NVIDIA GeForce RTX 4060 Laptop GPU", "8188MiB"), "b4400", (), version_known=False, engine="llama.cpp",
           why="search-index file 19699336111 (a public notebook of 2025-01-10, repository not named): ollama 0.5's "
               "cuda_v12 runner imports microsoft/phi-4's Q4_K_M GGUF (the log's file type) on an RTX 4060 Laptop "
               "GPU (the device line; 8 GB), --ctx-size 2048 --n-gpu-layers 29 --no-mmap --parallel 1 (the "
               "runner's own command line): 29 of 40 layers' KV on CUDA0 (290 MiB), the output and 11 layers on "
               "the host. ollama's vendored llama.cpp is not printed (llama_new_context_with_model's n_ctx_per_seq "
               "lines of January 2025: b4400 assumed); the GGUF's sliding_window 0 fails an assertion after the "
               "KV buffers (not memory)"),
    # -- round 29: public vLLM starts of 0.20 to 0.27 ------------------------------------------------------------
    Vector("v1-0.26.0-qwen3-8b-ray-serve-80gb-131k.log", "Qwen/Qwen3-8B", H100, None, gpu_known=False,
           why="ray-project/ray PR #65486 (turn 15, 2026-08-19): Ray Serve LLM's replica runs vLLM 0.26.0 with "
               "Qwen/Qwen3-8B (its config line) at 131,072 tokens, gmu 0.9, on one GPU of 79.18 GiB that the thread "
               "does not name (an 80 GB H100 assumed: KV not scored). No 'Model loading took' line in the excerpt: "
               "the weights are the advice line's 'GiB for weight' (read from round 29)"),
    # -- round 31: a 0.15 start with the plain AWQ kernel -----------------------------------------------------------
    Vector("v1-0.15.1-qwen25-14b-awq-kernel-rtx3090-16k-journal.log", "Qwen/Qwen2.5-14B", RTX_3090, None,
           ("--gpu-memory-utilization=0.90",), "awq",
           why="search-index file 32819329964 (an OpenClaw desktop's audit record quoting journalctl; repository not "
               "named): Qwen2.5-14B-Instruct-AWQ on one RTX 3090 (the record's nvidia-smi) under vLLM 0.15.1, the "
               "unit's ExecStart: --quantization awq (the plain kernel, forced) --gpu-memory-utilization 0.90 "
               "--max-model-len 16384 --max-num-seqs 8; the restart of 06:35:35, after a boot-time start that ran "
               "beside a second engine (not kept)"),
    Vector("v1-0.16-qwen25-05b-rx7900gre-rocm-gmu075-2k-eager.log", "Qwen/Qwen2.5-0.5B", RX_7900_GRE, "0.16.0",
           ("--gpu-memory-utilization=0.75", "--max-model-len=2048", "--enforce-eager"),
           why="search-index file 68386204068 (an AMD desktop's 'Running a LLM in Docker Compose' README, repository "
               "not named): Qwen2.5-0.5B-Instruct in a ROCm vLLM container on the README's RX 7900 GRE 16 GB, gmu "
               "0.75 ('nvtop shows exactly 75%'), 2,048 tokens (its concurrency line), --enforce-eager (its list of "
               "important bits); the release from the quoted file:line tags, 0.16.0's exactly (gpu_model_runner.py:"
               "4221, gpu_worker.py:373, kv_cache_utils.py:1307 as in the 0.16.0 CUDA logs); the first vLLM log on an "
               "RDNA3 card: eager, so the pool is gmu x total less weights, the sampler's 2,048 x 151,936 logits "
               "and non-torch memory"),
    # -- round 31: a released 0.25 with a DeepSeek-V4 window -----------------------------------------------------
    Vector("v1-0.25.0-dsv4-flash-2x-rtx-pro-6000-tp2-fp8kv-mtp2-1m.log", "deepseek-ai/DeepSeek-V4-Flash",
           RTX_PRO_6000_WS, None, gpu_known=False,
           why="search-index file 56819795714 (a public write-up of DeepSeek-V4-Flash on stock vLLM v0.25.0, "
               "repository not named): TP 2 over two 96 GB RTX PRO 6000 Blackwell cards (PCIe, "
               "--disable-custom-all-reduce), fp8 KV, gmu 0.95, 1,048,576 tokens, 64 sequences, 4,096 batched "
               "tokens, MTP with 2 speculative tokens, async scheduling (its non-default args line). The edition "
               "is not named (Workstation assumed; the CUDA total gsg books differs by edition), so KV is shown, "
               "not scored. The window groups hold one step of batched tokens at 0.25 (in flight: two from "
               "0.26.0): per request 5.67 GiB against the log's 5.41; the pool is 2.76 GiB over the log's "
               "(the MTP drafter's 2.38 GiB of weights and 1.18 GiB of its graph estimate unread)"),
    # -- round 31: SGLang logs of thin releases (0.4.7, 0.4.9, 0.4.10, 0.5.10 main) ---------------------------
    Vector("qwen25-7b-docs-ci-h100-2025-06-12-0.4.7-negative-load-usage.log", "Qwen/Qwen2.5-7B", H100, "0.4.7",
           version_known=False, engine="sglang",
           why="docs.sglang.ai 'SGLang Frontend Language' as the docs CI built it on 2025-06-12 (Stars1233/"
               "sgl-project.github.io@b968e241): Qwen2.5-7B-Instruct under the CI's --max-total-tokens 20480 on its "
               "H100 beside other notebooks; 'mem usage=-27.89 GB': free memory rose during the load (read from "
               "round 31); main between 0.4.7 (wheel of 2025-06-10) and 0.4.7.post1 (2025-06-16): 0.4.7 by date"),
    Vector("qwen25-7b-docs-ci-h100-2025-07-11-0.4.9.post1-negative-load-usage.log", "Qwen/Qwen2.5-7B", H100,
           "0.4.9.post1", version_known=False, engine="sglang",
           why="the same notebook as the docs CI built it on 2025-07-11 (Stars1233/sgl-project.github.io@719c0b48): "
               "'mem usage=-2.84 GB' (read from round 31); main between 0.4.9.post1 (wheel of 2025-07-09) and "
               "0.4.9.post2 (2025-07-12): 0.4.9.post1 by date"),
    Vector("qwen25-vl-7b-docs-ci-h100-2025-07-11-0.4.9.post1-beside-notebooks.log", config("qwen2.5-vl-7b"), H100,
           "0.4.9.post1", version_known=False, engine="sglang",
           why="docs.sglang.ai 'OpenAI APIs - Vision' as the docs CI built it on 2025-07-11 (Stars1233/"
               "sgl-project.github.io@719c0b48): Qwen2.5-VL-7B-Instruct under the CI's --max-total-tokens 20480, "
               "CUDA graphs off, 60.49 GB free at the load (other notebooks on the card); 0.4.9.post1 by date"),
    Vector("deepseek-r1-0528-fp8-8x-b200-tp8-ep8-0.4.10.post1-graphs-capacity.log", "deepseek-ai/DeepSeek-R1", B200,
           "0.4.10.post1", ("--tp-size=8", "--ep-size=8"), version_known=False, engine="sglang",
           why="search-index file 9615030885 (a B200 deployment guide's TEP8 sample, 2025-08-01): DeepSeek-R1-0528 "
               "(DeepSeek-R1's shape, FP8 blocks) at --tp 8 --enable-ep-moe, default fraction, on 8x B200; image "
               "lmsysorg/sglang:v0.4.10.post1-cu128-b200 with sglang from main: 0.4.10.post1 by the image. The "
               "guide quotes TP0's graph line and capacity only"),
    Vector("qwen3-32b-4x-b200-tp4-main-2026-04-10-pool-lines.log", "Qwen/Qwen3-32B", B200, "0.5.10",
           ("--tp-size=4",), version_known=False, engine="sglang",
           why="sglang PR #22537 (main of 2026-04-10): Qwen3ForCausalLM at TP 4 with 15.50 GB of weights a rank "
               "and 67.33 GB each of K and V for 2,206,208 tokens: Qwen3-32B's shape; 176.28 GB free before the "
               "weights is a B200 (the log's CUTLASS line names it); default fraction; 0.5.10 by date"),
)


# Fixtures that are not vectors, each with the reason (a parse test still reads every one: tests/core/verify)
EXCLUDED = {
    "llama.cpp/qwen36-mmproj-q8-p100-no-fa-clip-warmup-compute-oom.log": "search-index file 58091952734: the "
        "vision projector's lines alone (a Qwen3.6 mmproj-Q8_0 on a Tesla P100, flash attention off): the text model "
        "is not quoted and gsg's llama.cpp estimate does not size a projector (its refused 4,657.81 MiB warm-up "
        "reserve is read as the projector's compute buffer, not the text model's)",
    "llama.cpp/llamafile-llava-v15-7b-q4-cpu-clip-first-build-json.log": "search-index file 19445609683: "
        "llamafile's llava-v1.5-7b on a GitHub Codespace without a GPU: every buffer is the CPU's, so no GPU "
        "memory to hold an estimate against; its build record is llamafile's fixed pair (1500, a30b324), not the "
        "build, and its CLIP projector (169.18 MiB, 32.89 MiB of compute) is read apart from the text model",
    "vllm/v1-0.13.0-nv26.01-qwen3-30b-a3b-fp8-gb10-gmu030.log": "round 30, index file id 55144767765: "
        "Qwen/Qwen3-30B-A3B-FP8 at gmu 0.3, fp8 KV, 32,768 tokens on one GB10 under NVIDIA's 26.01 container (vLLM "
        "0.13.0+nv26.01). gsg books 5.74 GiB of pool where the log has 4.04 (+42 %): weights agree (29.04 GiB), so "
        "3.43 GiB of the 36.51 GiB budget went to the profile and non-torch memory against gsg's 1.73. On this "
        "integrated GPU 0.13 reads free memory as the host's MemAvailable (utils/mem_utils.py MemorySnapshot), so "
        "whatever the host consumed between the worker's snapshot and the profile's end (here a cold 92 s "
        "torch.compile, 171 s of weight loading) is non-KV memory; gsg books a clean host (gpu_arch.uma_note, "
        "benchmarks/vectors/MISSES.md): kept for its parse",
    "vllm/v0.7.2-qwen25-15b-t4-colab-unsloth-gmu050.log": "round 30, index file id 55875904831: Qwen2.5-1.5B-"
        "Instruct fp16 through vLLM 0.7.2's V0 LLM engine at gmu 0.50 on a Colab Tesla T4 (Unsloth's banner), inside "
        "an Unsloth GRPO training process that had loaded its own 4-bit copy and CUDA context first: V0 measures "
        "non-torch memory from its own baseline, so the log books 0.01 GiB where a fresh engine process (every "
        "GPUStack deployment, gsg's 0.16) holds its CUDA context; with the logged 0.01 the pool agrees (2.36 GiB): "
        "kept for its parse",
    "vllm/v0.10.1-nemotron-nano-9b-v2-l40s-oom-after-load.log": "vllm#23230 (2025-08-20): "
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2 (a Mamba-2 hybrid) on one L40S under 0.10.1's V0 engine dies allocating "
        "33.75 GiB right after 16.56 GiB of weights; the model is not in the catalog and the command is not quoted "
        "(the V0 Mamba cache is sized by max_num_seqs): kept for its parse",
    "vllm/v1-0.24-qwen36-27b-fp8-2x-rtx3090-tp2-fp8kv-262k-args-cut.log": "club-3090 PR #594 (turn 0): "
        "qwen3.6-27b-fp8 on two RTX 3090 at TP 2, fp8 KV, 262,144 tokens, 2 sequences; the quote cuts the args at "
        "'specula', so whether MTP drafts is unknown (the same rig's reports run MTP n=3, which gsg refuses to size "
        "for an FP8 checkpoint, GSG030), and no version line is quoted (0.24 by kv_cache_utils.py:2146). Without a "
        "draft the KV memory agrees (5.38 GiB estimated, 5.33 logged) and the tokens are +12.9 %: kept for its parse",
    "vllm/v1-0.27.1-qwen38-27b-fp8-2x-rtx5090-tp2-advice-per-rank.log": "club-3090#1087 (turn 1): qwen3.8-27b-fp8 "
        "on two RTX 5090 under 0.27.1, the two workers' advice lines only; Qwen3.8-27B is not in the catalog and the "
        "excerpt prints no KV tokens: kept for its parse (each worker's pool, the smaller binding)",
    "llama.cpp/llama2-70b-q6k-v100s-p40-b1702-server-json-cut.log": "llama.cpp PR #4620 (city96, 2023-12-25): ./server "
        "-ngl 128 -b 128 -ts 15.6/12 with llama2-70b-q6_K on a Tesla V100S-PCIE-32GB + Tesla P40, build 1702 (the "
        "server's JSON 'build info' record, not read before round 27, nor ggml_init_cublas's header); the excerpt "
        "stops at the model's metadata, before any device's figure, so verify rebuilds it on one GPU (it counts the "
        "devices a log's buffer lines name) where the run split 70B over two: kept for its parse (test_logparse)",
    "llama.cpp/qwen36-27b-mtp-mmproj-rtx5090-q8kv-4-slots.log": "search-index file 56678392724: Qwen3.6-27B-MTP "
        "(qwen35 with a 65th MTP block) with its mmproj on an RTX 5090; gsg sizes llama.cpp's Gated DeltaNet layers "
        "from a GGUF header only (the catalog's config is refused, GSG030): its KV and RS rows are held in "
        "test_llamacpp_recurrent.py. The image's build_info (b484) is not llama.cpp's build; the MTP draft context "
        "and the vision projector (888 MiB + 248 MiB of compute) are not estimated (MISSES.md)",
    "llama.cpp/vulkan-60-layer-q8-k-init-allocation-limit.log": "llama.cpp#12728: six quoted lines of a spring 2025 "
        "build on one Vulkan device; the model (a 60-layer DeepSeek-V2-shaped cache), the GPU and the build are not "
        "named, and the 2,066 MiB compute buffer is refused by Vulkan's per-allocation limit, not by the device's "
        "memory (MISSES.md)",
    "vllm/v1-0.31.0-qwen25-7b-awq-h200-smoke.log": "search-index file 70347757402 (a test module's REAL_LOG_0_31): "
        "Qwen2.5-7B-Instruct-AWQ on an H200, vLLM 0.31.0, six lines; its gmu is not quoted (34.79 GiB of pool on a "
        "140 GiB GPU is no default) and the H200 is named only by the module's docstring",
    "sglang/qwen38-27b-fp8-2x-mi355x-tp2-0.5.17-rocm-image.log": "farbodtavakkoli/OTel inference/sglang/llm/README.md "
        "(MI355X, TP 2): Qwen3.8-27B-FP8 is not in gsg's catalog and no config of it is kept under benchmarks/vectors",
    "sglang/qwen38-27b-fp8-h100-0.5.18-gdn-f085.log": "farbodtavakkoli/OTel inference/sglang/llm/README.md (H100): "
        "Qwen3.8-27B-FP8 (Qwen3_5ForConditionalGeneration, hybrid GDN) is not in gsg's catalog and no config of it "
        "is kept under benchmarks/vectors",
    "vllm/v0.6.6.post1-qwen25-3b-t4-fp16-eager-4k-colab.log": "TickerTaka/TickerTaka-backend's Colab T4 runbook: "
        "Qwen2.5-3B-Instruct fp16, eager, 4,096 tokens, gmu 0.9 (scripts/colab/serve.py), vLLM 0.6.6.post1. Its "
        "author elided the blocks line ('# GPU blocks: 10533 ... Maximum concurrency ... 41.14x'), which is not "
        "vLLM's format, so the log holds only its weights line (5.79 GiB against 5.75 estimated). By hand: 10,533 "
        "blocks = 168,528 tokens; gsg at the runbook's 14.56 GiB total (`--gpu-memory 14.56GiB`) 169,040 (+0.3 %), "
        "at the T4's NVML total 180,576 (+7.1 %): Colab T4s print 14.56 or 14.74 GiB, so no CUDA_TOTALS row",
    "vllm/v0.8.3-deepseek-v25-2x8xa100-40gb-tp8-pp2-ray.log": "surajssd/llm-k8s: DeepSeek-V2.5 at TP 8 x PP 2 over "
        "two 8x A100-40GB nodes, V0 over Ray. Ray's dedup prints 3 of 16 ranks' profile lines with the last rank's "
        "numbers; the '# cuda blocks: 5302' (2.73 GiB of 30 MLA layers x 576 x 2 B x 16) is a rank none of them "
        "shows (pid 627 printed 3.58 GiB, 6,951 blocks): gsg against pid 627 is +10.1 % (3.94 GiB; weights -0.2 %), "
        "against the hidden rank +44 % (MISSES.md)",
    "vllm/v1-0.9.1-dotsocr-wsl-compose-timestamps.log": "search-index file 66753470120: dots.ocr (DotsOCR, a "
        "trust-remote-code model gsg's catalog lacks) under WSL2 Docker at gmu 0.8, vLLM 0.9.1, on a GPU the README "
        "does not name; kept for its compose-timestamp lines",
    "vllm/v1-0.11-qwen3-vl-30b-a3b-4x-rtx3090-tp4-64k.log": "search-index file 42514581982 (Sipeed NanoKVM-Pro docs): "
        "Qwen3-VL-30B-A3B-Instruct at TP 4 on four RTX 3090, vLLM 0.11.0, gmu 0.9, 65,536 tokens; started. With the "
        "0.11 video profile (profiles.VLLM_VIDEO_ROWS) gsg's pool is +6.1 % (106,912 tokens against 100,752; was "
        "+44 %): the rest is 0.30 GiB of weights per rank that 'Model loading took' prints above gsg's count, "
        "outside the encoder (benchmarks/vectors/MISSES.md); kept out of the scored rows until that is read",
    "vllm/v1-0.30-gemma4-12b-nvfp4-rtx-pro-6000-kv-memory-set.log": "search-index file 71067348846: a Gemma 4 12B "
        "NVFP4 checkpoint (Gemma 4 is not in gsg's catalog) on an RTX PRO 6000 Blackwell, vLLM 0.30, with "
        "--kv-cache-memory set (the pool is the user's 52.0 GiB, not an estimate); kept for its lines",
    "vllm/v0.24-qwen36-35b-a3b-nvfp4-rtx5090-prefix-align.log": "club-3090#612: Qwen3.6-35B-A3B NVFP4 (modelopt) on "
        "an RTX 5090, vLLM 0.24.0, --enable-prefix-caching; the pool's layout from its printed 5.98 GiB is exact "
        "(test_gated_delta.py: 567,978 tokens, 4.33x) and the verdict is right (fits), but the budget's NVFP4 MoE "
        "and vision profile are not gsg's (+19 % KV from scratch), and the excerpt has no weights line to say why",
    "vllm/v1-0.20-qwen36-35b-a3b-nvfp4-rtx5090-wsl-cutlass.log": "search-index file 51830815744: RedHatAI's "
        "compressed-tensors Qwen3.6-35B-A3B-NVFP4 on a 32 GB Blackwell card under WSL2 (RTX 5090 assumed: the note "
        "names no GPU), vLLM 0.20.0; with llm-compressor's NVFP4 recipe for the model (benchmarks/vectors/"
        "qwen3.6-35b-a3b-nvfp4-llmc: Gated DeltaNet layers bf16) the weights are -0.6 % (21.73 GiB against 21.86), "
        "but KV is +57.9 % (+44.7 % with FlashInfer's graph-estimate workspace under --attention-backend=FLASHINFER, "
        "the backend vLLM chose): ~1.3 GiB of profile peak is not read (benchmarks/vectors/MISSES.md)",
    "vllm/v0.3-opt-125m-weights-mb.log": "vllm PR #3120: facebook/opt-125m (benchmarks/vectors/opt-125m since round "
                                         "21) on a GPU the thread does not name, a development build before 0.4",
    "vllm/v0.4-qwen-7b-no-kv-memory.log": "QAnything#302: an RTX 3090 shared with QAnything's embedding, rerank and "
                                          "OCR models at QAnything's own fraction: neither is in the log",
    "vllm/v0.6.4.post1-qwen25-05b-no-kv-memory.log": "vllm#10439: Qwen2.5-0.5B at gmu 0.4, 512 tokens; 0.6.3 started "
                                                     "it, 0.6.4 counts other processes' memory against the fraction, "
                                                     "and what they held is not in the thread",
    "vllm/v0.7-llama32-11b-vision-h100.log": "vllm PR #12126: Llama-3.2-11B-Vision (mllama's cross-attention and "
                                             "its 36.63 GiB encoder profile) is not modelled",
    "vllm/v0.7-two-workers-weights.log": "vllm#12664: two ranks' weight lines and NCCL lines; the model is not named",
    "vllm/v0.8-moe-marlin-4x-rtx3090-workers.log": "vllm PR #14447: the reporter's DeepSeek-R1 AWQ over RTX 3090s; "
                                                   "the parallel layout and length are not in the excerpt",
    "vllm/v1-0.24-gpt-oss-120b-tp2-offload-83-graphs-cut.log": "vllm#46933: gpt-oss-120b at TP 2 with the CPU "
        "KV-offloading connector hangs in graph capture; the excerpt names no GPU and stops at the capture plan "
        "(83 + 83 sizes to 1024), before any weights or KV line",
    "vllm/v1-0.18-gguf-iq1s-graphs.log": "vllm PR #39471: an IQ1_S GGUF checkpoint, not named; vLLM's GGUF weights "
                                         "are not in gsg's vLLM arithmetic",
    "vllm/v1-0.18-gguf-qwen35-graph-estimate.log": "vllm PR #39559: the pool is set by num_gpu_blocks_override=512, "
                                                   "and Qwen3.5's hybrid layers are not in the catalog",
    "vllm/v1-0.18-tp2-graph-estimates.log": "vllm PR #37296: graph estimates and one rank's pool; model not named",
    "vllm/v1-0.19-windows-131k.log": "aivrar/vllm-windows-build#4: a Windows build; model and GPU not in the excerpt",
    "vllm/v1-0.7.4-kv-tokens.log": "vllm PR #13596: two lines showing the new message; model and GPU not given",
    "vllm/v1-0.11-qwen25-math-15b-80gb-gmu095-sampler-oom.log": (
        "search-index file 53815542336 (a verl run's console log, repository not named): Qwen2.5-Math-1.5B via "
        "the LLM class at gmu 0.95 under 0.11.0 on an 80 GB card not named (79.33 GiB to torch), another "
        "process holding 494 MiB of it; KV -0.4 % as Qwen2.5-1.5B, but the warm-up OOM needs the 3.49 GiB "
        "its graphs took where gsg books 1.37 (MISSES.md, 'Graph memory outside torch at 0.11'): not fitted"),
    "vllm/v1-0.8-sampler-oom-8x-rtx5080.log": "vllm#14452: 'a 32B model' on 8x RTX 5080; the checkpoint and its "
                                              "quantisation are not in the comments that hold the log",
    "vllm/v1-0.8.4-gpustack-two-ranks.log": "gpustack#1916: a multimodal model of 31.28 GiB per rank over two "
                                            "ranks, not named; the excerpt stops before the pool",
    "vllm/v1-0.9.1-free-memory-below-requested.log": "vllm#20305: refused because other processes held 15.9 of "
                                                     "47.38 GiB; a log rebuilt by verify has no input for memory "
                                                     "held by others, so the estimate cannot make this refusal",
    "vllm/v1-ci-free-memory-below-requested.log": "vllm#33297: the same refusal class (1.53 of 22.05 GiB free in "
                                                  "CI); the model is not in the line",
    "vllm/v1-fp8-kv-221k-refused.log": "vllm#25350: the same command at 221,000 tokens left 5.59 GiB of pool "
                                       "where 100,000 left 10.55; no argument in the thread explains 4.96 GiB",
    "vllm/v1-0.23-llama31-70b-fp8-rtx-pro-6000-gmu075-refused.log": "search-index file 55680053478: the report "
        "quotes vLLM 0.23.0's refusal reflowed and edited (no '(' before the needed GiB, three lines), read as one "
        "line since round 22 (logparse _REFUSAL_HEAD): 0.3 GiB of KV memory against 5.0 needed; gsg's budget keeps "
        "none (no-kv-memory: weights 67.67 GiB, graphs 2.51, activation 1.84 of 71.26 requested), so the verdicts "
        "differ by which refusal; its util 0.90 / 0.875 pools (14.54 / 12.17 GiB) are a table's figures, not log "
        "lines (benchmarks/vectors/MISSES.md)",
    "vllm/v1-0.28.0-qwen25-7b-awq-l4-gmu035-32k-refused.log": "search-index file 69276616374: Qwen2.5-7B-AWQ on an "
        "L4 under vLLM 0.28.0 at gmu 0.35 and 32,768 tokens, refused with 1.1 GiB of KV memory where gsg keeps 2.07: "
        "every `docker run` of the bench starts without a torch.compile cache, and the cold compile's profile "
        "transient (1.04 GiB of peak activation in the file's own table, as the 0.26 RTX 4080 record of the same "
        "model) is Inductor's, not in vLLM's source (benchmarks/vectors/MISSES.md); the verdict would be wrong",
    "vllm/v1-nvfp4-kv-1m.log": "vllm#49011: a prototype branch's nvfp4 KV cache with a drafter, not a release",
    "vllm/v1-0.20-qwen36-35b-a3b-nvfp4-rtx5090-wsl-8k-batch.log": "search-index file 52377383460: the same WSL2 "
        "set-up as the excluded 0.20.0 RTX 5090 row (card not named) rerun at 8,192 batched tokens and capture size "
        "1: 2.95 GiB / 75,456 tokens logged against 4.70 GiB / 121,568 estimated (+61.1 %); the pool fell 0.12 GiB "
        "from the 4,096-token run while gsg's profile peak did not move, and the ~1.6 GiB of profile peak the two "
        "runs share is not read (benchmarks/vectors/MISSES.md)",
    "vllm/v1-0.22.0-qwen35-4b-async-engine-gmu05-1k.log": "search-index file 56036894944: Qwen3.5-4B through "
        "AsyncLLMEngine under vLLM 0.22.0 (gmu 0.5, 1,024 tokens, GPU not named): Qwen3.5-4B is in neither gsg's "
        "catalog nor benchmarks/vectors, so there is no estimate; kept for its parse, and as the second "
        "ENGINE_CONTEXT run showing SchedulerConfig's 128 sequences (35 PIECEWISE up to 256, 19 FULL up to 128) and "
        "2,048 batched tokens, as the 0.22.0 Qwen2.5-7B vector's command assumes",
    "vllm/v1-0.22.0-qwen35-4b-llm-class-gmu05-1k.log": "search-index file 55770092662: the same author's "
        "Qwen3.5-4B through the LLM class a day earlier (gmu 0.5, 1,024 tokens, GPU not named), not in gsg's "
        "catalog: parsed only; it prints LLM_CLASS's small-tier 8,192 batched tokens and 256 sequences (51/35 "
        "graphs up to 512) against the AsyncLLMEngine run's 2,048 and 128 on the same card, 11.11 GiB of KV "
        "against 12.85 (graph estimate 0.64 against 0.40 GiB, the rest the larger profile batch)",
    "vllm/v1-0.20-qwen36-35b-a3b-nvfp4-gb10-gmu085-262k-no-mtp.log": "search-index file 51900802258: the GB10 "
        "author's run of the MTP row's command without the drafter (gmu 0.85, 262,144 tokens, 8 sequences, 65,536 "
        "batched tokens, flashinfer_cutlass MoE): weights 21.86 GiB and the 1/1 graphs at capture size 1 as "
        "estimated, but 66.93 GiB / 1,754,352 tokens logged against 74.28 / 1,947,184 (+11.0 %): the profile "
        "holds 6.9 GiB gsg does not book, 3.7 GiB more than at 8,192 batched tokens (the scored GB10 row), a "
        "term that grows with the batched tokens and is not read (benchmarks/vectors/MISSES.md)",
    "vllm/v1-0.20-qwen36-35b-a3b-nvfp4-gb10-mtp-negative-graph-estimate.log": "search-index file 52009230863: the "
        "GB10 row's author with MTP speculative decoding (2 tokens) at gmu 0.85 and 262,144 tokens; gsg sizes no MTP "
        "draft of an NVFP4 checkpoint (GSG030: the draft's fc is quantised or bf16 by the checkpoint's format), and "
        "the engine's negative graph estimate (-0.87 GiB) went into its pool, a term gsg does not estimate",
    "vllm/v1-0.28.0-qwen3-14b-l40s-defaults.log": "search-index file 60168338778: Qwen3-14B at its defaults on one "
        "L40S under vLLM 0.28.0 (the post's nvidia-smi and software line), four lines the post quotes, one of them "
        "edited ('GiB and 6.27 seconds' is not 0.28.0's 'GiB memory and %.6f seconds'): 11.57 GiB / 75,824 tokens "
        "logged against 12.73 / 83,440 estimated on the V2 runner's budget (+10.0 %); the post's AWQ run on the same "
        "card leaves the same ~1.2 GiB unread, and no budget, peak-activation or compile line says whether it is "
        "the cold compile's profile transient (benchmarks/vectors/MISSES.md)",
    "vllm/v1-0.28-qwen25-7b-awq-rtx-pro-4000-8k.log": "search-index file 67578381996: Qwen2.5-7B-AWQ on an RTX PRO "
        "4000 Blackwell, vLLM 0.28.0, a fresh pod's first start (weights downloaded at start-up, so no torch.compile "
        "cache); the excerpt prints only the pool, 2.26 GiB (+16.8 %) under gsg's estimate, and no weights, budget or "
        "profile-peak line to put it in a term; a cold compile's profile transient is Inductor's, not in vLLM's source, "
        "so gsg does not model it (benchmarks/vectors/MISSES.md)",
    "sglang/b200-kv-and-graphs.log": "sglang PR #11830: model and flags not stated (40.03 GB left after the pool "
                                     "implies a fraction of ~0.78, not the default)",
    "sglang/dsv4-pro-h200-no-kv.log": "InferenceX#2128: DeepSeek-V4-Pro is not in gsg's catalog",
    "sglang/dsv4-flash-w4a8-4x-ascend-tp4-npu-graphs-1m-context.log": "search-index file 57382202304: the same "
        "Ascend DeepSeek-V4 development branch at TP 4 (w4a8 weights): neither the NPU's size nor the checkpoint's "
        "format is in the log or gsg's catalog; kept for its parse (NPU graph lines, the DSV4 sizes line)",
    "sglang/deepseek-r1-fp8-8x-hygon-dcu-0.5.10rc0-pd-decode-graph-keyerror.log": "search-index file 54673115369: "
        "DeepSeek-R1 w8a8 as a PD decode node at TP 16 over two nodes of Hygon DCUs (a vendor build of 0.5.10rc0 with "
        "its own dcu_mla backend), the card's size not printed; the capture dies of a KeyError, not memory: kept "
        "for its parse",
    "sglang/dsv4-flash-w4a8-4x-ascend-910b-dp4-ep-warmup-fails.log": "search-index file 57616064554: a development "
        "branch of DeepSeek-V4 on Ascend 910B (w4a8 weights, DeepEP at DP 4): the warm-up request dies of a missing "
        "NPU operator, not memory, and neither the NPU's size nor the checkpoint's format is in the log: kept for "
        "its parse (test_logparse, test_sglang_line_formats)",
    "sglang/dsv4-flash-fp8-4x-mi300x-dp4-pool-split-assert.log": "sglang#25118: DeepSeek-V4-Flash-FP8 at TP 4 x DP 4 "
        "on MI300X, a ROCm development build of 2026-05-12; gsg does not model SGLang's DSv4 pools (SWA, compressed "
        "and state pools sized together: 529,408 full tokens from 87.26 GB), and the start-up stops on an assertion "
        "over the fp8 store dtype, not on memory",
    "sglang/max-total-num-tokens.log": "sglang#29575: model and GPU not stated",
    "sglang/club3090-2x-rtx5090-nvfp4-gdn-draft-pools.log": "club-3090#1261: the excerpt names neither the model "
        "(an NVFP4 hybrid GDN model with a draft) nor its arguments, and stops after the pools",
    "sglang/grok2-fp8-8x-h100-tp8-kubectl.log": "search-index file 45518106035: Grok-2 (Grok1ForCausalLM, 8 experts, "
        "online fp8) is not in gsg's catalog",
    "sglang/granite-40-h-micro-16gb-bench-one-batch-mamba.log": "search-index file 46857556603: IBM "
        "granite-4.0-h-micro (GraniteMoeHybrid: Mamba-2 layers beside attention) is not in gsg's catalog and the "
        "16 GB card is not named",
    "sglang/glm5-fp8-8x-mi355x-tp8-0.5.8.post1-dsa-graph-crash.log": "ajith-sirra-amd/Issues: GLM-5-FP8 "
        "(glm_moe_dsa: MLA with the DSA indexer's own key cache, which gsg does not model: hfconfig names it) is not "
        "in gsg's catalog, and the capture dies of a TypeError, not memory: kept for its parse (test_logparse)",
    "sglang/kimi-k25-int4-8x-mi355x-tp8-graph-crash.log": "ajith-sirra-amd/Issues: Kimi-K2.5 (INT4 experts in "
        "groups of 32, a vision tower) is not in gsg's catalog; as Kimi-K2-0905 with w4a16 weights the budget "
        "agrees (234.2 GiB) but the weights are 62.08 GiB against 73.58 logged, so KV +7.2 % (MISSES.md)",
    "sglang/mi355x-qwen3-30b-a3b-aiter.log": "sglang PR #18263: the PR's patched KV budget (its Case 2), a modified "
                                             "engine",
    "sglang/mimo-v2-flash-swa-tp4.log": "sglang PR #18039: MiMo-V2's sliding-window pool with different K and V "
                                        "head sizes is not modelled",
    "sglang/mimo-v2-flash-b200-tp4-swa-two-pools.log": "sglang PR #15464: MiMo-V2-Flash is not in gsg's catalog "
        "(its window and full layers differ in KV heads and K/V head dims), and the excerpt has no 'Load weight end' "
        "(benchmarks/vectors/MISSES.md)",
    "sglang/deepseek-r1-bf16-8x-mi300x-dp8-profiled-negative.log": "sglang#7691: the excerpt is cut after the "
        "warnings (no arguments line, no GPU memory, no fraction printed); its profiled pool of -561,981 MLA tokens "
        "(-39.5 GB) does not follow from 0.95 of an MI300X and the 21.73 GB left, so an unknown setting is in play "
        "(benchmarks/vectors/MISSES.md)",
    "sglang/npu-tp16-kv-dtype.log": "sglang PR #29853: Ascend NPUs at TP 16, model not named",
    "sglang/qwen25-vl-pp2-tp2-init.log": "sglang PR #13075: Qwen2.5-VL of a size not stated; stops after the "
                                         "distributed init",
    "sglang/qwen3-8b-sm100-275gb-main-2026-05.log": "sglang .claude/skills/clean-startup-log/SKILL.md (its 2026-05-24 "
                                                    "reference log): an SM100 GPU with 275.75 GB free, not named",
    "sglang/tp2-graph-capture.log": "sglang PR #12978: graph capture lines only; model not named",
    "sglang/tp8-ranks.log": "sglang PR #11716: eight ranks of a model not named",
    "sglang/deepseek-v32-exp-mla-kv-size-8xb200.log": "sglang PR #11309: DeepSeek-V3.2-Exp (its NSA indexer cache "
                                                      "is counted in the 'KV size' the PR prints) is not in gsg's "
                                                      "catalog; DP attention over 8 B200 ranks",
    "sglang/qwen3-32b-h100-0.5.19-f090-memory-saver-load-weight.log": "RyanRosario/llm-d "
        "guides/gke-pod-snapshots/benchmark-results/sglang-qwen3-32b-h100.md: SGLang v0.5.19, Qwen3-32B on one H100 "
        "80GB at 0.90 and 8,192 tokens; the page quotes only the weights line and gives the pool in prose (9.54 GB "
        "for 39,078 tokens), so the log has no pool to hold: gsg estimates 39,231 tokens (+0.4 %) and 61.04 GiB "
        "of weights (61.07 logged) for that command (tests/cli/test_public_vectors.py holds the figures)",
    "sglang/ling3-flash-fin-mxfp4-gb10-fork-kda-mla-decode-graph.log": "search-index file 70108097767: "
        "Ling-3.0-flash-Fin (BailingMoeV3: KDA linear layers in a mamba pool beside MLA layers) is not in gsg's "
        "catalog and runs on a fork branch (inclusionAI/sglang ling_v3_support_mxfp4) on a DGX Spark; kept for its "
        "KDA mamba pool beside a one-buffer MLA pool and its target decode-graph line (every figure read)",
    "sglang/lfm2-700m-16gb-bench-one-batch-0.5.6.post2-conv-pool.log": "search-index file 46415979912: LFM2 "
        "(short-convolution layers beside attention) is refused by gsg's config reader (only Gated DeltaNet "
        "hybrids are sized) and the 16 GB card is not named; kept for its conv-only mamba pool line "
        "(85,292 slots, ssm_state 0.00GB)",
    "sglang/spec-verify-mamba-intermediate-94gb-capture-oom.log": "search-index file 70920711276: a public test's "
        "quote of a speculative Gated DeltaNet start-up on a 94.5 GiB GPU that names neither the model nor the "
        "command; kept for the mamba line's verify buffers (their own term since round 27) and the capture OOM",
    "sglang/qwen35-moe-2x-rtx4090-ktransformers-cpu-experts-gdn.log": "ktransformers#1870: KTransformers keeps the "
        "routed experts on the CPU (kt-kernel), which gsg does not model, and the excerpt names neither the "
        "checkpoint nor the command",
    "sglang/gemma4-e4b-gb10-dev-swa-pool-target-graph.log": "search-index file 66975556316: Gemma 4 E4B (per-layer "
        "embeddings, a shared-KV hybrid SWA cache) is not in gsg's catalog, and the engine is a dev build "
        "(0.0.0.dev1+g5f55db35e) on a DGX Spark; kept for its SWAKVPool line and a target decode-graph line that "
        "prints no batch sizes",
    "sglang/v0.5.23-source-format-tp2-ms.log": "built from SGLang v0.5.23's format strings to hold the parser to "
                                               "them (no public log of those lines found): not a run",
    "vllm/v1-0.34-source-format-one-line-kv.log": "built from vLLM v0.34.0's format strings to hold the parser to "
                                                  "them (no public log of 0.30+'s one-line capacity found): not a run",
    "vllm/v1-0.34-source-format-extensible-kv.log": "built from vLLM v0.34.0's format strings to hold the parser to "
                                                    "the extensible KV cache's lines (no public log of them found): "
                                                    "not a run",
    "llama.cpp/deepseek-8-gpus-q4-kv.log": "llama.cpp#9390: a DeepSeek checkpoint over 8 GPUs, quoted from CUDA2 "
                                           "on; its split and the other devices' layers are not in the excerpt",
    "llama.cpp/dsv4-iswa-caches.log": "llama.cpp#27680: DeepSeek-V4 GGUF; the offload flags are not shown",
    "llama.cpp/nemotron3-ultra-b9525-rtx5090-b16-kv-rs.log": "llama.cpp#24175: Nemotron 3 Ultra 550B (nemotron_h_moe) "
        "on one RTX 5090 at b9525: its facts come from its GGUF header only (not in gsg's catalog, and the header's "
        "layer pattern is not in the issue), and the offload flags and context are not shown; kept for its KV "
        "(12 attention layers, four unified sequences) and RS lines behind the build's elapsed-time prefix",
    "llama.cpp/glm4-a6000-ik.log": "ik_llama.cpp PR #333: GLM-4-32B (62 layers) is not in gsg's catalog",
    "llama.cpp/ik-11-gpus-kv-compute-oom.log": "ik_llama.cpp#749: the fork's MLA cache over 11 GPUs, not modelled",
    "llama.cpp/ik-command-a-111b-row-split-4x3090-cuda-split.log": "search-index file 25852725975: ik_llama.cpp at "
        "-sm row over four RTX 3090 with Agatha 111B (a Command-A fine-tune gsg's catalog lacks); the split weights "
        "print as one total over the devices and the fork's build is not named; kept for its CUDA_Split line",
    "llama.cpp/ik-mla-15-gpus-compute-oom.log": "ik_llama.cpp PR #235: the fork's MLA cache over 15 GPUs, not "
                                                "modelled",
    "llama.cpp/llama-cpp-python-0.3.36-0c1e57098-tiny-q4_0.log": "the real engine's own run: its GGUF is written at "
                                                                 "test time and tests/integration/test_real_llamacpp.py "
                                                                 "holds every buffer against gsg",
    # recurrent and hybrid GGUFs: their facts come from the GGUF header, which neither the catalog nor a config.json
    # gives (hfconfig refuses their model types); tests/core/memory/test_llamacpp_recurrent.py holds each RS and KV
    # buffer line against gsg's arithmetic on a header of the same shapes
    "llama.cpp/qwen35-0.8b-cpu-rs-4-slots.log": "Qwen3.5-0.8B (qwen35) on CPU: facts from its GGUF header only; RS "
                                                "and KV buffers held in test_llamacpp_recurrent.py",
    "llama.cpp/qwen35-4b-b8467-rs-one-slot.log": "Qwen3.5-4B (qwen35) at b8467: facts from its GGUF header only; the "
                                                 "RS buffer held in test_llamacpp_recurrent.py",
    "llama.cpp/qwen38-27b-vulkan-rtx3090-b9849-mtp-draft-context.log": "search-index file 67581739375: "
        "Qwen3.8-27B (a Gated DeltaNet hybrid, as Qwen3.5/3.6-27B) at b9849 with an MTP draft context on an RTX "
        "3090: gsg does not size llama.cpp's Gated DeltaNet layers from a catalog config (GSG030), the excerpt names "
        "no GGUF header, and the draft context's buffers are not read (the note says so): kept for its parse",
    "llama.cpp/qwen35-9b-vulkan-gtx1070ti-b9849-fit-31-of-33.log": "Qwen3.5-9B (qwen35) at b9849, --fit's 31 of 33 "
        "layers on a GTX 1070 Ti: facts from its GGUF header only (an unsloth UD quant, weights not rebuilt); the KV "
        "and the RS rows split by layer (the output layer first) held in test_llamacpp_recurrent.py",
    "llama.cpp/qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-18-of-33.log": "Qwen3.5-9B (qwen35) at b9849, --fit's 18 "
        "of 33 layers on an RTX 3060 Laptop: facts from its GGUF header only, as the GTX 1070 Ti run of the same "
        "report; the KV and RS rows of both sides (160 / 96 MiB, 100.50 / 100.50 MiB) held in "
        "test_llamacpp_recurrent.py",
    "llama.cpp/qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-20-of-33-one-slot.log": "the same card and model with -np 1 "
        "(20 of 33 layers): facts from the GGUF header only; KV and RS rows (160 / 96 MiB, 29.31 / 20.94 MiB) held in "
        "test_llamacpp_recurrent.py",
    "llama.cpp/qwen35-27b-b8586-rtx4070-26-of-65-compute-oom.log": "search-index file 58671331675: Qwen3.5-27B "
        "(qwen35) at b8586, -ngl 26 of 65 on an RTX 4070: gsg sizes llama.cpp's Gated DeltaNet layers from a GGUF "
        "header only (the catalog's config is refused, GSG030); the KV and RS rows of both devices are held in "
        "test_llamacpp_recurrent.py; the refused compute reserve is not modelled (MISSES.md, round 26)",
    "llama.cpp/gemma4-e2b-vulkan-rtx3060-laptop-b9849-fit-iswa.log": "search-index file 67250378044: Gemma 4 E2B "
        "(per-layer embeddings, shared KV) is not in gsg's catalog; kept for b9849's fit lines, its iSWA KV buffers "
        "(8,192 + 4,096 cells: 4 slots x 512 + 2,048) and llama_prepare_model_devices' free line",
    "llama.cpp/lfm2-1.2b-cpu-rs-one-slot.log": "LFM2 1.2B on an Android CPU: facts from its GGUF header only; RS and "
                                               "KV buffers held in test_llamacpp_recurrent.py",
    "llama.cpp/ollama-assert-after-kv-buffers.log": "ollama#9515: a GGML_ASSERT after the KV buffers, not memory: "
                                                    "no memory verdict to hold it against",
    "llama.cpp/retry-without-pipeline-minimax-m3-three-gpus.log": "llama.cpp PR #26297: MiniMax-M3 is not in gsg's "
                                                                  "catalog and the excerpt has no buffer lines",
    "llama.cpp/phi4-mini-vulkan-rx580-rx560-fit-compute-oom.log": "a public project note (index file id "
        "62168197661): Docker Model Runner's Vulkan llama-server (b1-e365e65, a llama.cpp commit of spring 2026 "
        "whose build number the index does not give) on an RX 580 + RX 560 reporting 3,169 MiB free each; Vulkan1's "
        "compute reserve (434.8 MiB with four input copies, 396.75 = 512 rows of logits without) fails with 1.5 GiB "
        "of its 3.1 GiB held: the device's real limit is not in the log, so no verdict can be held against gsg",
    "llama.cpp/granite-4.1-8b-rocm-rx9070xt-b9106-fit-ctx.log": "ROCm/ROCm#6227: the warm-up dies on a driver error "
        "(device kernel image is invalid), not memory, so the log has no memory verdict; its buffers are held in "
        "tests/cli/test_public_vectors.py (KV and compute exact at --fit's 31,488 cells, one unified cache)",
    "llama.cpp/hybrid-layer-split-2080ti-p100-kv-rs.log": "llama.cpp#22404: a summary of a --split-mode layer "
        "start-up; the model, its command and the build are not in the excerpt",
    "llama.cpp/load-tensors-oom.log": "llama.cpp#20431: a 144,817 MiB model buffer on one device; model and "
                                      "quantisation not in the excerpt",
    "llama.cpp/ollama-go-engine-qwen3-coder-next-20-of-49-layers.log": "search-index file 55579426224: ollama's Go "
        "engine (its own KV cache and graph, not llama.cpp's) on an unnamed CUDA GPU with 20 of 49 layers of "
        "qwen3-coder-next (Qwen3-Next, hybrid linear attention); the log names neither model file nor GPU; kept "
        "for its memory summary lines (0.1 GiB steps)",
    "llama.cpp/ollama-go-engine-qwen3-30b-a3b-q8-a10-debug-summary.log": "search-index file 35287335636: ollama's "
        "Go engine, Qwen3-30B-A3B-2507 Q8_0 at 32,768 on an A10 and the CPU, one debug-level fit pass grepped out: "
        "no layer count or outcome, and ollama's layout is its own (llama.cpp's --fit puts 32 of 48 layers on the "
        "GPU, ollama's KV share says 30 or 31); kept for its debug summary lines",
    "llama.cpp/ollama-fifth-gpu-compute-oom.log": "ollama#6860: a compute buffer refused on the fifth of five GPUs; "
                                                  "the model (a path cut at /Met...), its quantisation, the split and "
                                                  "the GPUs (four of 12 GB and one of 4 GB by the title) are not known",
    "llama.cpp/ollama-qwen2-72b-q2k-two-gpus-cut.log": "ollama#4964: Qwen2-72B q2_K over two devices at 2,048 cells "
                                                       "(CUDA0 328 MiB = 41 layers x 8 MiB, the split gsg gives two "
                                                       "equal cards); the excerpt stops at the pipeline line before "
                                                       "the reserve the title says aborted, and logparse reads a cut "
                                                       "after the KV buffers as started: its verdict would be wrong",
}


def parse(vector: Vector) -> ObservedLog:
    log, _ = parse_log(vector.path.read_text(encoding="utf-8").splitlines(True), ENGINES[vector.engine])
    return log


def _quantity(engine: str, observed: dict) -> str:
    """The KV term a row compares: llama.cpp sizes its KV buffer from the context it is given, so the bytes;
    vLLM and SGLang size the pool from memory, so its tokens, or its bytes where the log prints no tokens."""
    if engine == "llama.cpp" or (P.KV_TOKENS not in observed and P.KV_CACHE in observed):
        return P.KV_CACHE
    return P.KV_TOKENS


def run(vector: Vector) -> Outcome:
    """The vector through verify's own rebuild: the log's printed arguments, then the thread's."""
    log = parse(vector)
    name, total = vector.gpu
    opts = V.VerifyOptions(log=str(vector.path), model=vector.model,
                           gpu_memory=None if P.GPU_MEMORY in log.terms() else total, gpu_name=name,
                           backend_version=vector.version, quantization=vector.quantization,
                           backend_args=vector.args, env=vector.env)
    rebuilt = V.rebuild(opts, log)
    doc = V.report(opts, log, rebuilt, [])
    observed, estimated = doc["observed"], doc["estimated"] or {}
    quantity = _quantity(vector.engine, observed)
    return Outcome(vector, rebuilt.version, doc["observed_verdict"], doc["engine_verdict"], quantity,
                   observed.get(quantity), estimated.get(quantity), observed, estimated, rebuilt.problem)


def _shown(value: int | None, quantity: str) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if quantity == P.KV_TOKENS else f"{value / MiB:,.0f}MiB"


def table(outcomes: list[Outcome]) -> str:
    """One line per vector: engine, model, version, GPU, observed and estimated KV (tokens, or MiB of pool),
    delta, verdicts ("-" where the log stops before an outcome)."""
    head = (f"{'log':<48} {'engine':<9} {'model':<26} {'version':<9} {'GPU':<24} {'observed':>11} "
            f"{'estimated':>11} {'delta':>8}  verdict (log / estimate)")
    lines = [head, "-" * len(head)]
    for o in outcomes:
        model = Path(o.vector.model).parent.name if o.vector.model.endswith(".json") else o.vector.model
        delta = f"{o.delta * 100:+.1f} %" if o.delta is not None else "-"
        if o.delta is not None and not o.kv_scored:
            delta += "*"
        lines.append(f"{o.vector.log[:48]:<48} {o.vector.engine:<9} {model.split('/')[-1][:26]:<26} "
                     f"{(o.version or '-')[:9]:<9} {o.vector.gpu[0][:24]:<24} "
                     f"{_shown(o.observed_kv, o.quantity):>11} {_shown(o.estimated_kv, o.quantity):>11} {delta:>8}  "
                     f"{o.observed_verdict or '-'} / {o.estimated_verdict}")
    scored = [o for o in outcomes if o.kv_scored]
    judged = [o for o in outcomes if o.verdict_scored]
    within = sum(abs(o.delta or 0) <= KV_TARGET for o in scored)
    lines.append(f"verdicts right: {sum(o.verdict_right for o in judged)}/{len(judged)} "
                 f"({len(outcomes) - len(judged)} logs stop before an outcome); KV within ±{KV_TARGET:.0%}: "
                 f"{within}/{len(scored)}, within ±{KV_SCORED:.0%}: "
                 f"{sum(abs(o.delta or 0) <= KV_SCORED for o in scored)}/{len(scored)} "
                 f"(* not scored: version, GPU, command or checkpoint not known, or the engine refused; "
                 f"target {TARGET_SHARE:.0%} within ±{KV_TARGET:.0%})")
    return "\n".join(lines)


def fixtures() -> list[str]:
    """Every public log fixture, as engine/file."""
    return sorted(f"{engine}/{path.name}" for engine in ENGINES for path in (LOGS_ROOT / engine).glob("*.log"))
