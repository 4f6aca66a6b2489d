"""SGLang speculative decoding: the running cap an EAGLE-style algorithm sets (profiles.SGLANG_SPECULATIVE_RUNNING),
a NEXTN/MTP draft's weights and KV pool by release order (profiles.SGLANG_DRAFT_ORDER, core/memory/sglang_draft.py),
and a Gated DeltaNet target's intermediate mamba states per draft token (profiles.SGLANG_GATED_DELTA_SPEC)."""

from __future__ import annotations

import math

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate, sglang_config
from gpustack_guard.core.memory.engines.sglang import max_total_num_tokens
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.gated_delta import speculative_draft_tokens
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

H200 = (143771 * MiB, "NVIDIA H200")
DSV3 = catalog_facts("deepseek-ai/DeepSeek-V3")
NEXT = catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct")
NEXT_PER_REQUEST_TP4 = 19_316_736  # test_sglang_gated_delta: 36 linear layers, bf16 conv, fp32 ssm


def run(facts, flags, version, gpus):
    return estimate("sglang", facts, list(gpus), flags, version, Policy(), {})


def test_rows_are_keyed_where_the_wheels_changed():
    assert [(r.since, r.draft_weights_first) for r in P.SGLANG_DRAFT_ORDER] == [("0.0.0", False), ("0.5.14", True)]
    assert [(r.since, r.rule) for r in P.SGLANG_GATED_DELTA_SPEC] == [
        ("0.0.0", ""), ("0.5.8", "reserve-running"), ("0.5.13", "")]


