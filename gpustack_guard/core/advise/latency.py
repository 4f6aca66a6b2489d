"""First-order time estimates for advise: a workload's time to first token in a pool it shares, the decode
throughput of a deployment, and what layers kept on the CPU cost llama.cpp. Estimates, stated as such: they
rank options and say which SLO an option can meet, they do not replace a soak (`gsg soak --slo`).

The prefill model (why a shared pool's long prompts delay short ones): an engine step runs at most the
batched-token budget (vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size, llama.cpp's micro-batch),
running requests first: every running sequence's decode token, then the chunk of the prefill in progress.
A short prompt that arrives while a long one is prefilling waits for that whole prefill, chunk by chunk
(vLLM V1's scheduler serves running requests before waiting ones; priority only decides who is preempted
when KV runs out). So its first token comes after (longest prompt in the pool + its own prompt) prefill tokens,
at (budget - decode tokens) prefill tokens per step, each step costing what a budget-sized forward pass costs.
"""

from __future__ import annotations

import math
import re

from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.weights import active_params
from gpustack_guard.core.values import frozen_value

# Dense BF16/FP16 tensor throughput (FP32 accumulate, no sparsity) and memory bandwidth, from NVIDIA's data
# sheets. Matched by name, most specific first; a GPU not listed gets no time estimate (said so, never guessed).
GPU_SPEED: tuple[tuple[str, float, float], ...] = (
    (r"\bH200\b", 989e12, 4.8e12),
    (r"\bH100\b.*\bPCIe\b", 756e12, 2.0e12),
    (r"\bH100\b", 989e12, 3.35e12),
    (r"\bA100\b.*\b40\s?GB\b", 312e12, 1.555e12),
    (r"\bA100\b", 312e12, 2.039e12),
    (r"\bL40S\b", 362e12, 0.864e12),
    (r"\bL40\b", 181e12, 0.864e12),
    (r"\bL4\b", 121e12, 0.300e12),
    (r"\bA10\b", 125e12, 0.600e12),
    (r"\bRTX A6000\b", 154.8e12, 0.768e12),
    (r"\bRTX 6000 Ada\b", 364e12, 0.960e12),
    (r"\bRTX 4090\b", 165.2e12, 1.008e12),
    (r"\bRTX 3090\b", 71e12, 0.936e12),
)
PREFILL_MFU = 0.5  # fraction of peak tensor throughput a budget-sized prefill step reaches (first order)
BANDWIDTH_EFFICIENCY = 0.8  # fraction of peak memory bandwidth a decode step reaches
HOST_MEMORY_BANDWIDTH = 60e9  # bytes/s: a dual-channel DDR5 server read; llama.cpp decodes CPU layers there
PCIE_BANDWIDTH = 25e9  # bytes/s: PCIe 4.0 x16 in practice; llama.cpp copies CPU layers' weights per prefill batch


@frozen_value(eq=True, repr=True)
class GpuSpeed:
    flops: float  # dense tensor FLOP/s
    bandwidth: float  # memory bytes/s


def gpu_speed(name: str) -> GpuSpeed | None:
    for pattern, flops, bandwidth in GPU_SPEED:
        if re.search(pattern, name, re.IGNORECASE):
            return GpuSpeed(flops, bandwidth)
    return None


@frozen_value(eq=True, repr=True)
class Offload:
    """llama.cpp layers kept in host memory, and their first-order cost."""

    cpu_layers: int
    total_layers: int
    cpu_bytes: int  # weights those layers keep in host memory
    decode_slowdown: float | None  # decode time per token with the offload / all on the GPU (None: GPU unknown)

    def line(self) -> str:
        share = f"{self.cpu_layers} of {self.total_layers} layers on the CPU ({self.cpu_bytes / 2**30:.2f} GiB of " \
                "weights in host memory)"
        if self.decode_slowdown is None:
            return (f"offload: {share}; each generated token reads them from host memory, so decoding runs at "
                    "host-memory speed (no GPU figures to put a number on it)")
        return (f"offload: {share}; estimated {self.decode_slowdown:.1f}x slower decoding than all layers on the "
                f"GPU (first order: each token reads those weights at ~{HOST_MEMORY_BANDWIDTH / 1e9:.0f} GB/s of "
                "host memory, and each prefill batch copies them over PCIe)")


def offload_cost(cpu_layers: int, total_layers: int, cpu_bytes: int, gpu_bytes: int, gpu_name: str) -> Offload:
    """Decode is memory-bound: a token reads every weight once, GPU layers at the GPU's bandwidth, CPU layers at
    the host's (llama.cpp computes them there for small batches)."""
    speed = gpu_speed(gpu_name)
    slowdown = None
    if speed is not None and gpu_bytes + cpu_bytes > 0:
        gpu_rate = speed.bandwidth * BANDWIDTH_EFFICIENCY
        all_gpu = (gpu_bytes + cpu_bytes) / gpu_rate
        mixed = gpu_bytes / gpu_rate + cpu_bytes / HOST_MEMORY_BANDWIDTH
        slowdown = mixed / all_gpu
    return Offload(cpu_layers, total_layers, cpu_bytes, slowdown)


@frozen_value(eq=True, repr=True)
class StepCost:
    """What one engine step costs on one replica, and the budget it runs."""

    budget: int  # tokens per step
    compute_per_token: float  # seconds per prefill token (all ranks together)
    weight_read: float  # seconds to stream one GPU's weights (a step never runs faster)
    host_copy: float = 0.0  # llama.cpp offload: seconds to copy the CPU layers' weights per micro-batch

    def prefill_seconds(self, tokens: int, decoding: int) -> float:
        per_step = max(self.budget - decoding, 1)
        steps = math.ceil(tokens / per_step)
        step = max(self.budget * self.compute_per_token, self.weight_read) + self.host_copy
        return steps * step


def step_cost(est: Estimate, facts: ModelFacts | None, gpu_name: str, tensor_parallel: int,
              cpu_bytes: int = 0) -> StepCost | None:
    """The step of this deployment, or None when the GPU's speed or the model's size is unknown."""
    speed = gpu_speed(gpu_name)
    if speed is None or facts is None:
        return None
    try:
        flops_per_token = 2 * active_params(facts)
    except (ValueError, TypeError):
        return None
    budget = batched_tokens(est)
    compute = flops_per_token / (tensor_parallel * speed.flops * PREFILL_MFU)
    read = est.weights / (speed.bandwidth * BANDWIDTH_EFFICIENCY)
    return StepCost(budget, compute, read, cpu_bytes / PCIE_BANDWIDTH if cpu_bytes else 0.0)


def batched_tokens(est: Estimate) -> int:
    """Tokens one step runs, as the engine arithmetic resolved them (flags, else the release's defaults)."""
    extra = est.extra
    for key in ("max_num_batched_tokens", "chunked_prefill_size", "ubatch_size"):
        value = extra.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return 2048


def decode_tokens_per_second(est: Estimate, gpu_name: str, sequences: int, kv_tokens_each: int) -> float | None:
    """One replica's decode throughput at `sequences` running: each step streams the weights and their KV."""
    speed = gpu_speed(gpu_name)
    if speed is None or sequences <= 0:
        return None
    step = (est.weights + sequences * kv_tokens_each * est.kv_bytes_per_token) / (
        speed.bandwidth * BANDWIDTH_EFFICIENCY)
    return sequences / step if step > 0 else None
