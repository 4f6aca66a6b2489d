"""llama.cpp's --fit (common/fit.cpp llama_params_fit): what the engine starts with when the arguments do not fit."""

from __future__ import annotations

import re

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import llamacpp_config
from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig, estimate_llamacpp, fit_active
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

FIT = P.LLAMACPP_FIT_SINCE  # b7474


def total(facts, gpu: int, **cfg) -> int:
    """What one device holds for these arguments, without --fit."""
    return estimate_llamacpp(facts, [gpu], LlamaCppConfig(**cfg), version=FIT).extra["per_device"][0]["total"]


def test_fit_is_on_by_default_from_the_build_that_has_it():
    assert fit_active(None, FIT) and fit_active("on", FIT) and not fit_active("off", "b10507")
    assert not fit_active(None, "b7473")
    with pytest.raises(ValueError, match="has no --fit"):
        fit_active("on", "b7000")
    for word in ("auto", "-1", "yes", "no", "", "2"):  # --flash-attn's auto words and args' wider booleans: refused
        with pytest.raises(ValueError, match=r"takes --fit on or off \(on, enabled, true, 1 / off, disabled, false, 0\)"):
            fit_active(word, FIT)


@pytest.mark.parametrize(("word", "on"), [("on", True), ("enabled", True), ("true", True), ("1", True),
                                          ("off", False), ("disabled", False), ("false", False), ("0", False)])
def test_fit_reads_every_word_common_arg_reads(word, on):
    # common/arg.cpp's --fit handler takes is_truthy / is_falsey, the words --flash-attn takes
    assert fit_active(word, FIT) is on
    assert llamacpp_config({"fit": word}, Policy(), catalog_facts("Qwen/Qwen2.5-7B"), FIT).fit is on


@pytest.mark.parametrize(("model", "trained"), [("Qwen/Qwen2.5-7B", 32768), ("meta-llama/Llama-3.1-8B-Instruct", 131072)])
def test_context_not_given_is_shortened_from_the_trained_context_to_leave_the_target_free(model, trained):
    facts = catalog_facts(model)
    # from b7474 an unset -c is n_ctx 0, the model's trained context: a card where that misses the 1 GiB margin
    # but 4,096 cells keep it
    at_min, at_full = total(facts, 80 * GiB, ctx_size=4096), total(facts, 80 * GiB, ctx_size=trained)
    gpu = at_min + P.LLAMACPP_FIT_TARGET + (at_full - at_min) // 2
    est = estimate_llamacpp(facts, [gpu], LlamaCppConfig(fit=True), version=FIT)
    ctx = est.extra["fit"]["ctx_size"]
    assert est.extra["fit"]["action"] == "context" and est.verdict == FITS and est.kv_capacity_tokens == ctx
    assert 4096 < ctx < trained and ctx % 256 == 0
    assert est.extra["context"]["source"] == "fit-shortened" and est.extra["context"]["from"] == trained
    assert total(facts, gpu, ctx_size=ctx) + P.LLAMACPP_FIT_TARGET <= gpu  # the one it picks keeps the margin
    assert total(facts, gpu, ctx_size=ctx + 256) + P.LLAMACPP_FIT_TARGET > gpu  # one step more would not
    assert f"shortens the context to {ctx:,} cells" in est.notes[-1]
    # the same card the build before: no --fit, and common.h's default n_ctx was 4,096, which fits with room
    before = estimate_llamacpp(facts, [gpu], LlamaCppConfig(), version="b7473")
    assert before.kv_capacity_tokens == 4096 and "fit" not in before.extra and before.headroom > 1 * GiB
    assert before.extra["context"]["source"] == "engine-default" and before.extra["context"]["ctx_size"] == 4096


@pytest.mark.parametrize(("model", "moe"), [("meta-llama/Llama-3.3-70B-Instruct", False),
                                            ("Qwen/Qwen3-30B-A3B", True)])
def test_context_given_moves_layers_to_the_cpu(model, moe):
    facts = catalog_facts(model)
    gpu = 16 * GiB
    est = estimate_llamacpp(facts, [gpu], LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True), version=FIT)
    layers = est.extra["fit"]["gpu_layers"]
    assert est.extra["fit"] == {"action": "offload", "gpu_layers": layers, "ctx_size": 8192}
    assert est.verdict == FITS and est.extra["offload_layers"] == layers < facts.num_hidden_layers
    assert total(facts, gpu, ctx_size=8192, gpu_layers=layers) + P.LLAMACPP_FIT_TARGET <= gpu
    assert total(facts, gpu, ctx_size=8192, gpu_layers=layers + 1) + P.LLAMACPP_FIT_TARGET > gpu
    assert ("expert tensors to the CPU" in est.notes[-1]) is moe


