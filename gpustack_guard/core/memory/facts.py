"""Model facts (architecture numbers) and the value types the weight arithmetic (weights.py) returns."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import asdict, fields, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.max_len import LengthConfig, MaxLenError, derive_max_model_len
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:  # defined where a GGUF is read: validate builds it only for a GGUF model (issue 34)
    from gpustack_guard.core.memory.gguf import RecurrentState


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class EncoderDummy:
    """The largest item vLLM's V1 profile_run feeds a vision encoder, and the ViT shapes that size its peak.

    Built from vision_config by core/memory/vision.py; core/memory/engines/vllm.py encoder_profile turns it into
    bytes for a release (profiles.vllm_encoder_row)."""

    __repr__ = fields_repr

    family: str  # which model file's encoder: "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "gemma3"
    item_patches: int  # ViT sequence length of one dummy item
    item_tokens: int  # tokens one item takes of the encoder budget (after any patch merge)
    pixel_elements_per_patch: int  # pixel_values elements per patch (channels x temporal x patch^2)
    width: int  # the ViT's hidden size
    inter: int  # its MLP width
    gated: bool  # gate/up/down (3 matrices) or fc1/fc2
    out_width: int  # the width of the encoder outputs cached per token (the text model's hidden size)
    patch_factor: int = 0  # patch x merge: the processor's resize step when max_pixels moves (Qwen2/2.5-VL)
    patch_size: int = 0
    output_streams: int = 1  # encoder outputs per token in out_width units (Qwen3-VL: 1 + its DeepStack features)
    # elements per patch held beside the last ViT blocks (Qwen3-VL: the DeepStack features merged so far)
    held_beside_blocks: int = 0
    # tokens of the item's placeholder beside its embeddings (Gemma 3's "\n\n<start_of_image>", "<end_of_image>\n\n")
    break_tokens: int = 0
    # the dummy video (Qwen3-VL, profiles.QWEN3_VL_VIDEO_*): the frames' side before resizing, the video
    # processor's pixel bounds over all frames and the temporal patch; 0: no video modelled
    video_side: int = 0
    video_factor: int = 0  # patch x merge, the video processor's resize step
    video_max_pixels: int = 0
    video_min_pixels: int = 0
    video_per_frame: bool = False  # Qwen2/2.5-VL: each frame is the largest image (no video resize over all frames)
    temporal_patch: int = 2


@frozen_value(eq=True)  # compared by value: identical configurations are one table
class RopeTable:
    """One rotary embedding as the model's layers ask for it (one per distinct rope configuration: the engines'
    get_rope caches an instance per key, so layers that share one share its cos/sin cache). Built from config.json
    by hfconfig._rope_tables; what the cache holds for it per release is the engine's rule (profiles.VLLM_ROPE_*)."""

    __repr__ = fields_repr

    rope_type: str  # "default", "linear", "dynamic", "yarn", "longrope", "llama3", ... (legacy spellings normalised)
    max_position: int  # the max_position the model file passes (config max_position_embeddings, ChatGLM seq_length)
    rotary_dim: int  # head size x partial rotary factor: the cache's width
    factor: float | None = None  # rope_scaling factor (linear, dynamic, yarn)
    original_max_position: int | None = None  # original_max_position_embeddings (yarn, longrope)
    mrope: bool = False  # a multimodal rope (mrope_section): vLLM's MRotaryEmbedding


# what the Gated DeltaNet state and its weights are sized from (missing_for_params names the absent ones)
# the Mamba-2 mixer's state (MambaStateShapeCalculator.mamba2_state_shape; core/memory/mamba2.py)
MAMBA2_SHAPE = ("mamba_num_heads", "mamba_head_dim", "mamba_d_state", "mamba_n_groups", "mamba_d_conv",
                "mamba_intermediate_size")
GATED_DELTA_SHAPE = ("full_attention_interval", "linear_num_key_heads", "linear_num_value_heads",
                     "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim")


