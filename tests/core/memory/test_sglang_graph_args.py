"""SGLang's CUDA-graph capture arguments and its speculative reserve, per release (profiles.SGLANG_GRAPH_ARGS,
profiles.SGLANG_SPECULATIVE_RESERVE): which names each release reads, what they do to the default fraction."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.sglang import estimate_sglang, sglang_fraction
from gpustack_guard.core.units import MiB

H100 = 81_559 * MiB
H200 = 143_771 * MiB


def fraction(flags: dict, version: str, gpu: int = H100) -> float:
    return sglang_fraction(engine.sglang_config(flags, version), gpu, version)


def estimate(flags: dict, version: str, model: str = "Qwen/Qwen3-8B", gpu: int = H100):
    return estimate_sglang(catalog_facts(model), gpu, engine.sglang_config(flags, version), version=version)


# H100, TP 1, chunk 8192: 512 + 12,288 + 128 + 58 prefill graphs x 8 = 13,392 MiB, plus 2 MiB per decode batch.
# The default 256 gives 0.830; a 64 batch keeps 384 MiB less: (81,559 - 13,520) / 81,559 = 0.834.
@pytest.mark.parametrize("version,flags", [
    ("0.5.13", {"cuda-graph-max-bs": "64"}),
    ("0.5.13", {"cuda-graph-bs": "1 2 4 8 64"}),  # an explicit list: its largest entry is the max
    ("0.5.14", {"cuda-graph-max-bs-decode": "64"}),
    ("0.5.14", {"cuda-graph-max-bs": "64"}),  # 0.5.14-0.5.19: a deprecated alias of -decode
    ("0.5.19", {"cuda-graph-bs": "[1, 2, 64]"}),
    ("0.5.23", {"cuda-graph-max-bs-decode": "64"}),
    ("0.5.23", {"cuda-graph-bs-decode": "1 2 4 64"}),
    ("0.5.23", {"cuda-graph-config": '{"decode": {"max_bs": 64}}', "cuda-graph-max-bs-decode": "128"}),  # JSON wins
])
def test_decode_graph_batch_by_the_names_each_release_reads(version, flags):
    assert fraction({}, version) == 0.830
    assert fraction(flags, version) == 0.834
    assert estimate(flags, version, "meta-llama/Llama-3.1-8B-Instruct").extra["cuda_graph_max_bs"] == 64


@pytest.mark.parametrize("name,value", [
    ("cuda-graph-max-bs", "64"), ("cuda-graph-bs", "1 2 4"), ("piecewise-cuda-graph-max-tokens", "2048"),
    ("piecewise-cuda-graph-tokens", "8 16"), ("disable-piecewise-cuda-graph", None),
])
def test_the_legacy_graph_names_stop_0_5_20_and_later(name, value):
    engine.sglang_config({name: value}, "0.5.19")  # still an alias there
    for version in ("0.5.20", "0.5.23"):
        with pytest.raises(EF.FlagValueError, match=f"SGLang {version} refuses it: .* gone from 0.5.20"):
            engine.sglang_config({name: value}, version)
    with pytest.raises(EF.FlagValueError, match="ambiguous abbreviation of --cuda-graph-max-bs-decode and "
                                                "--cuda-graph-max-bs-prefill"):
        engine.sglang_config({"cuda-graph-max-bs": "64"}, "0.5.23")


@pytest.mark.parametrize("version,flags,reserve_mb", [
    ("0.5.23", {}, 58 * 8),  # 4 ... 8192 tokens: 58 graphs x 8 MiB
    ("0.5.23", {"cuda-graph-max-bs-prefill": "2048"}, 42 * 8),
    ("0.5.19", {"piecewise-cuda-graph-max-tokens": "2048"}, 42 * 8),  # the alias, to 0.5.19
    ("0.5.10", {"piecewise-cuda-graph-max-tokens": "2048"}, 42 * 8),  # the release's own name
    ("0.5.23", {"cuda-graph-bs-prefill": "8 16 32 32"}, 3 * 8),  # an explicit list: one graph per size
    ("0.5.23", {"cuda-graph-config": '{"prefill": {"bs": [8, 16]}}'}, 2 * 8),
    ("0.5.23", {"cuda-graph-backend-prefill": "disabled"}, 0),
    ("0.5.23", {"cuda-graph-config": '{"prefill": {"backend": "disabled"}}'}, 0),
    # sglang#21112's clamp to an explicit --context-length, 0.5.13-0.5.16 only: 50 graphs to 4096
    # (server_args.py@0.5.13 and @0.5.13.post1 _handle_gpu_memory_settings; none @0.5.12.post1 nor @0.5.17)
    ("0.5.14", {"context-length": "4096"}, 50 * 8),
    ("0.5.16", {"context-length": "4096"}, 50 * 8),
    ("0.5.17", {"context-length": "4096"}, 58 * 8),
    ("0.5.13", {"context-length": "4096"}, 50 * 8),
    ("0.5.13.post1", {"context-length": "4096"}, 50 * 8),
    ("0.5.12.post1", {"context-length": "4096"}, 58 * 8),
])
def test_prefill_graph_reserve_follows_the_prefill_arguments(version, flags, reserve_mb):
    for model in ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"):
        assert estimate(flags, version, model).extra["prefill_graph_reserve"] == reserve_mb * MiB


def test_a_disabled_decode_backend_leaves_the_reserve_from_0_5_14():
    # 0.5.14+: --disable-cuda-graph disables both phases and neither is reserved: 512 + 12,288 + 128 = 12,928 MiB
    # -> 0.841; a disabled decode backend alone drops its 512 MiB: 13,392 MiB -> 0.836
    assert fraction({"disable-cuda-graph": None}, "0.5.14") == 0.841
    assert fraction({"cuda-graph-backend-decode": "disabled"}, "0.5.23") == 0.836
    assert fraction({"disable-decode-cuda-graph": None}, "0.5.19") == 0.836
    # up to 0.5.13 the reserve counts the default batch whatever --disable-cuda-graph says
    assert fraction({"disable-cuda-graph": None}, "0.5.13") == 0.830
    assert estimate({"disable-cuda-graph": None}, "0.5.14").cuda_graphs == 0


@pytest.mark.parametrize("model,tokens_021,tokens_022", [
    ("Qwen/Qwen3-8B", 367_096, 369_402), ("meta-llama/Llama-3.1-8B-Instruct", 415_096, 417_689)])
def test_0_5_22_cuts_the_default_decode_batch_to_the_running_requests(model, tokens_021, tokens_022):
    old, new = (estimate({"max-running-requests": "64"}, version, model) for version in ("0.5.21", "0.5.22"))
    assert (old.extra["cuda_graph_max_bs"], new.extra["cuda_graph_max_bs"]) == (256, 64)
    assert (old.extra["mem_fraction_static"], new.extra["mem_fraction_static"]) == (0.830, 0.834)
    assert (old.kv_capacity_tokens, new.kv_capacity_tokens) == (tokens_021, tokens_022)
    # a batch the user sets is not cut
    assert estimate({"max-running-requests": "64", "cuda-graph-max-bs-decode": "128"}, "0.5.22",
                    model).extra["cuda_graph_max_bs"] == 128


@pytest.mark.parametrize("version,expected", [
    # H200, TP 1, no draft / EAGLE / STANDALONE / NGRAM. 0.4.6.post2: no term; 0.4.7: 20 GiB kept above 96 GiB
    # (18 without a draft), whatever the algorithm
    ("0.4.6.post2", ((143_771 - 18 * 1024) / 143_771,) * 4),
    ("0.4.7", ((143_771 - 18 * 1024) / 143_771,) + ((143_771 - 20 * 1024) / 143_771,) * 3),
    # 0.4.7.post1-0.5.2, the 12.5 GiB tier (0.911): + 2 GiB for any algorithm = (143,771 - 14,848) / 143,771
    ("0.4.8", (0.911, 0.897, 0.897, 0.897)),
    ("0.5.2", (0.911, 0.897, 0.868, 0.897)),  # STANDALONE 6 GiB
    # 0.5.3-0.5.9: 13,440 MiB reserved (no prefill graphs by default), + 2 GiB, STANDALONE 6 GiB, NGRAM nothing
    ("0.5.3", (0.907, 0.892, 0.864, 0.907)),
    ("0.5.10", (0.903, 0.878, 0.864, 0.907)),  # EAGLE 4 GiB; any algorithm turns the prefill graphs off
    ("0.5.11", (0.903, 0.875, 0.861, 0.903)),  # the prefill graphs stay with a draft
    ("0.5.14", (0.903, 0.903, 0.903, 0.903)),  # no speculative term
])
def test_speculative_reserve_by_release_and_algorithm(version, expected):
    got = tuple(fraction({"speculative-algorithm": a} if a else {}, version, H200)
                for a in ("", "EAGLE", "STANDALONE", "NGRAM"))
    assert got == pytest.approx(expected, abs=1e-9)


def test_0_4_7_takes_095_of_the_fraction_with_a_draft_up_to_96_gib():
    assert fraction({"speculative-algorithm": "EAGLE"}, "0.4.7") == pytest.approx(0.88 * 0.95)
    assert fraction({"speculative-algorithm": "EAGLE", "tp-size": "4"}, "0.4.7") == pytest.approx(0.85 * 0.95)
    assert fraction({"speculative-algorithm": "EAGLE"}, "0.4.6.post2") == 0.88
    assert fraction({"speculative-algorithm": "EAGLE"}, "0.4.7", 183_359 * MiB) == 0.79  # a B200 keeps 0.79


def test_speculative_reserve_is_shown_and_the_draft_is_named_unsized():
    for model in ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"):
        est = estimate({"speculative-algorithm": "eagle3"}, "0.5.10", model)
        assert est.extra["speculative_reserve"] == 4096 * MiB
        assert "server_args.py@0.5.10" in est.extra["speculative_reserve_source"]
        assert any("draft model's weights, KV and graphs are not sized" in note and "keeps 4 GiB" in note
                   for note in est.notes)
    later = estimate({"speculative-algorithm": "EAGLE"}, "0.5.23")
    assert later.extra["speculative_reserve"] == 0
    assert any("keeps nothing outside the static fraction" in note for note in later.notes)
    assert not estimate({"speculative-algorithm": "NGRAM"}, "0.5.23").notes  # drafts from the prompt


def test_one_graph_args_row_per_release_range():
    assert [P.sglang_graph_args(v).since for v in ("0.5.3", "0.5.4", "0.5.13", "0.5.14", "0.5.17", "0.5.20",
                                                   "0.5.22", "0.5.23")] == \
        ["0.0.0", "0.5.4", "0.5.13", "0.5.14", "0.5.17", "0.5.20", "0.5.22", "0.5.22"]
    assert engine.sglang_config({"speculative-algorithm": "EAGLE"}, "0.5.10").prefill_graphs_off is True
    assert engine.sglang_config({"speculative-algorithm": "EAGLE"}, "0.5.11").prefill_graphs_off is False


@pytest.mark.parametrize("version,model,reserve_mb", [
    # 0.5.10+: a model path holding "llama-2" caps the default prefill ceiling at 4096 tokens (profiles.
    # SGLANG_PREFILL_PATH_CAPS): 50 graphs, not the 58 of the 8192-token H100 chunk
    ("0.5.10", "meta-llama/Llama-2-7b-hf", 50 * 8), ("0.5.23", "meta-llama/Llama-2-13b-hf", 50 * 8),
    ("0.5.10", "meta-llama/Llama-3.1-8B-Instruct", 58 * 8), ("0.5.23", "Qwen/Qwen3-8B", 58 * 8),
    ("0.5.9", "meta-llama/Llama-2-7b-hf", 0),  # no prefill graphs by default before 0.5.10
])
def test_llama_2_paths_cap_the_default_prefill_graphs_at_4096_tokens(version, model, reserve_mb):
    assert estimate({}, version, model).extra["prefill_graph_reserve"] == reserve_mb * MiB


def test_llama_2_cap_leaves_a_given_ceiling_and_a_smaller_chunk():
    # the cap is inside SGLang's "max_bs is None" branch: a given ceiling stays; a 2048 chunk is under it anyway
    given = estimate({"piecewise-cuda-graph-max-tokens": "8192"}, "0.5.13", "meta-llama/Llama-2-7b-hf")
    small = estimate({"chunked-prefill-size": "2048"}, "0.5.13", "meta-llama/Llama-2-7b-hf")
    assert (given.extra["prefill_graph_reserve"], small.extra["prefill_graph_reserve"]) == (58 * 8 * MiB, 42 * 8 * MiB)
    assert P.sglang_prefill_path_cap("0.5.9").tokens == 0 < P.sglang_prefill_path_cap("0.5.10").tokens == 4096


L40S = 46_068 * MiB


@pytest.mark.parametrize("version,gpu,flags,expected,reserve_mb", [
    # --enable-piecewise-cuda-graph before 0.5.10 (profiles.SGLANG_OPT_IN_PREFILL_GRAPHS). L40S, chunk 4096, 32 graphs:
    # 512 + 6,144 + 64 + 128 = 6,848 MiB without it (0.851)
    ("0.5.5", L40S, {}, 0.851, 0),  # the flag adds nothing to the reserve yet
    ("0.5.6", L40S, {}, round((46_068 - 6_848 - 1_024) / 46_068, 3), 1024),  # 4096 (dataclass) // 4: 0.829
    ("0.5.7", L40S, {}, round((46_068 - 6_848 - 512) / 46_068, 3), 512),  # the chunk // 8: 0.840
    ("0.5.9", L40S, {}, round((46_068 - 6_848 - 400) / 46_068, 3), 400),  # 50 sizes to 4096 x 8 MiB: 0.843
    # the floor: on an H100 with a 2048 chunk the reserve is 4,224 MiB, under 10 GiB. 0.5.6 adds 1,024 after the
    # floor; 0.5.8 adds 42 sizes x 8 before it, where the floor swallows them
    ("0.5.6", H100, {"chunked-prefill-size": "2048"}, round((81_559 - 10_240 - 1_024) / 81_559, 3), 1024),
    ("0.5.8", H100, {"chunked-prefill-size": "2048"}, round((81_559 - 10_240) / 81_559, 3), 336),
    ("0.5.8", H100, {"piecewise-cuda-graph-tokens": "8 16 32"}, round((81_559 - 13_440 - 24) / 81_559, 3), 24),
])
def test_opt_in_prefill_graphs_before_0_5_10(version, gpu, flags, expected, reserve_mb):
    on = estimate({**flags, "enable-piecewise-cuda-graph": None}, version, gpu=gpu)
    off = estimate(flags, version, gpu=gpu)
    assert (on.extra["mem_fraction_static"], on.extra["prefill_graph_reserve"]) == (expected, reserve_mb * MiB)
    assert off.extra["prefill_graph_reserve"] == 0
