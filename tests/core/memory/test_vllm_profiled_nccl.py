"""NCCL memory vLLM's profile counts as non-torch on top of the release's VLLM_NON_TORCH row: the TP device group's
communicator made at the profile's logits gather (0.6.5-0.26.x) and NCCL's NVLS buffers on NVSwitch boards."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm, nvls_buffers
from gpustack_guard.core.memory.terms import NON_TORCH, budget_terms
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H100 = "NVIDIA H100 80GB HBM3"
NVLINK_ROW = 644_245_094  # VLLM_NON_TORCH "nvlink": 0.6 GiB
NCCL = 780_140_544  # NCCL_BUFFERS: 0.75 GiB less custom all-reduce's three 8 MiB buffers
MIB2 = 2 * 1024 * 1024  # NCCL 2.22+: 2 x NVLS_CHUNKSIZE (128 KiB) x NCCL_STEPS (8) per head and channel


def _estimate(model: str, tp: int, version: str, gpu: str = H100, pp: int = 1, **cfg) -> object:
    config = VllmConfig(tensor_parallel_size=tp, pipeline_parallel_size=pp, max_model_len=8192,
                        gpu_memory_utilization=0.9, **cfg)
    return estimate_vllm(catalog_facts(model), 81_559 * MiB, config, version=version, gpu_name=gpu)


@pytest.mark.parametrize("version,device_group", [
    ("0.6.4", 0),  # total - free after the profile: not read
    ("0.6.5", NCCL), ("0.7.1", NCCL),  # V0: torch.distributed.gather on the device group, after the snapshot
    ("0.9.2", NCCL),  # V1 (0.8.0-0.9.0 would add their own CUDA context to the figure: context_in_budget)
    ("0.10.2", NCCL),  # V1: all_gather_into_tensor on it; PyNccl's is comm_in_budget beside it before 0.11
    ("0.11.0", NCCL), ("0.19.0", NCCL), ("0.26.0", NCCL),
    ("0.27.0", 0), ("0.33.0", 0),  # CudaCommunicator.all_gather takes PyNccl's, made before the snapshot
])
@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B", "Qwen/Qwen2.5-72B"])
def test_the_device_groups_communicator_is_counted_where_the_profile_makes_it(model, version, device_group):
    est = _estimate(model, 2, version)
    # TP 2 has NVLS only under NCCL 2.28+ (0.20.0 on): 2 ranks x 16 channels x 2 MiB
    nvls = 2 * 16 * MIB2 if version in ("0.26.0", "0.27.0", "0.33.0") else 0
    assert est.extra["device_group_nccl"] == device_group and est.extra["nccl_nvls"] == nvls
    assert est.non_torch == NVLINK_ROW + device_group + nvls


def test_the_device_group_communicator_costs_its_size_in_kv_and_nothing_else():
    """0.26.0 against 0.27.0 (same sampler row, same graphs rule): the KV budget differs by the communicator."""
    before, after = _estimate("Qwen/Qwen2.5-72B", 2, "0.26.0"), _estimate("Qwen/Qwen2.5-72B", 2, "0.27.0")
    assert before.activation == after.activation and before.weights == after.weights
    assert after.kv_available - before.kv_available == NCCL


@pytest.mark.parametrize("gpu,tp,pp,cfg", [
    (H100, 1, 2, {}),  # PP only: a TP group of one gathers nothing
    ("NVIDIA L40S", 2, 1, {}),  # PCIe: the logged peerless figure holds NCCL already
    ("NVIDIA GeForce RTX 4090", 2, 1, {}),  # no P2P: the same
    (H100, 2, 1, {"nccl_p2p_disabled": True}),  # NCCL_P2P_DISABLE=1: booked as a peerless group
])
def test_groups_without_a_tp_gather_or_with_nccl_inside_their_figure_add_nothing(gpu, tp, pp, cfg):
    est = _estimate("meta-llama/Llama-3.1-8B", tp, "0.19.0", gpu=gpu, pp=pp, **cfg)
    assert est.extra["device_group_nccl"] == 0 and est.extra["nccl_nvls"] == 0
    assert est.non_torch == P.vllm_non_torch("0.19.0", "nvlink" if gpu == H100 and not cfg else "peerless").in_budget


def test_an_unnamed_gpu_is_taken_as_nvlink_connected_for_the_device_group():
    est = _estimate("meta-llama/Llama-3.1-8B", 2, "0.19.0", gpu="")
    assert est.extra["device_group_nccl"] == NCCL and est.extra["nccl_nvls"] == 0  # NVLS needs a named NVSwitch GPU


@pytest.mark.parametrize("gpu,tp,version,nvls", [
    # NCCL 2.27.x (torch 2.8-2.10): 16 channels on Hopper, 24 on Blackwell within a node; none at two ranks
    (H100, 4, "0.19.0", 4 * 16 * MIB2), (H100, 8, "0.19.0", 8 * 16 * MIB2), (H100, 3, "0.10.2", 3 * 16 * MIB2),
    ("NVIDIA H20", 8, "0.19.0", 8 * 16 * MIB2), ("NVIDIA B200", 4, "0.19.0", 4 * 24 * MIB2),
    (H100, 2, "0.19.0", 0),
    # NCCL 2.26.2 (torch 2.7): Blackwell 32 channels
    ("NVIDIA B200", 4, "0.10.0", 4 * 32 * MIB2), (H100, 4, "0.10.0", 4 * 16 * MIB2),
    # NCCL 2.28.9 (torch 2.11): "gpuCount < 2", so TP 2 too
    (H100, 2, "0.20.0", 2 * 16 * MIB2), ("NVIDIA H200", 2, "0.33.0", 2 * 16 * MIB2),
    # NCCL 2.21.5 (torch 2.5-2.6): 24 channels x 2 x (1 MiB + 2 MiB) at init
    (H100, 4, "0.8.5", 4 * 24 * 6 * 1024 * 1024),
    # NCCL 2.20 (torch 2.4): vllm#9699's own nvlsTotalSize for 8x H200
    ("NVIDIA H200", 8, "0.6.3", 2_415_919_104),
    # no NVSwitch multicast
    ("NVIDIA A100-SXM4-80GB", 8, "0.19.0", 0),  # Ampere
    ("NVIDIA GH200 480GB", 4, "0.20.0", 0),  # one superchip per node, or NVL2's direct pair
    ("NVIDIA H100 NVL", 4, "0.19.0", 0),  # NVLink bridges (an unknown interconnect)
    ("NVIDIA H100 PCIe", 4, "0.19.0", 0),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 4, "0.20.0", 0),  # capability 12.0, PCIe
    ("", 8, "0.19.0", 0),
])
def test_nvls_buffers_by_gpu_tp_size_and_the_nccl_of_the_release(gpu, tp, version, nvls):
    assert nvls_buffers(gpu, tp, version) == nvls
    assert nvls_buffers(gpu, tp, version, nvls_disabled=True) == 0


def test_each_release_row_names_the_nccl_its_torch_pins():
    assert [(row.since, row.nccl, row.min_ranks) for row in P.VLLM_NVLS] == [
        ("0.0.0", "2.20", 3), ("0.6.4", "2.21.5", 3), ("0.9.0", "2.26.2", 3), ("0.10.2", "2.27.3", 3),
        ("0.20.0", "2.28.9", 2)]
    assert P.vllm_nvls("0.19.1").nccl == "2.27.3" and P.vllm_nvls("0.34.0").nccl == "2.28.9"


@pytest.mark.parametrize("version,device_group,nvls", [
    ("0.10.0", NCCL, 4 * 16 * MIB2), ("0.19.0", NCCL, 4 * 16 * MIB2), ("0.33.0", 0, 4 * 16 * MIB2),
    ("0.6.6", NCCL, 4 * 24 * 6 * 1024 * 1024), ("0.6.4", 0, 4 * 24 * 6 * 1024 * 1024),
])
def test_nvls_is_one_communicators_worth_in_the_budget_on_every_release(version, device_group, nvls):
    """Qwen3-235B-A22B at TP 4 on H100 (vllm#21348) and Llama-3.1-70B at TP 4: NVLS on top of the release's row."""
    moe = _estimate("Qwen/Qwen3-235B-A22B", 4, version)
    dense = _estimate("meta-llama/Llama-3.1-70B", 4, version)
    assert moe.extra["nccl_nvls"] == dense.extra["nccl_nvls"] == nvls
    assert moe.non_torch == dense.non_torch == NVLINK_ROW + device_group + nvls


@pytest.mark.parametrize("value,disabled", [("0", True), (" 0 ", True), ("1", False), ("2", False), ("", False),
                                            ("off", False), (None, False)])
def test_nccl_nvls_enable_zero_in_the_env_turns_nvls_off(value, disabled):
    env = {} if value is None else {P.NCCL_NVLS_ENABLE_ENV: value}
    cfg = engine.vllm_config({"tensor-parallel-size": "4"}, Policy(), env=env)
    assert cfg.nccl_nvls_disabled is disabled
    est = estimate_vllm(catalog_facts("meta-llama/Llama-3.1-70B"), 81_559 * MiB, cfg, version="0.19.0", gpu_name=H100)
    assert est.extra["nccl_nvls"] == (0 if disabled else 4 * 16 * MIB2)
    assert P.NCCL_NVLS_ENABLE_ENV in engine.ENGINE_ENV  # the estimate's cache key sees it


def test_the_non_torch_term_names_each_added_rule_and_its_source():
    terms = {t.term: t for t in budget_terms(_estimate("meta-llama/Llama-3.1-70B", 4, "0.19.0"))}
    row = terms[NON_TORCH]
    assert row.rule == "non-torch-by-interconnect-nccl-outside+tp-device-group-nccl-in-profile+nccl-nvls-one-communicator"
    assert "base_device_communicator.py all_gather" in row.source and "nvls.cc@v2.27.3-1" in row.source
    assert row.value == NVLINK_ROW + NCCL + 4 * 16 * MIB2
    old = {t.term: t for t in budget_terms(_estimate("meta-llama/Llama-3.1-70B", 4, "0.10.2"))}[NON_TORCH]
    assert old.rule == "non-torch-by-interconnect+tp-device-group-nccl-in-profile+nccl-nvls-one-communicator"
    assert "@v0.7.1 and @v0.8.3" in old.source and "@v0.6.5" in old.source
    unread = {t.term: t for t in budget_terms(_estimate("meta-llama/Llama-3.1-70B", 4, "0.6.4"))}[NON_TORCH]
    assert unread.rule == "non-torch-by-interconnect+nccl-nvls-one-communicator"
    plain = {t.term: t for t in budget_terms(_estimate("meta-llama/Llama-3.1-70B", 4, "0.33.0",
                                                       gpu="NVIDIA L40S"))}[NON_TORCH]
    assert plain.rule == "non-torch-by-interconnect-nccl-outside"  # nothing added: the release's row as is
