"""The newest engines' log formats (vLLM 0.17-0.34, SGLang 0.5.x), each with its neighbours, and the parser's
handling of logs as they come: carriage returns, nested and multi-coordinate rank prefixes, an engine started
more than once in one log, two engines in one file."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import logparse as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify import sift
from gpustack_guard.core.verify.logparse import parse_log


def gib(x: float) -> int:
    return int(round(x * 2**30))


def terms(lines: list[str], engine: str | None) -> dict:
    log, _ = parse_log([line + "\n" for line in lines], engine)
    return log.terms()


# -- vLLM -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,expected", [
    # 0.30 on: one line, the device type first (kv_cache_utils.py@v0.34.0)
    ("(EngineCore pid=2) INFO 12-05 10:11:40 [kv_cache_utils.py:1169] GPU KV cache size: 1,234,560 tokens, Maximum "
     "concurrency for 32,768 tokens per request: 37.68x",
     {P.KV_TOKENS: 1_234_560, P.MAX_MODEL_LEN: 32_768, P.MAX_CONCURRENCY: 37.68}),
    ("INFO 12-05 10:11:40 [kv_cache_utils.py:1169] XPU KV cache size: 2,048 tokens, Maximum concurrency for 1,024 "
     "tokens per request: 2.00x", {P.KV_TOKENS: 2_048, P.MAX_MODEL_LEN: 1_024, P.MAX_CONCURRENCY: 2.0}),
    # before 0.30: two lines, the first alone
    ("INFO 02-19 23:56:55 [kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens", {P.KV_TOKENS: 2_042_016}),
    # a pool extended to host memory counts tokens off the GPU: neither figure is the GPU's
    ("INFO 12-05 10:11:40 [kv_cache_utils.py:1169] GPU + host KV cache size: 9,000,000 tokens, Maximum concurrency "
     "for 32,768 tokens per request: 274.66x", {}),
    ("INFO llama_kv_cache: CPU KV cache size: 12 tokens", {}),  # not a vLLM device type
])
def test_vllm_kv_capacity_lines_of_each_release(line, expected):
    assert terms([line], "vllm") == expected


def test_the_plain_version_line_and_the_banner_name_version_and_model():
    log, _ = parse_log(["(APIServer pid=1) INFO 12-05 10:11:12 [startup.py:40] vLLM server version 0.34.0, serving "
                        "model Qwen/Qwen3-8B\n"], "vllm")
    assert (log.engine_version, log.model) == ("0.34.0", "Qwen/Qwen3-8B")
    # the banner as the colour formatter prints it (ANSI codes around each part), its model line under the version
    banner = ["(APIServer pid=1) INFO 12-05 10:11:12 [startup.py:40] \n",
              " \x1b[93m\u2584\u2584\x1b[0m \x1b[94m\u2584\u2588\x1b[0m \x1b[1m\u2588     \u2588     \u2588 \u2580\u2584\u2580 "
              "\u2588\x1b[0m  version \x1b[1m0.34.0\x1b[0m\n",
              "  \x1b[93m\u2588\x1b[0m\x1b[94m\u2584\u2588\u2580\x1b[0m \x1b[1m\u2588     \u2588     \u2588     "
              "\u2588\x1b[0m  model   \x1b[1mopenai/gpt-oss-20b\x1b[0m\n"]
    log, _ = parse_log(banner, "vllm")
    assert (log.engine_version, log.model) == ("0.34.0", "openai/gpt-oss-20b")
    for near in ("vLLM server version unknown, serving model x\n",  # no version number
                 "INFO [startup.py:40] model   openai/gpt-oss-20b\n"):  # no banner block before it
        log, _ = parse_log([near], "vllm")
        assert (log.engine_version, log.model) == (None, None), near


def test_a_free_memory_refusal_with_weights_held_elsewhere_is_the_start_up_failure():
    log, _ = parse_log(["ValueError: Free memory on device cuda:0 (20.5/79.19 GiB) on startup is less than the "
                        "engine's budget after excluding external process's weights (0.9, 56.27 GiB). Decrease GPU "
                        "memory utilization or reduce GPU memory used by other processes.\n"], "vllm")
    assert log.failure_kind == "free-memory-below-requested"
    assert log.terms() == {P.FREE_BEFORE_LOAD: gib(20.5), P.GPU_MEMORY: gib(79.19), P.UTILIZATION: 0.9}


@pytest.mark.parametrize("prefix,rank", [
    ("(Worker_PP0_PCP0_TP1 pid=11)", "PP0 PCP0 TP1"),  # multiproc_executor.py@v0.34.0's coordinates
    ("(Worker_PP0_PCP1_TP1 pid=12)", "PP0 PCP1 TP1"),  # its neighbour in the other context-parallel group
    ("(Worker_DP1_TP0_DCP0_EP1 pid=13)", "DP1 TP0 DCP0 EP1"),
    ("(Worker pid=14)", "main"),  # one worker: no coordinates
    # Ray nests the worker's prefix in the engine core's: the innermost names the worker
    ("(EngineCore_DP0 pid=1) (RayWorkerWrapper pid=374, ip=10.254.6.219)", "pid 374"),
    ("(EngineCore_DP0 pid=1) (VllmWorker rank=2 pid=5)", "rank 2"),
    ("(EngineCore_DP1 pid=1) (Worker_DP1_TP3 pid=6)", "DP1 TP3"),
    ("(APIServer pid=1) (EngineCore_DP0 pid=2) (RayWorkerWrapper pid=7, ip=10.0.0.2)", "pid 7"),
    ("(EngineCore_DP0 pid=1) INFO (RayWorkerWrapper pid=8)", "main"),  # after the level: text, not a prefix
    ("(EngineCore_DP0 pid=1)", "main"),
])
def test_each_vllm_worker_prefix_is_its_own_rank(prefix, rank):
    log, _ = parse_log([f"{prefix} INFO 12-05 10:11:40 [gpu_worker.py:796] Available KV cache memory: 1.5 GiB\n"],
                       "vllm")
    assert log.ranks == {rank: {P.KV_CACHE: gib(1.5)}}


# -- SGLang -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,expected", [
    # an MLA pool: one buffer for K and V (memory_pool.py@v0.4.10 to @v0.5.23), with the dtype from 0.5.15
    ("[2025-10-07 23:17:19 DP0 TP0] KV Cache is allocated. #tokens: 975424, KV size: 43.67 GB",
     {P.KV_TOKENS: 975_424, P.KV_CACHE: gib(43.67)}),
    ("[2026-07-20 08:00:14] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 1000, KV size: 2.00 GB",
     {P.KV_TOKENS: 1_000, P.KV_CACHE: gib(2.0)}),
    ("[2026-07-20 08:00:14] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000, K size: 1.00 GB, V size: "
     "1.00 GB", {P.KV_TOKENS: 1_000, P.KV_CACHE: gib(2.0)}),
    # a labelled pool (an index cache) and the address space of a pool sized after capture are not the KV pool
    ("[2026-07-20 08:00:14] MiniMax MSA-v1 main NVFP4 KV Cache is allocated. dtype: torch.uint8, #tokens: 1000, "
     "KV size: 0.50 GB", {}),
    ("[2026-07-20 08:00:14] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 9000, KV size: 90.00 GB", {}),
    # and the SWA pool's own line in that case (swa_memory_pool.py@v0.5.18 .. @v0.5.23: 'VA upper bound' for 'mem
    # usage'): the address space, not the pool
    ("[2026-07-20 08:00:14] SWAKVPool VA upper bound: 90.00 GB, swa size: 720000, full size: 900000", {}),
    # the pool sized after graph capture (kv_pool_runtime.py@v0.5.18): the draft's pool is not the target's
    ("[2026-07-20 08:01:10] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 1245184, "
     "KV size: 57.01 GB, avail mem=4.12 GB",
     {P.KV_TOKENS: 1_245_184, P.KV_CACHE: gib(57.01), P.FREE_AFTER_POOL: gib(4.12)}),
    ("[2026-07-20 08:01:10] Post-capture KV sizing: draft KV cache allocated. dtype: torch.bfloat16, #tokens: 5, "
     "KV size: 1.00 GB", {}),
])
def test_sglang_kv_pool_lines_of_each_release(line, expected):
    assert terms([line], "sglang") == expected


@pytest.mark.parametrize("line,graphs", [
    ("[2025-11-30 12:50:15] Capture cuda graph end. Time elapsed: 5.37 s. mem usage=1.44 GB. avail mem=38.05 GB.",
     1.44),  # 0.3 to 0.5.12
    ("[2026-03-01 10:00:00] Capture target decode cuda graph end. elapsed=6.20 s, mem usage=0.45 GB, avail mem=12.15 "
     "GB.", 0.45),  # 0.5.15
    ("[2026-07-20 08:00:20] Capture target decode CUDA graph end. elapsed=6.20 s, mem usage=0.46 GB, avail mem=12.15 "
     "GB.", 0.46),  # 0.5.18 to 0.5.21 (the batch sizes in the begin line: cuda_graph_setup.py@v0.5.18 .. @v0.5.21)
    ("[2026-07-20 08:00:20] Capture target decode CUDA graph end. bs=[1, 2, 4], elapsed=6.20 s, mem usage=0.46 GB, "
     "avail mem=12.15 GB.", 0.46),  # 0.5.22 on (cuda_graph_setup.py@v0.5.22, @v0.5.23)
    ("[2026-07-20 08:00:20] Capture target verify CUDA graph end. bs=[1, 2], elapsed=1.00 s, mem usage=0.30 GB, "
     "avail mem=12.15 GB.", 0.30),  # speculative decoding: the target's verify graphs
    # other graph pools: the draft model's, prefill and piecewise graphs
    ("[2026-07-20 08:00:20] Capture draft decode CUDA graph end. bs=[1, 2], elapsed=1.00 s, mem usage=0.20 GB, "
     "avail mem=12.15 GB.", None),
    ("[2026-07-20 08:00:20] Capture target prefill CUDA graph end. elapsed=1.00 s, mem usage=0.20 GB, avail mem="
     "12.15 GB.", None),
    ("[2026-03-01 10:00:00] Capture piecewise CUDA graph end. Time elapsed: 9.00 s. mem usage=0.80 GB. avail mem="
     "12.15 GB.", None),
])
def test_sglang_graph_lines_of_each_release(line, graphs):
    assert terms([line], "sglang").get(P.CUDA_GRAPHS) == (gib(graphs) if graphs is not None else None)


@pytest.mark.parametrize("line", [
    "[2025-10-16 09:06:09 TP7] Init torch distributed ends. mem usage=1.77 GB",  # to 0.5.8
    "[2026-02-10 08:00:01 TP7] Init torch distributed ends. elapsed=0.42 s, mem usage=1.77 GB",  # 0.5.9 to 0.5.20
    "[2026-07-20 08:00:01 TP7] Memory baseline taken. mem usage=1.77 GB",  # 0.5.21 on (distributed/bootstrap.py)
])
def test_sglang_distributed_init_memory_of_each_release(line):
    log, _ = parse_log([line + "\n"], "sglang")
    assert log.ranks == {"TP7": {P.NON_TORCH: gib(1.77)}}


@pytest.mark.parametrize("stamp,rank", [
    ("2026-07-20 08:00:01", "TP3"),
    ("2026-07-20 08:00:01.204", "TP3"),  # SGLANG_LOG_MS
    ("2026-07-20 08:00:01.204 DP1 PP0 ATTN_CP1 MOE_DP0", "DP1 PP0 ATTN_CP1 MOE_DP0 TP3"),  # scheduler.py@v0.5.23
])
def test_sglang_rank_prefixes_with_milliseconds_and_every_coordinate(stamp, rank):
    line = f"[{stamp} TP3] Load weight end. type=Qwen3ForCausalLM, avail mem=70.71 GB, mem usage=7.79 GB.\n"
    log, _ = parse_log([line], "sglang")
    assert log.ranks == {rank: {P.WEIGHTS: gib(7.79), P.FREE_AFTER_LOAD: gib(70.71)}}


@pytest.mark.parametrize("line,fraction", [
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
     "self.server_args.mem_fraction_static=0.2", 0.2),  # to 0.5.11
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
     "mem_fraction_static=0.35", 0.35),  # 0.5.12 on
])
def test_the_fraction_in_sglangs_refusal_of_each_release(line, fraction):
    log, _ = parse_log([line + "\n"], "sglang")
    assert log.args == {"mem_fraction_static": fraction} and log.failure_kind == "no-kv-memory"


# -- logs as they come ------------------------------------------------------------------------------------------

def test_a_figure_after_a_carriage_return_is_read_and_a_long_progress_bar_is_no_cap():
    bar = "Loading safetensors checkpoint shards: " + "#" * (sift.MAX_TERM_LINE_CHARS + 10)
    lines = [bar + "\r(EngineCore pid=2) INFO [gpu_model_runner.py:442] Model loading took 14.99 GiB memory and "
             "3.6 seconds\r\n",
             "(EngineCore pid=2) INFO [kv_cache_utils.py:1169] GPU KV cache size: 158,656 tokens\r\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == {P.WEIGHTS: gib(14.99), P.KV_TOKENS: 158_656} and log.lines == 2


START = "(APIServer pid={pid}) INFO 12-05 10:11:12 [startup.py:40] vLLM server version 0.34.0, serving model {model}"
WORKER = "(Worker_TP{rank} pid={pid}) INFO 12-05 10:11:40 [gpu_worker.py:796] Available KV cache memory: {kv} GiB"
REFUSED = "(EngineCore pid={pid}) ERROR 12-05 10:11:41 [core.py:900] ValueError: No available memory for the cache " \
          "blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
CAPACITY = "(EngineCore pid={pid}) INFO 12-05 10:11:42 [kv_cache_utils.py:1169] GPU KV cache size: {tokens} tokens"


def test_a_restarted_engine_is_read_from_its_last_start_up():
    lines = [START.format(pid=1, model="org/first"), WORKER.format(rank=0, pid=11, kv="0.00"),
             WORKER.format(rank=1, pid=12, kv="0.00"), REFUSED.format(pid=10),
             START.format(pid=2, model="org/second"), WORKER.format(rank=0, pid=21, kv="5.00"),
             WORKER.format(rank=1, pid=22, kv="4.50"), CAPACITY.format(pid=20, tokens="40,000")]
    log, _ = parse_log([line + "\n" for line in lines], None)
    assert (log.model, log.failure, log.started) == ("org/second", None, True)
    assert log.ranks == {"TP0": {P.KV_CACHE: gib(5.0)}, "TP1": {P.KV_CACHE: gib(4.5)}}
    assert log.binding_rank() == "TP1" and log.terms()[P.KV_TOKENS] == 40_000
    assert log.notes == ["the log holds 2 start-ups of vllm: the last one was read"]


def test_a_start_up_line_before_any_figure_begins_no_new_start_up():
    # the version line printed twice before the first figure (two API servers, a wrapper that echoes it)
    lines = [START.format(pid=1, model="org/m"), START.format(pid=2, model="org/m"),
             WORKER.format(rank=0, pid=11, kv="5.00"), CAPACITY.format(pid=10, tokens="40,000")]
    log, _ = parse_log([line + "\n" for line in lines], "vllm")
    assert log.notes == [] and log.ranks == {"TP0": {P.KV_CACHE: gib(5.0)}}


@pytest.mark.parametrize("engine,first,again", [
    ("sglang", "[2026-07-20 08:00:00] server_args=ServerArgs(model_path='org/a', tp_size=1)",
     "[2026-07-20 09:00:00] server_args=ServerArgs(model_path='org/b', tp_size=1)"),
    ("llama.cpp", "build: 6945 (cc98f8d34) with cc for x86_64", "build: 6946 (cc98f8d35) with cc for x86_64"),
])
def test_every_engine_restarting_in_one_log_is_read_from_its_last_start_up(engine, first, again):
    figure = {"sglang": "[2026-07-20 08:00:14] KV Cache is allocated. #tokens: {n}, KV size: 1.00 GB",
              "llama.cpp": "llama_kv_cache:      CUDA0 KV buffer size =  {n}.00 MiB"}[engine]
    log, _ = parse_log([first + "\n", figure.format(n=100) + "\n", again + "\n", figure.format(n=200) + "\n"], None)
    assert log.engine == engine
    assert log.notes == [f"the log holds 2 start-ups of {engine}: the last one was read"]
    if engine == "sglang":
        assert log.model == "org/b" and log.terms()[P.KV_TOKENS] == 200
    else:
        assert log.engine_version == "6946" and log.terms()[P.KV_CACHE] == 200 * 2**20


def test_two_engines_in_one_file_read_the_one_with_most_lines_and_say_so():
    vllm = [START.format(pid=1, model="org/m"), WORKER.format(rank=0, pid=11, kv="5.00"),
            CAPACITY.format(pid=10, tokens="40,000"), "Model loading took 1.00 GiB and 2.0 seconds"]
    sglang = ["[2026-07-20 08:00:00] server_args=ServerArgs(model_path='org/b')",
              "[2026-07-20 08:00:13] Load weight end. type=X, avail mem=70.71 GB, mem usage=7.79 GB.",
              "[2026-07-20 08:00:14] KV Cache is allocated. #tokens: 1000, KV size: 1.00 GB"]
    log, _ = parse_log([line + "\n" for line in vllm + sglang], None)
    assert log.engine == "vllm"
    assert log.notes == ["the log also holds lines of sglang (3 lines): vllm has the most and was read; give "
                         "--backend to read another"]
    log, _ = parse_log([line + "\n" for line in vllm + sglang[:L.OTHER_ENGINE_HITS - 1]], None)
    assert log.notes == []  # a stray line or two of another engine's wording is no second engine
    log, _ = parse_log([line + "\n" for line in vllm + sglang], "vllm")
    assert log.notes == []  # the engine was given


def test_the_newest_vllm_lines_say_the_v1_engine_ran():
    from gpustack_guard.core.verify.compare import engine_generation

    refusal = ("ValueError: Free memory on device cuda:0 (20.5/79.19 GiB) on startup is less than the engine's budget "
               "after excluding external process's weights (0.9, 56.27 GiB).\n")
    log, _ = parse_log([refusal], "vllm")
    assert engine_generation(log) == "v1"
    log, _ = parse_log(["XPU KV cache size: 2,048 tokens, Maximum concurrency for 1,024 tokens per request: 2.00x\n"],
                       "vllm")
    assert engine_generation(log) == "v1"
    log, _ = parse_log(["vLLM server version 0.34.0, serving model org/m\n"], "vllm")
    assert engine_generation(log) is None  # the version line alone says nothing of the engine generation
