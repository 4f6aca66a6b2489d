"""vLLM's state-block check for hybrids with state layers (profiles.VLLM_STATE_BLOCKS_ROWS): FULL decode CUDA graphs
take one state block per decode sequence, so a KV pool of fewer blocks than max_num_seqs refuses to start (0.20+).

The block count is the hybrid pool's kv_cache_config.num_blocks: the bytes left for the cache over one block of every
group (group_size pages, each the attention page a state page is padded to; core/memory/gated_delta.py), or
--num-gpu-blocks-override. Imported only for a Gated DeltaNet shape (validate's import budget).
"""

from __future__ import annotations

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import FITS, SAMPLER_WARMUP_OOM, STATE_BLOCKS_BELOW_SEQS
from gpustack_guard.core.memory.gated_delta import GatedDeltaKV

# Verdicts reached before graph capture stand (the KV checks refuse first); the sampler warm-up runs after the
# capture (gpu_worker.compile_or_warm_up_model), so the refusal comes first there.
_OVERRIDDEN = (FITS, SAMPLER_WARMUP_OOM)


def pool_blocks(shape: GatedDeltaKV, available: int, override: int | None, group_size: int) -> int:
    """kv_cache_config.num_blocks of one rank (every rank gets the smallest one's)."""
    if override:
        return override
    return max(available, 0) // (shape.page_bytes * group_size)


def state_blocks(shape: GatedDeltaKV, available: int, override: int | None, group_size: int, version: str | None,
                 graph_mode: str, seqs: int) -> dict:
    """The estimate's report of the check: the pool's blocks, whether this release and graph mode check them, and
    whether max_num_seqs is above them."""
    row = P.vllm_state_blocks_row(version)
    blocks = pool_blocks(shape, available, override, group_size)
    checked = row.refused and graph_mode in P.FULL_GRAPH_MODES
    return {"state_blocks": blocks, "state_blocks_checked": checked,
            "state_blocks_refused": checked and seqs > blocks, "state_blocks_rule": row.source}


def blocks_verdict(verdict: str, report: dict) -> str:
    """A deployment that passed the KV checks is refused when its state blocks are below max_num_seqs."""
    if report.get("state_blocks_refused") and verdict in _OVERRIDDEN:
        return STATE_BLOCKS_BELOW_SEQS
    return verdict
