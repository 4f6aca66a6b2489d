"""vLLM's --performance-mode (from 0.17.0, profiles.VLLM_PERFORMANCE_MODES): `throughput` doubles the defaulted
max_num_batched_tokens and max_num_seqs (arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args), so the
profile's forward and sampler, the sampler warm-up and the decode graphs grow; `interactivity` captures every
size from 1 to 32 in place of 1, 2, 4 (config/vllm.py _set_cudagraph_sizes). Explicit flags win."""

from __future__ import annotations

import pytest
from support.vision_configs import QWEN25_VL_7B

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory import engine as E
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory import terms as T
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import (
    VllmConfig,
    batch_sizes,
    default_batching,
    graph_plan,
    v1_capture_sizes,
)
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H100 = (81_559 * MiB, "NVIDIA H100 80GB HBM3")
L40S = (46_068 * MiB, "NVIDIA L40S")
QWEN3_8B, LLAMA_70B = "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B-Instruct"


def estimate(model: str, version: str, gpu: tuple[int, str], tp: int = 1, **flags: str):
    given = {"tensor-parallel-size": str(tp), "max-model-len": "8192"} | {k.replace("_", "-"): v
                                                                          for k, v in flags.items()}
    return E.estimate("vllm", catalog_facts(model), [gpu] * tp, given, version, Policy())


# --- the flag, as the release's argparse takes it --------------------------------------------------------------

@pytest.mark.parametrize("version", ["0.17.0", "0.19.0", "0.33.0", "0.34.0"])
@pytest.mark.parametrize("mode", ["balanced", "interactivity", "throughput"])
def test_each_choice_is_read_from_0_17_0(version, mode):
    assert vllm_config({"performance-mode": mode}, Policy(), version=version).performance_mode == mode


def test_unset_is_balanced():
    assert vllm_config({}, Policy(), version="0.19.0").performance_mode == "balanced"
    assert vllm_config({}, Policy(), version="0.11.0").performance_mode == "balanced"


@pytest.mark.parametrize("version,text,message", [
    ("0.17.0", "Throughput", "--performance-mode 'Throughput': vLLM 0.17.0 accepts balanced, interactivity, "
                             "throughput (argparse choices, case-sensitive)"),
    ("0.19.0", "fast", "--performance-mode 'fast': vLLM 0.19.0 accepts balanced, interactivity, throughput "
                       "(argparse choices, case-sensitive)"),
    ("0.19.0", " throughput", "vLLM 0.19.0 accepts balanced"),  # argparse does not strip
    ("0.19.0", None, "--performance-mode without a value: vLLM 0.19.0 accepts"),
    ("0.16.0", "throughput", "--performance-mode 'throughput': vLLM 0.16.0 has no --performance-mode (it exists "
                             "from 0.17.0)"),
    ("0.16.0", "balanced", "vLLM 0.16.0 has no --performance-mode"),  # even its default value: no such flag
    ("0.8.5", "interactivity", "vLLM 0.8.5 has no --performance-mode"),
    (None, "throughput", "vLLM 0.11.0 (gsg's assumed release: pin backend_version) has no --performance-mode"),
    ("custom-build", "fast", "--performance-mode 'fast': vLLM 0.17.0+ accepts balanced"),
])
def test_values_and_releases_vllm_refuses_are_one_line(version, text, message):
    with pytest.raises(FlagValueError) as caught:
        vllm_config({"performance-mode": text}, Policy(), version=version)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.key == "performance-mode"


def test_an_unreadable_tag_accepts_the_mode_but_the_assumed_release_cannot_apply_it():
    est = estimate(QWEN3_8B, "custom-build", H100, performance_mode="throughput")
    assert est.max_num_seqs == 1024 and est.extra["max_num_batched_tokens"] == 8192
    assert "--performance-mode throughput not applied: gsg reads vLLM 'custom-build' as 0.11.0, which has no such " \
           "mode (it exists from 0.17.0)" in est.notes


# --- throughput: the defaulted batch doubled -------------------------------------------------------------------

@pytest.mark.parametrize("version,gpu,defaults", [
    ("0.17.0", H100, (8192, 1024)), ("0.19.0", L40S, (2048, 256)),
    ("0.28.0", (180 * 1024 * MiB, "NVIDIA B200"), (16384, 1024)),  # the 160 GiB tier of 0.28.0, doubled too
])
def test_throughput_doubles_each_defaulted_value(version, gpu, defaults):
    profile = P.vllm_profile(version)
    base = default_batching(profile, gpu[0], gpu[1], 8192, None, version)
    assert base[:2] == defaults
    tokens, seqs = defaults

    def sizes(**given):
        return batch_sizes(VllmConfig(performance_mode="throughput", **given), base, 8192, "v1", version)

    assert sizes() == (2 * tokens, 2 * seqs)
    assert sizes(max_num_seqs=64) == (2 * tokens, 64)  # an explicit value wins, the other is still doubled
    assert sizes(max_num_batched_tokens=4096) == (4096, min(2 * seqs, 4096))
    assert sizes(max_num_seqs=64, max_num_batched_tokens=4096) == (4096, 64)
    assert batch_sizes(VllmConfig(performance_mode="balanced"), base, 8192, "v1", version) == (tokens, seqs)


