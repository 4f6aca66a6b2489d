"""vLLM's default CUDA-graph capture sizes per release and GPU (profiles.VLLM_CAPTURE_DEFAULTS, read in
config/vllm.py _set_cudagraph_sizes of every wheel 0.19.0-0.34.0): the batched-tokens size from 0.20.1, the 1024
ceiling on compute capability 10.x from 0.28.0, max_num_seqs from 0.31.0. Each change is checked on two releases
either side, with exact lists, graph counts and vLLM's own graph-memory estimate on two models."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import (
    CaptureDefaults,
    GraphPlan,
    VllmConfig,
    capture_defaults,
    capture_sizes,
    decode_grid,
    estimate_vllm,
    estimated_graph_memory,
    graph_plan,
    prefill_grid,
)
from gpustack_guard.core.units import MiB

H100 = "NVIDIA H100 80GB HBM3"
B200 = "NVIDIA B200"
H100_TOTAL, B200_TOTAL = 81559 * MiB, 183359 * MiB


def shared_list(largest: int) -> list[int]:
    """0.11.1's list: 1, 2, 4, every 8 below 256, every 16 from 256 to the largest size."""
    return [s for s in (1, 2, 4) if s <= largest] + list(range(8, min(largest + 1, 256), 8)) + \
        list(range(256, largest + 1, 16))


def sizes(version: str, gpu: str, seqs: int, batched: int) -> list[int]:
    return capture_sizes("v1", seqs, batched, defaults=capture_defaults(version, gpu))


def plan(version: str, gpu: str, seqs: int, batched: int, cfg: VllmConfig | None = None) -> GraphPlan:
    return graph_plan(P.vllm_profile(version), cfg or VllmConfig(), seqs, batched,
                      defaults=capture_defaults(version, gpu))


def test_each_release_reads_its_row():
    def sizes_part(version, gpu):  # the no-draft fields; the draft's are VLLM_SPEC_CAPTURE's (below)
        return capture_defaults(version, gpu)[:6]

    assert sizes_part("0.19.0", H100) == sizes_part("0.20.0", B200) == CaptureDefaults(512, False, False)[:6]
    assert sizes_part("0.20.1", H100) == sizes_part("0.27.1", B200) == CaptureDefaults(512, True, False)[:6]
    assert sizes_part("0.28.0", H100) == sizes_part("0.30.0", H100) == CaptureDefaults(512, True, False)[:6]
    assert sizes_part("0.28.0", B200) == sizes_part("0.30.0", "NVIDIA GB200") == \
        CaptureDefaults(1024, True, False)[:6]
    assert sizes_part("0.31.0", B200) == sizes_part("0.33.0", "NVIDIA B300") == \
        CaptureDefaults(1024, True, True)[:6]
    # the last field: LoRA captures each size with and without adapters (VLLM_LORA_GRAPH_ROWS, from 0.11.2)
    assert capture_defaults("0.34.0", B200) == \
        CaptureDefaults(1024, True, True, 8192, True, 8192, True, True, False, True)
    assert capture_defaults("0.34.0", H100) == CaptureDefaults(512, True, True, 0, True, 8192, True, True, False, True)
    assert [capture_defaults(v, H100).lora_specialized for v in ("0.11.0", "0.11.2", "0.14.0")] == [False, True, True]
    # the draft's fields: (largest by q, uniform decode sizes, MRV1 rounding)
    assert [capture_defaults(v, H100)[6:9] for v in ("0.11.0", "0.11.1", "0.14.0", "0.28.0", "0.29.0", "0.33.0")] == \
        [(False, False, False), (False, False, True), (True, False, True), (True, False, True), (True, True, True),
         (True, True, True)]
    # the family is the major: 12.x (RTX 50, RTX PRO, GB10) and names gsg does not know keep 512
    assert capture_defaults("0.34.0", "NVIDIA RTX PRO 6000 Blackwell").largest == 512
    assert capture_defaults("0.34.0", "Some Future GPU").largest == 512
    assert capture_defaults(None, B200) == CaptureDefaults()  # the assumed 0.11.0


@pytest.mark.parametrize("version,appended", [("0.19.0", False), ("0.20.0", False), ("0.20.1", True),
                                              ("0.22.0", True)])
def test_an_off_stride_batched_token_count_is_captured_from_0_20_1(version, appended):
    # 300 tokens cut the largest size (min(2 x 256, 512, 300)): the list ends at 288, 0.20.1 adds 300 itself
    expected = shared_list(300) + ([300] if appended else [])
    assert sizes(version, H100, 256, 300) == expected
    assert len(expected) == (38 if appended else 37)
    assert plan(version, H100, 256, 300) == GraphPlan("FULL_AND_PIECEWISE", len(expected), 35, expected[-1])


