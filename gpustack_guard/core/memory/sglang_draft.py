"""An SGLang EAGLE-style draft built from the target's own multi-token-prediction layers (NEXTN/MTP): its weights
and its KV pool on one rank (docs/memory-arithmetic.md, "SGLang speculative decoding").

The draft worker is a second ModelRunner (is_draft_worker) that shares the target's request and token allocators
and keeps a KV pool of its own: draft_runner_cache_size tokens (the target's max_total_num_tokens) over its
num_nextn_predict_layers layers. deepseek_nextn.py builds one decoder layer as the target's (MoE, quantised as the
checkpoint) plus a vocabulary-parallel embedding and head at the model dtype, two input norms, a replicated
2H x H eh_proj and the head's norm. When it loads against the target's pool sizing is profiles.SGLANG_DRAFT_ORDER.
A separate draft checkpoint (EAGLE3, STANDALONE, --speculative-draft-model-path) is another model: not sized here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer
from gpustack_guard.core.memory.weights import UNQUANTISED_BYTES, layers_on_rank, weight_layout

if TYPE_CHECKING:
    from gpustack_guard.core.memory.engines.sglang import SglangConfig


def mtp_layers(facts: ModelFacts, cfg: SglangConfig) -> int:
    """The draft's layers where it is the target's own MTP layers, else 0 (no draft, or one gsg has no facts for)."""
    if cfg.speculative_algorithm not in ("NEXTN", "EAGLE") or cfg.speculative_draft_given:
        return 0
    if facts.is_gated_delta or facts.is_compressed_attention or facts.vision_params:
        return 0  # their MTP modules (qwen3_next_mtp.py, DeepSeek-V4's) are built otherwise: not read
    return facts.num_nextn_predict_layers or 0


def draft_weight_bytes(facts: ModelFacts, layers: int, tp: int) -> int:
    """One rank's draft weights: `layers` copies of the target's last layer as its ranks hold it, the embedding and head
    split by vocabulary, and the replicated eh_proj and norms at the model dtype."""
    layout = weight_layout(facts)
    H, V = facts.hidden_size or 0, facts.vocab_size or 0
    width = UNQUANTISED_BYTES.get(facts.dtype or "bfloat16", 2)
    # the target's last layer as its ranks hold it: split over TP but for what every rank keeps whole (MLA's latent
    # projections, their norms and the router: weights._mla_replicated_bytes)
    last = len(layout.per_layer) - 1
    layer = layers_on_rank(layout, last, last + 1, tp) if layout.per_layer else 0
    vocab = 2 * math.ceil(V / tp) * H * width  # embed_tokens and shared_head.head
    replicated = (2 * H * H + 3 * H) * width  # eh_proj, enorm, hnorm, shared_head.norm
    return layers * (layer + vocab + replicated)


def draft_cell_bytes(facts: ModelFacts, layers: int, tp: int, kv_cache_dtype: str | None) -> int:
    """Bytes of one token in the draft's KV pool: its layers at the target's per-layer cell."""
    return layers * kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)


def draft_report(facts: ModelFacts, cfg: SglangConfig, version: str | None, capacity: int, weights: int) -> dict:
    layers = mtp_layers(facts, cfg)
    cell = draft_cell_bytes(facts, layers, cfg.tp_size, cfg.kv_cache_dtype)
    order = P.sglang_draft_order(version)
    return {"layers": layers, "weights": weights, "kv_bytes_per_token": cell, "kv_tokens": capacity,
            "kv_cache": capacity * cell, "weights_before_target_pool": order.draft_weights_first,
            "source": order.source}
