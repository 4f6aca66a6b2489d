"""Every SGLang start-up line verify reads, in the format each release range prints it.

Each line below is built from the format string of the release named beside it (the wheel's own source: the file
and tag are named), with realistic values, and the test asserts the exact figure read. A release whose line changed
has its own case, so a format the parser does not know shows up here before a real log does.

Checked wheels: 0.3.6, 0.4.0, 0.4.3, 0.4.4, 0.4.5, 0.4.6.post5, 0.4.8, 0.4.9.post6, 0.4.10.post2, 0.5.0rc2, 0.5.1,
0.5.3, 0.5.5, 0.5.6, 0.5.8, 0.5.10, 0.5.12, 0.5.13, 0.5.14, 0.5.15, 0.5.18, 0.5.19, 0.5.20, 0.5.21, 0.5.22, 0.5.23.
"""

from __future__ import annotations

import pytest
from support import REPO

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import MAX_RECOVERY_NOTES, parse_log


def gib(x: float) -> int:
    return int(round(x * 2**30))


def read(lines: list[str]):
    log, _ = parse_log([line + "\n" for line in lines], "sglang")
    return log


def terms(lines: list[str]) -> dict:
    return read(lines).terms()


# -- the weights -----------------------------------------------------------------------------------------------

BEGIN = "[2024-11-20 10:00:01 TP0] Load weight begin. avail mem=78.50 GB"  # every release (model_runner.py)


@pytest.mark.parametrize("end,weights,free_after", [
    # 0.3.6 to 0.4.3: the free memory only (model_runner.py@v0.3.6, @v0.4.0, @v0.4.3): begin less end
    ("[2024-11-20 10:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.41 GB",
     gib(78.50) - gib(63.41), gib(63.41)),
    # 0.4.4 to 0.5.12: the difference printed (model_runner.py@v0.4.4, @v0.4.6.post5, @v0.5.1, @v0.5.12)
    ("[2025-05-01 10:00:05 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.41 GB, "
     "mem usage=15.09 GB.", gib(15.09), gib(63.41)),
    # 0.5.13 on: the time first, the quantization when there is one, no dtype (model_runner.py@v0.5.13, @v0.5.23)
    ("[2026-03-01 10:00:05 TP0] Load weight end. elapsed=4.12 s, type=Qwen3ForCausalLM, avail mem=63.20 GB, "
     "mem usage=15.30 GB.", gib(15.30), gib(63.20)),
    ("[2026-03-01 10:00:05 TP0] Load weight end. elapsed=4.12 s, type=Qwen3ForCausalLM, quant=fp8, fmt=e4m3, "
     "avail mem=70.40 GB, mem usage=8.10 GB.", gib(8.10), gib(70.40)),
])
def test_weights_lines_of_each_release(end, weights, free_after):
    got = terms([BEGIN, end])
    assert (got[P.FREE_BEFORE_LOAD], got[P.WEIGHTS], got[P.FREE_AFTER_LOAD]) == (gib(78.50), weights, free_after)


def test_the_weights_of_an_old_end_line_need_its_own_ranks_begin_line():
    # the end line alone: the free memory is read, the weights are not guessed
    end = "[2024-11-20 10:00:05 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=63.41 GB"
    assert terms([end]) == {P.FREE_AFTER_LOAD: gib(63.41)}
    # another rank's begin line is not this rank's
    got = read([BEGIN, end]).ranks
    assert P.WEIGHTS not in got["TP1"] and got["TP0"] == {P.FREE_BEFORE_LOAD: gib(78.50)}


def test_the_overlapped_commit_line_of_0_5_18_carries_no_figure():
    # startup_weight_load.py@v0.5.18 and @v0.5.23: weights committed after graph capture, timings only
    line = ("[2026-07-20 08:01:30 TP0] Load weight end. Committed real weights after CUDA graph capture in 2.10 s "
            "(capture overlap window 6.40 s, startup overlap total 9.02 s)")
    assert terms([line]) == {}


