"""The maximum model length exactly as vLLM derives and verifies it, per release (pure).

vLLM's `_get_and_verify_max_len` takes the smallest of several config.json keys, caps it at the sliding window
when that is disabled, multiplies it by the RoPE scaling factor for some rope types (which ones changed between
releases), and refuses a user `--max-model-len` above the result unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set.
Sources, read from the released wheels on PyPI: v0.6.3.post1-v0.10.1 `vllm/config.py` (or config/__init__.py),
v0.11.0 and v0.12-v0.29 `vllm/config/model.py`, v0.33.0 `vllm/transformers_utils/model_arch_config_convertor.py`
(docs/memory-arithmetic.md, "Maximum model length"); the YaRN change is vllm-project/vllm#56446 (first released
in 0.30.0).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS, arithmetic_release
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.versions import Version

# Release boundaries, each the first release wheel that has the behaviour, its predecessor checked without it
# (`vllm/config.py` of the PyPI wheels 0.6.4, 0.6.5, 0.6.6, 0.7.0, 0.8.0, 0.8.2, 0.8.3, 0.8.5, 0.10.1).
MAX_TARGET_POSITIONS_SINCE = Version("0.7.0")  # the "max_target_positions" key (Whisper): absent in 0.6.6
MODEL_MAX_LENGTH_OVERRIDE_SINCE = Version("0.8.3")  # config model_max_length wins outright: absent in 0.8.2
GEMMA3_SKIPS_ROPE_SINCE = Version("0.8.0")  # "Gemma3's max_model_len (128K) is already scaled by RoPE": absent in 0.7.0
# 0.6.4 caps every interleaved-attention model at its window ("not supported by vLLM"); from 0.6.5 only when
# VLLM_ATTENTION_BACKEND is XFORMERS (FLASHINFER too from 0.8), which gsg does not model
INTERLEAVED_FORCES_DISABLE_UNTIL = Version("0.6.5")
NEW_ERROR_TEXT_SINCE = Version("0.11.0")  # "... must be used with extreme caution": 0.10.1 still prints the old text
ROPE_PARAMETERS_SINCE = Version("0.12.0")  # reads rope_parameters, factor applied once; no NotImplementedError
LONGROPE_DEFAULTS_TO_ORIGINAL_SINCE = Version("0.12.0")  # unset --max-model-len = original_max_position_embeddings
YARN_NOT_RESCALED_SINCE = Version("0.30.0")  # vllm#56446: YaRN's max_position_embeddings is already scaled
# Up to 0.11.2, a --max-model-len above the derived length that only model_max_length allows raises
# NotImplementedError under --disable-sliding-window ("... not supported for models model_max_length in the
# config"); the 0.12.0 wheel has neither that nor the rope_scaling one
DISABLED_WINDOW_REFUSALS_UNTIL = ROPE_PARAMETERS_SINCE

FALLBACK_LENGTH = 2048  # "Assuming the model's maximum length is 2048" when no key is present

# config keys, in vLLM's order; the smallest present wins
_KEYS_BEFORE_0_11 = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                     "max_sequence_length", "max_seq_length", "seq_len")
_KEYS_SINCE_0_11 = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
LENGTH_KEYS = _KEYS_SINCE_0_11

_SKIPPED_ALWAYS = ("su", "longrope", "llama3")
_SKIPPED_SINCE_0_30 = _SKIPPED_ALWAYS + ("yarn", "deepseek_yarn", "deepseek_llama_scaling")

ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"


class MaxLenError(UnsupportedModel):
    """vLLM itself fails while deriving the length (a NotImplementedError or KeyError in its code): a model
    facts problem (GSG030), not a bad argument."""


@frozen_value(eq=True)
class RopeEntry:
    """The rope_scaling fields of config.json that change the maximum length."""

    __repr__ = fields_repr

    rope_type: str
    factor: float | int | None = None
    original_max_position_embeddings: int | None = None


@frozen_value(eq=True)
class LengthConfig:
    """The config.json values vLLM's derivation reads (of the text config for multimodal models)."""

    __repr__ = fields_repr

    keys: tuple[tuple[str, int], ...] = ()  # present length keys, in LENGTH_KEYS order
    rope_scaling: tuple[RopeEntry, ...] = ()  # legacy `rope_scaling` (read up to 0.11)
    rope_parameters: tuple[RopeEntry, ...] = ()  # Transformers-v5 `rope_parameters`, per layer type (0.12+)
    model_type: str = ""
    sliding_window: int | None = None  # the smallest window (Mistral int, or a list of windows)
    interleaved_attention: bool = False  # a list of windows, or gemma2: some layers global
    original_max_position_embeddings: int | None = None  # top-level (Phi-3 LongRoPE)

    def key(self, name: str) -> int | None:
        return dict(self.keys).get(name)


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class DerivedLength:
    """The maximum model length vLLM derives from config.json, and where it came from."""

    __repr__ = fields_repr

    value: int | float  # as vLLM holds it: a float once a rope factor multiplied it (its error prints 131072.0)
    key: str | None  # the config key it came from; None = no key, the 2048 fallback
    default: int  # what vLLM serves when --max-model-len is unset
    model_max_length: int | None  # config.json's model_max_length (a larger user value is allowed up to it)
    disable_sliding_window: bool = False  # vLLM's flag as the check sees it (forced for interleaved models in 0.6.4)
    has_window: bool = False  # the config states a sliding window

    @property
    def limit(self) -> int:
        return int(self.value)

    @property
    def sliding_window_disabled(self) -> bool:
        """Every layer keeps full-length KV: the flag is on and there is a window to disable."""
        return self.disable_sliding_window and self.has_window


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class LengthCheck:
    """vLLM's verdict on a user --max-model-len: error = it refuses to start; warning = it starts and warns."""

    __repr__ = fields_repr

    max_model_len: int
    error: str | None = None
    warning: str | None = None


