"""Model facts from a Hugging Face `config.json` dictionary (pure: the caller reads the file)."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any, Literal

from gpustack_guard.core.memory.facts import GATED_DELTA_SHAPE, MAMBA2_SHAPE, ModelFacts, RopeTable
from gpustack_guard.core.memory.max_len import LengthConfig, MaxLenError, derive_max_model_len, length_config
from gpustack_guard.core.memory.quant import MXFP4_DENSE, MXFP4_GROUP
from gpustack_guard.core.memory.vision import vision_tower, vit_shape

_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "float32": "float32", "bf16": "bfloat16",
           "fp16": "float16", "half": "float16", "float": "float32"}


# config.json keys that ModelFacts takes under the same name, as they are
_SAME_NAMED = ("head_dim", "vocab_size", "num_experts_per_tok", "moe_intermediate_size", "first_k_dense_replace",
               "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
               "index_n_heads", "index_head_dim", "index_topk", "o_lora_rank", "o_groups", "hc_mult", "num_hash_layers",
               "num_nextn_predict_layers", "expert_dtype")


def _first(config: dict, *keys: str) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return None


def _window_layers(config: dict, layers: int) -> tuple[int | None, int | None]:
    """(window, how many layers use it) from layer_types, Gemma patterns or a model-wide window."""
    window = config.get("sliding_window")
    if not window or config.get("use_sliding_window") is False:
        return None, None
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        return window, sum(1 for t in types if "sliding" in str(t))
    model_type = config.get("model_type", "")
    if model_type.startswith("gemma2"):
        return window, layers // 2  # alternating local/global
    pattern = config.get("sliding_window_pattern")
    if model_type.startswith("gemma3") or pattern:
        pattern = pattern or 6
        return window, layers - layers // pattern  # every pattern-th layer is global
    return window, layers  # Mistral-style: every layer windowed


def _native_length(lengths: LengthConfig) -> int | None:
    """The derived length at the assumed vLLM version; render binds the spec's own version (max_len.py)."""
    if not lengths.keys:
        return None  # no key: vLLM would assume 2048, but say "unknown" rather than guess
    try:
        return derive_max_model_len(lengths, None).limit
    except MaxLenError:
        return lengths.key("max_position_embeddings") or lengths.keys[0][1]


# module-path parts of the encoders beside the text model (Qwen-VL's visual, vision_tower / vision_model, audio_tower)
_ENCODER_TOWERS = ("visual", "vision", "audio")


def _skips_attention(patterns) -> tuple[bool, bool]:
    """(full, linear): whether modules_to_not_convert / ignore / exclude_modules keep the full-attention
    projections (gpt-oss's `model.layers.*.self_attn`) or the linear-attention ones (llm-compressor's NVFP4
    recipes for Qwen3.5/3.6 keep `re:.*linear_attn.*` in bf16) unquantised. vLLM matches each name or regex
    against every shard of a fused layer (compressed_tensors/utils.py should_ignore_layer@v0.20.0), so a
    pattern naming `linear_attn` leaves the Gated DeltaNet projections 16-bit and the gated attention
    quantised; a bare `attn` or `attention` names both. A name inside an encoder tower (compressed-tensors lists
    `model.visual.blocks.0.attn.qkv` and the like) names none of the text model's: the towers are counted at the
    checkpoint's width anyway (profiles, multimodal models)."""
    full = linear = False
    for raw in patterns if isinstance(patterns, list) else ():
        p = str(raw)
        if any(tower in p for tower in _ENCODER_TOWERS):
            continue
        if "linear_attn" in p:
            linear = True
            p = p.replace("linear_attn", "")
        if "self_attn" in p:
            full = True
        elif "attn" in p or "attention" in p:
            full = linear = True
    return full, linear


def _compressed_tensors(q: dict) -> dict:
    """compressed-tensors: the first config group's weight scheme (w4a16 pack-quantized, w8a8 int, FP8
    channel/block, NVFP4). A scheme gsg has no bytes for keeps a method name that says what it is."""
    groups = [g for g in (q.get("config_groups") or {}).values() if isinstance(g, dict)]
    weights = (groups[0].get("weights") or {}) if groups else {}
    kind, bits = weights.get("type"), weights.get("num_bits")
    strategy = weights.get("strategy")
    group = weights.get("group_size")
    out: dict = {"quant_bits": bits, "quant_zero_point": weights.get("symmetric") is False}
    if kind == "float" and bits == 8:
        block = weights.get("block_structure")
        per_block = block[0] * block[1] if strategy == "block" and isinstance(block, list) and len(block) == 2 \
            else None
        return out | {"quant_method": "fp8", "quant_group_size": per_block}
    if kind == "float" and bits == 4 and group == MXFP4_GROUP and strategy == "group" \
            and weights.get("symmetric") is not False:
        # vLLM's _is_mxfp4 (compressed_tensors.py@v0.14.0-@v0.31.0): group strategy, 32 a scale, symmetric; the
        # scales are E8M0 bytes (scale_dtype "torch.uint8", format mxfp4-pack-quantized), no global scale
        return out | {"quant_method": MXFP4_DENSE, "quant_group_size": group}
    if kind == "float" and bits == 4 and group:
        return out | {"quant_method": "nvfp4", "quant_group_size": group}
    if kind == "int" and bits == 8 and strategy in ("channel", "tensor"):
        return out | {"quant_method": "int8", "quant_group_size": None}
    if kind == "int" and bits in (4, 8) and strategy in ("group", "channel"):
        return out | {"quant_method": "w4a16" if bits == 4 else "w8a16", "quant_group_size":
                      group if strategy == "group" else None}
    return out | {"quant_method": f"compressed-tensors ({kind} {bits}-bit, strategy {strategy}, format "
                                  f"{q.get('format') or (groups[0].get('format') if groups else None)})"}


