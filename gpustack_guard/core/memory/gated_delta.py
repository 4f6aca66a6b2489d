"""vLLM's hybrid KV cache for Gated DeltaNet models (Qwen3-Next, Qwen3.5/3.6): linear-attention layers that keep
one recurrent state per sequence beside full-attention layers that keep K and V per token.

What vLLM does (profiles.VLLM_GATED_DELTA_ROWS names the file and tag of each step):
  1. each linear layer's state is a conv state ((kernel - 1) x conv_dim / TP) and a temporal state
     (value heads / TP x key dim x value dim), MambaStateShapeCalculator.gated_delta_net_state_shape;
  2. the attention block size is raised to the smallest multiple of the kernel alignment whose page (block x
     K and V bytes of one token) holds one state, and the state page is padded to that page
     (HybridAttentionMambaModelConfig.verify_and_update_config);
  3. the layers are grouped as for any hybrid model (min layer count per group, engines/vllm.hybrid_groups):
     every group takes one page per block, a linear group one page per running sequence (mamba_cache_mode
     "none": no prefix caching) or two with prefix caching (mode "align": the running state and the last
     block-aligned one; profiles.VLLM_GATED_DELTA_PREFIX_ROWS), a full-attention group ceil(tokens / block) pages.

SGLang (the sglang_* functions at the end) keeps the states apart: a mamba pool of per-request slots, taken off the
static part before the KV pool, whose cell counts the full-attention layers only (profiles.SGLANG_GATED_DELTA_ROWS).
Imported only when a model needs it (validate's import budget).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.gpu_arch import compute_capability
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer, longest_fitting
from gpustack_guard.core.units import GiB

if TYPE_CHECKING:
    from gpustack_guard.core.memory.engines.sglang import SglangConfig

_STATE_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


def dtype_bytes(name: str | None, model_dtype: str | None, flag: str) -> int:
    """Bytes of one state element: `auto` is the model's dtype (get_kv_cache_torch_dtype)."""
    choice = (name or "auto").lower()
    if choice == "auto":
        return _STATE_DTYPE_BYTES.get(model_dtype or "bfloat16", 2)
    if choice not in _STATE_DTYPE_BYTES:
        raise GatedDeltaUnsupported(f"--{flag} '{name}' is not one gsg sizes (auto, bfloat16, float16, float32)")
    return _STATE_DTYPE_BYTES[choice]


