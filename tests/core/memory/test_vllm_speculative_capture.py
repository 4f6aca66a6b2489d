"""vLLM's CUDA-graph capture with a draft (profiles.VLLM_SPEC_CAPTURE): the largest size by the query length
q = 1 + num_speculative_tokens from 0.14.0, 0.29.0's uniform decode sizes n x q, MRV1's rounding of every size
up to a multiple of q, the dispatcher's FULL decode range [q, q x max_num_seqs], 0.34.0's request-keyed decode."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import (
    GraphPlan,
    VllmConfig,
    capture_defaults,
    capture_sizes,
    estimate_vllm,
    graph_plan,
    request_counts,
    rounded_to_query_len,
)
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H100, B200 = "NVIDIA H100 80GB HBM3", "NVIDIA B200"


def plan(version: str, gpu: str, seqs: int, batched: int, tokens: int) -> GraphPlan:
    return graph_plan(P.vllm_profile(version), VllmConfig(num_speculative_tokens=tokens), seqs, batched,
                      defaults=capture_defaults(version, gpu))


def fp(piecewise: int, full: int, largest: int) -> GraphPlan:
    return GraphPlan("FULL_AND_PIECEWISE", piecewise, full, largest)


# 64 sequences on an H100 at 8,192 batched tokens. Without a draft: 1, 2, 4, 8 ... 128 (19 sizes), decode to 64.
@pytest.mark.parametrize("version,q3,q4", [
    # 0.11.1: no draft term in the largest size (128); MRV1 rounds to multiples of q within it: 17 sizes each
    # (q 3: 3, 6, 9, 18, 24, ... 120, 128 -> 129 dropped; q 4: 4, 8, ... 128), all within [q, q x 64]
    ("0.11.1", fp(17, 17, 120), fp(17, 17, 128)),
    # 0.14.0-0.28.0: the largest is min(64 x q x 2, 512): 384 (43 sizes, 42 after rounding to 3) or 512 (51, 49
    # after rounding to 4); FULL decode graphs from q to q x 64 tokens: 26 and 33
    ("0.18.0", fp(42, 26, 384), fp(49, 33, 512)),
    ("0.28.0", fp(42, 26, 384), fp(49, 33, 512)),
    # 0.29.0-0.33.0: n x q for n on the request grid (1, 2, 4, 8 ... 64) added before the rounding: q 3 adds 12
    # (3 x 4) after rounding; q 4's products are on the list already
    ("0.29.0", fp(43, 27, 384), fp(49, 33, 512)),
    ("0.33.0", fp(43, 27, 384), fp(49, 33, 512)),
    # 0.34.0: no rounding; decode graphs keyed by requests (ceil(size / q), at most 64) at q tokens each
    ("0.34.0", fp(46, 27, 384), fp(51, 33, 512)),
])
def test_graph_plans_follow_the_query_length_by_release(version, q3, q4):
    assert plan(version, H100, 64, 8192, 0) == fp(19, 11, 128)
    assert plan(version, H100, 64, 8192, 2) == q3
    assert plan(version, H100, 64, 8192, 3) == q4


def test_the_rules_pieces():
    assert request_counts(64) == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert request_counts(300)[-4:] == [256, 272, 288, 300]
    assert rounded_to_query_len([1, 2, 4, 8, 16], 3) == [3, 6, 9]  # 16 -> 18 is above the largest, dropped
    assert rounded_to_query_len([1, 2], 5) == []  # nothing fits: vLLM refuses ("No valid cudagraph sizes")
    assert rounded_to_query_len([1, 2, 4], 4) == [4]
    # 60 sequences: n x 3 for n on the request grid (3, 6, 12, ... 180), within min(60 x 3 x 2, 512) = 360; the
    # off-stride 60 itself is appended only without a draft (0.31.0+)
    with_draft = capture_sizes("v1", 60, 8192, 0, capture_defaults("0.31.0", H100), 3)
    assert {3, 6, 12, 180} <= set(with_draft) and 60 not in with_draft and max(with_draft) == 352
    assert 60 in capture_sizes("v1", 60, 8192, 0, capture_defaults("0.31.0", H100), 1)


def test_b200_0_34_grids_hold_the_draft_within_their_token_budget():
    # the decode grid to 1,024 requests at 4 tokens stays within 8,192 tokens; at 9 tokens only 910 requests fit:
    # the grid's 60 counts below 910 and the first above (928), captured at 910
    assert plan("0.34.0", B200, 1024, 16384, 3) == fp(54, 64, 8192)
    assert plan("0.34.0", B200, 1024, 16384, 8) == fp(54, 61, 8192)


@pytest.mark.parametrize("model,plain,drafted", [
    # 0.18.0 (V1 runner, graphs measured outside the budget): 19 + 11 graphs -> 49 + 33 at q 4
    ("Qwen/Qwen2.5-7B", 211_263_488, 606_216_192),
    ("Qwen/Qwen3-0.6B", 97_411_072, 275_243_008),
])
def test_the_graph_estimate_with_a_draft_on_two_models(model, plain, drafted):
    def graphs(flags: dict) -> tuple[int, dict]:
        cfg = engine.vllm_config({"max-model-len": "8192", "max-num-seqs": "64", **flags}, Policy(), version="0.18.0")
        est = estimate_vllm(catalog_facts(model), 81_559 * MiB, cfg, version="0.18.0", gpu_name=H100)
        return est.cuda_graphs, est.extra["cuda_graph_counts"]

    assert graphs({}) == (plain, {"piecewise": 19, "full": 11})
    eagle = '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 3}'
    assert graphs({"speculative-config": eagle}) == (drafted, {"piecewise": 49, "full": 33})
    # n-gram lookup drafts from the prompt but verifies as many tokens: the same graphs
    assert graphs({"speculative-config": '{"method": "ngram", "num_speculative_tokens": 3}'})[0] == drafted


def test_the_v2_runner_does_not_take_mrv1_s_rounding():
    # 0.29.0's default runner is V2 (profiles.VLLM_RUNNER_ROWS): the sizes stay unrounded, 51 at q 4
    cfg = engine.vllm_config({"max-model-len": "8192", "max-num-seqs": "64",
                              "speculative-config": '{"method": "mtp", "num_speculative_tokens": 3}'},
                             Policy(), version="0.29.0")
    est = estimate_vllm(catalog_facts("Qwen/Qwen3-0.6B"), 81_559 * MiB, cfg, version="0.29.0", gpu_name=H100)
    assert est.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 33}
    assert est.extra["cuda_graph_query_len"] == 4
    assert "config/vllm.py@v0.29.0" in est.extra["cuda_graph_query_len_source"]


@pytest.mark.parametrize("flags,message", [
    ({"speculative-config": '{"num_speculative_tokens": 0}'}, "num_speculative_tokens is not a whole number"),
    ({"speculative-config": '{"num_speculative_tokens": "x"}'}, "num_speculative_tokens is not a whole number"),
    ({"num-speculative-tokens": "-2"}, "num_speculative_tokens is not a whole number"),
    ({"speculative-config": "{not json"}, "not a JSON object"),
    ({"speculative-config": '{"method": "eagle3", "model": "a/b"}'}, None),  # no width given: vLLM's default
])
def test_a_bad_draft_width_is_one_line(flags, message):
    if message is None:
        assert engine.vllm_config(flags, Policy(), version="0.18.0").num_speculative_tokens == 0
        return
    with pytest.raises(EF.FlagValueError, match=message):
        engine.vllm_config(flags, Policy(), version="0.18.0")