def _quantization(config: dict) -> dict[str, Any]:
    """quantization_config -> the ModelFacts quantisation fields (method, bits, group, zero point, scope)."""
    q = config.get("quantization_config")
    if not isinstance(q, dict):
        return {}
    method = str(q.get("quant_method") or "").lower() or None
    bits = q.get("bits") or q.get("w_bit")
    group = q.get("group_size") or q.get("q_group_size")
    skip = q.get("modules_to_not_convert") or q.get("ignore") or q.get("exclude_modules")
    out: dict[str, Any] = {"quant_format": method}
    if method == "bitsandbytes":
        bits = 4 if q.get("load_in_4bit") else 8
    elif method in ("gptq", "awq"):
        out["quant_zero_point"] = True  # both formats store packed zeros per group, symmetric or not
    elif method == "mxfp4":
        bits, group = 4, 32
    elif method == "fp8":
        block = q.get("weight_block_size")
        if block is not None and not (isinstance(block, list) and len(block) == 2 and
                                      all(type(n) is int and 0 < n <= MAX_CONFIG_COUNT for n in block)):
            raise BadConfig("quantization_config.weight_block_size must be two whole numbers from 1 to "
                            f"{MAX_CONFIG_COUNT:,}, not {_shown_value(block)}")
        bits, group = 8, (block[0] * block[1] if block else None)
        if block:
            out["quant_block"] = (block[0], block[1])
    elif method in ("modelopt", "modelopt_fp4"):
        nested = q.get("quantization")
        inner: dict = nested if isinstance(nested, dict) else q
        algo = str(inner.get("quant_algo") or ("NVFP4" if method == "modelopt_fp4" else "")).upper()
        skip = skip or inner.get("exclude_modules")
        group = inner.get("group_size") or group
        if algo == "FP8":
            method, bits, group = "fp8", 8, None
        elif algo == "NVFP4":
            method, bits, group = "nvfp4", 4, group or 16
        else:
            method = f"modelopt {algo or '(no quant_algo)'}"
    elif method == "compressed-tensors":
        ct = _compressed_tensors(q)
        method, bits, group = ct.pop("quant_method"), ct.pop("quant_bits"), ct.pop("quant_group_size", group)
        out |= ct
    out |= {"quant_method": method, "quant_bits": int(bits) if bits else None,
            "quant_group_size": int(group) if group else None}
    out["quant_skips_attention"], out["quant_skips_linear_attention"] = _skips_attention(skip)
    return out


# Architectures whose MLP is two matrices (up, down) instead of gate + up + down: their vLLM model files
# (gpt2, gpt_bigcode, gpt_j, gpt_neox, opt, bloom, falcon, mpt, phi, starcoder2, persimmon, nemotron).
_PLAIN_MLP = frozenset({"gpt2", "gpt_bigcode", "gptj", "gpt_neox", "opt", "bloom", "falcon", "RefinedWeb",
                        "RefinedWebModel", "mpt", "phi", "starcoder2", "persimmon", "nemotron", "nemotron_h"})
# Their configs may leave the MLP width out: the transformers default is 4 x hidden (n_inner, ffn_hidden_size)
_FOUR_X_HIDDEN = frozenset({"gpt2", "gpt_bigcode", "gptj", "bloom", "falcon", "RefinedWeb", "RefinedWebModel"})
_FALCON = ("falcon", "RefinedWeb", "RefinedWebModel")
# Their transformers config classes leave tie_word_embeddings at PretrainedConfig's default, True (the output
# layer is the embedding); Llama-style classes default it to False.
# Gemma (1, 2, 3), StarCoder2 and Cohere's classes default it to True explicitly.
_TIED_BY_DEFAULT = frozenset({"gpt2", "gpt_bigcode", "bloom", "opt", "mpt", *_FALCON, "gemma", "gemma2",
                              "gemma3_text", "gemma4_text", "starcoder2", "cohere", "cohere2"})

# q/k norms: Qwen3, Gemma 3 and GLM-4.5 (use_qk_norm) norm q and k per head over head_dim, OLMo2 and Cohere
# (use_qk_norm) over every head
_PER_HEAD_QK_NORM = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "gemma4_text", "dots1", "qwen3_next",
                               "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})
_ALL_HEADS_QK_NORM = frozenset({"olmo2"})
_NOAUX_BY_DEFAULT = frozenset({"deepseek_v3", "kimi_k2", "glm4_moe", "dots1"})
# Gemma 2/3 add pre- and post-feedforward norms to the attention ones
_FOUR_NORMS = frozenset({"gemma2", "gemma3", "gemma3_text", "gemma4_text"})
# Cohere's parallel block has one (unbiased) LayerNorm
_ONE_NORM = frozenset({"cohere", "cohere2"})
# LayerNorm families (each norm a weight and a bias), as their transformers/vLLM classes build them:
# model type -> (norms per layer, q/k/v/o biased, MLP biased, lm_head biased, learned position embeddings)
_LAYERNORM_FAMILIES = {
    "gpt2": (2, True, True, False, True),
    "gpt_bigcode": (2, True, True, False, True),
    "gpt_neox": (2, True, True, False, False),  # attention_bias (default true) switches q/k/v/o
    "phi": (1, True, True, True, False),  # one LayerNorm per parallel block
    "gptj": (1, False, True, True, False),
    "starcoder2": (2, True, True, False, False),  # use_bias switches every projection; the norms keep theirs
}


def _new_falcon(config: dict, model_type: str) -> bool:
    """Falcon's new decoder architecture (40B, 180B); vLLM's own RWConfig makes "RefinedWeb" one."""
    return model_type in _FALCON and bool(config.get("new_decoder_architecture") or model_type == "RefinedWeb")