def state_elements(facts: ModelFacts, tp: int, spec_tokens: int = 0) -> tuple[int, int]:
    """(conv, temporal) state elements of one linear layer on one TP rank; a draft's tokens add conv rows
    (profiles.VLLM_GATED_DELTA_SPEC)."""
    nk, nv, dk, dv, kernel = (facts.linear_num_key_heads, facts.linear_num_value_heads, facts.linear_key_head_dim,
                              facts.linear_value_head_dim, facts.linear_conv_kernel_dim)
    assert nk and nv and dk and dv and kernel  # missing_for_params (GATED_DELTA_SHAPE) checked them
    conv_dim = 2 * nk * dk + nv * dv
    if conv_dim % tp or nv % tp:
        raise GatedDeltaUnsupported(f"tensor parallel size {tp} does not divide the linear-attention heads "
                                    f"(conv width {conv_dim}, {nv} value heads): vLLM refuses it")
    return (kernel - 1 + spec_tokens) * (conv_dim // tp), (nv // tp) * dk * dv


class GatedDeltaKV:
    """One rank's hybrid KV geometry: full-attention layers paged by tokens, linear layers one page a sequence."""

    hybrid = True  # per-request cost is not tokens x bytes_per_token
    is_gated_delta = True  # what engines/vllm.py asks instead of isinstance (it imports this module lazily)

    def __init__(self, facts: ModelFacts, tp: int, kv_cache_dtype: str | None, user_block: int | None,
                 version: str | None, gpu_name: str, mamba_cache_dtype: str | None = None,
                 mamba_ssm_cache_dtype: str | None = None, state_pages: int = 1, kernel_page: int = 0,
                 spec_tokens: int = 0, draft_full_layers: int = 0):
        row = P.vllm_gated_delta_row(version)
        if not row.modelled:
            raise GatedDeltaUnsupported(row.note)
        self.row = row
        self.state_pages = state_pages  # pages of one linear layer per sequence: 1 ("none") or 2 ("align")
        self.cache_mode = "align" if state_pages > 1 else "none"
        # a draft's num_speculative_blocks: more state pages per sequence (profiles.VLLM_GATED_DELTA_SPEC)
        self.spec_blocks = spec_tokens
        assert facts.num_hidden_layers and facts.linear_attention_layers  # is_gated_delta
        self.linear_layers = facts.linear_attention_layers
        # the MTP drafter's full-attention layers join the target's (get_kv_cache_spec over the static context)
        self.draft_full_layers = draft_full_layers
        self.full_layers = facts.num_hidden_layers - self.linear_layers + draft_full_layers
        self.token_bytes = kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)  # one full layer, one token
        conv_bytes = dtype_bytes(mamba_cache_dtype, facts.dtype, "mamba-cache-dtype")
        ssm_choice = mamba_ssm_cache_dtype or "auto"
        if row.ssm_dtype_flag and ssm_choice == "auto" and facts.mamba_ssm_dtype:
            ssm_choice = facts.mamba_ssm_dtype  # Qwen3_5ForConditionalGenerationConfig: the config's dtype
        ssm_bytes = dtype_bytes(ssm_choice, facts.dtype, "mamba-ssm-cache-dtype") if row.ssm_dtype_flag \
            else conv_bytes  # gated_delta_net_state_dtype: one dtype for both states before 0.17.0
        self.ssm_dtype_bytes, self.conv_dtype_bytes = ssm_bytes, conv_bytes
        conv, temporal = state_elements(facts, tp, spec_tokens)
        self.state_bytes = conv * conv_bytes + temporal * ssm_bytes
        # the block vLLM starts from when none is given (profiles.VLLM_DEFAULT_BLOCK: 64 from 0.34.0), which the
        # alignment takes as its floor from 0.20.0 (platforms/interface.py@v0.34.0 _align_hybrid_block_size)
        # kernel_page: FLASH_ATTN's only FA4 page (engines/vllm.py fa4_page), which its get_preferred_block_size
        # raises the default to and, as the backend's smallest kernel block, the alignment's floor
        start_block = user_block or max(P.vllm_default_block_size(version), kernel_page)
        self.alignment = max(self._alignment(row, facts, gpu_name, start_block), kernel_page)
        needed = self.alignment * math.ceil(self.state_bytes / (self.alignment * self.token_bytes))
        self.block_size = max(needed, user_block or 0)
        self.block_raised = self.block_size != start_block
        self.page_bytes = self.block_size * self.token_bytes  # the state page is padded to it

    @staticmethod
    def _alignment(row: P.VllmGatedDeltaRow, facts: ModelFacts, gpu_name: str, start_block: int) -> int:
        if row.alignment_from_block:  # max(the backend's smallest kernel block, cache_config.block_size)
            return max(P.GATED_DELTA_KERNEL_ALIGNMENT, start_block)
        capability = compute_capability(gpu_name)
        if row.blackwell_head256 and capability and capability[0] == 10 and facts.dim_head == 256:
            return 2 * P.GATED_DELTA_KERNEL_ALIGNMENT  # FlashInfer on SM100 has no 16-token pages at head 256
        return P.GATED_DELTA_KERNEL_ALIGNMENT

    @property
    def bytes_per_token(self) -> int:
        """Steady cost of one more token of context: the full-attention layers' K and V."""
        return self.full_layers * self.token_bytes

    def sequence_state_pages(self, tokens: int) -> int:
        """State pages of one linear layer for a sequence of `tokens`: mode "all" keeps a state at every block
        boundary (a page per block, as attention: MambaSpec.max_memory_usage_bytes), the others a fixed count."""
        if self.cache_mode == "all":
            return math.ceil(tokens / self.block_size)
        return self.state_pages + self.spec_blocks

    def request_bytes(self, tokens: int) -> int:
        """max_memory_usage_bytes over every layer: a full layer's pages for `tokens`, a linear layer's state pages."""
        return (self.full_layers * math.ceil(tokens / self.block_size)
                + self.linear_layers * self.sequence_state_pages(tokens)) * self.page_bytes

    def max_tokens_fitting(self, available: int, upper: int) -> int:
        return longest_fitting(self.request_bytes, available, upper)

    def pool(self, available: int, max_len: int, override: int | None,
             groups: tuple[int, int, int]) -> tuple[int, float, int]:
        """(tokens as kv_cache_utils prints them up to 0.20, max concurrency at max_len, pool bytes): group_size
        tensors of num_blocks pages; the printed size shares the blocks out over every group, the smallest block
        size (the attention one, or max_len where it is shorter) per block."""
        size, full_groups, linear_groups = groups
        blocks = override or available // (self.page_bytes * size)
        per_request = full_groups * math.ceil((max_len or 1) / self.block_size) + \
            linear_groups * self.sequence_state_pages(max_len or 1)
        printed_block = min(self.block_size, max_len) if max_len else self.block_size
        return (blocks // (full_groups + linear_groups) * printed_block, blocks / per_request,
                blocks * self.page_bytes * size)

    def report(self, groups: tuple[int, int, int]) -> dict:
        size, full_groups, linear_groups = groups
        return {"full_attention_layers": self.full_layers, "linear_attention_layers": self.linear_layers,
                "attention_bytes_per_token_layer": self.token_bytes,
                "state_bytes_per_sequence_layer": self.state_bytes,
                "state_dtype_bytes": {"conv": self.conv_dtype_bytes, "temporal": self.ssm_dtype_bytes},
                "state_bytes_per_sequence": self.state_bytes * self.linear_layers,
                "state_page_bytes_per_sequence":
                    self.page_bytes * self.linear_layers * (self.state_pages + self.spec_blocks),
                "kernel_alignment": self.alignment, "attention_block_size": self.block_size,
                "page_bytes": self.page_bytes, "state_page_padding_bytes": self.page_bytes - self.state_bytes,
                "group_size": size, "full_attention_groups": full_groups, "linear_attention_groups": linear_groups,
                "pages_per_sequence_state": linear_groups * (self.state_pages + self.spec_blocks),
                "mamba_cache_mode": self.cache_mode,
                **({"speculative_blocks": self.spec_blocks, "draft_full_attention_layers": self.draft_full_layers}
                   if self.spec_blocks else {}),
                "rule": self.row.since, "source": self.row.source}


