"""Tiny Llama-architecture GGUF files the real llama-server can load, written with the `gguf` package.

A few layers with grouped-query attention, linear weights in one GGML type (F16, Q8_0 or Q4_0), norms in F32, and
a SentencePiece-style vocabulary of the 256 byte tokens (plus <unk>, <s>, </s>) so that any chat text tokenizes
through byte fallback. Weights are small random numbers: the model talks nonsense, but every buffer llama.cpp
sizes from the shapes is the one a real model of these shapes gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import quantize

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
VOCAB = len(SPECIAL_TOKENS) + len(BYTE_TOKENS)
GGML_TYPES = {"f16": gguf.GGMLQuantizationType.F16, "q8_0": gguf.GGMLQuantizationType.Q8_0,
              "q4_0": gguf.GGMLQuantizationType.Q4_0}
# general.file_type as llama.cpp's llama_ftype numbers them (MOSTLY_F16 = 1, MOSTLY_Q8_0 = 7, MOSTLY_Q4_0 = 2)
FILE_TYPES = {"f16": 1, "q8_0": 7, "q4_0": 2}


def _add_byte_vocab(writer):
    """The SentencePiece-style vocabulary of byte tokens every tiny model shares (chat text tokenizes)."""
    writer.add_tokenizer_model("llama")
    writer.add_token_list(list(SPECIAL_TOKENS + BYTE_TOKENS))
    writer.add_token_scores([0.0] * VOCAB)
    writer.add_token_types([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
                           + [gguf.TokenType.BYTE] * len(BYTE_TOKENS))
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)


def _written(writer, path):
    """Header, metadata and tensors to the file; the path."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@dataclass(frozen=True)
class TinyModel:
    linear_type: str = "f16"  # every projection and the output layer; token_embd too
    layers: int = 3
    hidden: int = 256
    heads: int = 8
    kv_heads: int = 2  # grouped-query attention: 4 query heads share each KV head
    ffn: int = 512
    context: int = 4096
    tied_output: bool = False  # no output.weight: llama.cpp reuses token_embd

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def _weights(rng: np.random.Generator, rows: int, cols: int, kind: str) -> tuple[np.ndarray, gguf.GGMLQuantizationType]:
    values = (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)
    qtype = GGML_TYPES[kind]
    if kind == "f16":
        return values.astype(np.float16), qtype
    return quantize(values, qtype), qtype


def _shape_keys(writer, model) -> None:
    """The transformer shape every tiny model's header states (llama and qwen35 alike)."""
    writer.add_block_count(model.layers)
    writer.add_context_length(model.context)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(model.ffn)
    writer.add_head_count(model.heads)
    writer.add_head_count_kv(model.kv_heads)


def write_tiny_gguf(path: Path, model: TinyModel, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"gsg-tiny-{model.linear_type}")
    _shape_keys(writer, model)
    writer.add_rope_dimension_count(model.head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(FILE_TYPES[model.linear_type])
    _add_byte_vocab(writer)

    def matrix(name: str, rows: int, cols: int) -> None:
        data, qtype = _weights(rng, rows, cols, model.linear_type)
        writer.add_tensor(name, data, raw_dtype=qtype)  # quantised rows: bytes, shape inferred

    def norm(name: str) -> None:
        writer.add_tensor(name, np.ones(model.hidden, dtype=np.float32))

    kv_width = model.kv_heads * model.head_dim
    matrix("token_embd.weight", VOCAB, model.hidden)
    for layer in range(model.layers):
        block = f"blk.{layer}"
        norm(f"{block}.attn_norm.weight")
        matrix(f"{block}.attn_q.weight", model.hidden, model.hidden)
        matrix(f"{block}.attn_k.weight", kv_width, model.hidden)
        matrix(f"{block}.attn_v.weight", kv_width, model.hidden)
        matrix(f"{block}.attn_output.weight", model.hidden, model.hidden)
        norm(f"{block}.ffn_norm.weight")
        matrix(f"{block}.ffn_gate.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_up.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_down.weight", model.hidden, model.ffn)
    norm("output_norm.weight")
    if not model.tied_output:
        matrix("output.weight", VOCAB, model.hidden)
    return _written(writer, path)


@dataclass(frozen=True)
class TinyMamba:
    """A Mamba (v1) model: every layer keeps llama.cpp's per-sequence conv and scan rows (the RS buffer) and no
    layer has a KV cache. Shapes as llama.cpp's mamba loader creates them (src/models/mamba.cpp)."""

    layers: int = 2
    hidden: int = 64
    inner: int = 128  # d_inner: llama.cpp loads only 2 x d_model
    state: int = 16  # d_state
    conv: int = 4  # d_conv
    dt_rank: int = 8
    context: int = 4096


def write_tiny_mamba_gguf(path: Path, model: TinyMamba, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), "mamba")
    writer.add_name("gsg-tiny-mamba")
    writer.add_block_count(model.layers)
    writer.add_context_length(model.context)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(0)  # written by llama.cpp's own converter as unused
    writer.add_head_count(0)
    writer.add_ssm_conv_kernel(model.conv)
    writer.add_ssm_inner_size(model.inner)
    writer.add_ssm_state_size(model.state)
    writer.add_ssm_time_step_rank(model.dt_rank)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(0)  # ALL_F32
    _add_byte_vocab(writer)

    def tensor(name: str, *shape: int, value: float | None = None) -> None:
        # numpy shapes are llama.cpp's ne reversed
        data = np.full(shape, value, dtype=np.float32) if value is not None \
            else (rng.standard_normal(shape) * 0.02).astype(np.float32)
        writer.add_tensor(name, data)

    tensor("token_embd.weight", VOCAB, model.hidden)
    for layer in range(model.layers):
        block = f"blk.{layer}"
        tensor(f"{block}.attn_norm.weight", model.hidden, value=1.0)
        tensor(f"{block}.ssm_in.weight", 2 * model.inner, model.hidden)
        tensor(f"{block}.ssm_conv1d.weight", model.inner, model.conv)
        tensor(f"{block}.ssm_conv1d.bias", model.inner, value=0.0)
        tensor(f"{block}.ssm_x.weight", model.dt_rank + 2 * model.state, model.inner)
        tensor(f"{block}.ssm_dt.weight", model.inner, model.dt_rank)
        tensor(f"{block}.ssm_dt.bias", model.inner, value=0.0)
        tensor(f"{block}.ssm_a", model.inner, model.state, value=-1.0)  # A = -exp(A_log), as converted
        tensor(f"{block}.ssm_d", model.inner, value=1.0)
        tensor(f"{block}.ssm_out.weight", model.hidden, model.inner)
    tensor("output_norm.weight", model.hidden, value=1.0)
    tensor("output.weight", VOCAB, model.hidden)
    return _written(writer, path)


