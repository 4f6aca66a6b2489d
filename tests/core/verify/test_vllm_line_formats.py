"""Every vLLM line gsg reads, in the exact format each release prints it: one row per (pattern, release range),
the line made by formatting the format string read in that release's source (the wheel's file@tag named in the
row) with realistic values, in that release's prefix style. The parser must read the printed figure exactly.

Format strings written as f-strings in vLLM are given here in %-style with the same literal text and format specs;
vLLM's `format_gib` (utils/mem_utils.py@v0.14.1 on: `str(round(b / 2**30, 2))`) is `fg` below."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

GIB = 2**30


def g(printed: str) -> int:
    """A printed GiB (or vLLM's "GB", also 2**30) figure in bytes, as the parser converts it."""
    return int(round(float(printed) * GIB))


def fg(b: int) -> str:
    """vLLM's format_gib: round to two places and print with str() ("15.0", not "15.00")."""
    return f"{round(b / GIB, 2)}"


# The logger's prefix per release: `%(levelname)s %(asctime)s %(filename)s:%(lineno)d]` (logger.py@v0.3.3 to
# @v0.7.3), then the file in brackets (logger.py@v0.8.5 to @v0.30.0), then the process in the format itself
# (`(%(vllm_process_name)s pid=%(process)d)`, logger.py@v0.31.0 to @v0.34.0). Before 0.31 a worker's or engine
# core's lines get `(<name> pid=N) ` from _add_prefix (multiproc_worker_utils.py@v0.4.3, utils/system_utils.py),
# cyan on a terminal (`\033[1;36m` to 0.10, `\033[0;36m` after).
def render(style: str, proc: str | None, file: str, message: str, colour: bool = False) -> list[str]:
    head = "INFO 12-05 10:11:12 "
    if style == "0.3":
        prefix = f"{head}{file}] "
    elif style == "0.8":
        prefix = f"{head}[{file}] "
    else:  # "0.31": every process's name in the format
        prefix = f"({proc or 'APIServer'} pid=4242) {head}[{file}] "
        proc = None
    if proc:
        tag = f"({proc} pid=4242)"
        prefix = (f"\033[1;36m{tag}\033[0;0m " if colour else f"{tag} ") + prefix
    # NewLineFormatter (logging_utils/formatter.py@v0.7.3): each line of a message gets the prefix again
    return [prefix + part + "\r\n" for part in message.split("\n")]


BIG = 123_456_789_012  # bytes, for format_gib rows: 114.98 GiB

# (pattern id, source file@tag, style, process prefix, format, args, expected terms of that rank and the engine)
ROWS = [
    # -- weights ------------------------------------------------------------------------------------------------
    ("vllm-v0-weights", "worker/model_runner.py@v0.4.3", "0.3", None, "Loading model weights took %.4f GB",
     (7.96921,), {P.WEIGHTS: g("7.9692")}),
    ("vllm-v0-weights", "worker/model_runner.py@v0.6.6 (V0 worker process)", "0.3", "VllmWorkerProcess",
     "Loading model weights took %.4f GB", (14.98891,), {P.WEIGHTS: g("14.9889")}),
    ("vllm-v0-weights", "v1/worker/gpu_model_runner.py@v0.7.3 (V1, rank prefix)", "0.3", "VllmWorker rank=1",
     "Loading model weights took %.4f GB", (3.5,), {P.WEIGHTS: g("3.5000")}),
    ("vllm-v1-weights", "v1/worker/gpu_model_runner.py@v0.8.5 and worker/model_runner.py@v0.8.5", "0.8",
     "VllmWorker rank=0", "Model loading took %.4f GiB and %.6f seconds", (14.98891, 3.65217),
     {P.WEIGHTS: g("14.9889")}),
    ("vllm-v1-weights", "v1/worker/gpu_model_runner.py@v0.10.1.1", "0.8", "VllmWorker TP1",
     "Model loading took %.4f GiB and %.6f seconds", (7.1217, 2.845758), {P.WEIGHTS: g("7.1217")}),
    ("vllm-v1-weights", "v1/worker/gpu_model_runner.py@v0.11.2-v0.13.0 ('memory and')", "0.8", "Worker_TP1",
     "Model loading took %.4f GiB memory and %.6f seconds", (70.12345, 12.0), {P.WEIGHTS: g("70.1235")}),
    ("vllm-v1-weights", "v1/worker/gpu_model_runner.py@v0.14.1-v0.33.0 (format_gib)", "0.8", "Worker_TP0",
     "Model loading took %s GiB memory and %.6f seconds", (fg(BIG), 40.5), {P.WEIGHTS: g(fg(BIG))}),
    ("vllm-v1-weights", "v1/worker/gpu/model_runner.py@v0.14.1-v0.27.1 (runner v2, format_gib of 15 GiB)", "0.8",
     None, "Model loading took %s GiB and %.6f seconds", (fg(15 * GIB), 4.0), {P.WEIGHTS: 15 * GIB}),
    ("vllm-v1-weights", "v1/worker/gpu/model_runner.py@v0.34.0", "0.31", "Worker_PP1_TP0",
     "Model loading took %s GiB memory and %.6f seconds", (fg(BIG), 9.25), {P.WEIGHTS: g(fg(BIG))}),
    # -- KV capacity in tokens and the concurrency it gives ------------------------------------------------------
    ("vllm-v1-kv-tokens", "v1/core/kv_cache_utils.py@v0.8.5-v0.27.1", "0.8", "EngineCore_0",
     "GPU KV cache size: %s tokens", (f"{1192160:,}",), {P.KV_TOKENS: 1_192_160}),
    ("vllm-concurrency", "v1/core/kv_cache_utils.py@v0.8.5-v0.27.1 (max_model_len with commas)", "0.8",
     "EngineCore_DP0", "Maximum concurrency for %s tokens per request: %.2fx", (f"{16384:,}", 72.7646),
     {P.MAX_MODEL_LEN: 16384, P.MAX_CONCURRENCY: 72.76}),
    ("vllm-concurrency", "executor/gpu_executor.py@v0.6.6, executor_base.py@v0.7.3-v0.10.2 (V0: a bare int)", "0.3",
     None, "Maximum concurrency for %s tokens per request: %.2fx", (32768, 5.8621),
     {P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 5.86}),
    ("vllm-kv-tokens-one-line", "v1/core/kv_cache_utils.py@v0.28.0-v0.29.0 ('GPU' fixed)", "0.8", "EngineCore",
     "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
     (f"{158656:,}", f"{32768:,}", 4.8418), {P.KV_TOKENS: 158_656, P.MAX_MODEL_LEN: 32768, P.MAX_CONCURRENCY: 4.84}),
    ("vllm-kv-tokens-one-line", "v1/core/kv_cache_utils.py@v0.30.0-v0.31.0 (the device type)", "0.31",
     "EngineCore_DP0", "%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
     ("XPU", f"{2048:,}", f"{1024:,}", 2.0), {P.KV_TOKENS: 2048, P.MAX_MODEL_LEN: 1024, P.MAX_CONCURRENCY: 2.0}),
    ("vllm-kv-tokens-one-line", "v1/core/kv_cache_utils.py@v0.34.0 (`pools`, GPU alone)", "0.31", "EngineCore",
     "%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
     ("GPU", f"{1234560:,}", f"{131072:,}", 9.4189),
     {P.KV_TOKENS: 1_234_560, P.MAX_MODEL_LEN: 131072, P.MAX_CONCURRENCY: 9.42}),
    # -- V0 and early V1 blocks ----------------------------------------------------------------------------------
    ("vllm-v0-blocks", "engine/llm_engine.py@v0.3.3 (an f-string)", "0.3", None, "# GPU blocks: %s, # CPU blocks: %s",
     (7281, 2048), {P.GPU_BLOCKS: 7281, P.CPU_BLOCKS: 2048}),
    ("vllm-v0-blocks", "executor/gpu_executor.py@v0.4.3-v0.6.6", "0.3", None, "# GPU blocks: %d, # CPU blocks: %d",
     (27798, 2048), {P.GPU_BLOCKS: 27798, P.CPU_BLOCKS: 2048}),
    ("vllm-v0-blocks", "executor/executor_base.py@v0.7.3-v0.10.2 (device_name 'cuda')", "0.8", None,
     "# %s blocks: %d, # CPU blocks: %d", ("cuda", 6001, 1638), {P.GPU_BLOCKS: 6001, P.CPU_BLOCKS: 1638}),
    ("vllm-v0-blocks", "executor/executor_base.py@v0.8.5, platforms/rocm.py@v0.8.5 (device_name 'rocm')", "0.8",
     None, "# %s blocks: %d, # CPU blocks: %d", ("rocm", 12450, 4096), {P.GPU_BLOCKS: 12450, P.CPU_BLOCKS: 4096}),
    ("vllm-v1-blocks", "v1/executor/uniproc_executor.py@v0.6.6, v1/core/kv_cache_utils.py@v0.7.3", "0.3", None,
     "# GPU blocks: %d", (1381,), {P.GPU_BLOCKS: 1381}),
    # -- the KV memory each worker found -------------------------------------------------------------------------
    ("vllm-v1-available-kv", "v1/worker/gpu_worker.py@v0.9.2-v0.13.0 (%.2f)", "0.8", "VllmWorker rank=0",
     "Available KV cache memory: %.2f GiB", (31.8312,), {P.KV_CACHE: g("31.83")}),
    ("vllm-v1-available-kv", "v1/worker/gpu_worker.py@v0.14.1-v0.34.0 (format_gib)", "0.8", "Worker_TP1",
     "Available KV cache memory: %s GiB", (fg(BIG),), {P.KV_CACHE: g(fg(BIG))}),
    ("vllm-v1-available-kv", "v1/worker/gpu_worker.py@v0.34.0", "0.31", "Worker_TP0_EP0",
     "Available KV cache memory: %s GiB", (fg(56 * GIB),), {P.KV_CACHE: 56 * GIB}),
    ("vllm-kv-memory-set-0.10", "v1/worker/gpu_worker.py@v0.10.2 (--kv-cache-memory; free memory unrounded)",
     "0.8", "Worker_TP0", "Initial free memory %s GiB, reserved %.2fGiB memory for KV Cache as specified by "
     "kv_cache_memory_bytes config and skipped memory profiling.", (78.51234588623047, 40.0),
     {P.FREE_BEFORE_LOAD: g("78.51234588623047"), P.KV_CACHE: 40 * GIB}),
    ("vllm-kv-memory-set-0.10", "worker/worker.py@v0.10.2 (V0)", "0.8", None, "Initial free memory %.2f GiB, "
     "reserved %.2fGiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory "
     "profiling.", (78.51, 12.5), {P.FREE_BEFORE_LOAD: g("78.51"), P.KV_CACHE: g("12.5")}),
    ("vllm-kv-memory-set", "v1/worker/gpu_worker.py@v0.11.2-v0.13.0 (%.2f, a space)", "0.8", "Worker_TP1",
     "Initial free memory %.2f GiB, reserved %.2f GiB memory for KV Cache as specified by kv_cache_memory_bytes "
     "config and skipped memory profiling.", (78.51, 40.0), {P.FREE_BEFORE_LOAD: g("78.51"), P.KV_CACHE: 40 * GIB}),
    ("vllm-kv-memory-set", "v1/worker/gpu_worker.py@v0.14.1-v0.34.0 (format_gib)", "0.31", "Worker_TP0",
     "Initial free memory %s GiB, reserved %s GiB memory for KV Cache as specified by kv_cache_memory_bytes config "
     "and skipped memory profiling.", (fg(BIG), fg(40 * GIB)), {P.FREE_BEFORE_LOAD: g(fg(BIG)), P.KV_CACHE: 40 * GIB}),
    ("vllm-kv-reduced-for-multimodal", "multimodal/gpu_ipc_memory.py@v0.27.1-v0.34.0 (after the KV line)", "0.31",
     "Worker_TP0", "Available KV cache memory: %s GiB\nReserving %s GiB of GPU memory for frontend multimodal "
     "decoding (%s GiB raw-frame semaphore budget, %s GiB decoder+CUDA-context across %d API server(s) @ %s "
     "GiB/server); KV cache memory reduced to %s GiB.", ("54.0", "2.5", "2.0", "0.5", 1, "0.5", "51.5"),
     {P.KV_CACHE: g("51.5")}),
    # 0.34's extensible KV cache: the estimate printed before warm-up is replaced by what each worker measured after
    # it (format_gib), then by the blocks all ranks committed (`%.2f`); 2 MiB blocks (Llama-3.1-8B's 16 tokens)
    ("vllm-extensible-kv-measured", "v1/worker/extensible_kv_cache.py@v0.34.0 measure_kv_cache_blocks (format_gib)",
     "0.31", "Worker_TP1", "Available KV cache memory: %s GiB\nMemory after warmup: %s GiB free, %s GiB committed to "
     "the KV cache, %s GiB kept for transient activations (%s GiB allocated at peak, %s GiB of torch reservation "
     "growth); %d KV cache blocks (%s GiB) fit within the requested %s GiB. Torch may reserve up to %s GiB.",
     (fg(70 * GIB), "3.2", "40.0", "1.88", "1.88", "0.5", 33000, fg(33000 * 2 * 2**20), fg(BIG), "20.5"),
     {P.KV_CACHE: g("64.45"), P.REQUESTED: g(fg(BIG))}),
    ("vllm-extensible-kv-extended", "v1/worker/extensible_kv_cache.py@v0.34.0 extend_kv_cache (%.2f)", "0.31",
     "Worker_TP0", "Available KV cache memory: %s GiB\nExtended KV cache to %d blocks (%.2f GiB).",
     (fg(70 * GIB), 32768, 32768 * 2 * 2**20 / GIB), {P.KV_CACHE: 64 * GIB}),
    # -- the stat logger's blocks once the engine is up ----------------------------------------------------------
    ("vllm-v1-engine-blocks", "v1/metrics/loggers.py@v0.11.0 log_engine_initialized (info)", "0.8", None,
     "Engine %03d: vllm cache_config_info with initialization after num_gpu_blocks is: %d", (0, 52510),
     {P.GPU_BLOCKS: 52510}),
    ("vllm-v1-engine-blocks", "v1/metrics/loggers.py@v0.20.0 and @v0.30.0 (the aggregate logger's info)", "0.8",
     None, "%d Engines: vllm cache_config_info with initialization after num_gpu_blocks is: %d", (2, 15709),
     {P.GPU_BLOCKS: 15709}),
    ("vllm-v1-engine-blocks", "loggers.py@v0.30.0 wording under the 0.31 prefix (logger.py@v0.31.0)", "0.31", "EngineCore",
     "%d Engines: vllm cache_config_info with initialization after num_gpu_blocks is: %d", (1, 1234),
     {P.GPU_BLOCKS: 1234}),
    # -- V0's profile ----------------------------------------------------------------------------------------------
    ("vllm-profile-0.6.4", "worker/worker.py@v0.6.4 (note 'Gib')", "0.3", None,
     "Memory profiling results: total_gpu_memory=%.2fGiB initial_memory_usage=%.2fGiB peak_torch_memory=%.2fGiB "
     "memory_usage_post_profile=%.2fGib non_torch_memory=%.2fGiB kv_cache_size=%.2fGiB gpu_memory_utilization=%.2f",
     (23.58, 15.34, 17.06, 15.35, 0.35, 3.81, 0.9),
     {P.GPU_MEMORY: g("23.58"), P.TORCH_PEAK: g("17.06"), P.NON_TORCH: g("0.35"), P.KV_CACHE: g("3.81"),
      P.UTILIZATION: 0.9}),
    ("vllm-profile-terms", "worker/worker.py@v0.6.6-v0.10.2 (one message of three lines)", "0.3", None,
     "Memory profiling takes %.2f seconds\nthe current vLLM instance can use total_gpu_memory (%.2fGiB) x "
     "gpu_memory_utilization (%.2f) = %.2fGiB\nmodel weights take %.2fGiB; non_torch_memory takes %.2fGiB; PyTorch "
     "activation peak memory takes %.2fGiB; the rest of the memory reserved for KV Cache is %.2fGiB.",
     (4.21, 79.22, 0.9, 71.29, 19.86, 0.16, 36.63, 14.65),
     {P.GPU_MEMORY: g("79.22"), P.UTILIZATION: 0.9, P.REQUESTED: g("71.29"), P.WEIGHTS: g("19.86"),
      P.NON_TORCH: g("0.16"), P.ACTIVATION: g("36.63"), P.KV_CACHE: g("14.65")}),
    # -- graphs ----------------------------------------------------------------------------------------------------
    ("vllm-graphs-took", "worker/model_runner.py@v0.6.6-v0.10.2, v1/worker/gpu_model_runner.py@v0.6.6-v0.33.0",
     "0.8", "Worker_TP1", "Graph capturing finished in %.0f secs, took %.2f GiB", (2.4, 0.7213),
     {P.CUDA_GRAPHS: g("0.72")}),
    ("vllm-graphs-took", "v1/worker/gpu/model_runner.py@v0.34.0", "0.31", "Worker", "Graph capturing finished in "
     "%.0f secs, took %.2f GiB", (1.0, 0.0), {P.CUDA_GRAPHS: 0}),
    ("vllm-graphs-estimated", "v1/worker/gpu_model_runner.py@v0.18.1-v0.33.0", "0.8", "Worker_TP1",
     "Estimated CUDA graph memory: %.2f GiB total", (4.3012,), {P.CUDA_GRAPHS: g("4.30")}),
    ("vllm-graphs-pool", "v1/worker/gpu_worker.py@v0.18.1-v0.34.0 (GiB = round(b / 2**30, 2))", "0.8", None,
     "CUDA graph pool memory: %s GiB (actual), %s GiB (estimated), difference: %s GiB (%.1f%%).",
     (0.11, 0.14, 0.03, 25.0), {P.CUDA_GRAPHS: g("0.11")}),
    # a graph figure is a free-memory difference (capture_model: start free - end free; profile_cudagraph_memory:
    # the same per mode, v1/worker/gpu_model_runner.py@v0.28.0) and "%.2f" keeps its sign: negative where the capture
    # gave memory back (a GB10 under 0.11.0 "took -0.03 GiB", a 0.20.0 MTP start "Estimated ... -0.87 GiB total")
    ("vllm-graphs-took", "v1/worker/gpu_model_runner.py@v0.11.0 (a negative capture)", "0.8", "EngineCore_DP0",
     "Graph capturing finished in %.0f secs, took %.2f GiB", (18.2, -0.0312), {P.CUDA_GRAPHS: g("-0.03")}),
    ("vllm-graphs-estimated", "v1/worker/gpu_model_runner.py@v0.20.0 (a negative estimate)", "0.8", "EngineCore",
     "Estimated CUDA graph memory: %.2f GiB total", (-0.8712,), {P.CUDA_GRAPHS: g("-0.87")}),
    ("vllm-graphs-pool", "v1/worker/gpu_worker.py@v0.28.0 (a capture that gave memory back)", "0.8", None,
     "CUDA graph pool memory: %s GiB (actual), %s GiB (estimated), difference: %s GiB (%.1f%%).",
     (-0.12, 0.36, 0.48, 48000000000.0), {P.CUDA_GRAPHS: g("-0.12")}),
    # only the fraction in use is read: the "equivalent" one is that less the graph estimate over CUDA's total
    ("vllm-graphs-utilization", "v1/worker/gpu_worker.py@v0.20.0-v0.30.0 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "
     "on)", "0.8", "Worker_TP0", "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
     "--gpu-memory-utilization=%.4f is equivalent to --gpu-memory-utilization=%.4f without CUDA graph memory "
     "profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to %.4f. "
     "To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.", (0.85, 0.8457, 0.8543),
     {P.UTILIZATION: 0.85}),
    ("vllm-graphs-utilization", "v1/worker/gpu_worker.py@v0.31.0-v0.34.0", "0.31", "Worker", "CUDA graph memory "
     "profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=%.4f is equivalent to "
     "--gpu-memory-utilization=%.4f without CUDA graph memory profiling.", (0.9, 0.8799), {P.UTILIZATION: 0.9}),
    # -- the advice line after graph capture: three wordings ------------------------------------------------------
    ("vllm-kv-memory-advice-0.10", "v1/worker/gpu_worker.py@v0.10.2 (info; KV in bytes)", "0.8", "Worker_TP2_EP2",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` to fit into requested memory, or "
     "`--kv-cache-memory=%d` to fully utilize gpu memory. Current kv cache memory in use is %d bytes.",
     (43.93, 44.42, 0.9, 39.98, 27.72, 1.4, 0.21, 3.45, 7564378828, 11809093120, 11423138508),
     {P.FREE_BEFORE_LOAD: g("43.93"), P.GPU_MEMORY: g("44.42"), P.WEIGHTS: g("27.72"), P.UTILIZATION: 0.9, P.REQUESTED: g("39.98"),
      P.ACTIVATION: g("1.4"), P.NON_TORCH: g("0.21"), P.CUDA_GRAPHS: g("3.45"), P.KV_CACHE: 11423138508}),
    ("vllm-kv-memory-advice-0.26", "v1/worker/gpu_worker.py@v0.26.0 (info again; format_gib)", "0.8", None,
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` (%s GiB) to fit into requested "
     "memory, or `--kv-cache-memory=%d` (%s GiB) to fully utilize gpu memory. Current kv cache memory in use is "
     "%s GiB.", ("79.19", "79.19", 0.9, "71.27", "15.27", "1.45", "0.3", "0.52", 57451540070, "53.51", 65955643187,
                 "61.43", "54.02"),
     {P.FREE_BEFORE_LOAD: g("79.19"), P.GPU_MEMORY: g("79.19"), P.WEIGHTS: g("15.27"), P.UTILIZATION: 0.9,
      P.REQUESTED: g("71.27"), P.ACTIVATION: g("1.45"), P.NON_TORCH: g("0.3"), P.CUDA_GRAPHS: g("0.52"), P.KV_CACHE: g("54.02")}),
    ("vllm-kv-memory-advice", "v1/worker/gpu_worker.py@v0.27.1-v0.34.0 (weights and non-torch together)", "0.31",
     "Worker_TP0",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for consumed memory (weights + non-torch), %s GiB for peak activation, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` (%s GiB) to fit into requested "
     "memory, or `--kv-cache-memory=%d` (%s GiB) to fully utilize gpu memory. Current kv cache memory in use is "
     "%s GiB.", ("46.99", "47.37", 0.85, "40.27", "2.81", "0.57", "0.22", 39207879578, "36.52", 46423534080,
                 "43.24", "36.88"),
     {P.FREE_BEFORE_LOAD: g("46.99"), P.GPU_MEMORY: g("47.37"), P.UTILIZATION: 0.85, P.REQUESTED: g("40.27"),
      P.ACTIVATION: g("0.57"), P.CUDA_GRAPHS: g("0.22"), P.KV_CACHE: g("36.88")}),
    # the same line quoted up to its terms (a public 0.31.0 record, fixture v1-0.31.0-llama31-8b-a100-80gb-defaults):
    # the terms still read, the KV memory the cut tail held does not; the engine core's prefix and a worker's
    ("vllm-kv-memory-advice", "v1/worker/gpu_worker.py@v0.31.0 (the line cut after its terms)", "0.31", "EngineCore",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for consumed memory (weights + non-torch), %s GiB for peak activation, and %s GiB for CUDAGraph "
     "memory.", ("78.84", "79.25", 0.92, "72.91", "15.26", "1.44", "0.23"),
     {P.FREE_BEFORE_LOAD: g("78.84"), P.GPU_MEMORY: g("79.25"), P.UTILIZATION: 0.92, P.REQUESTED: g("72.91"),
      P.ACTIVATION: g("1.44"), P.CUDA_GRAPHS: g("0.23")}),
    ("vllm-kv-memory-advice", "v1/worker/gpu_worker.py@v0.29.0 (cut after its terms, a TP worker's prefix)", "0.8",
     "Worker_TP1",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for consumed memory (weights + non-torch), %s GiB for peak activation, and %s GiB for CUDAGraph "
     "memory.", ("139.21", "139.81", 0.92, "128.63", "40.1", "2.05", "0.61"),
     {P.FREE_BEFORE_LOAD: g("139.21"), P.GPU_MEMORY: g("139.81"), P.UTILIZATION: 0.92, P.REQUESTED: g("128.63"),
      P.ACTIVATION: g("2.05"), P.CUDA_GRAPHS: g("0.61")}),
    # the capture's negative difference in each wording of the advice line: every other figure is still read (the
    # line used to go unmatched as a whole); from 0.27 its peak activation holds the graph estimate, also signed
    ("vllm-kv-memory-advice-0.10", "v1/worker/gpu_worker.py@v0.10.2 (a negative capture)", "0.8", "Worker_TP0",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` to fit into requested memory, or "
     "`--kv-cache-memory=%d` to fully utilize gpu memory. Current kv cache memory in use is %d bytes.",
     (78.57, 79.18, 0.9, 71.26, 33.88, 4.84, 0.55, -0.42, 34644505703, 41499086336, 34359738368),
     {P.FREE_BEFORE_LOAD: g("78.57"), P.GPU_MEMORY: g("79.18"), P.WEIGHTS: g("33.88"), P.UTILIZATION: 0.9, P.REQUESTED: g("71.26"),
      P.ACTIVATION: g("4.84"), P.NON_TORCH: g("0.55"), P.CUDA_GRAPHS: g("-0.42"), P.KV_CACHE: 34359738368}),
    ("vllm-kv-memory-advice-0.26", "v1/worker/gpu_worker.py@v0.26.0 (a negative capture)", "0.8", None,
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` (%s GiB) to fit into requested "
     "memory, or `--kv-cache-memory=%d` (%s GiB) to fully utilize gpu memory. Current kv cache memory in use is "
     "%s GiB.", ("79.19", "79.19", 0.9, "71.27", "14.99", "4.76", "0.13", "-0.45", 55491753575, "51.68",
                 63344644096, "58.99", "51.38"),
     {P.FREE_BEFORE_LOAD: g("79.19"), P.GPU_MEMORY: g("79.19"), P.WEIGHTS: g("14.99"), P.UTILIZATION: 0.9,
      P.REQUESTED: g("71.27"), P.ACTIVATION: g("4.76"), P.NON_TORCH: g("0.13"), P.CUDA_GRAPHS: g("-0.45"), P.KV_CACHE: g("51.38")}),
    ("vllm-kv-memory-advice", "v1/worker/gpu_worker.py@v0.28.0 (a negative estimate in the activation, a negative "
     "capture)", "0.31", "EngineCore",
     "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). Actual usage "
     "is %s GiB for consumed memory (weights + non-torch), %s GiB for peak activation, and %s GiB for CUDAGraph "
     "memory. Replace gpu_memory_utilization config with `--kv-cache-memory=%d` (%s GiB) to fit into requested "
     "memory, or `--kv-cache-memory=%d` (%s GiB) to fully utilize gpu memory. Current kv cache memory in use is "
     "%s GiB.", ("112.26", "119.63", 0.92, "110.06", "55.99", "-0.31", "-0.8", 60000000000, "55.88", 62000000000,
                 "57.74", "54.38"),
     {P.FREE_BEFORE_LOAD: g("112.26"), P.GPU_MEMORY: g("119.63"), P.UTILIZATION: 0.92, P.REQUESTED: g("110.06"),
      P.ACTIVATION: g("-0.31"), P.CUDA_GRAPHS: g("-0.8"), P.KV_CACHE: g("54.38")}),
    # -- refusals ----------------------------------------------------------------------------------------------------
    ("vllm-kv-below-len", "engine/llm_engine.py@v0.3.3, worker/worker.py@v0.4.3-v0.10.2", "0.3", None,
     "ValueError: The model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV "
     "cache (%d). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
     "engine.", (32768, 7344), {P.MAX_MODEL_LEN: 32768, P.KV_TOKENS: 7344}),
    ("vllm-v1-kv-below-len-gb", "v1/core/kv_cache_utils.py@v0.7.3 ('GB' of 2**30)", "0.3", None,
     "ValueError: To serve at least one request with the models's max seq len (%d), (%.2f GB KV cache is needed, "
     "which is larger than the available KV cache memory (%.2f GB). Try increasing `gpu_memory_utilization` or "
     "decreasing `max_model_len` when initializing the engine.", (131072, 16.0, 9.4712),
     {P.MAX_MODEL_LEN: 131072, P.KV_NEEDED: g("16.00"), P.KV_CACHE: g("9.47")}),
    ("vllm-v1-kv-below-len", "v1/core/kv_cache_utils.py@v0.8.5 (no space before the estimate)", "0.8", None,
     "ValueError: To serve at least one request with the models's max seq len (%d), (%.2f GiB KV cache is needed, "
     "which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated "
     "maximum model length is %d.  Try increasing", (221000, 10.12, 5.59, 122080),
     {P.MAX_MODEL_LEN: 221000, P.KV_NEEDED: g("10.12"), P.KV_CACHE: g("5.59"), P.ESTIMATED_MAX_LEN: 122080}),
    ("vllm-v1-kv-below-len", "v1/core/kv_cache_utils.py@v0.14.1-v0.21.0 (format_gib, no estimate)", "0.8", None,
     "ValueError: To serve at least one request with the models's max seq len (%d), (%s GiB KV cache is needed, "
     "which is larger than the available KV cache memory (%s GiB). Try increasing", (262144, "32.0", "20.5"),
     {P.MAX_MODEL_LEN: 262144, P.KV_NEEDED: 32 * GIB, P.KV_CACHE: g("20.5")}),
    ("vllm-v1-kv-below-len", "v1/core/kv_cache_planning.py@v0.34.0 (\"model's\")", "0.31", "EngineCore",
     "ValueError: To serve at least one request with the model's max seq len (%d), (%s GiB KV cache is needed, "
     "which is larger than the available KV cache memory (%s GiB). Based on the available memory, the estimated "
     "maximum model length is %d. ", (131072, "8.0", "3.25", 53248),
     {P.MAX_MODEL_LEN: 131072, P.KV_NEEDED: 8 * GIB, P.KV_CACHE: g("3.25"), P.ESTIMATED_MAX_LEN: 53248}),
    ("vllm-v1-negative-kv", "v1/worker/gpu_worker.py@v0.14.1-v0.34.0 (format_gib of a negative budget)", "0.8",
     "Worker_TP0", "Available KV cache memory: %s GiB", (fg(-int(2.14 * GIB)),), {}),
    ("vllm-free-below-requested", "v1/worker/gpu_worker.py@v0.9.2-v0.13.0 (no device)", "0.8", None,
     "ValueError: Free memory on device (%s/%s GiB) on startup is less than desired GPU memory utilization (%s, %s "
     "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     (31.44, 47.38, 0.95, 45.01),
     {P.FREE_BEFORE_LOAD: g("31.44"), P.GPU_MEMORY: g("47.38"), P.UTILIZATION: 0.95, P.REQUESTED: g("45.01")}),
    ("vllm-free-below-requested", "v1/worker/utils.py@v0.14.1-v0.34.0 (the device named)", "0.31", "Worker_TP0",
     "ValueError: Free memory on device %s (%s/%s GiB) on startup is less than desired GPU memory utilization (%s, "
     "%s GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     ("cuda:0", "20.5", "79.19", 0.9, "71.27"),
     {P.FREE_BEFORE_LOAD: g("20.5"), P.GPU_MEMORY: g("79.19"), P.UTILIZATION: 0.9, P.REQUESTED: g("71.27")}),
    ("vllm-free-below-engine-budget", "v1/worker/utils.py@v0.32.0-v0.34.0", "0.8", "Worker_TP0",
     "ValueError: Free memory on device %s (%s/%s GiB) on startup is less than the engine's budget after excluding "
     "external process's weights (%s, %s GiB). Decrease GPU memory", ("cuda:0", "20.5", "79.19", 0.9, "56.27"),
     {P.FREE_BEFORE_LOAD: g("20.5"), P.GPU_MEMORY: g("79.19"), P.UTILIZATION: 0.9}),
    ("vllm-sampler-oom", "v1/worker/gpu_model_runner.py@v0.8.5-v0.33.0", "0.8", "VllmWorker rank=0",
     "RuntimeError: CUDA out of memory occurred when warming up sampler with %d dummy requests. Please try lowering "
     "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.", (1024,), {P.MAX_RUNNING: 1024}),
    # a hybrid's state pool below max_num_seqs (raised in config/compilation.py from 0.20.0): the engine core's own
    # line, and a TP worker's traceback tail
    ("vllm-mamba-blocks-below-seqs", "config/compilation.py@v0.28.0 (f-string)", "0.31", "EngineCore",
     "ValueError: max_num_seqs (%d) exceeds available Mamba cache blocks (%d). Each decode sequence requires one "
     "Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most %d or increase "
     "gpu_memory_utilization.", (1024, 969, 969), {P.MAX_RUNNING: 1024}),
    ("vllm-mamba-blocks-below-seqs", "config/compilation.py@v0.23.1 (a TP worker)", "0.8", "Worker_TP0",
     "ValueError: max_num_seqs (%d) exceeds available Mamba cache blocks (%d).", (256, 161), {P.MAX_RUNNING: 256}),
    # -- VLLM_LOGGING_LEVEL=DEBUG: the V1 worker's budget and the profile's terms ----------------------------------
    ("vllm-v1-debug-requested", "v1/worker/gpu_worker.py@v0.10.1-v0.13.0 (%.2f)", "0.8", "EngineCore_0",
     "Initial free memory: %.2f GiB; Requested memory: %.2f (util), %.2f GiB", (43.82, 0.9, 39.88),
     {P.FREE_BEFORE_LOAD: g("43.82"), P.UTILIZATION: 0.9, P.REQUESTED: g("39.88")}),
    ("vllm-v1-debug-requested", "v1/worker/gpu_worker.py@v0.14.0-v0.34.0 (format_gib, %f)", "0.31", "Worker_TP1",
     "Initial free memory: %s GiB; Requested memory: %f (util), %s GiB", ("78.7", 0.92, "72.86"),
     {P.FREE_BEFORE_LOAD: g("78.7"), P.UTILIZATION: 0.92, P.REQUESTED: g("72.86")}),
    ("vllm-v1-debug-profile", "utils/__init__.py@v0.10.1 MemoryProfilingResult.__repr__ (%.2f)", "0.8", None,
     "Memory profiling takes %.2f seconds. Total non KV cache memory: %.2fGiB; torch peak memory increase: %.2fGiB; "
     "non-torch forward increase memory: %.2fGiB; weights memory: %.2fGiB.", (7.26, 2.78, 0.45, 0.02, 2.32),
     {P.ACTIVATION: g("0.45"), P.NON_TORCH: g("0.02")}),
    ("vllm-v1-debug-profile", "utils/mem_utils.py@v0.14.0-v0.34.0 (format_gib)", "0.31", "Worker_TP0",
     "Memory profiling takes %.2f seconds. Total non KV cache memory: %sGiB; torch peak memory increase: %sGiB; "
     "non-torch forward increase memory: %sGiB; weights memory: %sGiB.", (3.1, "17.5", "1.4", "0.3", "15.8"),
     {P.ACTIVATION: g("1.4"), P.NON_TORCH: g("0.3")}),
    # -- what ran ------------------------------------------------------------------------------------------------
    ("vllm-max-model-len", "config.py@v0.9.2, config/model.py@v0.11.0-v0.34.0", "0.8", None, "Using max model len %s",
     (32768,), {P.MAX_MODEL_LEN: 32768}),
]


@pytest.mark.parametrize("pattern_id,source,style,proc,fmt,args,expected", ROWS,
                         ids=[f"{r[0]}@{r[1].split(' ')[0]}" for r in ROWS])
def test_each_release_prints_a_line_the_parser_reads_exactly(pattern_id, source, style, proc, fmt, args, expected):
    lines = render(style, proc, "x.py:1", fmt % args)
    log, _ = parse_log(lines, "vllm")
    assert pattern_id in log.matched, (source, lines)
    rank = {None: "main", "VllmWorkerProcess": "pid 4242", "VllmWorker rank=0": "rank 0",
            "VllmWorker rank=1": "rank 1", "VllmWorker TP1": "TP1", "Worker_TP0": "TP0", "Worker_TP1": "TP1",
            "Worker_PP1_TP0": "PP1 TP0", "Worker_TP2_EP2": "TP2 EP2", "Worker_TP0_EP0": "TP0 EP0"}.get(proc, "main")
    got = dict(log.ranks.get(rank, {}))
    got.update(log.engine_terms)
    assert got == expected, source
    assert set(log.ranks) <= {rank}, log.ranks  # nothing read onto another worker


# -- the lines without a figure: each release's wording still says what it says ----------------------------------

TEXT_ROWS = [
    # (source, style, process, line, what the log must then say)
    ("entrypoints/openai/api_server.py@v0.4.3", "0.3", None, "vLLM API server version 0.4.3", ("version", "0.4.3")),
    ("entrypoints/openai/api_server.py@v0.5.5-v0.14.1, entrypoints/api_server.py to @v0.24.0", "0.8", "APIServer",
     "vLLM API server version 0.14.1", ("version", "0.14.1")),
    ("entrypoints/utils.py@v0.15.1 ... entrypoints/common/startup.py@v0.34.0", "0.31", "APIServer",
     "vLLM server version 0.34.0, serving model Qwen/Qwen3-8B", ("version", "0.34.0")),
    ("engine/llm_engine.py@v0.4.3 (an LLM engine, config spelled out)", "0.3", None,
     "Initializing an LLM engine (v0.4.3) with config: model='Qwen/Qwen1.5-7B', speculative_config=None, "
     "max_seq_len=32768, tensor_parallel_size=1", ("version", "0.4.3")),
    ("engine/llm_engine.py@v0.7.3-v0.10.2 (V0)", "0.3", None,
     "Initializing a V0 LLM engine (v0.7.3) with config: model='Qwen/Qwen2.5-7B', seed=0, use_cached_outputs=False, ",
     ("version", "0.7.3")),
    ("v1/engine/core.py@v0.7.3-v0.34.0 (V1)", "0.31", "EngineCore",
     "Initializing a V1 LLM engine (v0.34.0) with config: model='Qwen/Qwen3-8B', seed=0", ("version", "0.34.0")),
    # the same line a report quotes up to its version (the H200 audit trail's "... (v0.19.2rc1.dev100+g...) ...")
    ("v1/engine/core.py, quoted without its config (a development build)", "0.8", None,
     "Initializing a V1 LLM engine (v0.19.2rc1.dev100+gf946659ff) ...", ("version", "0.19.2rc1.dev100+gf946659ff")),
    ("v1/engine/core.py, quoted up to the version", "0.31", "EngineCore",
     "Initializing a V1 LLM engine (v0.20.0)", ("version", "0.20.0")),
    ("v1/engine/core.py, quoted without its version: nothing read", "0.8", None,
     "Initializing a V1 LLM engine ...", ("version", None)),
    ("entrypoints/openai/cli_args.py@v0.9.2, entrypoints/common/startup.py@v0.34.0", "0.8", "APIServer",
     "non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 8192, 'tensor_parallel_size': 2}",
     ("args", {"model": "Qwen/Qwen3-8B", "max_model_len": 8192, "tensor_parallel_size": 2})),
    ("engine/llm_engine.py@v0.6.6-v0.10.2, v1/engine/core.py@v0.6.6-v0.19.1", "0.8", "EngineCore_0",
     "init engine (profile, create kv cache, warmup model) took 25.78 seconds", ("started", True)),
    ("v1/engine/core.py@v0.20.2-v0.34.0 ('s', the compile time)", "0.31", "EngineCore_DP0",
     "init engine (profile, create kv cache, warmup model) took 31.20 s (compilation: 12.01 s)", ("started", True)),
    ("entrypoints/openai/api_server.py@v0.7.3", "0.3", None, "Starting vLLM API server on http://0.0.0.0:8000",
     ("started", True)),
    ("entrypoints/openai/api_server.py@v0.9.2-v0.17.1", "0.8", "APIServer",
     "Starting vLLM API server 0 on http://0.0.0.0:8000", ("started", True)),
    ("entrypoints/launchers/api_server/entry.py@v0.29.0-v0.34.0", "0.31", "APIServer",
     "Starting vLLM server on http://0.0.0.0:8000", ("started", True)),
    ("v0 worker/worker.py@v0.4.3-v0.10.2, v1/core/kv_cache_planning.py@v0.34.0", "0.3", None,
     "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
     "initializing the engine.", ("failure", "no-kv-memory")),
]


@pytest.mark.parametrize("source,style,proc,line,said", TEXT_ROWS, ids=[r[0].split(" ")[0] for r in TEXT_ROWS])
def test_each_release_text_line_says_what_it_says(source, style, proc, line, said):
    log, _ = parse_log(render(style, proc, "x.py:1", line), "vllm")
    what, value = said
    got = {"version": log.engine_version, "args": log.args, "started": log.started,
           "failure": log.failure_kind}[what]
    assert got == value, source


# -- the process prefix of each release: two workers' figures are kept apart ---------------------------------------

@pytest.mark.parametrize("style,names,ranks,colour", [
    ("0.3", ("VllmWorkerProcess", "VllmWorkerProcess"), None, True),  # multiproc_worker_utils.py@v0.4.3: by pid
    ("0.3", ("RayWorkerVllm", "RayWorkerVllm"), None, False),  # Ray's actor prefix, engine/ray_utils.py@v0.3.3
    ("0.8", ("RayWorkerWrapper", "RayWorkerWrapper"), None, False),  # executor/ray_utils.py@v0.4.3-v0.33.0
    ("0.8", ("RayWorkerProc", "RayWorkerProc"), None, False),  # v1/executor/ray_executor_v2.py@v0.34.0
    ("0.8", ("VllmWorker rank=0", "VllmWorker rank=1"), ("rank 0", "rank 1"), False),  # multiproc_executor@v0.8.5
    ("0.8", ("VllmWorker TP0", "VllmWorker TP1"), ("TP0", "TP1"), True),  # multiproc_executor.py@v0.10.1.1
    ("0.8", ("VllmWorker PP0_TP1", "VllmWorker PP1_TP1"), ("PP0 TP1", "PP1 TP1"), False),  # @v0.10.1.1, PP and TP
    ("0.8", ("Worker_TP0", "Worker_TP1"), ("TP0", "TP1"), True),  # multiproc_executor.py@v0.10.2
    ("0.31", ("Worker_DP0_PP1_TP0_EP1", "Worker_DP0_PP1_TP1_EP1"), ("DP0 PP1 TP0 EP1", "DP0 PP1 TP1 EP1"), False),
])
def test_each_release_worker_prefix_keeps_its_figures(style, names, ranks, colour):
    lines = []
    for i, name in enumerate(names):
        line = render(style, name, "gpu_worker.py:276", f"Available KV cache memory: {30 + i}.5 GiB", colour)[0]
        lines.append(line.replace("pid=4242", f"pid={100 + i}"))
    log, _ = parse_log(lines, "vllm")
    assert "vllm-process" in log.matched or names[0].startswith("Ray")  # Ray's prefix is not vLLM's own
    expected_ranks = ranks or ("pid 100", "pid 101")
    assert {rank: terms[P.KV_CACHE] for rank, terms in log.ranks.items()} == {
        expected_ranks[0]: g("30.5"), expected_ranks[1]: g("31.5")}
    assert log.binding_rank() == expected_ranks[0]


@pytest.mark.parametrize("prefix", [
    "(EngineCore pid=1)", "(EngineCore_0 pid=1)", "(EngineCore_DP1 pid=1)", "(ApiServer_0 pid=1)",
    "(APIServer_DP0 pid=1)", "(APIServer_DPRank_1 pid=1)", "(APIServer pid=1)", "(VllmWorker TP1 pid=1)",
    "(VllmWorker PP1_TP0 pid=1)", "(DPCoordinator pid=1)",
])
def test_every_process_name_vllm_gives_marks_the_log_as_vllms(prefix):
    """The names in v1/engine/core_client.py@v0.7.3, v1/engine/utils.py@v0.10.1.1 and @v0.10.2, v1/utils.py@v0.9.2
    (ApiServer_N), entrypoints/launchers/dp_supervisor.py@v0.34.0 (APIServer_DP0, APIServer_DPRank_0)."""
    log, _ = parse_log([prefix + " INFO 12-05 10:11:12 [x.py:1] hello\n"], None)
    assert "vllm-process" in log.matched and log.engine == "vllm"


def test_the_graph_profiling_line_gives_the_rebuild_its_fraction():
    # a log cut to its memory lines (no args line): the fraction the budget used is taken from this line alone
    from gpustack_guard.core.verify.compare import backend_args

    line = ("(Worker_TP0 pid=7) INFO 12-05 10:11:12 [gpu_worker.py:477] CUDA graph memory profiling is enabled "
            "(default since v0.21.0). The current --gpu-memory-utilization=0.8500 is equivalent to "
            "--gpu-memory-utilization=0.8457 without CUDA graph memory profiling.\n")
    log, _ = parse_log([line], "vllm")
    assert log.terms() == {P.UTILIZATION: 0.85}
    assert backend_args(log) == ["--gpu-memory-utilization=0.85"]


@pytest.mark.parametrize("printed,flags", [
    # the Modal L40S fixture's 0.18.0 line: prefix caching on puts a Gated DeltaNet hybrid in mamba cache mode
    # 'align' (two state pages per sequence), which the rebuild must know
    ("'kv_cache_dtype': 'fp8', 'enable_prefix_caching': True", ["--kv-cache-dtype=fp8", "--enable-prefix-caching"]),
    ("'enable_prefix_caching': False", ["--no-enable-prefix-caching"]),  # off is a flag of its own
    # async scheduling off pages one step of batched tokens in a window from 0.26.0 (window_in_flight_steps)
    ("'async_scheduling': False", ["--no-async-scheduling"]),
    ("'enable_prefix_caching': True, 'async_scheduling': True", ["--enable-prefix-caching", "--async-scheduling"]),
    ("'max_model_len': 65536", ["--max-model-len=65536"]),  # not printed: the release's default stands
    # a NemotronH run's state dtypes (index file 59839511370, 0.19.1); 'auto' is the default and no flag
    ("'mamba_ssm_cache_dtype': 'float32', 'mamba_cache_dtype': 'auto'", ["--mamba-ssm-cache-dtype=float32"]),
])
def test_the_printed_prefix_caching_and_state_dtypes_reach_the_rebuild(printed, flags):
    from gpustack_guard.core.verify import compare as C

    for style, proc in (("0.8", "APIServer"), ("0.31", "APIServer")):
        log, _ = parse_log(render(style, proc, "utils.py:233", f"non-default args: {{{printed}}}"), "vllm")
        assert C.backend_args(log) == flags, style


@pytest.mark.parametrize("style,proc,file,value", [
    ("0.8", None, "config.py:1693", 2048),  # config.py@v0.8.1, no process prefix
    ("0.8", "APIServer", "scheduler.py:222", 8192),  # config/scheduler.py@v0.10.1.1, the API server's prefix
    ("0.8", None, "scheduler.py:242", 8192),  # @v0.27.1, an offline LLM() run (the LLM-class fixture)
    ("0.31", "EngineCore", "scheduler.py:289", 16384),  # @v0.30.0-v0.34.0, the process in the format
])
def test_the_scheduler_line_gives_the_rebuild_its_batch_budget(style, proc, file, value):
    # the budget the scheduler resolved (the GPU's and usage context's default, or the flag) joins the printed
    # arguments, so an offline run is rebuilt with its own 8,192 rather than `vllm serve`'s 2,048
    from gpustack_guard.core.verify import compare as C

    lines = render(style, proc, file, f"Chunked prefill is enabled with max_num_batched_tokens={value}.")
    log, _ = parse_log(lines, "vllm")
    assert "vllm-batched-tokens" in log.matched and log.args == {"max_num_batched_tokens": value}
    assert f"--max-num-batched-tokens={value}" in C.backend_args(log)
    for near in ("Chunked prefill is enabled with max_num_batched_tokens=many.",
                 "Chunked prefill is disabled with max_num_batched_tokens=2048."):
        log, _ = parse_log(render(style, proc, file, near), "vllm")
        assert "max_num_batched_tokens" not in log.args, near


def test_the_cut_budget_line_and_the_scheduler_line_read_behind_a_collectors_timestamp():
    # `kubectl logs --timestamps` / `docker logs -t` put an ISO time before the engine's own prefix
    stamp = "2026-10-06T17:00:41.123456789Z "
    budget = ("(EngineCore pid=326) INFO 10-06 17:00:41 [gpu_worker.py:955] Free memory on device (78.84/79.25 GiB) on "
              "startup. Desired GPU memory utilization is (0.92, 72.91 GiB). Actual usage is 15.26 GiB for consumed "
              "memory (weights + non-torch), 1.44 GiB for peak activation, and 0.23 GiB for CUDAGraph memory.")
    batch = "(APIServer pid=1) INFO 10-06 17:00:02 [scheduler.py:289] Chunked prefill is enabled with " \
            "max_num_batched_tokens=8192."
    log, _ = parse_log([stamp + budget + "\n", stamp + batch + "\n"], None)
    assert log.engine == "vllm" and log.args == {"max_num_batched_tokens": 8192}
    assert log.terms() == {P.FREE_BEFORE_LOAD: g("78.84"), P.GPU_MEMORY: g("79.25"), P.UTILIZATION: 0.92,
                           P.REQUESTED: g("72.91"), P.ACTIVATION: g("1.44"), P.CUDA_GRAPHS: g("0.23")}


@pytest.mark.parametrize("style,proc,file,block", [
    ("0.8", "APIServer", "config.py:390", 544),  # models/config.py@v0.10.2 (the Qwen3-Next TP 2 fixture's line)
    ("0.8", "EngineCore", "interface.py:773", 1056),  # platforms/interface.py@v0.24.0
    ("0.31", "EngineCore", "interface.py:933", 576),  # @v0.30.0-v0.34.0, the process in the format
])
def test_a_hybrids_attention_block_is_read_and_held_against_the_estimates(style, proc, file, block):
    from gpustack_guard.core.verify import compare as C

    lines = render(style, proc, file, f"Setting attention block size to {block} tokens to ensure that attention "
                                      "page size is >= mamba page size.")
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == {P.ATTENTION_BLOCK: block}
    # a dense model's estimate carries no raised block: nothing to hold the line against, and no row without it
    assert P.ATTENTION_BLOCK not in {d.term for d in C.deltas({}, {P.ATTENTION_BLOCK: 16})}
    assert [(d.observed, d.estimated) for d in C.deltas(log.terms(), {P.ATTENTION_BLOCK: 544})] == [(block, 544)]


@pytest.mark.parametrize("dress", [
    lambda line: line,
    lambda line: line.replace("DEBUG", "INFO", 1),  # a build that logs it at info
    lambda line: line.replace("DEBUG", "WARNING", 1),
    lambda line: "2025-08-06T10:17:28.123456Z " + line,  # a collector's timestamp
    lambda line: "2025-11-24 13:54:43.087 | " + line,  # docker compose logs'
    lambda line: "(EngineCore_0 pid=1250) (RayWorkerWrapper pid=1376) " + line,  # a Ray worker's
    lambda line: "\033[1;36m(EngineCore_0 pid=82)\033[0;0m " + line,  # colour on a terminal
    lambda line: "[1;36m(EngineCore_0 pid=82)[0;0m " + line,  # colour with its escape bytes dropped by a copy
])
def test_the_debug_budget_lines_read_under_every_prefix(dress):
    # search-index file 21240355802 (VLLM_LOGGING_LEVEL=DEBUG on a 0.10.1 development build)
    lines = ["DEBUG 08-06 10:17:28 [gpu_worker.py:265] Initial free memory: 43.82 GiB; Requested memory: 0.90 "
             "(util), 39.88 GiB",
             "DEBUG 08-06 10:17:28 [gpu_worker.py:278] Memory profiling takes 7.26 seconds. Total non KV cache "
             "memory: 2.78GiB; torch peak memory increase: 0.45GiB; non-torch forward increase memory: 0.02GiB; "
             "weights memory: 2.32GiB.",
             "INFO 08-06 10:17:28 [gpu_worker.py:279] Available KV cache memory: 37.10 GiB"]
    log, _ = parse_log([dress(line) + "\n" for line in lines], "vllm")
    assert log.terms() == {P.FREE_BEFORE_LOAD: g("43.82"), P.UTILIZATION: 0.9, P.REQUESTED: g("39.88"),
                           P.ACTIVATION: g("0.45"), P.NON_TORCH: g("0.02"), P.KV_CACHE: g("37.10")}


def test_the_free_memory_after_profiling_line_is_not_read_as_the_budget():
    # the line between the two debug lines names free memory too, but none of the budget's figures
    line = ("DEBUG 08-06 10:17:28 [gpu_worker.py:272] Free memory after profiling: 41.43 GiB (total), 37.49 GiB "
            "(within requested)\n")
    log, _ = parse_log([line], "vllm")
    assert log.terms() == {}



@pytest.mark.parametrize("tail, terms", [
    (", and profiled with 3 video items of the maximum feature size.",
     {P.ENCODER_BUDGET: 8192, P.ENCODER_ITEMS: 3}),
    ("", {P.ENCODER_BUDGET: 8192}),  # Modal's log view cuts the line after the budget
])
def test_the_encoder_profile_line_is_read_and_held_against_the_estimates(tail, terms):
    from gpustack_guard.core.verify import compare as C

    lines = render("0.8", "EngineCore", "gpu_model_runner.py:4446",
                   f"Encoder cache will be initialized with a budget of 8192 tokens{tail}")
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == terms
    # a text-only model's estimate profiles no encoder: no row without the line
    assert not {d.term for d in C.deltas({}, {P.ENCODER_BUDGET: 8192, P.ENCODER_ITEMS: 1})}
    assert [(d.term, d.observed, d.estimated) for d in C.deltas(log.terms(), {P.ENCODER_BUDGET: 16384,
                                                                              P.ENCODER_ITEMS: 1})] == \
        [(P.ENCODER_BUDGET, 8192, 16384)] + ([(P.ENCODER_ITEMS, 3, 1)] if P.ENCODER_ITEMS in terms else [])


def test_a_vision_models_estimate_carries_its_encoder_budget_and_items():
    import json
    from pathlib import Path

    from gpustack_guard.core.memory.engine import estimate
    from gpustack_guard.core.memory.hfconfig import facts_from_config
    from gpustack_guard.core.spec.model import Policy
    from gpustack_guard.core.verify import compare as C

    config = Path(__file__).resolve().parents[3] / "benchmarks" / "vectors" / "qwen3-vl-30b-a3b" / "config.json"
    facts = facts_from_config(json.loads(config.read_text(encoding="utf-8")), "qwen3-vl-30b-a3b")
    est = estimate("vllm", facts, [(95830 * 2**20, "NVIDIA H100 NVL")], {"max-model-len": "8192"}, "0.13.0",
                   Policy(), {})
    # the 0.13.0 H100 NVL log's line: one image of 16,384 tokens, over the 8,192 batched tokens, sets the budget
    assert (C.estimated_terms(est)[P.ENCODER_BUDGET], C.estimated_terms(est)[P.ENCODER_ITEMS]) == (16384, 1)


# The older advice line's "GiB for weight" is model_runner.model_memory_usage rounded to 2 places, the figure
# 'Model loading took' prints (v1/worker/gpu_worker.py@v0.10.2, @v0.26.0): a rank that printed both keeps the
# loading line's, one that printed only the advice line has its weights from it (patterns.FALLBACK_TERMS)
ADVICE_026 = ("Free memory on device (78.66/79.18 GiB) on startup. Desired GPU memory utilization is (0.9, 71.26 "
              "GiB). Actual usage is 15.31 GiB for weight, 1.29 GiB for peak activation, 0.22 GiB for non-torch "
              "memory, and 1.0 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with "
              "`--kv-cache-memory=57229567898` (53.3 GiB) to fit into requested memory, or "
              "`--kv-cache-memory=65178914304` (60.7 GiB) to fully utilize gpu memory. Current kv cache memory in use "
              "is 54.45 GiB.")


@pytest.mark.parametrize("loading,weights", [(None, g("15.31")), ("Model loading took 15.3094 GiB and 4.9 seconds",
                                                                   int(round(15.3094 * GIB)))])
def test_the_advice_lines_weights_stand_in_only_for_a_missing_loading_line(loading, weights):
    lines = (render("0.8", "Worker_TP1", "gpu_model_runner.py:2392", loading) if loading else [])
    lines += render("0.8", "Worker_TP1", "gpu_worker.py:857", ADVICE_026)
    log, _ = parse_log(lines, "vllm")
    assert log.ranks["TP1"][P.WEIGHTS] == weights
    assert log.ranks["TP1"][P.KV_CACHE] == g("54.45")


# Ray nests a worker's bare `(Worker pid=N)` (no TP coordinates) in its actor's prefix (Ray Serve on 0.26.0,
# ray-project/ray PR #65486): each actor's pid is a rank, so two workers' pools stay apart and the smaller binds;
# a named worker inside an actor keeps its coordinates, and a bare Worker outside Ray stays on the main rank
@pytest.mark.parametrize("prefixes,ranks", [
    (("(RayWorkerProc pid=7) (Worker pid=7)", "(ServeReplica:app:LLMServer:m pid=1) (EngineCore pid=2) "
      "(RayWorkerProc pid=8) (Worker pid=8)"), ("pid 7", "pid 8")),
    (("(EngineCore pid=2) (RayWorkerWrapper pid=7) (Worker_TP0 pid=7)", "(RayWorkerWrapper pid=8) (Worker_TP1 pid=8)"),
     ("TP0", "TP1")),
    (("(Worker pid=7)",), ("main",)),
])
def test_a_ray_actors_bare_worker_is_its_own_rank(prefixes, ranks):
    lines = [f"{prefix} INFO 08-19 18:00:14 [gpu_worker.py:560] Available KV cache memory: {54.45 - i:.2f} GiB\n"
             for i, prefix in enumerate(prefixes)]
    log, _ = parse_log(lines, "vllm")
    assert {rank: terms[P.KV_CACHE] for rank, terms in log.ranks.items()} == \
        {rank: g(f"{54.45 - i:.2f}") for i, rank in enumerate(ranks)}
    assert log.binding_rank() == ranks[-1]