# --- SGLang: a mamba pool of per-request slots beside a KV pool of the full-attention layers -------------------------
# (engines/sglang.estimate_sglang calls these; profiles.SGLANG_GATED_DELTA_ROWS names each release's rule)

_SSM_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
_CONV_DTYPE_BYTES = 2  # conv state at bfloat16 (qwen3_next.py@v0.5.2; mamba_utils.py CONV_DTYPE from 0.5.4)


def mamba_state_per_request(facts: ModelFacts, cfg: SglangConfig, row: P.SglangGatedDeltaRow) -> tuple[int, int]:
    """(bytes of one request's conv and temporal states over every linear layer on one TP rank, temporal dtype
    bytes): configs' mamba_cache_per_req."""
    tp = cfg.tp_size
    nk, nv, dk, dv = (facts.linear_num_key_heads or 0, facts.linear_num_value_heads or 0,
                      facts.linear_key_head_dim or 0, facts.linear_value_head_dim or 0)
    if (2 * nk * dk + nv * dv) % tp or nv % tp:  # divide() asserts in hybrid_gdn_params
        raise GatedDeltaUnsupported(f"--tp-size {tp} does not divide the linear-attention heads "
                                    f"({nv} value heads): SGLang refuses it")
    choice = (cfg.mamba_ssm_dtype or "").lower() or None
    if choice is None:
        choice = facts.mamba_ssm_dtype if row.ssm_dtype_from_config and facts.mamba_ssm_dtype else "float32"
    allowed = _SSM_DTYPE_BYTES if row.ssm_dtype_from_config else {"float32": 4, "bfloat16": 2}
    if choice not in allowed:
        raise GatedDeltaUnsupported(f"--mamba-ssm-dtype '{choice}' is not one SGLang {row.since}+ takes "
                                    f"({', '.join(allowed)})")
    conv, temporal = state_elements(facts, tp)
    assert facts.linear_attention_layers  # is_gated_delta
    return (conv * _CONV_DTYPE_BYTES + temporal * allowed[choice]) * facts.linear_attention_layers, allowed[choice]


def fixed_mamba_slots(cfg: SglangConfig, row: P.SglangGatedDeltaRow) -> int | None:
    """The slot count handle_max_mamba_cache takes from the flags, or None where it splits the rest by ratio
    (profiles.SGLANG_GATED_DELTA_ROWS)."""
    radix_off = cfg.disable_radix_cache or row.sizing == "fixed"
    given = cfg.max_mamba_cache_size or cfg.max_running_requests or P.SGLANG_MAMBA_DEFAULT_SLOTS
    if row.sizing in ("running-or-ratio", "padded-ratio"):
        if cfg.max_mamba_cache_size:
            return cfg.max_mamba_cache_size
        return cfg.max_running_requests if radix_off and cfg.max_running_requests else None
    if radix_off or (row.sizing == "explicit-first" and cfg.max_mamba_cache_size):
        return given
    return None


