"""The start-up log parser: the pattern table, every public fixture parsed into its exact terms, ranks, failures,
secrets and the parser's own limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpustack_guard.core.secrets import MASK
from gpustack_guard.core.verify import logparse as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify import sift
from gpustack_guard.core.verify.logparse import parse_log

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def gib(x: float) -> int:
    return int(round(x * 2**30))


def mib(x: float) -> int:
    return int(round(x * 2**20))


def parse(name: str, engine: str | None = "from-folder"):
    path = FIXTURES / name
    wanted = path.parent.name if engine == "from-folder" else engine
    log, _ = parse_log(path.read_text(encoding="utf-8").splitlines(True), wanted)
    return log


# (fixture, engine version, started, failure kind, binding rank, essential lines missing, observed terms)
CASES = [
    ("llama.cpp/command-r-two-gpus.log", None, True, None, 'CUDA1', 0,
     {P.WEIGHTS: mib(13989.53), P.KV_CACHE: gib(3.5), P.COMPUTE_BUFFER: mib(672.01), P.LAYERS_OFFLOADED: 41, P.LAYERS_TOTAL: 41, P.KV_TOKENS: 4096,
      P.PIPELINE_COPIES: 4}),
    ("llama.cpp/deepseek-8-gpus-q4-kv.log", None, True, None, 'CUDA2', 0,
     {P.WEIGHTS: mib(25338.47), P.KV_CACHE: gib(5.6875), P.SEQUENCES: 8, P.KV_TOKENS: 16384}),
    # the CI build's own run (tests/integration/test_real_llamacpp.py): CPU_Mapped + CPU_REPACK are one device
    ("llama.cpp/llama-cpp-python-0.3.36-0c1e57098-tiny-q4_0.log", None, True, None, 'CPU', 0,
     {P.WEIGHTS: mib(0.97) + mib(0.90), P.KV_CACHE: mib(2.25), P.COMPUTE_BUFFER: mib(7.51), P.SEQUENCES: 1,
      P.KV_TOKENS: 3072, P.PIPELINE_COPIES: 1}),
    ("llama.cpp/devstral-rtx4070s-server.log", '0', False, None, 'CUDA0', 2,
     {P.FREE_BEFORE_LOAD: mib(11053.0)}),
    ("llama.cpp/dsv4-iswa-caches.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(182.75)}),
    ("llama.cpp/glm4-a6000-ik.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(17284.05), P.KV_CACHE: mib(1952.0), P.LAYERS_OFFLOADED: 62, P.LAYERS_TOTAL: 62, P.KV_TOKENS: 8192}),
    # a refused compute reserve is the device's compute buffer (the request it could not hold): CUDA0 binds on both,
    # here with its own KV line; on the 15 GPUs CUDA0's KV line is cut from the excerpt (it binds by its 8,900 MiB
    # request, where CUDA14's 180 MiB of KV bound before), so the KV is the first listed device's, CUDA11's
    ("llama.cpp/ik-11-gpus-kv-compute-oom.log", None, False, 'out-of-memory', 'CUDA0', 0,
     {P.KV_CACHE: mib(379.23), P.COMPUTE_BUFFER: 292_926_534_144, P.PIPELINE_COPIES: 4}),
    ("llama.cpp/ik-mla-15-gpus-compute-oom.log", None, False, 'out-of-memory', 'CUDA0', 0,
     {P.KV_CACHE: mib(144.0), P.COMPUTE_BUFFER: 9_332_334_592, P.PIPELINE_COPIES: 4}),
    # recurrent and hybrid models: the RS buffer is its own term beside the KV buffer of the attention layers
    ("llama.cpp/qwen35-0.8b-cpu-rs-4-slots.log", None, True, None, 'CPU', 1,
     {P.KV_CACHE: mib(3072.0), P.RECURRENT_STATE: mib(77.06), P.COMPUTE_BUFFER: mib(786.02), P.SEQUENCES: 4,
      P.KV_TOKENS: 262144}),
    ("llama.cpp/qwen35-4b-b8467-rs-one-slot.log", None, False, None, 'CUDA0', 2,
     {P.RECURRENT_STATE: mib(50.25)}),
    ("llama.cpp/lfm2-1.2b-cpu-rs-one-slot.log", None, True, None, 'CPU', 1,
     {P.KV_CACHE: mib(48.0), P.RECURRENT_STATE: mib(0.16), P.COMPUTE_BUFFER: mib(132.0), P.SEQUENCES: 1,
      P.KV_TOKENS: 4096}),
    ("llama.cpp/load-tensors-oom.log", None, False, 'out-of-memory', None, 0,
     {}),
    # the compute buffer with four input copies is refused on the device with the larger KV buffer: CUDA0 binds as
    # before, now with the refused 13,327,728,640 B as its compute buffer (held against gsg's in test_public_vectors)
    ("llama.cpp/pp-compute-oom-two-gpus.log", None, False, 'out-of-memory', 'CUDA0', 0,
     {P.KV_CACHE: mib(12327.0), P.COMPUTE_BUFFER: 13_327_728_640, P.PIPELINE_COPIES: 4}),
    ("llama.cpp/phi35-build-exits.log", '6945', False, None, None, 2,
     {}),
    # llama.cpp#11200: `version: N` is llama-cli's, not the server's `build:` line; two devices, q8_0 cache; the cells
    # from llama_kv_cache_init's kv_size line, the excerpt keeping no n_ctx line (round 30)
    ("llama.cpp/qwen25-coder-32b-q8-kv-two-3090ti.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(2788.0), P.COMPUTE_BUFFER: mib(233.0), P.PIPELINE_COPIES: 4, P.KV_TOKENS: 32768}),
    # round 30's ROCm logs: five Radeon VII whose excerpt starts at the cache (llama-cli's `version: 1` is a local
    # build's, no build number), one RX 7900 XTX with a q8_0 cache and a draft model after it, and four MI100 under
    # llama-cpp-python before pipeline parallelism (its host input buffer and "graph splits (measure)")
    ("llama.cpp/qwen25-32b-q4km-5x-radeon-vii-rocm-32768-no-fa.log", None, True, None, 'ROCm0', 1,
     {P.KV_CACHE: mib(1664.0), P.COMPUTE_BUFFER: mib(2664.0), P.KV_TOKENS: 32768}),
    ("llama.cpp/qwen25-coder-32b-q8kv-rx7900xtx-rocm-32768.log", None, True, None, 'ROCm0', 1,
     {P.KV_CACHE: mib(4352.0), P.COMPUTE_BUFFER: mib(307.0), P.KV_TOKENS: 32768}),
    ("llama.cpp/mistral-7b-v02-q5km-4x-mi100-rocm-llama-cpp-python-4096.log", None, True, None, 'ROCm0', 0,
     {P.WEIGHTS: mib(1327.12), P.KV_CACHE: mib(144.0), P.COMPUTE_BUFFER: mib(316.80), P.LAYERS_OFFLOADED: 33,
      P.LAYERS_TOTAL: 33, P.KV_TOKENS: 4096}),
    # llama.cpp PR #4957: partial offload, the host layers' KV in CUDA_Host (pinned host memory, not the GPU)
    ("llama.cpp/mixtral-8x7b-instruct-q8-partial-15-layers.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(30.0), P.COMPUTE_BUFFER: mib(108.03)}),
    ("llama.cpp/mixtral-8x7b-q8-partial-10-layers.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(14705.94), P.KV_CACHE: mib(20.0), P.COMPUTE_BUFFER: mib(108.03), P.LAYERS_OFFLOADED: 10,
      P.LAYERS_TOTAL: 33, P.KV_TOKENS: 512}),
    # LLamaSharp's "[llama Info]: " prefix in front of llama.cpp's own lines
    ("llama.cpp/qwen25-3b-rtx4080s-llamasharp.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(144.0), P.COMPUTE_BUFFER: mib(300.75)}),
    ("llama.cpp/qwen25-7b-28-layers-2048-cells.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(112.0)}),
    # llama.cpp#10560 and PR #16962: excerpts that stop before the buffers; build 6934 prints each device's PCI bus id
    ("llama.cpp/mistral-large-2411-q8-4090-cut.log", '4202', False, None, None, 2,
     {}),
    # ik_llama.cpp#514: mainline b5622 over a 4090 (9,862 MiB free) and a 5090 (31,518): the experts on the CPU, the
    # 5090 holding 36 of the 48 layers' cells and the output layer
    ("llama.cpp/qwen3-30b-a3b-q4km-4090-5090-b5622-experts-on-cpu-foreign.log", '5622', True, None, 'CUDA1', 0,
     {P.FREE_BEFORE_LOAD: mib(31518), P.WEIGHTS: mib(648.66), P.KV_CACHE: mib(1152), P.COMPUTE_BUFFER: mib(1080),
      P.LAYERS_OFFLOADED: 49, P.LAYERS_TOTAL: 49, P.SEQUENCES: 1, P.KV_TOKENS: 16384}),
    ("llama.cpp/qwen3-vl-32b-4060ti-3060-cut.log", '6934', False, None, 'CUDA0', 2,
     {P.FREE_BEFORE_LOAD: mib(15001.0)}),
    # llama.cpp PR #4620: b1702's JSON log, its build in the server's "build info" record, ggml_init_cublas's devices
    ("llama.cpp/llama2-70b-q6k-v100s-p40-b1702-server-json-cut.log", '1702', False, None, None, 2,
     {}),
    # ollama#8447: one of 62 layers on CUDA0; the other 60 layers' KV in host memory is no GPU's
    ("llama.cpp/ollama-deepseek-v3-q4km-1-of-62-layers-kv-host.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(7106.67), P.KV_CACHE: mib(160.0), P.LAYERS_OFFLOADED: 1, P.LAYERS_TOTAL: 62, P.KV_TOKENS: 2048}),
    # ollama's runners (ollama#6926, #8922): llama.cpp's own lines between ollama's; three devices, the output on the last
    ("llama.cpp/ollama-qwen15-7b-a10-8192-cells.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(3963.38), P.KV_CACHE: mib(4096.0), P.COMPUTE_BUFFER: mib(560.0), P.KV_TOKENS: 8192}),
    ("llama.cpp/ollama-llama3-70b-q4km-three-gpus.log", None, True, None, 'CUDA2', 0,
     {P.WEIGHTS: mib(13724.61), P.KV_CACHE: mib(832.0), P.COMPUTE_BUFFER: mib(1216.02), P.KV_TOKENS: 8192,
      P.PIPELINE_COPIES: 4}),
    # uv-genai/llm-setonix: ollama's ROCm runner over 8 MI250X GCDs (ROCm0..7 plus a CPU buffer), pipeline copies
    ("llama.cpp/ollama-deepseek-r1-671b-q4km-8x-mi250x.log", None, True, None, 'ROCm1', 0,
     {P.WEIGHTS: mib(52215.30), P.KV_CACHE: mib(5120.0), P.COMPUTE_BUFFER: mib(2322.01), P.LAYERS_OFFLOADED: 62,
      P.LAYERS_TOTAL: 62, P.SEQUENCES: 4, P.KV_TOKENS: 8192, P.PIPELINE_COPIES: 4}),
    # excerpts that stop after the weights (ramalama#1354, llama.cpp#7217): the first device's model buffer binds
    ("llama.cpp/ramalama-llama3-70b-q4km-two-3090-cut.log", None, False, None, 'CUDA0', 1,
     {P.WEIGHTS: mib(20038.81), P.LAYERS_OFFLOADED: 81, P.LAYERS_TOTAL: 81, P.SEQUENCES: 1, P.KV_TOKENS: 2048}),
    ("llama.cpp/yi-34b-iq4xs-3090-3060-weights.log", None, False, None, 'CUDA0', 1,
     {P.WEIGHTS: mib(8796.98), P.LAYERS_OFFLOADED: 61, P.LAYERS_TOTAL: 61}),
    # node-llama-cpp#560: the bundled library's sched_reserve lines, no version line; llamafile#372: stops at n_ubatch
    ("llama.cpp/qwen3-1.7b-jetson-orin-node-llama-cpp.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(448.0), P.COMPUTE_BUFFER: mib(300.75), P.PIPELINE_COPIES: 1}),
    ("llama.cpp/tinyllama-f32-gtx1050ti-llamafile.log", None, False, None, 'CUDA0', 1,
     {P.WEIGHTS: mib(3946.35), P.LAYERS_OFFLOADED: 23, P.LAYERS_TOTAL: 23, P.KV_TOKENS: 512}),
    # issue 32: what ends a llama.cpp start-up. ollama#9515: the KV buffers, then an assertion and ollama's runner
    # lines (not memory); llama.cpp PR #26297: the compute reserve fails, is retried with one input copy and goes on
    ("llama.cpp/ollama-assert-after-kv-buffers.log", None, False, 'engine-error', 'CUDA0', 0,
     {P.KV_CACHE: mib(1600), P.SEQUENCES: 4, P.KV_TOKENS: 8192}),
    # CUDA1's refused reserve had four input copies; the retry reserves one, so the refused size is no figure of it
    ("llama.cpp/retry-without-pipeline-minimax-m3-three-gpus.log", None, True, None, None, 2,
     {P.PIPELINE_COPIES: 1, P.SEQUENCES: 1}),
    ("llama.cpp/trilm-3.9b-rtx4080.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(7317.71), P.KV_CACHE: mib(180.0), P.COMPUTE_BUFFER: mib(105.0), P.LAYERS_OFFLOADED: 31, P.LAYERS_TOTAL: 31, P.KV_TOKENS: 512}),
    ("sglang/b200-kv-and-graphs.log", None, True, None, 'main', 1,
     {P.KV_TOKENS: 2243474, P.KV_CACHE: gib(119.82), P.FREE_AFTER_POOL: gib(40.03), P.CUDA_GRAPHS: gib(1.44)}),
    ("sglang/dsv4-pro-h200-no-kv.log", None, False, 'no-kv-memory', 'main', 0,
     {P.FREE_AFTER_LOAD: gib(12.25), P.WEIGHTS: gib(125.65)}),
    # the scheduler's traceback after the load: a crash that names no memory (it was missing a line before)
    ("sglang/gpt-oss-20b-load-weight.log", None, False, 'engine-error', 'main', 0,
     {P.FREE_AFTER_LOAD: gib(163.13), P.WEIGHTS: gib(14.53)}),
    # 0.4.1: the pool's K and V sizes without a token count (the end line carries it); the weights are the load lines' free
    # memory before less after (0.4.4 prints that difference as "mem usage")
    # sglang's clean-startup-log skill: main of 2026-04 and 2026-05 (0.5.10+ lines: "Load weight end. elapsed=", no dtype);
    # the piecewise (prefill) graph line is another pool: its own term, not CUDA_GRAPHS (benchmarks/vectors/MISSES.md)
    ("sglang/qwen3-8b-b200-main-2026-04-trtllm-mha.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.09), P.FREE_BEFORE_LOAD: gib(177.57), P.WEIGHTS: gib(15.28), P.FREE_AFTER_LOAD: gib(162.30),
      P.KV_TOKENS: 992896, P.KV_CACHE: 2 * gib(68.18), P.FREE_AFTER_POOL: gib(25.26), P.CUDA_GRAPHS: gib(0.60),
      P.PREFILL_GRAPHS: gib(2.32)}),
    ("sglang/qwen3-8b-sm100-275gb-main-2026-05.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.10), P.FREE_BEFORE_LOAD: gib(275.75), P.WEIGHTS: gib(15.28), P.FREE_AFTER_LOAD: gib(260.48),
      P.KV_TOKENS: 1707904, P.KV_CACHE: 2 * gib(117.28), P.FREE_AFTER_POOL: gib(25.28), P.CUDA_GRAPHS: gib(0.60),
      P.PREFILL_GRAPHS: gib(2.32),
      P.MAX_RUNNING: 4096, P.MAX_MODEL_LEN: 40960}),
    # farbodtavakkoli/OTel's reranker README: four lines of a 0.5.18 run quoted without their prefix
    ("sglang/qwen3-reranker-06b-h100-0.5.18-f030.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(1.18), P.FREE_AFTER_LOAD: gib(77.29), P.KV_TOKENS: 208651, P.MAX_RUNNING: 2608,
      P.MAX_MODEL_LEN: 40960}),
    # the same repository's LLM README: a 0.5.18 hybrid-GDN run (mamba state beside the pool, decode graphs after)
    ("sglang/qwen38-27b-fp8-h100-0.5.18-gdn-f085.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(28.47), P.FREE_AFTER_LOAD: gib(50.01), P.MAMBA_STATE: gib(0.34) + gib(17.58), P.KV_TOKENS: 330323,
      P.KV_CACHE: 2 * gib(10.08), P.CUDA_GRAPHS: gib(0.10)}),
    # and its 0.5.17 ROCm run: time-only prefixes, the pool sized before the graph capture fails (a shimmed kernel)
    ("sglang/qwen3-06b-mi355x-0.5.17-pip-f060-graph-crash.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.15), P.FREE_BEFORE_LOAD: gib(287.26), P.WEIGHTS: gib(1.21), P.FREE_AFTER_LOAD: gib(286.05),
      P.KV_TOKENS: 1360288, P.KV_CACHE: 2 * gib(72.65), P.FREE_AFTER_POOL: gib(140.05)}),
    ("sglang/llama31-8b-docs-quickstart.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(63.72), P.WEIGHTS: gib(78.81) - gib(63.72), P.KV_CACHE: 2 * gib(27.13), P.FREE_AFTER_POOL: gib(8.34), P.KV_TOKENS: 444500,
      P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131072}),
    ("sglang/llama31-8b-fa3-hopper.log", None, True, None, 'TP0', 0,
     {P.FREE_AFTER_LOAD: gib(63.48), P.WEIGHTS: gib(15.11), P.KV_TOKENS: 442750, P.KV_CACHE: 2 * gib(27.02), P.FREE_AFTER_POOL: gib(8.26)}),
    ("sglang/llama31-8b-tp1-load-begin.log", None, False, None, 'main', 2,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(46.81)}),
    ("sglang/max-total-num-tokens.log", None, True, None, None, 1,
     {P.KV_TOKENS: 2086558, P.MAX_RUNNING: 33, P.MAX_MODEL_LEN: 256000}),
    # 0.4.0's end line without mem usage and no begin line: the weights are not known
    ("sglang/mistral-7b-v01-24gb-quickstart.log", None, True, None, 'TP0', 1,
     {P.FREE_AFTER_LOAD: gib(9.69), P.FREE_AFTER_POOL: gib(2.44), P.KV_TOKENS: 56524, P.MAX_RUNNING: 2049,
      P.MAX_MODEL_LEN: 32768}),
    # the LWS leader's eight ranks of a TP 16 run over two nodes: the scheduler line only
    ("sglang/deepseek-r1-2x8-h20-tp16-lws.log", None, True, None, None, 1,
     {P.KV_TOKENS: 712400, P.MAX_RUNNING: 50, P.MAX_MODEL_LEN: 163840}),
    # MLA's one "KV size" on ROCm; a TypeError in graph capture after the pool is a crash, no memory failure
    # SGLang's pools tie across ranks: the binding rank is the least free after the weights (TP2 and TP3 209.96),
    # then after the pool (TP3 45.23)
    # the same ROCm image on GLM-5 (DSA): an MLA pool prints one 'KV size' for K and V; the capture dies of a TypeError
    ("sglang/glm5-fp8-8x-mi355x-tp8-0.5.8.post1-dsa-graph-crash.log", None, False, 'engine-error', 'TP3', 0,
     {P.NON_TORCH: gib(3.83), P.FREE_BEFORE_LOAD: gib(283.48), P.WEIGHTS: gib(89.58), P.FREE_AFTER_LOAD: gib(193.90),
      P.KV_TOKENS: 3262823, P.KV_CACHE: gib(186.77), P.FREE_AFTER_POOL: gib(3.88)}),
    ("sglang/kimi-k25-int4-8x-mi355x-tp8-graph-crash.log", None, False, 'engine-error', 'TP3', 0,
     {P.NON_TORCH: gib(3.83), P.FREE_BEFORE_LOAD: gib(283.53), P.WEIGHTS: gib(73.58), P.FREE_AFTER_LOAD: gib(209.96),
      P.KV_TOKENS: 2454421, P.KV_CACHE: gib(160.63), P.FREE_AFTER_POOL: gib(45.23)}),
    # S3's GPU with the PR's patched budget: 1,669,816 tokens where main sized 2,227,073
    ("sglang/mi355x-qwen3-30b-a3b-aiter.log", None, True, None, 'main', 0,
     {P.FREE_AFTER_LOAD: gib(230.2), P.WEIGHTS: gib(56.98), P.KV_TOKENS: 1669816, P.KV_CACHE: 2 * gib(76.44), P.FREE_AFTER_POOL: gib(74.01)}),
    # a sliding-window pool: K and V differ (MiMo-V2's K and V head dims), #tokens is the window layers' count
    # the split line names the full layers' pool (375,360 tokens); the excerpt keeps one pool line per rank
    ("sglang/mimo-v2-flash-swa-tp4.log", None, True, None, 'TP2', 1,
     {P.KV_TOKENS: 375360, P.KV_CACHE: gib(8.38) + gib(5.59)}),
    # sglang PR #15464 (main of 2025-12-19): a rank's two unlabelled pool lines (the window layers', then the full
    # layers') before SWAKVPool's summary, whose total binds; equal pools (swa size = full size), no split line quoted
    ("sglang/mimo-v2-flash-b200-tp4-swa-two-pools.log", None, True, None, 'TP1', 1,
     {P.FREE_BEFORE_LOAD: gib(176.22), P.KV_TOKENS: 1496958, P.KV_CACHE: gib(77.63), P.FREE_AFTER_POOL: gib(22.56)}),
    # sglang#7691: --max-total-tokens above a profiled capacity below zero is the start-up's failure ("Not enough
    # memory" follows in the engine, past the excerpt); DP attention ranks keep both coordinates
    ("sglang/deepseek-r1-bf16-8x-mi300x-dp8-profiled-negative.log", None, False, 'no-kv-memory', 'DP0 TP0', 0,
     {P.WEIGHTS: gib(166.59), P.FREE_AFTER_LOAD: gib(21.73)}),
    # Qwen3.5-9B at TP 2 on two RTX 4090s: the GDN layers' Mamba pool beside the full layers' KV pool
    ("sglang/qwen35-9b-2x-rtx4090-tp2-gdn-f080.log", None, True, None, 'TP1', 0,
     {P.NON_TORCH: gib(0.19), P.FREE_BEFORE_LOAD: gib(22.93), P.WEIGHTS: gib(8.85), P.FREE_AFTER_LOAD: gib(14.08),
      P.MAMBA_STATE: gib(0.10) + gib(4.38), P.KV_TOKENS: 327310, P.KV_CACHE: 2 * gib(2.50),
      P.FREE_AFTER_POOL: gib(4.49), P.CUDA_GRAPHS: gib(0.26), P.MAX_RUNNING: 62, P.MAX_MODEL_LEN: 262144}),
    # a PD prefill node at TP 16 over two nodes, no graphs (--disable-cuda-graph): the scheduler line follows the pool
    ("sglang/deepseek-r1-2x8-h100-tp16-pd-prefill-0.5.8.post1.log", None, True, None, 'TP3', 0,
     {P.FREE_BEFORE_LOAD: gib(77.47), P.WEIGHTS: gib(40.62), P.FREE_AFTER_LOAD: gib(36.85), P.KV_TOKENS: 326217,
      P.KV_CACHE: gib(21.35), P.FREE_AFTER_POOL: gib(14.13), P.MAX_RUNNING: 2048, P.MAX_MODEL_LEN: 163840}),
    ("sglang/npu-tp16-kv-dtype.log", None, True, None, 'TP10', 1,
     {P.KV_TOKENS: 387968, P.KV_CACHE: gib(11.84), P.FREE_AFTER_POOL: gib(11.23)}),
    ("sglang/gemma3-4b-it-vlm-fraction-h200.log", None, True, None, 'TP0', 0,
     {P.FREE_AFTER_LOAD: gib(131.08), P.WEIGHTS: gib(8.13), P.KV_TOKENS: 834615, P.KV_CACHE: 2 * gib(54.12), P.FREE_AFTER_POOL: gib(14.61)}),
    ("sglang/qwen3-14b-48gb-xinference.log", None, True, None, 'main', 0,
     {P.FREE_AFTER_LOAD: gib(19.67), P.WEIGHTS: gib(27.57), P.KV_TOKENS: 91749, P.KV_CACHE: 2 * gib(7.00), P.FREE_AFTER_POOL: gib(5.27)}),
    # issue 32, public SGLang logs: a README's 0.4.9.post6 run on an RTX 5080 (graph capture's own mem usage line);
    # a doc's abbreviation without timestamps or ranks (its server_args line cut with "...", so no arguments)
    ("sglang/qwen3-06b-rtx5080-v0.4.9.post6.log", None, True, None, 'main', 0,
     {P.FREE_AFTER_LOAD: gib(13.91), P.WEIGHTS: gib(1.25), P.KV_TOKENS: 104273, P.KV_CACHE: 2 * gib(5.57), P.FREE_AFTER_POOL: gib(2.43),
      P.CUDA_GRAPHS: gib(0.11), P.MAX_RUNNING: 2048, P.MAX_MODEL_LEN: 40960}),
    # round 22: 0.3.3's time-only prefix ("[22:30:52 TP0]") keeps the rank; bench_latency's unprefixed capacity line
    # is the only token count a 0.3 log holds (no pool line then); the free-only end line gives the weights
    ("sglang/llama3-8b-mi300x-bench-latency-0.3.3.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(191.33), P.FREE_AFTER_LOAD: gib(176.33), P.WEIGHTS: gib(191.33) - gib(176.33),
      P.FREE_AFTER_POOL: gib(22.83), P.KV_TOKENS: 1256440}),
    # bench_one_batch on a hybrid Mamba model (a trailing space after the mamba line, "GB" without a space)
    ("sglang/granite-40-h-micro-16gb-bench-one-batch-mamba.log", None, True, None, 'TP0', 0,
     {P.NON_TORCH: gib(0.02), P.FREE_BEFORE_LOAD: gib(15.24), P.WEIGHTS: gib(5.98), P.FREE_AFTER_LOAD: gib(9.26),
      P.MAMBA_STATE: gib(0.03) + gib(2.74), P.KV_TOKENS: 399740, P.KV_CACHE: 2 * gib(1.52),
      P.FREE_AFTER_POOL: gib(3.42), P.CUDA_GRAPHS: gib(0.09)}),
    # the docs CI's --max-total-tokens 20480: the pool is the cap, the rest of the H100 stays free
    ("sglang/qwen25-05b-h100-docs-ci-max-total-tokens.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.09), P.FREE_BEFORE_LOAD: gib(78.43), P.WEIGHTS: gib(0.98), P.FREE_AFTER_LOAD: gib(77.45),
      P.KV_TOKENS: 20480, P.KV_CACHE: 2 * gib(0.12), P.FREE_AFTER_POOL: gib(77.12), P.CUDA_GRAPHS: gib(0.07),
      P.MAX_RUNNING: 128, P.MAX_MODEL_LEN: 32768}),
    # round 26: 0.4.6.post2 on a 4 GB card the desktop shares (every figure 0.00 after the pool); a note's copy of the
    # capacity line without max_running_requests (its author's summary line above it is no engine format)
    ("sglang/qwen3-06b-4gb-wsl-0.4.6.post2-f088.log", None, True, None, 'main', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(3.23), P.WEIGHTS: gib(1.20), P.FREE_AFTER_LOAD: gib(2.03),
      P.KV_TOKENS: 15387, P.KV_CACHE: 2 * gib(0.82), P.FREE_AFTER_POOL: 0, P.CUDA_GRAPHS: 0, P.MAX_RUNNING: 2049,
      P.MAX_MODEL_LEN: 40960}),
    # DeepSeek-V4's pool split (a ROCm build of 2026-05-12): the capacity before any pool line, no pool bytes, so the
    # tokens tie and the least free after the weights binds (DP1 TP1, 109.18 GB); the assertion after the pools (the
    # fp8 store dtype) is a crash that names no memory, not a start-up
    # round 29: an Ascend development branch; every rank's pool from its "DSV4 pool sizes" line, the last (capped to
    # the one request slot); the warm-up request dies after the HTTP server came up: no 'ready to roll'
    ("sglang/dsv4-flash-w4a8-4x-ascend-910b-dp4-ep-warmup-fails.log", None, False, 'engine-error', 'DP0 TP0 EP0', 0,
     {P.WEIGHTS: gib(47.06), P.FREE_AFTER_LOAD: gib(13.43), P.KV_TOKENS: 32768, P.FREE_AFTER_POOL: gib(13.22),
      P.MAX_RUNNING: 1, P.MAX_MODEL_LEN: 32768}),
    # round 29: the same branch at TP 4 comes up: one sizes line (no cap), the 0.5.14+ decode graph line with "NPU"
    ("sglang/dsv4-flash-w4a8-4x-ascend-tp4-npu-graphs-1m-context.log", None, True, None, 'TP0', 0,
     {P.WEIGHTS: gib(41.35), P.FREE_AFTER_LOAD: gib(19.15), P.KV_TOKENS: 1641472, P.FREE_AFTER_POOL: gib(1.62),
      P.CUDA_GRAPHS: gib(0.73), P.MAX_RUNNING: 8, P.MAX_MODEL_LEN: 1048576}),
    # round 29: 0.5.10rc0 on Hygon DCUs ("quant=compressed-tensors" in the weights line), an MLA pool's one KV size;
    # the capture dies of a KeyError: an engine error, the pool and weights read on every rank (TP5 and TP1 tie)
    ("sglang/deepseek-r1-fp8-8x-hygon-dcu-0.5.10rc0-pd-decode-graph-keyerror.log", None, False, 'engine-error', 'TP5',
     0, {P.WEIGHTS: gib(41.72), P.FREE_AFTER_LOAD: gib(101.33), P.KV_TOKENS: 2659072, P.KV_CACHE: gib(87.01),
         P.FREE_AFTER_POOL: gib(14.10)}),
    ("sglang/dsv4-flash-fp8-4x-mi300x-dp4-pool-split-assert.log", None, False, 'engine-error', 'DP1 TP1', 0,
     {P.NON_TORCH: gib(8.31), P.FREE_BEFORE_LOAD: gib(182.61), P.WEIGHTS: gib(73.43), P.FREE_AFTER_LOAD: gib(109.18),
      P.KV_TOKENS: 529408}),
    # --enable-lora under the docs CI's --max-total-tokens: the adapters' buffers print no line of their own
    ("sglang/llama31-8b-lora-docs-ci-h100-max-total-tokens.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.09), P.FREE_BEFORE_LOAD: gib(78.43), P.WEIGHTS: gib(15.02), P.FREE_AFTER_LOAD: gib(63.41),
      P.KV_TOKENS: 20480, P.KV_CACHE: 2 * gib(1.25), P.FREE_AFTER_POOL: gib(58.18), P.CUDA_GRAPHS: gib(0.06),
      P.MAX_RUNNING: 128, P.MAX_MODEL_LEN: 131072}),
    ("sglang/qwen3-coder-30b-awq-rtx-pro-6000-maxq-fp8e5m2-f088.log", None, True, None, 'main', 1,
     {P.KV_TOKENS: 1428864, P.KV_CACHE: 2 * gib(32.70), P.MAX_MODEL_LEN: 131072}),
    # 0.5.14's "Capture target decode CUDA graph end. elapsed=" quoted without prefixes (a doc's four lines)
    # sglang-play's README (0.5.13 by its wording): 0.5.9+'s "elapsed=" distributed line, 0.5.13's "Load weight end"
    # without dtype or quant; 36.54 GB free before the load of a 94 GB card (another process held the rest)
    ("sglang/qwen25-05b-h100-nvl-0.5.13-beside-foreign-memory-no-graphs.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.09), P.FREE_BEFORE_LOAD: gib(36.54), P.WEIGHTS: gib(0.98), P.FREE_AFTER_LOAD: gib(35.57),
      P.KV_TOKENS: 2658165, P.KV_CACHE: 2 * gib(15.21), P.FREE_AFTER_POOL: gib(4.55), P.MAX_RUNNING: 4096,
      P.MAX_MODEL_LEN: 32768}),
    ("sglang/ornith-9b-bf16-0.5.14-beside-a-resident-primary.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(17.17), P.FREE_AFTER_LOAD: gib(24.12), P.FREE_AFTER_POOL: gib(12.13), P.CUDA_GRAPHS: gib(1.26),
      P.KV_TOKENS: 268319, P.MAX_RUNNING: 1, P.MAX_MODEL_LEN: 32768}),
    # no arguments line: each rank's second pool (same #tokens, after its pool end) is the draft's, not read
    # both pools 454112 tokens: TP1 (7.63 GB left after its pool, TP0 8.40) is the rank whose free memory sized them
    ("sglang/club3090-2x-rtx5090-nvfp4-gdn-draft-pools.log", None, True, None, 'TP1', 1,
     {P.KV_TOKENS: 454112, P.KV_CACHE: 2 * gib(3.46), P.FREE_AFTER_POOL: gib(7.63)}),
    # kubectl logs of a TP 8 run: one rank's load and pool-end lines, every rank's pool line
    ("sglang/grok2-fp8-8x-h100-tp8-kubectl.log", None, True, None, 'TP0', 0,
     {P.NON_TORCH: gib(1.25), P.FREE_BEFORE_LOAD: gib(77.43), P.WEIGHTS: gib(36.73), P.FREE_AFTER_LOAD: gib(40.69),
      P.KV_TOKENS: 903439, P.KV_CACHE: 2 * gib(13.79), P.FREE_AFTER_POOL: gib(11.22), P.CUDA_GRAPHS: gib(0.89),
      P.MAX_RUNNING: 3529, P.MAX_MODEL_LEN: 131072}),
    ("sglang/qwen3-14b-4x-rtx4090-tp4-f080.log", None, True, None, 'main', 0,
     {P.FREE_AFTER_LOAD: gib(16.0), P.WEIGHTS: gib(7.08), P.KV_TOKENS: 298447, P.KV_CACHE: 2 * gib(5.69), P.MAX_RUNNING: 3730,
      P.MAX_MODEL_LEN: 40960}),
    ("sglang/llama31-8b-24gb-docker-desktop.log", None, True, None, 'main', 0,
     {P.FREE_AFTER_LOAD: gib(7.37), P.WEIGHTS: gib(15.02), P.KV_TOKENS: 38141, P.KV_CACHE: 2 * gib(2.33), P.FREE_AFTER_POOL: gib(1.46),
      P.CUDA_GRAPHS: gib(0.11), P.MAX_RUNNING: 2048, P.MAX_MODEL_LEN: 131072}),
    # the refusal prints the fraction it ran with: an argument, no term
    ("sglang/qwen3-8b-ascend-910b2-fraction-02.log", None, False, 'no-kv-memory', None, 0,
     {}),
    ("sglang/qwen3-235b-fp8-h100-tp4.log", None, True, None, 'main', 1,
     {P.KV_TOKENS: 367404, P.KV_CACHE: 2 * gib(8.23)}),
    # PP x TP ranks keep both coordinates
    ("sglang/qwen25-vl-pp2-tp2-init.log", None, False, None, 'PP0 TP0', 2,
     {P.NON_TORCH: gib(1.43)}),
    # 0.4.3 prints the graph line's avail mem before its mem usage
    ("sglang/qwq-32b-4x-l4-tp4.log", None, True, None, 'TP2', 0,
     {P.FREE_AFTER_LOAD: gib(6.09), P.NON_TORCH: gib(0.13), P.FREE_BEFORE_LOAD: gib(21.63), P.WEIGHTS: gib(15.54), P.KV_TOKENS: 46611,
      P.KV_CACHE: 2 * gib(1.42), P.FREE_AFTER_POOL: gib(2.09), P.CUDA_GRAPHS: gib(0.93), P.MAX_RUNNING: 2049,
      P.MAX_MODEL_LEN: 131072}),
    ("sglang/r1-distill-qwen7b-rtx3090-wsl.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(22.76), P.FREE_AFTER_LOAD: gib(8.37), P.WEIGHTS: gib(22.76) - gib(8.37), P.KV_CACHE: 2 * gib(2.82), P.FREE_AFTER_POOL: gib(1.68), P.KV_TOKENS: 105531,
      P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131072}),
    # issue 32's newest formats: an MLA pool's one 'KV size' (DP attention ranks), SGLang 0.5.23's lines with
    # SGLANG_LOG_MS timestamps (built from its format strings), vLLM 0.34's plain version line and one-line capacity
    ("sglang/deepseek-v32-exp-mla-kv-size-8xb200.log", None, True, None, 'DP0 TP0', 1,
     {P.KV_TOKENS: 975424, P.KV_CACHE: gib(43.67), P.FREE_AFTER_POOL: gib(37.71)}),
    # TP1 is the least free after the weights (70.69 GB, TP0 70.71); TP1 printed no begin line, TP0's fills it
    ("sglang/v0.5.23-source-format-tp2-ms.log", None, True, None, 'TP1', 0,
     {P.FREE_AFTER_LOAD: gib(70.69), P.NON_TORCH: gib(0.63), P.FREE_BEFORE_LOAD: gib(78.50), P.WEIGHTS: gib(7.79), P.KV_TOKENS: 830000,
      P.KV_CACHE: 2 * gib(28.50), P.FREE_AFTER_POOL: gib(12.69), P.CUDA_GRAPHS: gib(0.47), P.MAX_RUNNING: 512,
      P.MAX_MODEL_LEN: 40960}),
    ("vllm/v1-0.34-source-format-one-line-kv.log", '0.34.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.99), P.KV_CACHE: gib(19.37), P.CUDA_GRAPHS: gib(0.52), P.KV_TOKENS: 158656,
      P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 4.84}),
    # 0.34's extensible KV cache (its default on CUDA): the pool measured after warm-up and committed replaces the
    # estimate printed before it (61.74 GiB), and the measurement names the engine's budget
    ("vllm/v1-0.34-source-format-extensible-kv.log", '0.34.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.99), P.KV_CACHE: gib(60.35), P.REQUESTED: gib(79.19), P.CUDA_GRAPHS: gib(0.52),
      P.KV_TOKENS: 494384, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 15.09}),
    ("sglang/server-args-llama31-8b.log", None, False, None, None, 2,
     {}),
    ("sglang/tp2-graph-capture.log", None, False, None, 'TP1', 2,
     {P.CUDA_GRAPHS: gib(1.04)}),
    ("sglang/tp8-ranks.log", None, True, None, 'TP5', 1,
     {P.NON_TORCH: gib(2.01), P.FREE_BEFORE_LOAD: gib(137.29), P.KV_TOKENS: 2795207, P.KV_CACHE: 2 * gib(53.31), P.FREE_AFTER_POOL: gib(11.87)}),
    ("vllm/v0.4-qwen-7b-no-kv-memory.log", None, False, 'no-kv-memory', None, 0,
     {P.GPU_BLOCKS: 0, P.CPU_BLOCKS: 256, P.KV_TOKENS: 0, P.BLOCK_SIZE: 16}),
    ("vllm/v0.4-qwen15-7b-kv-below-max-len.log", None, False, 'kv-below-max-model-len', None, 0,
     {P.MAX_MODEL_LEN: 32768, P.KV_TOKENS: 7344}),
    ("vllm/v0.4.0-qwen15-05b-namespace.log", '0.4.0.post1', False, None, None, 2,
     {}),
    ("vllm/v0.6-internvl-tp3-not-divisible.log", None, False, 'not-divisible-by-parallel-size', None, 0,
     {}),
    ("vllm/v0.6-llama31-8b-tp2-weights.log", None, False, None, 'main', 1,
     {P.WEIGHTS: gib(7.9692), P.GPU_MEMORY: gib(23.55), P.UTILIZATION: 0.9, P.REQUESTED: gib(21.19)}),
    ("vllm/v0.6.4-llama31-8b-rtx3090-20k.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9888), P.GPU_MEMORY: gib(23.58), P.TORCH_PEAK: gib(17.06), P.ACTIVATION: gib(17.06) - gib(14.9888),
      P.NON_TORCH: gib(0.35), P.KV_CACHE: gib(3.81), P.UTILIZATION: 0.9, P.GPU_BLOCKS: 1952, P.CPU_BLOCKS: 2048, P.MAX_MODEL_LEN: 20000, P.MAX_CONCURRENCY: 1.56, P.KV_TOKENS: 31232, P.BLOCK_SIZE: 16}),
    ("vllm/v0.6.4-llama31-8b-rtx3090-29k-refused.log", None, False, 'kv-below-max-model-len', 'main', 0,
     {P.WEIGHTS: gib(14.9888), P.GPU_MEMORY: gib(23.58), P.TORCH_PEAK: gib(17.98), P.ACTIVATION: gib(17.98) - gib(14.9888),
      P.NON_TORCH: gib(0.35), P.KV_CACHE: gib(2.89), P.UTILIZATION: 0.9, P.GPU_BLOCKS: 1478, P.CPU_BLOCKS: 2048, P.MAX_MODEL_LEN: 29000, P.MAX_CONCURRENCY: 0.82, P.KV_TOKENS: 23648}),
    ("vllm/v0.6.4.post1-qwen25-05b-no-kv-memory.log", None, False, 'no-kv-memory', None, 0,
     {}),
    # round 26: 0.6.4's profile line with its torch peak (the activation is it less the weights), 0.6.6's terms,
    # and 0.7.3's V1 blocks line
    ("vllm/v0.6.4.post1-rho-1b-sft-h200-llm-class-2k.log", '0.6.4.post1', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.0512), P.GPU_MEMORY: gib(139.80), P.TORCH_PEAK: gib(2.38), P.ACTIVATION: gib(2.38) - gib(2.0512),
      P.NON_TORCH: gib(0.73), P.KV_CACHE: gib(122.71), P.UTILIZATION: 0.9, P.CUDA_GRAPHS: gib(0.16),
      P.GPU_BLOCKS: 365549, P.CPU_BLOCKS: 11915, P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 2855.85,
      P.KV_TOKENS: 5848784, P.BLOCK_SIZE: 16}),
    ("vllm/v0.6.6-ui-tars-7b-24gb-8k.log", '0.6.6', True, None, 'main', 0,
     {P.WEIGHTS: gib(15.51), P.GPU_MEMORY: gib(23.67), P.UTILIZATION: 0.9, P.REQUESTED: gib(21.30),
      P.NON_TORCH: gib(0.28), P.ACTIVATION: gib(1.16), P.KV_CACHE: gib(4.36), P.CUDA_GRAPHS: gib(1.92),
      P.GPU_BLOCKS: 5102, P.CPU_BLOCKS: 4681, P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 9.96, P.KV_TOKENS: 81632,
      P.BLOCK_SIZE: 16}),
    # NVIDIA's 0.11.0 container on a GB10: the stat logger's blocks line (52,510 x 16 = the pool's tokens); the
    # graph line's -0.03 GiB (unified memory freed during the capture) is no figure of the graphs
    # the capture gave 0.03 GiB back: "took -0.03 GiB" is read with its sign (round 27; unread before)
    ("vllm/v1-0.11-mistral-7b-v02-gptq-gb10-32k.log", '0.11.0+582e4e37.nv25.11', True, None, 'main', 0,
     {P.WEIGHTS: gib(3.8844), P.KV_CACHE: gib(102.56), P.MAX_MODEL_LEN: 32768, P.KV_TOKENS: 840160,
      P.MAX_CONCURRENCY: 25.64, P.GRAPHS_PIECEWISE: 67, P.GRAPHS_FULL: 35, P.GPU_BLOCKS: 52510,
      P.CUDA_GRAPHS: gib(-0.03)}),
    ("vllm/v1-0.7.3-granite30-3b-a800m-l40s-4k.log", '0.7.3', True, None, 'main', 0,
     {P.WEIGHTS: gib(6.1501), P.CUDA_GRAPHS: gib(0.62), P.GPU_BLOCKS: 33660, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 131.48, P.KV_TOKENS: 538560, P.BLOCK_SIZE: 16}),
    ("vllm/v0.6.5dev-llama3-8b-h100-tp1.log", None, False, None, 'main', 1,
     {P.GPU_MEMORY: gib(79.22), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.29), P.WEIGHTS: gib(14.96), P.NON_TORCH: gib(1.79), P.ACTIVATION: gib(1.26), P.KV_CACHE: gib(53.29)}),
    ("vllm/v0.6.5dev-llama3-8b-h100-tp2-cut.log", None, False, None, 'main', 1,
     {P.GPU_MEMORY: gib(79.22), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.29), P.WEIGHTS: gib(7.48), P.NON_TORCH: gib(3.58), P.ACTIVATION: gib(1.26)}),
    ("vllm/v0.7-llama32-11b-vision-h100.log", None, True, None, 'main', 0,
     {P.GPU_MEMORY: gib(79.22), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.29), P.WEIGHTS: gib(19.86), P.NON_TORCH: gib(0.16), P.ACTIVATION: gib(36.63), P.KV_CACHE: gib(14.65), P.GPU_BLOCKS: 6001, P.CPU_BLOCKS: 1638, P.KV_TOKENS: 96016, P.BLOCK_SIZE: 16}),
    ("vllm/v0.7-two-workers-weights.log", None, False, None, 'main', 1,
     {P.WEIGHTS: gib(30.7098)}),
    ("vllm/v0.8-llama-h100-gateway.log", None, True, None, 'main', 0,
     {P.GPU_MEMORY: gib(79.19), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.27), P.WEIGHTS: gib(12.55), P.NON_TORCH: gib(0.16), P.ACTIVATION: gib(2.38), P.KV_CACHE: gib(56.18), P.GPU_BLOCKS: 7191, P.CPU_BLOCKS: 512, P.KV_TOKENS: 115056, P.BLOCK_SIZE: 16}),
    ("vllm/v0.8-moe-marlin-4x-rtx3090-workers.log", None, False, None, 'pid 521', 1,
     {P.WEIGHTS: gib(21.21), P.NON_TORCH: gib(0.2), P.ACTIVATION: gib(0.37), P.KV_CACHE: gib(1.57), P.GPU_MEMORY: gib(23.58), P.UTILIZATION: 0.99, P.REQUESTED: gib(23.35)}),
    ("vllm/v0.8.1-kserve-llama32-1b-config.log", '0.8.1', False, None, None, 2,
     {}),
    ("vllm/v0.8.5-gpustack-gemma3-namespace.log", '0.8.5.post1', False, None, None, 2,
     {}),
    ("vllm/v1-0.10-h100-log-outputs.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(112.61), P.GPU_BLOCKS: 57656, P.KV_TOKENS: 922496, P.MAX_MODEL_LEN: 40000, P.MAX_CONCURRENCY: 23.06}),
    ("vllm/v1-0.10.2dev-qwen25-05b-tp2-args.log", '0.10.2.dev378+g4d7fe40fc.d20250829', False, None, None, 2,
     {P.MAX_MODEL_LEN: 32768}),
    ("vllm/v1-0.11-small-model-2k.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(2.0513), P.KV_CACHE: gib(33.31), P.KV_TOKENS: 1587648, P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 775.22,
      P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 35}),
    ("vllm/v1-0.18-gguf-iq1s-graphs.log", None, True, None, 'main', 1,
     {P.CUDA_GRAPHS: gib(0.72), P.KV_TOKENS: 189408, P.MAX_MODEL_LEN: 40960, P.MAX_CONCURRENCY: 4.62}),
    ("vllm/v1-0.18-gguf-qwen35-graph-estimate.log", None, True, None, 'main', 1,
     {P.CUDA_GRAPHS: gib(1.62), P.KV_CACHE: gib(6.9), P.KV_TOKENS: 89760, P.MAX_MODEL_LEN: 262144, P.MAX_CONCURRENCY: 1.36,
      P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 35, P.MAX_CAPTURE_SIZE: 512}),
    ("vllm/v1-0.18-tp2-graph-estimates.log", None, False, None, 'TP0', 2,
     {P.CUDA_GRAPHS: gib(4.38), P.KV_CACHE: gib(25.46)}),
    ("vllm/v1-0.19-windows-131k.log", None, True, None, 'main', 1,
     {P.CUDA_GRAPHS: gib(0.11), P.KV_TOKENS: 396928, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 3.03}),
    ("vllm/v1-0.7-llama31-70b-w8a8-gpu-blocks.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(67.7229), P.GPU_BLOCKS: 1381, P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 10.79, P.KV_TOKENS: 22096, P.BLOCK_SIZE: 16}),
    ("vllm/v1-0.7.4-kv-tokens.log", None, True, None, None, 1,
     {P.KV_TOKENS: 2042016, P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 997.08}),
    ("vllm/v1-0.8-sampler-oom-8x-rtx5080.log", None, False, 'out-of-memory-warming-up-sampler', 'rank 0', 0,
     {P.GPU_MEMORY: gib(15.48), P.MAX_RUNNING: 1024}),
    ("vllm/v1-0.8-torch-oom-two-ranks.log", None, False, 'out-of-memory', 'rank 1', 0,
     {P.GPU_MEMORY: gib(23.57)}),
    ("vllm/v1-0.8.4-gpustack-two-ranks.log", None, False, None, 'rank 0', 1,
     {P.WEIGHTS: gib(31.2795),
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    ("vllm/v1-0.8.5-llama31-8b-l40s.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9889), P.KV_TOKENS: 158656, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 4.84}),
    ("vllm/v1-0.9.1-free-memory-below-requested.log", None, False, 'free-memory-below-requested', 'main', 0,
     {P.FREE_BEFORE_LOAD: gib(31.44), P.GPU_MEMORY: gib(47.38), P.UTILIZATION: 0.95, P.REQUESTED: gib(45.01)}),
    ("vllm/v1-ci-free-memory-below-requested.log", None, False, 'free-memory-below-requested', 'main', 0,
     {P.FREE_BEFORE_LOAD: gib(1.53), P.GPU_MEMORY: gib(22.05), P.UTILIZATION: 0.9, P.REQUESTED: gib(19.84)}),
    ("vllm/v1-fp8-kv-100k.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(10.55), P.KV_TOKENS: 230528, P.MAX_MODEL_LEN: 100000, P.MAX_CONCURRENCY: 2.31}),
    ("vllm/v1-fp8-kv-221k-refused.log", None, False, 'kv-below-max-model-len', None, 0,
     {P.MAX_MODEL_LEN: 221000, P.KV_NEEDED: gib(10.12), P.KV_CACHE: gib(5.59), P.ESTIMATED_MAX_LEN: 122080}),
    ("vllm/v1-nvfp4-kv-1m.log", None, True, None, None, 1,
     {P.KV_TOKENS: 1823372, P.MAX_MODEL_LEN: 1048576, P.MAX_CONCURRENCY: 1.74}),
    ("vllm/v1-qwen3-235b-fp8-h100-tp4.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(8.11), P.KV_TOKENS: 178880}),
    # issue 32's public vectors: V0 profile lines on a V100 and an H100, a cut blocks line, V1 lines under a quoted
    # command, 0.3's weights line in MB, config lines only, a refusal quoted out of order, 0.29's one-line advice
    ("vllm/v0.9-qwen3-4b-v100-40k.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(7.56), P.GPU_MEMORY: gib(31.73), P.UTILIZATION: 0.9, P.REQUESTED: gib(28.56), P.NON_TORCH: gib(0.09), P.ACTIVATION: gib(1.4), P.KV_CACHE: gib(19.52), P.GPU_BLOCKS: 8884, P.CPU_BLOCKS: 1820, P.MAX_MODEL_LEN: 40960, P.MAX_CONCURRENCY: 3.47, P.KV_TOKENS: 142144, P.BLOCK_SIZE: 16}),
    # round 21: V0 0.7.x-0.8.x profile lines from notebook exports (indented; Unsloth's "vLLM STDOUT: " echo) and a
    # markdown note whose wrapped KV line is joined
    ("vllm/v0.7.3-phi4-mini-a100-40gb-fp16-2k.log", '0.7.3', True, None, 'main', 0,
     {P.WEIGHTS: gib(7.17), P.GPU_MEMORY: gib(39.56), P.UTILIZATION: 0.9, P.REQUESTED: gib(35.60), P.NON_TORCH: gib(0.01),
      P.ACTIVATION: gib(1.83), P.KV_CACHE: gib(26.60), P.CUDA_GRAPHS: gib(0.41), P.GPU_BLOCKS: 13618, P.CPU_BLOCKS: 2048,
      P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 106.39, P.KV_TOKENS: 217888, P.BLOCK_SIZE: 16}),
    # round 27: V0 of 0.7.2 through the LLM class on an L40 and an A10 (CUDA totals 44.39 and 22.06 GiB): the profile
    # lines' weights (2.88 GiB) win over the load line's 2.8797 GB, as in every 0.6.4+ V0 log
    ("vllm/v0.7.2-qwen25-math-15b-l40-gmu085-4k.log", '0.7.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.88), P.GPU_MEMORY: gib(44.39), P.UTILIZATION: 0.85, P.REQUESTED: gib(37.73),
      P.NON_TORCH: gib(0.08), P.ACTIVATION: gib(1.40), P.KV_CACHE: gib(33.37), P.CUDA_GRAPHS: gib(0.20),
      P.GPU_BLOCKS: 78115, P.CPU_BLOCKS: 9362, P.MAX_MODEL_LEN: 4096, P.MAX_CONCURRENCY: 305.14, P.KV_TOKENS: 1249840,
      P.BLOCK_SIZE: 16}),
    ("vllm/v0.7.2-qwen25-math-15b-a10-gmu09-4k.log", '0.7.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.88), P.GPU_MEMORY: gib(22.06), P.UTILIZATION: 0.9, P.REQUESTED: gib(19.85),
      P.NON_TORCH: gib(0.05), P.ACTIVATION: gib(1.40), P.KV_CACHE: gib(15.52), P.CUDA_GRAPHS: gib(0.18),
      P.GPU_BLOCKS: 36332, P.CPU_BLOCKS: 9362, P.MAX_MODEL_LEN: 4096, P.MAX_CONCURRENCY: 141.92, P.KV_TOKENS: 581312,
      P.BLOCK_SIZE: 16}),
    # round 27: ROCm. A 0.6.3 development build on MI300X, alone and at TP 8 (mp workers: the driver's blocks line is
    # the engine's, each rank's load line the same 1.5874 GB), and 0.4.1 on a Radeon PRO W7900 (NAVI, no FA)
    ("vllm/v0.6.3dev-llama2-7b-mi300x-rocm-bench.log", '0.6.3.dev114+g4f95ffee', True, None, 'main', 0,
     {P.WEIGHTS: gib(12.5523), P.GPU_BLOCKS: 20186, P.CPU_BLOCKS: 512, P.KV_TOKENS: 322976, P.BLOCK_SIZE: 16}),
    ("vllm/v0.6.3dev-llama2-7b-8xmi300x-tp8-rocm-bench.log", '0.6.3.dev114+g4f95ffee', True, None, 'main', 0,
     {P.WEIGHTS: gib(1.5874), P.GPU_BLOCKS: 169460, P.CPU_BLOCKS: 4096, P.KV_TOKENS: 2711360, P.BLOCK_SIZE: 16}),
    ("vllm/v0.4.1-llama3-8b-w7900-rocm-navi-8k-bench.log", '0.4.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9595), P.GPU_BLOCKS: 12003, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 192048, P.BLOCK_SIZE: 16}),
    # round 27: V1 of 0.8.4 on RTX 3090s through the LLM class: alone, and at TP 2 where the engine core logs each
    # worker's pool (359,328 and 359,712 tokens) and runs the smaller
    ("vllm/v1-0.8.4-qwen25-7b-rtx3090-4k-llm-class.log", '0.8.4', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.2717), P.CUDA_GRAPHS: gib(1.44), P.KV_TOKENS: 97680, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 23.85}),
    ("vllm/v1-0.8.4-qwen25-7b-2x-rtx3090-tp2-gmu08-4k.log", '0.8.4', True, None, 'rank 1', 0,
     {P.WEIGHTS: gib(7.1441), P.CUDA_GRAPHS: gib(2.13), P.KV_TOKENS: 359328, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 87.73}),
    # the same post's R1-Distill-Qwen-7B at TP 2: the smaller line first this time (367,968 then 368,352)
    ("vllm/v1-0.8.4-r1-distill-qwen7b-2x-rtx3090-tp2-gmu08-4k.log", '0.8.4', True, None, 'rank 1', 0,
     {P.WEIGHTS: gib(7.1441), P.CUDA_GRAPHS: gib(2.13), P.KV_TOKENS: 367968, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 89.84}),
    # round 22: V0 at TP 8 on NVSwitch A100s; a DJL LMI worker's profile lines behind CloudWatch's prefix and an
    # escaped ANSI colour, no blocks line; Ray's deduplicated worker lines over two PP stages ('[repeated 14x ...]')
    ("vllm/v0.7.1-deepseek-coder-v2-lite-8xa100-40gb-tp8-djl.log", '0.7.1', True, None, 'pid 240', 1,
     {P.GPU_MEMORY: gib(39.39), P.UTILIZATION: 0.9, P.REQUESTED: gib(35.45), P.WEIGHTS: gib(3.97),
      P.NON_TORCH: gib(2.10), P.ACTIVATION: gib(0.36), P.KV_CACHE: gib(29.02), P.CUDA_GRAPHS: gib(0.47)}),
    ("vllm/v0.8.3-deepseek-v25-2x8xa100-40gb-tp8-pp2-ray.log", '0.8.3', True, None, 'pid 627', 0,
     {P.GPU_MEMORY: gib(39.49), P.UTILIZATION: 0.9, P.REQUESTED: gib(35.55), P.WEIGHTS: gib(28.48),
      P.NON_TORCH: gib(2.15), P.ACTIVATION: gib(1.35), P.KV_CACHE: gib(3.58), P.GPU_BLOCKS: 5302, P.CPU_BLOCKS: 7767,
      P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 10.36, P.KV_TOKENS: 84832, P.BLOCK_SIZE: 16}),
    ("vllm/v0.8.2-llama32-3b-t4-fp16-2k-vllm-stdout.log", '0.8.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(6.02), P.GPU_MEMORY: gib(14.74), P.UTILIZATION: 0.89, P.REQUESTED: gib(13.18), P.NON_TORCH: gib(0.05),
      P.ACTIVATION: gib(0.90), P.KV_CACHE: gib(6.22), P.CUDA_GRAPHS: gib(0.17), P.GPU_BLOCKS: 3637, P.CPU_BLOCKS: 1170,
      P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 28.41, P.KV_TOKENS: 58192, P.BLOCK_SIZE: 16}),
    ("vllm/v0.7-deepseek-r1-8xh200-tp8-gmu085-128k.log", None, True, None, 'main', 0,
     {P.GPU_MEMORY: gib(139.81), P.UTILIZATION: 0.85, P.REQUESTED: gib(118.84), P.WEIGHTS: gib(83.88),
      P.NON_TORCH: gib(7.16), P.ACTIVATION: gib(6.37), P.KV_CACHE: gib(21.43), P.GPU_BLOCKS: 18418, P.CPU_BLOCKS: 3437,
      P.MAX_MODEL_LEN: 128000, P.MAX_CONCURRENCY: 2.3, P.KV_TOKENS: 294688, P.BLOCK_SIZE: 16}),
    # a 0.6.4 development build's blocks without a profile line: refused below the model's length, then started
    ("vllm/v0.6.4dev-llama31-8b-24gb-131k-refused.log", '0.6.4.dev26+g92d86da2.d20241017', False,
     'kv-below-max-model-len', 'main', 0,
     {P.WEIGHTS: gib(14.9888), P.GPU_BLOCKS: 2575, P.CPU_BLOCKS: 2048, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 0.31,
      P.KV_TOKENS: 41200}),
    ("vllm/v0.6.4dev-llama31-8b-24gb-40k.log", '0.6.4.dev26+g92d86da2.d20241017', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9888), P.GPU_BLOCKS: 2575, P.CPU_BLOCKS: 2048, P.MAX_MODEL_LEN: 40960, P.MAX_CONCURRENCY: 1.01,
      P.KV_TOKENS: 41200, P.BLOCK_SIZE: 16}),
    ("vllm/v0.8-llama32-3b-gguf-q8-rtx4070-laptop-10k.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(3.26), P.GPU_MEMORY: gib(7.65), P.UTILIZATION: 0.9, P.REQUESTED: gib(6.89), P.NON_TORCH: gib(0.02),
      P.ACTIVATION: gib(1.22), P.KV_CACHE: gib(2.38), P.GPU_BLOCKS: 1395, P.CPU_BLOCKS: 2340, P.MAX_MODEL_LEN: 10000,
      P.MAX_CONCURRENCY: 2.23, P.KV_TOKENS: 22320, P.BLOCK_SIZE: 16}),
    ("vllm/v0-qwen3-06b-h100-gmu080.log", None, True, None, 'main', 0,
     {P.GPU_MEMORY: gib(79.19), P.UTILIZATION: 0.8, P.REQUESTED: gib(63.35), P.WEIGHTS: gib(1.12), P.NON_TORCH: gib(0.16), P.ACTIVATION: gib(0.23), P.KV_CACHE: gib(61.84), P.CUDA_GRAPHS: gib(0.13), P.GPU_BLOCKS: 36184, P.CPU_BLOCKS: 2340, P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 70.67, P.KV_TOKENS: 578944, P.BLOCK_SIZE: 16}),
    ("vllm/v0.8.5-qwen3-30b-a3b-w4a16-rtx3090-cut.log", None, False, None, 'main', 1,
     {P.WEIGHTS: gib(15.68), P.GPU_MEMORY: gib(23.56), P.UTILIZATION: 0.9, P.REQUESTED: gib(21.2), P.NON_TORCH: gib(0.06), P.ACTIVATION: gib(0.12), P.KV_CACHE: gib(5.34)}),
    ("vllm/v1-0.10-qwen3-coder-30b-a3b-tp8-24gb.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(12.22), P.KV_TOKENS: 534064, P.MAX_MODEL_LEN: 262144, P.MAX_CONCURRENCY: 2.04}),
    ("vllm/v1-0.7-llama31-8b-int8-65k-started.log", None, True, None, 'main', 2,
     {P.CUDA_GRAPHS: gib(2.02), P.MAX_MODEL_LEN: 65536, P.MAX_CONCURRENCY: 1.46}),
    ("vllm/v0.3-opt-125m-weights-mb.log", None, True, None, 'main', 0,
     {P.WEIGHTS: mib(244.61), P.GPU_BLOCKS: 76240, P.CPU_BLOCKS: 7281, P.KV_TOKENS: 1219840, P.BLOCK_SIZE: 16}),
    ("vllm/v0.8.5.post1-kserve-qwen3-14b-config.log", '0.8.5.post1', False, None, None, 2,
     {}),
    ("vllm/v0.5.4-llama31-70b-2xh100-config.log", '0.5.4', False, None, None, 2,
     {}),
    ("vllm/v0.7-r1-distill-qwen14b-2x4090-refused.log", None, False, 'kv-below-max-model-len', 'pid 1786', 0,
     {P.WEIGHTS: gib(13.9476), P.MAX_MODEL_LEN: 131072, P.KV_TOKENS: 81536}),
    # a 0.31.0 lab record quoting the worker's budget line up to its terms (its tail, with the KV memory, cut)
    ("vllm/v1-0.31.0-llama31-8b-a100-80gb-defaults.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(15.0), P.FREE_BEFORE_LOAD: gib(78.84), P.GPU_MEMORY: gib(79.25), P.UTILIZATION: 0.92,
      P.REQUESTED: gib(72.91), P.ACTIVATION: gib(1.44), P.CUDA_GRAPHS: gib(0.23), P.KV_CACHE: gib(56.21),
      P.KV_TOKENS: 460496, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 3.51}),
    # a 0.31.0 smoke run quoted in a test module (prefixes stripped): V2 runner weights, the one-line pool
    ("vllm/v1-0.31.0-qwen25-7b-awq-h200-smoke.log", '0.31.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(5.38), P.KV_CACHE: gib(34.79), P.KV_TOKENS: 651504, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 159.06}),
    # a public benchmark's verbatim 0.31.0 lines (cezarc1/decodebench tests/vllm_logs.py): no weights line quoted
    ("vllm/v1-0.31.0-qwen3-32b-nvfp4-b200-gmu090.log", '0.31.0', True, None, 'main', 1,
     {P.KV_CACHE: gib(136.35), P.KV_TOKENS: 558496, P.MAX_MODEL_LEN: 4096, P.MAX_CONCURRENCY: 136.35}),
    # its MXFP4 twin, the same command (compressed-tensors mxfp4-pack-quantized on every Linear, FlashInfer MXFP4 GEMM)
    ("vllm/v1-0.31.0-qwen3-32b-mxfp4-b200-gmu090.log", '0.31.0', True, None, 'main', 1,
     {P.KV_CACHE: gib(136.79), P.KV_TOKENS: 560288, P.MAX_MODEL_LEN: 4096, P.MAX_CONCURRENCY: 136.79}),
    # a 0.30 benchmark page on a GB10 at gmu 0.55: weights, the graph profiler's fraction line, the one-line pool
    ("vllm/v1-0.30-gpt-oss-20b-gb10-gmu055.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(13.8), P.KV_TOKENS: 1968672, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 60.08}),
    ("vllm/v1-0.30-hermes4-14b-fp8-gb10-gmu055.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(15.34), P.UTILIZATION: 0.55, P.KV_TOKENS: 319328, P.MAX_MODEL_LEN: 32768,
      P.MAX_CONCURRENCY: 9.75}),
    ("vllm/v1-0.30-qwen3-30b-a3b-fp8-gb10-gmu055.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(29.1), P.UTILIZATION: 0.55, P.KV_TOKENS: 394016, P.MAX_MODEL_LEN: 32768,
      P.MAX_CONCURRENCY: 12.02}),
    ("vllm/v1-0.30-qwen36-35b-a3b-fp8-gb10-gmu055.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(33.38), P.UTILIZATION: 0.55, P.KV_TOKENS: 1468523, P.MAX_MODEL_LEN: 32768,
      P.MAX_CONCURRENCY: 44.82}),
    # --kv-cache-memory set on 0.30: the free memory and the pool the worker reserved instead of profiling
    ("vllm/v1-0.30-gemma4-12b-nvfp4-rtx-pro-6000-kv-memory-set.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(9.25), P.FREE_BEFORE_LOAD: gib(93.04), P.KV_CACHE: 55834574848, P.KV_TOKENS: 1078887,
      P.MAX_MODEL_LEN: 65536, P.MAX_CONCURRENCY: 16.46}),
    # an offline LLM() run on 0.27.1: its 8,192 batched tokens from the scheduler's line, the V2 runner's budget line
    ("vllm/v1-0.27.1-qwen25-05b-rtx4090-wsl2-llm-class-gmu092.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(0.93), P.KV_CACHE: gib(20.52), P.CUDA_GRAPHS: 0, P.FREE_BEFORE_LOAD: gib(22.45),
      P.GPU_MEMORY: gib(23.99), P.UTILIZATION: 0.92, P.REQUESTED: gib(22.07), P.ACTIVATION: gib(0.31),
      P.KV_TOKENS: 1793232}),
    ("vllm/v1-0.29dev-qwen3-4b-awq-kv-memory-advice.log", None, True, None, 'main', 1,
     {P.CUDA_GRAPHS: gib(0.22), P.FREE_BEFORE_LOAD: gib(46.99), P.GPU_MEMORY: gib(47.37), P.UTILIZATION: 0.85, P.REQUESTED: gib(40.27), P.ACTIVATION: gib(0.57), P.KV_CACHE: gib(36.88), P.KV_TOKENS: 268560, P.MAX_MODEL_LEN: 2048, P.MAX_CONCURRENCY: 131.13}),
    # repositories' own start-up logs: 0.16's banner over two TP ranks; 0.10.1.1 with FlashInfer's sampler named
    ("vllm/v1-0.16-llama3-70b-awq-2xl40s-tp2.log", '0.16.0', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(18.55), P.KV_CACHE: gib(20.16), P.CUDA_GRAPHS: gib(1.22), P.MAX_MODEL_LEN: 8192, P.KV_TOKENS: 132128, P.MAX_CONCURRENCY: 16.13}),
    ("vllm/v1-0.10.1.1-qwen2-7b-a100-80gb-gmu025.log", '0.10.1.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.2488), P.KV_CACHE: gib(5.01), P.CUDA_GRAPHS: gib(0.5), P.MAX_MODEL_LEN: 16384, P.GPU_BLOCKS: 5867, P.KV_TOKENS: 93872, P.MAX_CONCURRENCY: 5.73}),
    ("vllm/v1-0.10.1.1-qwen2-7b-a100-80gb-gmu050.log", '0.10.1.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.2488), P.KV_CACHE: gib(24.83), P.CUDA_GRAPHS: gib(0.5), P.MAX_MODEL_LEN: 16384, P.GPU_BLOCKS: 29053, P.KV_TOKENS: 464848, P.MAX_CONCURRENCY: 28.37}),
    # 0.10.1 names its workers `VllmWorker TP0` and `VllmWorker TP1` (multiproc_executor.py@v0.10.1.1): kept apart
    ("vllm/v1-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu050.log", '0.10.1.1', True, None, 'TP1', 0,
     {P.WEIGHTS: gib(7.1217), P.KV_CACHE: gib(31.83), P.CUDA_GRAPHS: gib(0.65), P.MAX_MODEL_LEN: 16384, P.GPU_BLOCKS: 74510, P.KV_TOKENS: 1192160, P.MAX_CONCURRENCY: 72.76}),
    # the same repository's TP 2 runs at gmu 0.25 (one node) and over Ray on two nodes, whose workers are named by pid
    ("vllm/v1-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu025.log", '0.10.1.1', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(7.1217), P.KV_CACHE: gib(12.02), P.CUDA_GRAPHS: gib(0.65), P.MAX_MODEL_LEN: 16384, P.GPU_BLOCKS: 28137, P.KV_TOKENS: 450192, P.MAX_CONCURRENCY: 27.48}),
    ("vllm/v1-0.10.1.1-qwen2-7b-2xa100-40gb-tp2-two-nodes.log", '0.10.1.1', True, None, 'pid 374', 0,
     {P.WEIGHTS: gib(7.1217), P.KV_CACHE: gib(11.03), P.CUDA_GRAPHS: gib(1.0), P.MAX_MODEL_LEN: 16384, P.GPU_BLOCKS: 25809, P.KV_TOKENS: 412944, P.MAX_CONCURRENCY: 25.2}),
    ("vllm/v1-0.10.1.1-gpt-oss-120b-4xa100-80gb-tp4-four-nodes.log", '0.10.1.1', True, None, 'pid 345', 0,
     {P.WEIGHTS: gib(17.2217), P.KV_CACHE: gib(45.32), P.MAX_MODEL_LEN: 16384, P.KV_TOKENS: 2640144, P.MAX_CONCURRENCY: 284.25,
      P.MAX_CAPTURE_SIZE: 1024}),
    # vLLM's own issues, 0.11-0.14: a pool line before a refusal the excerpt cuts (vllm#27508), two memory lines of
    # an LLM-class run (vllm#33263), a log cut after torch.compile (vllm#33155)
    ("vllm/v1-0.11-gpt-oss-120b-h100-gmu095-pool.log", None, False, None, 'main', 2,
     {P.KV_CACHE: gib(1.71)}),
    ("vllm/v1-0.14-qwen3-17b-one-seq-24gb.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(18.78), P.KV_TOKENS: 175856}),
    ("vllm/v1-0.14.1-gpt-oss-120b-h100-cut.log", None, False, None, 'main', 1,
     {P.WEIGHTS: gib(64.38)}),
    # gpt-oss's capture override (1024) and the 0.20+ profiler's plan line, cut before any memory figure
    ("vllm/v1-0.24-gpt-oss-120b-tp2-offload-83-graphs-cut.log", None, False, None, None, 2,
     {P.MAX_MODEL_LEN: 131072, P.MAX_CAPTURE_SIZE: 1024, P.GRAPHS_PIECEWISE: 83, P.GRAPHS_FULL: 83}),
    # the 0.11.1+ start-up banner names the version; a blog post's two quoted memory lines follow
    ("vllm/v1-0.19-gpt-oss-20b-a100-gmu065.log", '0.19.0', False, None, 'main', 1,
     {P.WEIGHTS: gib(13.72), P.KV_CACHE: gib(36.56)}),
    # a Gemma 3 start-up without banner (vllm#14696): weights in 'GB' that are GiB, the V1 capacity and concurrency
    ("vllm/v1-0.8-gemma3-1b-32k-kv-tokens.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(1.9134), P.CUDA_GRAPHS: gib(0.44), P.KV_TOKENS: 1139728, P.MAX_MODEL_LEN: 32768,
      P.MAX_CONCURRENCY: 34.78}),
    # ollama#6860: llama-cpp-python over five GPUs; the fifth device's compute buffer (144 MiB with four input copies)
    # is refused after the KV: the excerpt prints no per-device buffer, so the refusing device binds by its request
    ("llama.cpp/ollama-fifth-gpu-compute-oom.log", None, False, 'out-of-memory', 'CUDA4', 0,
     {P.COMPUTE_BUFFER: 150_995_968, P.PIPELINE_COPIES: 4}),
    # ollama#4964: the index's excerpt stops at the pipeline line, before the compute reserve the thread says aborted;
    # an excerpt cut after the KV buffers is read as started (logparse.result), so this one is not a vector
    ("llama.cpp/ollama-qwen2-72b-q2k-two-gpus-cut.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(328.0), P.KV_TOKENS: 2048, P.PIPELINE_COPIES: 4}),
    # repositories' own runs of 0.12-0.16: an LLM-class run whose engine config line names 0.15.1
    ("vllm/v1-0.15.1-llama31-8b-a100-40gb-eager.log", '0.15.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.99), P.KV_CACHE: gib(19.28), P.MAX_MODEL_LEN: 131072, P.KV_TOKENS: 157936, P.MAX_CONCURRENCY: 1.2}),
    # public logs on L40S and RTX 4080 (session 17): lines quoted without a prefix, one aligned by hand
    ("vllm/v1-0.24-qwen3-coder-30b-a3b-4xl40s-tp4.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(23.74), P.KV_TOKENS: 1037152, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 31.65}),
    ("vllm/v1-0.26-qwen25-7b-awq-rtx4080-wsl2.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(8.0), P.KV_TOKENS: 149712, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 4.57}),
    # the driver's advice line (info in 0.10.2: v1/worker/gpu_worker.py@v0.10.2) gives its KV memory in bytes, the
    # other terms rounded to 0.01 GiB; its exact KV memory is the smallest, so that worker binds
    # 0.10.2 through the LLM class on one 80 GB Hopper: the budget line's every term, the pool in exact bytes
    ("vllm/v1-0.10.2-llava16-mistral-7b-h100-llm-class-terms.log", '0.10.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.0786), P.KV_CACHE: 59212694937, P.CUDA_GRAPHS: gib(0.67), P.FREE_BEFORE_LOAD: gib(78.66),
      P.GPU_MEMORY: gib(79.19), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.27), P.ACTIVATION: gib(1.97),
      P.NON_TORCH: gib(0.07), P.MAX_MODEL_LEN: 4096, P.KV_TOKENS: 451744, P.MAX_CONCURRENCY: 110.29,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 5}),
    # (round 29: the binding rank's weights are its own advice line's "27.72 GiB for weight", the excerpt holding
    # only TP0's and TP1's 'Model loading took 27.7183 GiB')
    ("vllm/v1-0.10.2-qwen3-235b-fp8-8xl40s-tp8-ep.log", '0.10.2', True, None, 'TP2 EP2', 0,
     {P.WEIGHTS: gib(27.72), P.KV_CACHE: 11423138508, P.CUDA_GRAPHS: gib(3.45), P.MAX_MODEL_LEN: 32768,
      P.KV_TOKENS: 237344, P.MAX_CONCURRENCY: 7.24, P.FREE_BEFORE_LOAD: gib(43.93), P.GPU_MEMORY: gib(44.42),
      P.UTILIZATION: 0.9, P.REQUESTED: gib(39.98), P.ACTIVATION: gib(1.4), P.NON_TORCH: gib(0.21)}),
    # a Gated DeltaNet hybrid (Qwen3-Next-80B-A3B, TP 2, H200): the same advice line, the pool 7,162 blocks of
    # 12 x 557,056 B (core/memory/gated_delta.py)
    # round 29: Ray Serve's nested prefixes on a 0.26.0 start whose excerpt has no 'Model loading took': the
    # advice line's "15.31 GiB for weight" gives the weights, the Ray actor's pid the rank of its bare `(Worker
    # pid=N)` (ray-project/ray PR #65486)
    ("vllm/v1-0.26.0-qwen3-8b-ray-serve-80gb-131k.log", '0.26.0', True, None, 'pid 29271', 0,
     {P.WEIGHTS: gib(15.31), P.KV_CACHE: gib(54.45), P.CUDA_GRAPHS: gib(1.0), P.FREE_BEFORE_LOAD: gib(78.66),
      P.GPU_MEMORY: gib(79.18), P.UTILIZATION: 0.9, P.REQUESTED: gib(71.26), P.ACTIVATION: gib(1.29),
      P.NON_TORCH: gib(0.22), P.KV_TOKENS: 396448, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 3.02}),
    # round 29: a hybrid's state pool below max_num_seqs, the refusal V1 raises before graph capture (vllm#49064 on
    # 0.28.0, kaito#2319 on 0.25.1): its own failure, the max_num_seqs it names read
    ("vllm/v1-0.28.0-qwen38-27b-h100-mamba-blocks-refused.log", None, False, 'mamba-blocks-below-max-num-seqs', None,
     0, {P.MAX_RUNNING: 1024}),
    ("vllm/v1-0.25.1-qwen36-27b-h100-kaito-mamba-blocks-refused.log", None, False, 'mamba-blocks-below-max-num-seqs',
     None, 0, {P.MAX_RUNNING: 1024}),
    # round 31: 0.15.1 under journald (each line behind its 'Feb 22 ... env[pid]:' prefix), plain AWQ kernel
    ("vllm/v1-0.15.1-qwen25-14b-awq-kernel-rtx3090-16k-journal.log", '0.15.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(9.38), P.KV_CACHE: gib(11.33), P.CUDA_GRAPHS: gib(0.43), P.MAX_MODEL_LEN: 16384,
      P.KV_TOKENS: 61872, P.MAX_CONCURRENCY: 3.78}),
    # round 31: a README's excerpt, the logger prefixes cut to the file:line tags (no version printed)
    ("vllm/v1-0.16-qwen25-05b-rx7900gre-rocm-gmu075-2k-eager.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(0.99), P.KV_CACHE: gib(9.25), P.KV_TOKENS: 808192, P.MAX_MODEL_LEN: 2048,
      P.MAX_CONCURRENCY: 394.62}),
    # round 31: stock 0.25.0's DeepSeek-V4-Flash at TP 2 with an MTP drafter: the drafter inside the weights line,
    # the capture's 'CUDA graph pool memory ... (actual)' over the estimate, the gmu from the graph-profiling line
    ("vllm/v1-0.25.0-dsv4-flash-2x-rtx-pro-6000-tp2-fp8kv-mtp2-1m.log", '0.25.0', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(75.64), P.CUDA_GRAPHS: gib(1.73), P.KV_CACHE: gib(10.29), P.UTILIZATION: 0.95,
      P.MAX_MODEL_LEN: 1048576, P.GRAPHS_PIECEWISE: 42, P.MAX_CAPTURE_SIZE: 384, P.GRAPHS_FULL: 26,
      P.KV_TOKENS: 1993100, P.MAX_CONCURRENCY: 1.9}),
    # round 29: club-3090 rig reports. A non-default args line cut mid-key by the quote gives every whole entry
    # before the cut (TP 2, fp8 KV, 2 sequences: the estimate's inputs); two TP workers' 0.27 advice lines, each
    # its own rank's figures, the smaller pool binding
    ("vllm/v1-0.24-qwen36-27b-fp8-2x-rtx3090-tp2-fp8kv-262k-args-cut.log", None, True, None, 'TP0', 1,
     {P.KV_CACHE: gib(5.33), P.KV_TOKENS: 300220, P.MAX_MODEL_LEN: 262144, P.MAX_CONCURRENCY: 1.15}),
    ("vllm/v1-0.27.1-qwen38-27b-fp8-2x-rtx5090-tp2-advice-per-rank.log", None, False, None, 'TP1', 2,
     {P.CUDA_GRAPHS: gib(0.09), P.FREE_BEFORE_LOAD: gib(30.5), P.GPU_MEMORY: gib(31.4), P.UTILIZATION: 0.92,
      P.REQUESTED: gib(28.88), P.ACTIVATION: gib(1.59), P.KV_CACHE: gib(12.24)}),
    # round 29: a V0 hybrid (Nemotron-Nano-9B-v2, Mamba-2) on an L40S under 0.10.1 dies allocating 33.75 GiB right
    # after its weights: torch's message gives the device total, the loading line the weights (vllm#23230)
    ("vllm/v0.10.1-nemotron-nano-9b-v2-l40s-oom-after-load.log", None, False, 'out-of-memory', 'main', 0,
     {P.WEIGHTS: gib(16.5557), P.GPU_MEMORY: gib(44.40)}),
    ("vllm/v0.10.2-qwen3-next-80b-tp2-h200.log", '0.10.2', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(74.2812), P.KV_CACHE: 47878721024, P.CUDA_GRAPHS: gib(2.37), P.FREE_BEFORE_LOAD: gib(139.21),
      P.GPU_MEMORY: gib(139.81), P.UTILIZATION: 0.9, P.REQUESTED: gib(125.83), P.ACTIVATION: gib(5.58),
      P.NON_TORCH: gib(1.38), P.MAX_MODEL_LEN: 262144, P.GPU_BLOCKS: 7162, P.KV_TOKENS: 973760, P.MAX_CONCURRENCY: 14.77,
      P.ATTENTION_BLOCK: 544}),
    # the same hybrid with prefix caching (mamba cache mode align), the issue's boot-log highlights (club-3090#612)
    ("vllm/v0.24-qwen36-35b-a3b-nvfp4-rtx5090-prefix-align.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(5.98), P.KV_TOKENS: 567978, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 4.33}),
    # RedHatAI's compressed-tensors NVFP4 of the same model on a 32 GB Blackwell card under WSL2 (0.20.0, native
    # FP4: VLLM_CUTLASS MoE, FlashInfer CUTLASS linear), with its weights line (search-index file 51830815744)
    ("vllm/v1-0.20-qwen36-35b-a3b-nvfp4-rtx5090-wsl-cutlass.log", '0.20.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(21.86), P.CUDA_GRAPHS: gib(0.58), P.KV_CACHE: gib(3.07), P.UTILIZATION: 0.9,
      P.MAX_MODEL_LEN: 65536, P.ATTENTION_BLOCK: 2096, P.GRAPHS_PIECEWISE: 3, P.MAX_CAPTURE_SIZE: 4,
      P.GRAPHS_FULL: 1, P.KV_TOKENS: 79648, P.MAX_CONCURRENCY: 4.03,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    # round 27: the same author's rerun at 8,192 batched tokens and capture size 1, docker-compose timestamps kept
    # (search-index file 52377383460), and its GB10 twin from the aarch64 image, no prefix (file 51912001300);
    # the capture's 'CUDA graph pool memory ... (actual)' wins over the estimate line, as in the row above
    ("vllm/v1-0.20-qwen36-35b-a3b-nvfp4-rtx5090-wsl-8k-batch.log", '0.20.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(21.86), P.CUDA_GRAPHS: gib(0.73), P.KV_CACHE: gib(2.95), P.UTILIZATION: 0.9,
      P.MAX_MODEL_LEN: 65536, P.ATTENTION_BLOCK: 2096, P.GRAPHS_PIECEWISE: 1, P.MAX_CAPTURE_SIZE: 1,
      P.GRAPHS_FULL: 1, P.KV_TOKENS: 75456, P.MAX_CONCURRENCY: 3.87,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    ("vllm/v1-0.20-qwen36-35b-a3b-nvfp4-gb10-cutlass.log", '0.20.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(21.86), P.CUDA_GRAPHS: gib(0.64), P.KV_CACHE: gib(82.42), P.UTILIZATION: 0.9,
      P.MAX_MODEL_LEN: 65536, P.ATTENTION_BLOCK: 2096, P.GRAPHS_PIECEWISE: 1, P.MAX_CAPTURE_SIZE: 1,
      P.GRAPHS_FULL: 1, P.KV_TOKENS: 2158880, P.MAX_CONCURRENCY: 108.5,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    # round 27: the GB10 author's MTP run (search-index file 52009230863): its graph estimate is negative
    # (-0.87 GiB, read signed), the capture after the pool took 0.05 GiB and is the term the log ends with; no
    # budget line (vLLM prints it only for a positive estimate), the drafter's load inside the weights line
    ("vllm/v1-0.20-qwen36-35b-a3b-nvfp4-gb10-mtp-negative-graph-estimate.log", '0.20.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(23.43), P.CUDA_GRAPHS: gib(0.05), P.KV_CACHE: gib(66.37), P.MAX_MODEL_LEN: 262144,
      P.ATTENTION_BLOCK: 2128, P.GRAPHS_PIECEWISE: 1, P.MAX_CAPTURE_SIZE: 1, P.KV_TOKENS: 1581104,
      P.MAX_CONCURRENCY: 21.86,
      P.ENCODER_BUDGET: 65536, P.ENCODER_ITEMS: 4}),
    # round 28: the same command without the drafter (search-index file 51900802258): a positive graph estimate, so
    # the budget line (gmu 0.85) is printed, and the capture's actual pool wins over the estimate line
    ("vllm/v1-0.20-qwen36-35b-a3b-nvfp4-gb10-gmu085-262k-no-mtp.log", '0.20.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(21.86), P.CUDA_GRAPHS: gib(0.47), P.KV_CACHE: gib(66.93), P.UTILIZATION: 0.85,
      P.MAX_MODEL_LEN: 262144, P.ATTENTION_BLOCK: 2096, P.GRAPHS_PIECEWISE: 1, P.MAX_CAPTURE_SIZE: 1,
      P.GRAPHS_FULL: 1, P.KV_TOKENS: 1754352, P.MAX_CONCURRENCY: 25.36,
      P.ENCODER_BUDGET: 65536, P.ENCODER_ITEMS: 4}),
    # round 28: the first 0.22 log (AsyncLLMEngine, search-index file 67144197265); its wording is 0.22.0's
    # (gpu_model_runner.py:5132/6279/6365/6456, gpu_worker.py:466/481/619, kv_cache_utils.py:1733/1734 in the wheel)
    ("vllm/v1-0.22.0-qwen25-7b-async-engine-gmu095-4k-48gb.log", '0.22.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.29), P.CUDA_GRAPHS: gib(0.31), P.KV_CACHE: gib(26.32), P.UTILIZATION: 0.95,
      P.MAX_MODEL_LEN: 4096, P.GRAPHS_PIECEWISE: 35, P.MAX_CAPTURE_SIZE: 256, P.GRAPHS_FULL: 19,
      P.KV_TOKENS: 492912, P.MAX_CONCURRENCY: 120.34}),
    # and a second AsyncLLMEngine run of 0.22.0 (search-index file 56036894944): Qwen3.5-4B, a Gated DeltaNet hybrid
    # whose attention block (528) is printed, the same 35/19 graphs of the engine context's 128 sequences
    ("vllm/v1-0.22.0-qwen35-4b-async-engine-gmu05-1k.log", '0.22.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(8.61), P.CUDA_GRAPHS: gib(0.35), P.KV_CACHE: gib(12.85), P.UTILIZATION: 0.5,
      P.MAX_MODEL_LEN: 1024, P.ATTENTION_BLOCK: 528, P.GRAPHS_PIECEWISE: 35, P.MAX_CAPTURE_SIZE: 256,
      P.GRAPHS_FULL: 19, P.KV_TOKENS: 163225, P.MAX_CONCURRENCY: 159.4,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    # the same author's LLM-class run of the day before (search-index file 55770092662): LLM_CLASS's 8,192 tokens and
    # 256 sequences on the small tier, so 51/35 graphs up to 512 where the engine context kept 35/19
    ("vllm/v1-0.22.0-qwen35-4b-llm-class-gmu05-1k.log", '0.22.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(8.61), P.CUDA_GRAPHS: gib(0.55), P.KV_CACHE: gib(11.11), P.UTILIZATION: 0.5,
      P.MAX_MODEL_LEN: 1024, P.ATTENTION_BLOCK: 528, P.GRAPHS_PIECEWISE: 51, P.MAX_CAPTURE_SIZE: 512,
      P.GRAPHS_FULL: 35, P.KV_TOKENS: 141107, P.MAX_CONCURRENCY: 137.8,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    # round 27: a blog post's four quoted lines of a 0.28.0 start (Qwen3-14B, L40S), no version, prefix or
    # banner; 'Model loading took 27.52 GiB and 6.27 seconds' is the post's edit of the 0.28.0 wording
    ("vllm/v1-0.28.0-qwen3-14b-l40s-defaults.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(27.52), P.KV_CACHE: gib(11.57), P.KV_TOKENS: 75824, P.MAX_MODEL_LEN: 40960,
      P.MAX_CONCURRENCY: 1.85}),
    # issue 32's warm-up evidence: a bare sampler warm-up death, the only line the issue quotes (llm-d#787)
    ("vllm/v1-0.11-qwen3-32b-tp2-h100-gmu095-sampler-oom.log", None, False, 'out-of-memory-warming-up-sampler', None, 0,
     {P.MAX_RUNNING: 1024}),
    # issue 32's warm-up evidence with PyTorch's summary: graphs took 3.49 GiB, then the sampler warm-up died
    ("vllm/v1-0.11-qwen25-math-15b-80gb-gmu095-sampler-oom.log", '0.11.0', False, 'out-of-memory-warming-up-sampler',
     'main', 0,
     {P.WEIGHTS: gib(2.8798), P.KV_CACHE: gib(70.35), P.CUDA_GRAPHS: gib(3.49), P.GPU_MEMORY: gib(79.33),
      P.MAX_MODEL_LEN: 4096, P.KV_TOKENS: 2634544, P.MAX_CONCURRENCY: 643.2, P.MAX_RUNNING: 1024,
      P.GRAPHS_PIECEWISE: 67, P.GRAPHS_FULL: 67}),
    # session 18: public logs of 0.10.1-0.24 (a lab guide's "INFO [...]" lines, an LLM-class run, a cut traceback
    # whose negative KV budget is the refusal, a report's reflowed error, a repository's banked serve log)
    ("vllm/v1-0.11.2-qwen25-15b-rtx2000-ada-gmu06.log", '0.11.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.8871), P.KV_CACHE: gib(5.03), P.CUDA_GRAPHS: gib(0.49), P.MAX_MODEL_LEN: 32768,
      P.KV_TOKENS: 188512, P.MAX_CONCURRENCY: 5.75, P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 35}),
    # "took -0.22 GiB": the capture gave memory back, read with its sign (round 27; unread before)
    ("vllm/v1-0.13-gemma3-1b-llm-class-gmu095-2k.log", '0.13.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(1.9148), P.KV_CACHE: gib(25.39), P.MAX_MODEL_LEN: 2048, P.KV_TOKENS: 950864,
      P.MAX_CONCURRENCY: 461.21, P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 35, P.CUDA_GRAPHS: gib(-0.22)}),
    ("vllm/v1-0.10.1-gpt-oss-120b-h100-pcie-no-kv-memory.log", None, False, 'no-kv-memory', 'main', 0,
     {P.WEIGHTS: gib(65.9651)}),
    # the refusal quoted reflowed over three lines (no '(' before the needed GiB) is read as one line
    ("vllm/v1-0.23-llama31-70b-fp8-rtx-pro-6000-gmu075-refused.log", None, False, 'kv-below-max-model-len', 'main', 0,
     {P.KV_CACHE: gib(0.3), P.MAX_MODEL_LEN: 16384, P.KV_NEEDED: gib(5.0), P.ESTIMATED_MAX_LEN: 976}),
    # the same refusal reflowed at the same comma, with its '(' (a 0.28.0 record on an L4)
    ("vllm/v1-0.28.0-qwen25-7b-awq-l4-gmu035-32k-refused.log", None, False, 'kv-below-max-model-len', None, 0,
     {P.MAX_MODEL_LEN: 32768, P.KV_NEEDED: gib(1.75), P.KV_CACHE: gib(1.1), P.ESTIMATED_MAX_LEN: 20512}),
    ("vllm/v1-0.24-qwen25-7b-shape-8k-vast-serve.log", '0.24.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.37), P.CUDA_GRAPHS: gib(0.65), P.KV_CACHE: gib(11.92), P.KV_TOKENS: 223152,
      P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 27.24, P.UTILIZATION: 0.9}),
    # a test file's four verbatim lines: no weights line
    ("vllm/v1-0.26-llama31-8b-a40-4k.log", '0.26.0', True, None, 'main', 1,
     {P.KV_CACHE: gib(23.9), P.KV_TOKENS: 195760}),
    # wrapped lines joined as the engine printed them; no version line (0.28.0 by the notes and the line numbers)
    ("vllm/v1-0.28-qwen25-7b-awq-rtx-pro-4000-8k.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(13.42), P.KV_TOKENS: 251344, P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 30.68}),
    # the V2 model runner's lines (model_runner.py) and its budget line: peak activation without a graph estimate
    ("vllm/v1-0.27.1-qwen25-05b-rtx4090-wsl2-gmu085.log", '0.27.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(0.93), P.KV_CACHE: gib(19.06), P.CUDA_GRAPHS: gib(0.28), P.FREE_BEFORE_LOAD: gib(22.45),
      P.GPU_MEMORY: gib(23.99), P.UTILIZATION: 0.85, P.REQUESTED: gib(20.39), P.ACTIVATION: gib(0.08),
      P.KV_TOKENS: 1665392}),
    # round 22: a blog post's TP 4 run under 0.27.1 (V1 runner: gpu_model_runner.py's weights line); the version is
    # the post's, not the log's; each worker prints the budget line, the ranks' figures agree
    ("vllm/v1-0.27.1-qwen3-235b-fp8-4x-rtx-pro-6000-tp4.log", None, True, None, 'TP0', 0,
     {P.WEIGHTS: gib(55.19), P.FREE_BEFORE_LOAD: gib(94.05), P.GPU_MEMORY: gib(95.01), P.UTILIZATION: 0.9,
      P.REQUESTED: gib(85.51), P.ACTIVATION: gib(0.76), P.CUDA_GRAPHS: gib(0.32), P.KV_CACHE: gib(27.85),
      P.KV_TOKENS: 621392, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 18.96}),
    # round 19: a guide's abridged ROCm run (banner, weights, pool; no budget line); a TP 2 run at gmu 0.2
    ("vllm/v1-0.17.1-qwen25-14b-mi300x-rocm.log", '0.17.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(27.63), P.KV_CACHE: gib(141.96), P.KV_TOKENS: 775280, P.MAX_MODEL_LEN: 32768,
      P.MAX_CONCURRENCY: 23.66}),
    ("vllm/v1-0.17.0-qwen3-8b-awq-tp2-sm89-gmu02.log", '0.17.0', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(2.85), P.KV_CACHE: gib(4.89), P.CUDA_GRAPHS: gib(1.65), P.MAX_MODEL_LEN: 32768,
      P.KV_TOKENS: 71152, P.MAX_CONCURRENCY: 2.17}),
    # a 0.19.1 baseline on an A100 40GB: the graphs taken after the pool (2.44 GiB actual, 2.35 vLLM's estimate)
    # 0.9.1's refusal alone (core.py:515's traceback): the available KV memory and the max model length it names
    ("vllm/v1-0.9.1-r1-0528-qwen3-8b-rtx3090-32k-refused.log", None, False, 'kv-below-max-model-len', None, 0,
     {P.KV_CACHE: gib(4.47), P.MAX_MODEL_LEN: 32768, P.KV_NEEDED: gib(4.50), P.ESTIMATED_MAX_LEN: 32560}),
    # 0.11.0 at TP 4 (Worker_TP ranks, four equal KV lines; the Qwen3-VL encoder profiles one video item)
    ("vllm/v1-0.11-qwen3-vl-30b-a3b-4x-rtx3090-tp4-64k.log", '0.11.0', True, None, 'TP2', 0,
     {P.WEIGHTS: gib(14.7708), P.KV_CACHE: gib(2.31), P.CUDA_GRAPHS: gib(1.92), P.MAX_MODEL_LEN: 65536,
      P.GPU_BLOCKS: 6297, P.KV_TOKENS: 100752, P.MAX_CONCURRENCY: 1.54, P.GRAPHS_PIECEWISE: 67, P.GRAPHS_FULL: 35,
      P.ENCODER_BUDGET: 153600, P.ENCODER_ITEMS: 1}),
    # 0.10.1.1 with the colour codes a notebook kept ("[1;36m(EngineCore_0 pid=82)[0;0m", escape bytes dropped)
    ("vllm/v1-0.10.1.1-llama31-8b-fp16-ansi-131k.log", '0.10.1.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9889), P.KV_CACHE: gib(19.25), P.CUDA_GRAPHS: gib(0.52), P.MAX_MODEL_LEN: 131072,
      P.GPU_BLOCKS: 9853, P.KV_TOKENS: 157648, P.MAX_CONCURRENCY: 1.2, P.GRAPHS_PIECEWISE: 67}),
    # 0.9.1 behind `docker compose logs`' own timestamp ("2025-11-24 13:54:43.087 | INFO 11-23 ...")
    ("vllm/v1-0.9.1-dotsocr-wsl-compose-timestamps.log", '0.9.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(5.7174), P.KV_CACHE: gib(3.65), P.CUDA_GRAPHS: gib(0.31), P.GPU_BLOCKS: 8537, P.KV_TOKENS: 136592,
      P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 1.04,
      P.ENCODER_BUDGET: 14400, P.ENCODER_ITEMS: 1}),
    # 0.11.0 through the LLM class (no process prefix): a negative pool, then "No available memory for the cache
    # blocks"; the failure is the negative KV line, which is not a pool size
    # Qwen2.5-VL-7B at 128,000 tokens, 0.23.0: profiled with one video, a negative KV line, refused
    # Gemma 4 31B at gmu 0.94, 0.23.0 (round 25): the graph estimate before the pool, the measured pool after
    ("vllm/v1-0.23-gemma4-31b-96gb-gmu094-32k-kaggle.log", '0.23.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(58.99), P.KV_CACHE: gib(28.41), P.CUDA_GRAPHS: gib(0.10), P.UTILIZATION: 0.94,
      P.MAX_MODEL_LEN: 32768, P.KV_TOKENS: 97541, P.MAX_CONCURRENCY: 2.98, P.GRAPHS_PIECEWISE: 8,
      P.MAX_CAPTURE_SIZE: 40, P.GRAPHS_FULL: 5,
      P.ENCODER_BUDGET: 8192, P.ENCODER_ITEMS: 3}),
    # QwenLM/Qwen3-VL#1057: 0.8.2 prints "Model loading took ... GB" for GiB; the version is not in the excerpt
    ("vllm/v1-0.8.2-qwen25-vl-7b-h100-llm-class-10-images-10-videos.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(15.6271), P.CUDA_GRAPHS: gib(0.63), P.KV_TOKENS: 905648, P.MAX_MODEL_LEN: 128000,
      P.MAX_CONCURRENCY: 7.08,
      P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1}),
    ("vllm/v1-0.23-qwen25-vl-7b-a100-80gb-gmu022-video-refused.log", '0.23.0', False, 'no-kv-memory', 'main', 0,
     {P.WEIGHTS: gib(15.67), P.CUDA_GRAPHS: gib(0.53), P.UTILIZATION: 0.22, P.MAX_MODEL_LEN: 128000,
      P.GRAPHS_PIECEWISE: 51, P.MAX_CAPTURE_SIZE: 512, P.GRAPHS_FULL: 35,
      P.ENCODER_BUDGET: 114688, P.ENCODER_ITEMS: 1}),
    ("vllm/v1-0.11-llava16-mistral-7b-rtx5080-wsl-no-cache-blocks.log", '0.11.0', False, 'no-kv-memory', 'main', 0,
     {P.WEIGHTS: gib(14.0786), P.MAX_MODEL_LEN: 4096,
      P.ENCODER_BUDGET: 8192, P.ENCODER_ITEMS: 1}),
    # VLLM_LOGGING_LEVEL=DEBUG on a 0.10.1 development build: the budget (free memory, gmu, gmu x total) and the
    # profile's activation and non-torch terms, beside the info lines; the version is setuptools-scm's fallback
    ("vllm/v1-0.10dev-llama32-1b-debug-profile.log", '0.1.dev8168+g475c1a0', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.3185), P.FREE_BEFORE_LOAD: gib(43.82), P.UTILIZATION: 0.9, P.REQUESTED: gib(39.88),
      P.ACTIVATION: gib(0.45), P.NON_TORCH: gib(0.02), P.KV_CACHE: gib(37.10), P.MAX_MODEL_LEN: 131072,
      P.GPU_BLOCKS: 75972, P.KV_TOKENS: 1215552, P.MAX_CONCURRENCY: 9.27}),
    # 0.18.0 eager through the LLM class on a pre-Ampere card (TRITON_ATTN); "13.1 GiB" as format_gib prints it
    ("vllm/v1-0.18-qwen25-7b-fp16-eager-llm-class-sm70.log", '0.18.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.25), P.KV_CACHE: gib(13.1), P.MAX_MODEL_LEN: 32768, P.KV_TOKENS: 245360,
      P.MAX_CONCURRENCY: 7.49}),
    ("vllm/v1-0.19.1-qwen3-8b-a100-40gb-defaults.log", '0.19.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(15.27), P.CUDA_GRAPHS: gib(2.44), P.KV_CACHE: gib(19.36), P.MAX_MODEL_LEN: 40960,
      P.KV_TOKENS: 140960, P.MAX_CONCURRENCY: 3.44, P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 35,
      P.MAX_CAPTURE_SIZE: 512}),
    # round 30: a Korean EKS lesson's 0.19.0 start of Qwen2.5-72B at TP 4 on 4x L40S (TP0's lines, the engine's tokens)
    ("vllm/v1-0.19.0-qwen25-72b-4x-l40s-tp4-8k.log", '0.19.0', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(33.98), P.CUDA_GRAPHS: gib(2.62), P.KV_CACHE: gib(5.11), P.MAX_MODEL_LEN: 8192,
      P.GRAPHS_PIECEWISE: 51, P.MAX_CAPTURE_SIZE: 512, P.GRAPHS_FULL: 35, P.KV_TOKENS: 67024, P.MAX_CONCURRENCY: 8.18}),
    # an L40S notebook's 0.19.0 LLM-class start of Qwen3.5-9B: the hybrid's attention block and the encoder budget
    ("vllm/v1-0.19.0-qwen35-9b-l40s-llm-class-262k.log", '0.19.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(17.66), P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1, P.CUDA_GRAPHS: gib(0.65),
      P.KV_CACHE: gib(20.27), P.MAX_MODEL_LEN: 262144, P.ATTENTION_BLOCK: 528, P.GRAPHS_PIECEWISE: 51,
      P.MAX_CAPTURE_SIZE: 512, P.GRAPHS_FULL: 35, P.KV_TOKENS: 165792, P.MAX_CONCURRENCY: 2.52}),
    # the same note's author's earlier 0.9.2 start (Qwen3-8B, A100 40GB): the engine's blocks line after the pool
    ("vllm/v1-0.9.2-qwen3-8b-a100-40gb-defaults.log", '0.9.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(15.2683), P.KV_CACHE: gib(18.69), P.CUDA_GRAPHS: gib(2.24), P.MAX_MODEL_LEN: 40960,
      P.KV_TOKENS: 136080, P.MAX_CONCURRENCY: 3.32, P.GPU_BLOCKS: 8505}),
    # a KServe pod's TP 2 lines (two L4s): ANSI-coloured worker prefixes, the pool printed twice, one concurrency line
    # wrapped by the page; no version and no weights line (one missing); the ranks tie, the last listed binds
    ("vllm/v1-0.9.2-qwen25-vl-7b-2x-l4-tp2-kserve.log", None, True, None, 'rank 1', 1,
     {P.KV_CACHE: gib(10.04), P.KV_TOKENS: 375968, P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 45.89}),
    # a Colab T4's V0 0.7.2 profile inside an Unsloth training process: '# CUDA blocks' and Unsloth's banner lines
    ("vllm/v0.7.2-qwen25-15b-t4-colab-unsloth-gmu050.log", '0.7.2', True, None, 'main', 0,
     {P.WEIGHTS: gib(2.89), P.GPU_MEMORY: gib(14.56), P.UTILIZATION: 0.5, P.REQUESTED: gib(7.28),
      P.NON_TORCH: gib(0.01), P.ACTIVATION: gib(2.02), P.KV_CACHE: gib(2.36), P.CUDA_GRAPHS: gib(0.17),
      P.GPU_BLOCKS: 5517, P.CPU_BLOCKS: 9362, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 2.69, P.KV_TOKENS: 88272,
      P.BLOCK_SIZE: 16}),
    # the same GB10 host's development build (0.18.1rc1.dev147) with Qwen3.5-35B-A3B-FP8: hybrid block, encoder budget
    ("vllm/v1-0.18.1dev-qwen35-35b-a3b-fp8-gb10-gmu080-262k.log", '0.18.1rc1.dev147+g290809456', True, None, 'main',
     0, {P.WEIGHTS: gib(34.22), P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1, P.CUDA_GRAPHS: gib(0.04),
         P.KV_CACHE: gib(55.72), P.MAX_MODEL_LEN: 262144, P.ATTENTION_BLOCK: 1056, P.GRAPHS_PIECEWISE: 51,
         P.MAX_CAPTURE_SIZE: 512, P.GRAPHS_FULL: 35, P.KV_TOKENS: 729696, P.MAX_CONCURRENCY: 10.85}),
    # NVIDIA's 26.01 container on a GB10: its banner and vLLM's development-style version (0.13.0+faa43dbf.nv26.01)
    ("vllm/v1-0.13.0-nv26.01-qwen3-30b-a3b-fp8-gb10-gmu030.log", '0.13.0+faa43dbf.nv26.01', True, None, 'main', 0,
     {P.WEIGHTS: gib(29.0435), P.KV_CACHE: gib(4.04), P.CUDA_GRAPHS: gib(1.28), P.MAX_MODEL_LEN: 32768,
      P.KV_TOKENS: 88176, P.MAX_CONCURRENCY: 2.69}),
    # an audit trail's seven quoted lines (GLM-4-9B-Chat on an H200, LLM class, gmu 0.6): the engine line cut after
    # its development build's version, no fraction printed
    ("vllm/v1-0.19.2dev-glm4-9b-h200-gmu060-llm-class.log", '0.19.2rc1.dev100+gf946659ff', True, None, 'main', 0,
     {P.WEIGHTS: gib(17.56), P.KV_CACHE: gib(63.82), P.KV_TOKENS: 1673040}),
    # a Modal log view (no file tags, its own time stamps) of a 0.18.0 LLM-class start: Qwen3.5-9B, fp8 KV, L40S
    ("vllm/v1-0.18.0-qwen35-9b-fp8kv-l40s-modal-64k.log", '0.18.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(17.66), P.CUDA_GRAPHS: gib(1.29), P.KV_CACHE: gib(20.27), P.MAX_MODEL_LEN: 65536,
      P.ATTENTION_BLOCK: 1056, P.KV_TOKENS: 331584, P.MAX_CONCURRENCY: 18.23,
      P.ENCODER_BUDGET: 16384}),
    # a test file's three verbatim lines of a 0.19.1 start (Qwen3-8B, an 80 GB card): no weights line, so one missing
    ("vllm/v1-0.19.1-qwen3-8b-80gb-pod-profiled.log", '0.19.1', True, None, 'main', 1,
     {P.KV_CACHE: gib(53.54), P.KV_TOKENS: 389888}),
    # a notebook summary's lines (Qwen3-Reranker-8B on an RTX PRO 6000, 0.20's line numbers): no version line
    ("vllm/v1-0.20-qwen3-reranker-8b-rtx-pro-6000-gmu085-1k.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(15.26), P.KV_CACHE: gib(62.35), P.KV_TOKENS: 454016, P.MAX_MODEL_LEN: 1024,
      P.MAX_CONCURRENCY: 443.38}),
    # a blog's log cut after the arguments: the version, nothing sized
    ("vllm/v1-0.20.0-llama31-8b-awq-t4-g4dn-cut.log", '0.20.0', False, None, None, 2, {}),
    # a forum reply's four quoted lines (DeepSeek-V4-Flash, 2x GB10, TP 2 + EP, a 0.20-0.21 development build): the
    # fraction comes from the graph-profiling line alone; no weights, pool-size or version line
    ("vllm/v1-0.21dev-dsv4-flash-2x-gb10-tp2-ep-1m.log", None, False, None, 'TP0 EP0', 2,
     {P.CUDA_GRAPHS: gib(0.70), P.KV_CACHE: gib(27.93), P.UTILIZATION: 0.9, P.MAX_MODEL_LEN: 1048576}),
    # the same model on two GB10s with an MTP drafter (round 25): the development build's banner, the non-default
    # args' speculative_config dict, weights with the drafter's layer, the graph estimate and the measured pool
    ("vllm/v1-0.21dev-dsv4-flash-2x-gb10-tp2-mtp2-200k-gmu08.log", '0.21.1rc1.dev339+g1967a5627bc3', True, None,
     'TP0', 0,
     {P.WEIGHTS: gib(75.86), P.CUDA_GRAPHS: gib(0.34), P.KV_CACHE: gib(18.65), P.UTILIZATION: 0.8,
      P.MAX_MODEL_LEN: 200000, P.GRAPHS_PIECEWISE: 5, P.MAX_CAPTURE_SIZE: 24, P.GRAPHS_FULL: 3,
      P.KV_TOKENS: 1001650, P.MAX_CONCURRENCY: 5.01}),
    # benchmark_throughput.py runs: V0 blocks of 16, started by the graph-capture line
    ("vllm/v0.4.0.post1-opt-125m-a100-80gb-llm-class.log", '0.4.0.post1', True, None, 'main', 0,
     {P.WEIGHTS: gib(0.2389), P.GPU_BLOCKS: 127981, P.CPU_BLOCKS: 7281, P.KV_TOKENS: 2047696, P.BLOCK_SIZE: 16}),
    # an issue's quoted blocks line, no timestamp or source location; the command on its own line is not read
    ("vllm/v0.2.4-codellama-13b-2x4090-tp2-16k.log", None, True, None, None, 1,
     {P.GPU_BLOCKS: 1464, P.CPU_BLOCKS: 1310, P.KV_TOKENS: 23424, P.BLOCK_SIZE: 16}),
    ("vllm/v0.2.7-llama2-13b-chat-llm-class-80gb.log", None, True, None, None, 1,
     {P.GPU_BLOCKS: 3418, P.CPU_BLOCKS: 327, P.KV_TOKENS: 54688, P.BLOCK_SIZE: 16}),
    # round 22: 0.2.6 and 0.2.7 print the blocks line and no weights line (a Modal README, an OpenLLM notes page)
    ("vllm/v0.2.6-mistral-7b-2xa10g-tp2-gmu095-32k-modal.log", None, True, None, None, 1,
     {P.GPU_BLOCKS: 11351, P.CPU_BLOCKS: 4096, P.KV_TOKENS: 181616, P.BLOCK_SIZE: 16}),
    ("vllm/v0.2.7-mistral-7b-v01-openllm-gmu09-15k.log", None, True, None, None, 1,
     {P.GPU_BLOCKS: 2043, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 32688, P.BLOCK_SIZE: 16}),
    # 0.4.1's version line, weights and blocks lines (a benchmark README on an RTX 3090)
    ("vllm/v0.4.1-llama3-8b-rtx3090-8k-xformers.log", '0.4.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9595), P.GPU_BLOCKS: 2358, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 37728, P.BLOCK_SIZE: 16}),
    ("vllm/v0.4.1-llama3-8b-rtx3090-8k-flashattn-bench.log", '0.4.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9595), P.GPU_BLOCKS: 2354, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 37664, P.BLOCK_SIZE: 16}),
    # NIM 1.0's vLLM 0.4.1: timestamps with milliseconds on some lines ("22:28:20.644")
    ("vllm/v0.4.1-nim-1.0-llama3-8b-tp1-80gb.log", '0.4.1', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9595), P.GPU_BLOCKS: 27793, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 444688, P.BLOCK_SIZE: 16}),
    # a Colab T4's 0.6.6.post1 profile line (CUDA total 14.56 GiB) and blocks and concurrency lines
    ("vllm/v0.6.6.post1-qwen25-05b-t4-colab-llm-class.log", '0.6.6.post1', True, None, 'main', 0,
     {P.WEIGHTS: gib(0.93), P.GPU_MEMORY: gib(14.56), P.UTILIZATION: 0.9, P.REQUESTED: gib(13.11),
      P.NON_TORCH: gib(0.11), P.ACTIVATION: gib(1.44), P.KV_CACHE: gib(10.63), P.CUDA_GRAPHS: gib(0.13),
      P.GPU_BLOCKS: 58059, P.CPU_BLOCKS: 21845, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 28.35, P.KV_TOKENS: 928944,
      P.BLOCK_SIZE: 16}),
    # a runbook's lines elided by its author ("# GPU blocks: 10533 ... Maximum concurrency ... 41.14x"): not vLLM's
    # format, so only the weights line is read and the blocks line is missing (EXCLUDED in the public vectors)
    ("vllm/v0.6.6.post1-qwen25-3b-t4-fp16-eager-4k-colab.log", None, True, None, 'main', 1,
     {P.WEIGHTS: gib(5.7915)}),
    # 0.3.3 prints the blocks line and no weights line (llm_engine.py@v0.3.3): one essential line missing here, none
    # once the release is known (test_a_release_before_the_weights_line_misses_only_the_blocks)
    ("vllm/v0.3.3-mistral-7b-v01-mig-40gb-ray.log", None, True, None, None, 1,
     {P.GPU_BLOCKS: 9010, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 144160, P.BLOCK_SIZE: 16}),
    ("vllm/v0.5.4-llama31-8b-bf16-a100-bench-512.log", '0.5.4', True, None, 'main', 0,
     {P.WEIGHTS: gib(14.9888), P.GPU_BLOCKS: 9930, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 158880, P.BLOCK_SIZE: 16}),
    ("vllm/v0.5.4-llama31-8b-gptq-marlin-a100-bench-512.log", '0.5.4', True, None, 'main', 0,
     {P.WEIGHTS: gib(5.3494), P.GPU_BLOCKS: 14858, P.CPU_BLOCKS: 2048, P.KV_TOKENS: 237728, P.BLOCK_SIZE: 16}),
    # ollama 0.20.2's runner: the kv size line gives cells and sequences
    ("llama.cpp/ollama-0.20.2-qwen25-coder-7b-q4km-rtx3060-4096.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(4168.09), P.KV_CACHE: mib(224.0), P.COMPUTE_BUFFER: mib(304.0), P.LAYERS_OFFLOADED: 29,
      P.LAYERS_TOTAL: 29, P.SEQUENCES: 1, P.KV_TOKENS: 4096}),
    # ollama 0.5's runner (January 2025): the runner's --n-gpu-layers 29 of 41, --no-mmap's CUDA_Host weights on
    # the CPU, the KV split 29/11 layers between CUDA0 and the CPU; phi-4's imported GGUF (sliding_window 0) then
    # fails an assertion after the KV buffers, which is no memory failure
    ("llama.cpp/ollama-0.5-phi4-q4km-rtx4060-laptop-29-of-41-no-mmap-swa-assert.log", None, False, 'engine-error',
     'CUDA0', 0,
     {P.FREE_BEFORE_LOAD: mib(7099), P.WEIGHTS: mib(5731.89), P.KV_CACHE: mib(290.0), P.LAYERS_OFFLOADED: 29,
      P.LAYERS_TOTAL: 41, P.KV_TOKENS: 2048}),
    # llamafile's llava of October 2024 on a CPU: its build record is llamafile's fixed pair, not the build (no
    # version); the llava build loads the CLIP projector first ("MB" figures) and its two terms stay the projector's
    ("llama.cpp/llamafile-llava-v15-7b-q4-cpu-clip-first-build-json.log", None, True, None, 'CPU', 0,
     {P.PROJECTOR_WEIGHTS: mib(169.18), P.PROJECTOR_COMPUTE: mib(32.89), P.WEIGHTS: mib(3891.24),
      P.KV_CACHE: mib(1024), P.COMPUTE_BUFFER: mib(164.01), P.KV_TOKENS: 2048}),
    # the vision projector's warm-up refused on a P100 (flash attention off): the refused reserve is the projector's
    # compute buffer, not a text model's
    ("llama.cpp/qwen36-mmproj-q8-p100-no-fa-clip-warmup-compute-oom.log", None, False, 'out-of-memory', 'CUDA0', 0,
     {P.PROJECTOR_WEIGHTS: mib(613.14), P.PROJECTOR_COMPUTE: 4_884_066_560}),
    # sched_reserve's compute lines (a source build of late 2026)
    ("llama.cpp/qwen3-4b-q4km-8192-sched-reserve.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(2375.91), P.KV_CACHE: mib(1152.0), P.COMPUTE_BUFFER: mib(85.01), P.LAYERS_OFFLOADED: 37,
      P.LAYERS_TOTAL: 37}),
    # one quoted KV line: the weights line is missing
    ("llama.cpp/qwen3-1.7b-rtx5060ti-16384-one-line.log", None, True, None, 'CUDA0', 1, {P.KV_CACHE: mib(1792.0)}),
    # Metal (build 8164): MTL0_Mapped weights, the device line's "(unknown id)", gpt-oss's two caches summed (the
    # full one's 131,072 cells are the capacity); the CPU compute buffer (268.77 MiB) holds the 256 MiB f32 mask
    ("llama.cpp/gpt-oss-20b-metal-m5-b8164-iswa.log", '8164', True, None, 'MTL0', 0,
     {P.FREE_BEFORE_LOAD: mib(18185.0), P.WEIGHTS: mib(11536.18), P.KV_CACHE: mib(3072.0) + mib(18.0),
      P.COMPUTE_BUFFER: mib(420.08), P.LAYERS_OFFLOADED: 25, P.LAYERS_TOTAL: 25, P.SEQUENCES: 1,
      P.KV_TOKENS: 131072, P.PIPELINE_COPIES: 1}),
    # Vulkan over two devices (Docker Model Runner): `build_info: b1-e365e65` is Docker's own count, not a llama.cpp
    # build; the compute reserve fails on Vulkan1, is retried without pipeline parallelism and fails again
    # ROCm/ROCm#6227: b9106's `build_info: b9106-dd9280a66`, common_params_fit_impl's lines (no figure read), the
    # device line from llama_prepare_model_devices; a driver error ends the warm-up (not memory)
    # --fit's breakdown table: the device's total and the free memory it fitted against (its model, context and
    # compute columns are dry runs, not read)
    ("llama.cpp/granite-4.1-8b-rocm-rx9070xt-b9106-fit-ctx.log", '9106', False, 'engine-error', 'ROCm1', 0,
     {P.GPU_MEMORY: mib(16304), P.FREE_AT_FIT: mib(16140), P.FREE_BEFORE_LOAD: mib(16152.0), P.WEIGHTS: mib(9938.39), P.KV_CACHE: mib(4920.0), P.COMPUTE_BUFFER: mib(204.0),
      P.LAYERS_OFFLOADED: 41, P.LAYERS_TOTAL: 41, P.SEQUENCES: 4, P.KV_TOKENS: 31488, P.PIPELINE_COPIES: 1}),
    # ollama's runner of May 2026 on ROCm: full-size SWA cache, two split streams ("2/2 seqs"), two KV lines summed
    ("llama.cpp/ollama-gemma2-2b-rocm-rx6600-swa-full-two-streams.log", None, True, None, 'ROCm0', 0,
     {P.FREE_BEFORE_LOAD: mib(7512.0), P.WEIGHTS: mib(1548.29), P.KV_CACHE: mib(832.0) * 2,
      P.COMPUTE_BUFFER: mib(252.25), P.LAYERS_OFFLOADED: 27, P.LAYERS_TOTAL: 27, P.SEQUENCES: 2, P.KV_TOKENS: 16384}),
    # ollama's Go engine prints no llama.cpp buffer line: its memory summary (ml/device.go, 0.1 GiB steps) gives the
    # devices' figures, its load request the context (KvSize) and slots (Parallel)
    ("llama.cpp/ollama-go-engine-qwen3-coder-next-20-of-49-layers.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: gib(19.9), P.KV_CACHE: gib(1.1), P.COMPUTE_BUFFER: mib(884.1), P.LAYERS_OFFLOADED: 20,
      P.LAYERS_TOTAL: 49, P.SEQUENCES: 1, P.KV_TOKENS: 32768}),
    # the same summary at debug level (a fit pass), grepped out of a Docker log: no load request, no layer count
    ("llama.cpp/ollama-go-engine-qwen3-30b-a3b-q8-a10-debug-summary.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: gib(18.5), P.KV_CACHE: gib(1.9), P.COMPUTE_BUFFER: mib(190.5)}),
    # round 27: llama-cli under a German locale (decimal commas) on SYCL: its device name holds parentheses, the
    # breakdown table printed at exit gives the total and free memory
    ("llama.cpp/qwen25-7b-mathtutor-f16-sycl-a770-b7300-decimal-comma.log", '7300', True, None, 'SYCL0', 0,
     {P.FREE_BEFORE_LOAD: mib(15473), P.WEIGHTS: mib(13486.77), P.KV_CACHE: mib(224), P.COMPUTE_BUFFER: mib(304),
      P.GPU_MEMORY: mib(15473), P.FREE_AT_FIT: mib(15473), P.LAYERS_OFFLOADED: 29, P.LAYERS_TOTAL: 29,
      P.SEQUENCES: 1, P.KV_TOKENS: 4096}),
    # spring 2025's bare "init:" KV line (llama_kv_cache_unified::init); the compute buffer is Vulkan's refused request
    ("llama.cpp/vulkan-60-layer-q8-k-init-allocation-limit.log", None, False, 'out-of-memory', 'Vulkan0', 0,
     {P.KV_CACHE: mib(13800), P.COMPUTE_BUFFER: 2166360064}),
    # an MTP image of May 2026: its build_info count (b484) is no llama.cpp build; the MTP draft context after the
    # target's (KV 272 MiB, compute 495 MiB) is not read, so the figures are the target's; its mmproj-BF16 on CUDA0
    # (clip_ctx's backend line) is the projector's own pair of terms
    ("llama.cpp/qwen36-27b-mtp-mmproj-rtx5090-q8kv-4-slots.log", None, True, None, 'CUDA0', 0,
     {P.GPU_MEMORY: mib(32606), P.FREE_AT_FIT: mib(30330), P.FREE_BEFORE_LOAD: mib(30930), P.WEIGHTS: mib(16386.94),
      P.KV_CACHE: mib(4352), P.RECURRENT_STATE: mib(598.5), P.COMPUTE_BUFFER: mib(495), P.LAYERS_OFFLOADED: 66,
      P.LAYERS_TOTAL: 66, P.SEQUENCES: 4, P.KV_TOKENS: 131072, P.PIPELINE_COPIES: 1,
      P.PROJECTOR_WEIGHTS: mib(887.99), P.PROJECTOR_COMPUTE: mib(248.10)}),
    # -sm row in a 2024-worded build (ik_llama.cpp): "CUDA_Split" is the split over all four GPUs, not a device
    # (it was read as a device "CUDA" holding 63 GiB, the binding one); the KV cache and compute sit on CUDA0
    ("llama.cpp/ik-command-a-111b-row-split-4x3090-cuda-split.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(3.05), P.KV_CACHE: mib(4352.03), P.COMPUTE_BUFFER: mib(2096.0), P.LAYERS_OFFLOADED: 65,
      P.LAYERS_TOTAL: 65, P.KV_TOKENS: 32768}),
    # Vulkan1 (the fuller device by its weights, binding as before) is refused twice: the retry's request without
    # pipeline parallelism (416,022,528 B = 512 x (3,072 + 200,064) x 4 B of logits) replaces the first
    # the first --fit's device lines print what its projection leaves free: 1,947 used + 1,222 left = 3,169 MiB
    ("llama.cpp/phi4-mini-vulkan-rx580-rx560-fit-compute-oom.log", None, False, 'out-of-memory', 'Vulkan1', 0,
     {P.GPU_MEMORY: mib(4096), P.FREE_AT_FIT: mib(3169), P.FREE_BEFORE_LOAD: mib(3169.0), P.WEIGHTS: mib(1368.79), P.KV_CACHE: mib(120.0), P.COMPUTE_BUFFER: 416_022_528,
      P.LAYERS_OFFLOADED: 33, P.LAYERS_TOTAL: 33, P.SEQUENCES: 4, P.KV_TOKENS: 2048, P.PIPELINE_COPIES: 1}),
    # b9849's Vulkan llama-server, one device: --fit prints no "total ... vs. target" line, only the layers it settled
    # on, "31 layers, 5742 MiB used, 1155 MiB free" = 6,897 MiB free at the fit; the RS rows of blocks 0 and 1 on the
    # CPU (the output layer went first: profiles.LLAMACPP_OUTPUT_FIRST_SINCE)
    # round 29: the same report's RTX 3090 leg: a hybrid with an MTP draft context, whose own KV (32 MiB) and compute
    # buffers (520.06 MiB, reserved twice) follow the target's and are not read; --fit's one-device projection line
    # ("projected to use ... vs. 21755 MiB of free device memory") is a sum over devices, not read
    ("llama.cpp/qwen38-27b-vulkan-rtx3090-b9849-mtp-draft-context.log", None, True, None, 'Vulkan0', 0,
     {P.FREE_BEFORE_LOAD: mib(23552.0), P.WEIGHTS: mib(15009.20), P.KV_CACHE: mib(512.0),
      P.RECURRENT_STATE: mib(1795.5), P.COMPUTE_BUFFER: mib(568.53), P.LAYERS_OFFLOADED: 66, P.LAYERS_TOTAL: 66,
      P.SEQUENCES: 4, P.KV_TOKENS: 8192}),
    # round 29: ROCm at b7972 with a "NNN: " line number before every line (an agent's view of the file): --fit
    # aborts (-ngl set), 11 layers' q8_0 KV go to the CPU buffer and ROCm0's 2,652 MiB are refused
    ("llama.cpp/bielik-11b-q8-rocm-pro-vii-b7972-q8kv-40-of-51-kv-oom.log", '7972', False, 'out-of-memory', 'ROCm0', 0,
     {P.FREE_BEFORE_LOAD: mib(10874.0), P.WEIGHTS: mib(8753.58), P.KV_CACHE: 2_780_823_552, P.LAYERS_OFFLOADED: 40,
      P.LAYERS_TOTAL: 51, P.SEQUENCES: 4, P.KV_TOKENS: 32768}),
    # round 30: the same model and build on an RTX 3060 Laptop (Vulkan1 beside the iGPU): --fit keeps 18 of 33
    ("llama.cpp/qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-18-of-33.log", None, True, None, 'Vulkan1', 0,
     {P.FREE_AT_FIT: mib(5022), P.FREE_BEFORE_LOAD: mib(5223.0), P.WEIGHTS: mib(3123.80), P.KV_CACHE: mib(160.0),
      P.RECURRENT_STATE: mib(100.50), P.COMPUTE_BUFFER: mib(498.0), P.LAYERS_OFFLOADED: 18, P.LAYERS_TOTAL: 33,
      P.SEQUENCES: 4, P.KV_TOKENS: 8192}),
    # and with -np 1: one slot's recurrent rows leave room for two more layers (20 of 33)
    ("llama.cpp/qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-20-of-33-one-slot.log", None, True, None, 'Vulkan1', 0,
     {P.FREE_AT_FIT: mib(5172), P.FREE_BEFORE_LOAD: mib(5223.0), P.WEIGHTS: mib(3393.11), P.KV_CACHE: mib(160.0),
      P.RECURRENT_STATE: mib(29.31), P.COMPUTE_BUFFER: mib(498.0), P.LAYERS_OFFLOADED: 20, P.LAYERS_TOTAL: 33,
      P.SEQUENCES: 1, P.KV_TOKENS: 8192}),
    ("llama.cpp/qwen35-9b-vulkan-gtx1070ti-b9849-fit-31-of-33.log", None, True, None, 'Vulkan0', 0,
     {P.FREE_AT_FIT: mib(6897), P.FREE_BEFORE_LOAD: mib(7501.0), P.WEIGHTS: mib(4854.94), P.KV_CACHE: mib(256.0),
      P.RECURRENT_STATE: mib(184.25), P.COMPUTE_BUFFER: mib(447.38), P.LAYERS_OFFLOADED: 31, P.LAYERS_TOTAL: 33,
      P.SEQUENCES: 4, P.KV_TOKENS: 8192}),
    # round 26: b8586 with -ngl 26 of 65 (--fit aborts: the user set the layers): the device line's total since
    # llama.cpp PR #20185 ("VRAM: 11866 MiB"), the KV and RS rows of the 39 host layers in CPU buffers, and CUDA0's
    # refused compute reserve of 1,469,841,408 B
    ("llama.cpp/qwen35-27b-b8586-rtx4070-26-of-65-compute-oom.log", '8586', False, 'out-of-memory', 'CUDA0', 0,
     {P.GPU_MEMORY: mib(11866), P.FREE_BEFORE_LOAD: mib(10430.0), P.WEIGHTS: mib(6096.65), P.KV_CACHE: mib(3584.0),
      P.RECURRENT_STATE: mib(56.11), P.COMPUTE_BUFFER: 1_469_841_408, P.LAYERS_OFFLOADED: 26, P.LAYERS_TOTAL: 65,
      P.SEQUENCES: 1, P.KV_TOKENS: 131072}),
    # the same build's iSWA cache on the second Vulkan device (the iGPU first takes nothing): 48 + 48 MiB of KV;
    # --fit changes nothing, so it prints no device line
    ("llama.cpp/gemma4-e2b-vulkan-rtx3060-laptop-b9849-fit-iswa.log", None, True, None, 'Vulkan1', 0,
     {P.FREE_BEFORE_LOAD: mib(5223.0), P.WEIGHTS: mib(1341.76), P.KV_CACHE: mib(96.0), P.COMPUTE_BUFFER: mib(560.07),
      P.LAYERS_OFFLOADED: 36, P.LAYERS_TOTAL: 36, P.SEQUENCES: 4, P.KV_TOKENS: 8192}),
    # ollama's llama runner of August 2026 (an unnamed blob, so no model): 29 of 65 layers, the host layers' KV in a
    # CPU buffer beside CUDA0's; the cache line's q8_0 types are passed on (test_llamacpp_line_formats)
    ("llama.cpp/ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log", None, True, None, 'CUDA0', 0,
     {P.FREE_BEFORE_LOAD: mib(10886.0), P.WEIGHTS: mib(8128.64), P.KV_CACHE: mib(493.0),
      P.COMPUTE_BUFFER: mib(916.08), P.LAYERS_OFFLOADED: 29, P.LAYERS_TOTAL: 65, P.SEQUENCES: 1, P.KV_TOKENS: 8192}),
    # llama.cpp#22404: a hybrid model's KV and RS buffers on two devices, sched_reserve's compute lines, the
    # pipeline line without its copy count (the summary quotes no context line)
    ("llama.cpp/hybrid-layer-split-2080ti-p100-kv-rs.log", None, True, None, 'CUDA0', 0,
     {P.FREE_BEFORE_LOAD: mib(18299.0), P.WEIGHTS: mib(8500.51), P.KV_CACHE: mib(4608.0),
      P.RECURRENT_STATE: mib(90.40), P.COMPUTE_BUFFER: mib(668.03)}),
    # round 24: llama.cpp#24175 at b9525 (the build's elapsed-time prefix; the first line quoted without it): a
    # hybrid Mamba model's KV buffer of 12 attention layers beside its RS buffer, no model buffer in the excerpt
    ("llama.cpp/nemotron3-ultra-b9525-rtx5090-b16-kv-rs.log", None, True, None, 'CUDA0', 1,
     {P.KV_CACHE: mib(189.0), P.RECURRENT_STATE: mib(1576.5)}),
    # LLamaSharp's native llama.cpp: sched_reserve's compute lines, the mapped file on the host (TheOrc's spike)
    ("llama.cpp/llamasharp-llama32-3b-q4km-sched-reserve.log", None, True, None, 'CUDA0', 0,
     {P.WEIGHTS: mib(1918.36), P.KV_CACHE: mib(224.0), P.COMPUTE_BUFFER: mib(284.90)}),
    # round 24: SGLang v0.5.19's weights line quoted alone (RyanRosario/llm-d's GKE snapshot benchmark)
    ("sglang/qwen3-32b-h100-0.5.19-f090-memory-saver-load-weight.log", None, False, None, 'main', 1,
     {P.WEIGHTS: gib(61.07), P.FREE_AFTER_LOAD: gib(17.40)}),
    # a dev build of 2026-09 on a DGX Spark: the SWA pool's line (its full size is the pool's tokens) and a target
    # decode-graph line without batch sizes, both read
    ("sglang/gemma4-e4b-gb10-dev-swa-pool-target-graph.log", None, True, None, 'main', 0,
     {P.WEIGHTS: gib(15.56), P.FREE_AFTER_LOAD: gib(97.30), P.KV_CACHE: gib(79.94), P.KV_TOKENS: 997846,
      P.CUDA_GRAPHS: gib(1.91)}),
    # round 25: an August 2026 main build on one H100 (no version printed), the first public log of the target
    # prefill and decode graph lines: torch distributed's own usage, both graph pools, the pool end
    ("sglang/qwen3-30b-a3b-fp8-h100-main-2026-08-prefill-graphs-f083.log", None, True, None, 'main', 0,
     {P.NON_TORCH: gib(0.09), P.FREE_BEFORE_LOAD: gib(78.48), P.WEIGHTS: gib(29.15), P.FREE_AFTER_LOAD: gib(49.33),
      P.KV_TOKENS: 392920, P.KV_CACHE: gib(35.98), P.FREE_AFTER_POOL: gib(12.70), P.PREFILL_GRAPHS: gib(1.71),
      P.CUDA_GRAPHS: gib(0.34), P.MAX_RUNNING: 4096, P.MAX_MODEL_LEN: 40960}),
    # round 27: the docs CI's EAGLE runs. 0.4.2's draft worker loads again after the target's graphs (free-only end
    # line, its own pool and graph lines): every figure is the target's (weights 78.81 - 66.15, not the draft's)
    ("sglang/llama2-7b-chat-eagle-docs-ci-80gb-0.4.2-f070.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(66.15), P.WEIGHTS: gib(78.81) - gib(66.15),
      P.KV_CACHE: 2 * gib(21.25), P.FREE_AFTER_POOL: gib(23.46), P.KV_TOKENS: 87056, P.MAX_RUNNING: 4097,
      P.MAX_MODEL_LEN: 4096}),
    # an EAGLE-3 draft of August 2025: the draft's weights (2.15), pool (0.04 + 0.04) and draft graphs (-0.14, 0.11)
    # are not the target's terms
    ("sglang/llama31-8b-eagle3-docs-ci-h100-2025-08-cap.log", None, True, None, 'main', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(78.58), P.WEIGHTS: gib(15.11), P.FREE_AFTER_LOAD: gib(63.48),
      P.KV_TOKENS: 20480, P.KV_CACHE: 2 * gib(1.25), P.FREE_AFTER_POOL: gib(60.72), P.CUDA_GRAPHS: gib(0.54),
      P.MAX_RUNNING: 128, P.MAX_MODEL_LEN: 131072}),
    # the docs CI's uncapped builds of 0.3.4-0.4.0 (Oct-Dec 2024): no K/V size line yet, the pool in tokens only;
    # the embedding and reward servers capture no CUDA graphs (no capture lines)
    # round 30: the docs CI's Llama-3.1-8B at two more releases (0.4.0.post2 prints no KV line, 0.4.2's K and V
    # sizes without #tokens), and Qwen3.8-27B-FP8 at TP 2 on MI355X as its README quotes it (no pool lines)
    ("sglang/llama31-8b-tool-calling-docs-ci-h100-2025-02-0.4.2.post1.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(63.70), P.WEIGHTS: gib(78.81) - gib(63.70),
      P.KV_CACHE: 2 * gib(27.12), P.FREE_AFTER_POOL: gib(8.45), P.KV_TOKENS: 444372, P.MAX_RUNNING: 2049,
      P.MAX_MODEL_LEN: 131072}),
    ("sglang/llama31-8b-completions-docs-ci-h100-2024-12-0.4.0.post2.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(63.72), P.WEIGHTS: gib(78.81) - gib(63.72),
      P.FREE_AFTER_POOL: gib(8.34), P.KV_TOKENS: 444500, P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131072}),
    ("sglang/qwen38-27b-fp8-2x-mi355x-tp2-0.5.17-rocm-image.log", None, True, None, 'TP0', 0,
     {P.WEIGHTS: gib(14.49), P.FREE_AFTER_LOAD: gib(264.75), P.KV_TOKENS: 3228418, P.MAX_RUNNING: 32,
      P.MAX_MODEL_LEN: 262144}),
    ("sglang/llama31-8b-docs-ci-h100-2024-10-0.3.4.post2.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.59), P.FREE_AFTER_LOAD: gib(63.50), P.WEIGHTS: gib(78.59) - gib(63.50),
      P.FREE_AFTER_POOL: gib(8.37), P.KV_TOKENS: 442913, P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131072}),
    ("sglang/gte-qwen2-7b-embedding-docs-ci-h100-2024-11-0.3.5.post2.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.59), P.FREE_AFTER_LOAD: gib(64.18), P.WEIGHTS: gib(78.59) - gib(64.18),
      P.FREE_AFTER_POOL: gib(7.43), P.KV_TOKENS: 1025173, P.MAX_RUNNING: 4005, P.MAX_MODEL_LEN: 131072}),
    ("sglang/llama32-1b-docs-ci-h100-2024-12-0.4.0.post1.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(76.39), P.WEIGHTS: gib(78.81) - gib(76.39),
      P.FREE_AFTER_POOL: gib(7.45), P.KV_TOKENS: 2193171, P.MAX_RUNNING: 4097, P.MAX_MODEL_LEN: 131072}),
    ("sglang/gte-qwen2-7b-embedding-docs-ci-h100-2024-12-0.4.0.post1.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(64.40), P.WEIGHTS: gib(78.81) - gib(64.40),
      P.FREE_AFTER_POOL: gib(7.42), P.KV_TOKENS: 1028801, P.MAX_RUNNING: 4019, P.MAX_MODEL_LEN: 131072}),
    ("sglang/skywork-reward-llama31-8b-docs-ci-h100-2024-12-0.4.0.post1.log", None, True, None, 'TP0', 0,
     {P.FREE_BEFORE_LOAD: gib(78.81), P.FREE_AFTER_LOAD: gib(64.70), P.WEIGHTS: gib(78.81) - gib(64.70),
      P.FREE_AFTER_POOL: gib(8.44), P.KV_TOKENS: 452516, P.MAX_RUNNING: 2049, P.MAX_MODEL_LEN: 131072}),
    # a fork's KDA hybrid on a DGX Spark: the linear layers' mamba pool, the MLA layers' one-buffer pool, the target
    # decode graphs; the quoted scheduler line keeps chunked_prefill_size and context_len only
    ("sglang/ling3-flash-fin-mxfp4-gb10-fork-kda-mla-decode-graph.log", None, True, None, 'main', 0,
     {P.FREE_BEFORE_LOAD: gib(109.98), P.WEIGHTS: gib(80.31), P.FREE_AFTER_LOAD: gib(29.67),
      P.MAMBA_STATE: gib(0.28) + gib(8.07), P.KV_TOKENS: 1226984, P.KV_CACHE: gib(9.21), P.CUDA_GRAPHS: gib(0.79),
      P.MAX_MODEL_LEN: 262144}),
    # LFM2's short convolutions: a mamba pool of conv states only (ssm_state 0.00GB) beside the attention KV pool
    ("sglang/lfm2-700m-16gb-bench-one-batch-0.5.6.post2-conv-pool.log", None, True, None, 'TP0', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(15.33), P.WEIGHTS: gib(1.52), P.FREE_AFTER_LOAD: gib(13.81),
      P.MAMBA_STATE: gib(4.88) + gib(0.00), P.KV_TOKENS: 473854, P.KV_CACHE: 2 * gib(2.71),
      P.FREE_AFTER_POOL: gib(2.43), P.CUDA_GRAPHS: gib(0.03)}),
    # KTransformers' CPU experts under SGLang at TP 2: 3.76 GB of GPU weights, a Qwen3.5 MoE's GDN mamba pool
    ("sglang/qwen35-moe-2x-rtx4090-ktransformers-cpu-experts-gdn.log", None, True, None, 'TP0', 0,
     {P.WEIGHTS: gib(3.76), P.FREE_AFTER_LOAD: gib(19.08), P.MAMBA_STATE: gib(0.13) + gib(7.29), P.KV_TOKENS: 580364,
      P.KV_CACHE: 2 * gib(4.15), P.FREE_AFTER_POOL: gib(4.02), P.MAX_RUNNING: 1, P.MAX_MODEL_LEN: 8192}),
    # a speculative start-up of 2026 that dies capturing graphs: the mamba line's verify buffers are a term of their
    # own (48.75 + 0.43 GB beside 3.12 GB of slots); the draft's pool (same tokens, after the target's pool end) and
    # draft verify graphs are not the target's; the OOM line gives the GPU's total
    ("sglang/spec-verify-mamba-intermediate-94gb-capture-oom.log", None, False, 'out-of-memory', 'main', 0,
     {P.FREE_BEFORE_LOAD: gib(93.77), P.MAMBA_STATE: gib(0.07) + gib(3.05), P.MAMBA_SPECULATIVE: gib(48.75) + gib(0.43),
      P.KV_TOKENS: 295950, P.KV_CACHE: 2 * gib(4.52), P.FREE_AFTER_POOL: gib(21.57), P.PREFILL_GRAPHS: gib(3.85),
      P.CUDA_GRAPHS: gib(6.13), P.GPU_MEMORY: gib(94.50)}),
    # round 28: 0.11-0.14 logs on H100/H200/L40S: TP, MoE, hybrid, multimodal, LoRA, quantized checkpoints
    # Qwen3-Next (4-bit compressed-tensors) at TP 2 on L40S with fp8 KV: the hybrid's raised block and its 5 + 4 graphs
    ("vllm/v1-0.13.0-qwen3-next-80b-w4a16-2xl40s-tp2-fp8kv.log", '0.13.0', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(22.5313), P.KV_CACHE: gib(17.58), P.CUDA_GRAPHS: gib(0.79), P.MAX_MODEL_LEN: 32768,
      P.ATTENTION_BLOCK: 1072, P.KV_TOKENS: 767552, P.MAX_CONCURRENCY: 84.29, P.GRAPHS_PIECEWISE: 5,
      P.GRAPHS_FULL: 4}),
    # Qwen3-VL-30B-A3B on an H100 NVL: the encoder profile's budget and its one image
    ("vllm/v1-0.13.0-qwen3-vl-30b-a3b-h100-nvl-kserve-8k.log", '0.13.0', True, None, 'main', 0,
     {P.WEIGHTS: gib(58.2299), P.ENCODER_BUDGET: 16384, P.ENCODER_ITEMS: 1, P.KV_CACHE: gib(19.40),
      P.CUDA_GRAPHS: gib(0.66), P.MAX_MODEL_LEN: 8192, P.KV_TOKENS: 211936, P.MAX_CONCURRENCY: 25.87,
      P.GRAPHS_PIECEWISE: 51, P.GRAPHS_FULL: 51}),
    # Mistral-7B with LoRA: every size captured with and without adapters (102 + 70), then a PTX error
    ("vllm/v1-0.14.0-mistral-7b-lora-rtx-pro-6000-gmu095-4k-ptx-error.log", None, False, 'engine-error', 'main', 0,
     {P.WEIGHTS: gib(13.58), P.KV_CACHE: gib(75.99), P.KV_TOKENS: 622464, P.MAX_MODEL_LEN: 4096,
      P.MAX_CONCURRENCY: 151.97, P.GRAPHS_PIECEWISE: 102, P.GRAPHS_FULL: 70}),
    # three quoted lines each (no weights line): a 32B model at TP 2 on H100, Qwen3-0.6B on an L40S
    ("vllm/v1-0.14-32b-fp16-2xh100-tp2-10k-excerpt.log", None, True, None, 'TP0', 1,
     {P.KV_CACHE: gib(38.46), P.KV_TOKENS: 315072, P.MAX_MODEL_LEN: 10000, P.MAX_CONCURRENCY: 31.5}),
    ("vllm/v1-0.11.2-qwen3-06b-l40s-llm-d-guide-16k.log", None, True, None, 'main', 1,
     {P.KV_CACHE: gib(37.42), P.KV_TOKENS: 350304, P.MAX_MODEL_LEN: 16000, P.MAX_CONCURRENCY: 21.89}),
    # a memory estimator's quoted snippets: the capture's signed -0.17 GiB is read as printed
    ("vllm/v1-0.11.2rhai-llama33-70b-fp8-tp4-141gb-8k.log", '0.11.2rc1+rhai0.cuda', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(16.9619), P.KV_CACHE: gib(106.17), P.CUDA_GRAPHS: -gib(0.17), P.KV_TOKENS: 1391552,
      P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 169.87}),
    ("vllm/v1-0.11.2-deepseek-r1-0528-tp8-141gb-8k.log", '0.11.2', True, None, 'TP0', 0,
     {P.WEIGHTS: gib(79.739), P.KV_CACHE: gib(41.60), P.CUDA_GRAPHS: gib(0.51), P.KV_TOKENS: 635648,
      P.MAX_MODEL_LEN: 8192, P.MAX_CONCURRENCY: 77.59}),
    # round 31: the docs CI runs notebooks side by side: free memory rose across the load ("mem usage=-27.89 GB"),
    # the line is read for its free memory after and gives no weights (nothing is missing)
    ("sglang/qwen25-7b-docs-ci-h100-2025-06-12-0.4.7-negative-load-usage.log", None, True, None, 'main', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(36.31), P.FREE_AFTER_LOAD: gib(64.20), P.KV_TOKENS: 20480,
      P.KV_CACHE: 2 * gib(0.55), P.FREE_AFTER_POOL: gib(62.90), P.MAX_RUNNING: 200, P.MAX_MODEL_LEN: 32768}),
    ("sglang/qwen25-7b-docs-ci-h100-2025-07-11-0.4.9.post1-negative-load-usage.log", None, True, None, 'main', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(45.79), P.FREE_AFTER_LOAD: gib(48.63), P.KV_TOKENS: 20480,
      P.KV_CACHE: 2 * gib(0.55), P.FREE_AFTER_POOL: gib(47.33), P.MAX_RUNNING: 200, P.MAX_MODEL_LEN: 32768}),
    ("sglang/qwen25-vl-7b-docs-ci-h100-2025-07-11-0.4.9.post1-beside-notebooks.log", None, True, None, 'main', 0,
     {P.NON_TORCH: 0, P.FREE_BEFORE_LOAD: gib(60.49), P.WEIGHTS: gib(15.71), P.FREE_AFTER_LOAD: gib(44.79),
      P.KV_TOKENS: 20480, P.KV_CACHE: 2 * gib(0.55), P.FREE_AFTER_POOL: gib(43.42), P.MAX_RUNNING: 200,
      P.MAX_MODEL_LEN: 128000}),
    # a guide's quote of TP0's last lines (EP ranks): graphs and capacity, no load line
    ("sglang/deepseek-r1-0528-fp8-8x-b200-tp8-ep8-0.4.10.post1-graphs-capacity.log", None, True, None, 'TP0 EP0', 1,
     {P.CUDA_GRAPHS: gib(6.37), P.KV_TOKENS: 980344, P.MAX_RUNNING: 3063, P.MAX_MODEL_LEN: 163840}),
    ("sglang/qwen3-32b-4x-b200-tp4-main-2026-04-10-pool-lines.log", None, True, None, 'TP1', 0,
     {P.KV_TOKENS: 2206208, P.KV_CACHE: 2 * gib(67.33), P.FREE_AFTER_POOL: gib(25.37), P.WEIGHTS: gib(15.50),
      P.FREE_AFTER_LOAD: gib(160.78)}),
]


@pytest.mark.parametrize("name,version,started,failure,binding,missing,terms", CASES, ids=[c[0] for c in CASES])
def test_each_public_log_parses_to_its_exact_terms(name, version, started, failure, binding, missing, terms):
    log = parse(name)
    assert log.engine == Path(name).parent.name
    assert (log.engine_version, log.started, log.failure_kind, log.binding_rank()) == (version, started, failure, binding)
    assert len(log.missing()) == missing
    assert log.terms() == terms


def test_sglang_end_line_without_usage_names_the_begin_line_as_missing():
    # 0.4.x prints no mem usage on "Load weight end": without "Load weight begin" the weights are not known, and the
    # line to look for is the begin line; with both (0.4.1's quick start) nothing is missing
    assert parse("sglang/mistral-7b-v01-24gb-quickstart.log").missing() == [
        "'Load weight begin' (this release's 'Load weight end' prints no mem usage)"]
    assert parse("sglang/llama31-8b-docs-quickstart.log").missing() == []
    assert parse("sglang/deepseek-r1-2x8-h20-tp16-lws.log").missing() == ["'Load weight end'"]


def test_every_fixture_is_listed_with_its_source_and_found_without_backend():
    files = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*.log"))
    assert files == sorted(c[0] for c in CASES)
    counts = {engine: sum(f.startswith(engine + "/") for f in files) for engine in P.ENGINES}
    assert counts == {"vllm": 174, "sglang": 74, "llama.cpp": 66}
    # the README's verify section states the same counts
    readme = (FIXTURES.parents[2] / "README.md").read_text(encoding="utf-8")
    assert (f"{len(files)} logs ({counts['vllm']} of vLLM, {counts['sglang']} of SGLang, {counts['llama.cpp']} of "
            "llama.cpp;") in " ".join(readme.split())
    for name in files:
        head = (FIXTURES / name).read_text(encoding="utf-8").splitlines()[0]
        # a public log names its thread or the page that quotes it; the CI build's own log names its test; a public
        # file the search index holds without naming its repository names the index's file id (to be resolved)
        assert head.startswith(("## source: https://", "## source: tests/integration/",
                                "## source: search-index file ")), name
        assert parse(name, engine=None).engine == Path(name).parent.name, name


def test_every_pattern_matches_the_real_line_it_was_written_from():
    ids = [p.id for p in P.ALL_PATTERNS]
    assert len(ids) == len(set(ids))
    for pattern in P.ALL_PATTERNS:
        assert pattern.regex.search(pattern.example), pattern.id
        # an issue or pull request number, or (no public log of that format found) the engine file and release tag
        # whose format string the example was built from, said so
        built_from_source = re.search(r"\S+\.(?:py|cpp)@v?[0-9][0-9.]*\b", pattern.source) is not None and \
            "format string" in pattern.source
        assert "#" in pattern.source or built_from_source, pattern.id
        assert pattern.releases


def test_the_capture_plan_is_read_from_each_line_that_prints_it():
    # ROCm/ROCm#5656: a 0.11.1rc2 development build still printed 0.11.0's ceiling of 992 for gpt-oss
    log, _ = parse_log(["(APIServer pid=445) INFO 11-12 11:11:43 [config.py:273] Overriding max cuda graph capture "
                        "size to 992 for performance.\n"], "vllm")
    assert log.terms() == {P.MAX_CAPTURE_SIZE: 992}
    # a bar cut mid-capture still names the sizes planned (tqdm's total), not the ones done
    log, _ = parse_log(["Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  14%|\u2588\u258d        | "
                        "12/83 [00:03<00:19,  3.60it/s]\n"], "vllm")
    assert log.terms() == {P.GRAPHS_PIECEWISE: 83}
    # a FULL-only plan (cudagraph_mode FULL; built from gpu_model_runner.py@v0.24.0's format, no public log found)
    # gives its count and no ceiling, which is the PIECEWISE group's
    log, _ = parse_log(["INFO 06-27 19:49:53 [gpu_model_runner.py:6483] Profiling CUDA graph memory: "
                        "FULL=35 (largest=256)\n"], "vllm")
    assert log.terms() == {P.GRAPHS_FULL: 35}
    # the 0.34 model runner's bar names the mode alone (aivrar/vllm-windows-build#17)
    log, _ = parse_log(["Capturing CUDA graphs (FULL): 100%|\u2588\u2588\u2588\u2588\u2588| 1/1 [00:00<00:00,  "
                        "4.83it/s]\n"], "vllm")
    assert log.terms() == {P.GRAPHS_FULL: 1}
    # the prefill graphs of the 0.34 model runner are not the decode plan
    log, _ = parse_log(["Capturing prefill CUDA graphs (PIECEWISE): 100%|\u2588\u2588| 3/3 [00:00<00:00, "
                        "108.10it/s]\n"], "vllm")
    assert log.terms() == {}


def test_the_weights_and_advice_lines_read_their_own_units_and_their_near_misses_do_not_match():
    log, _ = parse_log(["Loading model weights took 244.61 MB\n"], "vllm")  # 0.3: MB is 2**20 bytes
    assert log.terms() == {P.WEIGHTS: mib(244.61)}
    log, _ = parse_log(["Loading model weights took 7.9692 GB\n"], "vllm")  # 0.4 to 0.10: GB is 2**30 bytes
    assert log.terms() == {P.WEIGHTS: gib(7.9692)}
    advice = ("Free memory on device (46.99/47.37 GiB) on startup. Desired GPU memory utilization is (0.85, 40.27 "
              "GiB). Actual usage is 2.81 GiB for consumed memory (weights + non-torch), 0.57 GiB for peak activation, "
              "and 0.22 GiB for CUDAGraph memory. Current kv cache memory in use is 36.88 GiB.\n")
    log, _ = parse_log([advice], "vllm")
    assert log.started is False and log.failure is None  # the advice is not the start-up check that refuses
    assert log.terms()[P.KV_CACHE] == gib(36.88) and log.terms()[P.ACTIVATION] == gib(0.57)
    # quoted up to its terms (the tail cut) it still gives them; cut inside them, or in 0.10's wording, nothing
    log, _ = parse_log([advice.replace(" Current kv cache memory in use is 36.88 GiB.", "")], "vllm")
    assert P.KV_CACHE not in log.terms() and log.terms()[P.ACTIVATION] == gib(0.57)
    log, _ = parse_log([advice.replace(" for CUDAGraph memory. Current kv cache memory in use is 36.88 GiB.", "")],
                       "vllm")
    assert log.terms() == {}
    log, _ = parse_log([advice.replace("consumed memory (weights + non-torch)", "weight")], "vllm")
    assert log.terms() == {}


def test_the_start_up_banner_names_the_version_and_its_neighbours_do_not():
    banner = "(APIServer pid=1) INFO 04-18 20:22:57 [utils.py:299] \u2584\u2584 \u2584\u2588 \u2588 version %s\n"
    log, _ = parse_log([banner % "0.19.1rc1.dev301+g60995c05b"], "vllm")
    assert log.engine_version == "0.19.1rc1.dev301+g60995c05b"
    for near in ("\u2588 version unknown\n", "INFO [utils.py:299] version 0.19.0\n",  # no digit; no banner block
                 "\u2588\u2584\u2588\u2580 \u2588 model   openai/gpt-oss-20b\n"):  # the banner's model line
        log, _ = parse_log([near], "vllm")
        assert log.engine_version is None, near


def test_a_near_miss_line_matches_nothing():
    log, _ = parse_log(["Model loading took a while\n", "GPU KV cache size: many tokens\n", "# GPU blocks: -\n"])
    assert log.engine is None and log.terms() == {}


def test_v0_blocks_count_tokens_at_the_logged_block_size():
    lines = ["INFO api_server.py:150] args: Namespace(model='m', block_size=32, gpu_memory_utilization=0.9)\n",
             "INFO 01-16 09:40:00 executor_base.py:95] # CUDA blocks: 6001, # CPU blocks: 1638\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.terms()[P.KV_TOKENS] == 6001 * 32 and log.terms()[P.BLOCK_SIZE] == 32
    log, _ = parse_log(lines[1:], "vllm")
    assert log.terms()[P.KV_TOKENS] == 6001 * 16  # vLLM's default block size


def test_workers_keep_their_own_figures_and_the_smallest_pool_binds():
    log = parse("sglang/tp8-ranks.log")
    assert list(log.ranks) == ["TP7", "TP6", "TP0", "TP5", "TP1"]
    assert log.ranks["TP7"][P.NON_TORCH] == gib(1.77) and log.ranks["TP0"][P.FREE_BEFORE_LOAD] == gib(137.34)
    lines = ["(VllmWorker rank=0 pid=1) INFO Available KV cache memory: 25.46 GiB\n",
             "(VllmWorker rank=1 pid=2) INFO Available KV cache memory: 24.10 GiB\n",
             "(VllmWorker rank=1 pid=2) INFO Model loading took 31.2795 GiB and 45.4 seconds\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.binding_rank() == "rank 1"
    assert log.terms()[P.KV_CACHE] == gib(24.10)
    assert parse("vllm/v0.8-moe-marlin-4x-rtx3090-workers.log").ranks.keys() == {"pid 521", "pid 507", "pid 577"}


def test_v1_per_worker_pool_lines_give_the_smallest_as_the_engines():
    # v1/engine/core.py@v0.8.4 logs each worker's pool unprefixed, then unify_kv_cache_configs gives all the least
    server = "INFO 04-18 14:33:04 [api_server.py:1034] vLLM API server version 0.8.4\n"
    small = ["INFO 04-18 14:34:20 [kv_cache_utils.py:634] GPU KV cache size: 359,328 tokens\n",
             "INFO 04-18 14:34:20 [kv_cache_utils.py:637] Maximum concurrency for 4,096 tokens per request: 87.73x\n"]
    large = ["INFO 04-18 14:34:20 [kv_cache_utils.py:634] GPU KV cache size: 359,712 tokens\n",
             "INFO 04-18 14:34:20 [kv_cache_utils.py:637] Maximum concurrency for 4,096 tokens per request: 87.82x\n"]
    for lines in ([server, *small, *large], [server, *large, *small]):
        terms = parse_log(lines, "vllm")[0].terms()
        assert (terms[P.KV_TOKENS], terms[P.MAX_CONCURRENCY], terms[P.MAX_MODEL_LEN]) == (359328, 87.73, 4096)
    # 0.7's V1 blocks line the same way
    blocks = ["INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381\n",
              "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1379\n"]
    assert parse_log(blocks, "vllm")[0].terms()[P.GPU_BLOCKS] == 1379
    # a restart is another start-up: its one pool is the engine's, however large
    terms = parse_log([server, *small, server, *large], "vllm")[0].terms()
    assert (terms[P.KV_TOKENS], terms[P.MAX_CONCURRENCY]) == (359712, 87.82)


def test_sglang_tied_pools_bind_on_the_rank_with_the_least_free_memory():
    # SGLang min-reduces free memory over the group, so every rank's pool is the same and the rank with the
    # least free memory sized it: after the weights first, then after the pool
    def rank(n: int, after_load: str, after_pool: str | None) -> list[str]:
        out = [f"[2026-03-01 10:00:00 TP{n}] Load weight end. elapsed=3.00 s, type=Qwen3ForCausalLM, "
               f"dtype=torch.bfloat16, avail mem={after_load} GB, mem usage=15.27 GB.\n",
               f"[2026-03-01 10:00:01 TP{n}] KV Cache is allocated. #tokens: 400000, K size: 27.47 GB, "
               f"V size: 27.47 GB\n"]
        return out + ([f"[2026-03-01 10:00:01 TP{n}] Memory pool end. avail mem={after_pool} GB\n"]
                      if after_pool else [])
    log, _ = parse_log(rank(0, "60.10", "5.10") + rank(1, "60.05", "5.06") + rank(2, "60.05", "5.02"), "sglang")
    assert log.binding_rank() == "TP2" and log.terms()[P.FREE_AFTER_POOL] == gib(5.02)
    # only a figure every rank printed is compared: TP1 printed no pool end, the load lines decide (TP0's pool end
    # fills the term); with no figure both printed the pools stay tied and the first rank read binds
    log, _ = parse_log(rank(0, "60.10", "5.10") + rank(1, "60.05", None), "sglang")
    assert log.binding_rank() == "TP1" and log.terms()[P.FREE_AFTER_POOL] == gib(5.10)
    log, _ = parse_log(rank(0, "60.10", None)[1:] + rank(1, "60.05", "5.06")[1:], "sglang")
    assert log.binding_rank() == "TP0"
    # vLLM keeps the smallest pool whatever the free memory
    lines = ["(VllmWorker rank=0 pid=1) INFO Available KV cache memory: 24.10 GiB\n",
             "(VllmWorker rank=1 pid=2) INFO Available KV cache memory: 24.10 GiB\n"]
    assert parse_log(lines, "vllm")[0].binding_rank() == "rank 0"


def test_the_fullest_llama_cpp_device_binds_and_host_buffers_are_not_a_gpu():
    log = parse("llama.cpp/command-r-two-gpus.log")
    assert log.ranks["CPU"] == {P.WEIGHTS: mib(1640.62)}
    assert log.binding_rank() == "CUDA1"
    assert log.ranks["CUDA0"] == {P.WEIGHTS: mib(5434.38), P.KV_CACHE: mib(1536), P.COMPUTE_BUFFER: mib(672.01)}


def test_llama_cpp_counts_the_last_context_built():
    # a fit pass builds a context first and prints zero-sized buffers; the real context follows
    lines = ["llama_context: n_ctx         = 4096\n", "llama_kv_cache:        CPU KV buffer size =     0.00 MiB\n",
             "llama_context:        CPU compute buffer size =     0.00 MiB\n",
             "llama_context: n_ctx         = 4096\n", "llama_kv_cache:        CPU KV buffer size =    64.00 MiB\n",
             "llama_kv_cache:        CPU KV buffer size =    16.00 MiB\n",
             "llama_context:        CPU compute buffer size =    10.89 MiB\n"]
    log, _ = parse_log(lines, "llama.cpp")
    assert log.ranks["CPU"] == {P.KV_CACHE: mib(80), P.COMPUTE_BUFFER: mib(10.89)}


@pytest.mark.parametrize("figure,expected", [("1039,50", mib(1039.5)), ("0,5", mib(0.5)), ("1039.50", mib(1039.5))])
def test_llama_cpp_figures_under_a_decimal_comma_locale(figure, expected):
    # llama-cli, llama-completion and mtmd-cli set the C library's locale (common/console.cpp): every buffer line of
    # a de_DE or fr_FR session prints a decimal comma, each one read as the point
    lines = [f"load_tensors:        SYCL0 model buffer size = {figure} MiB\n",
             f"llama_kv_cache:      SYCL0 KV buffer size =   {figure} MiB\n",
             f"llama_memory_recurrent:      SYCL0 RS buffer size =    {figure} MiB\n",
             f"llama_context:      SYCL0 compute buffer size =   {figure} MiB\n",
             f"llama_kv_cache: size =  {figure} MiB (  4096 cells,  28 layers,  1/1 seqs), K (q8_0):  {figure} MiB, "
             f"V (q8_0):  {figure} MiB\n"]
    log, _ = parse_log(lines, "llama.cpp")
    assert log.ranks["SYCL0"] == {P.WEIGHTS: expected, P.KV_CACHE: expected, P.RECURRENT_STATE: expected,
                                  P.COMPUTE_BUFFER: expected}
    assert (log.args["cache_type_k"], log.args["cache_type_v"]) == ("q8_0", "q8_0")


def test_a_thousands_separator_is_not_a_decimal_comma():
    # three digits after the comma group thousands (vLLM's "4,096 tokens", a token count): the comma is dropped
    assert (L._number("4,096", "int"), L._number("1,039.50", "MiB"), L._number("12,345,678", "int")) == (
        4096, mib(1039.5), 12345678)


@pytest.mark.parametrize("text", ["0,0", "1,5", "12,34"])
def test_a_count_with_a_decimal_comma_is_no_figure(text):
    # a token or block count has no decimals: "GPU KV cache size: 0,0 tokens" (an edited quote; fuzz seed 1) was
    # int("0.0"), an internal error (exit 3); now the line gives no count, as any unreadable figure
    assert L._number(text, "int") is None
    assert L._number(text, "MiB") == mib(float(text.replace(",", ".")))


def test_a_pool_line_with_a_decimal_comma_count_leaves_the_tokens_unread():
    log, _ = parse_log(["Available KV cache memory: 12.22 GiB\n", "GPU KV cache size: 0,0 tokens\n"], "vllm")
    assert log.ranks == {"main": {P.KV_CACHE: 13_121_125_089}}  # 12.22 GiB read, the count not


@pytest.mark.parametrize("function", ["llama_kv_cache_init", "init", "llama_kv_cache_unified", "llama_kv_cache"])
def test_llama_cpp_kv_buffer_under_each_function_name(function):
    # the KV line names the function that printed it: spring 2025's llama_kv_cache_unified::init prints a bare "init"
    log, _ = parse_log([f"{function}:    Vulkan0 KV buffer size = 13800.00 MiB\n"], "llama.cpp")
    assert log.ranks["Vulkan0"] == {P.KV_CACHE: mib(13800)}


def test_a_word_ending_in_init_is_not_the_kv_line():
    log, _ = parse_log(["reinit:    Vulkan0 KV buffer size = 13800.00 MiB\n"], "llama.cpp")
    assert log.ranks == {}


@pytest.mark.parametrize("announce", [
    "srv    load_model: creating MTP draft context against the target model '/m/Qwen3.6-27B.gguf'\n",
    "common_speculative_init_result: loading draft model '/m/Qwen3-0.6B.gguf'\n",
])
def test_llama_cpp_speculative_draft_context_is_not_the_targets(announce):
    # the draft's context follows the target's: its KV, compute and settings are the draft's, and a failure after
    # it is still the process's
    target = ["llama_context: n_ctx         = 8192\n", "llama_context: n_ubatch      = 512\n",
              "llama_kv_cache:      CUDA0 KV buffer size =  1024.00 MiB\n",
              "sched_reserve:      CUDA0 compute buffer size =   300.00 MiB\n"]
    draft = ["load_tensors:        CUDA0 model buffer size =   600.00 MiB\n",
             "llama_context: n_ctx         = 4096\n", "llama_context: n_ubatch      = 128\n",
             "llama_kv_cache:      CUDA0 KV buffer size =    64.00 MiB\n",
             "sched_reserve:      CUDA0 compute buffer size =    40.00 MiB\n"]
    log, _ = parse_log(target + [announce] + draft, "llama.cpp")
    assert log.ranks["CUDA0"] == {P.KV_CACHE: mib(1024), P.COMPUTE_BUFFER: mib(300)}
    assert (log.engine_terms[P.KV_TOKENS], log.args["n_ubatch"]) == (8192, 512)
    assert any("speculative draft" in note for note in log.notes)
    log, _ = parse_log(target + [announce] + draft + ["CUDA error: out of memory\n"], "llama.cpp")
    assert log.failure_kind == "out-of-memory"
    # without the announcement the later context is the one counted (a fit pass's context comes first)
    log, _ = parse_log(target + draft, "llama.cpp")
    assert log.ranks["CUDA0"][P.KV_CACHE] == mib(64)


@pytest.mark.parametrize("line,version", [
    ("build_info: b484-2c4055912\n", None),  # an image's clone of part of the history
    ("build_info: b8586-64ac9ab66\n", None),  # b8586 itself still printed "build: 8586 (...)"
    ("build_info: b8587-0123456ab\n", "8587"),
    ("build_info: b9106-dd9280a66\n", "9106"),
])
def test_a_build_info_count_no_build_printing_it_can_have_is_not_the_build(line, version):
    log, _ = parse_log([line, "llama_context: n_ctx         = 4096\n"], "llama.cpp")
    assert log.engine_version == version
    assert any("partial clone" in note for note in log.notes) is (version is None)


@pytest.mark.parametrize("line,resolved", [
    ("llama_context: Flash Attention was auto, set to disabled\n", "disabled"),
    ("0.03.402.117 I sched_reserve: Flash Attention was auto, set to enabled\n", "enabled"),
    ("resolve_fused_ops: Flash Attention not supported, set to disabled\n", "disabled"),
    ("resolve_fused_ops: Flash Attention enabled\n", "enabled"),
])
def test_llama_cpp_flash_attention_auto_is_read_as_resolved(line, resolved):
    # the context's own "flash_attn = auto" comes first; the probe's verdict after it is what ran
    log, _ = parse_log(["llama_context: flash_attn    = auto\n", line], "llama.cpp")
    assert log.args["flash_attn"] == resolved


def test_llama_cpp_device_name_with_parentheses():
    # SYCL names Intel's cards with (R) and (TM): the free memory before the load is still read
    for line in ["llama_model_load_from_file_impl: using device SYCL0 (Intel(R) Arc(TM) A770 Graphics) (unknown id) "
                 "- 15473 MiB free\n",
                 "llama_model_load_from_file_impl: using device SYCL0 (Intel(R) Arc(TM) A770 Graphics) - 15473 MiB "
                 "free\n"]:
        log, _ = parse_log([line], "llama.cpp")
        assert log.ranks["SYCL0"] == {P.FREE_BEFORE_LOAD: mib(15473)}
        assert log.gpu_name == "Intel(R) Arc(TM) A770 Graphics"


def test_failure_is_the_engines_own_line():
    log = parse("vllm/v0.6.4-llama31-8b-rtx3090-29k-refused.log")
    assert log.failure == ("The model's max seq len (29000) is larger than the maximum number of tokens that can be "
                           "stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing "
                           "`max_model_len` when initializing the engine.")
    assert log.failure_line == 7
    log = parse("vllm/v1-0.8-sampler-oom-8x-rtx5080.log")  # torch's error first, the engine's reason replaces it
    assert log.failure.startswith("RuntimeError: CUDA out of memory occurred when warming up sampler with 1024")
    assert log.failure_kind == "out-of-memory-warming-up-sampler" and log.failure_line == 4
    log = parse("sglang/dsv4-pro-h200-no-kv.log")
    assert log.failure == "ValueError: Loaded weights leave no GPU memory for the KV cache under " \
                          "--mem-fraction-static=0.88."


def test_a_long_failure_is_cut_to_one_bounded_line():
    line = "ValueError: No available memory for the cache blocks. " + "x" * 3000 + "\n"
    log, _ = parse_log([line], "vllm")
    assert len(log.failure) == L.MAX_FAILURE_CHARS and log.failure.endswith("...")


def test_missing_essential_lines_are_named():
    assert parse("vllm/v0.4.0-qwen15-05b-namespace.log").missing() == [
        "'Model loading took' (V1) or 'Loading model weights took' (V0)",
        "'GPU KV cache size' (V1) or '# GPU blocks' (V0)"]
    assert parse("sglang/gpt-oss-20b-load-weight.log").missing() == []  # it crashed: nothing is missing
    assert parse("llama.cpp/dsv4-iswa-caches.log").missing() == ["'model buffer size'"]


def test_arguments_as_the_engine_printed_them():
    log = parse("vllm/v0.4.0-qwen15-05b-namespace.log")
    assert (log.model, log.args["dtype"], log.args["gpu_memory_utilization"], log.args["block_size"]) == \
        ("Qwen1.5-0.5B-Chat", "half", 0.9, 16)
    assert log.args["allowed_origins"] == ["*"] and log.args["api_key"] is None
    log = parse("vllm/v1-0.10.2dev-qwen25-05b-tp2-args.log")
    # the printed non-default arguments, and the batch budget the scheduler's line says it resolved
    assert log.args == {"model_tag": "/data/datasets/models-hf/Qwen2.5-0.5B/",
                        "model": "/data/datasets/models-hf/Qwen2.5-0.5B/", "tensor_parallel_size": 2,
                        "max_num_batched_tokens": 2048}
    assert log.config["dtype"] == "torch.bfloat16" and log.config["max_seq_len"] == 32768
    log = parse("sglang/server-args-llama31-8b.log")
    assert (log.model, log.args["mem_fraction_static"], log.args["context_length"]) == \
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", 0.851, None)


def test_hostile_argument_values_stay_text():
    deep = "[" * 200 + "]" * 200
    long = "'" + "a" * (L.MAX_ARG_VALUE_CHARS + 1) + "'"
    args = L.parse_printed_args(f"{{'x': {deep}, 'y': {long}, 'z': 1e999999, 'w': AttentionConfig(a=1)}}")
    assert args == {"x": deep, "y": long, "z": float("inf"), "w": "AttentionConfig(a=1)"}
    assert L.split_top_level("a='x, y', b=(1, 2), c=3") == ["a='x, y'", "b=(1, 2)", "c=3"]


SECRET_LINES = [
    ("INFO non-default args: {'model': 'm', 'api_key': 'sk-proj-0123456789abcdef'}",
     "INFO non-default args: {'model': 'm', 'api_key': '" + MASK + "'}"),
    ("args: Namespace(api_key=None, hf_token='hf_abcdefghijklmnopqrstuvwx', max_num_batched_tokens=2048)",
     "args: Namespace(api_key=None, hf_token='" + MASK + "', max_num_batched_tokens=2048)"),
    # a URL shows as mask_url shows it everywhere: without its user info
    ("curl -H 'Authorization: Bearer abc.def.ghi' http://u:hunter2@host:8000/v1",
     "curl -H 'Authorization: Bearer " + MASK + "' http://host:8000/v1"),
    # a URL's signing and token parameters, under any key or none (mask_url's rules, not only secret-named keys)
    ("GET https://hub.example/m.gguf?sig=abcdef123456&se=2025 200",
     "GET https://hub.example/m.gguf?sig=" + MASK + "&se=2025 200"),
    ("endpoint https://s3.example/b/o?X-Amz-Signature=deadbeef01&X-Amz-Date=1 ok",
     "endpoint https://s3.example/b/o?X-Amz-Signature=" + MASK + "&X-Amz-Date=" + MASK + " ok"),
    ("{'api_base': 'https://h/v1?api_key=s3cr3tvalue', 'max_tokens': 5}",
     "{'api_base': 'https://h/v1?api_key=" + MASK + "', 'max_tokens': 5}"),
    ("pulled from https://ghp_abcdefghijklmnopqrstu@github.com/o/r (main)",
     "pulled from https://github.com/o/r (main)"),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwx tokenizer='hf-internal-testing/x' max_tokens=5",
     "HF_TOKEN=" + MASK + " tokenizer='hf-internal-testing/x' max_tokens=5"),
]


@pytest.mark.parametrize("line,shown", SECRET_LINES)
def test_secrets_in_log_lines_are_masked_and_their_neighbours_are_not(line, shown):
    found: set[str] = set()
    assert L.mask_secrets(line, found) == shown
    assert found and all(secret not in shown for secret in found)


def test_secrets_never_reach_the_parsed_terms():
    lines = ["INFO 09-03 [utils.py:328] non-default args: {'model': 'https://user:pw123456@hub.example/org/m', "
             "'hf_token': 'hf_abcdefghijklmnopqrstuvwx'}\n",
             "ValueError: No available memory for the cache blocks. token=hf_abcdefghijklmnopqrstuvwx\n"]
    log, secrets = parse_log(lines, "vllm")
    assert "hf_abcdefghijklmnopqrstuvwx" in secrets and "pw123456" in secrets
    assert log.args["hf_token"] == MASK and "pw123456" not in str(log.model)
    assert "hf_abc" not in log.failure


def test_ranks_are_capped(monkeypatch):
    monkeypatch.setattr(L, "MAX_RANKS", 3)
    lines = [f"(VllmWorker rank={i} pid={i}) INFO Available KV cache memory: 1.00 GiB\n" for i in range(10)]
    log, _ = parse_log(lines, "vllm")
    assert len(log.ranks) == 3
    assert log.notes == ["more than 3 workers or devices: the others were not read (MAX_RANKS)"]


def test_binary_and_garbage_lines_are_ignored():
    lines = ["\x00\x01\xff" * 100 + "\n", "\x1b[31mERROR\x1b[0m nothing here\n", "Model loading took 1.5 GiB\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == {P.WEIGHTS: gib(1.5)} and log.lines == 3


def test_every_pattern_example_passes_the_keyword_filter():
    for pattern in P.ALL_PATTERNS:
        assert any(word in pattern.example for word in sift.KEYWORDS), pattern.id


def test_a_long_line_is_read_for_arguments_only():
    pad = "." * sift.MAX_TERM_LINE_CHARS + " "  # in front: spaces after a line's text are taken off as a transport's
    lines = [f"{pad}Model loading took 1.5 GiB\n", f"{pad}INFO non-default args: {{'model': 'org/m'}}\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == {} and log.model == "org/m"


@pytest.mark.parametrize("buffer,device", [
    ("CPU_Mapped", "CPU"), ("CPU_REPACK", "CPU"), ("CPU_AARCH64", "CPU"), ("CUDA_Host", "CPU"), ("CPU", "CPU"),
    ("CUDA0_Split", "CUDA0"), ("CUDA1", "CUDA1"), ("Metal_Mapped", "Metal"), ("ROCm0", "ROCm0"),
    # Metal's buffer types (ggml-metal.cpp@0c1e57098): shared, private (no unified memory) and mapped, one device
    ("MTL0", "MTL0"), ("MTL0_Private", "MTL0"), ("MTL0_Mapped", "MTL0"), ("MTL1_Private", "MTL1"),
])
def test_a_llama_cpp_buffer_type_is_read_as_its_device(buffer, device):
    assert L.buffer_device(buffer) == device


def test_model_buffers_of_one_device_add_up_and_a_dry_run_adds_nothing():
    lines = ["load_tensors:   CPU_Mapped model buffer size =     0.00 MiB\n",  # the --fit dry run
             "load_tensors:   CPU_Mapped model buffer size =     0.97 MiB\n",
             "load_tensors:   CPU_REPACK model buffer size =     0.90 MiB\n",
             "load_tensors:        CUDA0 model buffer size =   100.00 MiB\n",
             "load_tensors:  CUDA0_Split model buffer size =    50.00 MiB\n"]
    log, _ = parse_log(lines, "llama.cpp")
    assert log.ranks["CPU"][P.WEIGHTS] == mib(0.97) + mib(0.90)
    assert log.ranks["CUDA0"][P.WEIGHTS] == mib(100) + mib(50)


def test_the_live_watch_stops_after_an_engine_neutral_failure_too():
    """torch's out-of-memory line belongs to no engine's table: it still ends the start-up part, so an endless
    log after it is read only for the grace lines (not to the byte or deadline cap)."""
    from gpustack_guard.core.verify.live import StartUpWatch

    watch = StartUpWatch(grace_lines=5)
    lines = ["INFO 03-19 07:27:40 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.6 seconds",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of "
             "23.57 GiB of which 594.88 MiB is free."]  # the traceback's last line, no engine's prefix
    assert all(watch.feed(line) for line in lines)
    fed = [watch.feed("INFO GET /health 200") for _ in range(5)]
    assert fed == [True, True, True, True, False]


def test_the_fraction_in_sglangs_refusal_joins_the_printed_arguments():
    lines = ["[2025-12-11 10:35:01] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=2, "
             "mem_fraction_static=0.9)\n",
             "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
             "self.server_args.mem_fraction_static=0.2\n"]
    log, _ = parse_log(lines, "sglang")
    assert log.args["mem_fraction_static"] == 0.2 and log.args["tp_size"] == 2  # replaced one, kept the rest
    assert log.failure_kind == "no-kv-memory"
    alone, _ = parse_log(lines[1:], "sglang")
    assert alone.args == {"mem_fraction_static": 0.2}
    near, _ = parse_log(["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"], "sglang")
    assert near.args == {} and near.failure_kind == "no-kv-memory"


@pytest.mark.parametrize("line,device,free_mib", [
    # b5000 on: the device's name, then its free memory
    ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4070 SUPER) - 11053 MiB free\n",
     "CUDA0", 11053),
    # build 6934 (llama.cpp PR #16962): the PCI bus id between the two, on each device
    ("llama_model_load_from_file_impl: using device CUDA1 (NVIDIA GeForce RTX 3060) (0000:04:00.0) - 11822 MiB free\n",
     "CUDA1", 11822),
    ("llama_model_load_from_file_impl: using device ROCm0 (AMD Radeon RX 7900 XTX) (0000:C3:00.0) - 24560 MiB free\n",
     "ROCm0", 24560),
    # a backend without a device id prints "unknown id" there (src/llama.cpp): Metal (build 8164), Vulkan (Docker
    # Model Runner's b1-e365e65), and the same line behind journald's prefix of an ollama service
    ("llama_model_load_from_file_impl: using device MTL0 (Apple M5) (unknown id) - 18185 MiB free\n", "MTL0", 18185),
    ("llama_model_load_from_file_impl: using device Vulkan1 (Radeon RX 560 Series) (unknown id) - 3169 MiB free\n",
     "Vulkan1", 3169),
    ("May 05 01:32:44 host ollama[3010]: llama_model_load_from_file_impl: using device Vulkan0 (AMD Radeon RX 7900 "
     "XTX) (unknown id) - 24560 MiB free\n", "Vulkan0", 24560),
])
def test_each_llama_cpp_device_line_gives_its_free_memory(line, device, free_mib):
    log, _ = parse_log([line], "llama.cpp")
    assert log.ranks[device] == {P.FREE_BEFORE_LOAD: mib(free_mib)}


def test_a_llama_cpp_device_line_without_a_free_figure_gives_none():
    log, _ = parse_log(["llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) "
                        "(0000:04:00.0)\n"], "llama.cpp")
    assert log.terms() == {}


def test_a_negative_v1_kv_budget_is_the_no_kv_memory_refusal():
    """kv_cache_utils.py@v0.23.0 check_enough_kv_cache_memory raises "No available memory for the cache blocks" on
    available_memory <= 0, right after gpu_worker.py prints the budget: an excerpt cut before the ValueError
    (vllm#23278) still shows the refusal, and a whole traceback (0.23's, the index's Qwen2.5-VL-7B run at gmu 0.22)
    gives the same one."""
    cut = parse("vllm/v1-0.10.1-gpt-oss-120b-h100-pcie-no-kv-memory.log")
    assert (cut.failure_kind, cut.started, cut.failure_line) == ("no-kv-memory", False, 10)
    whole, _ = parse_log([
        "(EngineCore pid=129) INFO 07-01 04:24:37 [gpu_worker.py:480] Available KV cache memory: -14.28 GiB\n",
        "(EngineCore pid=129) ERROR 07-01 04:24:37 [core.py:1195] EngineCore failed to start.\n",
        "(EngineCore pid=129) ERROR 07-01 04:24:37 [core.py:1195] ValueError: No available memory for the cache "
        "blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
        "memory reservation on the CPU backend, despite its name).\n"], "vllm")
    assert (whole.failure_kind, whole.failure_line) == ("no-kv-memory", 1)
    assert P.KV_CACHE not in whole.terms()  # a negative budget is no pool
    # a positive budget, however small, is a figure and no outcome (the engine may still refuse on length)
    small, _ = parse_log(["INFO [gpu_worker.py:480] Available KV cache memory: 0.3 GiB\n"], "vllm")
    assert small.failure_kind is None and small.terms() == {P.KV_CACHE: gib(0.3)}


@pytest.mark.parametrize("line,version", [
    ("build: 6945 (cc98f8d34) with MSVC 19.29.30154.0 for x64\n", "6945"),
    # release binaries of 2026 (ROCm/ROCm#6227) print the build number and commit on one token
    ("build_info: b9106-dd9280a66\n", "9106"),
    ("May 11 16:50:19 host llama-server[42]: build_info: b10507-0c1e57098\n", "10507"),
    # a depth-1 clone counts one commit (Docker Model Runner's b1-e365e65): no build number
    ("build_info: b1-e365e65\n", None),
])
def test_each_llama_cpp_build_line_gives_its_build(line, version):
    log, _ = parse_log([line], "llama.cpp")
    assert log.engine_version == version


@pytest.mark.parametrize("line,version", [
    # the examples' own line until autumn 2024 (llama.cpp#6184's b2477 main; perplexity and the rest print it alike)
    ("main: build = 2477 (f9c7ba34)\n", "2477"),
    ("perplexity: build = 2849 (e3c337d8)\n", "2849"),
    # llama-server's JSON record (llama.cpp PR #4620's b1702 with "message", llama-cpp-python 0.2.56's with "msg"
    # after "tid"), as docker's json-file carries it, and the same record as --log-format text prints it
    ('{"timestamp":1703493143,"level":"INFO","function":"main","line":2711,"message":"build info","build":1702,'
     '"commit":"6f35a4a"}\n', "1702"),
    ('{"tid":"140","timestamp":1715000000,"level":"INFO","function":"main","line":2819,"msg":"build info",'
     '"build":2849,"commit":"e3c337d8"}\n', "2849"),
    ('{"log":"{\\"timestamp\\":1703493143,\\"level\\":\\"INFO\\",\\"function\\":\\"main\\",\\"line\\":2711,'
     '\\"message\\":\\"build info\\",\\"build\\":1702,\\"commit\\":\\"6f35a4a\\"}\\n","stream":"stderr"}\n', "1702"),
    ('INFO [main] build info | build=3871 commit="f37ceeaa" tid="0x1f9bab240" timestamp=1731010169\n', "3871"),
    ('INFO [                    main] build info | build=2849 commit="e3c337d8" tid="1" timestamp=1\n', "2849"),
])
def test_each_older_llama_cpp_build_line_gives_its_build(line, version):
    log, _ = parse_log([line, "llama_new_context_with_model: n_ctx      = 512\n"], "llama.cpp")
    assert log.engine_version == version
    assert not log.notes


@pytest.mark.parametrize("count", ["1", "10", "500"])
def test_a_server_build_record_count_below_its_first_build_is_not_the_build(count):
    # an ollama runner built from a shallow clone of llama.cpp logs that clone's count (build=1, build=10); the
    # record is newer than b500 (P.LLAMACPP_SERVER_BUILD_RECORD_SINCE), so such a count is no build
    line = f'INFO [main] build info | build={count} commit="1e6f655" tid="1" timestamp=1724992818\n'
    log, _ = parse_log([line, "llama_new_context_with_model: n_ctx      = 2048\n"], "llama.cpp")
    assert log.engine_version is None
    assert any(f"b{count} is below b501" in note for note in log.notes)
    log, _ = parse_log([line.replace(f"build={count} ", "build=501 ")], "llama.cpp")
    assert log.engine_version == "501"


@pytest.mark.parametrize("line", [
    "build: {n} (cc98f8d34) with cc for x64\n", "main: build = {n} (f9c7ba34)\n",
    'INFO [main] build info | build={n} commit="f37ceeaa" tid="1" timestamp=1\n', "build_info: b{n}-dd9280a66\n",
])
def test_a_build_count_of_thousands_of_digits_is_no_build_and_no_internal_error(line):
    # int() of a 5,000-digit count raised past Python's 4,300-digit limit (exit 3); nine digits are read, more are not
    log, _ = parse_log([line.format(n="9" * 5000), "llama_new_context_with_model: n_ctx      = 512\n"], "llama.cpp")
    assert log.engine_version is None
    log, _ = parse_log([line.format(n="987654321"), "llama_new_context_with_model: n_ctx      = 512\n"], "llama.cpp")
    assert log.engine_version == "987654321"


@pytest.mark.parametrize("header,backend", [
    ("ggml_init_cublas: found 2 CUDA devices:\n", "CUDA"),  # llama.cpp PR #4620, b1702
    ("ggml_init_cublas: found 1 ROCm devices:\n", "ROCm"),  # GGML_CUDA_NAME of a HIP build (0.2.20's ggml-cuda.cu)
    ("ggml_cuda_init: found 1 ROCm devices:\n", "ROCm"),
])
def test_the_cuda_backends_device_header_of_every_build_names_the_backend(header, backend):
    # the header before spring 2024 was ggml_init_cublas's: read as ggml_cuda_init's, it names the backend
    hits = [(p, m) for p in P.LLAMACPP_PATTERNS if (m := p.regex.search(header))]
    assert [(p.id, m.group("backend")) for p, m in hits] == [("llamacpp-devices-found", backend)]


@pytest.mark.parametrize("lines,flag", [
    (["main: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true\n"], "--kv-unified"),
    (["llama_context: kv_unified    = true\n"], "--kv-unified"),
    (["0.06.588.133 I llama_context: kv_unified    = false\n"], "--no-kv-unified"),
    (["1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'\n"],
     "--no-kv-unified"),
    # a restart: the start-up whose cache line comes later is the one estimated
    (["llama_context: kv_unified    = true\n", "llama_context: kv_unified    = false\n"], "--no-kv-unified"),
    (["llama_context: n_ctx         = 4096\n"], None),
])
def test_the_llama_cpp_cache_a_log_built_reaches_the_rebuild(lines, flag):
    from gpustack_guard.core.verify.compare import backend_args
    log, _ = parse_log(lines, "llama.cpp")
    flags = [f for f in backend_args(log) if "kv-unified" in f]
    assert flags == ([flag] if flag else [])


@pytest.mark.parametrize("line,swa_full", [
    ("llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194#"
     "issuecomment-2868343055)\n", True),
    ("0.00.515.291 W llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/"
     "13194#issuecomment-2868343055)\n", True),
    ("llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells\n", False),
])
def test_a_full_size_window_cache_reaches_the_rebuild(line, swa_full):
    from gpustack_guard.core.verify.compare import backend_args
    log, _ = parse_log([line], "llama.cpp")
    assert ("--swa-full" in backend_args(log)) is swa_full


@pytest.mark.parametrize("lines,flags", [
    # b8700 (ollama's runner, May 2026): llama_context's list
    (["llama_context: n_batch       = 512\n", "llama_context: n_ubatch      = 256\n",
      "llama_context: flash_attn    = disabled\n"], ["--batch-size=512", "--ubatch-size=256", "--flash-attn=off"]),
    # the older function names and the 0/1 setting (llama_init_from_model from b4500, before it
    # llama_new_context_with_model)
    (["0.00.315.526 I llama_init_from_model: n_ubatch      = 2048\n", "llama_init_from_model: flash_attn    = 1\n"],
     ["--ubatch-size=2048", "--flash-attn=on"]),
    (["May 20 19:18:02 host ollama[7]: llama_new_context_with_model: n_batch    = 2048\n"], ["--batch-size=2048"]),
    # auto is the default gsg already counts as on: no flag
    (["llama_context: flash_attn    = auto\n"], []),
    # a second context (a draft model's) printed later is the last one built: its figures count
    (["llama_context: n_ubatch      = 512\n", "llama_context: n_ubatch      = 128\n"], ["--ubatch-size=128"]),
])
def test_the_llama_cpp_contexts_printed_batch_and_flash_attention_reach_the_rebuild(lines, flags):
    from gpustack_guard.core.verify.compare import backend_args
    log, _ = parse_log(lines, "llama.cpp")
    assert [f for f in backend_args(log) if f.split("=")[0] in ("--batch-size", "--ubatch-size", "--flash-attn")] \
        == flags


def test_a_release_before_the_weights_line_misses_only_the_blocks():
    # llm_engine.py@v0.2.7 (:275) and @v0.3.3 (:357) print the blocks line; the weights line arrives in 0.4.0
    # (worker/model_runner.py@v0.4.0), so a log of an earlier release lacks nothing once its release is known
    weights = "'Model loading took' (V1) or 'Loading model weights took' (V0)"
    log = parse("vllm/v0.3.3-mistral-7b-v01-mig-40gb-ray.log")
    assert log.engine_version is None
    assert log.missing() == [weights]
    assert log.missing("0.3.3") == [] and log.missing("0.2.7") == []
    assert log.missing("0.4.0") == [weights] and log.missing("0.11.0") == [weights]
    # the blocks line read the same way one release earlier, behind a collector's timestamp, a Ray worker's prefix
    # and ANSI colours
    for line in ["INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n",
                 "2024-01-11T15:51:18.123456789Z stdout F INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, "
                 "# CPU blocks: 512\n",
                 "(RayWorkerVllm pid=310) INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n",
                 "\x1b[32mINFO\x1b[0m 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n"]:
        log, _ = parse_log([line], "vllm")
        assert log.terms() == {P.GPU_BLOCKS: 229, P.CPU_BLOCKS: 512, P.KV_TOKENS: 3664, P.BLOCK_SIZE: 16}, line
        assert log.missing("0.2.7") == [] and log.missing("0.4.0") == [weights], line
    # a release the log prints itself wins over the one given: 0.4.1 printed the weights line
    log, _ = parse_log(["INFO 05-01 10:00:00 llm_engine.py:99] Initializing an LLM engine (v0.4.1) with config: "
                        "model='m', tokenizer='m'\n",
                        "INFO 05-01 10:00:09 gpu_executor.py:96] # GPU blocks: 229, # CPU blocks: 512\n"], "vllm")
    assert log.engine_version == "0.4.1" and log.missing("0.3.3") == [weights]


@pytest.mark.parametrize("line,failure", [
    # sglang#7691's rank line, a collector's timestamp before a TP rank, and a capacity of exactly 0 (0.5.23's
    # configurator: the check that raises is capacity <= 0)
    ("[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the "
     "profiled value instead.", "no-kv-memory"),
    ("2026-03-02T10:11:12.123456789Z [2026-03-02 10:11:12 TP1] max_total_tokens=4096 is larger than the profiled "
     "value 0. Use the profiled value instead.", "no-kv-memory"),
    # neighbours: a positive profiled value is the pool the engine goes on with, not a failure
    ("[2026-03-02 10:11:12 TP0] max_total_tokens=600000 is larger than the profiled value 561981. Use the profiled "
     "value instead.", None),
    ("[2026-03-02 10:11:12 TP0] max_total_tokens=600000 is larger than the profiled value 10. Use the profiled value "
     "instead.", None),
])
def test_a_profiled_capacity_of_none_below_the_token_cap_is_the_failure(line, failure):
    log, _ = parse_log([line + "\n"], "sglang")
    assert log.failure_kind == failure


REFUSAL_HEAD = "ValueError: To serve at least one request with the model's max seq len (32768),"
REFUSAL_FIGURES = "(1.75 GiB KV cache is needed, which is larger than the available KV cache memory (1.1 GiB)."


def refusal_log(*lines: str):
    log, _ = parse_log([line + "\n" for line in lines], "vllm")
    return log


def test_a_refusal_reflowed_after_its_figures_reads_the_line_after_on_its_own():
    # head and figures only, then the engine's next line: the refusal is read, and the next line is not swallowed
    log = refusal_log(REFUSAL_HEAD, "  " + REFUSAL_FIGURES,
                      "(EngineCore pid=9) INFO 09-03 10:00:00 [gpu_model_runner.py:1] Model loading took 5.19 GiB "
                      "memory and 2.1 seconds")
    assert log.failure_kind == "kv-below-max-model-len"
    assert (log.terms()[P.MAX_MODEL_LEN], log.terms()[P.KV_NEEDED], log.terms()[P.KV_CACHE]) == (
        32768, gib(1.75), gib(1.1))
    assert P.ESTIMATED_MAX_LEN not in log.terms()
    assert log.terms()[P.WEIGHTS] == gib(5.19)  # the line after the quote, read on its own


def test_a_refusal_head_at_the_end_of_a_log_is_still_read():
    log = refusal_log("INFO 09-03 10:00:00 [api_server.py:1] vLLM API server version 0.28.0", REFUSAL_HEAD)
    assert log.engine_version == "0.28.0"
    # the head alone carries no figures: no refusal is invented from it, only the ValueError's crash
    assert log.failure_kind == "engine-error"
    assert P.MAX_MODEL_LEN not in log.terms()


def test_a_one_line_refusal_is_read_as_before():
    log = refusal_log(REFUSAL_HEAD + " " + REFUSAL_FIGURES + " Based on the available memory, the estimated maximum "
                      "model length is 20512.")
    assert log.failure_kind == "kv-below-max-model-len"
    assert log.terms()[P.ESTIMATED_MAX_LEN] == 20512


_PROFILE_064 = ("INFO 11-30 13:57:06 worker.py:232] Memory profiling results: total_gpu_memory=15.56GiB "
                "initial_memory_usage=4.78GiB peak_torch_memory={peak}GiB memory_usage_post_profile=4.78GiB "
                "non_torch_memory=0.24GiB kv_cache_size=8.99GiB gpu_memory_utilization=0.90\n")
_WEIGHTS_064 = "INFO 11-30 13:57:03 model_runner.py:1077] Loading model weights took 3.2636 GB\n"


def test_the_064_activation_peak_is_the_torch_peak_less_the_ranks_own_weights():
    # worker.py@v0.6.4 prints torch's peak over the profile run with the weights still held in it
    log, _ = parse_log([_WEIGHTS_064, _PROFILE_064.format(peak="4.43")], "vllm")
    assert log.terms()[P.TORCH_PEAK] == gib(4.43)
    assert log.terms()[P.ACTIVATION] == gib(4.43) - gib(3.2636)
    # no weights line before it (an excerpt): the peak is kept, no activation is made up
    log, _ = parse_log([_PROFILE_064.format(peak="4.43")], "vllm")
    assert P.TORCH_PEAK in log.terms() and P.ACTIVATION not in log.terms()
    # each worker's peak less its own weights (multiproc workers print by pid)
    prefix = "(VllmWorkerProcess pid=4242) "
    log, _ = parse_log([_WEIGHTS_064, _PROFILE_064.format(peak="4.43"),
                        prefix + _WEIGHTS_064.replace("3.2636", "3.0000"), prefix + _PROFILE_064.format(peak="3.50")],
                       "vllm")
    assert log.ranks["main"][P.ACTIVATION] == gib(4.43) - gib(3.2636)
    assert log.ranks["pid 4242"][P.ACTIVATION] == gib(3.50) - gib(3.0)
    # a peak printed below the weights (rounding of a tiny model) is no negative activation
    log, _ = parse_log([_WEIGHTS_064, _PROFILE_064.format(peak="3.26")], "vllm")
    assert log.terms()[P.ACTIVATION] == 0

def test_the_device_lines_total_is_the_memory_of_each_device_the_start_up_used():
    # llama.cpp PR #20185 (March 2026) ends each device line with its total; the header names the backend the lines
    # number: "Device 1" of a ROCm build is ROCm1 (ROCm/ROCm#6227's b9106), of a CUDA build CUDA1. A device found
    # but not used (-dev ROCm1 leaves the iGPU out) is no rank of the deployment.
    rocm = ["ggml_cuda_init: found 2 ROCm devices (Total VRAM: 28781 MiB):\n",
            "  Device 0: AMD Radeon(TM) Graphics, gfx1036 (0x1036), VMM: no, Wave Size: 32, VRAM: 12477 MiB\n",
            "  Device 1: AMD Radeon RX 9070 XT, gfx1201 (0x1201), VMM: no, Wave Size: 32, VRAM: 16304 MiB\n",
            "build_info: b9106-dd9280a66\n",
            "load_tensors:        ROCm1 model buffer size =  9938.28 MiB\n"]
    log, _ = parse_log(rocm, "llama.cpp")
    assert log.ranks == {"ROCm1": {P.GPU_MEMORY: mib(16304), P.WEIGHTS: mib(9938.28)}}
    assert log.engine_version == "9106"
    cuda = ["ggml_cuda_init: found 2 CUDA devices (Total VRAM: 35731 MiB):\n",
            "  Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes, VRAM: 11866 MiB\n",
            "  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 23865 MiB\n",
            "build: 8586 (64ac9ab66) with GNU 15.2.1 for Linux x86_64\n",
            "load_tensors:        CUDA0 model buffer size =  6096.65 MiB\n",
            "load_tensors:        CUDA1 model buffer size =  8740.26 MiB\n"]
    log, _ = parse_log(cuda, "llama.cpp")
    assert {rank: terms[P.GPU_MEMORY] for rank, terms in log.ranks.items()} == {"CUDA0": mib(11866),
                                                                               "CUDA1": mib(23865)}
    assert log.gpu_name == "NVIDIA GeForce RTX 4070"
    # builds before the PR print no total: nothing is read as one (llama.cpp#7217, b2849)
    log, _ = parse_log(["ggml_cuda_init: found 2 CUDA devices:\n",
                        "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"] + cuda[4:],
                       "llama.cpp")
    assert all(P.GPU_MEMORY not in terms for terms in log.ranks.values())
    # a restart's device lines come before its build line: the last process's header and totals are read (the
    # CUDA process after a ROCm one), not dropped with the start-up before
    log, _ = parse_log(rocm + cuda, "llama.cpp")
    assert {rank: terms[P.GPU_MEMORY] for rank, terms in log.ranks.items()} == {"CUDA0": mib(11866),
                                                                               "CUDA1": mib(23865)}
    assert log.engine_version == "8586"
    # a total --fit's table printed for the device is kept (the same figure in the logs seen)
    log, _ = parse_log(rocm[:4] + ["common_memory_breakdown_print: |   - ROCm1 (RX 9070 XT) | 16300 = 16140 + (30834 "
                                   "=  9938 +   20480 +     416) +      -30670 |\n"] + rocm[4:], "llama.cpp")
    assert log.ranks["ROCm1"][P.GPU_MEMORY] == mib(16300)


def test_a_draft_load_without_the_arguments_line_is_not_the_target():
    # round 27: 0.4.2's EAGLE draft loads after the target's pool and graphs; with the arguments line cut (a
    # wrapped paste, an excerpt) its load is told by the free memory the target still holds, not taken as the target's
    lines = [line for line in (FIXTURES / "sglang/llama2-7b-chat-eagle-docs-ci-80gb-0.4.2-f070.log").read_text(
        encoding="utf-8").splitlines(True) if not line.startswith("##") and "server_args=" not in line]
    log, _ = parse_log(lines, "sglang")
    assert log.terms()[P.WEIGHTS] == gib(78.81) - gib(66.15)
    assert log.terms()[P.KV_CACHE] == 2 * gib(21.25) and log.terms()[P.FREE_AFTER_POOL] == gib(23.46)
    # a restart into the memory the dead process gave back is a load of its own: its figures are read
    restart = [line.replace("avail mem=11.13 GB", "avail mem=78.80 GB") for line in lines]
    log, _ = parse_log(restart, "sglang")
    assert log.terms()[P.FREE_BEFORE_LOAD] == gib(78.80)