# -- the start-up baseline -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "[2025-05-01 10:00:00 TP3] Init torch distributed ends. mem usage=0.61 GB",  # 0.4.6 to 0.5.8
    "[2026-02-10 10:00:00 TP3] Init torch distributed ends. elapsed=1.37 s, mem usage=0.61 GB",  # 0.5.9 to 0.5.20
    "[2026-06-01 10:00:00 TP3] Memory baseline taken. mem usage=0.61 GB",  # 0.5.21 on (distributed/bootstrap.py)
])
def test_distributed_init_lines_of_each_release(line):
    assert read([line]).ranks == {"TP3": {P.NON_TORCH: gib(0.61)}}


# -- the KV pool -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,expected", [
    # 0.4.1 to 0.4.3: K and V only (memory_pool.py@v0.4.3)
    ("[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.",
     {P.KV_CACHE: 2 * gib(27.13)}),
    # 0.4.4 to 0.5.12: the token count first (memory_pool.py@v0.4.4, @v0.5.5, @v0.5.12)
    ("[2025-05-01 10:00:08 TP0] KV Cache is allocated. #tokens: 444500, K size: 27.13 GB, V size: 27.13 GB",
     {P.KV_TOKENS: 444_500, P.KV_CACHE: 2 * gib(27.13)}),
    ("[2025-05-01 10:00:08 DP0 TP0] KV Cache is allocated. #tokens: 975424, KV size: 43.67 GB",  # MLA: one buffer
     {P.KV_TOKENS: 975_424, P.KV_CACHE: gib(43.67)}),
    # 0.5.13 on: the dtype first (memory_pool.py@v0.5.13, @v0.5.23)
    ("[2026-03-01 10:00:08 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 444500, K size: 27.13 GB, "
     "V size: 27.13 GB", {P.KV_TOKENS: 444_500, P.KV_CACHE: 2 * gib(27.13)}),
    ("[2026-03-01 10:00:08 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 975424, KV size: 21.84 GB",
     {P.KV_TOKENS: 975_424, P.KV_CACHE: gib(21.84)}),
    # 0.5.18 on: sized after graph capture (model_runner_components/kv_pool_runtime.py@v0.5.18, @v0.5.23)
    ("[2026-07-20 08:01:10 TP0] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 1245184, "
     "KV size: 57.01 GB, avail mem=4.12 GB", {P.KV_TOKENS: 1_245_184, P.KV_CACHE: gib(57.01),
                                               P.FREE_AFTER_POOL: gib(4.12)}),
    # every release: the free memory after the pool (model_runner.py@v0.3.6 .. kv_pool_runtime's neighbours @v0.5.23)
    ("[2024-11-20 10:00:09 TP0] Memory pool end. avail mem=8.34 GB", {P.FREE_AFTER_POOL: gib(8.34)}),
])
def test_kv_pool_lines_of_each_release(line, expected):
    assert terms([line]) == expected


@pytest.mark.parametrize("line", [
    # a development build of 2026-05-12 (sglang#25118)
    "[2026-05-13 02:15:18 DP0 TP0] DSv4 memory calculation: bytes_per_full_token=176983.05, available_bytes=87.26 GB, "
    "full_token=529408",
    # 0.5.12 to 0.5.14 (pool_configurator.py@v0.5.12, @v0.5.14)
    "[2026-06-01 10:00:08 TP0] DSV4 memory calculation: bytes_per_full_token=176983.05, available_bytes=87.26 GB, "
    "full_token=529408",
    # 0.5.23: the flags first, the fixed pools between (pool_configurator.py@v0.5.23)
    "[2026-07-20 08:01:10 TP0] DSV4 memory calculation: unified=False, unified_fp8=False, dspark_draft_bf16=False, "
    "bytes_per_full_token=176983.05, available_bytes=87.26 GB, c128_state_fixed=0.10 GB, c2_state_fixed=0.00 GB, "
    "swa_fixed=0.00 GB, swa_ring_fixed=0.00 GB, c4_state_fixed=0.20 GB, full_token=529408",
])
def test_deepseek_v4_pool_split_gives_the_capacity_of_each_release(line):
    # the budget is every DSv4 pool's, not the KV cache's: only the token count is a term
    assert terms([line]) == {P.KV_TOKENS: 529_408}