def gated_delta_pools(pre: int, weights: int, fraction: float, cell: int, page: int, per_request: int,
                      fixed_slots: int | None, ratio: float, padded: bool = False,
                      speculative: int = 0) -> tuple[int, int]:
    """(max_total_num_tokens, mamba slots): profile_max_num_token with the mamba pool taken off the rest first, in
    SGLang's float GiB arithmetic; `padded` (0.5.17+) charges the pool's padding row to both; `speculative`, the
    bytes of the draft tokens' intermediate states, comes off before the slots (profiles.SGLANG_GATED_DELTA_SPEC)."""
    rest = (pre - weights) / GiB - pre / GiB * (1 - fraction)
    rest -= speculative / GiB
    pad = per_request if padded else 0
    if fixed_slots is None:
        slots = max(int((rest * ratio / (1 + ratio) * GiB - pad) // per_request), 0)
    else:
        slots = fixed_slots
    rest -= (slots * per_request + pad) / GiB
    if rest <= 0 or not cell:
        return 0, slots
    return int(rest * GiB // cell) // page * page, slots


def is_qwen3_5(facts: ModelFacts) -> bool:
    """Qwen3.5/3.6 by any name its config gives: Qwen3_5(Moe)ForConditionalGeneration, or the text part's model type
    (qwen3_5_text, qwen3_5_moe_text) where the catalog keeps that."""
    return "qwen3_5" in (facts.architecture or "").lower()


def tracking_ratio(facts: ModelFacts, cfg: SglangConfig, row: P.SglangGatedDeltaRow) -> int:
    """Mamba slots per running request (max_running_requests <= slots // it): 1 without the radix cache, else 3,
    and from 0.5.16 3 plus the extra_buffer strategy's ping-pong slots (_calculate_mamba_ratio)."""
    if cfg.disable_radix_cache or row.sizing == "fixed":
        return 1
    if not row.strategy:
        return P.SGLANG_MAMBA_RUNNING_RATIO
    strategy = (cfg.mamba_strategy or "auto").lower()
    # supports_mamba_cache_extra_buffer: Qwen3-Next and Qwen3.5/3.6 on the triton linear-attention backend
    capable = (cfg.linear_attn_backend or "triton").lower() == "triton"
    if strategy == "auto":  # _mamba_radix_cache_resolution: extra_buffer for the overlap schedule or pages > 1
        wants = not cfg.disable_overlap_schedule or cfg.page_size > 1
        strategy = "extra_buffer" if wants and capable else "no_buffer"
    if strategy == "no_buffer":
        return P.SGLANG_MAMBA_RUNNING_RATIO
    if strategy not in ("extra_buffer", "extra_buffer_lazy") or not capable:
        raise GatedDeltaUnsupported(f"--mamba-radix-cache-strategy {strategy} is not one SGLang {row.since}+ takes "
                                    "here (auto, no_buffer, extra_buffer[_lazy] on the triton backend)")
    if cfg.disable_overlap_schedule:
        if strategy == "extra_buffer_lazy":
            raise GatedDeltaUnsupported("--mamba-radix-cache-strategy extra_buffer_lazy needs the overlap schedule: "
                                        "SGLang refuses it with --disable-overlap-schedule")
        return P.SGLANG_MAMBA_RUNNING_RATIO + P.SGLANG_MAMBA_TRACKING_SLOTS["no-overlap"]
    key = "overlap-lazy" if strategy == "extra_buffer_lazy" else "overlap"
    return P.SGLANG_MAMBA_RUNNING_RATIO + P.SGLANG_MAMBA_TRACKING_SLOTS[key]


def sglang_unread(facts: ModelFacts, cfg: SglangConfig, row: P.SglangGatedDeltaRow, gpu_name: str = "",
                  attention_backend_given: bool = False, version: str | None = None) -> str | None:
    if not row.modelled:
        return row.note
    capability = compute_capability(gpu_name)
    if row.strategy and capability and capability[0] == 10 and not attention_backend_given:
        return (f"SGLang {row.since}+ picks the attention backend and page size of Qwen3-Next/3.5 on SM100 by the "
                "mamba strategy (trtllm_mha with 64-token pages, or triton): gsg has not read that choice; "
                "give --attention-backend triton")
    if is_qwen3_5(facts) and not row.qwen3_5:
        return "SGLang before 0.5.9 has no Qwen3.5/3.6 model (server_args.py@v0.5.9 adds them)"
    if cfg.speculative_algorithm:
        spec = P.sglang_gated_delta_spec(version)
        if not spec.rule:
            return spec.note
        if cfg.speculative_algorithm not in P.SGLANG_EAGLE_FAMILY:
            return (f"--speculative-algorithm {cfg.speculative_algorithm}'s mamba states per draft token are not "
                    "read (EAGLE, EAGLE3, NEXTN and STANDALONE are)")
    if cfg.pp_size > 1:
        return "pipeline parallelism splits the linear and full layers over stages: gsg has not read that split"
    if cfg.mamba_layout_unread:
        return f"{cfg.mamba_layout_unread} changes the mamba pool in code gsg has not read"
    return None


def speculative_draft_tokens(cfg: SglangConfig, architecture: str | None) -> int:
    """speculative_num_draft_tokens as SGLang resolves it (profiles.SGLANG_SPECULATIVE_AUTO): the release's choice
    by architecture with no --speculative-num-steps, and steps + 1 with a top-k of 1."""
    steps, topk, tokens = cfg.speculative_num_steps, cfg.speculative_eagle_topk, cfg.speculative_num_draft_tokens
    if steps is None:
        wide = architecture in P.SGLANG_SPECULATIVE_AUTO_WIDE_ARCHS and cfg.speculative_algorithm != "STANDALONE"
        steps, topk, tokens = P.SGLANG_SPECULATIVE_AUTO_WIDE if wide else P.SGLANG_SPECULATIVE_AUTO
    if topk == 1 or tokens is None:
        return steps + 1
    return tokens


def sglang_mamba_pool(facts: ModelFacts, cfg: SglangConfig, row: P.SglangGatedDeltaRow, pre: int, weights: int,
                fraction: float, cell: int, page: int, context: int, version: str | None = None) -> dict:
    """The mamba pool of a Gated DeltaNet hybrid and the KV capacity left beside it, term by term."""
    per_request, ssm_bytes = mamba_state_per_request(facts, cfg, row)
    fixed = fixed_mamba_slots(cfg, row)
    ratio = cfg.mamba_full_memory_ratio or P.SGLANG_MAMBA_FULL_MEMORY_RATIO
    draft_tokens = speculative_draft_tokens(cfg, facts.architecture) if cfg.speculative_algorithm else 0
    # "reserve-running": max_running_requests (48 when unset, engines/sglang.speculative_config) x draft tokens
    reserved = per_request * (cfg.max_running_requests or 0) * draft_tokens
    capacity, slots = gated_delta_pools(pre, weights, fraction, cell, page, per_request, fixed, ratio, row.padded,
                                        reserved)
    radix_on = not (cfg.disable_radix_cache or row.sizing == "fixed")
    # init_memory_pool: max_num_reqs from the flag or the pool, capped by the slots over the tracking ratio
    # (resolve_max_num_reqs from 0.5.16 also caps at half the tokens)
    default_reqs = min(max(int(capacity / context * 512), 2048), 4096) if context else 2048
    tracking = tracking_ratio(facts, cfg, row)
    running = min(cfg.max_running_requests or default_reqs, slots // tracking)
    if row.strategy:
        running = min(running, capacity // 2)
    # 0.5.2-0.5.3 size the pool by max_num_reqs, later releases by the slot count; one padding row beside them
    rows = (min(cfg.max_running_requests or default_reqs, slots) if row.sizing == "fixed" else slots) + 1
    speculative = {}
    if draft_tokens:  # MambaPool's intermediate caches: spec_state_size (the running cap) + 1 rows per draft token
        spec = P.sglang_gated_delta_spec(version)
        speculative = {"speculative_draft_tokens": draft_tokens, "speculative_reserved_bytes": reserved,
                       "speculative_state_bytes": (running + 1) * draft_tokens * per_request,
                       "speculative_rule": spec.rule, "speculative_source": spec.source}
    return {"capacity": capacity, "slots": slots, "allocated_rows": rows, "bytes": rows * per_request, **speculative,
            "state_bytes_per_request": per_request, "conv_dtype_bytes": _CONV_DTYPE_BYTES,
            "ssm_dtype_bytes": ssm_bytes, "sizing": "flags" if fixed is not None else f"ratio {ratio:g}",
            "radix_cache": radix_on, "max_running_requests": running, "slots_per_running_request": tracking,
            "full_attention_layers": (facts.num_hidden_layers or 0) - (facts.linear_attention_layers or 0),
            "linear_attention_layers": facts.linear_attention_layers, "rule": row.sizing, "rule_since": row.since,
            "source": row.source}
