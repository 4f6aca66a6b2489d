"""DP attention's term in SGLang's default mem_fraction_static (profiles.SGLANG_DP_ATTENTION_RESERVE), by release:
a flat 4 GiB in 0.4.7.post1-0.5.2 (server_args.py@0.4.8 l.310-311, @0.5.2 l.493-494), then 3 MiB per decode graph
batch and attention-DP rank, 4.5 above 300 batches, before the 10 GiB floor (server_args.py@0.5.3 l.650-658), not on
a disaggregation prefill instance from 0.5.15 (server_args.py@0.5.15 l.3647-3652)."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate, sglang_config
from gpustack_guard.core.memory.engines.sglang import dp_attention_reserve_mb
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H200_MB = 143771
H200 = (H200_MB * MiB, "NVIDIA H200")
H100 = (81559 * MiB, "NVIDIA H100 80GB HBM3")
DSV3 = catalog_facts("deepseek-ai/DeepSeek-V3")
QWEN3_MOE = catalog_facts("Qwen/Qwen3-235B-A22B")
DP8 = {"tp-size": "8", "dp-size": "8", "enable-dp-attention": None}


def fraction(facts, flags, version, gpu=H200) -> float:
    return estimate("sglang", facts, [gpu] * 8, flags, version, Policy(), {}).extra["mem_fraction_static"]


def test_rows_are_keyed_where_the_wheels_changed():
    assert [(r.since, r.flat_mb, r.mb_per_bs_rank, r.big_bs, r.big_mb_per_bs_rank, r.prefill_instance_exempt)
            for r in P.SGLANG_DP_ATTENTION_RESERVE] == [
        ("0.0.0", 0.0, 0.0, 0, 0.0, False), ("0.4.7.post1", 4096.0, 0.0, 0, 0.0, False),
        ("0.5.3", 0.0, 3.0, 300, 1.5, False), ("0.5.15", 0.0, 3.0, 300, 1.5, True)]


@pytest.mark.parametrize("flags,version,mb", [
    (DP8, "0.4.7", 0.0),  # the big-GPU rule: no DP term
    (DP8, "0.4.8", 4096.0),
    (DP8, "0.5.2", 4096.0),
    (DP8, "0.5.3", 512 * 8 * 4.5),  # H200 from TP 4: 512 decode graphs, over 300
    ({**DP8, "cuda-graph-max-bs": "256"}, "0.5.9", 256 * 8 * 3.0),
    ({**DP8, "dp-size": "4"}, "0.5.9", 512 * 4 * 4.5),
    ({**DP8, "disaggregation-mode": "prefill"}, "0.5.14", 512 * 8 * 4.5),  # 0.5.14 still counts it
    ({**DP8, "disaggregation-mode": "prefill"}, "0.5.15", 0.0),
    ({**DP8, "disaggregation-mode": "decode"}, "0.5.15", 512 * 8 * 4.5),
    ({"tp-size": "8", "dp-size": "8"}, "0.5.9", 0.0),  # plain data parallelism: no DP attention
    ({"tp-size": "8", "attn-dp-size": "8"}, "0.5.23", 512 * 8 * 4.5),  # 0.5.22's spelling
])
def test_the_term_by_release(flags, version, mb):
    assert dp_attention_reserve_mb(sglang_config(flags, version), 512 if "cuda-graph-max-bs" not in flags else 256,
                                   version) == mb


def test_deepseek_v3_dp8_on_h200_on_two_releases():
    # 0.4.8: (12 + 8 / 2) GiB for an H200 at TP 8, 4 GiB more under DP attention
    assert fraction(DSV3, {"tp-size": "8"}, "0.4.8") == round((H200_MB - 16 * 1024) / H200_MB, 3) == 0.886
    assert fraction(DSV3, DP8, "0.4.8") == round((H200_MB - 20 * 1024) / H200_MB, 3) == 0.858
    # 0.5.9: 512 + 8192 x 1.5 + 512 x 2 + 1024 = 14,848 MiB, and 512 x 8 x 4.5 = 18,432 MiB more (past the floor)
    assert fraction(DSV3, {"tp-size": "8"}, "0.5.9") == round((H200_MB - 14848) / H200_MB, 3) == 0.897
    assert fraction(DSV3, DP8, "0.5.9") == round((H200_MB - 14848 - 18432) / H200_MB, 3) == 0.769


def test_a_second_model_on_h100_where_the_term_stays_under_the_floor():
    # Qwen3-235B-A22B at TP 8 DP 2 on H100 with 160 graph batches: 512 + 12,288 + 320 + 1,024 + 160 x 2 x 3 = 15,104
    # MiB (0.5.3's H100 tier); with 64 batches the DP term (384 MiB) leaves the reserve under the 10 GiB floor
    flags = {**DP8, "dp-size": "2", "cuda-graph-max-bs": "160"}
    assert fraction(QWEN3_MOE, flags, "0.5.5", H100) == round((81559 - 14144 - 960) / 81559, 3)
    small = {**DP8, "dp-size": "2", "cuda-graph-max-bs": "64", "chunked-prefill-size": "2048"}
    assert fraction(QWEN3_MOE, small, "0.5.5", H100) == round((81559 - 10240) / 81559, 3)


# DP attention and the prefill CUDA graphs (profiles.SGLANG_DP_ATTENTION_PREFILL_GRAPHS): off under every backend to
# 0.5.13 and in 0.5.15-0.5.16 (server_args.py@0.5.16 l.3700 and l.3799), only under tc_piecewise (0.5.14's default) in
# 0.5.14 and 0.5.17-0.5.21 (the breakable default
# lost the rule: server_args.py@0.5.17 l.4387, arg_groups/cuda_graph_hook.py@0.5.21 l.189), never from 0.5.22.
def test_dp_prefill_rows_are_keyed_where_the_wheels_changed():
    assert [(r.since, r.every_backend, sorted(r.backends), r.default_backend)
            for r in P.SGLANG_DP_ATTENTION_PREFILL_GRAPHS] == [
        ("0.0.0", True, [], ""), ("0.5.14", False, ["tc_piecewise"], "tc_piecewise"), ("0.5.15", True, [], "breakable"),
        ("0.5.17", False, ["tc_piecewise"], "breakable"), ("0.5.22", False, [], "breakable")]


@pytest.mark.parametrize("flags,version,off", [
    (DP8, "0.5.10", True),
    (DP8, "0.5.13", True),
    (DP8, "0.5.14", True),  # the tc_piecewise default
    ({**DP8, "cuda-graph-backend-prefill": "breakable"}, "0.5.14", False),
    (DP8, "0.5.15", True),
    (DP8, "0.5.16", True),
    ({**DP8, "cuda-graph-backend-prefill": "breakable"}, "0.5.16", True),
    (DP8, "0.5.17", False),  # the breakable default keeps them
    ({**DP8, "cuda-graph-backend-prefill": "tc_piecewise"}, "0.5.17", True),
    ({**DP8, "cuda-graph-backend-prefill": "TC_PIECEWISE"}, "0.5.21", True),
    (DP8, "0.5.21", False),
    ({**DP8, "cuda-graph-backend-prefill": "tc_piecewise"}, "0.5.22", False),
    (DP8, "0.5.23", False),
    ({"tp-size": "8", "dp-size": "8"}, "0.5.10", False),  # --dp-size alone is not DP attention
])
def test_dp_attention_turns_prefill_graphs_off_by_release(flags, version, off):
    assert sglang_config(flags, version).prefill_graphs_off is off


def test_dp_attention_keeps_the_prefill_graph_reserve_from_0_5_17():
    # a second model (Qwen3 MoE, not MLA) on H100: from 0.5.17 the flags cost the prefill-graph reserve, 58 capture
    # sizes of 8 MiB (464 MiB), and the default fraction drops by it
    def figures(version):
        est = estimate("sglang", QWEN3_MOE, [H100] * 8, DP8, version, Policy(), {})
        return est.extra.get("prefill_graph_reserve"), est.extra["mem_fraction_static"]
    assert [figures(v) for v in ("0.5.16", "0.5.17", "0.5.23")] == [
        (0, 0.592), (464 * MiB, 0.586), (464 * MiB, 0.586)]