CALCULATION = ("[2026-07-20 08:01:10 TP0] DSV4 memory calculation: bytes_per_full_token=7705.45, available_bytes=6.16 "
               "GB, c128_state_fixed=0.04 GB, full_token=852992")
PROFILED = ("[2026-07-20 08:01:10 TP0] DSV4 pool sizes: full=852992, swa=85248, c4=213248, c128=6664, c4_state=5328, "
            "c128_state=0")
CAPPED = ("[2026-07-20 08:01:10 TP0] DSV4 pool sizes: full=32768, swa=3200, c4=8192, c128=256, c4_state=200, "
          "c128_state=0")


def test_deepseek_v4_pools_as_built_are_the_last_sizes_line():
    # round 29: _to_config prints the pools after the calculation, and again once the token constraints cap them
    # (calculate_pool_sizes_from_max_tokens, pool_configurator.py@v0.5.12 .. @v0.5.23): the last line is the pool
    assert terms([CALCULATION, PROFILED]) == {P.KV_TOKENS: 852_992}
    assert terms([CALCULATION, PROFILED, CAPPED]) == {P.KV_TOKENS: 32_768}
    # the development builds' spelling (sglang#25118: "DSv4"), and a line cut before its second pool is not read
    assert terms([CAPPED.replace("DSV4", "DSv4")]) == {P.KV_TOKENS: 32_768}
    assert terms(["[2026-07-20 08:01:10 TP0] DSV4 pool sizes: full=32768"]) == {}
    # the Ascend development branch's calculation line prints another full_token (8,529 for 852,992 built): the
    # sizes line after it gives every rank the built pool, where the scheduler line names only the first rank's
    path = REPO / "tests" / "fixtures" / "logs" / "sglang" / "dsv4-flash-w4a8-4x-ascend-910b-dp4-ep-warmup-fails.log"
    log = parse_log(path.read_text(encoding="utf-8").splitlines(True), "sglang")[0]
    assert {rank: figures[P.KV_TOKENS] for rank, figures in log.ranks.items()} == {
        "DP0 TP0 EP0": 32_768, "DP1 TP1 EP1": 32_768, "DP2 TP2 EP2": 32_768, "DP3 TP3 EP3": 32_768}


@pytest.mark.parametrize("line,expected", [
    # 0.3.6 and 0.4.0 (scheduler.py): no chunked prefill size, nothing after the context length
    ("[2024-11-20 10:00:10 TP0] max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049, "
     "context_len=131072", {P.KV_TOKENS: 444_500, P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131_072}),
    # 0.4.6 to 0.4.10: chunked_prefill_size second (scheduler.py@v0.4.6.post5)
    ("[2025-05-01 10:00:10 TP0] max_total_num_tokens=444500, chunked_prefill_size=8192, max_prefill_tokens=16384, "
     "max_running_requests=2049, context_len=131072", {P.KV_TOKENS: 444_500, P.MAX_RUNNING: 2049,
                                                        P.MAX_MODEL_LEN: 131_072}),
    # 0.5 on: the free memory last (scheduler.py@v0.5.5, @v0.5.23)
    ("[2026-07-20 08:01:12 TP0] max_total_num_tokens=1245184, chunked_prefill_size=16384, max_prefill_tokens=16384, "
     "max_running_requests=4096, context_len=40960, available_gpu_mem=4.12 GB",
     {P.KV_TOKENS: 1_245_184, P.MAX_RUNNING: 4096, P.MAX_MODEL_LEN: 40_960}),
])
def test_capacity_lines_of_each_release(line, expected):
    assert terms([line]) == expected