def test_layers_given_stop_fit_and_the_arguments_stay_as_given():
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    cfg = LlamaCppConfig(ctx_size=8192, ctx_given=True, gpu_layers=80, layers_given=True, fit=True)
    est = estimate_llamacpp(facts, [24 * GiB], cfg, version=FIT)
    assert est.verdict == DOES_NOT_FIT and est.extra["fit"] == {"action": "none"}
    assert "cannot make it fit (-ngl, -ot, or on several GPUs --tensor-split or --split-mode row, is given" in \
        est.notes[-1]
    # nothing fits even with every layer on the CPU at the shortest context: it gives up too
    tiny = estimate_llamacpp(facts, [1 * GiB], LlamaCppConfig(fit=True), version=FIT)
    assert tiny.verdict == DOES_NOT_FIT and "no context down to --fit-ctx" in tiny.notes[-1]


def test_fit_target_per_device_and_fit_ctx_are_read():
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    at_min = total(facts, 80 * GiB, ctx_size=2048)
    gpu = at_min + 512 * MiB + 1
    # a 512 MiB target and a 2,048-cell floor: it fits at the floor, not with the default 1 GiB / 4,096
    est = estimate_llamacpp(facts, [gpu], LlamaCppConfig(fit=True, fit_target=(512 * MiB,), fit_min_ctx=2048),
                            version=FIT)
    assert est.extra["fit"]["action"] == "context" and est.extra["fit"]["ctx_size"] == 2048
    assert estimate_llamacpp(facts, [gpu], LlamaCppConfig(fit=True), version=FIT).extra["fit"]["action"] != "context"


def test_flags_decide_what_fit_may_change():
    facts, policy = catalog_facts("Qwen/Qwen2.5-7B"), Policy()
    cfg = llamacpp_config({}, policy, facts, FIT)
    assert cfg.fit and not cfg.ctx_given and not cfg.layers_given and cfg.fit_target == (1024 * MiB,)
    assert not llamacpp_config({"fit": "off"}, policy, facts, FIT).fit
    assert not llamacpp_config({}, policy, facts, "b7473").fit
    assert llamacpp_config({"ctx-size": "0"}, policy, facts, FIT).ctx_given  # -c 0: the full context, never cut
    assert not llamacpp_config({"gpu-layers": "auto"}, policy, facts, FIT).layers_given
    assert llamacpp_config({"gpu-layers": "all"}, policy, facts, FIT).layers_given
    limits = llamacpp_config({"fit-target": "512,2048", "fit-ctx": "2048"}, policy, facts, FIT)
    assert (limits.fit_target, limits.fit_min_ctx) == ((512 * MiB, 2048 * MiB), 2048)
    for flags, key in (({"fit": "maybe"}, "fit"), ({"fit": "on"}, "fit"), ({"fit-target": "G1"}, "fit-target"),
                       ({"fit-ctx": "abc"}, "fit-ctx")):
        with pytest.raises(EF.FlagValueError) as caught:
            llamacpp_config(flags, policy, facts, FIT if flags != {"fit": "on"} else "b7000")
        assert caught.value.key == key


@pytest.mark.parametrize(("cfg", "gpus", "moves"), [
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, tensor_overrides=True), 1, False),  # -ot: always
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, tensor_split=(1.0, 1.0)), 2, False),
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, tensor_split=(0.0, 0.0)), 2, True),  # zeros: unset
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, split_mode="row"), 2, False),
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, split_mode="row"), 1, True),  # one device: no split
    (LlamaCppConfig(ctx_size=8192, ctx_given=True, fit=True, tensor_split=(3.0,)), 1, True),
])
def test_what_stops_fit_from_moving_layers_depends_on_the_device_count(cfg, gpus, moves):
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    est = estimate_llamacpp(facts, [16 * GiB] * gpus, cfg, version=FIT)
    assert (est.extra["fit"]["action"] == "offload") is moves
    assert est.verdict == (FITS if moves else DOES_NOT_FIT)


@pytest.mark.parametrize(("flags", "target", "min_ctx"), [
    ({"fit-target": "512/1024"}, (512 * MiB, 1024 * MiB), P.LLAMACPP_FIT_MIN_CTX),  # split on , and / as -ts is
    ({"fit-target": " 0,,2048"}, (0, 2048 * MiB), P.LLAMACPP_FIT_MIN_CTX),
    ({"fit-target": "1e30"}, (1 * MiB,), P.LLAMACPP_FIT_MIN_CTX),  # std::stoull stops at the 'e'
    ({"fit-ctx": "8k"}, (P.LLAMACPP_FIT_TARGET,), 8),  # std::stoi stops at the 'k'
    ({"fit-ctx": "-1"}, (P.LLAMACPP_FIT_TARGET,), 2**32 - 1),  # UINT32_MAX: the full context asked for
    ({"fit-ctx": "-5"}, (P.LLAMACPP_FIT_TARGET,), 2**32 - 5),
])
def test_fit_limits_are_read_as_common_arg_reads_them(flags, target, min_ctx):
    cfg = llamacpp_config(flags, Policy(), catalog_facts("Qwen/Qwen2.5-7B"), FIT)
    assert (cfg.fit_target, cfg.fit_min_ctx) == (target, min_ctx)