@pytest.mark.parametrize("version", ["0.20.1", "0.27.1"])
def test_the_batched_tokens_are_not_appended_above_the_largest_size_or_on_stride(version):
    assert sizes(version, H100, 256, 8192) == shared_list(512)        # above the ceiling: not captured
    assert sizes(version, H100, 64, 8192) == shared_list(128)         # above 2 x max_num_seqs: not captured
    assert sizes(version, H100, 256, 272) == shared_list(272)         # on the stride already
    # --max-cudagraph-capture-size reads the same append; an explicit size list does not
    cfg = VllmConfig(max_cudagraph_capture_size=400)
    assert plan(version, H100, 256, 300, cfg).piecewise == 38
    cfg = VllmConfig(cudagraph_capture_sizes=(1, 2, 4, 8))
    assert plan(version, H100, 256, 300, cfg) == GraphPlan("FULL_AND_PIECEWISE", 4, 4, 8)


@pytest.mark.parametrize("version,b200_largest", [("0.26.0", 512), ("0.27.1", 512), ("0.28.0", 1024),
                                                  ("0.30.0", 1024)])
def test_sm100_captures_up_to_1024_from_0_28_0(version, b200_largest):
    assert sizes(version, H100, 1024, 16384) == shared_list(512)
    assert sizes(version, B200, 1024, 16384) == shared_list(b200_largest)
    count = 51 if b200_largest == 512 else 83  # 3 + 31 + 17 / 3 + 31 + 49
    assert plan(version, B200, 1024, 16384) == GraphPlan("FULL_AND_PIECEWISE", count, count, b200_largest)
    assert plan(version, H100, 1024, 16384) == GraphPlan("FULL_AND_PIECEWISE", 51, 51, 512)


@pytest.mark.parametrize("version,appended", [("0.29.0", False), ("0.30.0", False), ("0.31.0", True),
                                              ("0.33.0", True), ("0.34.0", True)])
def test_an_off_stride_max_num_seqs_is_captured_from_0_31_0(version, appended):
    # 100 sequences: sizes to 200, 100 off the stride of 8
    expected = sorted(shared_list(200) + ([100] if appended else []))
    assert sizes(version, H100, 100, 8192) == expected
    assert plan(version, H100, 100, 8192) == GraphPlan("FULL_AND_PIECEWISE", 28 + appended, 15 + appended, 200)
    if version == "0.34.0":  # the B200 takes 0.34.0's split grids (below)
        return
    # on a B200: 600 sequences, sizes to 1024 (the 0.28.0 ceiling); 600 is off the stride of 16
    b200 = plan(version, B200, 600, 16384)
    assert b200 == GraphPlan("FULL_AND_PIECEWISE", 83 + appended, 56 + appended, 1024)


def test_max_num_seqs_is_kept_only_within_the_ceiling_and_the_batched_tokens():
    assert 100 not in sizes("0.31.0", H100, 100, 96)        # above max_num_batched_tokens
    assert 600 not in sizes("0.31.0", H100, 600, 8192)      # above the 512 ceiling on an H100
    assert 600 in sizes("0.31.0", B200, 600, 8192)          # within 1024 on a B200
    # --max-cudagraph-capture-size turns the append off (uniform_decode_sizes is filled on the default path only)
    assert plan("0.31.0", H100, 100, 8192, VllmConfig(max_cudagraph_capture_size=200)).piecewise == 28


def _graph_terms(model: str):
    """The model's facts, layers, FFN width, hidden size and vLLM's estimate of one further graph's bytes."""
    facts = catalog_facts(model)
    layers, width, hidden = facts.num_hidden_layers, facts.intermediate_size, facts.hidden_size
    assert layers and width and hidden
    return facts, layers, width, hidden, layers * (P.GRAPH_ESTIMATE_LAYER_BYTES + P.GRAPH_ESTIMATE_BYTES_PER_WIDTH * width)


@pytest.mark.parametrize("model", ["Qwen/Qwen2.5-7B", "Qwen/Qwen3-0.6B"])
def test_graph_bytes_follow_the_counts_on_two_models(model):
    """vLLM's estimate (first capture at the largest size plus every further graph) on the plans above."""
    facts, layers, width, hidden, per_graph = _graph_terms(model)

    def expected(piecewise: int, full: int, largest: int) -> int:
        return per_graph + largest * (2 * width + 4 * hidden) * 2 + (piecewise - 1 + full - 1) * per_graph

    for version, gpu, seqs, batched, counts in [
        ("0.20.0", H100, 256, 300, (37, 35, 288)), ("0.20.1", H100, 256, 300, (38, 35, 300)),
        ("0.27.1", B200, 1024, 16384, (51, 51, 512)), ("0.28.0", B200, 1024, 16384, (83, 83, 1024)),
        ("0.30.0", H100, 100, 8192, (28, 15, 200)), ("0.31.0", H100, 100, 8192, (29, 16, 200)),
    ]:
        got = estimated_graph_memory(facts, 1, plan(version, gpu, seqs, batched), layers)
        assert got == expected(*counts), (version, gpu)
    if model == "Qwen/Qwen2.5-7B":  # 28 layers, 18,944 wide, 3,584 hidden: 6,823,936 B per graph
        assert per_graph == 6_823_936
        # 0.28.0 on a B200: first capture at 1024 (106,954,752 B of intermediates) plus 164 further graphs
        assert estimated_graph_memory(facts, 1, plan("0.28.0", B200, 1024, 16384), layers) == 1_232_904_192