def _norms_and_biases(config: dict, model_type: str) -> dict[str, Any]:
    """Norm and bias parameters beyond a Llama layer's two RMSNorms and bias-free projections (weights.py)."""
    if model_type in _FALCON:  # a parallel block has one LayerNorm, the new architecture one per branch
        norms = config.get("num_ln_in_parallel_attn", 2) if _new_falcon(config, model_type) \
            else (1 if config.get("parallel_attn", True) else 2)
        projections = bool(config.get("bias"))
        return {"layer_norms": norms, "norm_bias": True, "attention_bias": projections,
                "output_bias": projections, "mlp_bias": projections}
    if model_type in _LAYERNORM_FAMILIES:
        norms, attention, mlp, head, positions = _LAYERNORM_FAMILIES[model_type]
        if model_type == "starcoder2":
            attention = mlp = bool(config.get("use_bias", True))
        if model_type == "gpt_neox":
            attention = bool(config.get("attention_bias", True))
        return {"layer_norms": norms, "norm_bias": True, "attention_bias": attention, "output_bias": attention,
                "mlp_bias": mlp, "lm_head_bias": head,
                "position_embeddings": _first(config, "n_positions", "max_position_embeddings") if positions else 0}
    gpt_oss = model_type == "gpt_oss"  # biased o_proj, per-head attention sinks, biased router and experts
    return {"layer_norms": 4 if model_type in _FOUR_NORMS else 1 if model_type in _ONE_NORM else 2,
            # Llama's attention_bias biases o_proj too (Qwen2's qkv bias does not), mlp_bias its MLP
            "output_bias": gpt_oss or (model_type in ("llama", "granite") and bool(config.get("attention_bias"))),
            "mlp_bias": bool(config.get("mlp_bias")), "attention_sinks": gpt_oss, "expert_bias": gpt_oss,
            # Gemma2Config defaults attn_logit_softcapping to 50.0, so a config may leave it out
            "attention_softcap": bool(config.get("attn_logit_softcapping", 50.0 if model_type == "gemma2" else None))}


def _qk_norm(config: dict, model_type: str) -> Literal["per_head", "all_heads"] | None:
    if model_type in _PER_HEAD_QK_NORM or (model_type == "glm4_moe" and config.get("use_qk_norm")):
        return "per_head"
    if model_type in _ALL_HEADS_QK_NORM or (model_type == "cohere" and config.get("use_qk_norm")):
        return "all_heads"
    return None


# transformers' PretrainedConfig: num_labels is len(id2label) when the config carries one, else 2
_DEFAULT_LABELS = 2


def _classifier_labels(config: dict, architecture: object) -> int:
    """A sequence-classification checkpoint's labels (its score head's outputs); 0 for any other class."""
    if not str(architecture or "").endswith("ForSequenceClassification"):
        return 0
    id2label = config.get("id2label")
    if isinstance(id2label, dict) and id2label:
        return len(id2label)
    labels = config.get("num_labels")
    if isinstance(labels, int) and not isinstance(labels, bool) and labels > 0:
        return labels
    return _DEFAULT_LABELS


def _kv_heads(config: dict, model_type: str) -> int | None:
    """KV heads as vLLM's ModelConfig.get_total_num_kv_heads reads them, in its order: multi-query models
    (gpt_bigcode, the first Falcons) keep one; MPT and DBRX name them in attn_config; then n_head_kv (Falcon),
    num_kv_heads (Falcon 40B+), num_key_value_heads (Llama), multi_query_group_num (ChatGLM). None: as many as
    attention heads."""
    if not _new_falcon(config, model_type) and config.get("multi_query"):
        return 1
    if model_type in ("mpt", "dbrx"):
        attn = config.get("attn_config")
        return attn.get("kv_n_heads") if isinstance(attn, dict) else None
    return _first(config, "n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num")


def _mlp_width(config: dict, model_type: str, hidden: Any) -> Any:
    """The dense MLP's width. Qwen (v1) states twice the width of each of its two gated halves (vLLM's
    qwen.py builds QWenMLP(hidden, intermediate_size // 2)); MPT states it as expansion_ratio x d_model."""
    width = _first(config, "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
    if model_type == "qwen" and isinstance(width, int):
        return width // 2
    if width is None and isinstance(hidden, int):
        if model_type == "mpt":
            return int(float(config.get("expansion_ratio") or 4) * hidden)
        if model_type in _FOUR_X_HIDDEN:
            return 4 * hidden
    return width


# Layer types that keep a KV cache per token (Gemma 3, gpt-oss, Qwen 3: full and sliding; Llama 4: chunked).
_ATTENTION_LAYERS = frozenset({"full_attention", "sliding_attention", "attention", "chunked_attention"})
# Recurrent and state-space models, alone or beside attention: Mamba, RWKV, Jamba, Falcon-H1, Nemotron-H, Bamba,
# Zamba, Granite 4.0-H, PLaMo 2, RecurrentGemma, MiniMax lightning attention, Qwen3-Next, Kimi Linear, LFM2.
_RECURRENT_TYPES = frozenset({"mamba", "mamba2", "falcon_mamba", "rwkv", "rwkv5", "rwkv6", "rwkv7", "jamba",
                              "falcon_h1", "nemotron_h", "bamba", "zamba", "zamba2", "granitemoehybrid", "plamo2",
                              "recurrent_gemma", "minimax", "minimax_text_01", "minimax_m1", "qwen3_next",
                              "kimi_linear", "lfm2", "lfm2_moe", "xlstm"})
_RECURRENT_KEYS = ("layer_types", "hybrid_override_pattern", "attn_layer_period", "attn_type_list",
                   "linear_attn_config", "full_attention_interval", "mamba_d_state", "ssm_cfg", "block_types")


# Gated DeltaNet hybrids whose state vLLM sizes from the linear_* keys (qwen3_next.py, qwen3_5.py):
# core/memory/gated_delta.py models them, core/memory/mamba2.py the Mamba-2 hybrids (_mamba2); every other
# recurrent family above is still refused.
_GATED_DELTA_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})
_GATED_DELTA_KINDS = frozenset({"linear_attention"})


