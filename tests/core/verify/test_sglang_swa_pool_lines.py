"""A hybrid SWA model's start-up under SGLang prints its split and then one line per pool: the capacity is the
full layers' token count (max_total_num_tokens), and the KV memory is both pools (patterns `sglang-swa-pool-*`)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

GB = 1024**3


def gb(x: float) -> int:
    """A printed GB figure as the parser keeps it: whole bytes (logparse._number)."""
    return int(round(x * GB))


def figures(lines: list[str]) -> dict:
    log, _ = parse_log([line + "\n" for line in lines])
    rank = log.binding_rank()
    return {k: v for k, v in log.ranks[rank].items() if k in (P.KV_TOKENS, P.KV_CACHE)}


SPLIT = "[2025-08-20 10:00:01 TP0] Use Sliding window memory pool. full_layer_tokens=1367213, swa_layer_tokens=1093770"


def test_before_0_5_4_the_sliding_pool_prints_first_and_both_add_up():
    # memory_pool.py@v0.5.2 SWAKVPool: the SWA pool, then the full one; no summary line yet
    assert figures([
        SPLIT,
        "[2025-08-20 10:00:01 TP0] KV Cache is allocated. #tokens: 1093770, K size: 12.52 GB, V size: 12.52 GB",
        "[2025-08-20 10:00:01 TP0] KV Cache is allocated. #tokens: 1367213, K size: 15.65 GB, V size: 15.65 GB",
    ]) == {P.KV_TOKENS: 1367213, P.KV_CACHE: 2 * gb(12.52) + 2 * gb(15.65)}


def test_the_summary_line_holds_both_pools_whatever_the_order():
    # 0.5.8+: the full pool first, then the SWA pool, then SWAKVPool's own line (swa_memory_pool.py@v0.5.10)
    assert figures([
        "[2026-03-02 10:11:12] Use sliding window memory pool. full_layer_tokens=1282684, swa_layer_tokens=1026147",
        "[2026-03-02 10:11:12] KV Cache is allocated. #tokens: 1282684, K size: 14.68 GB, V size: 14.68 GB",
        "[2026-03-02 10:11:12] KV Cache is allocated. #tokens: 1026147, K size: 11.74 GB, V size: 11.74 GB",
        "[2026-03-02 10:11:12] SWAKVPool mem usage: 52.84 GB, swa size: 1026147, full size: 1282684",
    ]) == {P.KV_TOKENS: 1282684, P.KV_CACHE: gb(52.84)}


@pytest.mark.parametrize("prefix", ["", "[2026-07-20 08:01:10 TP1] ", "2026-07-20T08:01:10.123456789Z "])
def test_labelled_pools_of_0_5_18_are_read_and_other_labels_are_not(prefix):
    # memory_pool.py@v0.5.20 _finalize_allocation_log: "Full" and "SWA" labels; an index cache's label is not a pool
    # of the deployment's KV (minimax_m3_nvfp4_pool.py)
    lines = [
        prefix + "Use sliding window memory pool. full_layer_tokens=1282684, swa_layer_tokens=1026147",
        prefix + "Full KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1282684, K size: 14.68 GB, V size: 14.68 GB",
        prefix + "SWA KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1026147, K size: 11.74 GB, V size: 11.74 GB",
        prefix + "MiniMax MSA-v1 index KV Cache is allocated. dtype: torch.uint8, #tokens: 9999, KV size: 3.00 GB",
    ]
    assert figures(lines) == {P.KV_TOKENS: 1282684, P.KV_CACHE: 2 * gb(14.68) + 2 * gb(11.74)}


def test_a_model_without_a_split_keeps_its_one_pool_and_an_all_sliding_model_its_swa_count():
    one = "[2025-10-07 23:17:19 TP0] KV Cache is allocated. #tokens: 975424, K size: 21.84 GB, V size: 21.84 GB"
    assert figures([one]) == {P.KV_TOKENS: 975424, P.KV_CACHE: 2 * gb(21.84)}
    assert figures(["[2026-03-02 10:11:12] Use sliding window memory pool (all SWA). swa_layer_tokens=524288"]) == {
        P.KV_TOKENS: 524288}


def test_a_restart_forgets_the_split():
    # the second start-up runs with --disable-hybrid-swa-memory: its one pool is the capacity again
    args = "[2025-08-20 10:0{}:00] server_args=ServerArgs(model_path='openai/gpt-oss-20b', mem_fraction_static=0.88)"
    lines = [args.format(0), SPLIT,
             "[2025-08-20 10:00:01 TP0] KV Cache is allocated. #tokens: 1367213, K size: 15.65 GB, V size: 15.65 GB",
             args.format(5),
             "[2025-08-20 10:05:10 TP0] KV Cache is allocated. #tokens: 1230492, K size: 28.16 GB, V size: 28.16 GB"]
    assert figures(lines) == {P.KV_TOKENS: 1230492, P.KV_CACHE: 2 * gb(28.16)}
