"""DeepSeek-V4 (compressed sparse attention): checkpoint bytes per layer and vLLM's KV-cache accounting.

The architecture does not fit the generic formulas: every layer keeps a 128-token sliding window, ratio-4
layers (CSA) add a 4x-compressed latent plus a lightning-indexer key cache, ratio-128 layers (HCA) a
128x-compressed latent, and both keep compressor state. Routed experts are packed MXFP4, the rest fp8
with 128x128 block scales, embeddings bf16, hyper-connection mixers fp32.

Shapes follow the published DeepSeek-V4-Flash checkpoint (safetensors header of shard 2); summed over
the whole model they give 159,606,649,416 bytes against the index's total_size 159,609,485,896 (-0.002 %).
"""

from __future__ import annotations

import math

from gpustack_guard.core.memory.facts import ModelFacts, ParamBreakdown, WeightLayout
from gpustack_guard.core.memory.kv import longest_fitting, window_pages
from gpustack_guard.core.values import frozen_value

BF16, FP32, INT64 = 2, 4, 8
FP8_BLOCK = 128  # 128x128 weight blocks, one E8M0 scale byte each
MXFP4_GROUP = 32  # 32 fp4 values share one E8M0 scale byte
CSA_RATIO, HCA_RATIO = 4, 128


def _fp8(rows: int, cols: int) -> int:
    return rows * cols + math.ceil(rows / FP8_BLOCK) * math.ceil(cols / FP8_BLOCK)


def _fp4(rows: int, cols: int) -> int:
    return rows * cols // 2 + rows * (cols // MXFP4_GROUP)


@frozen_value(eq=True, repr=True)
class LayerBytes:
    """One DeepSeek-V4 layer's weights: split across ranks or held whole by each."""

    sharded: int  # split across tensor-parallel ranks (heads, experts, vocabulary)
    replicated: int  # held whole by every rank (latent projections, compressors, indexer, routers, mixers)
    linear_params: int
    other_params: int


