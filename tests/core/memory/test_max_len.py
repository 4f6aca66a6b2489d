"""vLLM's max_model_len derivation and verification per release (docs/memory-arithmetic.md, "Maximum model
length": v0.6.3.post1 vllm/config.py, v0.11.0 and v0.12-v0.29 vllm/config/model.py, v0.33.0
model_arch_config_convertor.py, vllm-project/vllm#56446 for YaRN from 0.30; the PyPI wheels 0.6.4-0.10.1 for the
boundaries in max_len.py)."""

import pytest

from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.facts import bound_to_vllm
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.max_len import (
    MaxLenError,
    allow_long_max_model_len,
    check_max_model_len,
    derive_max_model_len,
    length_config,
)
from gpustack_guard.core.units import GiB

OLD, V11, MID, LAST_YARN, NEW = "0.6.3.post1", "0.11.0", "0.20.1", "0.29.0", "0.30.0"
ALL = (OLD, V11, MID, LAST_YARN, NEW, "0.33.0")


def derive(config, version, **kw):
    d = derive_max_model_len(length_config(config), version, **kw)
    return d.value, d.key, d.default


def test_smallest_key_wins_and_names_the_first_key_that_has_it():
    config = {"max_position_embeddings": 4096, "seq_length": 2048, "max_seq_len": 2048}
    for v in ALL:
        assert derive(config, v) == (2048, "max_seq_len", 2048)


def test_max_target_positions_counts_from_0_7():
    config = {"max_position_embeddings": 4096, "max_target_positions": 448}  # Whisper
    assert derive(config, "0.6.6") == (4096, "max_position_embeddings", 4096)
    assert derive(config, "0.7.0") == (448, "max_target_positions", 448)


def test_config_model_max_length_overrides_the_minimum_from_0_8_3():
    config = {"max_position_embeddings": 8192, "model_max_length": 131072}  # Command-R
    assert derive(config, OLD) == (8192, "max_position_embeddings", 8192)
    assert derive(config, "0.8.2") == (8192, "max_position_embeddings", 8192)
    assert derive(config, "0.8.3") == (131072, "model_max_length", 131072)
    assert derive(config, V11) == (131072, "model_max_length", 131072)
    assert derive(config, "0.33.0") == (131072, "model_max_length", 131072)


def test_no_key_falls_back_to_2048_before_rope_scaling():
    assert derive({}, NEW) == (2048, None, 2048)
    assert derive({"rope_scaling": {"type": "linear", "factor": 2.0}}, V11) == (4096.0, None, 4096)


@pytest.mark.parametrize("rope_type", ["linear", "dynamic"])
@pytest.mark.parametrize("version", ALL)
def test_linear_and_dynamic_multiply_in_every_version(rope_type, version):
    config = {"max_position_embeddings": 4096, "rope_scaling": {"type": rope_type, "factor": 4.0}}
    value, key, default = derive(config, version)
    assert (value, key, default) == (16384.0, "max_position_embeddings", 16384)
    assert isinstance(value, float)  # vLLM prints it as 16384.0