def test_the_estimate_books_the_b200_s_wider_capture_inside_the_budget():
    """End to end on 0.28.0 defaults (B200: 16,384 tokens and 1,024 sequences; H100: 8,192 and 1,024): the B200
    captures 83 + 83 graphs to 1024, the H100 51 + 51 to 512; 0.27.1 on the B200 is still 51 + 51."""
    facts = catalog_facts("Qwen/Qwen3-0.6B")
    cfg = VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192)
    b200 = estimate_vllm(facts, B200_TOTAL, cfg, version="0.28.0", gpu_name=B200)
    older = estimate_vllm(facts, B200_TOTAL, cfg, version="0.27.1", gpu_name=B200)
    h100 = estimate_vllm(facts, H100_TOTAL, cfg, version="0.28.0", gpu_name=H100)
    assert b200.extra["cuda_graph_counts"] == {"piecewise": 83, "full": 83}
    assert older.extra["cuda_graph_counts"] == h100.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 51}
    layers = facts.num_hidden_layers
    assert layers
    assert b200.cuda_graphs == estimated_graph_memory(facts, 1, GraphPlan("FULL_AND_PIECEWISE", 83, 83, 1024), layers)
    assert older.cuda_graphs == h100.cuda_graphs == estimated_graph_memory(
        facts, 1, GraphPlan("FULL_AND_PIECEWISE", 51, 51, 512), layers)


def test_the_0_34_sm100_grids():
    """config/compilation.py@v0.34.0's docstrings: 54 prefill sizes at 8192 tokens, 64 decode sizes at 1024."""
    prefill = prefill_grid(8192)
    assert len(prefill) == 54 and prefill[:12] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80]
    assert prefill[-4:] == [7168, 7424, 7680, 8192] and prefill_grid(300)[-3:] == [224, 256, 300]
    decode = decode_grid(1024)
    assert len(decode) == 64 and decode[:9] == [1, 2, 3, 4, 5, 6, 8, 10, 12] and decode[-3:] == [960, 992, 1024]
    # interactivity: every size to 32 (7 of them, 1 to 32, already on the grid)
    assert len(prefill_grid(8192, dense_head=True)) == 54 + 32 - 7


@pytest.mark.parametrize("version,split", [("0.32.0", False), ("0.33.0", False), ("0.34.0", True)])
def test_0_34_splits_prefill_and_decode_graphs_on_sm100_only(version, split):
    """0.34.0 is the newest wheel on the mirror: two releases before it, one from it. On a B200 at its defaults
    (16,384 tokens, 1,024 sequences) the graphs become 54 prefill (PIECEWISE, to 8,192 tokens) and 64 decode
    (FULL); an H100 keeps the shared list; a capture setting keeps it on the B200 too."""
    expected = GraphPlan("FULL_AND_PIECEWISE", 54, 64, 8192) if split else GraphPlan("FULL_AND_PIECEWISE", 83, 83, 1024)
    assert plan(version, B200, 1024, 16384) == expected
    assert plan(version, H100, 1024, 8192) == GraphPlan("FULL_AND_PIECEWISE", 51, 51, 512)
    assert plan(version, B200, 1024, 16384, VllmConfig(max_cudagraph_capture_size=512)) == \
        GraphPlan("FULL_AND_PIECEWISE", 51, 51, 512)
    # 256 sequences, 2,048 tokens: prefill to 2,048 (31 sizes), decode to 256 (37 sizes)
    small = GraphPlan("FULL_AND_PIECEWISE", 31, 37, 2048) if split else GraphPlan("FULL_AND_PIECEWISE", 51, 35, 512)
    assert plan(version, B200, 256, 2048) == small
    if split:  # the modes pick the sets; 300 sequences over 256 tokens: decode up to 256 requests
        assert plan(version, B200, 1024, 16384, VllmConfig(cudagraph_mode="FULL_DECODE_ONLY")) == \
            GraphPlan("FULL_DECODE_ONLY", 0, 64, 1024)
        assert plan(version, B200, 1024, 16384, VllmConfig(cudagraph_mode="PIECEWISE")) == \
            GraphPlan("PIECEWISE", 54, 0, 8192)
        assert plan(version, B200, 300, 256) == GraphPlan("FULL_AND_PIECEWISE", len(prefill_grid(256)),
                                                          len([n for n in decode_grid(300) if n < 256]) + 1, 256)


@pytest.mark.parametrize("model", ["Qwen/Qwen2.5-7B", "Qwen/Qwen3-0.6B"])
def test_0_34_b200_graph_bytes(model):
    """The in-budget estimate on the split plan: the first capture at 8,192 tokens, 53 + 63 further graphs."""
    facts, layers, width, hidden, per_graph = _graph_terms(model)
    got = estimated_graph_memory(facts, 1, plan("0.34.0", B200, 1024, 16384), layers)
    assert got == per_graph + 8192 * (2 * width + 4 * hidden) * 2 + (53 + 63) * per_graph
    if model == "Qwen/Qwen2.5-7B":  # 855,638,016 B of intermediates at 8,192 tokens
        assert got == 6_823_936 * 117 + 855_638_016 == 1_654_038_528