def _layer(f: ModelFacts, ratio: int, hashed: bool) -> LayerBytes:
    H, heads, d, q_rank = f.hidden_size, f.num_attention_heads, f.head_dim, f.q_lora_rank
    # weights.require_shape checked these (missing_for_params names every field this layout needs)
    assert H is not None and heads is not None and d is not None and q_rank is not None
    assert f.vocab_size is not None and f.num_experts_per_tok is not None
    groups, o_rank = f.o_groups or 1, f.o_lora_rank or H
    m = f.hc_mult or 1
    mix = m * m + 2 * m  # hyper-connection mixing weights per token
    sharded = replicated = linear = other = 0
    # attention: q low-rank (a replicated, b split by head), one shared KV latent, grouped low-rank output
    replicated += _fp8(q_rank, H) + _fp8(d, H) + (q_rank + d) * BF16
    sharded += _fp8(heads * d, q_rank) + _fp8(groups * o_rank, heads * d // groups) + _fp8(H, groups * o_rank)
    sharded += heads * FP32  # attention sinks
    linear += q_rank * H + d * H + heads * d * q_rank + groups * o_rank * heads * d // groups + H * groups * o_rank
    other += q_rank + d + heads
    if ratio:
        width = (2 if ratio == CSA_RATIO else 1) * d  # CSA compresses overlapping windows: twice the width
        replicated += (2 * width * H + ratio * width + d) * BF16
        linear += 2 * width * H
        other += ratio * width + d
    if ratio == CSA_RATIO:
        assert f.index_n_heads is not None and f.index_head_dim is not None  # required when a ratio is 4
        index_q = f.index_n_heads * f.index_head_dim
        width = 2 * f.index_head_dim
        replicated += _fp8(index_q, q_rank) + f.index_n_heads * H * BF16
        replicated += (2 * width * H + CSA_RATIO * width + f.index_head_dim) * BF16
        linear += index_q * q_rank + f.index_n_heads * H + 2 * width * H
        other += CSA_RATIO * width + f.index_head_dim
    # mixture of experts: routed experts MXFP4, shared expert fp8, a bf16 router (hash layers route by token id)
    E, inter = f.num_experts, f.moe_intermediate_size
    assert E is not None and inter is not None  # require_shape (missing_for_params) checked them
    shared_inter = f.shared_expert_intermediate_size or 0
    pack = _fp4 if f.expert_dtype == "fp4" else _fp8
    expert = 2 * pack(inter, H) + pack(H, inter)
    sharded += E * expert
    if shared_inter:
        sharded += 2 * _fp8(shared_inter, H) + _fp8(H, shared_inter)
    replicated += E * H * BF16 + (f.vocab_size * f.num_experts_per_tok * INT64 if hashed else E * FP32)
    linear += E * 3 * inter * H + 3 * shared_inter * H
    other += E * H + (0 if hashed else E)
    # two norms and two hyper-connection mixers (attention and FFN sides)
    replicated += 2 * H * BF16 + 2 * (mix + mix * m * H + 3) * FP32
    other += 2 * H + 2 * (mix + mix * m * H + 3)
    return LayerBytes(sharded, replicated, linear, other)


def _layers(f: ModelFacts) -> list[LayerBytes]:
    hashed = f.num_hash_layers or 0
    assert f.compress_ratios is not None and f.num_hidden_layers is not None  # is_compressed_attention, require_shape
    return [_layer(f, f.compress_ratios[i], i < hashed) for i in range(f.num_hidden_layers)]


def _head_params(f: ModelFacts) -> int:
    """The final hyper-connection mixer (fp32): base, weights, scale."""
    m = f.hc_mult or 1
    assert f.hidden_size is not None  # require_shape checked it
    return m + m * m * f.hidden_size + 1


def _mtp_bytes(f: ModelFacts) -> int:
    """Multi-token-prediction layers: in the checkpoint, loaded by vLLM only for speculative decoding."""
    count = f.num_nextn_predict_layers or 0
    if not count:
        return 0
    assert f.compress_ratios is not None and f.hidden_size is not None  # is_compressed_attention, require_shape
    ratios = f.compress_ratios[f.num_hidden_layers:] or (0,)
    H = f.hidden_size
    one = [_layer(f, ratios[i % len(ratios)], False) for i in range(count)]
    projections = 2 * _fp8(H, H) + 3 * H * BF16 + _head_params(f) * FP32  # e/h projections, norms, head mixer
    return sum(x.sharded + x.replicated for x in one) + count * projections


def weight_layout(f: ModelFacts) -> WeightLayout:
    layers = _layers(f)
    assert f.vocab_size is not None and f.hidden_size is not None  # require_shape checked them
    vocab = f.vocab_size * f.hidden_size * BF16
    return WeightLayout(
        per_layer=tuple(x.sharded + x.replicated for x in layers),
        embedding=vocab,
        lm_head=0 if f.tie_word_embeddings else vocab,
        other=f.hidden_size * BF16 + _head_params(f) * FP32,
        per_layer_replicated=tuple(x.replicated for x in layers),
        unloaded=_mtp_bytes(f),
    )


def param_breakdown(f: ModelFacts) -> ParamBreakdown:
    layers = _layers(f)
    assert f.vocab_size is not None and f.hidden_size is not None  # require_shape checked them
    vocab = f.vocab_size * f.hidden_size
    return ParamBreakdown(vocab, 0 if f.tie_word_embeddings else vocab, tuple(x.linear_params for x in layers),
                          tuple(x.other_params for x in layers), f.hidden_size + _head_params(f))


# --- vLLM's KV cache for DeepSeek-V4 ---------------------------------------------------------------------
# vllm/v1/core/kv_cache_utils.py (group_and_unify_kv_cache_specs, _get_kv_cache_groups_uniform_groups,
# _max_memory_usage_bytes_from_groups) and vllm/v1/kv_cache_interface.py (MLAAttentionSpec /
# SlidingWindowMLASpec with compress_ratio). fp8_ds_mla stores 448 B NoPE + 128 B RoPE + 8 B scale per entry;
# the indexer key cache 128 B fp8 + 4 B scale; every page is padded to a multiple of 576 B.
VLLM_BLOCK_SIZE = 256  # "Setting kv cache block size to 256 for DEEPSEEK_SPARSE_SWA backend"
LATENT_ENTRY_BYTES = 584
INDEXER_ENTRY_BYTES = 132
PAGE_ALIGNMENT = 576
SWA_BLOCK_SIZE = 64
CSA_STATE_BLOCK, CSA_STATE_WINDOW = 4, 2 * CSA_RATIO  # overlapping compression keeps two windows of state
HCA_STATE_BLOCK, HCA_STATE_WINDOW = 8, HCA_RATIO


def _page(entries: int, entry_bytes: int) -> int:
    return math.ceil(entries * entry_bytes / PAGE_ALIGNMENT) * PAGE_ALIGNMENT


def _padding_minimising_divisor(counts: list[int], lower: int) -> int:
    """vLLM's _approximate_gcd: the tuple count that pads the groups least (ties: the larger)."""
    best, best_pad = lower, None
    for d in range(lower, max(max(counts), lower) + 1):
        pad = sum((d - c % d) % d for c in counts)
        if best_pad is None or pad <= best_pad:
            best, best_pad = d, pad
    return best


class CompressedKV:
    """One request's KV pages on one GPU under vLLM's packed DeepSeek-V4 layout.

    Five kinds of cache share one pool of blocks: the compressed latents (CSA and HCA) and the indexer keys
    grow with the sequence; the 128-token sliding window and the compressor states only hold a window plus
    the tokens in flight (max_num_batched_tokens, doubled where async scheduling keeps two steps in flight).
    Each block costs `tuple_bytes * tuples`; vLLM checks one request of max_model_len against the pool.
    """

    hybrid = True  # per-request cost is not tokens x bytes_per_token

    def __init__(self, facts: ModelFacts, pp: int, in_flight_tokens: int):
        assert facts.compress_ratios is not None  # built only for is_compressed_attention (engines/vllm.py kv_shape)
        ratios = facts.compress_ratios[:facts.num_hidden_layers]
        layers = math.ceil(len(ratios) / pp)
        csa = math.ceil(ratios.count(CSA_RATIO) / pp)
        hca = math.ceil(ratios.count(HCA_RATIO) / pp)
        block = VLLM_BLOCK_SIZE
        buckets: dict[int, int] = {}  # page size -> layers of the full (growing) group with that page
        for count, page in ((csa, _page(block // CSA_RATIO, LATENT_ENTRY_BYTES)),
                            (csa, _page(block // CSA_RATIO, INDEXER_ENTRY_BYTES)),
                            (hca, _page(block // HCA_RATIO, LATENT_ENTRY_BYTES))):
            if count:
                buckets[page] = buckets.get(page, 0) + count
        if not buckets:
            raise ValueError("compress_ratios names no compressed layer (4 or 128): not a DeepSeek-V4 layout")
        full_tuples = max(buckets.values())
        self.tuple_bytes = sum(buckets)
        self.tuples = _padding_minimising_divisor([c for c in (full_tuples, layers, csa, hca) if c], full_tuples)
        # windowed groups, split so each holds at most `tuples` layers per page size
        self.swa_groups = math.ceil(layers / self.tuples)
        self.csa_state_groups = math.ceil(csa / self.tuples) if csa else 0
        self.hca_state_groups = math.ceil(hca / self.tuples) if hca else 0
        self.window = facts.sliding_window or 0
        self.in_flight = in_flight_tokens
        self.block_size = block

    @property
    def block_bytes(self) -> int:
        return self.tuple_bytes * self.tuples

    @property
    def bytes_per_token(self) -> int:
        """Steady cost of one more token of context (the growing caches only)."""
        return math.ceil(self.block_bytes / self.block_size)

    def request_pages(self, tokens: int) -> int:
        t = self.in_flight
        return (math.ceil(tokens / self.block_size)
                + self.swa_groups * window_pages(self.window, SWA_BLOCK_SIZE, t, tokens)
                + self.csa_state_groups * window_pages(CSA_STATE_WINDOW, CSA_STATE_BLOCK, t, tokens)
                + self.hca_state_groups * window_pages(HCA_STATE_WINDOW, HCA_STATE_BLOCK, t, tokens))

    def request_bytes(self, tokens: int) -> int:
        return self.request_pages(tokens) * self.block_bytes

    def max_tokens_fitting(self, available: int, upper: int) -> int:
        return longest_fitting(self.request_bytes, available, upper)
