"""vLLM's mamba cache modes with prefix caching (issue 32; profiles.VLLM_MAMBA_CACHE_MODE_ROWS): a Mamba-2 hybrid in
mode "all" (a state page per block of tokens, the block a multiple of lcm(SSD chunk, kernel alignment)) or "align"
(2 pages, 3 from 0.32.0), by release; --mamba-cache-mode and --mamba-block-size read for Mamba-2 and Gated DeltaNet
hybrids alike. Read in the wheels 0.12.0 .. 0.15.1, 0.20.0, 0.26.0 .. 0.34.0 (models/config.py MambaModelConfig and
HybridAttentionMambaModelConfig, platforms/interface.py _align_hybrid_block_size, v1/kv_cache_interface.py MambaSpec,
layers/mamba/mamba_mixer2.py, config/cache.py, engine/arg_utils.py, config/vllm.py validate_mamba_block_size).

The Nemotron-H-8B and Granite-4.0-H-Small configs are test_vllm_mamba2.py's with the chunk their models name
(chunk_size 128, NemotronHConfig's default; mamba_chunk_size 256)."""

from __future__ import annotations

import pytest
from test_gated_delta import NEXT, QWEN36_27B_TEXT
from test_vllm_mamba2 import GRANITE_4_H_SMALL, H100, L4, NEMOTRON_H_8B, REFUSED

from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate as engine_estimate
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported, UnsupportedModel
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.mamba2 import Mamba2KV
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

NEMOTRON = {**NEMOTRON_H_8B, "chunk_size": 128}
GRANITE = {**GRANITE_4_H_SMALL, "mamba_chunk_size": 256}
H200 = (143771 * MiB, "NVIDIA H200")


def estimate(config, version, gpu=H100, **flags):
    name, total = gpu
    flags.setdefault("max_model_len", 8192)
    return estimate_vllm(facts_from_config(config, "test"), total, VllmConfig(**flags), version=version,
                         gpu_name=name)


def mamba(est):
    m = est.extra["mamba2"]
    return m["mamba_cache_mode"], m["attention_block_size"], m["page_bytes"]


@pytest.mark.parametrize("config,version,tp,tokens,block", [
    (NEMOTRON, "0.12.0", 1, 527, 640),    # bfloat16 states (no Nemotron override before 0.13.0): 5 x lcm(128, 16)
    (NEMOTRON, "0.26.0", 1, 1039, 1152),  # float32 temporal state: 9 x 128 ("none": 1,040)
    (GRANITE, "0.15.1", 1, 525, 768),     # 3 x lcm(256, 16) ("none": 528)
    (GRANITE, "0.26.0", 2, 525, 768)])    # TP 2 halves the state and the token's K/V alike
