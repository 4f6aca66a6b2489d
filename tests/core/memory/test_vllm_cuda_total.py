"""vLLM sizes its budget from the total CUDA reports (mem_get_info), not NVML's total that GPUStack reports: the
driver's reserve is outside gpu_memory_utilization x total (profiles.CUDA_TOTALS)."""

from __future__ import annotations

import math
from dataclasses import replace

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
    (23034 * MiB, "NVIDIA L40S"),  # the L4's key begins this name, but L40S is another card
    (23034 * MiB, "NVIDIA L4X"),
])
def test_other_totals_and_cards_are_taken_as_given(total, name):
    assert P.cuda_total(total, name) == (total, None)


# A card with a CUDA_TOTALS row: NVML's total (what GPUStack reports) becomes CUDA's; CUDA's own total is taken as
# it is (a log's figure is never reduced twice); the neighbouring card of another name keeps its total.
@pytest.mark.parametrize(("name", "nvml", "cuda", "key", "neighbour"), [
    # 8x L40S under 0.10.2: 'Free memory on device (43.93/44.42 GiB)' where nvidia-smi reports 46068MiB
    ("NVIDIA L40S", 46068 * MiB, int(44.42 * GiB), "l40s", "NVIDIA L40"),
    # A10G hosts (search-index files 59932372583, 59672298265): torch's total 22.06 GiB against 23028MiB
    ("NVIDIA A10G", 23028 * MiB, int(22.06 * GiB), "a10g", "NVIDIA A10"),
    # L4s: 'Free memory on device (21.84/22.03 GiB)' where nvidia-smi reports 23034MiB (search-index file
    # 69494016274); "nvidia l4" is the start of "nvidia l40", a card of its own
    ("NVIDIA L4", 23034 * MiB, int(22.03 * GiB), "nvidia l4", "NVIDIA L40"),
    # 4x RTX PRO 6000 Server Edition under 0.27.1: 'Free memory on device (94.05/95.01 GiB) ... (0.9, 85.51 GiB)';
    # the Workstation edition prints no total in a public log yet
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887 * MiB, int(95.01 * GiB),
     "rtx pro 6000 blackwell server edition", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
])
def test_a_card_with_a_row_is_budgeted_from_cudas_total(name, nvml, cuda, key, neighbour):
    total, row = P.cuda_total(nvml, name)
    assert (total, row.gpu if row else None) == (cuda, key)
    assert P.cuda_total(cuda, name) == (cuda, None)
    assert P.cuda_total(nvml, neighbour) == (nvml, None)


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


L40S = "NVIDIA L40S"
L40S_NVML = 46068 * MiB
L40S_CUDA = int(44.42 * GiB)


@pytest.mark.parametrize(("model", "version", "gmu"), [
    ("Qwen/Qwen3-30B-A3B", "0.24.0", 0.90),  # an MoE model on a later release than the log the row is read from
    ("meta-llama/Llama-3.1-8B", "0.16.0", 0.85),  # a dense model at another fraction
])
def test_an_l40s_budget_leaves_the_drivers_reserve_out(model, version, gmu):
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=8192, gpu_memory_utilization=gmu)
    nvml = estimate_vllm(facts, L40S_NVML, cfg, version=version, gpu_name=L40S)
    assert nvml.requested == math.ceil(gmu * L40S_CUDA)
    assert nvml.extra["cuda_total"] == L40S_CUDA
    assert nvml.extra["cuda_total_source"].startswith("vllm/v1/worker/gpu_worker.py@v0.10.2")
    # 46,068 MiB - 44.42 GiB = 581.9 MiB the driver keeps: gmu x that is no longer in the pool
    unnamed = estimate_vllm(facts, L40S_NVML, cfg, version=version, gpu_name="")
    assert unnamed.kv_available - nvml.kv_available == math.ceil(gmu * L40S_NVML) - math.ceil(gmu * L40S_CUDA)


def test_an_a40_is_budgeted_from_the_total_cuda_reports_in_a_llama_cpp_device_list():
    # 'CUDA0: NVIDIA A40 (45498 MiB, 45231 MiB free)' where nvidia-smi reports 46068 MiB for the same card
    total, row = P.cuda_total(46068 * MiB, "NVIDIA A40")
    assert (total, row.gpu if row else None) == (45498 * MiB, "nvidia a40")
    assert P.cuda_total(16376 * MiB, "NVIDIA RTX A4000") == (16376 * MiB, None)  # not an A40
    # the 0.26.0 A40 log (tests/fixtures/logs/vllm/v1-0.26-llama31-8b-a40-4k.log): gmu 0.9 of 44.43 GiB
    cfg = VllmConfig(max_model_len=4096, gpu_memory_utilization=0.9, max_num_seqs=256)
    est = estimate_vllm(catalog_facts("meta-llama/Llama-3.1-8B"), 46068 * MiB, cfg, version="0.26.0",
                        gpu_name="NVIDIA A40")
    assert est.requested == math.ceil(0.9 * 45498 * MiB)
    assert est.kv_capacity_tokens == 200_128  # the log: 195,760 (+2.2 %)