def _positive_int(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return int(value)


def _rope_entry(raw: Mapping) -> RopeEntry | None:
    """Legacy spellings normalised as vLLM's patch_rope_scaling_dict does: type -> rope_type, su -> longrope,
    mrope -> default, telechat3-yarn -> yarn."""
    kind = raw.get("rope_type", raw.get("type"))
    if kind is None:
        return None
    kind = {"su": "longrope", "mrope": "default", "telechat3-yarn": "yarn"}.get(str(kind), str(kind))
    factor = raw.get("factor")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        factor = None
    return RopeEntry(kind, factor, _positive_int(raw.get("original_max_position_embeddings")))


def _rope_entries(raw) -> tuple[RopeEntry, ...]:
    """One entry, or one per layer type when the dictionary is nested ({"full_attention": {...}, ...})."""
    if not isinstance(raw, Mapping) or not raw:
        return ()
    if all(isinstance(v, Mapping) for v in raw.values()):
        return tuple(e for e in (_rope_entry(v) for v in raw.values()) if e is not None)
    entry = _rope_entry(raw)
    return (entry,) if entry else ()


def length_config(text_config: Mapping, top_model_type: str = "") -> LengthConfig:
    """The inputs of the derivation from a config.json (the text config of a multimodal model)."""
    keys = tuple((k, v) for k in LENGTH_KEYS if (v := _positive_int(text_config.get(k))) is not None)
    window = text_config.get("sliding_window")
    if text_config.get("use_sliding_window") is False:  # Qwen2: get_hf_config_sliding_window returns None
        window = None
    windows = [w for w in (_positive_int(x) for x in (window if isinstance(window, list) else [window])) if w]
    model_type = str(text_config.get("model_type") or top_model_type or "")
    return LengthConfig(
        keys=keys,
        rope_scaling=_rope_entries(text_config.get("rope_scaling")),
        rope_parameters=_rope_entries(text_config.get("rope_parameters")),
        model_type=model_type,
        sliding_window=min(windows) if windows else None,
        interleaved_attention=isinstance(window, list) or model_type == "gemma2",
        original_max_position_embeddings=_positive_int(text_config.get("original_max_position_embeddings")),
    )


def _version(version: str | None) -> Version:
    return arithmetic_release("vllm", version)


def derive_max_model_len(cfg: LengthConfig, version: str | None, *,
                         disable_sliding_window: bool = False) -> DerivedLength:
    """vLLM's derived max_model_len for `version` (None = the assumed default version)."""
    v = _version(version)
    names = _KEYS_SINCE_0_11 if v >= MAX_TARGET_POSITIONS_SINCE else _KEYS_BEFORE_0_11
    present = [(name, value) for name in names if (value := cfg.key(name)) is not None]
    derived: int | float | None = min((value for _, value in present), default=None)
    key = next((name for name, value in present if value == derived), None)
    model_max_length = cfg.key("model_max_length")
    if v >= MODEL_MAX_LENGTH_OVERRIDE_SINCE and model_max_length:
        derived, key = model_max_length, "model_max_length"

    if v < INTERLEAVED_FORCES_DISABLE_UNTIL and cfg.interleaved_attention and cfg.sliding_window:
        disable_sliding_window = True  # 0.6.4: "has interleaved attention ... capping the max length"
    if disable_sliding_window and cfg.sliding_window is not None and \
            (derived is None or cfg.sliding_window < derived):
        derived, key = cfg.sliding_window, "sliding_window"

    if derived is None:
        derived, key = FALLBACK_LENGTH, None  # before RoPE scaling: a factor still multiplies the fallback

    gemma3_skip = v >= GEMMA3_SKIPS_ROPE_SINCE and "gemma3" in cfg.model_type
    longrope = False
    if v >= ROPE_PARAMETERS_SINCE:
        entries = cfg.rope_parameters or cfg.rope_scaling  # Transformers maps a legacy rope_scaling over
        longrope = any(e.rope_type == "longrope" for e in entries)
        if entries and not gemma3_skip:
            skipped = _SKIPPED_SINCE_0_30 if v >= YARN_NOT_RESCALED_SINCE else _SKIPPED_ALWAYS
            factor: int | float = 1.0
            for entry in entries:  # the last entry that has a factor wins; it is applied once
                if entry.rope_type in skipped:
                    continue
                factor = entry.factor if entry.factor is not None else factor
                if entry.rope_type == "yarn":
                    derived = _yarn_original(entry, version)
            derived *= factor
    elif cfg.rope_scaling and not gemma3_skip:
        entry = cfg.rope_scaling[0]
        if entry.rope_type not in _SKIPPED_ALWAYS:
            if disable_sliding_window:
                raise MaxLenError("vLLM raises NotImplementedError: disabling sliding window is not supported for "
                                  f"models with rope_scaling (rope_type '{entry.rope_type}')")
            if entry.rope_type == "yarn":
                derived = _yarn_original(entry, version)
            derived *= entry.factor if entry.factor is not None else 1.0

    default = int(derived)
    if longrope and v >= LONGROPE_DEFAULTS_TO_ORIGINAL_SINCE and cfg.original_max_position_embeddings:
        default = cfg.original_max_position_embeddings  # "avoid performance degradation for shorter sequences"
    return DerivedLength(derived, key, default, model_max_length,
                         disable_sliding_window=disable_sliding_window, has_window=cfg.sliding_window is not None)


def _yarn_original(entry: RopeEntry, version: str | None) -> int:
    if entry.original_max_position_embeddings is None:
        raise MaxLenError(f"vLLM {version or DEFAULT_VERSIONS['vllm']} reads rope_scaling."
                          "original_max_position_embeddings for YaRN and the config has none (KeyError at startup)")
    return entry.original_max_position_embeddings


def allow_long_max_model_len(env: Mapping[str, str] | None) -> bool:
    """vllm/envs.py: VLLM_ALLOW_LONG_MAX_MODEL_LEN is on for "1" or "true" (any case, spaces stripped)."""
    return str((env or {}).get(ALLOW_LONG_ENV, "0")).strip().lower() in ("1", "true")


def check_max_model_len(requested: int | None, derived: DerivedLength, version: str | None,
                        allow_long: bool) -> LengthCheck:
    """vLLM's verification of a user --max-model-len against the derived length, with its own message."""
    if requested is None:
        return LengthCheck(derived.default)
    if derived.key is None or requested <= derived.value:
        return LengthCheck(requested)  # no key: vLLM takes the user's value as the length
    if derived.model_max_length is not None and requested <= derived.model_max_length:
        if derived.disable_sliding_window and _version(version) < DISABLED_WINDOW_REFUSALS_UNTIL:
            return LengthCheck(requested, error="vLLM raises NotImplementedError: Disabling sliding window is not "
                                                "supported for models model_max_length in the config. Please raise "
                                                "an issue so we can investigate.")
        return LengthCheck(requested)
    message = (f"User-specified max_model_len ({requested}) is greater than the derived max_model_len "
               f"({derived.key}={derived.value} or model_max_length={derived.model_max_length} in model's "
               "config.json).")
    if _version(version) >= NEW_ERROR_TEXT_SINCE:
        caution = (f"{ALLOW_LONG_ENV} must be used with extreme caution. If the model uses relative position "
                   "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses "
                   "absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array "
                   "out-of-bounds error.")
        if allow_long:
            return LengthCheck(requested, warning=f"{message} {caution}")
        return LengthCheck(requested, error=f"{message} To allow overriding this maximum, set the env var "
                                            f"{ALLOW_LONG_ENV}=1. {caution}")
    message += " This may lead to incorrect model outputs or CUDA errors."
    if allow_long:
        return LengthCheck(requested, warning=f"{message} Make sure the value is correct and within the model "
                                              "context size.")
    return LengthCheck(requested, error=f"{message} To allow overriding this maximum, set the env var "
                                        f"{ALLOW_LONG_ENV}=1")


def derive_for_facts(length_config: LengthConfig | None, stated: int | None, version: str | None, *,
                     disable_sliding_window: bool = False) -> DerivedLength | None:
    """The derivation from config.json when the facts have it; else the stated length (guard.model, GGUF
    context_length) taken as vLLM's derived value; None when neither is known."""
    if length_config is not None:
        return derive_max_model_len(length_config, version, disable_sliding_window=disable_sliding_window)
    if stated:
        return DerivedLength(stated, "max_position_embeddings", stated, None)
    return None