def _gated_delta(config: dict, model_type: str, layers: int | None) -> dict[str, Any]:
    """The Gated DeltaNet fields of a Qwen3-Next / Qwen3.5 config, or {} for any other model. The linear layers
    are the ones layer_types names "linear_attention", else all but every full_attention_interval-th
    (Qwen3NextConfig's default interval is 4)."""
    if model_type not in _GATED_DELTA_TYPES or not layers:
        return {}
    interval = config.get("full_attention_interval", 4)
    kinds = config.get("layer_types")
    linear: int | None
    if isinstance(kinds, list) and kinds:
        linear = sum(1 for k in kinds[:layers] if k == "linear_attention")
        full = layers - linear
        interval = layers // full if full and layers % full == 0 else interval
    else:
        linear = layers - layers // interval if isinstance(interval, int) and interval > 0 else None
    if not linear or linear >= layers:  # no full-attention layer: no attention page to size the state by
        return {}
    return {"linear_attention_layers": linear, "full_attention_interval": interval,
            "attention_output_gate": bool(config.get("attn_output_gate", True)),
            "mamba_ssm_dtype": config.get("mamba_ssm_dtype"),
            **{key: config.get(key) for key in ("linear_num_key_heads", "linear_num_value_heads",
                                                "linear_key_head_dim", "linear_value_head_dim",
                                                "linear_conv_kernel_dim")}}


# Mamba-2 hybrids whose state vLLM sizes by MambaStateShapeCalculator.mamba2_state_shape (nemotron_h.py,
# granitemoehybrid.py, bamba.py @v0.10.2 .. @v0.34.0 get_mamba_state_shape_from_config): core/memory/mamba2.py.
# Falcon-H1 (attention and Mamba-2 in every layer), Zamba2 (shared attention blocks), Nemotron 3's MoE ("E")
# layers and Jamba's Mamba-1 mixers are not read and stay refused.
_MAMBA2_TYPES = frozenset({"nemotron_h", "granitemoehybrid", "bamba"})


def _mamba2_pattern(config: dict, model_type: str, layers: int) -> str | None:
    """One character a layer: M (Mamba-2 mixer), * (attention), - (an MLP alone, Nemotron-H only)."""
    if model_type == "nemotron_h":
        pattern = config.get("hybrid_override_pattern")
        return pattern if isinstance(pattern, str) and len(pattern) == layers and set(pattern) <= set("M*-") \
            else None
    if model_type == "granitemoehybrid":
        kinds = config.get("layer_types")
        if not isinstance(kinds, list) or len(kinds) != layers or not set(kinds) <= {"mamba", "attention"}:
            return None
        return "".join("*" if kind == "attention" else "M" for kind in kinds)
    attention = config.get("attn_layer_indices")  # bamba: the attention layers by index, Mamba-2 elsewhere
    if not isinstance(attention, list) or not all(isinstance(i, int) for i in attention):
        return None
    marked = set(attention)
    return "".join("*" if i in marked else "M" for i in range(layers))


def _mamba2(config: dict, model_type: str, layers: int | None, hidden: Any) -> dict[str, Any]:
    """The Mamba-2 fields of a Nemotron-H / Granite-4.0-H / Bamba config, or {} for any other model or a layout
    gsg does not read (no attention layer, MoE layers, a per-layer width list)."""
    if model_type not in _MAMBA2_TYPES or not layers or not isinstance(hidden, int):
        return {}
    pattern = _mamba2_pattern(config, model_type, layers)
    if not pattern or "*" not in pattern or "M" not in pattern:  # the attention page sizes the state page
        return {}
    if model_type == "nemotron_h":  # vLLM reads these names (nemotron_h.py get_mamba_state_shape_from_config)
        heads, head_dim = config.get("mamba_num_heads"), config.get("mamba_head_dim")
        if not isinstance(config.get("intermediate_size"), int) or not isinstance(heads, int) \
                or not isinstance(head_dim, int):
            return {}
        return {"mamba_pattern": pattern, "mamba_num_heads": heads, "mamba_head_dim": head_dim,
                "mamba_d_state": config.get("ssm_state_size"), "mamba_n_groups": config.get("n_groups"),
                "mamba_d_conv": config.get("conv_kernel"), "mamba_intermediate_size": heads * head_dim,
                "mamba_ssm_cache_dtype": config.get("mamba_ssm_cache_dtype"), "layer_norms": 1,
                "mamba_chunk_size": _chunk_size(config)}
    expand = config.get("mamba_expand")
    return {"mamba_pattern": pattern, "mamba_mlp_every_layer": True, "mamba_num_heads": config.get("mamba_n_heads"),
            "mamba_head_dim": config.get("mamba_d_head"), "mamba_d_state": config.get("mamba_d_state"),
            "mamba_n_groups": config.get("mamba_n_groups"), "mamba_d_conv": config.get("mamba_d_conv"),
            "mamba_intermediate_size": int(expand * hidden) if isinstance(expand, (int, float)) else None,
            "mamba_chunk_size": _chunk_size(config)}


