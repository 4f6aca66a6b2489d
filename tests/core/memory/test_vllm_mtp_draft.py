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


# one MTP layer at TP 8: its decoder layer (the target's MoE shape and quantisation, split over TP), eh_proj 2H x H
# and three norms whole on every rank (bf16), and up to 0.14 its SharedHead.head (V x H / 8, bf16)
@pytest.mark.parametrize("facts,version,spec,decoder,projections,heads,kv_added", [
    (DEEPSEEK, "0.11.0", DEEPSEEK_MTP3, 1_438_993_358, 2 * (2 * 7168 * 7168 + 3 * 7168), 129280 * 7168 * 2 // 8,
     1152),  # MLA: (512 + 64) x 2 bytes on every rank
    (DEEPSEEK, "0.24.0", DEEPSEEK_MTP3, 1_438_993_358, 205_563_904, 0, 1152),
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


@pytest.mark.parametrize("facts,version,spec,weights,kv_per_token,tokens", [
    (DEEPSEEK, "0.11.0", DEEPSEEK_MTP3, 86_020_048_932, 71_424, 645_440),
    (DEEPSEEK, "0.24.0", DEEPSEEK_MTP3, 85_788_379_172, 71_424, 660_704),
    (GLM, "0.11.0", MTP1, 89_482_238_544, 47_616, 899_408),
    (GLM, "0.24.0", MTP1, 89_288_251_984, 47_616, 918_400),
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
