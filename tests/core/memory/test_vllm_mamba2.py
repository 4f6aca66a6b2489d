"""vLLM's state pool for Mamba-2 hybrids (Nemotron-H, Granite-4.0-H; issue 32): the state page of each Mamba-2
layer, the attention block raised to hold it, the pool's blocks and GSG056 on them (core/memory/mamba2.py).

Read in the wheels (profiles.VLLM_MAMBA2_ROWS): mamba_utils.py mamba2_state_shape and _mamba_state_dtype
@v0.10.2 .. @v0.34.0, models/config.py HybridAttentionMambaModelConfig @v0.10.2 .. @v0.19.0 and
platforms/interface.py _align_hybrid_block_size @v0.20.0 ..; NemotronHForCausalLMConfig's temporal dtype (the
config's mamba_ssm_cache_dtype, else float16 @v0.13.0 .. @v0.19.0 and float32 @v0.20.0 ..).

Public figures the arithmetic meets: vllm#24280 names 672-token attention pages for NVIDIA-Nemotron-Nano-9B-v2
(September 2025, vLLM 0.10.x: bfloat16 states), and vllm-gaudi#1564 a 528-token block for granite-4.0-h-small
without prefix caching. The configs below carry the shape fields those figures pin; Nemotron-H-8B's are the
defaults of vLLM's NemotronHConfig (transformers_utils/configs/nemotron_h.py, "similar to NemotronH-v0.1").
Granite's expert widths and attention positions are a shape like the model's, not its published config: only its
state page and block are claimed, and its estimates below are checked as relations, not as its weights."""

from __future__ import annotations

import json

import pytest

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported, UnsupportedModel
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.mamba2 import Mamba2KV, state_elements
from gpustack_guard.core.memory.state_blocks import state_blocks
from gpustack_guard.core.memory.weights import param_breakdown
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

NEMOTRON_H_8B = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
    "num_hidden_layers": 52, "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    "num_attention_heads": 32, "num_key_value_heads": 8, "attention_head_dim": 128, "intermediate_size": 21504,
    "vocab_size": 131072, "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128,
    "conv_kernel": 4, "tie_word_embeddings": False, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}
# the Mamba-2 and attention fields of NVIDIA-Nemotron-Nano-9B-v2 (4 attention layers of 56)
NANO_9B_V2 = {**NEMOTRON_H_8B, "hidden_size": 4480, "num_hidden_layers": 56, "num_attention_heads": 40,
              "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
              "intermediate_size": 15680, "mamba_head_dim": 80}
_GRANITE_KINDS = ["attention" if i in (5, 15, 25, 35) else "mamba" for i in range(40)]
GRANITE_4_H_SMALL = {
    "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "hidden_size": 4096,
    "num_hidden_layers": 40, "layer_types": _GRANITE_KINDS, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_local_experts": 72, "num_experts_per_tok": 10, "intermediate_size": 768, "shared_intermediate_size": 8192,
    "vocab_size": 100352, "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128,
    "mamba_d_conv": 4, "mamba_expand": 2, "tie_word_embeddings": True, "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16"}

H100 = ("NVIDIA H100 80GB HBM3", 81_559 * MiB)
L4 = ("NVIDIA L4", 22_478 * MiB)
REFUSED = "mamba-blocks-below-max-num-seqs"


def facts(config):
    return facts_from_config(config, "test")


def shape(config, version, tp=1, **kw):
    return Mamba2KV(facts(config), tp, None, None, version, "NVIDIA H100 80GB HBM3", **kw)


def estimate(config, version, gpu=H100, **flags):
    name, total = gpu
    flags.setdefault("enable_prefix_caching", False)
    return estimate_vllm(facts(config), total, VllmConfig(**flags), version=version, gpu_name=name)


def test_the_configs_are_read_as_mamba2_hybrids():
    nemotron, granite = facts(NEMOTRON_H_8B), facts(GRANITE_4_H_SMALL)
    assert nemotron.recurrent_layers is None and nemotron.is_mamba2 and not nemotron.is_gated_delta
    assert (nemotron.mamba_pattern.count("M"), nemotron.mamba_pattern.count("*"),
            nemotron.mamba_pattern.count("-")) == (24, 4, 24)
    assert (nemotron.mamba_intermediate_size, nemotron.mamba_n_groups, nemotron.dim_head,
            nemotron.layer_norms, nemotron.gated_mlp) == (8192, 8, 128, 1, False)
    assert (granite.mamba_pattern.count("M"), granite.mamba_pattern.count("*"), granite.mamba_mlp_every_layer,
            granite.mamba_intermediate_size, granite.shared_expert_intermediate_size) == (36, 4, True, 8192, 8192)