@pytest.mark.parametrize("line,expected", [
    # a note's copy without max_running_requests and available_gpu_mem (search-index file 56816597900, 2026-06-28)
    ("max_total_num_tokens=1428864, chunked_prefill_size=2048, max_prefill_tokens=16384, context_len=131072",
     {P.KV_TOKENS: 1_428_864, P.MAX_MODEL_LEN: 131_072}),
    # an author's "..." for the fields between (search-index file 69641239258)
    ("max_total_num_tokens=350257, ... max_running_requests=12, context_len=262144",
     {P.KV_TOKENS: 350_257, P.MAX_RUNNING: 12, P.MAX_MODEL_LEN: 262_144}),
    # a copy that keeps the cap and the free memory but not the context length (search-index file 52853901169)
    ("[2026-04-14 01:02:20] max_total_num_tokens=107319, chunked_prefill_size=2048, max_running_requests=4096, "
     "available_gpu_mem=11.69 GB", {P.KV_TOKENS: 107_319, P.MAX_RUNNING: 4096}),
    # a line wrapped after the first field: the capacity alone
    ("[2026-04-14 01:02:20] max_total_num_tokens=107319, chunked_prefill_size=2048,", {P.KV_TOKENS: 107_319}),
])
def test_a_shortened_capacity_line_gives_the_fields_it_keeps(line, expected):
    assert terms([line]) == expected


@pytest.mark.parametrize("line", [
    "[2026-09-20 10:41:06 TP0] c4_max_total_num_tokens=90816, context_len=131072",  # a pool's own count
    "max_total_num_tokens_per_rank=90816, context_len=131072",  # another word
])
def test_the_capacity_pattern_reads_no_other_word(line):
    scheduler = next(p for p in P.SGLANG_PATTERNS if p.id == "sglang-max-total-tokens")
    assert scheduler.regex.search(line) is None


@pytest.mark.parametrize("line", [
    "max_total_num_tokens=1256440",  # bench_latency.py@v0.3.3 (AUGMXNT/MI300-testing), bench_one_batch.py@v0.3.6
    "max_total_num_tokens=1256440  ",
    "2024-10-10T22:31:06.120Z max_total_num_tokens=1256440",  # a collector's timestamp before it
])
def test_the_benchmarks_capacity_line_alone_is_a_start_up(line):
    log = read([line])
    assert (log.engine_terms, log.started) == ({P.KV_TOKENS: 1_256_440}, True)


def test_the_benchmarks_pattern_leaves_the_schedulers_line_to_its_own():
    line = ("[2025-05-01 10:00:10 TP0] max_total_num_tokens=444500, chunked_prefill_size=8192, "
            "max_prefill_tokens=16384, max_running_requests=2049, context_len=131072")
    bench = next(p for p in P.SGLANG_PATTERNS if p.id == "sglang-bench-max-total-tokens")
    assert bench.regex.search(line) is None and bench.regex.search("Prefill. latency: 0.37333 s") is None