QWEN_YARN = {"max_position_embeddings": 32768,
             "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}


@pytest.mark.parametrize("version,expected", [(OLD, 131072.0), (V11, 131072.0), (MID, 131072.0),
                                              (LAST_YARN, 131072.0), (NEW, 32768.0), ("0.33.0", 32768.0)])
def test_yarn_multiplies_the_original_up_to_0_29_and_not_from_0_30(version, expected):
    assert derive(QWEN_YARN, version)[0] == expected


def test_yarn_deepseek_v3_gives_163840_in_both_regimes():
    config = {"max_position_embeddings": 163840, "rope_scaling": {"type": "yarn", "factor": 40,
                                                                   "original_max_position_embeddings": 4096}}
    assert derive(config, LAST_YARN)[0] == 163840 and derive(config, NEW)[0] == 163840


def test_yarn_without_original_is_vllms_key_error_until_0_29():
    config = {"max_position_embeddings": 32768, "rope_scaling": {"type": "yarn", "factor": 4.0}}
    with pytest.raises(MaxLenError, match="original_max_position_embeddings"):
        derive(config, V11)
    assert issubclass(MaxLenError, UnsupportedModel)  # a model-facts finding (GSG030), not an argument error
    assert derive(config, NEW)[0] == 32768.0


def test_deepseek_yarn_is_rescaled_until_0_29_and_skipped_from_0_30():
    config = {"max_position_embeddings": 163840, "rope_scaling": {"type": "deepseek_yarn", "factor": 40}}
    assert derive(config, LAST_YARN)[0] == 6553600.0  # the double scaling PR #56279 describes
    assert derive(config, NEW)[0] == 163840.0


@pytest.mark.parametrize("version", ALL)
def test_llama3_is_never_rescaled(version):
    config = {"max_position_embeddings": 131072, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}
    assert derive(config, version) == (131072, "max_position_embeddings", 131072)


PHI3_128K = {"max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
             "rope_scaling": {"type": "su", "long_factor": [1.0], "short_factor": [1.0]}}


def test_longrope_su_is_not_rescaled_and_defaults_to_the_original_from_0_12():
    assert derive(PHI3_128K, V11) == (131072, "max_position_embeddings", 131072)
    assert derive(PHI3_128K, "0.12.0") == (131072.0, "max_position_embeddings", 4096)
    longrope = dict(PHI3_128K, rope_scaling={"rope_type": "longrope", "long_factor": [1.0]})
    assert derive(longrope, NEW) == (131072.0, "max_position_embeddings", 4096)


def test_mrope_is_the_default_rope_type_without_factor():
    config = {"max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    for v in ALL:
        assert derive(config, v)[0] == 32768.0


def test_gemma3_rope_is_skipped_in_every_release_that_runs_gemma3():
    config = {"model_type": "gemma3_text", "max_position_embeddings": 131072,
              "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert derive(config, OLD)[0] == 1048576.0  # 0.6.3 had no such rule (nor Gemma 3)
    for version in ("0.8.0", "0.10.2", V11, NEW):
        assert derive(config, version)[0] == 131072
    multimodal = facts_from_config({"model_type": "gemma3", "text_config": dict(config, num_hidden_layers=34)}, "t")
    assert multimodal.length_config.model_type == "gemma3_text"


def test_transformers_v5_rope_parameters_per_layer_type_from_0_12():
    config = {"max_position_embeddings": 8192, "rope_parameters": {
        "full_attention": {"rope_type": "linear", "factor": 2.0}, "sliding_attention": {"rope_type": "default"}}}
    assert derive(config, "0.12.0")[0] == 16384.0  # the factor found is applied once
    assert derive(config, V11)[0] == 8192  # 0.11 reads only rope_scaling


def test_sliding_window_caps_only_when_disabled():
    config = {"max_position_embeddings": 32768, "sliding_window": 4096}  # Mistral-7B-v0.1
    assert derive(config, V11) == (32768, "max_position_embeddings", 32768)
    assert derive(config, V11, disable_sliding_window=True) == (4096, "sliding_window", 4096)
    qwen = {"max_position_embeddings": 32768, "sliding_window": 4096, "use_sliding_window": False}
    assert derive(qwen, V11, disable_sliding_window=True)[0] == 32768


def test_disabled_sliding_window_with_rope_scaling_raises_until_0_11_only():
    config = {"max_position_embeddings": 32768, "sliding_window": 4096,
              "rope_scaling": {"type": "linear", "factor": 2.0}}
    with pytest.raises(MaxLenError, match="NotImplementedError"):
        derive(config, V11, disable_sliding_window=True)
    assert derive(config, "0.12.0", disable_sliding_window=True)[0] == 8192.0


def test_interleaved_attention_is_capped_at_the_window_up_to_0_6_4():
    gemma2 = {"model_type": "gemma2", "max_position_embeddings": 8192, "sliding_window": 4096}
    assert derive(gemma2, OLD) == (4096, "sliding_window", 4096)
    assert derive(gemma2, "0.6.4") == (4096, "sliding_window", 4096)
    assert derive(gemma2, "0.6.5") == (8192, "max_position_embeddings", 8192)
    assert derive(gemma2, V11) == (8192, "max_position_embeddings", 8192)


# --- verification of a user --max-model-len ---------------------------------------------------------------

CAUTION = ("VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position "
           "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute "
           "position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds "
           "error.")


def test_user_length_above_derived_is_vllms_error_from_0_11():
    derived = derive_max_model_len(length_config(QWEN_YARN), NEW)
    check = check_max_model_len(131072, derived, NEW, allow_long=False)
    assert check.error == ("User-specified max_model_len (131072) is greater than the derived max_model_len "
                           "(max_position_embeddings=32768.0 or model_max_length=None in model's config.json). "
                           "To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                           + CAUTION)
    allowed = check_max_model_len(131072, derived, NEW, allow_long=True)
    assert allowed.error is None and allowed.warning.endswith(CAUTION) and allowed.max_model_len == 131072
    assert check_max_model_len(131072, derive_max_model_len(length_config(QWEN_YARN), LAST_YARN), LAST_YARN,
                               allow_long=False).error is None


@pytest.mark.parametrize("version", [OLD, "0.10.1"])
def test_user_length_above_derived_up_to_0_10_uses_the_old_text(version):
    derived = derive_max_model_len(length_config({"max_position_embeddings": 4096}), version)
    check = check_max_model_len(8192, derived, version, allow_long=False)
    assert check.error == ("User-specified max_model_len (8192) is greater than the derived max_model_len "
                           "(max_position_embeddings=4096 or model_max_length=None in model's config.json). This "
                           "may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, "
                           "set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")


def test_user_length_up_to_config_model_max_length_is_allowed_and_unset_takes_the_default():
    derived = derive_max_model_len(length_config({"max_position_embeddings": 8192, "model_max_length": 16384}), OLD)
    assert check_max_model_len(16384, derived, OLD, allow_long=False).error is None
    assert check_max_model_len(16385, derived, OLD, allow_long=False).error is not None
    assert check_max_model_len(None, derived, OLD, allow_long=False).max_model_len == 8192
    no_key = derive_max_model_len(length_config({}), NEW)
    assert check_max_model_len(100000, no_key, NEW, allow_long=False).error is None  # vLLM takes the user's


@pytest.mark.parametrize("version,refused", [(OLD, True), ("0.11.2", True), ("0.12.0", False), (NEW, False)])
def test_a_length_only_model_max_length_allows_is_refused_with_the_window_disabled_up_to_0_11(version, refused):
    # Before 0.8.3 the smallest key wins, so 8,192 is derived and model_max_length 16,384 still allows 12,000; from
    # 0.8.3 model_max_length is derived, and the disabled 4,096 window caps it below the user's value
    config = {"max_position_embeddings": 8192, "model_max_length": 16384, "sliding_window": 4096}
    derived = derive_max_model_len(length_config(config), version, disable_sliding_window=True)
    assert (derived.value, derived.key) == (4096, "sliding_window")
    check = check_max_model_len(12000, derived, version, allow_long=False)
    if refused:
        assert check.error == ("vLLM raises NotImplementedError: Disabling sliding window is not supported for "
                               "models model_max_length in the config. Please raise an issue so we can "
                               "investigate.")
    else:
        assert check.error is None and check.max_model_len == 12000
    # without the flag the window does not cap the length, and 12,000 is within the derived length or allowed
    open_window = derive_max_model_len(length_config(config), version)
    assert check_max_model_len(12000, open_window, version, allow_long=False).error is None
    # a model with no window at all: vLLM's check reads the flag, not the window
    no_window = derive_max_model_len(length_config({"max_position_embeddings": 8192, "model_max_length": 16384}),
                                     "0.6.3.post1", disable_sliding_window=True)
    assert check_max_model_len(12000, no_window, OLD, allow_long=False).error.startswith("vLLM raises NotImpl")


@pytest.mark.parametrize("value,expected", [("1", True), ("true", True), (" TRUE ", True), ("0", False),
                                            ("yes", False), (None, False)])
def test_allow_long_env_is_parsed_like_vllm_envs(value, expected):
    assert allow_long_max_model_len({} if value is None else {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": value}) is expected


# --- wired into the vLLM estimate ---------------------------------------------------------------------------

LINEAR_8B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
             "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
             "rope_scaling": {"type": "linear", "factor": 4.0}, "torch_dtype": "bfloat16"}


def test_linear_rope_native_length_is_scaled_in_the_estimate():
    """Issue 12: a linear-rope model judged 'fits' at max_position_embeddings without the factor."""
    facts = facts_from_config(LINEAR_8B, "test")
    assert facts.max_position_embeddings == 32768
    est = estimate_vllm(facts, 24 * GiB, VllmConfig(), version=V11)
    assert est.max_model_len == 32768
    assert est.kv_needed == 32768 * 32 * 2 * 8 * 128 * 2  # 4 GiB: 131,072 B/token x 32,768
    assert est.extra["derived_max_model_len"] == 32768 and est.extra["max_model_len_refused"] is None


def test_estimate_notes_vllms_refusal_and_honours_the_env():
    facts = facts_from_config(dict(LINEAR_8B, rope_scaling=None), "test")
    est = estimate_vllm(facts, 80 * GiB, VllmConfig(max_model_len=16384), version=V11)
    assert est.extra["max_model_len_refused"].startswith("User-specified max_model_len (16384) is greater than the "
                                                        "derived max_model_len (max_position_embeddings=8192 or")
    allowed = estimate_vllm(bound_to_vllm(facts, V11, True), 80 * GiB, VllmConfig(max_model_len=16384), version=V11)
    assert allowed.extra["max_model_len_refused"] is None
    assert any(n.startswith("vLLM warns: User-specified max_model_len (16384)") for n in allowed.notes)


def test_bound_facts_carry_the_spec_versions_length_and_are_shared():
    facts = facts_from_config(dict(LINEAR_8B, **QWEN_YARN), "test")
    assert facts.max_position_embeddings == 131072  # the assumed version (0.11.0)
    new = bound_to_vllm(facts, NEW, False)
    assert new.max_position_embeddings == 32768 and bound_to_vllm(facts, NEW, False) is new
    assert bound_to_vllm(facts, V11, False) is facts
    stated = facts.merged({"max_position_embeddings": 65536})
    assert stated.length_config is None and bound_to_vllm(stated, NEW, False).max_position_embeddings == 65536


def test_disabled_sliding_window_caps_the_length_and_keeps_full_kv_on_every_layer():
    mistral = facts_from_config({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                                 "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                                 "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                                 "max_position_embeddings": 32768, "sliding_window": 4096}, "t")
    windowed = estimate_vllm(mistral, 80 * GiB, VllmConfig(), version=V11)
    disabled = estimate_vllm(mistral, 80 * GiB, VllmConfig(disable_sliding_window=True), version=V11)
    assert disabled.max_model_len == 4096 and disabled.extra["max_model_len_key"] == "sliding_window"
    assert disabled.kv_needed == 4096 * 32 * 2 * 8 * 128 * 2  # 512 MiB: all 32 layers at full length
    # windowed, 32,768 tokens: each layer pages only the window + 8,192 tokens in flight, 769 blocks of 16
    assert (windowed.max_model_len, windowed.kv_needed) == (32768, 32 * 769 * 16 * 4096)
    gemma2 = facts_from_config({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
                                "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                                "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                                "vocab_size": 256000, "max_position_embeddings": 8192, "sliding_window": 4096}, "t")
    assert estimate_vllm(gemma2, 80 * GiB, VllmConfig(), version=OLD).max_model_len == 4096
    assert estimate_vllm(gemma2, 80 * GiB, VllmConfig(), version=V11).max_model_len == 8192


def test_facts_as_dict_stays_plain_data():
    facts = facts_from_config(dict(LINEAR_8B), "test")
    assert facts.as_dict()["length_config"]["rope_scaling"] == (
        {"rope_type": "linear", "factor": 4.0, "original_max_position_embeddings": None},)