@frozen_value  # identity equality: cheaper to define, never compared
class ModelFacts:
    """What the memory arithmetic knows of a model (config.json, GGUF header or catalog)."""

    __repr__ = fields_repr

    architecture: str | None = None
    num_hidden_layers: int | None = None
    hidden_size: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int | None = None
    recurrent_layers: str | None = None  # state-space / linear-attention layers (hfconfig): no arithmetic
    # an attention or weight layout gsg has no rule for (hfconfig._unmodelled names it): no arithmetic either
    unmodelled: str | None = None
    recurrent_state: RecurrentState | None = None  # what llama.cpp sizes them from (GGUF): llamacpp arithmetic
    # Gated DeltaNet linear attention beside full attention (Qwen3-Next, Qwen3.5/3.6; core/memory/gated_delta.py):
    # how many layers are linear, every full_attention_interval-th layer being full attention, and the state's shape
    linear_attention_layers: int | None = None
    full_attention_interval: int | None = None
    linear_num_key_heads: int | None = None
    linear_num_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int | None = None
    mamba_ssm_dtype: str | None = None  # Qwen3.5's config names its temporal state's dtype (vLLM 0.17.0+ reads it)
    # Mamba-2 mixers beside attention (Nemotron-H, Granite-4.0-H; core/memory/mamba2.py): one character a layer,
    # "M" a Mamba-2 mixer, "*" attention, "-" an MLP alone (hfconfig._mamba2); mamba_mlp_every_layer: every layer
    # also has the MLP (Granite-4.0-H), else only the "-" layers (Nemotron-H)
    mamba_pattern: str | None = None
    mamba_mlp_every_layer: bool = False
    mamba_num_heads: int | None = None
    mamba_head_dim: int | None = None
    mamba_d_state: int | None = None
    mamba_n_groups: int | None = None
    mamba_d_conv: int | None = None
    mamba_intermediate_size: int | None = None
    mamba_ssm_cache_dtype: str | None = None  # Nemotron-H's config names it (NemotronHForCausalLMConfig reads it)
    # the SSD kernel's chunk (mamba_chunk_size, else chunk_size: ModelConfig.get_mamba_chunk_size), which vLLM's
    # mamba cache mode "all" aligns the attention block to (profiles.VLLM_MAMBA_CACHE_MODE_ROWS)
    mamba_chunk_size: int | None = None
    attention_output_gate: bool = False  # q_proj also yields a per-head output gate (Qwen3-Next, Qwen3.5)
    vision_params: int = 0  # vision tower + projector parameters vLLM loads (vision.py), at checkpoint dtype
    vision_encoder: EncoderDummy | None = None  # the dummy item vLLM profiles the encoder with (vision.py)
    vision_unsupported: str | None = None  # a multimodal config whose vision part gsg cannot count: no arithmetic
    # vision_config's (num_hidden_layers, hidden_size) as SGLang's getattr reads them (defaults 24 and 1024);
    # None without a vision_config: SGLang's ViT-scaled fraction cut (profiles.SGLANG_VLM_FRACTION_RULES)
    vit_shape: tuple[int, int] | None = None
    gated_mlp: bool = True  # gate + up + down; False: up + down only (GPT-2, Falcon, MPT, ...: hfconfig._PLAIN_MLP)
    vocab_size: int | None = None
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    shared_expert_intermediate_size: int | None = None
    first_k_dense_replace: int | None = None
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int | None = None  # how many layers use the window (hybrid patterns)
    # Llama 4's chunked local attention: a token sees only its own attention_chunk_size-token chunk on
    # chunked_attention_layers of the layers (the RoPE ones), the rest (NoPE) see everything
    attention_chunk_size: int | None = None
    chunked_attention_layers: int | None = None
    # MoE on every moe_layer_step-th layer only ((layer + 1) % step == 0; Llama 4's interleave_moe_layer_step),
    # the others dense MLPs of intermediate_size; None: every layer past first_k_dense_replace
    moe_layer_step: int | None = None
    # Gemma 4: full-attention layers with their own head size and KV heads (global_head_dim, and
    # num_global_key_value_heads when keys serve as values: no v_proj there, though vLLM still caches K and V);
    # which layers they are, from layer_types. None: every layer has the shape above.
    full_attention_head_dim: int | None = None
    full_attention_kv_heads: int | None = None
    full_attention_k_eq_v: bool = False
    full_attention_layer_ids: tuple[int, ...] | None = None
    # the rotary embeddings the layers ask for, one per distinct configuration (config.json only; () from a GGUF,
    # guard.model, or a model without rotary positions): the engines' rope cos/sin caches beyond the checkpoint
    rope_tables: tuple[RopeTable, ...] = ()
    # DeepSeek-V4 compressed sparse attention: per-layer KV compression (0 none, 4 CSA, 128 HCA; MTP
    # layers after num_hidden_layers), its lightning indexer, grouped low-rank output, hyper-connections
    compress_ratios: tuple[int, ...] | None = None
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_topk: int | None = None  # tokens the indexer keeps per query (vLLM's topk_indices_buffer width)
    o_lora_rank: int | None = None
    o_groups: int | None = None
    hc_mult: int | None = None
    num_hash_layers: int | None = None
    num_nextn_predict_layers: int | None = None  # MTP layers: in the checkpoint, loaded only for speculation
    expert_dtype: str | None = None  # "fp4": routed experts packed MXFP4 beside an fp8 rest
    max_position_embeddings: int | None = None  # the derived max length (max_len.py), or guard.model's value
    length_config: LengthConfig | None = None  # what vLLM derives the length from, per version (config.json)
    allow_long_max_model_len: bool = False  # VLLM_ALLOW_LONG_MAX_MODEL_LEN in the deployment's env
    dtype: str | None = None
    quant_method: str | None = None  # None = unquantized
    # the checkpoint's own quantization_config.quant_method ("compressed-tensors", "modelopt", "gptq"): the loader the
    # engine looks up, which quant_method (gsg's name for the weights: "nvfp4", "mxfp4_dense") no longer says
    quant_format: str | None = None
    quant_bits: int | None = None
    quant_group_size: int | None = None  # weights per scale (a 128x128 FP8 block: 16384)
    # an Fp8Config checkpoint's weight_block_size (block_n, block_k): what vLLM's Marlin path expands its scales by
    quant_block: tuple[int, int] | None = None
    quant_zero_point: bool | None = None  # compressed-tensors asymmetric: a packed zero per group
    quant_skips_attention: bool = False  # the checkpoint keeps (full-)attention projections unquantised
    quant_skips_linear_attention: bool = False  # and the linear-attention (Gated DeltaNet) projections
    output_bias: bool = False  # o_proj has a bias (gpt-oss)
    attention_sinks: bool = False  # one learned sink logit per head and layer (gpt-oss)
    attention_softcap: bool = False  # attention logits soft-capped (Gemma 2's attn_logit_softcapping)
    layer_norms: int = 2  # hidden-size norm vectors per layer (Gemma 2/3: 4, with pre/post-feedforward norms)
    norm_bias: bool = False  # LayerNorm with a bias beside each weight, the final norm too (GPT-2 ... StarCoder2)
    mlp_bias: bool = False  # the MLP projections have biases (LayerNorm families, Llama mlp_bias)
    shared_expert_gate: bool = False  # a Linear(hidden, 1) gating the shared expert (Qwen2-MoE)
    router_bias: bool = False  # one score-correction bias per expert and MoE layer (noaux_tc: DeepSeek-V3, GLM-4.5)
    qk_norm: Literal["per_head", "all_heads"] | None = None  # q, k normed over head_dim (Qwen3) or all heads
    lm_head_bias: bool = False  # the output layer has a bias per vocabulary entry (Phi-2, GPT-J)
    # a *ForSequenceClassification checkpoint (reward models, classifiers): its labels; 0 for a language model. Its
    # output layer is the score head (hidden x labels, no bias), not the vocabulary's lm_head, which it has no
    # weights for: SGLang's LlamaForSequenceClassification (models/llama_reward.py@0.4.0.post1) builds model + score;
    # vLLM's pooling adapter (models/adapters.py _create_pooling_model_cls) deletes the lm_head it inherits
    classifier_labels: int = 0
    position_embeddings: int = 0  # rows of a learned position embedding (GPT-2, StarCoder 1)
    expert_bias: bool = False  # router and expert projections have biases (gpt-oss)
    weight_bytes: int | None = None  # measured (safetensors index / GGUF tensors) beats computed
    num_parameters: int | None = None
    # exact tensor bytes from a GGUF header: per block, token embedding, output (lm_head)
    layer_weight_bytes: tuple[int, ...] | None = None
    embedding_bytes: int | None = None
    output_bytes: int | None = None
    # the part of them llama.cpp's CPU backend copies into its CPU_REPACK buffer when the tensor stays in host
    # memory (profiles.LLAMACPP_CPU_REPACK_TYPES): per block, and the output layer
    layer_repack_bytes: tuple[int, ...] | None = None
    output_repack_bytes: int | None = None
    # every block tensor of a GGUF as (name, bytes, CPU_REPACK bytes), in file order: what llama.cpp's buffer-type
    # overrides (-ot, --cpu-moe, --n-cpu-moe) match by name
    block_tensors: tuple[tuple[str, int, int], ...] | None = None
    source: str = "unknown"  # where the facts came from, for messages

    # --- derived shape -----------------------------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return bool(self.kv_lora_rank)

    @property
    def is_compressed_attention(self) -> bool:
        return bool(self.compress_ratios)

    @property
    def is_gated_delta(self) -> bool:
        return bool(self.linear_attention_layers)

    @property
    def is_mamba2(self) -> bool:
        return bool(self.mamba_pattern)

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)

    def is_moe_layer(self, layer: int) -> bool:
        """Whether layer `layer` (from 0) has the routed experts."""
        if not self.is_moe or layer < (self.first_k_dense_replace or 0):
            return False
        step = self.moe_layer_step or 1
        return (layer + 1) % step == 0

    @property
    def moe_layers(self) -> int:
        """How many layers have the routed experts."""
        return sum(1 for layer in range(self.num_hidden_layers or 0) if self.is_moe_layer(layer))

    @property
    def kv_heads(self) -> int | None:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def split_attention(self) -> bool:
        """Full-attention layers shaped unlike the window ones (Gemma 4)."""
        return self.full_attention_head_dim is not None

    def layer_attention_shape(self, layer: int) -> tuple[int | None, int | None, bool]:
        """(KV heads, head size, keys serve as values) of layer `layer`."""
        if self.split_attention and layer in (self.full_attention_layer_ids or ()):
            return self.full_attention_kv_heads, self.full_attention_head_dim, self.full_attention_k_eq_v
        return self.kv_heads, self.dim_head, False

    @property
    def dim_head(self) -> int | None:
        if self.head_dim:
            return self.head_dim
        if self.hidden_size and self.num_attention_heads:
            return self.hidden_size // self.num_attention_heads
        return None

    @property
    def has_attention_shape(self) -> bool:
        if self.is_compressed_attention:
            return True  # missing_for_params names every field the DeepSeek-V4 layout needs
        if self.is_mla:
            return bool(self.num_hidden_layers and self.qk_rope_head_dim is not None)
        return bool(self.num_hidden_layers and self.kv_heads and self.dim_head)

    def missing_for_params(self) -> list[str]:
        need = ["num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"]
        need.append("moe_intermediate_size" if self.is_moe and not self.intermediate_size else "intermediate_size")
        if self.is_moe and (self.first_k_dense_replace or (self.moe_layer_step or 1) > 1):
            need.append("intermediate_size")  # the dense layers' MLP width
        if self.compress_ratios:  # is_compressed_attention, spelled out so mypy narrows the Optional
            need += ["head_dim", "q_lora_rank", "num_experts_per_tok", "num_experts", "moe_intermediate_size"]
            if 4 in self.compress_ratios:
                need += ["index_n_heads", "index_head_dim"]
        if self.linear_attention_layers:
            need += list(GATED_DELTA_SHAPE)
        if self.mamba_pattern:
            need += list(MAMBA2_SHAPE)
        missing = list(dict.fromkeys(name for name in need if getattr(self, name) is None))
        if self.compress_ratios and len(self.compress_ratios) < (self.num_hidden_layers or 0):
            missing.append("compress_ratios (one per layer)")
        return missing

    def merged(self, override: dict[str, Any]) -> ModelFacts:
        known = {f.name for f in fields(self)}
        changes = {k: v for k, v in override.items() if k in known and v is not None and getattr(self, k) != v}
        if "max_position_embeddings" in changes:
            changes["length_config"] = None  # a stated length replaces the derivation from config.json
        return replace(self, **changes) if changes else self

    def as_dict(self) -> dict[str, Any]:
        """Plain values (the length inputs as a nested dict), for templates and machine outputs."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.length_config is not None:
            values["length_config"] = asdict(self.length_config)
        return values


@lru_cache(maxsize=1024)  # one object per (model, version, env): the estimate caches stay shared between specs
def bound_to_vllm(facts: ModelFacts, version: str | None, allow_long: bool) -> ModelFacts:
    """The facts one vLLM deployment sees: the length derived for its version, and its
    VLLM_ALLOW_LONG_MAX_MODEL_LEN. Unchanged facts are returned as they are."""
    changes: dict[str, Any] = {}
    if facts.length_config is not None and facts.length_config.keys:
        with suppress(MaxLenError):  # the estimate reports it as a model-facts finding
            changes["max_position_embeddings"] = derive_max_model_len(facts.length_config, version).limit
    if allow_long:
        changes["allow_long_max_model_len"] = True
    changes = {k: v for k, v in changes.items() if getattr(facts, k) != v}
    return replace(facts, **changes) if changes else facts


# --- what the weight arithmetic (weights.py) returns ----------------------------------------------

@frozen_value  # identity equality: cheaper to define, never compared or hashed
class ParamBreakdown:
    """A model's parameters by part: embedding, head, and each layer's linear and other weights."""

    __repr__ = fields_repr

    embedding: int  # token embedding
    lm_head: int  # 0 when tied
    per_layer_linear: tuple[int, ...]  # linear (quantisable) params of each layer
    per_layer_other: tuple[int, ...]  # norms, biases, routers of each layer
    final_norm: int
    vision: int = 0  # vision tower + projector (multimodal models), never quantised

    @property
    def linear(self) -> int:
        return sum(self.per_layer_linear)

    @property
    def total(self) -> int:
        return self.embedding + self.lm_head + self.linear + sum(self.per_layer_other) + self.final_norm + \
            self.vision


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class WeightLayout:
    """Bytes of the checkpoint split the way parallelism splits it."""

    __repr__ = fields_repr

    per_layer: tuple[int, ...]
    embedding: int
    lm_head: int  # tied: 0 (vLLM and llama.cpp reuse the embedding)
    other: int  # final norm
    per_layer_replicated: tuple[int, ...] = ()  # the part of each layer every tensor-parallel rank holds whole
    unloaded: int = 0  # in the checkpoint but not loaded by default (multi-token-prediction layers)

    @property
    def total(self) -> int:
        return sum(self.per_layer) + self.embedding + self.lm_head + self.other

    def scaled(self, factor: float) -> WeightLayout:
        return WeightLayout(tuple(int(x * factor) for x in self.per_layer), int(self.embedding * factor),
                            int(self.lm_head * factor), int(self.other * factor),
                            tuple(int(x * factor) for x in self.per_layer_replicated), int(self.unloaded * factor))
