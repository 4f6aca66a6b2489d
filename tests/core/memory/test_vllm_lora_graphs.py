"""vLLM's CUDA graphs under --enable-lora (profiles.VLLM_LORA_GRAPH_ROWS): from 0.11.2 every capture size is
captured once per LoRA case, as the capture bars of two public LoRA start-ups count them: 102 PIECEWISE and 70 FULL
graphs for the 51 + 35 sizes of a 256-sequence deployment (Mistral-7B with one rank-16 slot under 0.14.0,
tests/fixtures/logs/vllm/v1-0.14.0-mistral-7b-lora-rtx-pro-6000-gmu095-4k-ptx-error.log; vllm PR #40044's LoRA MoE
run on an April 2026 main build)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import VllmConfig, capture_defaults, estimate_vllm, graph_plan
from gpustack_guard.core.memory.lora import LoraRequest
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

H100 = "NVIDIA H100 80GB HBM3"
MISTRAL = catalog_facts("mistralai/Mistral-7B-Instruct-v0.3")


def plan(version: str, cfg: VllmConfig):
    return graph_plan(P.vllm_profile(version), cfg, 256, 8192, defaults=capture_defaults(version, H100))


@pytest.mark.parametrize("version", ["0.14.0", "0.19.0"])
def test_lora_captures_every_size_with_and_without_adapters(version):
    plain = plan(version, VllmConfig())
    lora = plan(version, VllmConfig(lora=LoraRequest(slots=1, rank=16)))
    assert (plain.piecewise, plain.full) == (51, 35)
    assert (lora.piecewise, lora.full, lora.largest) == (102, 70, plain.largest)
    # max_loras does not add cases without --specialize-active-lora: [0, max_loras + 1]
    assert plan(version, VllmConfig(lora=LoraRequest(slots=8, rank=16))).graphs == 172


def test_before_0_11_2_lora_graphs_are_captured_once():
    assert plan("0.11.0", VllmConfig(lora=LoraRequest(slots=1, rank=16))).graphs == \
        plan("0.11.0", VllmConfig()).graphs


def test_specialize_settings_change_the_cases():
    off = VllmConfig(lora=LoraRequest(slots=1, rank=16), cudagraph_specialize_lora=False)
    assert plan("0.14.0", off).graphs == 86  # lora_cases [True]: one graph per size
    # --specialize-active-lora with 4 slots: no adapter, then 1, 2, 4 and 5 active adapters
    active = VllmConfig(lora=LoraRequest(slots=4, rank=16, specialize_active=True))
    assert plan("0.19.0", active).graphs == 5 * 86


def test_flags_and_the_compilation_config_are_read():
    cfg = vllm_config({"enable-lora": None, "max-loras": "4", "specialize-active-lora": None,
                       "compilation-config": '{"cudagraph_specialize_lora": false}'}, Policy(), version="0.19.0")
    assert cfg.lora is not None and cfg.lora.specialize_active and cfg.cudagraph_specialize_lora is False
    assert vllm_config({"enable-lora": None}, Policy()).cudagraph_specialize_lora is None


def test_the_graph_memory_counts_the_lora_cases():
    base = VllmConfig(max_model_len=4096, max_num_seqs=256, gpu_memory_utilization=0.95)
    plain = estimate_vllm(MISTRAL, 96 * GiB, base, version="0.14.0", gpu_name=H100)
    lora = estimate_vllm(MISTRAL, 96 * GiB, replace(base, lora=LoraRequest(slots=1, rank=16)), version="0.14.0",
                         gpu_name=H100)
    assert lora.extra["cuda_graph_counts"] == {"piecewise": 102, "full": 70}
    assert lora.cuda_graphs == 2 * plain.cuda_graphs  # the measured cost per layer and graph, twice the graphs