def test_the_doubled_defaults_keep_vllms_bounds():
    profile = P.vllm_profile("0.19.0")
    # doubled tokens are then bounded by max_num_seqs x max_model_len (one sequence of 1,024 tokens batches 1,024)
    base = default_batching(profile, *H100, 1024, None, "0.19.0")
    cfg = VllmConfig(performance_mode="throughput", max_num_seqs=1)
    assert batch_sizes(cfg, base, 1024, "v1", "0.19.0") == (1024, 1)
    # without chunked prefill a defaulted batch holds at least one whole prompt: max(32,768, 2 x 8,192)
    base = default_batching(profile, *H100, 32_768, False, "0.19.0")
    assert batch_sizes(VllmConfig(performance_mode="throughput"), base, 32_768, "v1", "0.19.0") == (32_768, 2048)
    # and the defaulted sequences are at most the tokens: 2 x 1,024 sequences into 1,000 given tokens
    assert batch_sizes(VllmConfig(performance_mode="throughput", max_num_batched_tokens=1000), base, 32_768,
                       "v1", "0.19.0") == (1000, 1000)


@pytest.mark.parametrize("model,tp,version,forward,graphs", [
    (QWEN3_8B, 1, "0.17.0", (838_860_800, 1_644_167_168), 1_443_889_152),  # 384 KiB x 36 layers x 102 graphs
    (QWEN3_8B, 1, "0.19.0", (838_860_800, 1_644_167_168), 734_470_144),
    # 0.34.0's extensible KV cache also reserves the larger batch's headroom: 2,245,263,360 + 1,683,947,520 lost
    (QWEN3_8B, 1, "0.34.0", (838_860_800, 1_644_167_168), 734_470_144),
    (LLAMA_70B, 2, "0.17.0", (1_073_741_824, 2_113_929_216), 3_208_642_560),  # 384 KiB x 80 x 102
    (LLAMA_70B, 2, "0.19.0", (1_073_741_824, 2_113_929_216), 1_734_246_400),
])
def test_throughput_on_h100_moves_the_profile_and_the_warm_up_not_the_graphs(model, tp, version, forward, graphs):
    balanced = estimate(model, version, H100, tp)
    fast = estimate(model, version, H100, tp, performance_mode="throughput")
    assert (balanced.max_num_seqs, balanced.extra["max_num_batched_tokens"]) == (1024, 8192)
    assert (fast.max_num_seqs, fast.extra["max_num_batched_tokens"]) == (2048, 16384)
    # the dummy sampler run and the warm-up draw one row per sequence: twice the rows, twice the bytes
    assert fast.extra["sampler_peak"] == 2 * balanced.extra["sampler_peak"]
    assert fast.extra["sampler_warmup_bytes"] == 2 * balanced.extra["sampler_warmup_bytes"]
    assert (balanced.extra["forward_peak"], fast.extra["forward_peak"]) == forward
    # 2 x 2,048 and 2 x 1,024 sequences both cap the largest capture size at 512: the same graphs
    assert fast.extra["cuda_graph_counts"] == balanced.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 51}
    assert fast.cuda_graphs == balanced.cuda_graphs == graphs
    # the graphs are the same either way: the KV pool loses exactly the larger profile peak (and, from 0.34.0,
    # the larger reserve)
    assert balanced.kv_available - fast.kv_available == \
        fast.activation - balanced.activation + fast.headroom - balanced.headroom
    if version == "0.34.0":
        assert (balanced.headroom, fast.headroom) == (1_683_947_520, 3_367_895_040)
    else:
        assert fast.headroom == balanced.headroom
    report = fast.extra["performance_mode"]
    assert report["balanced"]["max_num_seqs"] == 1024 and report["this_mode"]["max_num_seqs"] == 2048
    assert report["terms"] == [T.FORWARD_PEAK, T.SAMPLER_PEAK, T.SAMPLER_WARMUP]