def test_all_mode_block_is_a_multiple_of_the_chunk(config, version, tp, tokens, block):
    s = Mamba2KV(facts_from_config(config, "test"), tp, None, None, version, H100[0], mode="all")
    assert -(-s.state_bytes // s.token_bytes) == tokens
    assert (s.block_size, s.alignment, s.page_bytes, s.cache_mode) == \
        (block, config.get("chunk_size") or config["mamba_chunk_size"], block * s.token_bytes, "all")
    assert s.request_bytes(8192) == (s.full_layers + s.linear_layers) * -(-8192 // block) * s.page_bytes


def test_all_mode_takes_a_page_per_block_of_tokens_on_two_models():
    # Nemotron-H-8B, 0.26.0's default (prefix caching on, mode "all"): 3,086 blocks of 4 pages of 4,718,592 B;
    # a sequence of 8,192 tokens takes 8 pages in the full group and in each of the 6 Mamba-2 groups
    nem = estimate(NEMOTRON, "0.26.0")
    assert mamba(nem) == ("all", 1152, 1152 * 4096)
    assert nem.extra["state_blocks"] == nem.kv_cache // (4 * 4_718_592) == 3086
    assert nem.kv_capacity_tokens == 3086 * 8192 // (7 * 8) == 451_437
    assert estimate(NEMOTRON, "0.26.0", enable_prefix_caching=False).kv_capacity_tokens == 2_000_018
    assert any("mamba cache mode 'all' keeps one state page per block" in n for n in nem.notes)
    # Granite-4.0-H-Small at TP 2, 0.27.0, 32,768 tokens: 1 full + 9 Mamba-2 groups of 43 pages
    gra = estimate(GRANITE, "0.27.0", tensor_parallel_size=2, max_model_len=32768)
    assert mamba(gra) == ("all", 768, 768 * 2048)
    assert gra.extra["state_blocks"] == gra.kv_cache // (4 * 1_572_864) == 6159
    assert gra.kv_capacity_tokens == 6159 * 32768 // (10 * 43) == 469_344
    assert gra.extra["mamba2"]["mode_rule"] == "0.15.0"


@pytest.mark.parametrize("config,version,tp,expected", [
    (NEMOTRON, "0.27.0", 1, ("all", 1152, 451_437)),
    (NEMOTRON, "0.28.0", 1, ("align", 1040, 3418 * 8192 // (8 + 6 * 2))),       # 1,400,012
    (NEMOTRON, "0.32.0", 1, ("align", 1040, 3431 * 8192 // (8 + 6 * 3))),       # a checkpoint page: 1,081,028
    (NEMOTRON, "0.34.0", 1, ("align", 1088, 3537 * 8192 // (8 + 6 * 3))),       # the 64-token floor: 1,114,427
    (GRANITE, "0.30.0", 2, ("align", 528, 9044 * 8192 // (16 + 9 * 2))),        # 2,179,072
    (GRANITE, "0.34.0", 2, ("align", 576, 8917 * 8192 // (15 + 9 * 3)))])       # 1,739,264
def test_the_default_mode_by_release(config, version, tp, expected):
    est = estimate(config, version, tensor_parallel_size=tp)
    m = est.extra["mamba2"]
    assert (m["mamba_cache_mode"], m["attention_block_size"], est.kv_capacity_tokens) == expected
    assert m["mode_rule"] == P.vllm_mamba_cache_mode_row(version).since


def test_gsg056_holds_the_all_mode_blocks_against_max_num_seqs():
    """Larger pages, fewer blocks: Nemotron-H-8B on an L4 at 0.26.0's default."""
    est = estimate(NEMOTRON, "0.26.0", L4)
    assert est.extra["state_blocks"] == est.kv_cache // (4 * 4_718_592) < est.max_num_seqs == 256
    assert est.verdict == REFUSED


def test_an_explicit_mode_is_honoured_where_the_release_has_it():
    assert mamba(estimate(NEMOTRON, "0.26.0", mamba_cache_mode="align"))[:2] == ("align", 1040)
    assert mamba(estimate(NEMOTRON, "0.30.0", mamba_cache_mode="all"))[:2] == ("all", 1152)
    assert mamba(estimate(GRANITE, "0.31.0", mamba_cache_mode="all", tensor_parallel_size=2))[:2] == ("all", 768)
    off = estimate(NEMOTRON, "0.26.0", mamba_cache_mode="all", enable_prefix_caching=False)
    assert mamba(off)[:2] == ("none", 1040)
    assert any("--mamba-cache-mode all without prefix caching: vLLM runs mode 'none'" in n for n in off.notes)
    with pytest.raises(GatedDeltaUnsupported, match="no mamba cache mode 'all'"):
        estimate(NEMOTRON, "0.32.0", mamba_cache_mode="all")


def test_mamba_block_size_is_the_all_mode_chunk():
    # lcm(256, 16) x cdiv(1,039, 256) = 1,280; 0.12.0: 512 x cdiv(527, 512) = 1,024
    assert mamba(estimate(NEMOTRON, "0.26.0", mamba_block_size=256))[:2] == ("all", 1280)
    assert mamba(estimate(NEMOTRON, "0.12.0", enable_prefix_caching=True, mamba_block_size=512))[:2] == \
        ("all", 1024)
    aligned = estimate(NEMOTRON, "0.30.0", mamba_block_size=256)  # "align" replaces it by the block
    assert mamba(aligned)[:2] == ("align", 1040)
    assert any("--mamba-block-size 256 is replaced by the attention block" in n for n in aligned.notes)
    with pytest.raises(GatedDeltaUnsupported, match="--mamba-block-size 256 without prefix caching"):
        estimate(NEMOTRON, "0.26.0", mamba_block_size=256, enable_prefix_caching=False)


def test_what_all_mode_cannot_size_is_refused():
    with pytest.raises(GatedDeltaUnsupported, match="does not name"):
        estimate(NEMOTRON_H_8B, "0.26.0")  # no chunk_size in the config
    with pytest.raises(GatedDeltaUnsupported, match="--block-size 2048 is above the 640-token block"):
        estimate(NEMOTRON, "0.12.0", enable_prefix_caching=True, block_size=2048)
    with pytest.raises(GatedDeltaUnsupported, match="before vLLM 0.12.0"):
        estimate(NEMOTRON, "0.11.2", enable_prefix_caching=True)
    with pytest.raises(GatedDeltaUnsupported, match="--use-replayssm adds replay-ring states"):
        estimate(NEMOTRON, "0.34.0", use_replayssm=True)
    # from 0.20.0 the block enters the alignment: lcm(128, 2048) = 2,048
    assert mamba(estimate(NEMOTRON, "0.26.0", block_size=2048))[:2] == ("all", 2048)


def test_the_flag_is_refused_before_0_15_0_and_all_from_0_32_0():
    facts = facts_from_config(NEMOTRON, "test")
    flags = {"max-model-len": "8192", "enable-prefix-caching": None, "mamba-cache-mode": "all"}
    with pytest.raises(EF.FlagValueError, match=r"vLLM 0.14.1 has no --mamba-cache-mode \(it exists from 0.15.0"):
        engine_estimate("vllm", facts, [H100[::-1]], flags, "0.14.1", Policy())
    assert engine_estimate("vllm", facts, [H100[::-1]], flags, "0.15.0", Policy()).extra["mamba2"][
        "mamba_cache_mode"] == "all"
    assert EF.check("mamba-cache-mode", "all", "vllm", "0.31.0") is None
    assert "accepts align, none" in str(EF.check("mamba-cache-mode", "all", "vllm", "0.32.0"))
    assert "accepts all, align, none" in str(EF.check("mamba-cache-mode", "ALL", "vllm", "0.20.0"))
    assert EF.check("mamba-block-size", "0", "vllm", "0.26.0") is not None


def run(facts, flags, version, gpus=(H200, H200)):
    return engine_estimate("vllm", facts, list(gpus), flags, version, Policy(), {})


@pytest.mark.parametrize("mode", ["align", "all", "none"])
def test_gated_delta_explicit_mode_with_prefix_caching_is_align(mode):
    """Qwen3-Next lacks SupportsMambaPrefixCaching: 'all' falls back to 'align', 'none' becomes it."""
    flags = {"tensor-parallel-size": "2"}
    plain = run(NEXT, flags, "0.26.0")
    given = run(NEXT, {**flags, "mamba-cache-mode": mode}, "0.26.0")
    assert given.kv_capacity_tokens == plain.kv_capacity_tokens
    assert given.extra["gated_delta"]["mamba_cache_mode"] == "align"
    assert any("falls back to 'align'" in n for n in given.notes) == (mode == "all")


def test_gated_delta_explicit_flags_on_a_second_model_and_release():
    qwen36 = facts_from_config(QWEN36_27B_TEXT, "test")
    flags = {"max-model-len": "32768"}
    plain = run(qwen36, flags, "0.30.0", (H200,))
    off = run(qwen36, {**flags, "no-enable-prefix-caching": None, "mamba-cache-mode": "align"}, "0.30.0", (H200,))
    assert off.extra["gated_delta"]["mamba_cache_mode"] == "none"
    assert off.kv_capacity_tokens == run(qwen36, {**flags, "no-enable-prefix-caching": None}, "0.30.0",
                                         (H200,)).kv_capacity_tokens > plain.kv_capacity_tokens
    block = run(qwen36, {**flags, "mamba-block-size": "512"}, "0.30.0", (H200,))
    assert block.kv_capacity_tokens == plain.kv_capacity_tokens
    assert any("--mamba-block-size 512 is replaced" in n for n in block.notes)
    with pytest.raises(UnsupportedModel, match="--mamba-block-size 512 without prefix caching"):
        run(qwen36, {**flags, "mamba-block-size": "512", "no-enable-prefix-caching": None}, "0.30.0", (H200,))
    with pytest.raises(EF.FlagValueError, match="has no --mamba-cache-mode"):
        run(NEXT, {"tensor-parallel-size": "2", "mamba-cache-mode": "align"}, "0.13.0")


def test_the_align_budget_assert_holds_for_a_mamba2_hybrid_too():
    """config/vllm.py@v0.18.0 .. @v0.26.0 asserts the block in "align" for any hybrid; "all" is not checked."""
    facts = facts_from_config(NEMOTRON, "test")
    flags = {"max-model-len": "8192", "enable-prefix-caching": None, "max-num-batched-tokens": "1024"}

    def refusal(extra, version):
        return engine_estimate("vllm", facts, [H100[::-1]], {**flags, **extra}, version, Policy()).extra[
            "align_block_refusal"]

    assert refusal({"mamba-cache-mode": "align"}, "0.26.0") == \
        "In Mamba cache align mode, block_size (1040) must be <= max_num_batched_tokens (1024)."
    assert refusal({}, "0.26.0") is None  # mode "all" (block 1,152)
    assert refusal({"mamba-cache-mode": "align"}, "0.27.0") is None  # the assert is gone


def test_gated_delta_prefix_caching_runs_align_from_0_15_0():
    """models/config.py@v0.15.0 already has the modes (the same MambaModelConfig, MambaSpec and MambaManager as
    @v0.15.1): an explicit --enable-prefix-caching keeps 2 state pages; 0.14.1 turns it off."""
    flags = {"tensor-parallel-size": "2", "max-model-len": "32768", "enable-prefix-caching": None}
    assert run(NEXT, flags, "0.15.0").extra["gated_delta"]["mamba_cache_mode"] == "align"
    assert run(NEXT, flags, "0.14.1").extra["gated_delta"]["mamba_cache_mode"] == "none"
