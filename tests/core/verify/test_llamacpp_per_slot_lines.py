"""llama-server's --kv-unified-per-slot lines (tools/server/server.cpp and server-context.cpp at llama.cpp 0c1e57098;
the capping line as llama.cpp PR #24124's run prints it): N joins the rebuilt arguments, so the rebuild caps each slot
as the server did. Without them the rebuild gave every slot the whole pool (16,384 where the server held 4,096)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import parse_log

POOL = "0.02.600.000 I srv          main: --kv-unified-per-slot: sizing KV pool to n_parallel * kv_unified_per_slot " \
       "= 4 * 4096 = 16384"
CAP = "0.03.025.317 I srv    load_model: capping per-slot context (16384) to --kv-unified-per-slot (4096)"
CTX = "0.02.635.267 I llama_context: n_ctx         = 16384"


@pytest.mark.parametrize("lines", [[POOL, CTX, CAP], [POOL, CTX], [CTX, CAP]])
def test_either_line_names_the_cap(lines):
    log, _ = parse_log(lines)
    assert backend_args(log) == ["--ctx-size=16384", "--kv-unified-per-slot=4096"]


@pytest.mark.parametrize("digits", [11, 30, 5_000])
def test_a_cap_past_an_int32_is_no_reading(digits):
    """llama.cpp reads N into an int (at most 10 digits): a longer figure is an edited log, left unread (as the
    parser leaves other figures no engine prints) rather than taken into the rebuild's arguments."""
    huge = "9" * digits
    log, _ = parse_log([POOL.replace("4 * 4096", f"4 * {huge}"), CTX, CAP.replace("(4096)", f"({huge})")])
    assert backend_args(log) == ["--ctx-size=16384"] and "kv_unified_per_slot" not in log.args


def test_the_warning_of_a_cap_above_the_pool_names_no_cap():
    # "--kv-unified-per-slot (N) exceeds the per-slot pool capacity (M) - cap has no effect": slots hold M
    log, _ = parse_log([CTX, "0.03.025.317 W srv    load_model: --kv-unified-per-slot (32768) exceeds the per-slot "
                             "pool capacity (16384) - cap has no effect, slots are limited to 16384 (raise the KV pool "
                             "with -c, or unset -c to size it to n_parallel * kv_unified_per_slot)"])
    assert backend_args(log) == ["--ctx-size=16384"]


def test_the_rebuild_holds_the_servers_slots(gsg):
    import json
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "-q", "q4_k_m", "--gpu-memory", "24GiB",
                 "--backend", "llama.cpp", "--backend-version", "b10507", "-o", "json", "--",
                 "--ctx-size=16384", "--kv-unified-per-slot=4096")
    doc = json.loads(result.out)
    assert (doc["kv_capacity_tokens"], doc["max_model_len"]) == (16384, 4096)
