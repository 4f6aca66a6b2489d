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
"""

from __future__ import annotations

import math

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.gpu_arch import compute_capability
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer, longest_fitting

_STATE_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


def dtype_bytes(name: str | None, model_dtype: str | None, flag: str) -> int:
    """Bytes of one state element: `auto` is the model's dtype (get_kv_cache_torch_dtype)."""
    choice = (name or "auto").lower()
    if choice == "auto":
        return _STATE_DTYPE_BYTES.get(model_dtype or "bfloat16", 2)
    if choice not in _STATE_DTYPE_BYTES:
        raise GatedDeltaUnsupported(f"--{flag} '{name}' is not one gsg sizes (auto, bfloat16, float16, float32)")
    return _STATE_DTYPE_BYTES[choice]


def state_elements(facts: ModelFacts, tp: int) -> tuple[int, int]:
    """(conv, temporal) state elements of one linear layer on one TP rank (no speculative tokens)."""
    nk, nv, dk, dv, kernel = (facts.linear_num_key_heads, facts.linear_num_value_heads, facts.linear_key_head_dim,
                              facts.linear_value_head_dim, facts.linear_conv_kernel_dim)
    assert nk and nv and dk and dv and kernel  # missing_for_params (GATED_DELTA_SHAPE) checked them
    conv_dim = 2 * nk * dk + nv * dv
    if conv_dim % tp or nv % tp:
        raise GatedDeltaUnsupported(f"tensor parallel size {tp} does not divide the linear-attention heads "
                                    f"(conv width {conv_dim}, {nv} value heads): vLLM refuses it")
    return (kernel - 1) * (conv_dim // tp), (nv // tp) * dk * dv


class GatedDeltaKV:
    """One rank's hybrid KV geometry: full-attention layers paged by tokens, linear layers one page a sequence."""

    hybrid = True  # per-request cost is not tokens x bytes_per_token
    is_gated_delta = True  # what engines/vllm.py asks instead of isinstance (it imports this module lazily)

    def __init__(self, facts: ModelFacts, tp: int, kv_cache_dtype: str | None, user_block: int | None,
                 version: str | None, gpu_name: str, mamba_cache_dtype: str | None = None,
                 mamba_ssm_cache_dtype: str | None = None, state_pages: int = 1):
        row = P.vllm_gated_delta_row(version)
        if not row.modelled:
            raise GatedDeltaUnsupported(row.note)
        self.row = row
        self.state_pages = state_pages  # pages of one linear layer per sequence: 1 ("none") or 2 ("align")
        assert facts.num_hidden_layers and facts.linear_attention_layers  # is_gated_delta
        self.linear_layers = facts.linear_attention_layers
        self.full_layers = facts.num_hidden_layers - self.linear_layers
        self.token_bytes = kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)  # one full layer, one token
        conv_bytes = dtype_bytes(mamba_cache_dtype, facts.dtype, "mamba-cache-dtype")
        ssm_choice = mamba_ssm_cache_dtype or "auto"
        if row.ssm_dtype_flag and ssm_choice == "auto" and facts.mamba_ssm_dtype:
            ssm_choice = facts.mamba_ssm_dtype  # Qwen3_5ForConditionalGenerationConfig: the config's dtype
        ssm_bytes = dtype_bytes(ssm_choice, facts.dtype, "mamba-ssm-cache-dtype") if row.ssm_dtype_flag \
            else conv_bytes  # gated_delta_net_state_dtype: one dtype for both states before 0.17.0
        self.ssm_dtype_bytes, self.conv_dtype_bytes = ssm_bytes, conv_bytes
        conv, temporal = state_elements(facts, tp)
        self.state_bytes = conv * conv_bytes + temporal * ssm_bytes
        self.alignment = self._alignment(row, facts, gpu_name, user_block)
        needed = self.alignment * math.ceil(self.state_bytes / (self.alignment * self.token_bytes))
        self.block_size = max(needed, user_block or 0)
        self.block_raised = self.block_size != (user_block or P.DEFAULT_BLOCK_SIZE)
        self.page_bytes = self.block_size * self.token_bytes  # the state page is padded to it

    @staticmethod
    def _alignment(row: P.VllmGatedDeltaRow, facts: ModelFacts, gpu_name: str, user_block: int | None) -> int:
        if row.alignment_from_block:  # max(the backend's smallest kernel block, cache_config.block_size)
            return max(P.GATED_DELTA_KERNEL_ALIGNMENT, user_block or P.DEFAULT_BLOCK_SIZE)
        capability = compute_capability(gpu_name)
        if row.blackwell_head256 and capability and capability[0] == 10 and facts.dim_head == 256:
            return 2 * P.GATED_DELTA_KERNEL_ALIGNMENT  # FlashInfer on SM100 has no 16-token pages at head 256
        return P.GATED_DELTA_KERNEL_ALIGNMENT

    @property
    def bytes_per_token(self) -> int:
        """Steady cost of one more token of context: the full-attention layers' K and V."""
        return self.full_layers * self.token_bytes

    def request_bytes(self, tokens: int) -> int:
        """max_memory_usage_bytes over every layer: a full layer's pages for `tokens`, a linear layer's state pages."""
        return (self.full_layers * math.ceil(tokens / self.block_size)
                + self.linear_layers * self.state_pages) * self.page_bytes

    def max_tokens_fitting(self, available: int, upper: int) -> int:
        return longest_fitting(self.request_bytes, available, upper)

    def pool(self, available: int, max_len: int, override: int | None,
             groups: tuple[int, int, int]) -> tuple[int, float, int]:
        """(tokens as kv_cache_utils prints them up to 0.20, max concurrency at max_len, pool bytes): group_size
        tensors of num_blocks pages; the printed size shares the blocks out over every group, the smallest block
        size (the attention one, or max_len where it is shorter) per block."""
        size, full_groups, linear_groups = groups
        blocks = override or available // (self.page_bytes * size)
        per_request = full_groups * math.ceil((max_len or 1) / self.block_size) + linear_groups * self.state_pages
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
                "state_page_bytes_per_sequence": self.page_bytes * self.linear_layers * self.state_pages,
                "kernel_alignment": self.alignment, "attention_block_size": self.block_size,
                "page_bytes": self.page_bytes, "state_page_padding_bytes": self.page_bytes - self.state_bytes,
                "group_size": size, "full_attention_groups": full_groups, "linear_attention_groups": linear_groups,
                "pages_per_sequence_state": linear_groups * self.state_pages,
                "mamba_cache_mode": "align" if self.state_pages > 1 else "none",
                "rule": self.row.since, "source": self.row.source}
