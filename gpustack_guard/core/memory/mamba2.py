"""vLLM's hybrid KV cache for Mamba-2 hybrids (Nemotron-H, Granite-4.0-H, Bamba): Mamba-2 layers that keep one
conv and one temporal state per sequence beside attention layers that keep K and V per token.

The pool is built as for a Gated DeltaNet hybrid (core/memory/gated_delta.py, whose GatedDeltaKV this extends):
the attention block is raised until one page holds a state, the state page is padded to it, the layers form
groups of one page per block, and the pool's block count is what GSG056 holds against max_num_seqs
(core/memory/state_blocks.py). Only the state differs (profiles.VLLM_MAMBA2_ROWS):
  conv      (kernel - 1) x (intermediate + 2 x groups x state) / TP  at --mamba-cache-dtype (auto: model dtype)
  temporal  heads / TP x head dim x state                            at --mamba-ssm-cache-dtype (auto: as conv;
            Nemotron-H: the config's mamba_ssm_cache_dtype, else float16 from 0.13.0, float32 from 0.20.0)
With prefix caching (profiles.VLLM_MAMBA_CACHE_MODE_ROWS) mode "all" aligns the block to lcm(the SSD chunk or
--mamba-block-size, the kernel alignment) and keeps a state page per block of tokens; mode "align" keeps 2 pages
(3 from 0.32.0) on the block of mode "none".
Imported only for a Mamba-2 hybrid (validate's import budget).
"""

from __future__ import annotations

import math

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import GatedDeltaUnsupported
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.gated_delta import GatedDeltaKV, dtype_bytes
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer


def state_elements(facts: ModelFacts, tp: int) -> tuple[int, int]:
    """(conv, temporal) state elements of one Mamba-2 layer on one TP rank (mamba2_state_shape)."""
    heads, head_dim, state = facts.mamba_num_heads, facts.mamba_head_dim, facts.mamba_d_state
    groups, kernel, inner = facts.mamba_n_groups, facts.mamba_d_conv, facts.mamba_intermediate_size
    assert heads and head_dim and state and groups and kernel and inner  # missing_for_params (MAMBA2_SHAPE)
    groups = groups if groups % tp == 0 else tp  # extra_groups_for_head_shards: groups + (tp - groups)
    conv_dim = inner + 2 * groups * state
    if conv_dim % tp or heads % tp:
        raise GatedDeltaUnsupported(f"tensor parallel size {tp} does not divide the Mamba-2 layers (conv width "
                                    f"{conv_dim}, {heads} heads): vLLM refuses it")
    return (kernel - 1) * (conv_dim // tp), (heads // tp) * head_dim * state


def ssm_dtype(facts: ModelFacts, flag: str | None, row: P.VllmMamba2Row) -> str:
    """The temporal state's dtype choice: the flag, else NemotronHForCausalLMConfig's default where the release has
    one, else auto (the conv state's dtype)."""
    choice = (flag or "auto").lower()
    if choice == "auto" and row.nemotron_ssm_default and facts.architecture in P.VLLM_NEMOTRON_H_ARCHITECTURES:
        return facts.mamba_ssm_cache_dtype or row.nemotron_ssm_default
    return choice


class Mamba2KV(GatedDeltaKV):
    """One rank's hybrid KV geometry: attention layers paged by tokens, Mamba-2 layers one page a sequence."""

    def __init__(self, facts: ModelFacts, tp: int, kv_cache_dtype: str | None, user_block: int | None,
                 version: str | None, gpu_name: str, mamba_cache_dtype: str | None = None,
                 mamba_ssm_cache_dtype: str | None = None, kernel_page: int = 0, mode: str = "none",
                 mamba_block: int | None = None):
        row = P.vllm_mamba2_row(version)
        if not row.modelled:
            raise GatedDeltaUnsupported(row.note)
        self.mamba_row = row
        self.mode_row = P.vllm_mamba_cache_mode_row(version)
        self.row = P.vllm_gated_delta_row(version)  # the block alignment, shared with Gated DeltaNet
        self.cache_mode = mode
        # pages of one Mamba-2 layer per sequence in "none" and "align" ("all": one a block of tokens); no draft
        self.state_pages = self.mode_row.mamba2_align_pages if mode == "align" else 1
        self.spec_blocks, self.draft_full_layers = 0, 0
        pattern = facts.mamba_pattern or ""
        self.linear_layers, self.full_layers = pattern.count("M"), pattern.count("*")
        self.token_bytes = kv_bytes_per_token_layer(facts, tp, kv_cache_dtype)
        conv_bytes = dtype_bytes(mamba_cache_dtype, facts.dtype, "mamba-cache-dtype")
        choice = ssm_dtype(facts, mamba_ssm_cache_dtype, row)
        # the dtype NemotronHForCausalLMConfig put in place of an auto flag, for the estimate's note
        self.ssm_override = choice if choice != (mamba_ssm_cache_dtype or "auto").lower() else None
        ssm_bytes = conv_bytes if choice == "auto" else dtype_bytes(choice, facts.dtype, "mamba-ssm-cache-dtype")
        self.ssm_dtype_bytes, self.conv_dtype_bytes = ssm_bytes, conv_bytes
        conv, temporal = state_elements(facts, tp)
        self.state_bytes = conv * conv_bytes + temporal * ssm_bytes
        start_block = user_block or max(P.vllm_default_block_size(version), kernel_page)
        self.alignment = max(self._alignment(self.row, facts, gpu_name, start_block), kernel_page)
        self.chunk = None
        if mode == "all":  # the block also a multiple of the SSD chunk (or --mamba-block-size)
            self.chunk = mamba_block or facts.mamba_chunk_size
            if not self.chunk:
                raise GatedDeltaUnsupported("mamba cache mode 'all' aligns the block to the model's Mamba chunk, "
                                            "which its config does not name (mamba_chunk_size or chunk_size)")
            self.alignment = math.lcm(self.chunk, self.alignment)
        needed = self.alignment * math.ceil(self.state_bytes / (self.alignment * self.token_bytes))
        if mode == "all" and user_block and user_block > needed:
            # before 0.20.0 the block does not enter the alignment: the attention block stays the flag's while the
            # Mamba block is the computed one, a layout gsg has not read
            raise GatedDeltaUnsupported(f"--block-size {user_block} is above the {needed}-token block of mamba "
                                        "cache mode 'all', which then pages the Mamba-2 layers by another block: "
                                        "gsg has not read that layout")
        self.block_size = max(needed, user_block or 0)
        self.block_raised = self.block_size != start_block
        self.page_bytes = self.block_size * self.token_bytes

    def report(self, groups: tuple[int, int, int]) -> dict:
        terms = super().report(groups)
        terms.pop("linear_attention_layers")
        if self.cache_mode == "all":  # a page a block of tokens: the pages grow with the sequence
            terms["pages_per_sequence_state"] = terms["state_page_bytes_per_sequence"] = "cdiv(tokens, block)"
            terms["mamba_chunk"] = self.chunk
        return {"mamba2_layers": self.linear_layers, **terms, "state_rule": self.mamba_row.since,
                "state_source": self.mamba_row.source,
                **({"mode_rule": self.mode_row.since, "mode_source": self.mode_row.source}
                   if self.cache_mode != "none" else {})}