def test_weights_count_each_layer_by_its_kind():
    # Nemotron-H-8B: 24 Mamba-2 mixers of 84,443,136 + 24 relu2 MLPs of 176,160,768 + 4 attention layers of
    # 41,943,040, one norm a layer, two 131,072 x 4,096 tables
    assert param_breakdown(facts(NEMOTRON_H_8B)).total == 8_100_852_736


@pytest.mark.parametrize("config,block", [(NANO_9B_V2, 672), (GRANITE_4_H_SMALL, 528), (NEMOTRON_H_8B, 528)])
def test_the_block_holds_one_bfloat16_state_page_on_0_11(config, block):
    """vllm#24280's 672 tokens for Nano-9B-v2; vllm-gaudi#1564's 528 for granite-4.0-h-small."""
    s = shape(config, "0.11.0")
    assert (s.block_size, s.page_bytes) == (block, block * 4096)  # 8 KV heads x 128 x K and V x 2 B a token


@pytest.mark.parametrize("version,ssm_bytes,state,block", [
    ("0.11.0", 2, 2_158_592, 528),   # auto: the model's bfloat16 (no NemotronH override)
    ("0.18.0", 2, 2_158_592, 528),   # NemotronHForCausalLMConfig: float16
    ("0.20.0", 4, 4_255_744, 1040),  # float32
    ("0.34.0", 4, 4_255_744, 1088)])  # the 64-token default block is the alignment's floor (1,088 = 64 x 17)
def test_nemotron_h_temporal_state_dtype_by_release(version, ssm_bytes, state, block):
    s = shape(NEMOTRON_H_8B, version)
    # conv 3 x (8,192 + 2 x 8 x 128) x 2 B = 61,440; temporal 128 x 64 x 128 elements
    assert (s.conv_dtype_bytes, s.ssm_dtype_bytes, s.state_bytes) == (2, ssm_bytes, 61_440 + 1_048_576 * ssm_bytes)
    assert s.state_bytes == state and s.block_size == block and s.page_bytes == block * 4096


def test_a_config_dtype_and_the_flag_win_over_the_release_default():
    assert shape({**NEMOTRON_H_8B, "mamba_ssm_cache_dtype": "bfloat16"}, "0.20.0").block_size == 528
    assert shape(NEMOTRON_H_8B, "0.20.0", mamba_ssm_cache_dtype="float16").block_size == 528
    assert (shape(NEMOTRON_H_8B, "0.20.0").ssm_override, shape(NEMOTRON_H_8B, "0.11.0").ssm_override) == \
        ("float32", None)
    assert any("temporal Mamba state at float32" in n for n in estimate(NEMOTRON_H_8B, "0.20.0").notes)
    # Granite has no override: its temporal state stays at the conv dtype on every release
    assert (shape(GRANITE_4_H_SMALL, "0.20.0").ssm_dtype_bytes, shape(GRANITE_4_H_SMALL, "0.20.0").block_size) == \
        (2, 528)
    assert shape(GRANITE_4_H_SMALL, "0.20.0", mamba_ssm_cache_dtype="float32").block_size == 1040