def test_a_negative_fit_ctx_never_shortens_the_context():
    facts = catalog_facts("Qwen/Qwen2.5-7B")
    cfg = llamacpp_config({"fit-ctx": "-1"}, Policy(), facts, FIT)  # flash attention auto: on

    def at(ctx: int) -> int:
        return total(facts, 80 * GiB, ctx_size=ctx, flash_attn=True)

    gpu = at(4096) + P.LLAMACPP_FIT_TARGET + (at(32768) - at(4096)) // 2  # shortened by default (test above)
    est = estimate_llamacpp(facts, [gpu], cfg, version=FIT)
    assert est.extra["fit"]["action"] == "offload" and est.extra["fit"]["ctx_size"] == 32768


@pytest.mark.parametrize(("flags", "message"), [
    ({"fit-target": "-1"}, "--fit-target '-1': negative: std::stoull wraps -1 to 18,446,744,073,709,551,615"),
    ({"fit-target": ""}, "--fit-target '': no values"),
    ({"fit-target": "abc"}, "--fit-target 'abc': not a whole number (std::stoull finds no digits)"),
    ({"fit-target": "99999999999999999999999"}, "out of the unsigned long long range (std::stoull)"),
    ({"fit-target": str(2**44)}, "over 17,592,186,044,415 MiB, where MiB x 1,048,576 wraps in llama.cpp's size_t"),
    ({"fit-target": ",".join(["1"] * 16)}, "16 values; llama.cpp takes at most 15 (llama_max_devices() is 16)"),
    ({"tensor-split": ",".join(["1"] * 16)}, "16 values; llama.cpp takes at most 15 (llama_max_devices() is 16)"),
    ({"fit-ctx": ""}, "--fit-ctx '': not a whole number (std::stoi finds no digits)"),
    ({"fit-ctx": "99999999999"}, "--fit-ctx '99999999999': out of the int range (std::stoi)"),
])
def test_fit_limits_the_engine_refuses_are_one_flag_error(flags, message):
    with pytest.raises(EF.FlagValueError, match=re.escape(message)):
        llamacpp_config(flags, Policy(), catalog_facts("Qwen/Qwen2.5-7B"), FIT)
    key = next(iter(flags))
    assert message in str(EF.check(key, flags[key], "llamacpp", FIT))


@pytest.mark.parametrize("key", ["fit-target", "fit-ctx"])
def test_fit_limits_on_a_build_without_fit_are_refused(key):
    with pytest.raises(EF.FlagValueError, match=f"llama.cpp b7473 has no --{key} \\(it exists from b7474\\)"):
        llamacpp_config({key: "2048"}, Policy(), catalog_facts("Qwen/Qwen2.5-7B"), "b7473")
    assert llamacpp_config({key: "2048"}, Policy(), catalog_facts("Qwen/Qwen2.5-7B"), FIT).fit


def test_the_fit_search_is_bounded_by_its_step_limit():
    from gpustack_guard.core.memory.engines import llamacpp as LC
    probes: list[int] = []

    def below(limit):
        def ok(n):
            probes.append(n)
            return n <= limit
        return ok

    # the widest range the limit covers: 2^64 - 1 values, the answer found in 1 + 64 probes
    assert LC._largest(0, 2**64 - 1, below(12_345)) == 12_345 and len(probes) == 1 + LC.FIT_SEARCH_MAX_STEPS == 65
    probes.clear()
    assert LC._largest(floor := 16, 4096, below(100)) == 100 and len(probes) == 1 + 12 and floor in probes
    assert LC._largest(5, 4, below(10)) is None and LC._largest(5, 9, below(4)) is None
    with pytest.raises(ValueError, match=r"^--fit: gsg's search of 0\.\.36,893,488,147,419,103,231 stops at "
                                         r"FIT_SEARCH_MAX_STEPS \(64\) halvings$"):
        LC._largest(0, 2**65 - 1, below(2**65))


def test_the_largest_trained_context_facts_allow_is_fitted_within_the_limit():
    # n_ctx_train at checked_facts' bound (10^9) on a card that holds 4,096 cells: the context search ends in bounds
    from dataclasses import replace as changed
    facts = changed(catalog_facts("Qwen/Qwen2.5-7B"), max_position_embeddings=10**9)
    gpu = total(facts, 80 * GiB, ctx_size=8192) + P.LLAMACPP_FIT_TARGET
    est = estimate_llamacpp(facts, [gpu], LlamaCppConfig(fit=True), version=FIT)
    assert est.extra["fit"] == {"action": "context", "ctx_size": 8192} and est.extra["context"]["from"] == 10**9
