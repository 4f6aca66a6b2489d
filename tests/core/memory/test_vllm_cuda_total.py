"""vLLM sizes its budget from the total CUDA reports (mem_get_info), not NVML's total that GPUStack reports: the
driver's reserve is outside gpu_memory_utilization x total (profiles.CUDA_TOTALS)."""

from __future__ import annotations

import math

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import GiB, MiB

H100 = "NVIDIA H100 80GB HBM3"
H100_NVML = 81559 * MiB
H100_CUDA = int(79.19 * GiB)


def test_an_h100_as_gpustack_reports_it_is_budgeted_from_cudas_total():
    assert P.cuda_total(H100_NVML, H100) == (H100_CUDA, P.CUDA_TOTALS[0])


@pytest.mark.parametrize(("total", "name"), [
    (H100_CUDA, H100),  # a log's own total: already CUDA's, never reduced twice
    (80 * GiB, H100),  # a total the user typed
    (H100_NVML, "NVIDIA H100 PCIe"),  # another card with the same NVML figure is not assumed to reserve the same
    (81920 * MiB, "NVIDIA A100-SXM4-80GB"),  # no public log prints this card's CUDA total yet
    (H100_NVML, ""),  # no name
])
def test_other_totals_and_cards_are_taken_as_given(total, name):
    assert P.cuda_total(total, name) == (total, None)


@pytest.mark.parametrize(("model", "version", "gmu"), [
    ("openai/gpt-oss-120b", "0.11.0", 0.95),  # vllm#27508's deployment
    ("meta-llama/Llama-3.1-8B", "0.19.0", 0.90),  # a dense model on a later release
])
def test_the_budget_and_pool_move_by_gmu_times_the_reserve(model, version, gmu):
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=4096, gpu_memory_utilization=gmu)
    nvml = estimate_vllm(facts, H100_NVML, cfg, version=version, gpu_name=H100)
    as_cuda = estimate_vllm(facts, H100_CUDA, cfg, version=version, gpu_name=H100)
    assert nvml.requested == math.ceil(gmu * H100_CUDA) == as_cuda.requested
    assert nvml.kv_available == as_cuda.kv_available
    assert nvml.extra["cuda_total"] == H100_CUDA
    assert nvml.extra["cuda_total_source"].startswith("vllm/worker/worker.py@v0.8.1")
    # without the row, the reserve (81,559 MiB - 79.19 GiB = 468.4 MiB) is booked as usable, gmu x that in the pool
    typed = estimate_vllm(facts, 80 * GiB, cfg, version=version, gpu_name=H100)
    assert typed.requested == math.ceil(gmu * 80 * GiB)
    assert typed.extra["cuda_total_source"] == ""