# -- CUDA graphs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,graphs", [
    # 0.4.0 to 0.4.3: the time only (model_runner.py@v0.4.0, @v0.4.3): nothing to read
    ("[2025-01-23 19:35:30 TP0] Capture cuda graph end. Time elapsed: 9.12 s", None),
    # 0.4.4 and 0.4.5: avail mem first (model_runner.py@v0.4.4, @v0.4.5)
    ("[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=0.93 GB.",
     0.93),
    # 0.4.6 to 0.5.13: mem usage first (model_runner.py@v0.4.6.post5, @v0.5.1, @v0.5.3, @v0.5.12)
    ("[2025-05-01 10:00:20 TP0] Capture cuda graph end. Time elapsed: 5.37 s. mem usage=1.44 GB. avail mem=38.05 GB.",
     1.44),
    ("[2025-11-01 10:00:20 TP0] Capture npu graph end. Time elapsed: 5.37 s. mem usage=0.88 GB. avail mem=30.00 GB.",
     0.88),  # Ascend (graph_backend, model_runner.py@v0.5.12)
    # 0.5.14: the role and the kind, lower case (model_runner.py@v0.5.14)
    ("[2026-03-01 10:00:20 TP0] Capture target decode cuda graph end. elapsed=6.20 s, mem usage=0.45 GB, avail "
     "mem=12.15 GB.", 0.45),
    # 0.5.15 to 0.5.17: CUDA graph (model_runner.py@v0.5.15)
    ("[2026-04-01 10:00:20 TP0] Capture target decode CUDA graph end. elapsed=6.20 s, mem usage=0.46 GB, avail "
     "mem=12.15 GB.", 0.46),
    # 0.5.18 to 0.5.21: the end line as 0.5.15's, the batch sizes in the begin line
    # (model_runner_components/cuda_graph_setup.py@v0.5.18, @v0.5.19, @v0.5.20, @v0.5.21); a public line of this
    # form, with speculative decoding's verify graphs: search-index file 69412325477 (a patched DeepSeek-V4.1-Flash
    # build of 2026-09-11 over three DGX Sparks, its version not printed)
    ("[2026-09-11 23:46:44 TP0 EP0] Capture target verify CUDA graph end. elapsed=13.48 s, mem usage=0.58 GB, avail "
     "mem=7.62 GB.", 0.58),
    ("[2026-07-20 08:00:20 TP0] Capture target decode CUDA graph end. elapsed=6.20 s, mem usage=0.47 GB, avail "
     "mem=12.15 GB.", 0.47),
    # 0.5.22 on: the batch sizes moved into the end line (cuda_graph_setup.py@v0.5.22, @v0.5.23: runner.capture_bs)
    ("[2026-07-20 08:00:20 TP0] Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 16], elapsed=6.20 s, mem "
     "usage=0.47 GB, avail mem=12.15 GB.", 0.47),
    # "mem usage" is the free memory before the capture less after it, signed: a capture that gave memory back
    # prints it negative (the DSpark draft of search-index file 69412325477: "mem usage=-0.01 GB"), in every form
    ("[2025-05-01 10:00:20 TP0] Capture cuda graph end. Time elapsed: 5.37 s. mem usage=-0.02 GB. avail mem=38.05 "
     "GB.", -0.02),
    ("[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=-0.01 GB.",
     -0.01),
    ("[2026-04-01 10:00:20 TP0] Capture target decode CUDA graph end. elapsed=6.20 s, mem usage=-0.03 GB, avail "
     "mem=12.15 GB.", -0.03),
])
def test_decode_graph_lines_of_each_release(line, graphs):
    assert terms([line]).get(P.CUDA_GRAPHS) == (gib(graphs) if graphs is not None else None)


@pytest.mark.parametrize("line", [
    # 0.5.18 to 0.5.21 (cuda_graph_setup.py@v0.5.18 .. @v0.5.21) and every draft (eagle_worker_v2.py@v0.5.18 ..
    # @v0.5.23): the begin line carries the batch sizes and the free memory before the capture, no graph figure
    "[2026-09-11 23:46:30 TP0 EP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=6, "
    "bs=[1, 2, 3, 4], avail mem=8.20 GB",
    # 0.5.22 on: the begin line without them (cuda_graph_setup.py@v0.5.22, @v0.5.23)
    "[2026-07-20 08:00:14 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail "
    "mem=12.60 GB",
])
def test_graph_begin_lines_carry_no_graph_memory(line):
    assert terms([line]) == {}


def test_a_verify_capture_of_the_begin_line_form_reads_the_target_and_not_the_draft():
    # search-index file 69412325477's four lines (TP3 over three DGX Sparks, DSpark drafting): the target's verify
    # graphs are the graph term, the draft's (-0.01 GB, printed without batch sizes) are not
    got = terms([
        "[2026-09-11 23:46:30 TP0 EP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=6, "
        "bs=[1, 2, 3, 4], avail mem=8.20 GB",
        "[2026-09-11 23:46:44 TP0 EP0] Capture target verify CUDA graph end. elapsed=13.48 s, mem usage=0.58 GB, "
        "avail mem=7.62 GB.",
        "[2026-09-11 23:46:44 TP0 EP0] Capture draft verify CUDA graph begin. backend=full, num_tokens_per_req=5, "
        "bs=[1, 2, 3, 4], avail mem=7.67 GB",
        "[2026-09-11 23:46:49 TP0 EP0] Capture draft verify CUDA graph end. elapsed=4.26 s, mem usage=-0.01 GB, "
        "avail mem=7.68 GB.",
    ])
    assert got == {P.CUDA_GRAPHS: gib(0.58)}


