"""SGLang's Gated DeltaNet pools (engines/sglang.gated_delta_pools, profiles.SGLANG_GATED_DELTA_ROWS): a mamba pool of
per-request slots beside a KV pool of the full-attention layers, sized by the rules read in the 0.5.2-0.5.20 wheels."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate, sglang_config
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.gated_delta import (
    fixed_mamba_slots,
    gated_delta_pools,
    mamba_state_per_request,
    tracking_ratio,
)
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

NEXT = catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct")
H200 = (143771 * MiB, "NVIDIA H200")
B200 = (183359 * MiB, "NVIDIA B200")
NEXT_PER_REQUEST_TP4 = 36 * (3 * 8192 // 4 * 2 + 32 // 4 * 128 * 128 * 4)  # 36 linear layers, bf16 conv, fp32 ssm

# The 8-layer reduced Qwen3.5 MoE of a public SGLang run (6 linear, 2 full layers; mamba_ssm_dtype float32; a dev
# build, so only the per-slot state and the rows are checked): "Mamba Cache is allocated. max_mamba_cache_size: 512,
# conv_state size: 0.14GB, ssm_state size: 6.01GB"; "KV Cache is allocated. ... #tokens: 15,809,808, K size: 30.15 GB"
QWEN35_REDUCED = {
    "architectures": ["Qwen3_5MoeForCausalLM"], "model_type": "qwen3_5_moe_text", "hidden_size": 2048,
    "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
    "vocab_size": 248320, "max_position_embeddings": 262144, "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32", "dtype": "bfloat16",
    "num_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 512, "intermediate_size": 512,
    "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(8)]}


def run(facts, flags, version, gpus=(H200,) * 4):
    return estimate("sglang", facts, list(gpus), flags, version, Policy(), {})


def cfg(flags, version):
    return sglang_config(flags, version)


def test_rows_are_keyed_where_the_wheels_changed():
    assert [(r.since, r.modelled, r.sizing) for r in P.SGLANG_GATED_DELTA_ROWS] == [
        ("0.0.0", False, ""), ("0.5.2", True, "fixed"), ("0.5.4", True, "ratio"),
        ("0.5.7", True, "explicit-first"), ("0.5.9", True, "running-or-ratio"),
        ("0.5.12", True, "running-or-ratio"), ("0.5.16", True, "running-or-ratio"), ("0.5.17", True, "padded-ratio"),
        ("0.5.18", True, "padded-ratio"), ("0.5.21", False, "")]
    # the budget term's sources are the rows, one for one
    assert [t.since for t in P.TERM_SOURCES["sglang"]["mamba_state_bytes_per_gpu"]] == \
        [r.since for r in P.SGLANG_GATED_DELTA_ROWS]


def test_state_per_request_matches_a_public_log_of_a_second_model():
    facts = facts_from_config(QWEN35_REDUCED, "test")
    per_request, ssm = mamba_state_per_request(facts, cfg({}, "0.5.9"), P.sglang_gated_delta_row("0.5.9"))
    assert (per_request, ssm) == (6 * (24_576 * 2 + 524_288 * 4), 4)
    # 512 slots allocate 513 rows (MambaPool: size + 1), printed in GiB with two decimals
    assert (round(6 * 24_576 * 2 * 513 / GiB, 2), round(6 * 524_288 * 4 * 513 / GiB, 2)) == (0.14, 6.01)
    # the KV cell counts the 2 full layers only: K 30.15 GB over 15,809,808 tokens is 2,048 bytes
    assert run(facts, {"mem-fraction-static": "0.3"}, "0.5.9", gpus=(H200,)).kv_bytes_per_token == 4096
    assert round(15_809_808 * 2048 / GiB, 2) == 30.15


def test_ssm_dtype_by_release():
    qwen35 = facts_from_config({**QWEN35_REDUCED, "mamba_ssm_dtype": "bfloat16"}, "test")
    row9, row4 = P.sglang_gated_delta_row("0.5.9"), P.sglang_gated_delta_row("0.5.4")
    assert mamba_state_per_request(qwen35, cfg({}, "0.5.9"), row9)[1] == 2  # 0.5.9+: the config's dtype
    assert mamba_state_per_request(qwen35, cfg({}, "0.5.4"), row4)[1] == 4  # before: float32 unless the flag
    assert mamba_state_per_request(qwen35, cfg({"mamba-ssm-dtype": "bfloat16"}, "0.5.4"), row4)[1] == 2
    with pytest.raises(ValueError, match="float16"):
        mamba_state_per_request(qwen35, cfg({"mamba-ssm-dtype": "float16"}, "0.5.4"), row4)


@pytest.mark.parametrize(("flags", "version", "slots"), [
    ({}, "0.5.2", 512),  # radix cache forced off: 512
    ({"max-running-requests": "64"}, "0.5.2", 64),
    ({}, "0.5.5", None),  # radix cache on: the ratio
    ({"max-mamba-cache-size": "256"}, "0.5.5", None),  # the flag is overwritten with the radix cache on
    ({"max-mamba-cache-size": "256", "disable-radix-cache": None}, "0.5.5", 256),
    ({"disable-radix-cache": None}, "0.5.8", 512),
    ({"max-mamba-cache-size": "256"}, "0.5.8", 256),  # 0.5.7+: the flag wins
    ({"disable-radix-cache": None}, "0.5.10", None),  # 0.5.9+: no 512, the ratio
    ({"disable-radix-cache": None, "max-running-requests": "64"}, "0.5.10", 64),
    ({"max-running-requests": "64"}, "0.5.15", None),  # the radix cache on: the ratio, whatever the requests
])
def test_slots_from_the_flags_or_the_ratio(flags, version, slots):
    assert fixed_mamba_slots(cfg(flags, version), P.sglang_gated_delta_row(version)) == slots


def test_pools_split_the_rest_in_sglangs_gib_arithmetic():
    # 100 GiB free, 40 GiB weights, fraction 0.9: 50 GiB left; ratio 0.9 gives the pool 0.9 / 1.9 of it
    assert gated_delta_pools(100 * GiB, 40 * GiB, 0.9, 12_288, 1, NEXT_PER_REQUEST_TP4, None, 0.9) == \
        (2_300_314, 1316)
    assert gated_delta_pools(100 * GiB, 40 * GiB, 0.9, 12_288, 1, NEXT_PER_REQUEST_TP4, 512, 0.9) == \
        ((50 * GiB - 512 * NEXT_PER_REQUEST_TP4) // 12_288, 512)
    assert gated_delta_pools(100 * GiB, 40 * GiB, 0.9, 12_288, 64, NEXT_PER_REQUEST_TP4, 512, 0.9)[0] == 3_564_160


def test_qwen3_next_on_two_releases_shows_the_mamba_pool_as_a_term():
    old = run(NEXT, {"tp-size": "4"}, "0.5.2")
    pool = old.extra["mamba_pool"]
    assert NEXT_PER_REQUEST_TP4 == 19_316_736
    assert (pool["slots"], pool["allocated_rows"], pool["bytes"], old.kv_bytes_per_token) == \
        (512, 513, 513 * 19_316_736, 12 * 1024)
    assert (old.max_num_seqs, pool["radix_cache"]) == (512, False)
    new = run(NEXT, {"tp-size": "4"}, "0.5.5")
    pool = new.extra["mamba_pool"]
    assert (pool["slots"], pool["sizing"], pool["radix_cache"], new.max_num_seqs) == (2277, "ratio 0.9", True, 759)
    assert new.kv_capacity_tokens < old.kv_capacity_tokens  # the ratio takes 0.9 / 1.9 of the rest
    terms = {t.term: t for t in budget_terms(new)}
    assert terms["mamba_state_bytes_per_gpu"].value == 2278 * 19_316_736
    assert terms["mamba_state_bytes_per_gpu"].rule == "mamba-slots-ratio"
    assert "mamba_state_bytes_per_gpu" in [b["term"] for b in new.as_json()["budget"]]


def test_attention_only_models_have_no_mamba_term():
    llama = catalog_facts("meta-llama/Llama-3.1-8B-Instruct")
    est = run(llama, {}, "0.5.5", gpus=(H200,))
    assert "mamba_pool" not in est.extra
    assert "mamba_state_bytes_per_gpu" not in [t.term for t in budget_terms(est)]


@pytest.mark.parametrize(("facts", "flags", "version", "message"), [
    (NEXT, {"tp-size": "4"}, "0.5.1", "before 0.5.2"),
    (NEXT, {"tp-size": "4"}, "0.5.21", "0.5.21\\+"),
    (NEXT, {"tp-size": "4"}, "0.5.23", "fused_entry_bytes"),
    (NEXT, {"tp-size": "4", "enable-unified-memory": None}, "0.5.16", "enable-unified-memory"),
    (NEXT, {"tp-size": "4"}, "0.5.16", "SM100"),  # with B200s below: the backend and page size are picked
    (NEXT, {"tp-size": "4", "mamba-radix-cache-strategy": "extra_buffer_lazy", "disable-overlap-schedule": None},
     "0.5.16", "overlap schedule"),
    (NEXT, {"tp-size": "4", "mamba-scheduler-strategy": "extra_buffer"}, "0.5.15", "extra_buffer"),
    (NEXT, {"tp-size": "4", "speculative-algorithm": "EAGLE"}, "0.5.5", "speculative decoding"),
    (NEXT, {"tp-size": "2", "pp-size": "2"}, "0.5.5", "pipeline parallelism"),
    (NEXT, {"tp-size": "4", "mamba-scheduler-strategy": "extra_buffer"}, "0.5.10", "extra_buffer"),
    (NEXT, {"tp-size": "4", "enable-dp-attention": None}, "0.5.5", "enable-dp-attention"),
    (NEXT, {"tp-size": "4", "attention-backend": "trtllm_mha"}, "0.5.10", "trtllm_mha"),
    (NEXT, {"tp-size": "3"}, "0.5.5", "does not divide"),
    (facts_from_config(QWEN35_REDUCED, "test"), {}, "0.5.8", "no Qwen3.5/3.6 model"),
])
def test_layouts_not_read_get_no_verdict(facts, flags, version, message):
    gpus = (B200,) * 4 if message == "SM100" else (H200,) * 4
    with pytest.raises(UnsupportedModel, match=message):
        run(facts, flags, version, gpus=gpus)


def test_verify_reads_the_mamba_pool_line_as_its_term():
    from gpustack_guard.core.verify.logparse import parse_log

    lines = ["[2026-09-20 10:00:00] Mamba Cache is allocated. max_mamba_cache_size: 512, conv_state size: 0.14GB, "
             "ssm_state size: 6.01GB\n",
             "[2026-09-20 10:00:00] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 15,809,808, K size: "
             "30.15 GB, V size: 30.15 GB\n"]
    log, _ = parse_log(lines, "sglang")
    terms = log.terms()
    assert terms["mamba_state_bytes_per_gpu"] == pytest.approx((0.14 + 6.01) * GiB)
    assert terms["kv_capacity_tokens"] == 15_809_808
    # 0.5.2-0.5.3 print no slot count (the figures of Qwen3-Next at TP 4: 513 rows of 36 layers)
    log, _ = parse_log(["Mamba Cache is allocated. conv_state size: 0.21GB, ssm_state size: 9.02GB \n"], "sglang")
    assert log.terms()["mamba_state_bytes_per_gpu"] == pytest.approx((0.21 + 9.02) * GiB)


# --- 0.5.16-0.5.20: kv_cache_configurator.py sizes the pools ------------------------------------------------------


@pytest.mark.parametrize(("flags", "version", "ratio"), [
    ({}, "0.5.15", 3),  # before 0.5.16: 3 slots a running request with the radix cache on
    ({}, "0.5.16", 5),  # auto resolves to extra_buffer under the overlap schedule: 3 + 2 ping-pong slots
    ({"disable-overlap-schedule": None}, "0.5.16", 3),  # auto without overlap (page 1): no_buffer
    ({"disable-overlap-schedule": None, "mamba-radix-cache-strategy": "extra_buffer"}, "0.5.16", 4),
    ({"mamba-scheduler-strategy": "extra_buffer_lazy"}, "0.5.20", 4),  # the deprecated alias, lazy: 3 + 1
    ({"linear-attn-backend": "flashinfer"}, "0.5.20", 3),  # extra_buffer needs the triton backend
    ({"disable-radix-cache": None}, "0.5.20", 1),
])
def test_slots_a_running_request_takes_by_strategy(flags, version, ratio):
    assert tracking_ratio(NEXT, cfg({"tp-size": "4", **flags}, version), P.sglang_gated_delta_row(version)) == ratio


def test_padding_row_comes_off_the_ratio_budget_from_0_5_17():
    # the same 50 GiB rest as above: one slot fewer, the KV rest unchanged (2,300,314 tokens either way)
    assert gated_delta_pools(100 * GiB, 40 * GiB, 0.9, 12_288, 1, NEXT_PER_REQUEST_TP4, None, 0.9, padded=True) == \
        (2_300_314, 1315)
    # fixed slots: the padding row now comes off the KV rest too
    assert gated_delta_pools(100 * GiB, 40 * GiB, 0.9, 12_288, 1, NEXT_PER_REQUEST_TP4, 512, 0.9, padded=True) == \
        ((50 * GiB - 513 * NEXT_PER_REQUEST_TP4) // 12_288, 512)


def test_qwen3_next_on_0_5_15_0_5_16_and_0_5_20():
    old, mid, new = (run(NEXT, {"tp-size": "4"}, v) for v in ("0.5.15", "0.5.16", "0.5.20"))
    shape = [(e.kv_capacity_tokens, e.extra["mamba_pool"]["slots"], e.extra["mamba_pool"]["allocated_rows"],
              e.max_num_seqs, e.extra["mamba_pool"]["rule"]) for e in (old, mid, new)]
    # no prefill-graph reserve: SGLang turns piecewise graphs off for Qwen3NextForCausalLM
    # (profiles.SGLANG_PREFILL_GRAPHS_OFF_ARCHS; 464 MiB more of fraction than before round 29)
    assert shape == [(3_979_736, 2277, 2278, 759, "running-or-ratio"),  # 2277 // 3
                     (3_979_736, 2277, 2278, 455, "running-or-ratio"),  # 2277 // 5 (extra_buffer)
                     (3_979_736, 2276, 2277, 455, "padded-ratio")]  # one slot fewer, same bytes off the rest
    assert new.extra["prefill_graph_reserve"] == 0
    terms = {t.term: t for t in budget_terms(new)}
    assert terms["mamba_state_bytes_per_gpu"].value == 2277 * NEXT_PER_REQUEST_TP4
    assert terms["mamba_state_bytes_per_gpu"].rule == "mamba-slots-padded-ratio"
    # flags set the slots: the padding row is charged to the KV rest from 0.5.17
    fixed = {"tp-size": "4", "max-mamba-cache-size": "300"}
    assert [run(NEXT, fixed, v).kv_capacity_tokens for v in ("0.5.16", "0.5.20")] == [7_087_580, 7_086_008]
    assert run(NEXT, fixed, "0.5.20").max_num_seqs == 60  # 300 // 5
    radix_off = run(NEXT, {"tp-size": "4", "disable-radix-cache": None, "max-running-requests": "64"}, "0.5.20")
    assert (radix_off.extra["mamba_pool"]["slots"], radix_off.max_num_seqs) == (64, 64)
    # on B200s with --attention-backend triton (page 1) the pool is sized
    b200 = run(NEXT, {"tp-size": "4", "attention-backend": "triton"}, "0.5.16", gpus=(B200,) * 4)
    assert (b200.kv_capacity_tokens, b200.extra["mamba_pool"]["slots"], b200.max_num_seqs) == (5_213_951, 2985, 597)


@pytest.mark.parametrize(("model", "version", "figures"), [
    ("Qwen/Qwen3.5-27B", "0.5.16", (571_525, 218, 153_944_064, 43)),
    ("Qwen/Qwen3.5-27B", "0.5.17", (571_525, 217, 153_944_064, 43)),
    ("Qwen/Qwen3.6-35B-A3B", "0.5.16", (1_427_910, 408, 64_389_120, 81)),
    ("Qwen/Qwen3.6-35B-A3B", "0.5.17", (1_427_910, 407, 64_389_120, 81)),
])
def test_qwen3_5_and_3_6_catalog_entries_on_one_h200(model, version, figures):
    est = run(catalog_facts(model), {}, version, gpus=(H200,))
    pool = est.extra["mamba_pool"]
    assert (est.kv_capacity_tokens, pool["slots"], pool["state_bytes_per_request"], est.max_num_seqs) == figures


@pytest.mark.parametrize("model", ["Qwen/Qwen3.5-27B", "Qwen/Qwen3.6-35B-A3B"])
def test_catalog_qwen3_5_entries_are_refused_before_sglang_0_5_9(model):
    """The catalog's Qwen3.5/3.6 are multimodal configs whose text part names no class: their architecture is the
    top-level one (Qwen3_5ForConditionalGeneration, as vLLM's model_config reads it), which the release check knows
    (gated_delta.is_qwen3_5 compares it lowercased, and knows the text model type too)."""
    facts = catalog_facts(model)
    assert facts.architecture.startswith("Qwen3_5") and facts.architecture.endswith("ForConditionalGeneration")
    with pytest.raises(UnsupportedModel, match="SGLang before 0.5.9 has no Qwen3.5/3.6 model"):
        run(facts, {}, "0.5.5", gpus=(H200,))