@dataclass(frozen=True)
class TinyLfm2:
    """An LFM2 hybrid: short-conv layers (head_count_kv 0: llama.cpp's recurrent rows, n_embd x (l_cache - 1)) and
    grouped-query attention layers (the only ones with a KV cache). Shapes as src/models/lfm2.cpp creates them."""

    kv_heads: tuple[int, ...] = (0, 2, 0, 0, 2, 0)  # per layer; 0 = short conv
    hidden: int = 1536
    heads: int = 12
    ffn: int = 512
    l_cache: int = 3
    context: int = 4096


def write_tiny_lfm2_gguf(path: Path, model: TinyLfm2, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    head_dim = model.hidden // model.heads
    writer = gguf.GGUFWriter(str(path), "lfm2")
    writer.add_name("gsg-tiny-lfm2")
    writer.add_block_count(len(model.kv_heads))
    writer.add_context_length(model.context)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(model.ffn)
    writer.add_head_count(model.heads)
    writer.add_head_count_kv(list(model.kv_heads))
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_uint32("lfm2.shortconv.l_cache", model.l_cache)
    writer.add_file_type(1)  # MOSTLY_F16
    _add_byte_vocab(writer)

    def matrix(name: str, rows: int, cols: int) -> None:
        writer.add_tensor(name, (rng.standard_normal((rows, cols)) * 0.02).astype(np.float16))

    def norm(name: str, width: int) -> None:
        writer.add_tensor(name, np.ones(width, dtype=np.float32))

    matrix("token_embd.weight", VOCAB, model.hidden)
    norm("token_embd_norm.weight", model.hidden)  # LFM2's final norm under this name (LLM_TENSOR_OUTPUT_NORM_LFM2)
    for layer, kv_heads in enumerate(model.kv_heads):
        block = f"blk.{layer}"
        norm(f"{block}.attn_norm.weight", model.hidden)
        norm(f"{block}.ffn_norm.weight", model.hidden)
        matrix(f"{block}.ffn_gate.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_up.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_down.weight", model.hidden, model.ffn)
        if kv_heads:
            norm(f"{block}.attn_q_norm.weight", head_dim)
            norm(f"{block}.attn_k_norm.weight", head_dim)
            matrix(f"{block}.attn_q.weight", model.hidden, model.hidden)
            matrix(f"{block}.attn_k.weight", kv_heads * head_dim, model.hidden)
            matrix(f"{block}.attn_v.weight", kv_heads * head_dim, model.hidden)
            matrix(f"{block}.attn_output.weight", model.hidden, model.hidden)
        else:
            writer.add_tensor(f"{block}.shortconv.conv.weight",
                              (rng.standard_normal((model.hidden, model.l_cache)) * 0.02).astype(np.float32))
            matrix(f"{block}.shortconv.in_proj.weight", 3 * model.hidden, model.hidden)
            matrix(f"{block}.shortconv.out_proj.weight", model.hidden, model.hidden)
    return _written(writer, path)


@dataclass(frozen=True)
class TinyQwen35:
    """A Qwen3.5 hybrid: every `interval`-th layer is gated grouped-query attention (its query projection twice as
    wide, half of it the output gate), the rest Gated DeltaNet layers (llama.cpp's recurrent rows). Shapes as
    src/models/qwen35.cpp creates them; the value head is d_inner / time_step_rank and must equal d_state."""

    layers: int = 4
    hidden: int = 256
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 64  # attention.key_length = value_length
    ffn: int = 512
    interval: int = 4  # full_attention_interval
    conv: int = 4  # ssm.conv_kernel
    state: int = 64  # ssm.state_size: the key head and (d_inner / v_heads) the value head
    groups: int = 2  # ssm.group_count: key heads
    v_heads: int = 8  # ssm.time_step_rank: value heads
    context: int = 8192
    experts: int = 0  # > 0: qwen35moe, `ffn` the width of each routed expert and of the shared one
    experts_used: int = 2

    @property
    def inner(self) -> int:
        return self.state * self.v_heads


def write_tiny_qwen35_gguf(path: Path, model: TinyQwen35, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    arch = "qwen35moe" if model.experts else "qwen35"
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name(f"gsg-tiny-{arch}")
    _shape_keys(writer, model)
    writer.add_key_length(model.head_dim)
    writer.add_value_length(model.head_dim)
    writer.add_rope_dimension_count(model.head_dim)
    writer.add_array(f"{arch}.rope.dimension_sections", [model.head_dim // 8, model.head_dim // 8,
                                                         model.head_dim // 4, 0])
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_uint32(f"{arch}.full_attention_interval", model.interval)
    if model.experts:
        writer.add_expert_count(model.experts)
        writer.add_expert_used_count(model.experts_used)
        writer.add_expert_feed_forward_length(model.ffn)
        writer.add_expert_shared_feed_forward_length(model.ffn)
    writer.add_ssm_conv_kernel(model.conv)
    writer.add_ssm_inner_size(model.inner)
    writer.add_ssm_state_size(model.state)
    writer.add_ssm_time_step_rank(model.v_heads)
    writer.add_ssm_group_count(model.groups)
    writer.add_file_type(1)  # MOSTLY_F16
    _add_byte_vocab(writer)

    def matrix(name: str, rows: int, cols: int) -> None:
        writer.add_tensor(name, (rng.standard_normal((rows, cols)) * 0.02).astype(np.float16))

    def vector(name: str, width: int, value: float) -> None:
        writer.add_tensor(name, np.full(width, value, dtype=np.float32))

    conv_channels = model.inner + 2 * model.groups * model.state
    matrix("token_embd.weight", VOCAB, model.hidden)
    for layer in range(model.layers):
        block = f"blk.{layer}"
        vector(f"{block}.attn_norm.weight", model.hidden, 1.0)
        vector(f"{block}.post_attention_norm.weight", model.hidden, 1.0)
        if model.experts:
            matrix(f"{block}.ffn_gate_inp.weight", model.experts, model.hidden)
            for name, rows, cols in (("gate", model.ffn, model.hidden), ("up", model.ffn, model.hidden),
                                     ("down", model.hidden, model.ffn)):
                writer.add_tensor(f"{block}.ffn_{name}_exps.weight",
                                  (rng.standard_normal((model.experts, rows, cols)) * 0.02).astype(np.float16))
            vector(f"{block}.ffn_gate_inp_shexp.weight", model.hidden, 0.0)
        suffix = "_shexp" if model.experts else ""
        matrix(f"{block}.ffn_gate{suffix}.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_up{suffix}.weight", model.ffn, model.hidden)
        matrix(f"{block}.ffn_down{suffix}.weight", model.hidden, model.ffn)
        if (layer + 1) % model.interval == 0:
            width = model.heads * model.head_dim
            matrix(f"{block}.attn_q.weight", 2 * width, model.hidden)
            matrix(f"{block}.attn_k.weight", model.kv_heads * model.head_dim, model.hidden)
            matrix(f"{block}.attn_v.weight", model.kv_heads * model.head_dim, model.hidden)
            matrix(f"{block}.attn_output.weight", model.hidden, width)
            vector(f"{block}.attn_q_norm.weight", model.head_dim, 1.0)
            vector(f"{block}.attn_k_norm.weight", model.head_dim, 1.0)
        else:
            matrix(f"{block}.attn_qkv.weight", conv_channels, model.hidden)
            matrix(f"{block}.attn_gate.weight", model.inner, model.hidden)
            writer.add_tensor(f"{block}.ssm_conv1d.weight",
                              (rng.standard_normal((conv_channels, model.conv)) * 0.02).astype(np.float32))
            vector(f"{block}.ssm_dt.bias", model.v_heads, 0.0)
            vector(f"{block}.ssm_a", model.v_heads, -1.0)
            matrix(f"{block}.ssm_beta.weight", model.v_heads, model.hidden)
            matrix(f"{block}.ssm_alpha.weight", model.v_heads, model.hidden)
            vector(f"{block}.ssm_norm.weight", model.state, 1.0)
            matrix(f"{block}.ssm_out.weight", model.hidden, model.inner)
    vector("output_norm.weight", model.hidden, 1.0)
    matrix("output.weight", VOCAB, model.hidden)
    return _written(writer, path)