@pytest.mark.parametrize("line,prefill", [
    # 0.5.6 to 0.5.13 (model_runner.py@v0.5.6, @v0.5.12, @v0.5.13)
    ("[2026-04-27 02:36:27] Capture piecewise CUDA graph end. Time elapsed: 17.62 s. mem usage=2.32 GB. avail "
     "mem=21.22 GB.", 2.32),
    # 0.5.14 on (model_runner.py@v0.5.14, cuda_graph_setup.py@v0.5.23)
    ("[2026-07-20 08:01:02 TP0] Capture target prefill CUDA graph end. elapsed=14.80 s, mem usage=1.87 GB, avail "
     "mem=14.43 GB.", 1.87),
    ("[2026-04-27 02:36:27] Capture piecewise CUDA graph end. Time elapsed: 17.62 s. mem usage=-0.05 GB. avail "
     "mem=21.22 GB.", -0.05),  # signed, as the decode capture's
    ("[2026-07-20 08:01:02 TP0] Capture target prefill CUDA graph end. elapsed=14.80 s, mem usage=-0.05 GB, avail "
     "mem=14.43 GB.", -0.05),
])
def test_prefill_graph_lines_are_their_own_term(line, prefill):
    assert terms([line]) == {P.PREFILL_GRAPHS: gib(prefill)}


def test_both_captures_are_read_as_the_engine_prints_them():
    # a 0.5.10 start-up (the clean-startup-log reference): the decode graphs, then the prefill graphs
    got = terms([
        "[2026-04-27 02:36:09] Capture cuda graph end. Time elapsed: 3.74 s. mem usage=0.60 GB. avail mem=23.54 GB.",
        "[2026-04-27 02:36:09] Capture piecewise CUDA graph begin. avail mem=23.54 GB",
        "[2026-04-27 02:36:27] Capture piecewise CUDA graph end. Time elapsed: 17.62 s. mem usage=2.32 GB. avail "
        "mem=21.22 GB.",
    ])
    assert (got[P.CUDA_GRAPHS], got[P.PREFILL_GRAPHS]) == (gib(0.60), gib(2.32))


@pytest.mark.parametrize("line", [
    # other pools: the draft model's graphs (eagle_worker / multi_layer_eagle: 0.4.6 to 0.5.13, then 0.5.15 on)
    "[2025-05-01 10:00:30 TP0] Capture draft cuda graph end. Time elapsed: 3.00 s. mem usage=0.20 GB. avail mem=30.00 "
    "GB.",
    "[2025-05-01 10:00:30 TP0] Capture draft extend cuda graph end. Time elapsed: 3.00 s. mem usage=0.20 GB. avail "
    "mem=30.00 GB.",
    "[2026-07-20 08:00:20 TP0] Capture draft decode CUDA graph end. bs=[1, 2], elapsed=1.00 s, mem usage=0.20 GB, "
    "avail mem=12.15 GB.",
    # as eagle_worker_v2.py@v0.5.18 .. @v0.5.23 prints it (its batch sizes stay in the begin line)
    "[2026-07-20 08:00:20 TP0] Capture draft decode CUDA graph end. elapsed=1.00 s, mem usage=0.20 GB, avail "
    "mem=12.15 GB.",
    "[2026-07-20 08:00:20 TP0] Capture draft prefill CUDA graph end. elapsed=1.00 s, mem usage=0.20 GB, avail "
    "mem=12.15 GB.",
])
def test_draft_graph_lines_are_not_the_targets(line):
    assert terms([line]) == {}


# -- what ran and how it ended ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # 0.2 to 0.5.18: f"{server_args=}" (server.py@v0.3.6, engine.py@v0.5.18)
    "[2025-05-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tokenizer_path='Qwen/Qwen3-8B', "
    "context_length=None, mem_fraction_static=0.835, tp_size=2, cuda_graph_max_bs_decode=160)",
    # 0.5.19 on: the resolved fields as a dict (engine.py@v0.5.19, @v0.5.23)
    "[2026-07-20 08:00:00] server_args={'model_path': 'Qwen/Qwen3-8B', 'tokenizer_path': 'Qwen/Qwen3-8B', "
    "'context_length': None, 'mem_fraction_static': 0.835, 'tp_size': 2, 'cuda_graph_max_bs_decode': 160}",
])
def test_server_args_lines_of_each_release(line):
    log = read([line])
    assert (log.model, log.args["mem_fraction_static"], log.args["tp_size"]) == ("Qwen/Qwen3-8B", 0.835, 2)