def _chunk_size(config: dict) -> int | None:
    """The Mamba-2 SSD chunk as vLLM's get_mamba_chunk_size looks it up: mamba_chunk_size (Granite, Bamba), else
    chunk_size (Nemotron-H); None where the config names neither."""
    for key in ("mamba_chunk_size", "chunk_size"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _recurrent_layers(config: dict, model_type: str) -> str | None:
    """What holds per-sequence state instead of (or beside) a per-token KV cache, or None for attention only:
    such layers size memory by sequences, which gsg models only for Gated DeltaNet hybrids (_gated_delta, checked
    first by the caller); for the rest no verdict is better than a guess."""
    kinds = config.get("layer_types")
    if isinstance(kinds, list):
        other = sorted({str(k) for k in kinds} - _ATTENTION_LAYERS)
        if other:
            return "layer types " + ", ".join(repr(k) for k in other[:4])
    if model_type in _RECURRENT_TYPES:
        return f"model type '{model_type}'"
    for key in _RECURRENT_KEYS[1:]:
        if config.get(key) is not None:
            return f"'{key}' in its config"
    return None


# Layouts whose KV cache or weights gsg has no rule for, each named by the config keys that carry it (read from
# the transformers config classes and vLLM's model files of the family). Sizing such a model as a plain decoder
# would print a confident wrong number; GSG030 says which part is missing instead.
_UNMODELLED_KEYS = (
    # Gemma 3n / Gemma 4 small: the last layers reuse earlier layers' KV (no cache of their own)
    ("num_kv_shared_layers", "per-layer KV sharing ('num_kv_shared_layers')"),
    # Gemma 3n / Gemma 4: a per-layer embedding table beside the main one (vocab x layers x width)
    ("hidden_size_per_layer_input", "per-layer input embeddings ('hidden_size_per_layer_input')"),
    ("altup_num_inputs", "AltUp and LAuReL blocks ('altup_num_inputs')"),
    # chunked local attention and MoE on every n-th layer are read for Llama 4 only (_llama4)
    ("attention_chunk_size", "chunked local attention ('attention_chunk_size')"),
    ("interleave_moe_layer_step", "MoE on every n-th layer only ('interleave_moe_layer_step')"),
    # ERNIE 4.5 MoE and Hunyuan MoE: expert counts and widths under keys the MoE arithmetic does not read
    ("moe_num_experts", "ERNIE-style MoE keys ('moe_num_experts', 'moe_layer_start_index')"),
    ("moe_topk", "Hunyuan-style MoE keys ('moe_topk', 'num_shared_expert')"),
    # MiniMax-M3 and similar: dense and MoE layers mixed by a per-layer list
    ("moe_layer_freq", "MoE on listed layers only ('moe_layer_freq')"),
)


def _feature_off(key: str, value: Any) -> bool:
    """Null, 0, false and [] turn a feature off (Gemma 4 31B states num_kv_shared_layers 0); a step or frequency
    of 1, or a per-layer list of ones, is MoE on every layer, which is modelled (DeepSeek-V3: moe_layer_freq 1)."""
    if value in (None, 0, False, []):
        return True
    if key in ("interleave_moe_layer_step", "moe_layer_freq"):
        return value == 1 or (isinstance(value, list) and all(v == 1 for v in value))
    return False


def _unmodelled(config: dict, top: dict, model_type: str) -> str | None:
    """What of this layout gsg cannot size, or None (Qwen3-MoE's mlp_only_layers [] and decoder_sparse_step 1 are
    MoE on every layer)."""
    read = _LLAMA4_KEYS if model_type in _LLAMA4_TYPES else ()
    found = [what for key, what in _UNMODELLED_KEYS if key not in read and not _feature_off(key, config.get(key))]
    if config.get("mlp_only_layers"):
        found.append("dense layers among MoE ones ('mlp_only_layers')")
    if config.get("decoder_sparse_step") not in (None, 1):
        found.append("MoE on every n-th layer only ('decoder_sparse_step')")
    if config.get("use_cla") or (config.get("cla_share_factor") or 1) > 1:
        found.append("cross-layer KV sharing ('use_cla', 'cla_share_factor')")
    if config.get("index_topk") and not config.get("compress_ratios"):
        # DeepSeek-V3.2 / GLM-5 sparse attention: vLLM's deepseek_v2.py DeepseekV32IndexerCache is a second
        # per-layer cache (an MLAAttentionSpec of 128 fp8 keys + 4 scale bytes per token) beside the MLA latent;
        # how the KV manager pages the two together is not read yet, so no number (DeepSeek-V4's is modelled)
        found.append("a sparse-attention indexer with its own per-token key cache ('index_topk')")
    if top.get("audio_config") or "audio" in str(top.get("model_type", "")):
        found.append("an audio encoder ('audio_config')")
    if model_type.startswith("gemma4") and config.get("global_head_dim") and not isinstance(
            config.get("layer_types"), list):
        found.append("full-attention layers of their own shape without 'layer_types' to place them")
    if model_type.startswith("gemma3n") and not found:
        found.append(f"the {model_type} layer layout")
    return "; ".join(dict.fromkeys(found)) or None


# Llama 4 (transformers' Llama4TextConfig, vLLM's llama4.py): every no_rope_layer_interval-th layer (4) is a NoPE
# layer with full attention, the others RoPE layers with chunked local attention (no_rope_layers: 1 = RoPE); the
# experts (intermediate_size wide, one shared expert beside them) sit on every interleave_moe_layer_step-th layer,
# the other layers are dense MLPs of intermediate_size_mlp.
_LLAMA4_TYPES = frozenset({"llama4", "llama4_text"})
_LLAMA4_KEYS = ("attention_chunk_size", "interleave_moe_layer_step")


def _llama4(config: dict, model_type: str, layers: int | None) -> dict[str, Any]:
    """The Llama 4 fields (chunked layers, MoE step, expert and dense widths), or {} for any other model."""
    if model_type not in _LLAMA4_TYPES or not layers:
        return {}
    out: dict[str, Any] = {"moe_layer_step": config.get("interleave_moe_layer_step", 1) or None}
    chunk = config.get("attention_chunk_size")
    if chunk:
        rope = config.get("no_rope_layers")
        if isinstance(rope, list) and rope:
            chunked = sum(1 for r in rope[:layers] if r)
        else:  # Llama4TextConfig: no_rope_layers[i] = int((i + 1) % no_rope_layer_interval != 0)
            interval = config.get("no_rope_layer_interval", 4)
            chunked = layers - layers // interval
        out |= {"attention_chunk_size": chunk, "chunked_attention_layers": chunked or None}
    experts = _first(config, "num_local_experts", "num_experts")
    if experts and experts > 1:  # intermediate_size is one expert's width, intermediate_size_mlp the dense one's
        width = config.get("intermediate_size")
        out |= {"moe_intermediate_size": width, "shared_expert_intermediate_size": width,
                "intermediate_size": config.get("intermediate_size_mlp", width)}
    return out


def _gemma4(config: dict, model_type: str) -> dict[str, Any]:
    """Gemma 4's full-attention shape and MoE keys (vLLM gemma4.py@v0.19.0 Gemma4DecoderLayer): full layers take
    global_head_dim, and num_global_key_value_heads only when attention_k_eq_v (else num_key_value_heads); the MoE
    block (enable_moe_block) runs beside the dense MLP, which the arithmetic counts as an always-on shared expert."""
    if not model_type.startswith("gemma4"):
        return {}
    out: dict[str, Any] = {}
    if config.get("enable_moe_block") or config.get("use_second_mlp_block"):
        out |= {"num_experts_per_tok": config.get("top_k_experts"),
                "shared_expert_intermediate_size": config.get("intermediate_size")}
    full_dim, kinds = config.get("global_head_dim"), config.get("layer_types")
    if not full_dim or not isinstance(kinds, list):
        return out
    k_eq_v = bool(config.get("attention_k_eq_v"))
    heads = config.get("num_global_key_value_heads") if k_eq_v else None
    return out | {"full_attention_head_dim": full_dim, "full_attention_k_eq_v": k_eq_v,
                  "full_attention_kv_heads": heads or _kv_heads(config, model_type),
                  "full_attention_layer_ids": tuple(i for i, k in enumerate(kinds) if k == "full_attention")}


# Model types whose positions are learned or ALiBi (no rotary embedding, no cos/sin cache); Falcon says so per
# checkpoint ("alibi"). Gemma 4's caches are its own rule (profiles.VLLM_GEMMA4 rope_caches), DeepSeek-V4's
# compressed attention is not read here.
_NO_ROPE = frozenset({"gpt2", "gpt_bigcode", "opt", "bloom", "mpt", "jais"})
# what transformers' config classes set when config.json leaves the rope base out, where a model keeps a second
# rope for its sliding layers (Gemma3TextConfig: rope_theta 1,000,000, rope_local_base_freq 10,000)
_GEMMA3_BASES = (1_000_000.0, 10_000.0)


def _rope_dict(raw: Any) -> dict | None:
    return raw if isinstance(raw, dict) and raw else None


def _rope_table(rope: dict | None, config: dict, positions: int, head: int) -> RopeTable | None:
    """One rope configuration as vLLM's get_rope reads it (rotary_embedding/__init__.py@v0.14.0): the type
    (legacy "type"; "su" is longrope, "mrope" the default rope with sections, as patch_rope_scaling_dict renames
    them), the partial factor (rope_parameters first, then the config's own) and the original length."""
    rope = rope or {}
    kind = str(rope.get("rope_type", rope.get("type", "default")))
    mrope = kind == "mrope" or "mrope_section" in rope
    kind = {"su": "longrope", "mrope": "default"}.get(kind, kind)
    width = rope.get("rope_dim") or config.get("rotary_dim")  # GPT-J, CodeGen: a stated width
    if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
        partial = _first(rope, "partial_rotary_factor") or _first(config, "partial_rotary_factor", "rotary_pct")
        if str(config.get("model_type", "")) == "chatglm":
            partial = 0.5  # chatglm.py: get_rope(head_dim, rotary_dim=head_dim // 2) / partial_rotary_factor 0.5
        partial = partial if isinstance(partial, (int, float)) and not isinstance(partial, bool) and \
            0 < partial <= 1 else 1.0
        width = int(head * partial)
    factor = rope.get("factor")
    factor = float(factor) if isinstance(factor, (int, float)) and not isinstance(factor, bool) and \
        math.isfinite(factor) and 0 < factor <= MAX_CONFIG_COUNT else None
    # llama.py copies the top-level original_max_position_embeddings into the rope dict (Phi-3 LongRoPE)
    original = _first(rope, "original_max_position_embeddings") or config.get("original_max_position_embeddings")
    original = original if isinstance(original, int) and not isinstance(original, bool) and \
        0 < original <= MAX_CONFIG_COUNT else None
    if width <= 0:
        return None
    return RopeTable(kind, positions, width, factor, original, mrope)


def _rope_tables(config: dict, model_type: str, head: int | None) -> tuple[RopeTable, ...]:
    """The distinct rotary embeddings a model's layers ask vLLM's get_rope for (one cos/sin cache each): one for
    most models; per layer type where rope_parameters is nested (Transformers v5); Gemma 3's sliding layers keep
    their own default rope at rope_local_base_freq (gemma3.py@v0.10.1.1 Gemma3Attention). None where the positions
    are not rotary or the length the model file passes is not in config.json."""
    if model_type in _NO_ROPE or model_type.startswith(("gemma4", "deepseek_v4")) or config.get("alibi") or \
            config.get("compress_ratios"):
        return ()
    # the max_position the model file passes to get_rope: config.max_position_embeddings (ChatGLM: seq_length)
    positions = config.get("seq_length" if model_type == "chatglm" else "max_position_embeddings")
    rope_dim = config.get("qk_rope_head_dim") if config.get("kv_lora_rank") else head  # MLA rotates its rope part
    if not isinstance(positions, int) or isinstance(positions, bool) or not 0 < positions <= MAX_CONFIG_COUNT or \
            not isinstance(rope_dim, int) or isinstance(rope_dim, bool) or not 0 < rope_dim <= MAX_CONFIG_COUNT:
        return ()
    raw = _rope_dict(config.get("rope_parameters")) or _rope_dict(config.get("rope_scaling"))
    nested = [v for v in raw.values() if isinstance(v, dict)] if raw else []
    per_layer_type = bool(raw) and len(nested) == len(raw or {})
    ropes: list[tuple[dict | None, Any]] = [(v, v.get("rope_theta")) for v in nested] if per_layer_type \
        else [(raw, config.get("rope_theta"))]
    if model_type.startswith("gemma3") and not per_layer_type:
        global_base, local_base = (config.get("rope_theta") or _GEMMA3_BASES[0],
                                   config.get("rope_local_base_freq") or _GEMMA3_BASES[1])
        ropes.append(({"rope_type": "default"}, local_base))
        ropes[0] = (raw, global_base)
    seen: dict[tuple, RopeTable] = {}
    for rope, base in ropes:
        table = _rope_table(rope, config, positions, rope_dim)
        if table is not None:
            seen.setdefault((table, base), table)  # get_rope's key holds the base: two bases, two caches
    return tuple(seen.values())


def _compress_ratios(config: dict) -> tuple[int, ...] | None:
    ratios = config.get("compress_ratios")
    if not isinstance(ratios, list) or not ratios:
        return None
    return tuple(int(r) for r in ratios)


# What transformers' config classes fill in for the keys a nested text_config leaves out (LLaVA-1.5 states
# only vocab_size and max_position_embeddings of its Llama; Gemma 3 only widths, layers and the window)
_TEXT_DEFAULTS = {
    "llama": {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
              "vocab_size": 32000, "max_position_embeddings": 2048},
    "gemma3_text": {"hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262208,
                    "max_position_embeddings": 131072, "sliding_window": 4096, "tie_word_embeddings": True},
}


class BadConfig(ValueError):
    """A config.json whose values are not what the arithmetic reads (a pull request can hold any file):
    reported as model facts unknown (GSG030) naming the field, never an internal error later."""


# Counts no real config.json comes near; past them a value is a typo or an attack, and the arithmetic would
# print absurd numbers (the same bounds guard.model's fields have, spec/model.py, or looser)
MAX_CONFIG_COUNT = 10**9
_AT_LEAST_ONE = frozenset({"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                           "head_dim", "intermediate_size", "vocab_size", "num_experts", "num_experts_per_tok",
                           "moe_intermediate_size", "kv_lora_rank", "q_lora_rank", "v_head_dim", "sliding_window",
                           "attention_chunk_size", "moe_layer_step",
                           "max_position_embeddings",
                           # a state's dimensions: a 0 would reach the state arithmetic as an impossible shape
                           *GATED_DELTA_SHAPE, *MAMBA2_SHAPE, "mamba_chunk_size"})
# Layer counts are looped over (one entry per layer in weights.py): guard.model's bound, 1,000 (spec/model.py)
MAX_LAYERS = 1000
_AT_MOST = {"num_hidden_layers": MAX_LAYERS, "first_k_dense_replace": 1000, "sliding_window_layers": 1000,
            "chunked_attention_layers": 1000, "moe_layer_step": 1000,
            "num_nextn_predict_layers": 1000, "num_hash_layers": 1000, "layer_norms": 8,
            # a conv kernel is 4 in every published hybrid; a chunk 128-256; a state 128: far looser bounds, so an
            # absurd value is a config error rather than a block of billions of tokens
            "mamba_d_conv": 64, "linear_conv_kernel_dim": 64, "mamba_chunk_size": 65_536, "mamba_d_state": 65_536,
            "vision_params": 10**12,  # parameters, not a count of parts: InternViT-6B alone has 5.9e9
            # bytes summed from a GGUF's tensors (or the safetensors index), not counts: 1 PiB is far past any model
            "weight_bytes": 2**50, "embedding_bytes": 2**50, "output_bytes": 2**50}
_INT_FIELDS = tuple(f.name for f in fields(ModelFacts) if str(f.type).startswith("int"))
_STR_FIELDS = tuple(f.name for f in fields(ModelFacts) if str(f.type).startswith("str"))


# Keys the reader multiplies or loops over while it builds the facts (before checked_facts sees them): a string there
# would be repeated ("2" * 10**9 is a gigabyte), a bool taken as 1
_BUILD_NUMBERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "hidden_size", "n_embd", "d_model",
                  "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size", "n_shared_experts",
                  "moe_intermediate_size", "shared_expert_intermediate_size", "expansion_ratio")