def test_tensor_parallel_replicates_a_single_group():
    """extra_groups_for_head_shards: Granite's one group becomes two at TP 2; heads and K/V heads halve."""
    conv, temporal = state_elements(facts(GRANITE_4_H_SMALL), 2)
    assert (conv, temporal) == (3 * (8192 + 2 * 2 * 128) // 2, 64 * 64 * 128)
    s = shape(GRANITE_4_H_SMALL, "0.20.0", tp=2)
    assert (s.state_bytes, s.token_bytes, s.block_size) == (1_074_688, 2048, 528)
    with pytest.raises(GatedDeltaUnsupported, match="does not divide the Mamba-2 layers"):
        shape(GRANITE_4_H_SMALL, "0.20.0", tp=3)


# pages: float16 temporal states up to 0.19 (2,162,688 B), Nemotron-H's float32 from 0.20.0 (4,259,840 B);
# Granite keeps the model dtype on both releases
@pytest.mark.parametrize("config,available,groups,blocks,blocks_0_20", [
    (NEMOTRON_H_8B, 20 * GiB, 4, 2_482, 1_260),      # 4 attention + 24 Mamba-2: 7 groups of 4
    (GRANITE_4_H_SMALL, 20 * GiB, 4, 2_482, 2_482)])  # 4 attention + 36 Mamba-2: 10 groups of 4
def test_state_blocks_on_two_releases(config, available, groups, blocks, blocks_0_20):
    before, after = shape(config, "0.19.0"), shape(config, "0.20.0")
    old = state_blocks(before, available, None, groups, "0.19.0", "FULL_AND_PIECEWISE", 1024)
    new = state_blocks(after, available, None, groups, "0.20.0", "FULL_AND_PIECEWISE", 1024)
    assert (old["state_blocks"], old["state_blocks_checked"], old["state_blocks_refused"]) == (blocks, False, False)
    assert (new["state_blocks"], new["state_blocks_checked"], new["state_blocks_refused"]) == \
        (blocks_0_20, True, False)
    refused = state_blocks(after, available, None, groups, "0.20.0", "FULL_AND_PIECEWISE", blocks_0_20 + 1)
    assert refused["state_blocks_refused"] is True


def test_nemotron_h_8b_estimate_reports_the_terms():
    est = estimate(NEMOTRON_H_8B, "0.20.0", max_model_len=8192)
    m = est.extra["mamba2"]
    assert (m["mamba2_layers"], m["full_attention_layers"], m["attention_block_size"], m["page_bytes"],
            m["group_size"], m["full_attention_groups"], m["linear_attention_groups"]) == \
        (24, 4, 1040, 4_259_840, 4, 1, 6)
    assert (m["state_rule"], est.block_size) == ("0.20.0", 1040)
    assert est.extra["state_blocks"] == est.kv_cache // (4 * 4_259_840) == 3_418
    assert est.verdict == "fits"


def test_gsg056_refuses_nemotron_h_8b_on_an_l4_from_0_20_0_only():
    """16.2 GB of weights leave a few GiB on an L4: fewer state blocks than the 256 sequences vLLM defaults to there."""
    new = estimate(NEMOTRON_H_8B, "0.20.0", L4, max_model_len=8192)
    old = estimate(NEMOTRON_H_8B, "0.19.0", L4, max_model_len=8192)
    assert new.max_num_seqs == old.max_num_seqs == 256
    assert new.extra["state_blocks"] == new.kv_cache // (4 * 4_259_840) == 198
    assert (new.extra["state_blocks_checked"], new.verdict) == (True, REFUSED)
    assert old.extra["state_blocks"] == old.kv_cache // (4 * 2_162_688) == 479  # float16 states: smaller pages
    assert (old.extra["state_blocks_checked"], old.verdict) == (False, "fits")
    # 0.19 caps the capture sizes instead: more sequences than blocks still start
    assert estimate(NEMOTRON_H_8B, "0.19.0", L4, max_model_len=8192, max_num_seqs=512).verdict == "fits"
    capped = estimate(NEMOTRON_H_8B, "0.20.0", L4, max_model_len=8192, max_num_seqs=new.extra["state_blocks"])
    assert capped.verdict == "fits"


def test_granite_4_h_small_fits_its_blocks_on_an_h100_at_tp_2_and_not_on_one():
    two = estimate(GRANITE_4_H_SMALL, "0.20.0", H100, max_model_len=32768, tensor_parallel_size=2)
    assert two.extra["mamba2"]["page_bytes"] == 528 * 2048
    assert two.extra["state_blocks"] == two.kv_cache // (4 * 528 * 2048) == 8_779 and two.verdict == "fits"


def test_what_is_not_read_is_refused():
    with pytest.raises(GatedDeltaUnsupported, match="before 0.10.2"):
        shape(NEMOTRON_H_8B, "0.10.1")
    # 0.26.0's default prefix caching runs mode "all", aligned to the model's chunk, which this config does not
    # name (test_vllm_mamba_cache_mode.py sizes the configs that do)
    with pytest.raises(GatedDeltaUnsupported, match="mamba cache mode 'all' aligns the block"):
        estimate(NEMOTRON_H_8B, "0.26.0", enable_prefix_caching=None, max_model_len=8192)
    # 0.10.2 .. 0.11.0 turn prefix caching off for every hybrid: one state page a sequence
    assert estimate(NEMOTRON_H_8B, "0.11.0", enable_prefix_caching=True, max_model_len=8192).block_size == 528
    assert P.vllm_mamba2_row("0.11.0").prefix_turned_off and not P.vllm_mamba2_row("0.12.0").prefix_turned_off
    with pytest.raises(GatedDeltaUnsupported, match="--mamba-block-size 256 without prefix caching"):
        estimate(NEMOTRON_H_8B, "0.20.0", max_model_len=8192, mamba_block_size=256)


@pytest.mark.parametrize("flags,version,read", [({"mamba-cache-mode": "all"}, "0.20.0", "all"),
                                                ({"mamba-cache-mode": "none"}, "0.34.0", "none"),
                                                ({}, "0.20.0", None), ({"mamba-cache-mode": "x"}, "v-custom", "x")])
def test_the_cache_mode_flag_is_read_from_the_command(flags, version, read):
    from gpustack_guard.core.memory.engine import _vllm_mamba_cache_mode

    assert _vllm_mamba_cache_mode(flags, version) == read


def test_other_engines_and_unread_layouts_stay_refused():
    from gpustack_guard.core.memory.engine import estimate as engine_estimate

    with pytest.raises(UnsupportedModel, match="Mamba-2 layers"):
        engine_estimate("sglang", facts(NEMOTRON_H_8B), [H100[::-1]], {}, "0.5.10", Policy())
    with pytest.raises(UnsupportedModel, match="Mamba-2 layers"):
        engine_estimate("llamacpp", facts(NEMOTRON_H_8B), [H100[::-1]], {}, None, Policy())
    moe = facts({**NEMOTRON_H_8B, "hybrid_override_pattern": "ME" * 26})  # Nemotron 3's MoE layers
    assert not moe.is_mamba2 and moe.recurrent_layers == "model type 'nemotron_h'"


def test_gsg_estimate_shows_the_terms(gsg, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(NEMOTRON_H_8B))
    result = gsg("estimate", "-m", str(path), "--gpu-memory", "22478MiB", "--gpu-name", "NVIDIA L4",
                 "--backend-version", "0.20.0", "-o", "json", "--", "--max-model-len=8192",
                 "--no-enable-prefix-caching")
    out = json.loads(result.out)
    text = json.dumps(out)
    assert '"attention_block_size": 1040' in text and '"mamba2_layers": 24' in text
    assert "mamba-blocks-below-max-num-seqs" in text


def test_verify_compares_the_raised_block_with_the_log():
    """`Setting attention block size to N tokens` is held against the Mamba-2 block as against Gated DeltaNet's."""
    from gpustack_guard.core.verify import patterns
    from gpustack_guard.core.verify.compare import estimated_terms

    terms = estimated_terms(estimate(NEMOTRON_H_8B, "0.20.0", max_model_len=8192))
    assert terms[patterns.ATTENTION_BLOCK] == 1040


@pytest.mark.parametrize("key, value, said", [
    ("n_groups", 0, "'mamba_n_groups' 0 is outside 1..1,000,000,000"),
    ("ssm_state_size", 0, "'mamba_d_state' 0 is outside 1..65,536"),
    ("conv_kernel", 0, "'mamba_d_conv' 0 is outside 1..64"),
    ("conv_kernel", 10**9, "'mamba_d_conv' 1,000,000,000 is outside 1..64"),
    ("mamba_num_heads", 0, "'mamba_num_heads' 0 is outside"),
    ("mamba_head_dim", 0, "'mamba_head_dim' 0 is outside"),
    ("chunk_size", 10**7, "'mamba_chunk_size' 10,000,000 is outside 1..65,536"),
])
def test_an_impossible_state_shape_in_config_json_is_a_config_error(key, value, said):
    """A 0 reached the state arithmetic's asserts (an internal error); a huge kernel or chunk made a block of
    billions of tokens. Both are now the config's own error, as any other out-of-range field."""
    from gpustack_guard.core.memory.hfconfig import BadConfig

    with pytest.raises(BadConfig, match=said.replace("(", r"\(")):
        facts({**NEMOTRON_H_8B, key: value})


@pytest.mark.parametrize("key", ["linear_conv_kernel_dim", "linear_num_key_heads", "linear_key_head_dim"])
def test_an_impossible_gated_delta_shape_is_a_config_error(key):
    from test_gated_delta import QWEN36_27B_TEXT

    from gpustack_guard.core.memory.hfconfig import BadConfig

    with pytest.raises(BadConfig, match=f"'{key}' 0 is outside 1.."):
        facts({**QWEN36_27B_TEXT, key: 0})