@pytest.mark.parametrize("line", [
    "[2026-07-08 16:06:36] server_args=ServerArgs(model_path='Qwen/Qwen2.5-0.5B', mem_fraction_static=0.86, "
    "disable_piecewise_cuda_graph=True, enable_torch_compile=False, enable_dp_attention=False, "
    "disable_radix_cache=True, disable_overlap_schedule=True, disable_hybrid_swa_memory=False, "
    "swa_full_tokens_ratio=0.8, mamba_ssm_dtype=None)",
    "[2026-07-20 08:00:00] server_args={'model_path': 'Qwen/Qwen2.5-0.5B', 'mem_fraction_static': 0.86, "
    "'disable_piecewise_cuda_graph': True, 'enable_torch_compile': False, 'enable_dp_attention': False, "
    "'disable_radix_cache': True, 'disable_overlap_schedule': True, 'disable_hybrid_swa_memory': False, "
    "'swa_full_tokens_ratio': 0.8, 'mamba_ssm_dtype': None}",
])
def test_the_printed_switches_the_estimate_reads_go_to_it(line):
    # sglang-play's 0.5.10.post1 run: --disable-piecewise-cuda-graph was printed but not passed on, so the estimate
    # booked 0.45 GiB of prefill graphs SGLang never captured; a switch printed off stays off
    flags = backend_args(read([line]), "0.5.10.post1")
    assert flags == ["--mem-fraction-static=0.86", "--disable-piecewise-cuda-graph", "--disable-radix-cache",
                     "--disable-overlap-schedule", "--swa-full-tokens-ratio=0.8"]


def test_a_dict_args_line_after_figures_begins_another_start_up():
    dump = "[2026-07-20 08:00:00] server_args={'model_path': 'Qwen/Qwen3-8B', 'mem_fraction_static': 0.8}"
    log = read([dump, "[2026-07-20 08:00:09 TP0] Memory pool end. avail mem=8.34 GB", dump])
    assert log.terms() == {} and any("2 start-ups" in note for note in log.notes)


@pytest.mark.parametrize("line,fraction", [
    # to 0.5.11: the attribute path (model_runner.py@v0.4.6.post5, @v0.5.10)
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
     "self.server_args.mem_fraction_static=0.2", 0.2),
    # 0.5.12 on: the bare name (pool_configurator.py@v0.5.12, @v0.5.23)
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
     "mem_fraction_static=0.35", 0.35),
])
def test_not_enough_memory_lines_of_each_release(line, fraction):
    log = read([line])
    assert (log.failure_kind, log.args["mem_fraction_static"], log.started) == ("no-kv-memory", fraction, False)


@pytest.mark.parametrize("line", [
    "[2024-11-20 10:00:01] Not enough memory. Please try to increase --mem-fraction-static.",  # 0.3.6: no value
])
def test_the_oldest_refusal_reads_without_a_fraction(line):
    log = read([line])
    assert (log.failure_kind, log.args) == ("no-kv-memory", {})


@pytest.mark.parametrize("line,rank", [
    ("[22:30:32 TP0] Load weight begin. avail mem=78.50 GB", "TP0"),  # 0.3.0 to 0.3.3.post1: datefmt %H:%M:%S
    ("[2024-11-20 10:00:05 TP1] Load weight begin. avail mem=78.50 GB", "TP1"),  # 0.3.6: " TP{n}"
    ("[2024-11-20 10:00:05 DP1 TP3] Load weight begin. avail mem=78.50 GB", "DP1 TP3"),  # 0.3.6: " DP{d} TP{t}"
    ("[2025-05-01 10:00:05 DP0 TP1 PP1] Load weight begin. avail mem=78.50 GB", "DP0 TP1 PP1"),  # 0.4.6: PP last
    ("[2026-07-20 08:00:05.123 DP0 PP1 ATTN_CP0 MOE_DP1 TP3 EP3] Load weight begin. avail mem=78.50 GB",
     "DP0 PP1 ATTN_CP0 MOE_DP1 TP3 EP3"),  # 0.5.10 on, SGLANG_LOG_MS (scheduler.py@v0.5.23, utils/common.py)
])
def test_rank_prefixes_of_each_release(line, rank):
    assert read([line]).ranks == {rank: {P.FREE_BEFORE_LOAD: gib(78.50)}}