@pytest.mark.parametrize("flags,arch,tokens", [
    ({}, "Qwen3NextForCausalLM", 4),  # auto_choose_speculative_params: (3, 1, 4)
    ({}, "LlamaForCausalLM", 8),  # (5, 4, 8)
    ({"speculative-num-steps": "5", "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "9"}, "X", 6),
    ({"speculative-num-steps": "3", "speculative-eagle-topk": "2", "speculative-num-draft-tokens": "6"}, "X", 6),
])
def test_draft_tokens_as_sglang_resolves_them(flags, arch, tokens):
    cfg = sglang_config({"speculative-algorithm": "EAGLE", **flags}, "0.5.9")
    assert speculative_draft_tokens(cfg, arch) == tokens


def test_an_eagle_style_algorithm_caps_running_requests_at_48():
    plain = run(DSV3, {"tp-size": "8"}, "0.5.9", (H200,) * 8)
    spec = run(DSV3, {"tp-size": "8", "speculative-algorithm": "NEXTN"}, "0.5.9", (H200,) * 8)
    given = run(DSV3, {"tp-size": "8", "speculative-algorithm": "NEXTN", "max-running-requests": "16"}, "0.5.9",
                (H200,) * 8)
    ngram = run(DSV3, {"tp-size": "8", "speculative-algorithm": "NGRAM"}, "0.5.9", (H200,) * 8)
    assert (plain.max_num_seqs, spec.max_num_seqs, given.max_num_seqs, ngram.max_num_seqs) == (4, 48, 16, 4)


def test_deepseek_v3_nextn_draft_at_tp8_on_two_releases():
    layer = weight_layout(DSV3).per_layer[-1]  # the MTP layer is built as the target's last (MoE) layer
    assert layer == 11_511_946_864
    whole = weight_layout(DSV3).per_layer_replicated[-1]  # MLA's latent projections, norms, router: every rank
    assert whole == 18_816_624
    draft = math.ceil((layer - whole) / 8) + whole + 2 * math.ceil(129_280 / 8) * 7168 * 2 + \
        (2 * 7168 * 7168 + 3 * 7168) * 2
    assert draft == 2_124_361_328
    flags = {"tp-size": "8", "speculative-algorithm": "NEXTN"}
    # up to 0.5.13 the draft loads after the target's pool: the pool is the one the fraction gives the target alone
    old = run(DSV3, flags, "0.5.9", (H200,) * 8)
    pre, fraction = old.extra["free_before_weights"], old.extra["mem_fraction_static"]
    assert fraction == 0.882  # 0.5.3-0.5.9 keep 2 GiB for an EAGLE-style draft
    assert old.kv_bytes_per_token == 61 * 1152  # 61 layers of the 576-wide bf16 latent; the draft keeps one
    assert old.kv_capacity_tokens == max_total_num_tokens(pre, old.weights, fraction, 61 * 1152, 1) == 642_539
    d = old.extra["speculative_draft"]
    assert (d["layers"], d["weights"], d["kv_bytes_per_token"], d["kv_tokens"], d["kv_cache"]) == \
        (1, draft, 1152, 642_539, 642_539 * 1152)
    assert d["weights_before_target_pool"] is False
    # from 0.5.14 the draft's weights are resident when the target's pool is profiled: the pool shrinks by them
    new = run(DSV3, flags, "0.5.14", (H200,) * 8)
    pre, fraction = new.extra["free_before_weights"], new.extra["mem_fraction_static"]
    assert new.kv_capacity_tokens == max_total_num_tokens(pre, new.weights + draft, fraction, 61 * 1152, 1) == 620_719
    assert new.extra["speculative_draft"]["weights_before_target_pool"] is True
    assert "scheduler.py@v0.5.14" in new.extra["speculative_draft"]["source"]
    # what the draft keeps outside the static part: its pool, and before 0.5.14 its weights
    plain_old = run(DSV3, {"tp-size": "8", "mem-fraction-static": "0.882"}, "0.5.9", (H200,) * 8)
    assert old.headroom_needed - plain_old.headroom_needed == draft + 642_539 * 1152
    assert "1 MTP layer(s): 1.98 GiB" in old.notes[0]


def test_a_draft_of_its_own_is_named_unsized():
    est = run(DSV3, {"tp-size": "8", "speculative-algorithm": "EAGLE3",
                     "speculative-draft-model-path": "some/eagle3"}, "0.5.9", (H200,) * 8)
    assert "speculative_draft" not in est.extra
    assert "not sized (gsg reads no draft config)" in est.notes[0]


def test_eagle_is_nextn_and_a_draft_path_overrides_the_mtp_layers():
    # SGLang renames NEXTN to EAGLE: the same draft of the model's own MTP layer
    flags = {"tp-size": "8", "speculative-algorithm": "NEXTN"}
    nextn = run(DSV3, flags, "0.5.9", (H200,) * 8)
    eagle = run(DSV3, {**flags, "speculative-algorithm": "EAGLE"}, "0.5.9", (H200,) * 8)
    assert eagle.extra["speculative_draft"] == nextn.extra["speculative_draft"]
    assert eagle.kv_capacity_tokens == nextn.kv_capacity_tokens == 642_539
    # --speculative-draft-model-path loads another checkpoint even under NEXTN: not the MTP layers, not sized
    given = run(DSV3, {**flags, "speculative-draft-model-path": "some/draft"}, "0.5.9", (H200,) * 8)
    assert "speculative_draft" not in given.extra
    assert "not sized (gsg reads no draft config)" in given.notes[0]


def test_qwen3_next_nextn_reserves_intermediate_states_on_two_releases():
    flags = {"tp-size": "4", "speculative-algorithm": "NEXTN"}
    # 0.5.12: EAGLE-style drafts keep 4 GiB (2 GiB in 0.5.9); no prefill graphs for Qwen3NextForCausalLM
    for version, fraction, slots, tokens in (("0.5.9", 0.886, 2136, 3_731_206), ("0.5.12", 0.872, 2085, 3_643_021)):
        est = run(NEXT, flags, version, (H200,) * 4)
        pool = est.extra["mamba_pool"]
        assert est.extra["mem_fraction_static"] == fraction
        # handle_max_mamba_cache: 48 running requests x 4 draft tokens of states off the rest before the slots
        assert pool["speculative_reserved_bytes"] == NEXT_PER_REQUEST_TP4 * 48 * 4 == 3_708_813_312
        assert (pool["slots"], est.kv_capacity_tokens, est.max_num_seqs) == (slots, tokens, 48)
        # MambaPool's intermediate caches: (max_num_reqs + 1) rows x draft tokens
        assert pool["speculative_state_bytes"] == 49 * 4 * NEXT_PER_REQUEST_TP4
    wide = run(NEXT, {**flags, "speculative-algorithm": "EAGLE", "speculative-num-steps": "3",
                      "speculative-eagle-topk": "2", "speculative-num-draft-tokens": "6",
                      "max-running-requests": "40"}, "0.5.9", (H200,) * 4)
    assert wide.extra["mamba_pool"]["speculative_reserved_bytes"] == NEXT_PER_REQUEST_TP4 * 40 * 6
    assert wide.max_num_seqs == 40


@pytest.mark.parametrize("version,message", [("0.5.5", "before 0.5.8"), ("0.5.13", "0.5.13\\+ solves")])
def test_gated_delta_speculation_outside_the_read_releases_is_refused(version, message):
    with pytest.raises(UnsupportedModel, match=message):
        run(NEXT, {"tp-size": "4", "speculative-algorithm": "NEXTN"}, version, (H200,) * 4)