def test_throughput_on_llama_70b_tp2_leaves_no_room_for_one_8k_request():
    """The second model, exact: the doubled sampler peak (2 x 1,972,895,744 B) takes the pool from 15,504
    tokens to 3,472, below one 8,192-token request: vLLM refuses to start where balanced mode fits."""
    balanced = estimate(LLAMA_70B, "0.19.0", H100, 2)
    fast = estimate(LLAMA_70B, "0.19.0", H100, 2, performance_mode="throughput")
    assert (balanced.extra["sampler_peak"], fast.extra["sampler_peak"]) == (1_972_895_744, 3_945_791_488)
    assert (balanced.kv_capacity_tokens, fast.kv_capacity_tokens) == (15_504, 3_472)
    assert (balanced.verdict, fast.verdict) == ("fits", "kv-below-max-model-len")


@pytest.mark.parametrize("version,graphs", [
    ("0.17.0", (1_217_396_736, 1_443_889_152)),  # 384 KiB x 36 layers x 86 and x 102 graphs
    ("0.19.0", (624_762_880, 734_470_144)),      # vLLM's own estimate (profile_cudagraph_memory)
])
def test_throughput_on_a_small_gpu_adds_decode_graphs(version, graphs):
    """L40S: 256 -> 512 sequences; the largest capture size is 512 either way, but the FULL decode graphs go up to
    max_num_seqs: 35 sizes up to 256, 51 up to 512."""
    balanced = estimate(QWEN3_8B, version, L40S)
    fast = estimate(QWEN3_8B, version, L40S, performance_mode="throughput")
    assert balanced.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 35}
    assert fast.extra["cuda_graph_counts"] == {"piecewise": 51, "full": 51}
    assert (balanced.cuda_graphs, fast.cuda_graphs) == graphs
    assert fast.extra["performance_mode"]["terms"] == [T.FORWARD_PEAK, T.SAMPLER_PEAK, T.SAMPLER_WARMUP,
                                                       T.CUDA_GRAPHS]


@pytest.mark.parametrize("version", ["0.17.0", "0.20.0", "0.34.0"])
def test_throughput_doubles_the_encoder_budget_and_names_it(version):
    """The encoder budget is max_num_batched_tokens (scheduler.py max_num_encoder_input_tokens, set after the
    doubling; v1/core/encoder_cache_manager.py compute_encoder_budget @v0.17.0 and @v0.34.0): Gemma-3-12B's
    256-token images, 8,192 / 256 = 32 -> 16,384 / 256 = 64 of them. Qwen2.5-VL-7B's one 16,384-token image
    fills either budget: one item, its term untouched. At 0.34.0 Gemma 3 runs on the V2 runner, whose profile
    holds the outputs alone through the text run (profiles.VLLM_V2_ENCODER_ROWS), not the pixel values."""
    gemma = catalog_facts("google/gemma-3-12b-it")
    given = {"max-model-len": "8192"}
    balanced = E.estimate("vllm", gemma, [H100], given, version, Policy())
    fast = E.estimate("vllm", gemma, [H100], given | {"performance-mode": "throughput"}, version, Policy())
    held = (62_914_560, 125_829_120) if version == "0.34.0" else (217_055_232, 434_110_464)  # 32 x 256 x 3,840 x 2
    assert (balanced.extra["encoder_peak"], fast.extra["encoder_peak"]) == held
    report = fast.extra["performance_mode"]
    assert (report["balanced"]["encoder_items"], report["this_mode"]["encoder_items"]) == (32, 64)
    assert report["terms"] == [T.FORWARD_PEAK, T.SAMPLER_PEAK, T.SAMPLER_WARMUP, T.ENCODER_PEAK]
    rows = {row.term: row for row in T.budget_terms(fast)}
    v2 = ":v2-runner-outputs-held" if version == "0.34.0" else ""
    assert rows[T.ENCODER_PEAK].rule == \
        f"max(encoder-phase, text+held):siglip-attention{v2}+performance-mode-throughput"
    qwen_vl = facts_from_config(QWEN25_VL_7B, "test")
    one_item = E.estimate("vllm", qwen_vl, [H100], given | {"performance-mode": "throughput"}, version, Policy())
    assert one_item.extra["performance_mode"]["this_mode"]["encoder_items"] == 1
    assert T.ENCODER_PEAK not in one_item.extra["performance_mode"]["terms"]


# --- interactivity: every capture size up to 32 ---------------------------------------------------------------

@pytest.mark.parametrize("largest,balanced,interactive", [
    (512, 51, 32 + 27 + 17),  # 1..32, the multiples of 8 from 40 to 248, 256..512 step 16
    (256, 35, 32 + 27 + 1),
    (40, 8, 33),              # 1..32 and 40
    (32, 7, 32),              # every size, the multiples of 8 already in
    (16, 5, 16),
    (3, 2, 3),                # 1, 2 against 1, 2, 3
    (1, 1, 1),
])
def test_interactivity_capture_sizes(largest, balanced, interactive):
    assert len(v1_capture_sizes(largest)) == balanced
    sizes = v1_capture_sizes(largest, every_size_to=32)
    assert len(sizes) == interactive and sizes == sorted(set(sizes)) and sizes[-1] == largest
    assert sizes[:min(largest, 32)] == list(range(1, min(largest, 32) + 1))