def _build_numbers_checked(config: dict) -> None:
    for key in _BUILD_NUMBERS:
        value = config.get(key)
        if value is None:
            continue
        exact = key != "expansion_ratio"
        if isinstance(value, bool) or not isinstance(value, int if exact else (int, float)) \
                or (not exact and not math.isfinite(value)):
            raise BadConfig(f"'{key}' must be a {'whole ' if exact else ''}number, not {_shown_value(value)}")


def checked_facts(facts: ModelFacts) -> ModelFacts:
    """Raise BadConfig for a field of the wrong type or beyond its bound; the facts unchanged otherwise (config.json
    and GGUF readers alike)."""
    for name in _INT_FIELDS:
        value = getattr(facts, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadConfig(f"'{name}' must be a whole number, not {_shown_value(value)}")
        low, high = (1 if name in _AT_LEAST_ONE else 0), _AT_MOST.get(name, MAX_CONFIG_COUNT)
        if not low <= value <= high:
            raise BadConfig(f"'{name}' {value:,} is outside {low}..{high:,}")
    for name in _STR_FIELDS:
        value = getattr(facts, name)
        if value is not None and not isinstance(value, str):
            raise BadConfig(f"'{name}' must be a string, not {_shown_value(value)}")
    if facts.compress_ratios and (len(facts.compress_ratios) > 2 * _AT_MOST["num_hidden_layers"]
                                  or any(r < 0 or r > MAX_CONFIG_COUNT for r in facts.compress_ratios)):
        raise BadConfig("'compress_ratios' must hold at most 2,000 whole numbers >= 0")
    # vision_config's depth and width, multiplied into SGLang's ViT complexity as a float
    for name, value in zip(("num_hidden_layers", "hidden_size"), facts.vit_shape or ()):
        if value > MAX_CONFIG_COUNT:
            raise BadConfig(f"vision_config '{name}' {value:,} is outside 1..{MAX_CONFIG_COUNT:,}")
    return facts


def _shown_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def facts_from_config(config: dict, source: str) -> ModelFacts:
    """Facts from config.json; multimodal configs use their `text_config` for the language model and their
    `vision_config` for the vision tower and projector (vision.py). Raises BadConfig for values of the wrong
    type or beyond MAX_CONFIG_COUNT."""
    if not isinstance(config, dict):
        raise BadConfig(f"config.json must be a JSON object, not {type(config).__name__}")
    try:
        for part in (config, config.get("text_config")):
            if isinstance(part, dict):
                _build_numbers_checked(part)
        return checked_facts(_facts(config, source))
    except BadConfig as exc:
        raise BadConfig(f"{source}: {exc}") from None
    except (TypeError, ValueError, AttributeError, ArithmeticError, LookupError) as exc:  # a wrong shape, a 0
        raise BadConfig(f"{source}: unreadable value ({type(exc).__name__}: {str(exc)[:120]})") from None


def _facts(config: dict, source: str) -> ModelFacts:
    top_model_type = str(config.get("model_type") or "")
    top = config
    if isinstance(config.get("text_config"), dict) and not config.get("num_hidden_layers"):
        text = config["text_config"]
        merged = dict(_TEXT_DEFAULTS.get(str(text.get("model_type") or ""), {})) | text
        merged.setdefault("quantization_config", config.get("quantization_config"))
        merged.setdefault("torch_dtype", config.get("torch_dtype") or config.get("dtype"))
        config = merged
    layers = _first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    lengths = length_config(config, top_model_type)
    window, window_layers = _window_layers(config, layers or 0)
    ratios = _compress_ratios(config)
    model_type = str(config.get("model_type", ""))
    experts = _first(config, "num_local_experts", "num_experts", "n_routed_experts")
    shared = config.get("shared_expert_intermediate_size")
    if shared is None and config.get("n_shared_experts"):
        shared = config["n_shared_experts"] * (config.get("moe_intermediate_size") or 0)
    bias = config.get("attention_bias")
    if bias is None:
        bias = model_type in ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text") \
            or bool(config.get("add_qkv_bias"))
    quant = _quantization(config)
    kind = model_type or top_model_type
    extras = {"attention_bias": bool(bias)} | _norms_and_biases(config, kind)
    # noaux_tc routing keeps e_score_correction_bias per expert; DeepSeek-V3's config class defaults to it
    router_bias = config.get("topk_method", "noaux_tc" if kind in _NOAUX_BY_DEFAULT else None) == "noaux_tc"
    dtype = _DTYPES.get(str(_first(config, "torch_dtype", "dtype") or "bfloat16").lower(), "bfloat16")
    # the class the engines key their own hooks by (vLLM's model_config.architecture): the top-level config's for a
    # multimodal model whose text config names none; the model type only where no config names a class
    architectures = config.get("architectures") or top.get("architectures") or [model_type or None]
    same_named: dict[str, Any] = {key: config.get(key) for key in _SAME_NAMED}  # typed per field by ModelFacts
    if config.get("padded_vocab_size"):
        same_named["vocab_size"] = config["padded_vocab_size"]  # ChatGLM: vLLM's embedding has the padded size
    hidden = _first(config, "hidden_size", "n_embd", "d_model")
    heads = _first(config, "num_attention_heads", "n_head", "n_heads")
    vision = vision_tower(top, hidden)
    gated_delta = _gated_delta(config, kind, layers)
    mamba2 = _mamba2(config, kind, layers, hidden)
    if "layer_norms" in mamba2:  # Nemotron-H: one norm a layer (its mixer or its MLP)
        extras["layer_norms"] = mamba2.pop("layer_norms")
    if mamba2 and same_named.get("head_dim") is None and isinstance(config.get("attention_head_dim"), int):
        same_named["head_dim"] = config["attention_head_dim"]  # Nemotron-H's name for the attention head width
    if mamba2 and kind != "nemotron_h" and config.get("shared_intermediate_size"):
        # Granite-4.0-H / Bamba: a shared gated MLP beside the experts, or the only MLP where there are none
        if experts:
            shared = config["shared_intermediate_size"]
        else:
            mamba2["dense_width"] = config["shared_intermediate_size"]
    llama4 = _llama4(config, kind, layers)
    if "moe_intermediate_size" in llama4:  # Llama 4 names its widths its own way (_llama4)
        same_named["moe_intermediate_size"] = llama4.pop("moe_intermediate_size")
        shared = llama4.pop("shared_expert_intermediate_size")
    dense_width = llama4.pop("intermediate_size", None) or mamba2.pop("dense_width", None) or \
        _mlp_width(config, kind, hidden)
    gemma4 = _gemma4(config, kind)
    if "shared_expert_intermediate_size" in gemma4:
        shared = gemma4.pop("shared_expert_intermediate_size")
        same_named["num_experts_per_tok"] = gemma4.pop("num_experts_per_tok")
    return ModelFacts(
        architecture=architectures[0],
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=_kv_heads(config, kind),
        intermediate_size=dense_width,
        gated_mlp=kind not in _PLAIN_MLP,
        recurrent_layers=None if gated_delta or mamba2 else _recurrent_layers(config, kind),
        unmodelled=_unmodelled(config, top, kind),
        **gated_delta,
        **mamba2,
        **llama4,
        **gemma4,
        vision_params=vision.params,
        vision_unsupported=vision.unsupported,
        vision_encoder=vision.encoder,
        vit_shape=vit_shape(top),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", kind in _TIED_BY_DEFAULT)),
        classifier_labels=_classifier_labels(config, architectures[0]),
        num_experts=experts,
        shared_expert_intermediate_size=shared,
        sliding_window=window,
        sliding_window_layers=window_layers,
        compress_ratios=ratios,
        max_position_embeddings=_native_length(lengths),
        length_config=lengths,
        rope_tables=_rope_tables(config, kind, same_named.get("head_dim") or (
            hidden // heads if isinstance(hidden, int) and isinstance(heads, int) and heads > 0 else None)),
        dtype=dtype,
        router_bias=router_bias,
        shared_expert_gate=kind in ("qwen2_moe", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text"),
        qk_norm=_qk_norm(config, kind),
        **extras,
        **quant,
        source=source,
        **same_named,
    )
