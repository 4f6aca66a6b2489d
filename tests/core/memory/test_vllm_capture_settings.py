"""A deployment's CUDA-graph capture settings, read as each vLLM release reads them (profiles.
CAPTURE_SETTINGS_RULES): --cuda-graph-sizes (whose meaning changed at 0.11.1), --cudagraph-capture-sizes,
--max-cudagraph-capture-size and the compilation config's cudagraph_mode / cudagraph_capture_sizes /
max_cudagraph_capture_size. They change how many graphs are captured, so the graph term and the warm-up's room."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm, graph_plan
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import KiB

H100 = 81559 * 1024**2


def plan(version: str, seqs: int = 256, batched: int = 2048, **settings):
    got = graph_plan(P.vllm_profile(version), VllmConfig(**settings), seqs, batched)
    return got.mode, got.piecewise, got.full, got.largest


@pytest.mark.parametrize("mode,expected", [
    (None, ("FULL_AND_PIECEWISE", 51, 35, 512)),      # the 0.11+ default: a FULL graph per size up to 256 seqs
    ("FULL_AND_PIECEWISE", ("FULL_AND_PIECEWISE", 51, 35, 512)),
    ("PIECEWISE", ("PIECEWISE", 51, 0, 512)),
    ("FULL", ("FULL", 0, 51, 512)),                   # mixed batches in one FULL graph per size, no decode set
    ("FULL_DECODE_ONLY", ("FULL_DECODE_ONLY", 0, 35, 256)),  # decode sizes up to max_num_seqs only
    ("NONE", ("NONE", 0, 0, 0)),
])
def test_each_cudagraph_mode_captures_what_the_dispatcher_keys(mode, expected):
    assert plan("0.16.0", cudagraph_mode=mode) == expected


def test_0_10_1_reads_the_mode_and_its_default_is_piecewise():
    assert plan("0.10.1", seqs=1024, batched=8192) == ("PIECEWISE", 67, 0, 512)
    assert plan("0.10.1", seqs=1024, batched=8192, cudagraph_mode="FULL_AND_PIECEWISE") == \
        ("FULL_AND_PIECEWISE", 67, 67, 512)


def test_releases_before_0_10_1_and_v0_ignore_the_capture_settings():
    for version in ("0.9.2", "0.6.4"):
        default = plan(version)
        assert plan(version, cudagraph_mode="NONE", cudagraph_capture_sizes=(8,), cuda_graph_sizes=(16,),
                    max_cudagraph_capture_size=64) == default


def test_cuda_graph_sizes_is_the_largest_size_until_0_11_0_and_the_list_from_0_11_1():
    # 0.11.0: one value N -> [1, 2, 4] + range(8, N + 1, 8), cut to the batched tokens
    assert plan("0.11.0", cuda_graph_sizes=(64,)) == ("FULL_AND_PIECEWISE", 11, 11, 64)
    assert plan("0.11.0", batched=32, cuda_graph_sizes=(64,)) == ("FULL_AND_PIECEWISE", 7, 7, 32)
    # several values: that list, sorted, de-duplicated and cut to the batched tokens
    assert plan("0.11.0", batched=100, cuda_graph_sizes=(96, 1, 300, 8, 8)) == ("FULL_AND_PIECEWISE", 3, 3, 96)
    # 0.11.1: a deprecated alias of --cudagraph-capture-sizes, so `64` is one size
    assert plan("0.11.1", cuda_graph_sizes=(64,)) == ("FULL_AND_PIECEWISE", 1, 1, 64)


def test_an_explicit_list_is_cut_to_the_batched_tokens_from_0_11_1_only():
    assert plan("0.11.0", batched=64, cudagraph_capture_sizes=(1, 128, 32)) == ("FULL_AND_PIECEWISE", 3, 3, 128)
    assert plan("0.19.0", batched=64, cudagraph_capture_sizes=(1, 128, 32)) == ("FULL_AND_PIECEWISE", 2, 2, 32)
    # FULL decode graphs stop at max_num_seqs whatever the list
    assert plan("0.19.0", seqs=16, cudagraph_capture_sizes=(1, 16, 17, 512)) == ("FULL_AND_PIECEWISE", 4, 2, 512)


def test_max_cudagraph_capture_size_from_0_11_1():
    # above the default 512, as the gpt-oss recipe's --max-cudagraph-capture-size 2048: 3 + 31 + 113 sizes
    assert plan("0.19.0", seqs=1024, batched=8192, max_cudagraph_capture_size=2048) == \
        ("FULL_AND_PIECEWISE", 147, 83, 2048)
    # still cut to the batched tokens; below 8 only the small sizes
    assert plan("0.19.0", seqs=1024, batched=1000, max_cudagraph_capture_size=2048)[1:] == (3 + 31 + 47, 81, 992)
    assert plan("0.19.0", max_cudagraph_capture_size=4) == ("FULL_AND_PIECEWISE", 3, 3, 4)
    # 0.11.0 had no such setting
    assert plan("0.11.0", seqs=1024, batched=8192, max_cudagraph_capture_size=2048) == \
        ("FULL_AND_PIECEWISE", 67, 67, 512)


def test_the_graph_term_follows_the_settings_on_both_rules():
    facts = catalog_facts("Qwen/Qwen2.5-7B")  # 28 layers, intermediate 18,944, hidden 3,584
    base = dict(gpu_memory_utilization=0.9, max_model_len=4096, max_num_seqs=256, max_num_batched_tokens=2048)
    # 0.16 (the flat rule: 384 KiB per layer and graph): PIECEWISE only drops the 35 FULL graphs
    piecewise = estimate_vllm(facts, H100, VllmConfig(**base, cudagraph_mode="PIECEWISE"), version="0.16.0")
    assert piecewise.cuda_graphs == 51 * 28 * 384 * KiB
    assert piecewise.extra["cuda_graph_mode"] == "PIECEWISE"
    assert piecewise.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 0}
    # 0.20 (vLLM's estimate inside the budget): FULL_DECODE_ONLY's first capture is at its largest size, 256
    decode = estimate_vllm(facts, H100, VllmConfig(**base, cudagraph_mode="FULL_DECODE_ONLY"), version="0.20.0")
    per_graph = 28 * (90 * KiB + 8 * 18_944)
    assert decode.cuda_graphs == per_graph + 256 * (2 * 18_944 + 4 * 3_584) * 2 + 34 * per_graph
    full_default = estimate_vllm(facts, H100, VllmConfig(**base), version="0.20.0")
    assert full_default.kv_available - decode.kv_available == decode.cuda_graphs - full_default.cuda_graphs
    none = estimate_vllm(facts, H100, VllmConfig(**base, cudagraph_mode="NONE"), version="0.20.0")
    assert none.cuda_graphs == 0 and none.extra["cuda_graph_counts"] == {"piecewise": 0, "full": 0}


def test_gpt_oss_recipe_capture_size_takes_more_of_the_warm_up_room():
    """gpt-oss-20b on one H100 at gmu 0.95 (0.19.0, 1,024 sequences): the recipe's --max-cudagraph-capture-size
    2048 captures 147 + 83 graphs instead of the model hook's 83 + 83 (profiles.VLLM_MODEL_CAPTURE), and vLLM's
    estimate of them leaves the warm-up less room."""
    facts = catalog_facts("openai/gpt-oss-20b")
    default = estimate_vllm(facts, H100, VllmConfig(gpu_memory_utilization=0.95), version="0.19.0",
                            gpu_name="NVIDIA H100 80GB HBM3")
    wide = estimate_vllm(facts, H100, VllmConfig(gpu_memory_utilization=0.95, max_cudagraph_capture_size=2048),
                         version="0.19.0", gpu_name="NVIDIA H100 80GB HBM3")
    assert default.extra["cuda_graph_counts"] == {"piecewise": 83, "full": 83}
    assert wide.extra["cuda_graph_counts"] == {"piecewise": 147, "full": 83}
    more = wide.cuda_graphs - default.cuda_graphs
    # the first capture at 2,048 rather than 1,024 tokens (24 layers, width 2,880, hidden 2,880) and 64 more graphs
    per_graph = 24 * (P.GRAPH_ESTIMATE_LAYER_BYTES + P.GRAPH_ESTIMATE_BYTES_PER_WIDTH * 2_880)
    assert more == (2_048 - 1_024) * (2 * 2_880 + 4 * 2_880) * 2 + 64 * per_graph
    room = default.extra["sampler_warmup_free_bytes"] - wide.extra["sampler_warmup_free_bytes"]
    assert room == more


@pytest.mark.parametrize("flags,field,value", [
    ({"cudagraph-capture-sizes": "1 2 4"}, "cudagraph_capture_sizes", (1, 2, 4)),
    ({"cudagraph-capture-sizes": "[8, 16]"}, "cudagraph_capture_sizes", (8, 16)),
    ({"cuda-graph-sizes": "64"}, "cuda_graph_sizes", (64,)),
    ({"cuda-graph-sizes": "1,2,4"}, "cuda_graph_sizes", (1, 2, 4)),
    ({"max-cudagraph-capture-size": "2048"}, "max_cudagraph_capture_size", 2048),
    ({"compilation-config": '{"cudagraph_mode": "piecewise"}'}, "cudagraph_mode", "PIECEWISE"),
    ({"O": '{"cudagraph_mode": 2}'}, "cudagraph_mode", "FULL"),  # the enum's plain value, as 0.10 logs print it
    ({"cc": '{"cudagraph_capture_sizes": [4, 1]}'}, "cudagraph_capture_sizes", (4, 1)),
    ({"cc": '{"max_cudagraph_capture_size": 96}'}, "max_cudagraph_capture_size", 96),
    ({"O3": None}, "cudagraph_mode", None),  # an optimisation level, not a config
])
def test_flags_are_read(flags, field, value):
    assert getattr(vllm_config(flags, Policy()), field) == value


@pytest.mark.parametrize("flags,message", [
    ({"cudagraph-capture-sizes": "1 x"}, "--cudagraph-capture-sizes '1 x': 'x' is not a whole number"),
    ({"cuda-graph-sizes": "0"}, "--cuda-graph-sizes '0': capture sizes are 1 to 1,048,576 (gsg's limit), not 0"),
    # one size is expanded into every multiple of 8 (0.10.1-0.11.0) or 16 below it: bounded, or the list is too
    ({"cuda-graph-sizes": "1048577"}, "capture sizes are 1 to 1,048,576 (gsg's limit), not 1,048,577"),
    ({"cudagraph-capture-sizes": "8 1000000000"}, "capture sizes are 1 to 1,048,576 (gsg's limit), not 1,000,000,000"),
    ({"cc": '{"cudagraph_capture_sizes": [8, 1048577]}'}, "capture sizes are 1 to 1,048,576 (gsg's limit)"),
    ({"max-cudagraph-capture-size": "1048577"}, "--max-cudagraph-capture-size '1048577': capture sizes are 1 to "
                                                "1,048,576 (gsg's limit)"),
    ({"cc": '{"max_cudagraph_capture_size": 1048577}'}, "max_cudagraph_capture_size is not a whole number from 1 "
                                                        "to 1,048,576 (gsg's limit)"),
    ({"cudagraph-capture-sizes": "[]"}, "--cudagraph-capture-sizes '[]': needs at least one capture size"),
    ({"max-cudagraph-capture-size": "0"}, "--max-cudagraph-capture-size '0': vLLM 0.11.0 accepts a whole number ≥ 1, not 0"),
    ({"cc": '{"cudagraph_mode": "SOME"}'}, "cudagraph_mode 'SOME' is none of NONE, PIECEWISE, FULL"),
    ({"cc": '{"cudagraph_mode": 7}'}, "cudagraph_mode 7 is none of"),
    ({"cc": '{"cudagraph_capture_sizes": 8}'}, "cudagraph_capture_sizes is not a list"),
    ({"cc": '{"max_cudagraph_capture_size": "big"}'}, "max_cudagraph_capture_size is not a whole number"),
    ({"compilation-config": "{not json"}, "not a JSON object"),
    ({"compilation-config": '{"a": ' + "[" * 5000 + "]" * 5000 + "}"}, "not a JSON object"),  # past json's depth
    ({"cc": '{"a": ' * 3000 + "1" + "}" * 3000}, "not a JSON object"),
    ({"cc": '{"cudagraph_capture_sizes": [8]}', "cudagraph-capture-sizes": "16"}, "mutually exclusive"),
    ({"cc": '{"max_cudagraph_capture_size": 8}', "max-cudagraph-capture-size": "16"}, "mutually exclusive"),
])
def test_values_vllm_refuses_are_reported_in_one_line(flags, message):
    with pytest.raises(FlagValueError) as caught:
        vllm_config(flags, Policy())
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_verify_passes_the_printed_capture_settings_on():
    """A log's "non-default args" carry the capture settings into the estimate (core/verify/compare.VLLM_ARGS);
    0.10's Namespace prints an unset cuda_graph_sizes as [], which is the default, not an empty list of sizes."""
    from gpustack_guard.core.verify import compare as C
    from gpustack_guard.core.verify.logparse import parse_log

    log, _ = parse_log(["INFO 11-28 11:45:51 [utils.py:253] non-default args: {'model': 'openai/gpt-oss-20b', "
                        "'max_cudagraph_capture_size': 2048, 'cudagraph_capture_sizes': [1, 2, 4]}"], "vllm")
    args = C.backend_args(log)
    assert "--max-cudagraph-capture-size=2048" in args and "--cudagraph-capture-sizes=[1, 2, 4]" in args
    cfg = vllm_config({"max-cudagraph-capture-size": "2048", "cudagraph-capture-sizes": "[1, 2, 4]"}, Policy())
    assert (cfg.max_cudagraph_capture_size, cfg.cudagraph_capture_sizes) == (2048, (1, 2, 4))
    log, _ = parse_log(["INFO 08-28 12:11:48 [api_server.py:1805] args: Namespace(model='m', cuda_graph_sizes=[], "
                        "max_num_seqs=None)"], "vllm")
    assert log.args["cuda_graph_sizes"] == []
    assert not any(flag.startswith("--cuda-graph-sizes") for flag in C.backend_args(log))


@pytest.mark.parametrize("version,flags,piecewise", [
    # the limit itself is estimated, at once: cut to the batched tokens, as vLLM cuts it
    ("0.11.0", {"cuda-graph-sizes": "1048576", "max-num-batched-tokens": "1048576"}, 3 + 131_072),
    ("0.19.0", {"max-cudagraph-capture-size": "1048576", "max-num-batched-tokens": "1048576"},
     3 + 31 + (1_048_576 - 256) // 16 + 1),
])
def test_a_capture_size_at_the_limit_is_estimated(version, flags, piecewise):
    cfg = vllm_config(flags, Policy(), version=version)
    assert graph_plan(P.vllm_profile(version), cfg, 1024, 1_048_576).piecewise == piecewise