def test_an_rtx_3090_is_budgeted_from_the_total_cudas_worker_line_prints():
    # vllm#10517 and PR #14447 print 'total_gpu_memory (23.58GiB)' for RTX 3090s that nvidia-smi lists as 24576MiB
    total, row = P.cuda_total(24576 * MiB, "NVIDIA GeForce RTX 3090")
    assert (total, row.gpu if row else None) == (int(23.58 * GiB), "rtx 3090")
    assert P.cuda_total(24564 * MiB, "NVIDIA GeForce RTX 3090 Ti") == (24564 * MiB, None)  # another NVML total
    assert P.cuda_total(24564 * MiB, "NVIDIA GeForce RTX 4090") == (24564 * MiB, None)  # 23.99 GiB in its logs
    # a V1 release and model other than the logs the row is read from: the 0.9.1 refusal of R1-0528-Qwen3-8B
    # (tests/fixtures/logs/vllm/v1-0.9.1-r1-0528-qwen3-8b-rtx3090-32k-refused.log) at 32,768 tokens
    cfg = VllmConfig(max_model_len=32768, gpu_memory_utilization=0.9)
    est = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 24576 * MiB, cfg, version="0.9.1",
                        gpu_name="NVIDIA GeForce RTX 3090")
    assert est.requested == math.ceil(0.9 * int(23.58 * GiB))
    # 24,576 MiB - 23.58 GiB = 437.9 MiB the driver keeps: 0.9 x that is no longer in the pool (0.38 GiB, which
    # turns that log's verdict: 4.61 GiB estimated against 4.50 needed before, 4.24 now; 4.47 logged)
    unnamed = estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 24576 * MiB, cfg, version="0.9.1", gpu_name="")
    assert unnamed.kv_available - est.kv_available == math.ceil(0.9 * 24576 * MiB) - math.ceil(0.9 * int(23.58 * GiB))


A10G = "NVIDIA A10G"
A10G_NVML = 23028 * MiB
A10G_CUDA = int(22.06 * GiB)


@pytest.mark.parametrize(("model", "version", "gmu", "tp"), [
    ("mistralai/Mistral-7B-Instruct-v0.3", "0.2.6", 0.95, 2),  # the Modal log the row was read against
    ("meta-llama/Llama-3.2-1B", "0.8.1", 0.90, 1),  # another model and a later V0 release
])
def test_an_a10g_budget_moves_by_gmu_times_its_reserve(model, version, gmu, tp):
    facts = catalog_facts(model)
    cfg = VllmConfig(max_model_len=4096, gpu_memory_utilization=gmu, tensor_parallel_size=tp)
    nvml = estimate_vllm(facts, A10G_NVML, cfg, version=version, gpu_name=A10G)
    as_cuda = estimate_vllm(facts, A10G_CUDA, cfg, version=version, gpu_name=A10G)
    assert nvml.requested == math.ceil(gmu * A10G_CUDA) == as_cuda.requested
    assert nvml.kv_available == as_cuda.kv_available
    assert nvml.extra["cuda_total"] == A10G_CUDA


RTX_PRO = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
RTX_PRO_NVML = 97887 * MiB
RTX_PRO_CUDA = int(95.01 * GiB)


@pytest.mark.parametrize(("model", "version", "gmu", "tp", "quant"), [
    ("Qwen/Qwen3-235B-A22B", "0.27.1", 0.90, 4, "fp8"),  # the log the row is read from: 85.51 GiB requested
    ("Qwen/Qwen3-8B", "0.20.1", 0.85, 1, None),  # Colab's 0.20.1 notebook row, another model and release
])
def test_an_rtx_pro_6000_budget_leaves_the_drivers_reserve_out(model, version, gmu, tp, quant):
    facts = catalog_facts(model)
    if quant:  # the pre-quantized checkpoint: the catalog's shape at one byte a weight
        facts = replace(facts, quant_method=quant, weight_bytes=None)
    cfg = VllmConfig(max_model_len=4096, gpu_memory_utilization=gmu, tensor_parallel_size=tp)
    est = estimate_vllm(facts, RTX_PRO_NVML, cfg, version=version, gpu_name=RTX_PRO)
    assert est.requested == math.ceil(gmu * RTX_PRO_CUDA)
    assert est.extra["cuda_total_source"].startswith("vllm/v1/worker/gpu_worker.py@v0.27.0")
    as_cuda = estimate_vllm(facts, RTX_PRO_CUDA, cfg, version=version, gpu_name=RTX_PRO)
    assert (as_cuda.requested, as_cuda.kv_available) == (est.requested, est.kv_available)
    # 97,887 MiB - 95.01 GiB = 596.8 MiB the driver keeps: gmu x that is no longer in the pool (the card's name also
    # sets its interconnect, so at TP > 1 an unnamed card differs in non-torch memory too)
    unnamed = estimate_vllm(facts, RTX_PRO_NVML, cfg, version=version, gpu_name="")
    assert unnamed.requested - est.requested == math.ceil(gmu * RTX_PRO_NVML) - math.ceil(gmu * RTX_PRO_CUDA)
    if tp == 1:
        assert unnamed.kv_available - est.kv_available == unnamed.requested - est.requested


def test_the_row_reads_the_235b_logs_budget_to_the_gib():
    facts = replace(catalog_facts("Qwen/Qwen3-235B-A22B"), quant_method="fp8", weight_bytes=None)
    cfg = VllmConfig(max_model_len=32768, gpu_memory_utilization=0.9, tensor_parallel_size=4, max_num_seqs=32)
    est = estimate_vllm(facts, RTX_PRO_NVML, cfg, version="0.27.1", gpu_name=RTX_PRO)
    assert round(est.requested / GiB, 2) == 85.51  # 'Desired GPU memory utilization is (0.9, 85.51 GiB)'
