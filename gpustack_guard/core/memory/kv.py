"""KV-cache bytes per token per GPU (docs/memory-arithmetic.md, "The budget of one rank") and per-request
memory with sliding windows."""

from __future__ import annotations

import math
from collections.abc import Callable

from gpustack_guard.core.memory.estimate import LayoutUnsupported
from gpustack_guard.core.memory.facts import ModelFacts

# bf16: SGLang's own spelling of bfloat16 (server_args.py --kv-cache-dtype choices from 0.5.4)
KV_DTYPE_BYTES = {"auto": None, "bfloat16": 2, "bf16": 2, "float16": 2, "half": 2, "float32": 4, "fp32": 4,
                  "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "int8": 1}
FP8_DS_MLA_BYTES_PER_LAYER = 656  # DeepSeek-V3.2 fp8_ds_mla cell


def kv_element_bytes(kv_cache_dtype: str | None, facts: ModelFacts) -> int:
    choice = (kv_cache_dtype or "auto").lower()
    if choice not in KV_DTYPE_BYTES:
        raise ValueError(f"unknown --kv-cache-dtype '{kv_cache_dtype}' (auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16)")
    if (size := KV_DTYPE_BYTES[choice]) is None:
        return 4 if facts.dtype == "float32" else 2
    return size


def packed_head_bytes(kv_cache_dtype: str | None, head: int) -> int | None:
    """A packed dtype's bytes per token and KV head, K and V together (kv_formats, imported only for a dtype the
    per-element table does not hold); None for a plain dtype."""
    choice = (kv_cache_dtype or "auto").lower()
    if choice in KV_DTYPE_BYTES:
        return None
    from gpustack_guard.core.memory.kv_formats import head_slot_bytes

    return head_slot_bytes(choice, head)


def kv_heads_per_gpu(facts: ModelFacts, tp: int) -> int:
    """vLLM get_num_kv_heads: heads are replicated when fewer than TP ranks."""
    assert facts.kv_heads is not None  # has_attention_shape: no KV arithmetic without heads
    return max(1, facts.kv_heads // tp)


def kv_bytes_per_token_layer(facts: ModelFacts, tp: int, kv_cache_dtype: str | None) -> int:
    """One layer's bytes per token on one GPU."""
    if facts.is_mla:
        if (kv_cache_dtype or "").lower() == "fp8_ds_mla":
            return FP8_DS_MLA_BYTES_PER_LAYER
        # the latent is replicated on every TP rank; MLA has no separate K and V
        assert facts.kv_lora_rank is not None and facts.qk_rope_head_dim is not None  # is_mla, has_attention_shape
        return (facts.kv_lora_rank + facts.qk_rope_head_dim) * kv_element_bytes(kv_cache_dtype, facts)
    assert facts.dim_head is not None  # has_attention_shape
    if (slot := packed_head_bytes(kv_cache_dtype, facts.dim_head)) is not None:
        return kv_heads_per_gpu(facts, tp) * slot
    return 2 * kv_heads_per_gpu(facts, tp) * facts.dim_head * kv_element_bytes(kv_cache_dtype, facts)


def full_layer_bytes(facts: ModelFacts, tp: int, kv_cache_dtype: str | None) -> int:
    """One full-attention layer's bytes per token on one GPU: Gemma 4's own heads and head size there. vLLM's
    Gemma4Attention caches K and V apart even where keys serve as values (attention_k_eq_v), so both count."""
    if not facts.split_attention:
        return kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)
    assert facts.full_attention_kv_heads is not None and facts.full_attention_head_dim is not None
    heads = max(1, facts.full_attention_kv_heads // tp)
    if (slot := packed_head_bytes(kv_cache_dtype, facts.full_attention_head_dim)) is not None:
        return heads * slot
    return 2 * heads * facts.full_attention_head_dim * kv_element_bytes(kv_cache_dtype, facts)


def mla_aligned_layer_bytes(facts: ModelFacts, kv_cache_dtype: str | None, align_bytes: int) -> int:
    """One layer's bytes per token when vLLM pads the MLA latent entry (profiles.VLLM_MLA_KV_ALIGN): the element
    count is rounded up to `align_bytes` of the MODEL dtype, then stored in the KV dtype."""
    assert facts.kv_lora_rank is not None and facts.qk_rope_head_dim is not None  # is_mla
    step = align_bytes // (4 if facts.dtype == "float32" else 2)
    elements = math.ceil((facts.kv_lora_rank + facts.qk_rope_head_dim) / step) * step
    return elements * kv_element_bytes(kv_cache_dtype, facts)


def layers_per_rank(facts: ModelFacts, pp: int) -> int:
    assert facts.num_hidden_layers is not None  # has_attention_shape
    return math.ceil(facts.num_hidden_layers / pp)


def local_window(facts: ModelFacts) -> tuple[int, int, bool]:
    """(window, layers that keep only it, chunked): a sliding window, or Llama 4's attention chunk."""
    if facts.sliding_window:
        return facts.sliding_window, facts.sliding_window_layers or 0, False
    if facts.attention_chunk_size and facts.chunked_attention_layers:
        return facts.attention_chunk_size, facts.chunked_attention_layers, True
    return 0, 0, False


def window_layers(facts: ModelFacts, pp: int) -> int:
    """Sliding-window (or chunked) layers on the worst rank (assume they spread evenly over stages)."""
    return math.ceil(local_window(facts)[1] / pp)


def window_pages(window: int, block: int, in_flight: int, tokens: int, chunked: bool = False) -> int:
    """vLLM SlidingWindowSpec.max_admission_blocks_per_request: the window plus the tokens still in flight,
    +1 because the window need not start on a block boundary. ChunkedLocalAttentionSpec's (kv_cache_interface.py
    @v0.14.0 .. @v0.34.0): the chunk plus the tokens in flight, no extra block."""
    if chunked:
        return math.ceil(min(window + in_flight, tokens) / block)
    return math.ceil(min(window - 1 + in_flight, tokens) / block) + 1


def longest_fitting(request_bytes: Callable[[int], int], available: int, upper: int) -> int:
    """vLLM estimate_max_model_len: binary search for the longest request whose KV fits `available`."""
    if available <= 0 or request_bytes(1) > available:
        return 0
    lo, hi = 1, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if request_bytes(mid) <= available:
            lo = mid
        else:
            hi = mid - 1
    return lo


class UnevenPages(LayoutUnsupported):
    """Layer kinds whose pages vLLM cannot unify by a whole block-size ratio (it raises NotImplementedError)."""


class KVShape:
    """Per-GPU KV geometry of one deployment: what one request of n tokens costs."""

    def __init__(self, facts: ModelFacts, tp: int, pp: int, kv_cache_dtype: str | None, block_size: int,
                 batched_tokens: int):
        self.layer_bytes = kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)
        self._full_layer_bytes = full_layer_bytes(facts, tp, kv_cache_dtype)
        self.layers = layers_per_rank(facts, pp)
        self.window_layers = min(window_layers(facts, pp), self.layers)
        self.full_layers = self.layers - self.window_layers
        # Gemma 4's full-attention-shaped layers on this rank: they keep their shape when vLLM sizes the window
        # layers at full length (no hybrid manager, --disable-sliding-window), when window_layers is 0
        self.split = facts.split_attention
        self.split_full_layers = min(math.ceil(len(facts.full_attention_layer_ids or ()) / pp), self.layers)
        self.window, _, self.chunked = local_window(facts)
        self.block_size = block_size
        self.batched_tokens = batched_tokens
        # full-attention layers vLLM keeps at the model's dtype under a packed KV dtype (kv_formats.boundary_layers),
        # and their bytes per token; the engine's estimator sets them
        self.native_layers = 0
        self.native_layer_bytes = 0

    @property
    def full_layer_bytes(self) -> int:
        """A full-attention layer's bytes per token: layer_bytes (which vLLM may pad: MLA) but for Gemma 4's own
        full-attention shape."""
        return self._full_layer_bytes if self.split else self.layer_bytes

    @property
    def bytes_per_token(self) -> int:
        """Full-length bytes per token on this GPU (all layers), the number vLLM's 2*L*h*d*b formula gives."""
        full = self.split_full_layers if self.split and not self.window_layers else self.full_layers
        return full * self.full_layer_bytes + (self.layers - full) * self.layer_bytes + self._native_extra

    @property
    def _native_extra(self) -> int:
        """What the layers kept at the model's dtype add per token over the packed size."""
        return self.native_layers * (self.native_layer_bytes - self.layer_bytes)

    def block_sizes(self, block: int | None = None) -> tuple[int, int]:
        """(full-attention, window) tokens per block after vLLM's unify_kv_cache_spec_page_size
        (kv_cache_utils.py@v0.19.0): the kind with the smaller page takes block_size x the page ratio so that every
        page holds the larger page's bytes. Raises UnevenPages where the ratio is not whole, as vLLM does."""
        block = block or self.block_size
        full, window = self.full_layer_bytes, self.layer_bytes
        if full == window or not self.window_layers or not self.full_layers:
            return block, block
        big = max(full, window)
        if big % full or big % window:
            raise UnevenPages(f"vLLM cannot unify KV pages of {full * block} and {window * block} bytes by a whole "
                              "block-size ratio (unify_kv_cache_spec_page_size raises NotImplementedError)")
        return block * big // full, block * big // window

    @property
    def hybrid(self) -> bool:
        return self.window_layers > 0

    def request_bytes(self, tokens: int) -> int:
        """vLLM max_memory_usage_bytes summed over layers for one request of `tokens` tokens."""
        full_block, window_block = self.block_sizes()
        full = math.ceil(tokens / full_block) * full_block * (self.full_layers * self.full_layer_bytes
                                                               + self._native_extra)
        if not self.window_layers:
            return full
        held = window_pages(self.window, window_block, self.batched_tokens, tokens, self.chunked)
        return full + self.window_layers * held * window_block * self.layer_bytes

    def max_tokens_fitting(self, available: int, upper: int) -> int:
        """Largest length whose one request fits `available` bytes (vLLM estimate_max_model_len)."""
        if available <= 0 or self.request_bytes(1) > available:
            return 0
        if not self.hybrid:
            blocks = available // (self.block_size * self.bytes_per_token)
            return min(blocks * self.block_size, upper)
        return longest_fitting(self.request_bytes, available, upper)