# Round 31: SGLang's "mem usage" of the weights and of distributed init is the free memory before less after
# (model_runner.py@v0.4.9.post1 l.572 and l.656, @v0.5.9 l.851 and l.1046), negative when another process gave memory
# back in between (the docs CI's notebooks side by side: "mem usage=-27.89 GB", 2025-06-12). The line is read for its
# free memory after; the negative figure is no size of its term and is dropped, with a note.
@pytest.mark.parametrize("line,term,after,given", [
    # 0.4.4 to 0.5.12: type= and dtype= (the 2025-06-12 docs log's own line)
    ("[2025-06-12 01:42:35] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.20 GB, "
     "mem usage=-27.89 GB.", P.WEIGHTS, 64.20, 27.89),
    # 0.5.13 on: elapsed=, type= and quant= (model_runner.py@v0.5.13, @v0.5.23)
    ("[2026-05-01 10:00:05 TP1] Load weight end. elapsed=2.57 s, type=Qwen3ForCausalLM, quant=fp8, avail "
     "mem=14.47 GB, mem usage=-0.62 GB.", P.WEIGHTS, 14.47, 0.62),
    # distributed init: 0.4.6 to 0.5.8, then 0.5.9 to 0.5.20 with the time first (model_runner.py@v0.5.9 l.851)
    ("[2025-07-11 21:33:39] Init torch distributed ends. mem usage=-0.01 GB", P.NON_TORCH, None, 0.01),
    ("[2026-02-10 08:00:01 TP0] Init torch distributed ends. elapsed=0.42 s, mem usage=-0.05 GB", P.NON_TORCH,
     None, 0.05),
])
def test_a_negative_free_memory_difference_is_memory_given_back_not_a_term(line, term, after, given):
    log = read([line])
    rank = next(iter(log.ranks))
    assert term not in log.terms()
    assert log.terms().get(P.FREE_AFTER_LOAD) == (gib(after) if after is not None else None)
    assert log.given_back == [(1, rank, term, gib(given))]
    assert any(f"rose by {given:.2f} GiB" in note for note in log.notes)


def test_a_load_line_with_free_memory_rising_leaves_nothing_missing_and_a_positive_one_is_the_weights():
    rising = ["[2025-06-12 01:42:31] Load weight begin. avail mem=36.31 GB",
              "[2025-06-12 01:42:35] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.20 "
              "GB, mem usage=-27.89 GB.",
              "[2025-06-12 01:42:35] KV Cache is allocated. #tokens: 20480, K size: 0.55 GB, V size: 0.55 GB"]
    assert read(rising).missing() == []
    held = rising[:1] + ["[2025-06-12 01:42:35] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail "
                         "mem=22.20 GB, mem usage=14.11 GB."] + rising[2:]
    log = read(held)
    assert (log.terms()[P.WEIGHTS], log.given_back, log.missing()) == (gib(14.11), [], [])
    # zero is a figure (a distributed init that took nothing), not memory given back
    assert read(["[2025-06-12 01:42:31] Init torch distributed ends. mem usage=0.00 GB"]).terms()[P.NON_TORCH] == 0


def test_memory_given_back_is_kept_for_at_most_a_few_lines_per_term():
    # a log of many ranks (or a hostile one) keeps MAX_RECOVERY_NOTES entries a term, and the weights' entry still
    # comes through after as many distributed-init ones
    lines = [f"[2025-07-11 21:33:39 TP{i}] Init torch distributed ends. mem usage=-0.01 GB" for i in range(20)]
    lines.append("[2025-07-11 21:33:44 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail "
                 "mem=48.63 GB, mem usage=-2.84 GB.")
    log = read(lines)
    assert [g[2] for g in log.given_back] == [P.NON_TORCH] * MAX_RECOVERY_NOTES + [P.WEIGHTS]
    assert P.WEIGHTS not in log.ranks["TP0"] and P.NON_TORCH not in log.ranks["TP19"]