def test_interactivity_applies_to_max_cudagraph_capture_size_not_to_a_given_list():
    profile = P.vllm_profile("0.19.0")
    capped = VllmConfig(performance_mode="interactivity", max_cudagraph_capture_size=64)
    assert graph_plan(profile, capped, 1024, 8192, every_size_to=32).piecewise == 32 + 4  # 1..32, 40..64
    listed = VllmConfig(performance_mode="interactivity", cudagraph_capture_sizes=(1, 8, 64))
    assert graph_plan(profile, listed, 1024, 8192, every_size_to=32).piecewise == 3


@pytest.mark.parametrize("model,tp,version,graphs,in_budget", [
    # 384 KiB x 36 layers x 102 and x 152 graphs
    (QWEN3_8B, 1, "0.17.0", (1_443_889_152, 2_151_677_952), False),
    (QWEN3_8B, 1, "0.19.0", (734_470_144, 1_077_305_344), False),
    (QWEN3_8B, 1, "0.20.0", (734_470_144, 1_077_305_344), True),
    (QWEN3_8B, 1, "0.34.0", (734_470_144, 1_077_305_344), True),
    (LLAMA_70B, 2, "0.17.0", (3_208_642_560, 4_781_506_560), False),  # 384 KiB x 80 x 102 and x 152
    (LLAMA_70B, 2, "0.19.0", (1_734_246_400, 2_561_638_400), False),
    (LLAMA_70B, 2, "0.20.0", (1_734_246_400, 2_561_638_400), True),
])
def test_interactivity_graphs_are_headroom_until_0_19_and_budget_from_0_20(model, tp, version, graphs, in_budget):
    balanced = estimate(model, version, H100, tp)
    fine = estimate(model, version, H100, tp, performance_mode="interactivity")
    assert fine.extra["cuda_graph_counts"] == {"piecewise": 76, "full": 76}
    assert (fine.max_num_seqs, fine.extra["max_num_batched_tokens"]) == (1024, 8192)
    assert fine.activation == balanced.activation
    assert (balanced.cuda_graphs, fine.cuda_graphs) == graphs
    assert balanced.kv_available - fine.kv_available == (graphs[1] - graphs[0] if in_budget else 0)
    assert fine.extra["performance_mode"]["terms"] == [T.CUDA_GRAPHS]


def test_interactivity_under_enforce_eager_changes_nothing():
    est = estimate(QWEN3_8B, "0.19.0", H100, performance_mode="interactivity", enforce_eager=None)
    assert est.cuda_graphs == 0 and est.extra["performance_mode"]["terms"] == []


# --- shown term by term ----------------------------------------------------------------------------------------

def test_the_budget_names_the_mode_beside_each_term_it_moved():
    est = estimate(LLAMA_70B, "0.19.0", H100, 2, performance_mode="throughput")
    rows = {row.term: row for row in T.budget_terms(est)}
    source = P.vllm_performance_mode_row(P.known_version("0.19.0")).source
    for term in (T.FORWARD_PEAK, T.SAMPLER_PEAK, T.SAMPLER_WARMUP):
        assert rows[term].rule.endswith("+performance-mode-throughput") and rows[term].source.endswith(source)
    for term in (T.WEIGHTS, T.CUDA_GRAPHS, T.NON_TORCH):
        assert "performance-mode" not in rows[term].rule
    assert "vllm/engine/arg_utils.py@v0.17.0 _set_default_max_num_seqs_and_batched_tokens_args" in source
    balanced = estimate(LLAMA_70B, "0.19.0", H100, 2)
    assert not any("performance-mode" in row.rule for row in T.budget_terms(balanced))


# --- the table, one row per change -----------------------------------------------------------------------------

@pytest.mark.parametrize("version,since", [("0.16.0", "0.0.0"), ("0.17.0", "0.17.0"), ("0.20.0", "0.17.0"),
                                           ("0.33.0", "0.17.0"), ("0.34.0", "0.34.0")])
def test_each_release_reads_its_own_row(version, since):
    row = P.vllm_performance_mode_row(P.known_version(version))
    assert row.since == since
    if since == "0.0.0":
        assert (row.choices, row.throughput_default_factor, row.interactivity_every_size_to) == ((), 1, 0)
        return
    assert (row.choices, row.throughput_default_factor, row.interactivity_every_size_to) == \
        (("balanced", "interactivity", "throughput"), 2, 32)
    assert f"vllm/config/vllm.py@v{since}" in row.source and f"vllm/engine/arg_utils.py@v{since}" in row.source
    assert P.VLLM_PERFORMANCE_MODE_SINCE == "0.17.0"  # a later row never moves the flag's first release
