"""An MTP drafter made of the target's own layers (profiles.VLLM_MTP_DRAFT): its weights as the V1 drafter keeps them,
its attention layers in the KV pool, per release; other drafts keep the note."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory import terms as T
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import estimate_vllm
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

H200 = "NVIDIA H200"
DEEPSEEK = catalog_facts("deepseek-ai/DeepSeek-V3.1")  # num_nextn_predict_layers 1, MLA, FP8 blocks
GLM = catalog_facts("zai-org/GLM-4.7")  # num_nextn_predict_layers 1, GQA, bf16


def estimate(facts, version: str, spec: str | None, **flags: str):
    given = {"tensor-parallel-size": "8", **{k.replace("_", "-"): v for k, v in flags.items()}}
    if spec:
        given["speculative-config"] = spec
    return estimate_vllm(facts, 141 * GiB, vllm_config(given, Policy()), version=version, gpu_name=H200)


MTP1 = '{"method": "mtp", "num_speculative_tokens": 1}'
DEEPSEEK_MTP3 = '{"method": "deepseek_mtp", "num_speculative_tokens": 3}'


# one MTP layer at TP 8: its decoder layer (the target's MoE shape and quantisation, split over TP as the target's
# are: MLA's latent projections, their norms and the router whole on every rank), eh_proj 2H x H
# and three norms whole on every rank (bf16), and up to 0.14 its SharedHead.head (V x H / 8, bf16)
@pytest.mark.parametrize("facts,version,spec,decoder,projections,heads,kv_added", [
    (DEEPSEEK, "0.11.0", DEEPSEEK_MTP3, 1_455_457_904, 2 * (2 * 7168 * 7168 + 3 * 7168), 129280 * 7168 * 2 // 8,
     1152),  # MLA: (512 + 64) x 2 bytes on every rank
    (DEEPSEEK, "0.24.0", DEEPSEEK_MTP3, 1_455_457_904, 205_563_904, 0, 1152),
    (GLM, "0.11.0", MTP1, 983_906_408, 2 * (2 * 5120 * 5120 + 3 * 5120), 151552 * 5120 * 2 // 8,
     512),  # 8 KV heads / TP 8 x 128 x K and V x 2 bytes
    (GLM, "0.24.0", MTP1, 983_906_408, 104_888_320, 0, 512),
    (GLM, "0.34.0", MTP1, 983_906_408, 104_888_320, 0, 512),
])
def test_the_mtp_layers_are_counted_as_the_drafter_loads_them(facts, version, spec, decoder, projections, heads,
                                                              kv_added):
    base, drafted = estimate(facts, version, None), estimate(facts, version, spec)
    draft = drafted.extra["speculative_draft"]
    assert (draft["layers"], draft["decoder_layers"], draft["projections_and_norms"], draft["shared_heads"]) == \
        (1, decoder, projections, heads)
    assert drafted.weights - base.weights == draft["weights"] == decoder + projections + heads
    assert (draft["kv_layers"], draft["kv_bytes_per_token"]) == (1, kv_added)
    assert drafted.kv_bytes_per_token == base.kv_bytes_per_token + kv_added
    assert drafted.kv_capacity_tokens < base.kv_capacity_tokens
    assert draft["profile_run"] == draft["cuda_graphs"] == "not added"


# the weights hold the target's rope cos/sin cache once (the drafter's layers ask get_rope for the same key):
# DeepSeek-V3's 163,840 x 64 x 2 B (20 MiB), GLM's 202,752 x 64 x 2 B (profiles.VLLM_ROPE_CACHE)
@pytest.mark.parametrize("facts,version,spec,weights,kv_per_token,tokens", [
    (DEEPSEEK, "0.11.0", DEEPSEEK_MTP3, 87_052_188_512, 71_424, 630_976),
    (DEEPSEEK, "0.24.0", DEEPSEEK_MTP3, 86_820_518_752, 71_424, 646_256),
    (GLM, "0.11.0", MTP1, 89_508_190_800, 47_616, 898_848),
    (GLM, "0.24.0", MTP1, 89_314_204_240, 47_616, 917_840),
])
def test_exact_figures_of_two_targets_at_two_releases(facts, version, spec, weights, kv_per_token, tokens):
    est = estimate(facts, version, spec)
    assert (est.weights, est.kv_bytes_per_token, est.kv_capacity_tokens) == (weights, kv_per_token, tokens)


def test_the_note_names_what_is_counted_and_what_is_not():
    notes = [n for n in estimate(GLM, "0.24.0", MTP1).notes if "speculative" in n]
    assert notes == ["--speculative-config (method mtp): the CUDA graphs are sized for 2 tokens per decode request "
                     "(profiles.VLLM_SPEC_CAPTURE); the target's 1 MTP layer(s) are counted as the drafter loads them "
                     "(1.01 GiB per rank, 1 more KV layer(s); profiles.VLLM_MTP_DRAFT); the drafter's profile run "
                     "and CUDA graphs are not"]


def test_the_budget_rows_name_the_draft_and_its_sources():
    rows = {r.term: r for r in T.budget_terms(estimate(DEEPSEEK, "0.11.0", DEEPSEEK_MTP3))}
    for term in (T.WEIGHTS, T.KV_CACHE, T.KV_TOKENS):
        assert rows[term].rule.endswith("+mtp-draft-layers")
        assert "deepseek_mtp.py" in rows[term].source and "eagle.py@v0.10.1" in rows[term].source
    assert "+mtp" not in rows[T.NON_TORCH].rule
    assert "extra" in estimate(GLM, "0.24.0", MTP1).as_json() and \
        estimate(GLM, "0.24.0", MTP1).as_json()["extra"]["speculative_draft"]["kind"] == "mtp-layers"


def test_the_release_rows_are_keyed_and_sourced():
    assert P.vllm_mtp_draft_row("0.9.2").counted is False
    assert P.vllm_mtp_draft_row("0.14.0").keeps_mtp_head and not P.vllm_mtp_draft_row("0.16.0").keeps_mtp_head
    assert all("@v" in row.source for row in P.VLLM_MTP_DRAFT[1:])


@pytest.mark.parametrize("facts,version,spec,flags", [
    (GLM, "0.24.0", MTP1, {"pipeline_parallel_size": "2"}),  # PP > 1: the drafter's own embedding, not read
    (GLM, "0.9.2", MTP1, {}),  # before 0.10.1: not read
    (GLM, "0.24.0", '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 3}', {}),  # a separate draft
    (catalog_facts("moonshotai/Kimi-K2-Instruct"), "0.24.0", MTP1, {}),  # num_nextn_predict_layers 0
    (catalog_facts("Qwen/Qwen3-8B"), "0.24.0", MTP1, {}),  # a target whose MTP module was not read
])
def test_other_drafts_keep_the_note_and_add_nothing(facts, version, spec, flags):
    drafted, base = estimate(facts, version, spec, **flags), estimate(facts, version, None, **flags)
    assert drafted.extra["speculative_draft"] == {}
    assert (drafted.weights, drafted.kv_bytes_per_token) == (base.weights, base.kv_bytes_per_token)
    assert any("the drafter is not counted" in n for n in drafted.notes)


# --- Gated DeltaNet targets (profiles.VLLM_GATED_DELTA_SPEC): Qwen3-Next at TP 4 and Qwen3.5-27B on one H100 ----

H100 = "NVIDIA H100 80GB HBM3"
QWEN3_NEXT = catalog_facts("Qwen/Qwen3-Next-80B-A3B-Instruct")
QWEN3_5 = catalog_facts("Qwen/Qwen3.5-27B")
MTP2 = '{"method": "mtp", "num_speculative_tokens": 2}'


def gdn(facts, tp: str, version: str, spec: str | None, **flags):
    given = {"tensor-parallel-size": tp, "max-model-len": "32768", **flags}
    if spec:
        given["speculative-config"] = spec
    return estimate_vllm(facts, 80 * GiB, vllm_config(given, Policy()), version=version, gpu_name=H100)


# the state blocks with and without the draft, against the default 1,024 sequences (GSG056): Qwen3.5-27B on one
# H100 has fewer, so vLLM 0.20+ refuses it at the defaults whether it drafts or not
REFUSED = "mamba-blocks-below-max-num-seqs"


@pytest.mark.parametrize("facts,tp,version,flags,weights,tokens,block,mode,pages,state,size,blocks,verdict", [
    # conv rows kernel - 1 + 2 = 5: Qwen3-Next at TP 4, (2 x 16 x 128 + 32 x 128) / 4 x 5 x 2 + 8 x 128 x 128 x 2
    (QWEN3_NEXT, "4", "0.24.0", {"no-enable-prefix-caching": None}, 40_695_995_008, 2_320_933, 288, "none", 9,
     2048 * 5 * 2 + 8 * 128 * 128 * 2, 13, (10_234, 8_712), "fits"),
    (QWEN3_NEXT, "4", "0.30.0", {}, 40_695_995_008, 2_395_704, 288, "align", 12, 282_624, 13, (10_837, 9_212),
     "fits"),
    (QWEN3_5, "1", "0.24.0", {"no-enable-prefix-caching": None}, 55_697_073_632, 205_127, 800, "none", 9,
     3_248_128, 17, (354, 313), REFUSED),
    (QWEN3_5, "1", "0.30.0", {}, 55_697_073_632, 208_355, 800, "align", 12, 3_248_128, 17, (386, 337),
     REFUSED),  # V2 runner: outputs held
])
def test_a_gated_delta_target_with_its_mtp_layer_is_sized(facts, tp, version, flags, weights, tokens, block, mode,
                                                          pages, state, size, blocks, verdict):
    base, est = gdn(facts, tp, version, None, **flags), gdn(facts, tp, version, MTP2, **flags)
    g = est.extra["gated_delta"]
    assert (est.weights, est.kv_capacity_tokens, est.block_size) == (weights, tokens, block)
    # 1 + 2 state pages per linear group in mode none, 2 + 2 in align; three linear groups beside one full group
    assert (g["mamba_cache_mode"], g["pages_per_sequence_state"], g["linear_attention_groups"]) == (mode, pages, 3)
    assert (g["state_bytes_per_sequence_layer"], g["speculative_blocks"], g["draft_full_attention_layers"]) == \
        (state, 2, 1)
    # the MTP layer's attention makes the full-attention group one larger: 12 + 1 (Qwen3-Next), 16 + 1 (Qwen3.5-27B)
    assert g["group_size"] == size == base.extra["gated_delta"]["group_size"] + 1
    draft = est.extra["speculative_draft"]
    assert est.weights - base.weights == draft["weights"] and draft["shared_heads"] == 0
    assert draft["speculative_state_blocks"] == 2 and est.verdict == base.verdict == verdict
    assert (base.extra["state_blocks"], est.extra["state_blocks"]) == blocks


def test_the_gated_delta_mtp_weights_by_part():
    next_draft = gdn(QWEN3_NEXT, "4", "0.24.0", MTP2, **{"no-enable-prefix-caching": None}).extra["speculative_draft"]
    # fc 2H x H split over TP 4 and three norms whole, H = 2048, bf16
    assert next_draft["projections_and_norms"] == 2 * 2048 * 2048 * 2 // 4 + 3 * 2048 * 2 == 4_206_592
    assert next_draft["decoder_layers"] == 821_038_336
    dense_draft = gdn(QWEN3_5, "1", "0.24.0", MTP2, **{"no-enable-prefix-caching": None}).extra["speculative_draft"]
    assert dense_draft["projections_and_norms"] == 2 * 5120 * 5120 * 2 + 3 * 5120 * 2
    assert dense_draft["kv_bytes_per_token"] == 4096 and dense_draft["kv_layers"] == 1


@pytest.mark.parametrize("facts,version,spec,message", [
    (QWEN3_NEXT, "0.14.0", MTP2, "vLLM before 0.16.0 sizes a Gated DeltaNet model's speculative state blocks"),
    (QWEN3_NEXT, "0.24.0", '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 2}',
     "gsg reads them only for the target's own MTP layer"),
])
def test_other_gated_delta_drafts_stay_refused(facts, version, spec, message):
    from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported

    with pytest.raises(GatedDeltaUnsupported, match=message):
        gdn(facts, "4", version, spec, **{"no-enable-prefix-caching": None})


@pytest.mark.parametrize("name", ["deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"])
def test_the_catalog_gives_deepseek_v3_and_r1_their_mtp_layer(name):
    # their published config.json has num_nextn_predict_layers 1, like V3.1's: the same drafter at TP 8
    est = estimate(catalog_facts(name), "0.24.0", DEEPSEEK_MTP3)
    assert est.extra["speculative_draft"]["weights"] == 1_455_457_904 + 205_563_904
    assert est.kv_bytes_per_token == 62 * 1152


def test_a_gated_delta_note_names_its_table():
    notes = [n for n in gdn(QWEN3_NEXT, "4", "0.24.0", MTP2, **{"no-enable-prefix-caching": None}).notes
             if "MTP layer" in n]
    assert len(notes) == 1 and "profiles.VLLM_GATED_DELTA_SPEC, with its speculative state pages" in notes[0]
