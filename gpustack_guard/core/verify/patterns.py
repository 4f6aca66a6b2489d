"""The log lines gsg reads, per engine and release range: each row is written from a real line, quoted with its source.

Figures are kept in bytes. vLLM and SGLang print "GB" where they divide by 2**30 (vLLM's model runner
`self.model_memory_usage / float(2**30)`, SGLang's `get_available_gpu_memory` and `GB = 1024 * 1024 * 1024`),
so "GB" here is read as GiB; llama.cpp prints MiB (`/ 1024.0 / 1024.0`).

A row's `terms` maps a named group of its regex to (term, unit). Rank terms are one worker's (or, for llama.cpp,
one device's) figures; engine terms are the engine's own (KV capacity, the length it runs with).
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import cached_property

try:  # the regex parser, to find the text a pattern cannot match without (required_literal)
    from re import _parser as _regex_parser  # type: ignore[attr-defined]  # Python 3.11+
except ImportError:  # pragma: no cover  (Python 3.10)
    import sre_parse as _regex_parser

# The budget's terms under the names `gsg estimate --output json` gives them (its "budget" rows)
from gpustack_guard.core.memory.terms import (  # noqa: F401 (re-exported for the parser and compare)
    ACTIVATION,
    COMPUTE_BUFFER,
    CUDA_GRAPHS,
    ENCODER_PEAK,
    FORWARD_PEAK,
    GPU_MEMORY,
    KV_CACHE,
    KV_TOKENS,
    MAMBA_STATE,
    NON_TORCH,
    RECURRENT_STATE,
    REQUESTED,
    SAMPLER_PEAK,
    SAMPLER_WARMUP,
    WEIGHTS,
)
from gpustack_guard.core.values import frozen_value

VLLM, SGLANG, LLAMACPP = "vllm", "sglang", "llama.cpp"
# the first vLLM release whose V0 model runner prints "Loading model weights took" (worker/model_runner.py@v0.4.0;
# engine/llm_engine.py@v0.2.7 and @v0.3.3 print the blocks line and no weights line)
VLLM_WEIGHTS_LINE_SINCE = "0.4.0"
ENGINES = (VLLM, SGLANG, LLAMACPP)

GiB, MiB = 1024**3, 1024**2
UNITS = {"GiB": GiB, "GB": GiB, "MiB": MiB, "bytes": 1, "KiB": 1024, "B": 1}
# a row's unit when the line prints its own (ollama's sizes: format.HumanBytes2 picks GiB, MiB, KiB or B by size):
# the regex's "unit" group names it
UNIT_IN_LINE = "unit-in-line"
# ollama's own summary of a load (ml/device.go BackendMemory.Log): the runner's allocations under its Go engine, but
# its estimate before a llama.cpp runner loads (llm/server.go llamaServer.Load@v0.20.2), so it is held apart and
# read only where the log has no llama.cpp buffer line (logparse)
OLLAMA_LAYOUT = "ollama-layout"

# Term names: the names `gsg estimate --output json` uses for the same quantity.
UTILIZATION = "gpu_memory_utilization"
FREE_BEFORE_LOAD = "free_before_load_bytes"
# the device memory llama.cpp's --fit measured free before it projected the parameters (common_params_fit_impl):
# earlier than the load's "using device ... MiB free", so kept apart from FREE_BEFORE_LOAD
FREE_AT_FIT = "free_at_fit_bytes"
FREE_AFTER_LOAD = "free_after_load_bytes"  # SGLang's "Load weight end. avail mem": before it, this plus the weights
# SGLang's prefill graphs (piecewise to 0.5.13, "target prefill" from 0.5.14): a pool of their own, held against the
# estimate's prefill-graph reserve, not against CUDA_GRAPHS (the decode graphs' reserve, cuda_graph_max_bs x 2 MB)
PREFILL_GRAPHS = "prefill_cuda_graphs_bytes_per_gpu"
# SGLang's speculative buffers beside a mamba pool (memory_pool.py MambaPool, printed from 0.5.3): the draft tokens'
# intermediate SSM states and conv windows the target's verify writes, held apart from the slots (MAMBA_STATE) and
# against the estimate's mamba_pool speculative_state_bytes (core/memory/gated_delta.sglang_mamba_pool)
MAMBA_SPECULATIVE = "mamba_speculative_state_bytes_per_gpu"
FREE_AFTER_POOL = "free_after_kv_pool_bytes"
# SGLang 0.5.18+: what it takes off a multimodal model's KV budget for the embedding cache and the GPU feature pools
# it allocates after sizing the pool (kv_cache_configurator.py mm_runtime_reservation_gb), against the estimate's
# multimodal_kv_reserve (engines/sglang.multimodal_kv_reserve)
MM_KV_RESERVE = "multimodal_kv_reserve_bytes_per_gpu"
# vLLM 0.6.4's peak_torch_memory: torch's peak allocation over the profile run, the weights still held included
# (worker.py@v0.6.4 determine_num_available_blocks: memory_stats()["allocated_bytes.all.peak"]); less the weights it
# is the activation peak the pool was sized with (ACTIVATION_FROM_TORCH_PEAK)
TORCH_PEAK = "torch_peak_bytes"
GPU_BLOCKS = "gpu_blocks"
CPU_BLOCKS = "cpu_blocks"
BLOCK_SIZE = "block_size"
ATTENTION_BLOCK = "attention_block_size"  # the block vLLM raised for a hybrid model (mamba/GDN state per page)
MAX_MODEL_LEN = "max_model_len"
MAX_CONCURRENCY = "max_concurrency"
MAX_RUNNING = "max_num_seqs"
LAYERS_OFFLOADED = "gpu_layers_offloaded"
LAYERS_TOTAL = "layers_total"
SEQUENCES = "parallel_sequences"
TENSOR_PARALLEL = "tensor_parallel_size"
PIPELINE_PARALLEL = "pipeline_parallel_size"
KV_NEEDED = "kv_bytes_per_max_len_request"
ESTIMATED_MAX_LEN = "estimated_max_model_len"
PIPELINE_COPIES = "pipeline_copies"  # llama.cpp's scheduler copies of each graph input (extra.pipeline_copies)
# vLLM's CUDA-graph capture plan: how many sizes each mode captures, and the largest size (the gpt-oss override
# of model_executor/models/config.py raises it to 1024, 992 at 0.11.0), held against the estimate's plan
# (extra.cuda_graph_counts, extra.cuda_graph_largest) when the log prints them
GRAPHS_PIECEWISE = "cudagraph_piecewise_sizes"
GRAPHS_FULL = "cudagraph_full_sizes"
MAX_CAPTURE_SIZE = "max_cudagraph_capture_size"
# vLLM V1's encoder profile of a multimodal model: the encoder cache budget (max of the batch and one item's
# tokens) and the dummy items profile_run encodes, held against the estimate's (extra.encoder_profile)
# llama.cpp's vision projector (--mmproj, tools/mtmd/clip.cpp; examples/llava/clip.cpp before 2025): the CLIP
# context's weights and its compute buffer, on the device its backend line names. They are the projector's, not the
# text model's: a refused reserve after the CLIP backend line is the projector's warm-up, not the LLM's compute buffer
PROJECTOR_WEIGHTS = "projector_weights_bytes_per_gpu"
PROJECTOR_COMPUTE = "projector_compute_bytes_per_gpu"
ENCODER_BUDGET = "encoder_cache_budget_tokens"
ENCODER_ITEMS = "encoder_profile_items"

RANK, ENGINE = "rank", "engine"


@frozen_value(eq=True, repr=True)
class Pattern:
    id: str
    engine: str  # VLLM, SGLANG, LLAMACPP, or "" for lines every engine can print (torch's out of memory)
    releases: str  # the release range the line was read from
    regex: re.Pattern
    example: str  # the real line it was written from, as printed
    source: str  # where that line came from
    terms: dict[str, tuple[str, str]] = field(default_factory=dict)  # group -> (term, unit)
    scope: str = RANK
    kind: str = "terms"  # terms | version | args | arg-update | model | failure | started | buffer | context

    @cached_property  # read once, on the first line searched, not at import
    def needle(self) -> str:
        """Text every line this pattern matches contains: a line without it is not searched ("" when none)."""
        return required_literal(self.regex)

    @cached_property
    def needles(self) -> tuple[str, ...]:
        """Texts one of which every line this pattern matches contains (() when nothing is known): a line holding
        none is not searched. Speed, for `gsg verify` on long logs (benchmarks/hostile_logs.py): the rows without
        one required text are top-level alternatives (crash and failure wordings), each branch a text of its own;
        running their regexes over every line that passed the keyword filter was ~100 of ~140 us a line."""
        return (self.needle,) if self.needle else alternative_literals(self.regex)


def _longest_literal(items) -> str:
    best, run = "", ""
    for op, value in items:
        if op == _regex_parser.LITERAL:
            run += chr(value)
            continue
        best, run = max(best, run, key=len), ""
    return max(best, run, key=len)


def required_literal(regex: re.Pattern) -> str:
    """The longest run of plain characters at the top level of a pattern: every line it matches contains that text
    ("" when there is none, or case is ignored)."""
    if regex.flags & re.IGNORECASE:
        return ""
    return _longest_literal(_regex_parser.parse(regex.pattern, regex.flags))


def alternative_literals(regex: re.Pattern) -> tuple[str, ...]:
    """For a pattern with an alternative at its top level (`a|b|c`, or a group of it taken once, `(?:a|b)x`), the
    longest plain run of each branch of the first such alternative whose every branch has one: every line the
    pattern matches contains one of them. () when there is none, or case is ignored."""
    if regex.flags & re.IGNORECASE:
        return ()
    for op, value in _regex_parser.parse(regex.pattern, regex.flags):
        if op == _regex_parser.SUBPATTERN and len(value[-1]) == 1 and not value[1] & re.IGNORECASE:
            op, value = list(value[-1])[0]  # (?:a|b) or (a|b), taken once; not (?i:a|b)
        if op != _regex_parser.BRANCH:
            continue
        texts = tuple(_longest_literal(branch) for branch in value[1])
        if all(texts):
            return texts
    return ()


def _p(id: str, engine: str, releases: str, regex: str, example: str, source: str, terms=None,
       scope: str = RANK, kind: str = "terms") -> Pattern:
    # ASCII: a figure or build a pattern reads is [0-9] (int() takes any script's digits, str.isdigit too)
    return Pattern(id, engine, releases, re.compile(regex, re.ASCII), example, source, dict(terms or {}), scope, kind)


NUM = r"([0-9]+(?:\.[0-9]+)?)"
INT = r"([0-9][0-9,]*)"
# llama.cpp's MiB figures ("%.2f"): llama-cli, llama-completion and mtmd-cli call setlocale(LC_ALL, "") before the
# model loads (common/console.cpp console::init), so a locale with a decimal comma (de_DE, fr_FR, ru_RU) prints
# "1039,50 MiB" (search-index file 21163070082, b7300 SYCL); logparse reads a comma before one or two digits as the
# decimal point
LC_NUM = r"([0-9]+(?:[.,][0-9]+)?)"
DEVICE_NAME = r"(?P<name>(?:[^()]|\([^()]*\))+)"

# A graph-capture figure: both engines print it as a free-memory difference ("%.2f" of start free - end free:
# vLLM's capture_model and profile_cudagraph_memory, v1/worker/gpu_model_runner.py@v0.28.0; SGLang's "mem usage" of
# a capture end, avail mem before less after), negative when the allocator or driver gave memory back during the
# capture ("took -0.03 GiB" on a GB10, 0.11.0; "Estimated CUDA graph memory: -0.81 GiB total", 0.23), so the sign
# is read: without it the line, and the advice line's every other figure, went unparsed
SIGNED = r"(-?[0-9]+(?:\.[0-9]+)?)"


def _g(name: str, number: str = NUM) -> str:
    return f"(?P<{name}>{number[1:-1]})"


# The advice line's older wording (0.10.2, and 0.26 where it is info again): every figure but the KV memory, whose
# unit is the only difference between the two rows below. Its "for weight" is model_runner.model_memory_usage, the
# figure 'Model loading took' prints (v1/worker/gpu_worker.py@v0.10.2 and @v0.26.0), so a record without that line
# still has its weights (a Ray Serve 0.26.0 start, fixture vllm/v1-0.26.0-qwen3-8b-ray-serve-80gb-131k.log)
_OLD_ADVICE_HEAD = (r"Free memory on device \(" + _g(FREE_BEFORE_LOAD) + "/" + _g(GPU_MEMORY) + r" GiB\) on startup\. "
                    r"Desired GPU memory utilization is \(" + _g(UTILIZATION) + ", " + _g(REQUESTED) + r" GiB\)\. "
                    r"Actual usage is " + _g(WEIGHTS) + r" GiB for weight, " + _g(ACTIVATION) +
                    r" GiB for peak activation, " + _g(NON_TORCH) + r" GiB for non-torch memory, and " +
                    _g(CUDA_GRAPHS, SIGNED) + r" GiB for CUDAGraph memory\..*?Current kv cache memory in use is " +
                    _g(KV_CACHE))


# Terms a row gives only where no other line of the rank gave them: the advice line's weights are 'Model loading
# took' rounded to 2 decimals, printed after it; that line's 4 decimals (0.10.2) stay
FALLBACK_TERMS: dict[str, frozenset[str]] = {
    "vllm-kv-memory-advice-0.10": frozenset({WEIGHTS}),
    "vllm-kv-memory-advice-0.26": frozenset({WEIGHTS}),
}


def _old_advice_groups(kv_unit: str) -> dict:
    return {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), GPU_MEMORY: (GPU_MEMORY, "GiB"), WEIGHTS: (WEIGHTS, "GiB"),
            UTILIZATION: (UTILIZATION, "float"), REQUESTED: (REQUESTED, "GiB"), ACTIVATION: (ACTIVATION, "GiB"),
            NON_TORCH: (NON_TORCH, "GiB"), CUDA_GRAPHS: (CUDA_GRAPHS, "GiB"), KV_CACHE: (KV_CACHE, kv_unit)}


VLLM_PATTERNS = (
    _p("vllm-version", VLLM, "0.4 to the newest", r"vLLM API server version (?P<version>\S+)",
       "INFO 05-16 14:53:28 api_server.py:149] vLLM API server version 0.4.0.post1", "QwenLM/Qwen3#410",
       kind="version"),
    _p("vllm-banner-version", VLLM, "0.11.1 to the newest (the start-up banner replaced the line above)",
       r"\u2588 +version (?P<version>\d\S*)",
       "(APIServer pid=1327189) INFO 04-15 07:22:41 [utils.py:299]  \u2584\u2584 \u2584\u2588 \u2588     \u2588     "
       "\u2588 \u2580\u2584\u2580 \u2588  version 0.19.1rc1.dev301+g60995c05b", "vllm#39734", kind="version"),
    _p("vllm-server-version", VLLM, "0.15 to the newest (entrypoints/utils.py@v0.15.1; the banner's plain form: "
       "VLLM_DISABLE_LOG_LOGO=1 or a formatter that is not vLLM's; entrypoints/utils.py@v0.17.0, "
       "entrypoints/common/startup.py@v0.34.0)",
       r"vLLM server version (?P<version>\d\S*), serving model (?P<model>\S+)",
       "(APIServer pid=1) INFO 12-05 10:11:12 [startup.py:40] vLLM server version 0.34.0, serving model "
       "Qwen/Qwen3-8B", "vllm entrypoints/common/startup.py@v0.34.0 (log_version_and_model's format "
       "string; no public log found)", kind="version"),
    _p("vllm-banner-model", VLLM, "0.11.1 to the newest (the banner's model line, under its version line)",
       r"\u2588 +model +(?P<model>[^\s\u2580-\u259f]+)$",
       "  \u2588\u2584\u2588\u2580 \u2588     \u2588     \u2588     \u2588  model   openai/gpt-oss-20b",
       "vllm#39734 (the banner's next line; entrypoints/common/startup.py@v0.34.0)", kind="model"),
    _p("vllm-engine-version", VLLM, "0.4 to the newest (V0 'an LLM engine', 0.8+ 'a V0/V1 LLM engine')",
       r"Initializing an? (?:V[01] )?LLM engine(?: \(v(?P<version>[^)\s]+)\))? with config: (?P<config>.*)",
       "INFO 09-03 16:28:23 [core.py:75] Initializing a V1 LLM engine (v0.10.2.dev378+g4d7fe40fc.d20250829) "
       "with config: model='/data/datasets/models-hf/Qwen2.5-0.5B/', speculative_config=None",
       "vllm PR #24162", kind="version"),
    # the same line quoted without its config dump (a report cuts it after the version): the version only
    _p("vllm-engine-version-cut", VLLM, "0.8 to the newest (the line above, quoted up to its version)",
       r"Initializing an? V[01] LLM engine \(v(?P<version>[0-9][^)\s]*)\)(?! with config: )",
       "INFO 04-23 22:28:20 [core.py:107] Initializing a V1 LLM engine (v0.19.2rc1.dev100+gf946659ff) ...",
       "vllm v1/engine/core.py@v0.19.0 (the format string, cut after the version); a report quotes it so: "
       "search-index file 54092400981 (tests fixture vllm/v1-0.19.2dev-glm4-9b-h200-gmu060-llm-class.log)",
       kind="version"),
    _p("vllm-namespace", VLLM, "0.4 to 0.8 (args printed with their defaults)", r"\bargs: Namespace\((?P<args>.*)\)?$",
       "INFO 05-16 14:53:28 api_server.py:150] args: Namespace(host='0.0.0.0', port=8000, model='Qwen1.5-0.5B-Chat', "
       "dtype='half', gpu_memory_utilization=0.9)", "QwenLM/Qwen3#410", kind="args"),
    _p("vllm-non-default-args", VLLM, "0.9 to the newest", r"non-default args: (?P<args>\{.*\}?)$",
       "INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model_tag': '/data/datasets/models-hf/Qwen2.5-0.5B/', "
       "'model': '/data/datasets/models-hf/Qwen2.5-0.5B/', 'tensor_parallel_size': 2}", "vllm PR #24162",
       kind="args"),
    # every name each release gives its processes: VllmWorkerProcess (multiproc_worker_utils.py@v0.4.3-v0.10.2),
    # VllmWorker rank=N (v1/executor/multiproc_executor.py@v0.6.6-v0.9.2), VllmWorker TP0 / PP1_TP0
    # (@v0.10.1.1), Worker_DP0_..._EP1 (@v0.10.2-v0.34.0), EngineCore (v1/engine/core_client.py@v0.7.3),
    # EngineCore_0 (@v0.8.5, v1/engine/utils.py@v0.10.1.1), EngineCore_DP0 (v1/engine/utils.py@v0.10.2 on),
    # ApiServer_N (v1/utils.py@v0.9.2-v0.34.0, --api-server-count), APIServer_DP0 and APIServer_DPRank_0
    # (entrypoints/launchers/dp_supervisor.py@v0.28.0-v0.34.0)
    _p("vllm-process", VLLM, "0.4 to the newest (worker, engine-core and API-server prefixes: the log is vLLM's)",
       r"\((?:VllmWorker(?:Process| (?:PP\d+_)?TP\d+| PP\d+)?|EngineCore(?:_DP\d+|_\d+)?|"
       r"A(?:PI|pi)Server(?:_DP\d+|_DPRank_\d+|_\d+)?|DPCoordinator|"
       r"Worker(?:_(?:DP|PP|PCP|TP|DCP|EP)\d+)*)(?: rank=\d+)? pid=\d+",
       "(VllmWorker rank=1 pid=2978) ERROR 03-19 07:27:53 [multiproc_executor.py:375] torch.OutOfMemoryError: CUDA "
       "out of memory. Tried to allocate 1.74 GiB.", "vllm#15105", kind="marker"),
    _p("vllm-max-model-len", VLLM, "0.9 to the newest (config.py@v0.9.2, config/model.py@v0.34.0)",
       r"Using max model len " + _g(MAX_MODEL_LEN, INT),
       "INFO 09-03 16:28:17 [__init__.py:1773] Using max model len 32768", "vllm PR #24162",
       {MAX_MODEL_LEN: (MAX_MODEL_LEN, "int")}, scope=ENGINE),
    # the batch budget the scheduler resolved (the default by GPU and usage context, or the flag; printed after
    # arg_utils set it): an offline LLM() run's 8,192 or 16,384 where `vllm serve` would take 2,048 or 8,192
    _p("vllm-batched-tokens", VLLM, "0.5 to the newest (config.py@v0.8.1, config/scheduler.py@v0.10.1.1 to "
       "@v0.34.0 SchedulerConfig.__post_init__)",
       r"Chunked prefill is enabled with (?P<args>max_num_batched_tokens=\d+)",
       "INFO 09-03 16:28:17 [scheduler.py:222] Chunked prefill is enabled with max_num_batched_tokens=2048.",
       "vllm PR #24162; an offline 0.27.1 run's 8,192: tests fixture "
       "vllm/v1-0.27.1-qwen25-05b-rtx4090-wsl2-llm-class-gmu092.log",
       kind="arg-update"),
    # a hybrid model's attention block, raised so one page holds a linear-attention state (the figure gsg's
    # estimate derives: engines/vllm.py gated_delta)
    _p("vllm-hybrid-block", VLLM, "0.10.2 to the newest (models/config.py@v0.10.2 and @v0.17.0, "
       "platforms/interface.py@v0.20.0, @v0.24.0, @v0.30.0 and @v0.34.0)",
       r"Setting attention block size to " + _g(ATTENTION_BLOCK, INT) + r" tokens",
       "(APIServer pid=1804347) INFO 10-23 15:10:22 [config.py:390] Setting attention block size to 544 tokens to "
       "ensure that attention page size is >= mamba page size.", "vllm model_executor/models/config.py@v0.10.2 (the "
       "format string); a public log prints it: tests fixture vllm/v0.10.2-qwen3-next-80b-tp2-h200.log (544)",
       {ATTENTION_BLOCK: (ATTENTION_BLOCK, "int")}, scope=ENGINE),
    # the encoder profile's budget and items ("... profiled with 1 image items of the maximum feature size.");
    # Modal's log view cuts the line after the budget
    _p("vllm-encoder-budget", VLLM, "0.8.2 to the newest (V1; one format string in v1/worker/gpu_model_runner.py"
       "@v0.8.5, @v0.13.0, @v0.24.0 and @v0.30.0)",
       r"Encoder cache will be initialized with a budget of " + _g(ENCODER_BUDGET, INT)
       + r" tokens(?:, and profiled with " + _g(ENCODER_ITEMS, INT) + r" \w+ items)?",
       "INFO 04-03 09:07:49 [gpu_model_runner.py:1456] Encoder cache will be initialized with a budget of 16384 "
       "tokens, and profiled with 1 image items of the maximum feature size.", "QwenLM/Qwen3-VL#1057 (vllm 0.8.2)",
       {ENCODER_BUDGET: (ENCODER_BUDGET, "int"), ENCODER_ITEMS: (ENCODER_ITEMS, "int")}),
    _p("vllm-v0-weights", VLLM, "0.4 to 0.10 (V0 model runner; 'GB' is GiB)",
       r"Loading model weights took " + _g(WEIGHTS) + r" GB",
       "INFO 01-14 12:36:51 model_runner.py:1099] Loading model weights took 7.9692 GB", "vllm#11550",
       {WEIGHTS: (WEIGHTS, "GB")}),
    _p("vllm-v0-weights-mb", VLLM, "development builds between 0.3.3 and 0.4.0 (the first weights line printed MB: "
       "2**20 bytes; the 0.3.3 release prints none, 0.4.0 GB)",
       r"Loading model weights took " + _g(WEIGHTS) + r" MB",
       "INFO 02-29 19:21:45 model_runner.py:90] Loading model weights took 244.61 MB", "vllm PR #3120",
       {WEIGHTS: (WEIGHTS, "MiB")}),
    _p("vllm-v1-weights", VLLM, "0.7 to the newest (V1 model runner)",
       r"Model loading took " + _g(WEIGHTS) + r" (?P<unit>GiB|GB)",
       "INFO 04-24 16:33:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.652170 seconds",
       "vllm PR #17122", {WEIGHTS: (WEIGHTS, "GiB")}),
    _p("vllm-profile-0.6.4", VLLM, "0.6.4 (one line of key=value)",
       r"Memory profiling results: total_gpu_memory=" + _g(GPU_MEMORY) + r"GiB .*?peak_torch_memory=" + _g(TORCH_PEAK)
       + r"GiB .*?non_torch_memory=" + _g(NON_TORCH) + r"GiB kv_cache_size=" + _g(KV_CACHE)
       + r"GiB gpu_memory_utilization=" + _g(UTILIZATION),
       "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB "
       "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90",
       "vllm#10517", {GPU_MEMORY: (GPU_MEMORY, "GiB"), TORCH_PEAK: (TORCH_PEAK, "GiB"), NON_TORCH: (NON_TORCH, "GiB"),
                      KV_CACHE: (KV_CACHE, "GiB"), UTILIZATION: (UTILIZATION, "float")}),
    _p("vllm-profile-table-total", VLLM, "0.6.5 development builds (a table, one term a line)",
       r"worker\.py:\d+\] total_gpu_memory\s+" + _g(GPU_MEMORY) + "GiB",
       "INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB", "vllm PR #10511",
       {GPU_MEMORY: (GPU_MEMORY, "GiB")}),
    _p("vllm-profile-table-utilization", VLLM, "0.6.5 development builds",
       r"worker\.py:\d+\] gpu_memory_utilization\s+" + _g(UTILIZATION) + r"\s*$",
       "INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90", "vllm PR #10511",
       {UTILIZATION: (UTILIZATION, "float")}),
    _p("vllm-profile-table-can-use", VLLM, "0.6.5 development builds",
       r"the current vLLM instance can use\s+" + _g(REQUESTED) + "GiB",
       "INFO 12-13 19:54:18 worker.py:243] the current vLLM instance can use    71.29GiB", "vllm PR #10511",
       {REQUESTED: (REQUESTED, "GiB")}),
    _p("vllm-profile-table-weights", VLLM, "0.6.5 development builds",
       r"worker\.py:\d+\] model weights take\s+" + _g(WEIGHTS) + r"GiB\s*$",
       "INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB", "vllm PR #10511",
       {WEIGHTS: (WEIGHTS, "GiB")}),
    _p("vllm-profile-table-non-torch", VLLM, "0.6.5 development builds",
       r"worker\.py:\d+\] non_torch_memory\s+" + _g(NON_TORCH) + "GiB",
       "INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB", "vllm PR #10511",
       {NON_TORCH: (NON_TORCH, "GiB")}),
    _p("vllm-profile-table-activation", VLLM, "0.6.5 development builds",
       r"worker\.py:\d+\] PyTorch activation peak memory\s+" + _g(ACTIVATION) + "GiB",
       "INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB", "vllm PR #10511",
       {ACTIVATION: (ACTIVATION, "GiB")}),
    _p("vllm-profile-table-kv", VLLM, "0.6.5 development builds",
       r"available_kv_cache_memory\s+" + _g(KV_CACHE) + "GiB",
       "INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB", "vllm PR #10511",
       {KV_CACHE: (KV_CACHE, "GiB")}),
    _p("vllm-can-use", VLLM, "0.7 to 0.10 (V0 worker)",
       r"the current vLLM instance can use total_gpu_memory \(" + _g(GPU_MEMORY) + r"GiB\) x gpu_memory_utilization \("
       + _g(UTILIZATION) + r"\) = " + _g(REQUESTED) + "GiB",
       "INFO 01-16 09:40:00 worker.py:238] the current vLLM instance can use total_gpu_memory (79.22GiB) x "
       "gpu_memory_utilization (0.90) = 71.29GiB", "vllm PR #12126",
       {GPU_MEMORY: (GPU_MEMORY, "GiB"), UTILIZATION: (UTILIZATION, "float"), REQUESTED: (REQUESTED, "GiB")}),
    _p("vllm-profile-terms", VLLM, "0.7 to 0.10 (V0 worker)",
       r"model weights take " + _g(WEIGHTS) + r"GiB; non_torch_memory takes " + _g(NON_TORCH)
       + r"GiB; PyTorch activation peak memory takes " + _g(ACTIVATION)
       + r"GiB; the rest of the memory reserved for KV Cache is " + _g(KV_CACHE) + "GiB",
       "INFO 01-16 09:40:00 worker.py:238] model weights take 19.86GiB; non_torch_memory takes 0.16GiB; PyTorch "
       "activation peak memory takes 36.63GiB; the rest of the memory reserved for KV Cache is 14.65GiB.",
       "vllm PR #12126", {WEIGHTS: (WEIGHTS, "GiB"), NON_TORCH: (NON_TORCH, "GiB"), ACTIVATION: (ACTIVATION, "GiB"),
                          KV_CACHE: (KV_CACHE, "GiB")}),
    # 0.7 to 0.10 print current_platform.device_name: "cuda", "rocm" on AMD (executor/executor_base.py@v0.7.3 and
    # @v0.10.2, platforms/rocm.py device_name = "rocm"); 0.2 to 0.6 print "GPU" (executor/gpu_executor.py@v0.6.6)
    _p("vllm-v0-blocks", VLLM, "0.2 to 0.10 (V0: GPU, later CUDA, then cuda or rocm blocks; tokens = blocks x block "
       "size)",
       r"#? ?(?:GPU|CUDA|cuda|rocm) blocks: " + _g(GPU_BLOCKS, INT) + r", # CPU blocks: " + _g(CPU_BLOCKS, INT),
       "INFO 01-16 09:40:00 executor_base.py:95] # CUDA blocks: 6001, # CPU blocks: 1638", "vllm PR #12126",
       {GPU_BLOCKS: (GPU_BLOCKS, "int"), CPU_BLOCKS: (CPU_BLOCKS, "int")}, scope=ENGINE),
    # the stat logger's note once the engine is up: the pool's blocks (tokens = blocks x block size), "Engine 000:"
    # (v1/metrics/loggers.py@v0.11.0); from 0.20 that wording is DEBUG and the aggregate "1 Engines:" is INFO
    # (loggers.py@v0.20.0 and @v0.30.0); 0.8.5 prints neither
    _p("vllm-v1-engine-blocks", VLLM, "0.9.1 to the newest (V1 stat logger)",
       r"(?:Engine \d+|\d+ Engines): vllm cache_config_info with initialization after num_gpu_blocks is: "
       + _g(GPU_BLOCKS, INT),
       "(APIServer pid=1391815) INFO 08-19 14:58:41 [loggers.py:142] Engine 000: vllm cache_config_info with "
       "initialization after num_gpu_blocks is: 57656", "vllm PR #20707",
       {GPU_BLOCKS: (GPU_BLOCKS, "int")}, scope=ENGINE),
    _p("vllm-v1-blocks", VLLM, "0.7.0 to 0.7.3 (V1 before tokens were printed)",
       r"# GPU blocks: " + _g(GPU_BLOCKS, INT) + r"\s*$",
       "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381", "vllm PR #12569",
       {GPU_BLOCKS: (GPU_BLOCKS, "int")}, scope=ENGINE),
    _p("vllm-v1-available-kv", VLLM, "0.9 to the newest (V1 worker; v1/worker/gpu_worker.py@v0.9.2, not @v0.8.5)",
       r"Available KV cache memory: " + _g(KV_CACHE) + " GiB",
       "(EngineCore_0 pid=1399537) INFO 08-19 14:58:40 [gpu_worker.py:277] Available KV cache memory: 112.61 GiB",
       "vllm PR #20707", {KV_CACHE: (KV_CACHE, "GiB")}),
    # any run of blanks after the colon: a log quoted in a README may be aligned by hand (aws-samples/sample-claude-
    # code-multi-model self-hosted/vllm/README.md: "GPU KV cache size:         1,037,152 tokens")
    _p("vllm-v1-kv-tokens", VLLM, "0.7.4 to the newest (V1)", r"\b(?:GPU|XPU|TPU|NPU|HPU) KV cache size:\s+"
       + _g(KV_TOKENS, INT) + " tokens",
       "INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens", "vllm PR #13596",
       {KV_TOKENS: (KV_TOKENS, "int")}, scope=ENGINE),
    # 0.30 joins the capacity and the concurrency in one line and names the device type (`GPU` for CUDA and ROCm,
    # else its upper-cased type); a host-extended pool (` + host`) counts tokens off the GPU: not read as its pool
    _p("vllm-kv-tokens-one-line", VLLM, "0.28 to the newest ('GPU' in 0.28 and 0.29, the device type from 0.30: "
       "v1/core/kv_cache_utils.py@v0.28.0, @v0.30.0, @v0.34.0; v0.27.1 prints two lines)",
       r"(?:GPU|XPU|TPU|NPU|HPU) KV cache size: " + _g(KV_TOKENS, INT) + r" tokens, Maximum "
       r"concurrency for " + _g(MAX_MODEL_LEN, INT) + r" tokens per request: " + _g(MAX_CONCURRENCY) + "x",
       "(EngineCore pid=690661) INFO 09-13 01:53:04 [kv_cache_utils.py:1869] GPU KV cache size: 34,133 tokens, "
       "Maximum concurrency for 16,384 tokens per request: 2.08x", "vllm v1/core/kv_cache_utils.py@v0.28.0 "
       "(update_kv_cache_capacity's format string, its logger call at line 1869; the example is a public 0.28.0 "
       "start-up record's line verbatim, search-index file 68519422180)",
       {KV_TOKENS: (KV_TOKENS, "int"), MAX_MODEL_LEN: (MAX_MODEL_LEN, "int"),
        MAX_CONCURRENCY: (MAX_CONCURRENCY, "float")}, scope=ENGINE),
    _p("vllm-concurrency", VLLM, "0.6 to the newest (V0 and V1)",
       # not after a host-extended pool's capacity (0.33's ` + host`): that concurrency counts host memory too
       r"^(?!.*\+ host KV cache size).*?Maximum concurrency for " + _g(MAX_MODEL_LEN, INT) + r" tokens per request: "
       + _g(MAX_CONCURRENCY) + "x",
       "INFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x",
       "vllm PR #13596", {MAX_MODEL_LEN: (MAX_MODEL_LEN, "int"), MAX_CONCURRENCY: (MAX_CONCURRENCY, "float")},
       scope=ENGINE),
    _p("vllm-graphs-took", VLLM, "0.6 to the newest",
       r"Graph capturing finished in \d+ secs?, took " + _g(CUDA_GRAPHS, SIGNED) + " GiB",
       "INFO 04-10 09:32:39 [gpu_model_runner.py:6063] Graph capturing finished in 2 secs, took 0.72 GiB",
       "vllm PR #39471", {CUDA_GRAPHS: (CUDA_GRAPHS, "GiB")}),
    _p("vllm-graphs-estimated", VLLM, "0.18 to 0.33 (graph memory profiled before the KV budget; "
       "v1/worker/gpu_model_runner.py@v0.18.1-v0.33.0, gone with that runner in 0.34.0)",
       r"Estimated CUDA graph memory: " + _g(CUDA_GRAPHS, SIGNED) + " GiB total",
       "(Worker_TP1 pid=646936) INFO 03-17 17:07:06 [gpu_model_runner.py:5711] Estimated CUDA graph memory: "
       "4.30 GiB total", "vllm PR #37296", {CUDA_GRAPHS: (CUDA_GRAPHS, "GiB")}),
    # the only line of a graph-profiling start-up that prints the fraction the budget used (a log cut to its memory
    # lines then still tells it); the "equivalent" fraction is derived from the graph estimate, so it is not read
    _p("vllm-graphs-utilization", VLLM, "0.20 to the newest (v1/worker/gpu_worker.py@v0.20.0-@v0.34.0 "
       "determine_available_memory, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on)",
       r"CUDA graph memory profiling is enabled \(default since v[0-9.]+\)\. The current --gpu-memory-utilization="
       + _g(UTILIZATION) + " is equivalent to",
       "(Worker_TP0_EP0 pid=207) INFO 05-17 13:46:34 [gpu_worker.py:477] CUDA graph memory profiling is enabled "
       "(default since v0.21.0). The current --gpu-memory-utilization=0.9000 is equivalent to "
       "--gpu-memory-utilization=0.8943 without CUDA graph memory profiling.",
       "NVIDIA developer forum thread #370416 (deepseek-v4-flash-bringing-frontier-ai-to-the-home)",
       {UTILIZATION: (UTILIZATION, "float")}),
    _p("vllm-graphs-pool", VLLM, "0.19 to the newest",
       r"CUDA graph pool memory: " + _g(CUDA_GRAPHS, SIGNED) + r" GiB \(actual\)",
       "INFO 05-26 21:34:14 [gpu_worker.py:621] CUDA graph pool memory: 0.11 GiB (actual), 0.14 GiB (estimated), "
       "difference: 0.03 GiB (25.0%).", "aivrar/vllm-windows-build#4", {CUDA_GRAPHS: (CUDA_GRAPHS, "GiB")}),
    # the capture plan: tqdm's bar per mode (v1/worker/gpu_model_runner.py@v0.10.1-v0.33.0 desc "Capturing CUDA
    # graphs ({mixed prefill-decode|decode}, {mode})", v1/worker/gpu/cudagraph_utils.py@v0.34.0 "Capturing CUDA
    # graphs ({mode})"; its total is the sizes planned, so a bar cut short still counts them; 0.34's "Capturing
    # prefill CUDA graphs" set is not these), the profiler's one line from 0.20 on, and gpt-oss's override
    _p("vllm-graphs-piecewise-bar", VLLM, "0.10.1 to the newest (PIECEWISE sizes)",
       r"Capturing CUDA graphs \((?:mixed prefill-decode, )?PIECEWISE\): *\d+%\|[^|]*\| *\d+/"
       + _g(GRAPHS_PIECEWISE, INT),
       "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588"
       "\u2588\u2588\u2588| 51/51 [00:01<00:00, 33.44it/s]", "vllm PR #29335",
       {GRAPHS_PIECEWISE: (GRAPHS_PIECEWISE, "int")}, scope=ENGINE),
    _p("vllm-graphs-full-bar", VLLM, "0.10.1 to the newest (FULL sizes)",
       # cudagraph_mode FULL captures its mixed batches as FULL graphs (the estimate counts them as FULL too)
       r"Capturing CUDA graphs \((?:(?:mixed prefill-decode|decode), )?FULL\): *\d+%\|[^|]*\| *\d+/"
       + _g(GRAPHS_FULL, INT),
       "Capturing CUDA graphs (decode, FULL): 100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588"
       "\u2588| 35/35 [00:01<00:00, 33.86it/s]", "vllm PR #29335", {GRAPHS_FULL: (GRAPHS_FULL, "int")}, scope=ENGINE),
    # "{mode}={sizes} (largest={tokens})" per mode with any sizes, PIECEWISE first (capture_descs' order), so the
    # PIECEWISE group's largest is the capture ceiling; a FULL-only plan still gives its count
    _p("vllm-graphs-profiled-plan", VLLM, "0.20 to 0.33 (v1/worker/gpu_model_runner.py@v0.20.0-v0.33.0)",
       r"Profiling CUDA graph memory: (?:PIECEWISE=" + _g(GRAPHS_PIECEWISE, INT) + r" \(largest="
       + _g(MAX_CAPTURE_SIZE, INT) + r"\)(?:, )?)?(?:FULL=" + _g(GRAPHS_FULL, INT) + r" \(largest=\d+\))?",
       "(Worker_TP0 pid=4135343) INFO 06-27 19:49:53 [gpu_model_runner.py:6483] Profiling CUDA graph memory: "
       "PIECEWISE=83 (largest=1024), FULL=83 (largest=1024)", "vllm#46933",
       {GRAPHS_PIECEWISE: (GRAPHS_PIECEWISE, "int"), MAX_CAPTURE_SIZE: (MAX_CAPTURE_SIZE, "int"),
        GRAPHS_FULL: (GRAPHS_FULL, "int")}, scope=ENGINE),
    _p("vllm-gpt-oss-capture-override", VLLM, "0.10.1 to the newest (model_executor/models/config.py "
       "GptOssForCausalLMConfig: 1024, 992 at 0.11.0; 0.34.0 prints it where it sets the prefill sizes, not on SM100)",
       r"Overriding max cuda graph capture size to " + _g(MAX_CAPTURE_SIZE, INT) + " for performance",
       "(APIServer pid=4134090) INFO 06-27 19:49:10 [config.py:236] Overriding max cuda graph capture size to 1024 "
       "for performance.", "vllm#46933", {MAX_CAPTURE_SIZE: (MAX_CAPTURE_SIZE, "int")}, scope=ENGINE),
    # VLLM_LOGGING_LEVEL=DEBUG: the V1 worker's budget before "Available KV cache memory" (v1/worker/gpu_worker.py
    # determine_available_memory, logger.debug): the free memory of the start-up snapshot (before the weights), gmu
    # and gmu x total. "%.2f (util)" to 0.13, "%f (util)" (0.900000) from 0.14.0
    _p("vllm-v1-debug-requested", VLLM, "0.10.1 to the newest at DEBUG level (v1/worker/gpu_worker.py@v0.10.1, "
       "@v0.13.0, @v0.14.0 and @v0.34.0)",
       r"Initial free memory: " + _g(FREE_BEFORE_LOAD) + r" GiB; Requested memory: " + _g(UTILIZATION)
       + r" \(util\), " + _g(REQUESTED) + " GiB",
       "DEBUG 08-06 10:17:28 [gpu_worker.py:265] Initial free memory: 43.82 GiB; Requested memory: 0.90 (util), "
       "39.88 GiB", "vllm v1/worker/gpu_worker.py@v0.10.1 (the format string); a public log prints it: search-index "
       "file 21240355802 (a 0.10.1 development build at DEBUG; tests fixture vllm/v1-0.10dev-llama32-1b-debug-"
       "profile.log)",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), UTILIZATION: (UTILIZATION, "float"),
        REQUESTED: (REQUESTED, "GiB")}),
    # and the profile's own terms (MemoryProfilingResult.__repr__, vllm/utils/__init__.py@v0.10.1, utils/mem_utils.py
    # from 0.11.1 to @v0.34.0): torch's peak increase over the weights is the activation, the non-torch increase
    # since the snapshot is what the budget books as non-torch memory
    _p("vllm-v1-debug-profile", VLLM, "0.10.1 to the newest at DEBUG level (logger.debug(profile_result) in "
       "v1/worker/gpu_worker.py@v0.10.1 to @v0.28.0; its repr unchanged to @v0.34.0)",
       r"Memory profiling takes [0-9.]+ seconds\. Total non KV cache memory: [0-9.]+ ?GiB; torch peak memory "
       r"increase: " + _g(ACTIVATION) + r" ?GiB; non-torch forward increase memory: " + _g(NON_TORCH) + " ?GiB",
       "DEBUG 08-06 10:17:28 [gpu_worker.py:278] Memory profiling takes 7.26 seconds. Total non KV cache memory: "
       "2.78GiB; torch peak memory increase: 0.45GiB; non-torch forward increase memory: 0.02GiB; weights memory: "
       "2.32GiB.", "vllm utils/__init__.py@v0.10.1 MemoryProfilingResult.__repr__ (the format string); a public log "
       "prints it: search-index file 21240355802 (tests fixture vllm/v1-0.10dev-llama32-1b-debug-profile.log)",
       {ACTIVATION: (ACTIVATION, "GiB"), NON_TORCH: (NON_TORCH, "GiB")}),
    # --kv-cache-memory set: the worker skips the profile and prints this instead of "Available KV cache memory"
    # (v1/worker/gpu_worker.py determine_available_memory). 0.10.2 to 0.11.0 glue "GiB" to the KV figure (and 0.10.2's
    # V1 worker prints the free memory unrounded: `GiB = lambda b: b / GiB_bytes`); 0.11.2 on put a space before it
    _p("vllm-kv-memory-set-0.10", VLLM, "0.10.2 to 0.11.0 (v1/worker/gpu_worker.py@v0.10.2 and @v0.11.0, "
       "worker/worker.py@v0.10.2)",
       r"Initial free memory " + _g(FREE_BEFORE_LOAD) + r" GiB, reserved " + _g(KV_CACHE) + r"GiB memory for KV Cache "
       r"as specified by kv_cache_memory_bytes",
       "(EngineCore_DP0 pid=2) INFO 09-20 10:11:12 [gpu_worker.py:246] Initial free memory 78.51234588623047 GiB, "
       "reserved 40.00GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory "
       "profiling.", "vllm v1/worker/gpu_worker.py@v0.10.2 (the format string; no public log found)",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), KV_CACHE: (KV_CACHE, "GiB")}),
    _p("vllm-kv-memory-set", VLLM, "0.11.2 to the newest (v1/worker/gpu_worker.py@v0.11.2, format_gib from @v0.14.1 "
       "to @v0.34.0)",
       r"Initial free memory " + _g(FREE_BEFORE_LOAD) + r" GiB, reserved " + _g(KV_CACHE) + r" GiB memory for KV "
       r"Cache as specified by kv_cache_memory_bytes",
       "(Worker_TP0 pid=3) INFO 12-05 10:11:12 [gpu_worker.py:700] Initial free memory 78.51 GiB, reserved 40.0 GiB "
       "memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.",
       "vllm v1/worker/gpu_worker.py@v0.34.0 (the format string); a public 0.30 log prints it (tests fixture "
       "vllm/v1-0.30-gemma4-12b-nvfp4-rtx-pro-6000-kv-memory-set.log, search-index file 71067348846)",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), KV_CACHE: (KV_CACHE, "GiB")}),
    # the frontend's multimodal decoding reserve is taken from the KV memory after "Available KV cache memory" was
    # printed (multimodal/gpu_ipc_memory.py@v0.27.1 to @v0.34.0, gpu_worker.py@v0.25.1 and @v0.26.0): the pool is
    # the reduced figure
    _p("vllm-kv-reduced-for-multimodal", VLLM, "0.25.1 to the newest (mm_ipc_gpu_memory_gb set)",
       r"Reserving [0-9.]+ GiB of GPU memory for frontend multimodal decoding .*?KV cache memory reduced to "
       + _g(KV_CACHE) + " GiB",
       "(Worker_TP0 pid=3) INFO 12-05 10:11:12 [gpu_ipc_memory.py:260] Reserving 2.5 GiB of GPU memory for frontend "
       "multimodal decoding (2.0 GiB raw-frame semaphore budget, 0.5 GiB decoder+CUDA-context across 1 API "
       "server(s) @ 0.5 GiB/server); KV cache memory reduced to 51.5 GiB.",
       "vllm multimodal/gpu_ipc_memory.py@v0.34.0 (the format string; no public log found)",
       {KV_CACHE: (KV_CACHE, "GiB")}),
    # 0.34's extensible KV cache (its default on CUDA and ROCm, config/vllm.py@v0.34.0 _resolve_extensible_kv_cache):
    # "Available KV cache memory" is still printed, but it is the estimate the cache is reserved from before warm-up;
    # each worker then measures what is free after CUDA graph capture and warm-up and prints the blocks that fit
    # (format_gib), and the blocks all ranks agreed on are committed last (`%.2f`). Both replace the estimate.
    _p("vllm-extensible-kv-measured", VLLM, "0.34 to the newest (extensible KV cache; "
       "v1/worker/extensible_kv_cache.py@v0.34.0 measure_kv_cache_blocks, not in @v0.33.0)",
       r"Memory after warmup: [0-9.]+ GiB free, .*?; [0-9]+ KV cache blocks \(" + _g(KV_CACHE)
       + r" GiB\) fit within the requested " + _g(REQUESTED) + " GiB",
       "(EngineCore pid=2) INFO 12-05 10:11:53 [extensible_kv_cache.py:693] Memory after warmup: 2.31 GiB free, "
       "60.0 GiB committed to the KV cache, 1.46 GiB kept for transient activations (1.46 GiB allocated at peak, "
       "0.25 GiB of torch reservation growth); 30899 KV cache blocks (60.35 GiB) fit within the requested 79.19 GiB. "
       "Torch may reserve up to 17.46 GiB.",
       "vllm v1/worker/extensible_kv_cache.py@v0.34.0 (the format string; no public log found)",
       {KV_CACHE: (KV_CACHE, "GiB"), REQUESTED: (REQUESTED, "GiB")}),
    _p("vllm-extensible-kv-extended", VLLM, "0.34 to the newest (extensible KV cache; "
       "v1/worker/extensible_kv_cache.py@v0.34.0 extend_kv_cache, not in @v0.33.0)",
       r"Extended KV cache to [0-9]+ blocks \(" + _g(KV_CACHE) + r" GiB\)\.",
       "(EngineCore pid=2) INFO 12-05 10:11:53 [extensible_kv_cache.py:536] Extended KV cache to 30899 blocks "
       "(60.35 GiB).", "vllm v1/worker/extensible_kv_cache.py@v0.34.0 (the format string; no public log found)",
       {KV_CACHE: (KV_CACHE, "GiB")}),
    # which top-k/top-p path the V1 sampler took (profiles.VLLM_FLASHINFER_SAMPLER_ENV): the log states a choice
    # that depends on the install (flashinfer present or not) and the environment, not on the release alone
    _p("vllm-sampler-flashinfer", VLLM, "0.8.0 to the newest (V1 TopKTopPSampler on CUDA)",
       r"Using FlashInfer for top-p & top-k sampling",
       "(EngineCore_0 pid=2881) INFO 09-04 01:29:01 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k "
       "sampling.", "dennislee22/vLLM-benchmarking (a repository's log, no issue #): "
       "log/vllm-7B-1gpuA10080GB-0.5GRAM.log", kind="marker"),
    _p("vllm-sampler-native", VLLM, "0.8.0 to 0.11.0 (flashinfer missing or VLLM_USE_FLASHINFER_SAMPLER=0)",
       r"Falling back to the PyTorch-native implementation of top-p & top-k sampling",
       "WARNING 09-24 20:46:11 [topk_topp_sampler.py:69] FlashInfer is not available. Falling back to the "
       "PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install "
       "FlashInfer.", "vllm#21348", kind="marker"),
    # which MXFP4 MoE kernel ran (profiles.VLLM_GPUSTACK_IMAGES): on Hopper before 0.12.0 it depends on whether the
    # image holds triton_kernels, and the kernel decides the experts' padding
    _p("vllm-mxfp4-triton", VLLM, "0.10.1 to the newest (quantization/mxfp4.py get_mxfp4_backend)",
       r"mxfp4\.py:[0-9]+\] Using Triton backend",
       "(EngineCore_DP0 pid=70073) INFO 01-27 00:31:44 [mxfp4.py:165] Using Triton backend", "vllm#33155",
       kind="marker"),
    _p("vllm-mxfp4-marlin", VLLM, "0.11.0 to the newest (quantization/mxfp4.py get_mxfp4_backend)",
       r"mxfp4\.py:[0-9]+\] Using Marlin backend",
       "(EngineCore_DP0 pid=2) INFO 10-02 09:00:00 [mxfp4.py:99] Using Marlin backend",
       "vllm model_executor/layers/quantization/mxfp4.py@v0.11.0 (the format string; no public log found)",
       kind="marker"),
    _p("vllm-fp4-marlin", VLLM, "0.10.1 to the newest (quantization/utils/marlin_utils_fp4.py)",
       r"Weight-only FP4 compression will be used leveraging the Marlin kernel",
       "(EngineCore_0 pid=5839) WARNING 08-20 18:04:08 [marlin_utils_fp4.py:196] Your GPU does not have native "
       "support for FP4 computation but FP4 quantization is being used. Weight-only FP4 compression will be used "
       "leveraging the Marlin kernel. This may degrade performance for compute-heavy workloads.", "vllm#23278",
       kind="marker"),
    # the attention backend the platform picked for the model's layers (profiles.VLLM_FLASHINFER_CAPTURE_WORKSPACE:
    # FlashInfer's workspace is graph memory): platforms/cuda.py "Using FlashInfer backend on V1 engine." (@v0.10.1,
    # @v0.11.0), "Using %s backend." with the name (@v0.11.1; "_Backend." or "AttentionBackendEnum." before it when
    # the user named it, @v0.13.0), "Using %s attention backend out of potential backends" (@v0.12.0 .. @v0.24.0);
    # FLASHINFER_MLA and the ViT's "Using backend ... for vit attention" are other lines
    _p("vllm-attention-backend-flashinfer", VLLM, "0.8 to the newest (platforms/cuda.py get_attn_backend_cls)",
       r"Using (?:FlashInfer backend on V1 engine|(?:(?:_Backend|AttentionBackendEnum)\.)?FLASHINFER "
       r"(?:attention )?backend\b)",
       "qwen3-next-instruct | (Worker_TP0 pid=306) INFO 02-12 19:46:45 [cuda.py:351] Using FLASHINFER attention "
       "backend out of potential backends: ('FLASHINFER', 'TRITON_ATTN')", "platforms/cuda.py@v0.13.0 format string "
       "'Using %s attention backend out of potential backends: %s'; the example is search-index file 33676930891 "
       "(a docker-compose log of Qwen3-Next-80B-A3B at TP 2 on two L40S, vLLM 0.13.0)", kind="marker"),
    # a TP group whose ranks have no P2P between them (profiles.NCCL_P2P_DISABLE_ENV): custom all-reduce says so
    _p("vllm-custom-ar-no-p2p", VLLM, "0.5 to the newest (custom_all_reduce.py CustomAllreduce.__init__, _can_p2p)",
       r"Custom allreduce is disabled because your platform lacks GPU P2P capability",
       "(VllmWorker TP0 pid=1430) WARNING 09-03 00:36:44 [custom_all_reduce.py:147] Custom allreduce is disabled "
       "because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
       "disable_custom_all_reduce=True explicitly.", "dennislee22/vLLM-benchmarking (a repository's log, no "
       "issue #): vllm-7B-2gpuA10080GB-same-node.log", kind="marker"),
    _p("vllm-custom-ar-multi-node", VLLM, "0.6 to the newest (custom_all_reduce.py, in_the_same_node_as)",
       r"Custom allreduce is disabled because this process group spans across nodes",
       "(EngineCore_0 pid=1257) (RayWorkerWrapper pid=1384) WARNING 09-03 04:38:28 [custom_all_reduce.py:85] Custom "
       "allreduce is disabled because this process group spans across nodes.", "dennislee22/vLLM-benchmarking (a "
       "repository's log, no issue #): log/vllm-7B-2gpuA10040GB-0.5GRAM-diff-nodes.log", kind="marker"),
    _p("vllm-ready", VLLM, "0.7 to the newest (V1 engine core)",
       r"init engine \(profile, create kv cache, warmup model\) took", "(EngineCore_0 pid=1399537) INFO 08-19 "
       "14:58:40 [core.py:215] init engine (profile, create kv cache, warmup model) took 1.06 seconds",
       "vllm PR #20707", kind="started"),
    _p("vllm-serving", VLLM, "0.4 to the newest ('Starting vLLM API server 0 on', later 'Starting vLLM server on')",
       r"Uvicorn running on|Starting vLLM (?:API )?server",
       "(APIServer pid=84002) INFO 12-16 06:49:33 [api_server.py:1333] Starting vLLM API server 0 on http://0.0.0.0:8000",
       "vllm PR #30749", kind="started"),
    _p("vllm-kv-below-len", VLLM, "0.2 to 0.10 (V0)",
       r"The model's max seq len \(" + _g(MAX_MODEL_LEN, INT) + r"\) is larger than the maximum number of tokens "
       r"that can be stored in KV cache \(" + _g(KV_TOKENS, INT) + r"\)",
       "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored "
       "in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
       "the engine.", "QwenLM/Qwen3#295", {MAX_MODEL_LEN: (MAX_MODEL_LEN, "int"), KV_TOKENS: (KV_TOKENS, "int")},
       scope=ENGINE, kind="failure:kv-below-max-model-len"),
    _p("vllm-v1-kv-below-len", VLLM, "0.8 to the newest (V1)",
       r"max seq len \(" + _g(MAX_MODEL_LEN, INT) + r"\), \(?" + _g(KV_NEEDED) + r" GiB KV cache is needed, which is "
       r"larger than the available KV cache memory \(" + _g(KV_CACHE) + r" GiB\)(?:.*?estimated maximum model length "
       r"is " + _g(ESTIMATED_MAX_LEN, INT) + ")?",
       "ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is "
       "needed, which is larger than the available KV cache memory (5.59 GiB). Based on the available memory, the "
       "estimated maximum model length is 122080.", "vllm#25350",
       {MAX_MODEL_LEN: (MAX_MODEL_LEN, "int"), KV_NEEDED: (KV_NEEDED, "GiB"), KV_CACHE: (KV_CACHE, "GiB"),
        ESTIMATED_MAX_LEN: (ESTIMATED_MAX_LEN, "int")}, scope=ENGINE, kind="failure:kv-below-max-model-len"),
    # 0.7's V1 divided by 1024**3 and printed "GB" (v1/core/kv_cache_utils.py@v0.7.3: needed_memory/1024/1024/1024);
    # 0.8 on prints GiB (@v0.8.5)
    _p("vllm-v1-kv-below-len-gb", VLLM, "0.7 (V1 before 0.8 named the unit GiB)",
       r"max seq len \(" + _g(MAX_MODEL_LEN, INT) + r"\), \(" + _g(KV_NEEDED) + r" GB KV cache is needed, which is "
       r"larger than the available KV cache memory \(" + _g(KV_CACHE) + r" GB\)",
       "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GB KV cache is "
       "needed, which is larger than the available KV cache memory (9.47 GB). Try increasing "
       "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
       "vllm v1/core/kv_cache_utils.py@v0.7.3 (the format string; no public log found)",
       {MAX_MODEL_LEN: (MAX_MODEL_LEN, "int"), KV_NEEDED: (KV_NEEDED, "GB"), KV_CACHE: (KV_CACHE, "GB")},
       scope=ENGINE, kind="failure:kv-below-max-model-len"),
    _p("vllm-no-kv-memory", VLLM, "0.2 to the newest",
       r"No available memory for the cache blocks|Insufficient memory for KV cache",
       "vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try "
       "increasing `gpu_memory_utilization` when initializing the engine.", "vllm#10439", kind="failure:no-kv-memory"),
    # V1 prints the KV budget before it checks it: check_enough_kv_cache_memory raises "No available memory for the
    # cache blocks" on available_memory <= 0 (v1/core/kv_cache_utils.py@v0.23.0), so a negative budget is that
    # refusal even where a log is cut before the ValueError (a quoted excerpt, a traceback cut at its first line)
    _p("vllm-v1-negative-kv", VLLM, "0.9 to the newest (V1 worker; kv_cache_utils.py@v0.23.0)",
       r"Available KV cache memory: -[0-9]+(?:\.[0-9]+)? GiB",
       "(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB",
       "vllm#23278", kind="failure:no-kv-memory"),
    _p("vllm-sampler-oom", VLLM, "0.8 to the newest (V1 warms the sampler up after the KV pool is taken)",
       r"CUDA out of memory occurred when warming up sampler with " + _g(MAX_RUNNING, INT) + " dummy requests",
       "(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375] RuntimeError: CUDA out of "
       "memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or "
       "`gpu_memory_utilization` when initializing the engine.", "vllm#14452", {MAX_RUNNING: (MAX_RUNNING, "int")},
       scope=ENGINE, kind="failure:out-of-memory-warming-up-sampler"),
    # a hybrid (Mamba, Gated DeltaNet, KDA) model with FULL decode graphs needs one state block per running
    # sequence: resolve_cudagraph_mode_and_sizes raises when max_num_seqs is above the pool's blocks, after the KV
    # pool is sized (config/compilation.py@v0.20.0 .. @v0.34.0, read in the wheels; 0.18-0.19 capped the capture
    # sizes instead, adjust_cudagraph_sizes_for_mamba_cache; public on 0.23.1, 0.27.1 and 0.28.0, vllm#49064)
    _p("vllm-mamba-blocks-below-seqs", VLLM, "0.20 to the newest (V1, a hybrid model with FULL decode graphs)",
       r"max_num_seqs \(" + _g(MAX_RUNNING, INT) + r"\) exceeds available Mamba cache blocks \([0-9]+\)",
       "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (969).", "vllm#49064",
       {MAX_RUNNING: (MAX_RUNNING, "int")}, scope=ENGINE, kind="failure:mamba-blocks-below-max-num-seqs"),
    _p("vllm-free-below-requested", VLLM, "0.9 to the newest (V1 start-up check)",
       r"Free memory on device(?: \S+)? \(" + _g(FREE_BEFORE_LOAD) + "/" + _g(GPU_MEMORY) + r" GiB\) on startup is "
       r"less than desired GPU memory utilization \(" + _g(UTILIZATION) + ", " + _g(REQUESTED) + r" GiB\)",
       "ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization "
       "(0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
       "vllm#20305", {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), GPU_MEMORY: (GPU_MEMORY, "GiB"),
                      UTILIZATION: (UTILIZATION, "float"), REQUESTED: (REQUESTED, "GiB")},
       kind="failure:free-memory-below-requested"),
    _p("vllm-free-below-engine-budget", VLLM, "0.33 to the newest (weights held by another process: the budget "
       "left to the engine; v1/worker/utils.py@v0.33.0)",
       r"Free memory on device(?: \S+)? \(" + _g(FREE_BEFORE_LOAD) + "/" + _g(GPU_MEMORY) + r" GiB\) on startup is "
       r"less than the engine's budget after excluding external process's weights \(" + _g(UTILIZATION) + ", ",
       "ValueError: Free memory on device cuda:0 (20.5/79.19 GiB) on startup is less than the engine's budget after "
       "excluding external process's weights (0.9, 56.27 GiB). Decrease GPU memory utilization or reduce GPU memory "
       "used by other processes.", "vllm v1/worker/utils.py@v0.34.0 (the format string; no public log found)",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), GPU_MEMORY: (GPU_MEMORY, "GiB"),
        UTILIZATION: (UTILIZATION, "float")}, kind="failure:free-memory-below-requested"),
    # the same advice, its earlier wording: weights and non-torch memory apart (v1/worker/gpu_worker.py@v0.10.2, info;
    # debug from 0.11.0 to 0.25.1; info again @v0.26.0). 0.10.2 prints the KV memory in bytes, round(x / 2**30, 2)
    # for the rest (its `GiB` lambda); 0.26.0 format_gib (round to 2) and the KV memory in GiB. A public 0.10.2 log
    # prints it so (tests fixture vllm/v1-0.10.2-qwen3-235b-fp8-8xl40s-tp8-ep.log, search-index file 38962983769)
    _p("vllm-kv-memory-advice-0.10", VLLM, "0.10.2 (V1 and V0 worker; the KV memory in bytes)",
       _OLD_ADVICE_HEAD + " bytes",
       "(EngineCore_DP0 pid=2) INFO 09-20 10:11:12 [gpu_worker.py:391] Free memory on device (79.19/79.19 GiB) on "
       "startup. Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 15.27 GiB for weight, 1.45 GiB "
       "for peak activation, 0.3 GiB for non-torch memory, and 0.52 GiB for CUDAGraph memory. Replace "
       "gpu_memory_utilization config with `--kv-cache-memory=57451540070` to fit into requested memory, or "
       "`--kv-cache-memory=65955643187` to fully utilize gpu memory. Current kv cache memory in use is "
       "58009382502 bytes.", "vllm v1/worker/gpu_worker.py@v0.10.2 (the format string; no public log found)",
       _old_advice_groups("bytes")),
    _p("vllm-kv-memory-advice-0.26", VLLM, "0.26 (info again; debug from 0.11 to 0.25.1)",
       _OLD_ADVICE_HEAD + " GiB",
       "(EngineCore pid=2) INFO 11-20 10:11:12 [gpu_worker.py:700] Free memory on device (79.19/79.19 GiB) on "
       "startup. Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 15.27 GiB for weight, 1.45 GiB "
       "for peak activation, 0.3 GiB for non-torch memory, and 0.52 GiB for CUDAGraph memory. Replace "
       "gpu_memory_utilization config with `--kv-cache-memory=57451540070` (53.51 GiB) to fit into requested "
       "memory, or `--kv-cache-memory=65955643187` (61.43 GiB) to fully utilize gpu memory. Current kv cache memory "
       "in use is 54.02 GiB.", "vllm v1/worker/gpu_worker.py@v0.26.0 (the format string); ray-project/ray#65486",
       _old_advice_groups("GiB")),
    _p("vllm-kv-memory-advice", VLLM, "0.27 to the newest (info; one line after graph capture: the budget and each "
       "term, then the --kv-cache-memory that fits; v1/worker/gpu_worker.py@v0.27.1 and @v0.34.0)",
       r"Free memory on device \(" + _g(FREE_BEFORE_LOAD) + "/" + _g(GPU_MEMORY) + r" GiB\) on startup\. Desired "
       r"GPU memory utilization is \(" + _g(UTILIZATION) + ", " + _g(REQUESTED) + r" GiB\)\. Actual usage is "
       r"[0-9.]+ GiB for consumed memory \(weights \+ non-torch\), " + _g(ACTIVATION, SIGNED) + r" GiB for peak "
       # the tail optional: a record that quotes the line up to its terms (the 0.31.0 A100 fixture) still gives them
       r"activation, and " + _g(CUDA_GRAPHS, SIGNED) + r" GiB for CUDAGraph memory\.(?:.*?Current kv cache memory in "
       r"use is " + _g(KV_CACHE) + " GiB)?",
       "(EngineCore pid=23853) INFO 09-16 13:51:51 [gpu_worker.py:876] Free memory on device (46.99/47.37 GiB) on "
       "startup. Desired GPU memory utilization is (0.85, 40.27 GiB). Actual usage is 2.81 GiB for consumed memory "
       "(weights + non-torch), 0.57 GiB for peak activation, and 0.22 GiB for CUDAGraph memory. Replace "
       "gpu_memory_utilization config with `--kv-cache-memory=39207879578` (36.52 GiB) to fit into requested "
       "memory, or `--kv-cache-memory=46423534080` (43.24 GiB) to fully utilize gpu memory. Current kv cache memory "
       "in use is 36.88 GiB.", "vllm PR #57047",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GiB"), GPU_MEMORY: (GPU_MEMORY, "GiB"),
        UTILIZATION: (UTILIZATION, "float"), REQUESTED: (REQUESTED, "GiB"), ACTIVATION: (ACTIVATION, "GiB"),
        CUDA_GRAPHS: (CUDA_GRAPHS, "GiB"), KV_CACHE: (KV_CACHE, "GiB")}),
    _p("vllm-not-divisible", VLLM, "0.2 to the newest",
       r"(?:must be divisible by|is not divisible by) (?:tensor|pipeline) parallel size",
       "ValueError: Total number of attention heads (52) must be divisible by tensor parallel size (8).",
       "vllm#2652", kind="failure:not-divisible-by-parallel-size"),
)

# a pool line's label: every allocation_label of memory_pool.py@v0.5.18 .. @v0.5.23 _finalize_allocation_log is a
# hybrid SWA model's "Full" or "SWA" (logparse adds the SWA pool's bytes, never its tokens) or MiniMax-M3's
# ("MiniMax <name> index", "MiniMax MSA-v1 main NVFP4": pools gsg does not size, not read). Any other word before the
# line is a collector's (stern's "<pod> <container> "), not a label.
_POOL_LABEL = r"(?<!index )(?<!NVFP4 )(?P<pool_label>(?:SWA|Full) )?"

SGLANG_PATTERNS = (
    _p("sglang-server-args", SGLANG, "0.2 to 0.5.18 (f\"{server_args=}\": engine.py@v0.5.18)",
       r"server_args=ServerArgs\((?P<args>.*)\)?$",
       "[2025-11-11 04:27:11] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', "
       "tokenizer_path='meta-llama/Meta-Llama-3.1-8B-Instruct', mem_fraction_static=0.851)", "sglang PR #13023",
       kind="args"),
    # 0.5.19 prints the resolved fields as a dict (server_args.resolved_dict(), nested records as dicts)
    _p("sglang-server-args-dict", SGLANG, "0.5.19 to the newest (engine.py@v0.5.19, @v0.5.21; "
       "_server_args_for_logging from 0.5.22: engine.py@v0.5.23)", r"server_args=(?P<args>\{.*\}?)$",
       "[2026-07-20 08:00:00] server_args={'model_path': 'Qwen/Qwen3-8B', 'tokenizer_path': 'Qwen/Qwen3-8B', "
       "'context_length': None, 'mem_fraction_static': 0.835, 'tp_size': 1, 'pp_size': 1}",
       "sglang srt/entrypoints/engine.py@v0.5.23 (the format string; no public log found)", kind="args"),
    _p("sglang-distributed", SGLANG, "0.4.6 to 0.5.8 (model_runner.py@v0.4.6.post5, @v0.5.8)",
       r"Init torch distributed ends\. mem usage=" + _g(NON_TORCH, SIGNED) + " GB",
       "[2025-10-16 09:06:09 TP7] Init torch distributed ends. mem usage=1.77 GB", "sglang PR #11716",
       {NON_TORCH: (NON_TORCH, "GB")}),
    _p("sglang-distributed-elapsed", SGLANG, "0.5.9 to 0.5.20 (the time taken before the memory; "
       "model_runner.py@v0.5.9, @v0.5.10, distributed/bootstrap.py@v0.5.20)",
       r"Init torch distributed ends\. elapsed=[0-9.]+ s, mem usage=" + _g(NON_TORCH, SIGNED) + " GB",
       "[2026-02-10 08:00:01 TP0] Init torch distributed ends. elapsed=0.42 s, mem usage=0.61 GB",
       "sglang srt/model_executor/model_runner.py@v0.5.9 (the format string; no public log found)",
       {NON_TORCH: (NON_TORCH, "GB")}),
    _p("sglang-memory-baseline", SGLANG, "0.5.21 to the newest ('Init parallel ends' times the init; this line "
       "carries its memory: distributed/bootstrap.py@v0.5.21, @v0.5.22 and @v0.5.23)",
       r"Memory baseline taken\. mem usage=" + _g(NON_TORCH) + " GB",
       "[2026-07-20 08:00:01 TP1] Memory baseline taken. mem usage=0.61 GB",
       "sglang srt/distributed/bootstrap.py@v0.5.23 (the format string; no public log found)",
       {NON_TORCH: (NON_TORCH, "GB")}),
    _p("sglang-load-begin", SGLANG, "0.2 to the newest",
       r"Load weight begin\. avail mem=" + _g(FREE_BEFORE_LOAD) + " GB",
       "[2025-10-16 09:06:10 TP5] Load weight begin. avail mem=137.29 GB", "sglang PR #11716",
       {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "GB")}),
    _p("sglang-load-end", SGLANG, "0.4.4 to the newest (type=, dtype= to 0.5.12; elapsed=, type= and quant= from "
       "0.5.13: model_runner.py@v0.4.4, @v0.5.12, @v0.5.13, @v0.5.23)",
       r"Load weight end\..*?avail mem=" + _g(FREE_AFTER_LOAD) + r" GB, mem usage=" + _g(WEIGHTS, SIGNED) + " GB",
       "[2025-10-12 21:14:09] Load weight end. type=GptOssForCausalLM, dtype=torch.bfloat16, avail mem=163.13 GB, "
       "mem usage=14.53 GB.", "ovg-project/kvcached#198",
       {WEIGHTS: (WEIGHTS, "GB"), FREE_AFTER_LOAD: (FREE_AFTER_LOAD, "GB")}),
    # before 0.4.4 the end line prints the free memory only; the weights are the begin line's free memory less this
    # (LogParser derives them: 0.4.4 prints that same difference as "mem usage", model_runner.py@v0.4.4)
    _p("sglang-load-end-free-only", SGLANG, "0.2 to 0.4.3 (no mem usage: model_runner.py@v0.3.6, @v0.4.0, @v0.4.3)",
       r"Load weight end\. type=\S+, dtype=\S+, avail mem=" + _g(FREE_AFTER_LOAD) + r" GB\s*$",
       "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
       "docs.sglang.ai/start/send_request.html#launch-a-server (2025-01-23; model_runner.py@v0.4.3's format)",
       {FREE_AFTER_LOAD: (FREE_AFTER_LOAD, "GB")}),
    # printed "%.2f" of MB / 1024: the 100 MB embedding cache alone prints 0.10, with a cuda_ipc/cuda_vmm pool 1.10
    _p("sglang-mm-kv-reserve", SGLANG, "0.5.18 to the newest (multimodal models; "
       "mem_cache/kv_cache_configurator.py@v0.5.18, @v0.5.20 and @v0.5.23 mm_runtime_reservation_gb)",
       r"Reserving " + _g(MM_KV_RESERVE) + r" GB of the KV budget for post-sizing multimodal allocations",
       "[2026-09-11 23:46:11 TP0 EP0] Reserving 0.10 GB of the KV budget for post-sizing multimodal allocations "
       "(feature-transport pools + embedding cache).",
       "search-index file 69412325477 (a DeepSeek-V4 DSpark run of 2026-09-11); sglang#40558 (GLM-5-Next, TP 4)",
       {MM_KV_RESERVE: (MM_KV_RESERVE, "GB")}),
    _p("sglang-kv-allocated", SGLANG, "0.4.4 to the newest (dtype printed from 0.5.13: memory_pool.py@v0.4.4, "
       "@v0.5.12, @v0.5.13, @v0.5.23)",
       _POOL_LABEL + r"KV Cache is allocated\.(?: dtype: \S+,)? #tokens: " + _g(KV_TOKENS, INT) + r", K size: "
       + _g("k_size") + r" GB, V size: " + _g("v_size") + " GB",
       "[2025-11-30 12:50:10] KV Cache is allocated. #tokens: 2243474, K size: 59.91 GB, V size: 59.91 GB",
       "sglang PR #11830", {KV_TOKENS: (KV_TOKENS, "int"), "k_size": (KV_CACHE, "GB+"), "v_size": (KV_CACHE, "GB+")}),
    # one buffer for K and V together: MLA pools (DeepSeek, Kimi), the NSA indexer's pool; a labelled pool (an
    # index cache, `<label> KV Cache is allocated`, memory_pool.py@v0.5.18) is not the deployment's KV: not read
    # a Gated DeltaNet hybrid's mamba pool (engines/sglang.gated_delta_pools): conv and temporal states of every slot
    # with a speculative draft the line goes on with the verify buffers' sizes (0.5.3 to the newest:
    # memory_pool.py@v0.5.3, @v0.5.10, @v0.5.23; 0.5.2 allocates them without printing them)
    _p("sglang-mamba-allocated", SGLANG, "0.5.2 to the newest (max_mamba_cache_size printed from 0.5.4: "
       "memory_pool.py@v0.5.2, @v0.5.5, @v0.5.10, @v0.5.23)",
       r"Mamba Cache is allocated\. (?:max_mamba_cache_size: [0-9]+, )?conv_state size: " + _g("conv_size")
       + r" ?GB, ssm_state size: " + _g("ssm_size") + r" ?GB(?: intermediate_ssm_state_cache size: "
       + _g("spec_ssm_size") + r" ?GB intermediate_conv_window_cache size: " + _g("spec_conv_size") + " ?GB)?",
       "[2026-10-02 00:39:40] Mamba Cache is allocated. max_mamba_cache_size: 64, conv_state size: 0.07GB, ssm_state "
       "size: 3.05GB intermediate_ssm_state_cache size: 48.75GB intermediate_conv_window_cache size: 0.43GB",
       "sglang memory_pool.py@v0.5.10 MambaPool (the format string; the line with the draft's buffers as search-index "
       "file 70920711276 quotes it: tests/fixtures/logs/sglang/spec-verify-mamba-intermediate-94gb-capture-oom.log)",
       {"conv_size": (MAMBA_STATE, "GB+"), "ssm_size": (MAMBA_STATE, "GB+"),
        "spec_ssm_size": (MAMBA_SPECULATIVE, "GB+"), "spec_conv_size": (MAMBA_SPECULATIVE, "GB+")}),
    _p("sglang-kv-allocated-one-size", SGLANG, "0.4 to the newest (MLA and other one-buffer pools; dtype printed "
       "from 0.5.15: memory_pool.py@v0.4.10, @v0.5.15, @v0.5.23)",
       _POOL_LABEL + r"KV Cache is allocated\.(?: dtype: \S+,)? #tokens: " + _g(KV_TOKENS, INT) + r", KV size: "
       + _g(KV_CACHE) + " GB",
       "[2025-10-07 23:17:19 DP0 TP0] KV Cache is allocated. #tokens: 975424, KV size: 43.67 GB", "sglang PR #11309",
       {KV_TOKENS: (KV_TOKENS, "int"), KV_CACHE: (KV_CACHE, "GB")}),
    # DeepSeek-V4's pools are sized together, before any allocation line: full_token is the capacity the scheduler
    # prints as max_total_num_tokens (a start-up that fails while allocating still printed it). available_bytes is
    # the budget of every DSv4 pool (SWA, compressed, indexer and, from 0.5.2x, fixed states taken out after it),
    # not the KV cache's bytes: not read
    _p("sglang-dsv4-pool-split", SGLANG, "0.5.12 to the newest (DeepSeek-V4 only; 'DSV4', three figures: "
       "pool_configurator.py@v0.5.12, @v0.5.13, @v0.5.14; the fixed pools' figures between them by @v0.5.23; "
       "development builds of May 2026 print 'DSv4')",
       r"DS[Vv]4 memory calculation: (?:.*?, )?bytes_per_full_token=[0-9.]+, available_bytes=[0-9.]+ GB, "
       r"(?:.*?, )?full_token=" + _g(KV_TOKENS, INT),
       "[2026-05-13 02:15:18 DP0 TP0] DSv4 memory calculation: bytes_per_full_token=176983.05, available_bytes=87.26 "
       "GB, full_token=529408", "sglang#25118 (DeepSeek-V4-Flash at DP 4 on MI300X, a ROCm build of 2026-05-12)",
       {KV_TOKENS: (KV_TOKENS, "int")}),
    # the pools as built: _to_config prints them after the calculation above and again when the token constraints
    # (--max-total-tokens, the request slots) cap the capacity (kv_cache_configurator: calculate_pool_sizes_from_max_
    # tokens), so the last line is the pool the engine allocates; full= is its max_total_num_tokens
    _p("sglang-dsv4-pool-sizes", SGLANG, "0.5.12 to the newest (DeepSeek-V4 only: DSV4PoolConfigurator._to_config in "
       "pool_configurator.py@v0.5.12, @v0.5.14, @v0.5.23; not in 0.5.11)",
       r"DS[Vv]4 pool sizes: full=" + _g(KV_TOKENS, INT) + r", swa=[0-9]+, c4=[0-9]+",
       "[2026-08-10 09:47:28 DP0 TP0 EP0] DSV4 pool sizes: full=32768, swa=3200, c4=8192, c128=256, c4_state=200, "
       "c128_state=0", "search-index file 57616064554 (DeepSeek-V4-Flash w4a8 on four Ascend 910B, a development "
       "branch of August 2026); the format string in pool_configurator.py@v0.5.23 (the sglang wheel)",
       {KV_TOKENS: (KV_TOKENS, "int")}),
    # a sliding-window model's two pools (engines/sglang.hybrid_swa_row): the split names the full layers' token
    # count, max_total_num_tokens; the pool lines after it (one per pool, unlabelled before 0.5.18, "Full" and "SWA"
    # after) add their bytes (logparse), and the summary line from 0.5.4 holds both
    _p("sglang-swa-pool-split", SGLANG, "0.4.9.post3 to the newest (model_runner.py@v0.4.9.post3 'Use Sliding window', "
       "model_runner_kv_cache_mixin.py@v0.5.7, pool_configurator.py@v0.5.11 and @v0.5.23 'Use sliding window')",
       r"Use [Ss]liding window memory pool\. full_layer_tokens=" + _g(KV_TOKENS, INT) + r", swa_layer_tokens=[0-9]+",
       "[2026-01-31 13:50:39 TP2] Use sliding window memory pool. full_layer_tokens=375360, swa_layer_tokens=300288",
       "sglang PR #18039 (MiMo-V2-Flash, TP 4)", {KV_TOKENS: (KV_TOKENS, "int")}),
    _p("sglang-swa-pool-all", SGLANG, "0.5.9 to the newest (every layer sliding: one pool; "
       "model_runner_kv_cache_mixin.py@v0.5.9, pool_configurator.py@v0.5.23)",
       r"Use sliding window memory pool \(all SWA\)\. swa_layer_tokens=" + _g(KV_TOKENS, INT),
       "[2026-03-02 10:11:12] Use sliding window memory pool (all SWA). swa_layer_tokens=524288",
       "sglang pool_configurator.py@v0.5.23 (the format string; no public log found)", {KV_TOKENS: (KV_TOKENS, "int")}),
    # from 0.5.18 a pool sized after graph capture prints "SWAKVPool VA upper bound: ..." instead (the address space
    # reserved, swa_memory_pool.py@v0.5.18 .. @v0.5.23): not read; the post-capture line gives the backed pool
    _p("sglang-swa-pool-usage", SGLANG, "0.5.4 to the newest (memory_pool.py@v0.5.4 .. @v0.5.7, "
       "swa_memory_pool.py@v0.5.8 .. @v0.5.23 SWAKVPool)",
       r"SWAKVPool mem usage: " + _g(KV_CACHE) + r" GB, swa size: [0-9]+, full size: " + _g(KV_TOKENS, INT),
       "[2025-12-19 07:42:57 TP0] SWAKVPool mem usage: 77.63 GB, swa size: 1496958, full size: 1496958",
       "sglang PR #15464 (MiMo-V2-Flash, TP 4 on B200, main of 2025-12-19)",
       {KV_CACHE: (KV_CACHE, "GB"), KV_TOKENS: (KV_TOKENS, "int")}),
    # with the pool sized after graph capture the allocation line prints the address space ("VA upper bound"),
    # and this line the pool that is backed
    _p("sglang-kv-post-capture", SGLANG, "0.5.18 to the newest (pool sized after CUDA graph capture; "
       "model_runner_components/kv_pool_runtime.py@v0.5.18 and @v0.5.23)",
       r"Post-capture KV sizing: KV cache allocated\. dtype: \S+, #tokens: " + _g(KV_TOKENS, INT) + r", KV size: "
       + _g(KV_CACHE) + r" GB, avail mem=" + _g(FREE_AFTER_POOL) + " GB",
       "[2026-07-20 08:01:10] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 1245184, "
       "KV size: 57.01 GB, avail mem=4.12 GB", "sglang srt/model_executor/model_runner_components/"
       "kv_pool_runtime.py@v0.5.23 (the format string; no public log found)",
       {KV_TOKENS: (KV_TOKENS, "int"), KV_CACHE: (KV_CACHE, "GB"), FREE_AFTER_POOL: (FREE_AFTER_POOL, "GB")}),
    _p("sglang-kv-allocated-sizes", SGLANG, "0.4.1 to 0.4.3 (K and V sizes only, no token count: "
       "memory_pool.py@v0.4.3; 0.3 and 0.4.0 print no pool line)",
       r"KV Cache is allocated\. K size: " + _g("k_size") + r" GB, V size: " + _g("v_size") + r" GB\.",
       "[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.",
       "docs.sglang.ai/start/send_request.html#launch-a-server (2025-01-23)",
       {"k_size": (KV_CACHE, "GB+"), "v_size": (KV_CACHE, "GB+")}),
    _p("sglang-pool-end", SGLANG, "0.3 to the newest (model_runner.py@v0.3.6, "
       "model_runner_kv_cache_mixin.py@v0.5.13)", r"Memory pool end\. avail mem=" + _g(FREE_AFTER_POOL) + " GB",
       "[2025-11-30 12:50:10] Memory pool end. avail mem=40.03 GB", "sglang PR #11830",
       {FREE_AFTER_POOL: (FREE_AFTER_POOL, "GB")}),
    _p("sglang-graphs", SGLANG, "0.4.5 to 0.5.13 (0.4.0 to 0.4.2 print no memory; 'npu graph' on Ascend from 0.5.3: "
       "model_runner.py@v0.4.6.post5, @v0.5.3, @v0.5.12)",
       r"Capture (?:cuda|npu|xpu) graph end\. Time elapsed: [0-9.]+ s\. mem usage=" + _g(CUDA_GRAPHS, SIGNED) + " GB",
       "[2025-11-30 12:50:15] Capture cuda graph end. Time elapsed: 5.37 s. mem usage=1.44 GB. avail mem=38.05 GB.",
       "sglang PR #11830", {CUDA_GRAPHS: (CUDA_GRAPHS, "GB")}),
    # the target model's decode (or speculative verify) graphs; draft, prefill and piecewise graphs are other pools
    _p("sglang-graphs-elapsed", SGLANG, "0.5.14 to the newest ('Capture target decode CUDA graph end' from 0.5.14, as "
       "an Ornith-9B run of 0.5.14 prints it: model_runner.py@v0.5.14 l.2753, @v0.5.15; 0.5.18 to 0.5.21 print the "
       "batch sizes in the begin line, model_runner_components/cuda_graph_setup.py@v0.5.18 .. @v0.5.21, and 0.5.22 "
       "on in this end line, @v0.5.22 and @v0.5.23)",
       r"Capture target (?:decode|verify) (?:CUDA|cuda|NPU|npu|XPU|xpu) graph end\. (?:bs=\[[0-9, ]*\], )?"
       r"elapsed=[0-9.]+ s, mem usage=" + _g(CUDA_GRAPHS, SIGNED) + " GB",
       "[2026-07-20 08:01:05 TP0] Capture target decode CUDA graph end. bs=[1, 2, 4, 8], elapsed=6.20 s, mem usage="
       "0.45 GB, avail mem=12.30 GB.", "sglang srt/model_executor/model_runner_components/cuda_graph_setup.py@v0.5.23 "
       "(the format string; no public log found)", {CUDA_GRAPHS: (CUDA_GRAPHS, "GB")}),
    _p("sglang-graphs-avail-first", SGLANG, "0.4.3's post releases to 0.4.5 (avail mem printed before mem usage: "
       "model_runner.py@v0.4.4, @v0.4.5)",
       r"Capture cuda graph end\. Time elapsed: [0-9.]+ s\. avail mem=" + NUM + r" GB\. mem usage="
       + _g(CUDA_GRAPHS, SIGNED) + " GB",
       "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=0.93 GB.",
       "didier-durand/llms-in-clouds docs/sglang.md#sglang-start-sequence-with-qwen-qwq-32b",
       {CUDA_GRAPHS: (CUDA_GRAPHS, "GB")}),
    # the prefill graphs: a second capture after the decode one (both print their own mem usage)
    _p("sglang-piecewise-graphs", SGLANG, "0.5.6 to 0.5.13 (model_runner.py@v0.5.6, @v0.5.8, @v0.5.12, @v0.5.13)",
       r"Capture piecewise CUDA graph end\. Time elapsed: [0-9.]+ s\. mem usage=" + _g(PREFILL_GRAPHS, SIGNED) + " GB",
       "[2026-04-27 02:36:27] Capture piecewise CUDA graph end. Time elapsed: 17.62 s. mem usage=2.32 GB. avail "
       "mem=21.22 GB.", "sglang srt/model_executor/model_runner.py@v0.5.12 (the format string; the line as "
       "sglang's .claude/skills/clean-startup-log/SKILL.md quotes it, main of 2026-04-27)",
       {PREFILL_GRAPHS: (PREFILL_GRAPHS, "GB")}),
    _p("sglang-prefill-graphs", SGLANG, "0.5.14 to the newest (the piecewise capture renamed: model_runner.py@v0.5.14, "
       "model_runner_components/cuda_graph_setup.py@v0.5.18 and @v0.5.23)",
       r"Capture target prefill CUDA graph end\. elapsed=[0-9.]+ s, mem usage=" + _g(PREFILL_GRAPHS, SIGNED)
       + " GB",
       "[2026-07-20 08:01:02 TP0] Capture target prefill CUDA graph end. elapsed=14.80 s, mem usage=1.87 GB, avail "
       "mem=14.43 GB.", "sglang srt/model_executor/model_runner_components/cuda_graph_setup.py@v0.5.23 (the format "
       "string; no public log found)", {PREFILL_GRAPHS: (PREFILL_GRAPHS, "GB")}),
    # every release prints the running-request cap and the context length after the capacity; a quoted line that
    # leaves fields out (its author's "..." or a shortened copy) still gives those it keeps: each is read on its own.
    # A comma after the capacity keeps the benchmarks' line (the figure alone) to its own pattern below, and the
    # look-behind a pool's own count (c4_max_total_num_tokens=)
    _p("sglang-max-total-tokens", SGLANG, "0.2 to the newest (chunked_prefill_size from 0.4.6, available_gpu_mem "
       "from 0.5: scheduler.py@v0.3.6, @v0.4.6.post5, @v0.5.5, @v0.5.23)",
       r"(?<![A-Za-z_])max_total_num_tokens=" + _g(KV_TOKENS, INT) + r"(?=,)(?:.*?max_running_requests="
       + _g(MAX_RUNNING, INT) + r")?(?:.*?context_len=" + _g(MAX_MODEL_LEN, INT) + r")?",
       "[2026-06-28 15:16:45] max_total_num_tokens=2086558, chunked_prefill_size=8192, max_prefill_tokens=16384, "
       "max_running_requests=33, context_len=256000, available_gpu_mem=17.22 GB", "sglang#29575",
       {KV_TOKENS: (KV_TOKENS, "int"), MAX_RUNNING: (MAX_RUNNING, "int"), MAX_MODEL_LEN: (MAX_MODEL_LEN, "int")},
       scope=ENGINE),
    # the offline benchmarks print the capacity alone, without SGLang's prefix (rank_print is print); 0.3 prints no
    # pool line, so this is the only token count such a log holds. The figure ends the line: the scheduler's line
    # above goes on after it, and a pool's own count (c4_max_total_num_tokens=) is another word
    _p("sglang-bench-max-total-tokens", SGLANG, "0.3 to the newest (bench_latency.py@v0.3.0 and @v0.3.3, "
       "bench_one_batch.py@v0.3.6: rank_print(f'max_total_num_tokens=...'))",
       r"(?<![A-Za-z_])max_total_num_tokens=" + _g(KV_TOKENS, INT) + r"\s*$",
       "max_total_num_tokens=1256440", "github.com/AUGMXNT/MI300-testing/blob/main/README.md#sglang (bench_latency "
       "on an MI300X)", {KV_TOKENS: (KV_TOKENS, "int")}, scope=ENGINE),
    _p("sglang-fraction-in-error", SGLANG, "0.4 to the newest (the fraction the engine ran with, in its refusal; "
       "without 'self.server_args.' from 0.5.12: pool_configurator.py@v0.5.12)",
       r"Current value: (?:self\.server_args\.)?(?P<args>mem_fraction_static=[0-9.]+)",
       "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
       "self.server_args.mem_fraction_static=0.2", "gpustack/gpustack#3831", kind="arg-update"),
    _p("sglang-not-enough-memory", SGLANG, "0.2 to the newest",
       r"Not enough memory\. Please try to increase --mem-fraction-static|leave no GPU memory for the KV cache",
       "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.",
       "SemiAnalysisAI/InferenceX#2128", kind="failure:no-kv-memory"),
    # --max-total-tokens above a profiled capacity of none: the engine raises "Not enough memory" after it (the
    # capacity <= 0 check), which an excerpt may not reach
    _p("sglang-profiled-no-kv", SGLANG, "0.4.8.post1 (sglang#7691) to the releases that profile a budget below zero "
       "(model_runner.py@v0.5.2, model_runner_kv_cache_mixin.py@v0.5.7 and @v0.5.11; kv_cache_configurator.py@v0.5.23 "
       "raises 'Loaded weights leave no GPU memory' first, and a capacity of 0 still prints it)",
       r"max_total_tokens=[0-9]+ is larger than the profiled value (?:-[0-9]+|0)\. Use the profiled value",
       "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the "
       "profiled value instead.", "sglang#7691", kind="failure:no-kv-memory"),
)

# load_tensors' placement lines (their order says where -ngl put the output layer)
LLAMACPP_OFFLOADING_OUTPUT = "llamacpp-offloading-output"
LLAMACPP_OFFLOADING_REPEATING = "llamacpp-offloading-repeating"
# the KV and compute buffer lines: their order says whether the pipeline line would have shown between them
LLAMACPP_KV_BUFFER = "llamacpp-kv-buffer"
LLAMACPP_COMPUTE_BUFFER = "llamacpp-compute-buffer"
LLAMACPP_PIPELINE_ENABLED = "llamacpp-pipeline-enabled"
# the KV cache types llama.cpp builds that the estimate sizes (ggml type names as its cache line prints them)
KV_TYPES = r"f32|f16|bf16|q8_0|q5_1|q5_0|q4_1|q4_0|iq4_nl"

# llama-server's "build_info: b<count>-<commit>" start-up line: b8586 still printed "build: 8586 (64ac9ab66)"
# (search-index file 58671331675), b9106 prints the new line (ROCm/ROCm#6227), so a count below the first build after
# b8586 is a partial clone's own, not llama.cpp's build
LLAMACPP_BUILD_INFO = "llamacpp-build-info"
LLAMACPP_BUILD_INFO_SINCE = 8587
LLAMACPP_SERVER_BUILD = "llamacpp-server-build"
# llama-server's "build info" record (JSON, or text behind ollama's runner): an ollama that built its vendored copy
# from a shallow clone counts that clone's commits (build=1, build=10 in search-index files 55209596794 and
# 21652681191). The record is not in the server of llama-cpp-python 0.1.57's sdist (a llama.cpp that already reads
# the ggjt v3 files b500 did not know: llama.cpp#1319's b500 calls ggjt v1 the latest) and is in 0.1.66's, so the
# first build printing it came after b500
LLAMACPP_SERVER_BUILD_RECORD_SINCE = 501

# llamafile prints llama.cpp's build number and commit from a file written once, when it first vendored llama.cpp
# (llama.cpp/build-info.cpp: LLAMA_BUILD_NUMBER = 1500, LLAMA_COMMIT = "a30b324", unchanged from b9fcc21 of
# 2023-11-15 to 6b46419, mozilla-ai/llamafile), whatever llama.cpp a release carries: its "main: build = 1500
# (a30b324)" and the server's "build info" record name no build (a llava run of October 2024 prints the pair over
# n_ubatch and flash_attn lines of mid-2024 builds, search-index file 19445609683)
LLAMAFILE_FIXED_BUILD = ("1500", "a30b324")

# A build count is read up to nine digits (b9999 is 2026's): a longer run of digits is no build, and int() of one past
# Python's 4,300-digit limit raised (logparse compares the count with LLAMACPP_BUILD_LINES_SINCE)
LLAMACPP_PATTERNS = (
    _p("llamacpp-build", LLAMACPP, "b1000 to the newest", r"\bbuild: (?P<version>\d{1,9}) \((?P<commit>[0-9a-f]*)",
       "build: 6945 (cc98f8d34) with MSVC 19.29.30154.0 for x64", "llama.cpp#18546",
       kind="version"),
    # before common's logger was rewritten (autumn 2024) each example printed its build as "<func>: build = N (commit)"
    # (examples/main/main.cpp, perplexity.cpp, ...: fprintf, then LOG_TEE), and llama-server logged it as a "build
    # info" record: JSON by default (log_records reads it in its text form), "--log-format text" from early 2024 (the
    # form ollama's runner printed)
    _p("llamacpp-build-examples", LLAMACPP, "mid 2023 to autumn 2024 (the examples' own build line)",
       r"\b\w+: build = (?P<version>\d{1,9}) \((?P<commit>[0-9a-f]+)\)",
       "main: build = 2477 (f9c7ba34)", "llama.cpp#6184 (b2477's main); llama.cpp#3764's era", kind="version"),
    _p(LLAMACPP_SERVER_BUILD, LLAMACPP, "summer 2023 to autumn 2024 (llama-server's JSON log, then also --log-format "
       "text; ollama's runner until its Go runner)",
       r"\bbuild info \| build=(?P<version>\d{1,9}) commit=\"?(?P<commit>[0-9a-f]*)",
       'INFO [main] build info | build=3871 commit="f37ceeaa" tid="0x1f9bab240" timestamp=1731010169',
       "search-index file 9000643546 (an ollama log of 2024-11); search-index file 21652681191 (ollama's build=10); "
       "llama.cpp PR #4620 (b1702's JSON record)", kind="version"),
    # llama-server's start-up line from 2026 (b9106's release binaries): "build_info: b<number>-<commit>". The
    # number is `git rev-list --count HEAD`, so a shallow clone's build counts 1 (Docker Model Runner's
    # "b1-e365e65"): that is no build and is not read
    # The same count from a clone of part of the history (an image's own build: "b484-2c4055912" in search-index file
    # 56678392724, a May 2026 build by its wording) is below LLAMACPP_BUILD_INFO_SINCE, which no build printing the
    # line can be: logparse does not read it either
    _p(LLAMACPP_BUILD_INFO, LLAMACPP, "b9100 to the newest (release builds; a depth-1 clone prints b1)",
       r"\bbuild_info: b(?!1-)(?P<version>\d{1,9})-[0-9a-f]+", "build_info: b9106-dd9280a66", "ROCm/ROCm#6227",
       kind="version"),
    # the same line of a depth-1 clone names no build, but it still opens a start-up (START_UP_LINES): a restart in the
    # same log prints it again (llama-server's main, tools/server/server.cpp)
    _p("llamacpp-build-info-unnumbered", LLAMACPP, "b9100 to the newest (a depth-1 clone's build)",
       r"\bbuild_info: b1-[0-9a-f]+", "build_info: b1-e365e65", "ROCm/ROCm#6227", kind="marker"),
    # llama-server's slots, the -np its context was built with (llama-server passes n_parallel as n_seq_max): the
    # automatic choice (server.cpp's main from b7045: "n_parallel is set to auto, using n_parallel = 4 and
    # kv_unified = true"), then the slots it sets up (server.cpp's init "initializing slots, n_slots = N" through
    # 2025, load_model's "initializing, n_slots = N, n_ctx_slot = ..." in server-context.cpp after). An excerpt
    # without llama_context's parameter list (n_seq_max) still says how many sequences the cache and the recurrent
    # state hold
    _p("llamacpp-server-slots", LLAMACPP, "b4000 to the newest (server.cpp init 'initializing slots, n_slots'; "
       "server-context.cpp load_model 'initializing, n_slots' @0.3.36; main's automatic slots from b7045)",
       r"(?:\bn_parallel is set to auto, using n_parallel = |\binitializing(?: slots)?, n_slots = )"
       + _g(SEQUENCES, r"([0-9]+)") + r"\b",
       "0.07.038.001 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'",
       "search-index file 67581739375 (b9849); llama.cpp PR #26297 for 'n_slots = 1'; the format strings in "
       "tools/server/server-context.cpp@0.3.36 (llama-cpp-python's sdist)", {SEQUENCES: (SEQUENCES, "int")},
       scope=ENGINE),
    # one KV cache for all slots or one stream per slot: llama_context prints it from the split caches (b7045), and
    # llama-server's automatic slots say so on their own line; neither is a figure, but the cells per stream are padded
    # apart only when the cache is split (engines/llamacpp.context_cells), so verify passes it on
    _p("llamacpp-kv-unified", LLAMACPP, "b7045 to the newest (llama_context's parameter list; llama-server's "
       "automatic slots line)", r"\bkv_unified\s+= '?true\b",
       "main: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true", "ROCm/ROCm#6227",
       kind="marker"),
    _p("llamacpp-kv-split", LLAMACPP, "b7045 to the newest (llama_context's parameter list, the slots line)",
       r"\bkv_unified\s+= '?false\b",
       "1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'",
       "llama.cpp PR #26297", kind="marker"),
    # the context's own batch sizes and flash-attention setting, as llama_context lists them (one line each; the
    # last context built counts): the rebuild reserves what the engine did, whatever a front end passed
    _p("llamacpp-context-batch", LLAMACPP, "b1800 to the newest (llama_new_context_with_model, llama_init_from_model, "
       "llama_context)",
       r"(?:llama_new_context_with_model|llama_init_from_model|llama_context):\s+"
       r"(?P<args>n_u?batch\s+= \d+|flash_attn\s+= (?:enabled|disabled|auto|0|1))\s*$",
       "llama_context: n_ubatch      = 256", "ikawrakow/ik_llama.cpp PR #333", kind="arg-update"),
    # flash attention at auto, as the context resolved it after a probe reserve (a later line than flash_attn = auto
    # above, so it wins): llama_context's "was auto, set to X" (b7300's SYCL log), then resolve_fused_ops' "Flash
    # Attention enabled" / "not supported, set to disabled" (src/llama-context.cpp@0c1e57098)
    _p("llamacpp-flash-attn-resolved", LLAMACPP, "the builds with --flash-attn auto (2025) to the newest "
       "(llama_context or sched_reserve, then resolve_fused_ops)",
       r"\bFlash Attention (?:was auto, set to |not supported, set to |(?=enabled))(?P<flash_attn>enabled|disabled)"
       r"\s*$", "llama_context: Flash Attention was auto, set to disabled",
       "search-index file 21163070082 (b7300, SYCL: the 'was auto' wording); the newer wording from the format string "
       "of src/llama-context.cpp@0.3.36 (llama-cpp-python's sdist, llama.cpp 0c1e57098)", kind="arg-update"),
    # a speculative draft begins after the target's context: an MTP context built on the target model, or a draft
    # model loaded with its own context (common_speculative_init_result, common/speculative.cpp@0.3.36; llama-server
    # logged "loading draft model" from its own load_model before). What its lines print is the draft's memory,
    # not the target's that gsg estimates (LLAMACPP_DRAFT_KINDS are not read after it)
    _p("llamacpp-draft-begins", LLAMACPP, "the speculative builds to the newest (MTP: 2026)",
       r"(?:creating MTP draft context against the target model|loading draft model) '",
       "2026-05-14 22:14:31.712 | srv    load_model: creating MTP draft context against the target model '/root/"
       "Qwen3.6-27B-UD-Q4_K_XL.gguf'", "search-index file 56678392724 (an MTP image of May 2026); the format string "
       "of common/speculative.cpp@0.3.36 (llama-cpp-python's sdist, llama.cpp 0c1e57098)", kind="draft-begins"),
    # the sliding-window cache as large as the full one: --swa-full, which ollama's runner sets (the iSWA cache's
    # warning in src/llama-kv-cache-iswa.cpp, which cites PR #13194)
    _p("llamacpp-swa-full", LLAMACPP, "the iSWA cache's builds to the newest (once per context)",
       r"using full-size SWA cache",
       "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194#"
       "issuecomment-2868343055)", "llama.cpp PR #13194", kind="marker"),
    # the same line names where the load began whatever the file is called (ollama's blobs have no extension): the
    # file loaded again after its weights took memory is another start-up (LLAMACPP_LOAD_LINE)
    _p("llamacpp-load-begins", LLAMACPP, "b1000 to the newest",
       r"llama_model_loader: loaded meta data with \d+ key-value pairs and \d+ tensors from (?P<path>\S+)",
       "llama_model_loader: loaded meta data with 30 key-value pairs and 147 tensors from /usr/share/ollama/.ollama/"
       "models/blobs/sha256-74701a8c35f6c8d9a4b91f3f3497643001d63e0c7a84e085bed452548fa88d45 (version GGUF V3 "
       "(latest))", "ollama/ollama#8200", kind="marker"),
    _p("llamacpp-model-file", LLAMACPP, "b1000 to the newest",
       r"llama_model_loader: loaded meta data with \d+ key-value pairs and \d+ tensors from (?P<model>\S+\.gguf)",
       "llama_model_loader: loaded meta data with 19 key-value pairs and 363 tensors from "
       "/usr/share/models/llama-2-13b-chat.Q5_K_M.gguf (version GGUF V2)", "mlc-delgado/pytldr-oss#3",
       kind="model"),
    _p("llamacpp-offloaded", LLAMACPP, "b1000 to the newest",
       r"offloaded " + _g(LAYERS_OFFLOADED, INT) + "/" + _g(LAYERS_TOTAL, INT) + " layers to GPU",
       "llm_load_tensors: offloaded 41/41 layers to GPU", "llama.cpp PR #6122",
       {LAYERS_OFFLOADED: (LAYERS_OFFLOADED, "int"), LAYERS_TOTAL: (LAYERS_TOTAL, "int")}, scope=ENGINE),
    # load_tensors' two placement lines, in the order of the build's placement (profiles.LLAMACPP_OUTPUT_FIRST_SINCE):
    # from llama.cpp PR #18148 "offloading output layer" before "offloading N repeating layers" whenever -ngl is above
    # 0, before it the repeating line first and the output line only on full offload ("non-repeating layers" in
    # builds of 2023-24); the order tells which placement a log without a build number ran (compare.output_layer_env)
    _p(LLAMACPP_OFFLOADING_OUTPUT, LLAMACPP, "b1000 to the newest (after the line below until PR #18148, before it "
       "since)", r"offloading (?:output|non-repeating) layers? to GPU",
       "load_tensors: offloading output layer to GPU", "llama.cpp PR #18148; src/llama-model.cpp@0c1e57098 "
       "(llama-cpp-python 0.3.36's vendored build) and @4227c9be (0.3.16's)", kind="marker"),
    _p(LLAMACPP_OFFLOADING_REPEATING, LLAMACPP, "b1000 to the newest",
       r"offloading [0-9]+ repeating layers to GPU", "load_tensors: offloading 30 repeating layers to GPU",
       "llama.cpp PR #18148; src/llama-model.cpp@0c1e57098 and @4227c9be", kind="marker"),
    _p("llamacpp-model-buffer", LLAMACPP, "b2400 to the newest ('model buffer' from b4000, before: 'buffer'; "
       "llama.cpp@c2101a2e, @794fe23f, @0c1e57098)",
       r"(?:llm_load_tensors|load_tensors):\s+(?P<device>\S+) (?:model )?buffer size =\s+" + _g(WEIGHTS, LC_NUM)
       + " MiB",
       "load_tensors:        CUDA2 model buffer size = 25338.47 MiB", "llama.cpp#9390", {WEIGHTS: (WEIGHTS, "MiB")},
       kind="buffer"),
    # the vision projector (--mmproj): its backend line names the device (clip_ctx in tools/mtmd/clip.cpp@0c1e57098;
    # clip_model_load in examples/llava/clip.cpp@0.2.85, whose CUDA build names no index: ggml_backend_cuda_init(0)),
    # then its weights ("model size", MiB: model_size / 1024.0 / 1024.0, printed "MB" in the llava builds) and its
    # compute buffer (alloc_compute_meta, then reserve_compute_meta: "%10s compute buffer size"; the llava builds'
    # "compute allocated memory" is the CLIP backend's single buffer)
    _p("llamacpp-projector-device", LLAMACPP, "b2000 to the newest (clip_model_load until the mtmd rewrite of "
       "spring 2025, clip_ctx after)", r"\bclip_(?:ctx|model_load): CLIP using (?P<projector>\S+) backend",
       "2026-05-14 22:14:32.063 | clip_ctx: CLIP using CUDA0 backend", "search-index file 56678392724 (llama-server "
       "with --mmproj, 2026); examples/llava/clip.cpp@0.2.85 (llama-cpp-python's sdist: the format string of "
       "clip_model_load's index-less 'CLIP using CUDA backend')", kind="projector"),
    _p("llamacpp-projector-weights", LLAMACPP, "b2000 to the newest (clip_model_load 'MB', load_hparams 'MiB')",
       r"\b(?:load_hparams|clip_model_load): model size:\s+" + _g(PROJECTOR_WEIGHTS, LC_NUM) + " Mi?B",
       "load_hparams: model size:         613.14 MiB", "search-index file 58091952734 (a Qwen3.6 mmproj-Q8_0 on a "
       "Tesla P100 and an RX 6900 XT); tools/mtmd/clip.cpp@0.3.36 load_hparams and examples/llava/clip.cpp@0.2.85 "
       "clip_model_load (llama-cpp-python's sdists: the format strings, 'MiB' and 'MB')",
       {PROJECTOR_WEIGHTS: (PROJECTOR_WEIGHTS, "MiB")}, kind="projector"),
    _p("llamacpp-projector-compute", LLAMACPP, "b5400 to the newest (alloc_compute_meta, reserve_compute_meta)",
       r"\b(?:alloc_compute_meta|reserve_compute_meta):\s+(?P<device>\S+) compute buffer size =\s+"
       + _g(PROJECTOR_COMPUTE, LC_NUM) + " MiB",
       "reserve_compute_meta:      CUDA0 compute buffer size =   248.10 MiB", "search-index file 58091952734; "
       "tools/mtmd/clip.cpp@0.3.36 reserve_compute_meta (llama-cpp-python's sdist, llama.cpp 0c1e57098: the format "
       "string)",
       {PROJECTOR_COMPUTE: (PROJECTOR_COMPUTE, "MiB")}, kind="projector"),
    _p("llamacpp-projector-compute-llava", LLAMACPP, "b2000 to spring 2025 (examples/llava/clip.cpp clip_model_load)",
       r"\bclip_model_load: compute allocated memory: " + _g(PROJECTOR_COMPUTE, LC_NUM) + " MB",
       "clip_model_load: compute allocated memory: 32.89 MB", "search-index file 19445609683 (a llava-v1.5-7b run "
       "with its CLIP on the CPU); examples/llava/clip.cpp@0.2.85 (llama-cpp-python's sdist: the format string)",
       {PROJECTOR_COMPUTE: (PROJECTOR_COMPUTE, "MiB")}, kind="projector"),
    _p("llamacpp-context", LLAMACPP, "b1000 to the newest (llama_new_context_with_model, llama_init_from_model, "
       "llama_context)", r"(?:llama_new_context_with_model|llama_init_from_model|llama_context):\s+n_ctx\s+= "
       + _g(KV_TOKENS, INT), "llama_new_context_with_model: n_ctx      = 4096", "llama.cpp PR #6122",
       {KV_TOKENS: (KV_TOKENS, "int")}, scope=ENGINE, kind="context"),
    _p("llamacpp-seq-max", LLAMACPP, "b4500 to the newest",
       r"(?:llama_init_from_model|llama_context):\s+n_seq_max\s+= " + _g(SEQUENCES, INT),
       "llama_init_from_model: n_seq_max     = 8", "llama.cpp#9390", {SEQUENCES: (SEQUENCES, "int")}, scope=ENGINE),
    # between llama_kv_cache_init (llama-cpp-python 0.3.8's 7841fc72) and the llama_kv_cache_unified constructor
    # (0.3.9's vendored build) the line came from llama_kv_cache_unified::init, whose __func__ is a bare "init"
    # (llama.cpp#12728, April 2025, Vulkan; ollama 0.7.0's runner in ollama#10740)
    _p("llamacpp-kv-buffer", LLAMACPP, "b2400 to the newest (llama_kv_cache_init; init in spring 2025; "
       "llama_kv_cache_unified and, for recurrent models, llama_kv_cache_recurrent: llama-kv-cache.cpp@8733e0cf; "
       "llama_kv_cache: @7c158fbb)",
       r"(?:llama_kv_cache_init|llama_kv_cache_unified|llama_kv_cache_recurrent|llama_kv_cache|\binit):\s+"
       r"(?P<device>\S+) KV "
       r"buffer size =\s+" + _g(KV_CACHE, LC_NUM) + " MiB",
       "llama_kv_cache_init:      CUDA0 KV buffer size =  1536.00 MiB", "llama.cpp PR #6122",
       {KV_CACHE: (KV_CACHE, "MiB+")}, kind="buffer"),
    _p("llamacpp-rs-buffer", LLAMACPP, "b5500 to the newest (llama_memory_recurrent from 4227c9be; before it "
       "llama_kv_cache_recurrent printed its rows as a KV buffer, read above)",
       r"llama_memory_recurrent:\s+(?P<device>\S+) RS buffer size =\s+" + _g(RECURRENT_STATE, LC_NUM) + " MiB",
       "llama_memory_recurrent:      CUDA0 RS buffer size =    50.25 MiB",
       "vendor/llama.cpp/src/llama-memory-recurrent.cpp@0.3.36 (llama-cpp-python's sdist, llama.cpp 0c1e57098: the "
       "format string; a public Qwen3.5-4B run at b8467 prints this line)",
       {RECURRENT_STATE: (RECURRENT_STATE, "MiB")}, kind="buffer"),
    # the cache's cells where the excerpt keeps no n_ctx line (llama.cpp#11200, #12369): llama_kv_cache_init's own
    # line, then the bare "init" of llama_kv_cache_unified::init, until the unified cache printed "size = ... cells"
    _p("llamacpp-kv-size", LLAMACPP, "from llama_kv_cache_init's kv_size line (absent in llama-cpp-python 0.2.62's "
       "vendored llama.cpp, src/llama-kv-cache.cpp:37 in 0.3.8's) to the unified cache's 'init' form",
       r"\b(?:llama_kv_cache_init|init):\s+kv_size\s+=\s+" + _g(KV_TOKENS, INT) + ", offload = ",
       "llama_kv_cache_init: kv_size = 32768, offload = 1, type_k = 'q8_0', type_v = 'q8_0', n_layer = 64, "
       "can_shift = 1", "llama.cpp#11200; llama.cpp#12728 for the 'init:' form", {KV_TOKENS: (KV_TOKENS, "int")},
       scope=ENGINE, kind="kv-cells"),
    _p("llamacpp-kv-cells", LLAMACPP, "b5600 to the newest (cells, layers and sequences of each cache)",
       r"(?:llama_kv_cache_unified|llama_kv_cache): size =\s+" + LC_NUM + r" MiB \(\s*" + _g("cells", INT) + " cells",
       "llama_kv_cache: size =  182.75 MiB (  4352 cells,  43 layers,  1/1 seqs), K (bf16):    0.00 MiB",
       "llama.cpp#27680", kind="kv-cells"),
    # the cache's K and V types, printed after its buffers: what --cache-type-k/-v (or ollama's KvCacheType) set,
    # which the rebuild needs to size the same cells (a q8_0 cache is 34/64 of an f16 one). The types are the ones
    # the estimate models; a fork's own (turbo3) or MLA's "c^KV" line is not read
    _p("llamacpp-kv-types", LLAMACPP, "b2400 to the newest (llama_new_context_with_model then llama_init_from_model: "
       "'KV self size', llama.cpp@c2101a2e to @794fe23f; llama_kv_cache_unified then llama_kv_cache: 'size =', "
       "@8733e0cf to @0c1e57098)",
       r"(?:llama_new_context_with_model|llama_init_from_model|llama_context|llama_kv_cache_unified|llama_kv_cache):"
       r"\s+(?:KV self size|size)\s+=\s+[0-9.,]+ MiB.*?, K \((?P<cache_type_k>" + KV_TYPES + r")\):\s+[0-9.,]+ MiB, "
       r"V \((?P<cache_type_v>" + KV_TYPES + r")\):",
       "llama_kv_cache: size = 1088.00 MiB (  8192 cells,  64 layers,  1/1 seqs), K (q8_0):  544.00 MiB, V (q8_0):  "
       "544.00 MiB", "search-index file 65940070224 (ollama's llama runner, 2026); fedora-copr/logdetective PR #106 "
       "for the 'KV self size' form", kind="arg-update"),
    # --kv-unified-per-slot N (PR #24124): the server names N where it sizes the pool (no -c) and where the cap binds;
    # the pool itself is the context's n_ctx line, the cap the slot length the rebuild needs
    _p("llamacpp-kv-per-slot-pool", LLAMACPP, "b10507 to the newest (--kv-unified-per-slot without -c)",
       r"--kv-unified-per-slot: sizing KV pool to n_parallel \* kv_unified_per_slot = [0-9]+ \* "
       r"(?P<kv_unified_per_slot>[0-9]{1,10}) = [0-9]+",
       "srv          main: --kv-unified-per-slot: sizing KV pool to n_parallel * kv_unified_per_slot = 4 * 4096 = "
       "16384", "tools/server/server.cpp@0c1e57098 (llama-cpp-python 0.3.36: the format string; the line comes with "
       "llama.cpp PR #24124, whose runs quote no such line)", kind="arg-update"),
    _p("llamacpp-kv-per-slot-cap", LLAMACPP, "b10507 to the newest (--kv-unified-per-slot under n_ctx_seq)",
       r"capping per-slot context \([0-9]+\) to --kv-unified-per-slot \((?P<kv_unified_per_slot>[0-9]{1,10})\)",
       "0.03.025.317 I srv    load_model: capping per-slot context (16384) to --kv-unified-per-slot (4096)",
       "llama.cpp PR #24124 (its run of Qwen3.5-4B); tools/server/server-context.cpp@0c1e57098", kind="arg-update"),
    # the GGUF's file type as the loader names it (llama_model_ftype_name: "mostly Q4_K - Medium" until mid-2023,
    # "Q4_K - Medium" after; ik_llama.cpp's own types add their bits per weight): the weights format the rebuild
    # needs when --quantization is not given (compare.logged_gguf_quantization), else a GGUF of a catalog model is
    # sized at its 16-bit weights
    _p("llamacpp-file-type", LLAMACPP, "b1000 to the newest (llm_load_print_meta 'model ftype', then print_info "
       "'file type' from 2025: src/llama-model-loader.cpp llama_model_ftype_name)",
       r"(?:llm_load_print_meta|print_info):\s+(?:model ftype|file type)\s+=\s+(?P<gguf_file_type>[^()\n]+?)"
       r"(?:\s+\(guessed\))?\s*$",
       "print_info: file type   = Q4_K - Medium",
       "ikawrakow/ik_llama.cpp#514 (mainline build 5622's llama-cli); ik_llama.cpp's 'model ftype' line in the same "
       "thread", kind="arg-update"),
    _p("llamacpp-compute-buffer", LLAMACPP, "b2400 to the newest (llama.cpp@c2101a2e to @0c1e57098)",
       r"(?:llama_new_context_with_model|llama_init_from_model|llama_context|graph_reserve|sched_reserve):\s+"
       r"(?P<device>\S+) compute "
       r"buffer size =\s+" + _g(COMPUTE_BUFFER, LC_NUM) + " MiB",
       "llama_new_context_with_model:      CUDA0 compute buffer size =   105.00 MiB", "mozilla-ai/llamafile PR #552",
       {COMPUTE_BUFFER: (COMPUTE_BUFFER, "MiB")}),
    # before the ggml-backend buffers (llama-cpp-python 0.2.20's vendored llama.cpp, b38a16df, Nov 2023): CUDA builds
    # print what they put on the GPU as "VRAM" lines, in "MB" until late 2023 and "MiB" after (both / 1024 / 1024)
    _p("llamacpp-vram-weights", LLAMACPP, "b1200 to b1790 (cuBLAS builds before the backend buffer lines; the "
       "builds that offload K and V from llm_load_tensors count them in: the total line below corrects it)",
       r"llm_load_tensors: VRAM used: " + _g(WEIGHTS) + " Mi?B",
       "llm_load_tensors: VRAM used: 2223.59 MiB", "vendor/llama.cpp/llama.cpp@0.2.20 (llama-cpp-python's sdist, "
       "llama.cpp b38a16df: the format string, and ollama's quoted run of that build)", {WEIGHTS: (WEIGHTS, "MiB")}),
    _p("llamacpp-vram-total", LLAMACPP, "b1400 to b1790 (llama_new_context_with_model: the model's share alone)",
       r"llama_new_context_with_model: total VRAM used: [0-9.]+ Mi?B \(model: " + _g(WEIGHTS) + " Mi?B",
       "llama_new_context_with_model: total VRAM used: 2815.60 MiB (model: 2223.59 MiB, context: 592.00 MiB)",
       "vendor/llama.cpp/llama.cpp@0.2.20 (llama-cpp-python's sdist, llama.cpp b38a16df: the format string)",
       {WEIGHTS: (WEIGHTS, "MiB")}),
    _p("llamacpp-vram-kv", LLAMACPP, "b1400 to b1790 (printed when K and V are offloaded: llama_kv_cache_init)",
       r"llama_kv_cache_init: VRAM kv self = " + _g(KV_CACHE) + " Mi?B",
       "llama_kv_cache_init: VRAM kv self = 3200.00 MB", "vendor/llama.cpp/llama.cpp@0.2.20 (llama-cpp-python's "
       "sdist, llama.cpp b38a16df: the format string, 'MiB' there, 'MB' in the earlier builds)",
       {KV_CACHE: (KV_CACHE, "MiB")}),
    _p("llamacpp-vram-scratch", LLAMACPP, "b1200 to b1790 (the GPU's compute buffer: llama_new_context_with_model)",
       r"llama_new_context_with_model: VRAM scratch buffer: " + _g(COMPUTE_BUFFER) + " Mi?B",
       "llama_new_context_with_model: VRAM scratch buffer: 358.00 MB", "vendor/llama.cpp/llama.cpp@0.2.20 "
       "(llama-cpp-python's sdist, llama.cpp b38a16df: the format string)", {COMPUTE_BUFFER: (COMPUTE_BUFFER, "MiB")}),
    # every build of that time prints it once the worst-case graph was measured: the context is built
    # ollama's memory summary (ml/device.go BackendMemory.Log, from 0.11.5: ml/backend.go until 0.12, then
    # ml/device.go): per device, GPUs first, the CPU last; info level once the load is committed, debug level after
    # each fit and alloc pass; "total memory" ends each summary. The Go engine prints no llama.cpp buffer line, so
    # these are its only figures; sizes are rounded to 0.1 of their unit (format.HumanBytes2)
    _p("ollama-layout-weights", LLAMACPP, "ollama 0.11.5 to the newest (device=; the pre-release runner's buffer= "
       "lines are not read)", r'msg="model weights" device=(?P<device>\S+) size="' + _g(WEIGHTS)
       + r' (?P<unit>GiB|MiB|KiB|B)"',
       'time=2026-04-09T23:30:17.630-07:00 level=INFO source=device.go:240 msg="model weights" device=CUDA0 '
       'size="19.9 GiB"', "search-index file 55579426224 (an ollama KV-quantisation benchmark's load log); "
       "ollama#12027 (0.11's form, source=backend.go); ml/device.go@v0.20.2", {WEIGHTS: (WEIGHTS, UNIT_IN_LINE)},
       kind=OLLAMA_LAYOUT),
    _p("ollama-layout-kv", LLAMACPP, "ollama 0.11.5 to the newest",
       r'msg="kv cache" device=(?P<device>\S+) size="' + _g(KV_CACHE) + r' (?P<unit>GiB|MiB|KiB|B)"',
       'time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:251 msg="kv cache" device=CUDA0 '
       'size="1.1 GiB"', "search-index file 55579426224; ollama#12027; ml/device.go@v0.20.2, ml/backend.go@v0.11.5",
       {KV_CACHE: (KV_CACHE, UNIT_IN_LINE)}, kind=OLLAMA_LAYOUT),
    _p("ollama-layout-compute", LLAMACPP, "ollama 0.11.5 to the newest",
       r'msg="compute graph" device=(?P<device>\S+) size="' + _g(COMPUTE_BUFFER) + r' (?P<unit>GiB|MiB|KiB|B)"',
       'time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:262 msg="compute graph" device=CUDA0 '
       'size="884.1 MiB"', "search-index file 55579426224; ollama#12027; ml/device.go@v0.20.2",
       {COMPUTE_BUFFER: (COMPUTE_BUFFER, UNIT_IN_LINE)}, kind=OLLAMA_LAYOUT),
    _p("ollama-layout-total", LLAMACPP, "ollama 0.11.5 to the newest (the summary's last line)",
       r'msg="total memory" size="[0-9.]+ (?:GiB|MiB|KiB|B)"',
       'time=2026-04-09T23:30:17.631-07:00 level=INFO source=device.go:272 msg="total memory" size="51.9 GiB"',
       "search-index file 55579426224; ollama#12027; ml/device.go@v0.20.2", kind=OLLAMA_LAYOUT),
    # ollama starts its llama.cpp runner as `runner --model ...` and its Go engine as `runner --ollama-engine ...`
    # (llm/server.go@v0.20.2 StartRunner): under the former the summary is ollama's estimate, even where the excerpt
    # stops before llama.cpp's own buffer lines
    _p("ollama-llama-runner", LLAMACPP, "ollama 0.3 to the newest ('starting llama server', then 'starting runner')",
       r'msg="starting (?:runner|llama server)" cmd=".*\brunner --model ',
       'time=2026-05-05T01:30:33.795+08:00 level=INFO source=server.go:432 msg="starting runner" '
       'cmd="/home/lz/bin/ollama runner --model /home/lz/.ollama/models/blobs/sha256-60e05f2100071479f596b964f89f510f0'
       '57ce397ea22f2833a0cfe029bfc2463 --port 44344"', "search-index file 56818628539; ollama#12027 for the Go "
       "engine's own `runner --ollama-engine` (not matched)", kind="marker"),
    # the runner's load request (runner/ollamarunner and llamarunner, ollama 0.11.5 on): KvSize is the context of
    # all slots (num_ctx x Parallel), as llama.cpp's n_ctx counts it; held with the summary above
    _p("ollama-load-request", LLAMACPP, "ollama 0.11.5 to the newest (FlashAttention true/false, then "
       "Enabled/Disabled/Auto)",
       r"msg=load request=\S*Operation:\w+ .*?\bParallel:" + _g(SEQUENCES, INT) + r" BatchSize:\d+ "
       r"FlashAttention:\w+ KvSize:" + _g(KV_TOKENS, INT),
       'time=2026-04-09T23:30:17.630-07:00 level=INFO source=runner.go:1284 msg=load request="{Operation:commit '
       'LoraPath:[] Parallel:1 BatchSize:1024 FlashAttention:Enabled KvSize:32768 KvCacheType: NumThreads:8 '
       'GPULayers:20[ID:GPU-223c73ff-f253-3c8c-d212-82b5d1ce2963 Layers:20(28..47)] MultiUserCache:false '
       'ProjectorPath: MainGPU:0 UseMmap:false}"', "search-index file 55579426224; ollama#12922 (0.12.9's request)",
       {SEQUENCES: (SEQUENCES, "int"), KV_TOKENS: (KV_TOKENS, "int")}, scope=ENGINE, kind=OLLAMA_LAYOUT),
    _p("llamacpp-compute-total", LLAMACPP, "b1200 to b1790 (llama_new_context_with_model)",
       r"llama_new_context_with_model: compute buffer total size = +" + NUM + " Mi?B",
       "llama_new_context_with_model: compute buffer total size = 159.32 MiB", "vendor/llama.cpp/llama.cpp@0.2.20 "
       "(llama-cpp-python's sdist, llama.cpp b38a16df: the format string)"),
    # --override-tensor, --cpu-moe and --n-cpu-moe move matching weights to another buffer type, one line per tensor
    # (llama-model.cpp load_tensors; a debug line in later builds; ik_llama.cpp says "Tensor ... (size = N MiB)"):
    # the tensor and its buffer are read as an override the rebuild passes on (llama.cpp then keeps one copy of the
    # graph inputs, and --fit leaves the placement alone)
    _p("llamacpp-tensor-override", LLAMACPP, "b4900 to the newest (PR #11397's --override-tensor)",
       r"\b[Tt]ensor (?P<tensor>\S+) \((?:size = )?[0-9.]+ MiB[^)]*\) buffer type overridden to (?P<buffer>\S+)",
       "tensor blk.39.ffn_gate_exps.weight (612 MiB iq4_xs) buffer type overridden to CUDA_Host",
       "llama.cpp PR #11397; search-index file 43238641132 (a launch script quoting the line)", kind="override"),
    _p("llamacpp-pipeline-copies", LLAMACPP, "b2431 to the newest ('(n_copies=N)' until the line lost it; "
       "'sched copies = N' at the end of the reserve in later builds)",
       r"(?:pipeline parallelism enabled \(n_copies=|sched copies = )" + _g(PIPELINE_COPIES, INT),
       "llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)", "llama.cpp PR #6122",
       {PIPELINE_COPIES: (PIPELINE_COPIES, "int")}, scope=ENGINE),
    # the line without its count, as later builds print it: the scheduler keeps copies, how many is not printed
    _p(LLAMACPP_PIPELINE_ENABLED, LLAMACPP, "the builds whose line lost '(n_copies=N)' (llama.cpp#22404's)",
       r"pipeline parallelism enabled$", "llama_context: pipeline parallelism enabled", "llama.cpp#22404"),
    _p("llamacpp-device", LLAMACPP, "b1000 to the newest (CUDA)",
       r"Device (?P<index>\d+): (?P<name>[^,]+), compute capability",
       "  Device 0: NVIDIA GeForce RTX 4080, compute capability 8.9, VMM: yes", "mozilla-ai/llamafile PR #552",
       kind="gpu-name"),
    # ggml_cuda_init's header names the build's backend (GGML_CUDA_NAME: CUDA, ROCm for HIP builds, MUSA), which the
    # device lines after it are numbered in (logparse: "Device 1" of a ROCm build is ROCm1)
    # the function was ggml_init_cublas until the CUDA backend's rename in March 2024 (llama.cpp#6184: b2406's log
    # says ggml_init_cublas, b2477's ggml_cuda_init); it named the backend (GGML_CUDA_NAME) already in the sdists of
    # llama-cpp-python 0.2.20 and 0.2.56 (vendor/llama.cpp/ggml-cuda.cu: "%s: found %d " GGML_CUDA_NAME " devices")
    _p("llamacpp-devices-found", LLAMACPP, "b1000 to the newest (ggml_init_cublas, then ggml_cuda_init)",
       r"(?:ggml_cuda_init|ggml_init_cublas): found \d+ (?P<backend>CUDA|ROCm|MUSA) devices",
       "ggml_cuda_init: found 1 CUDA devices (Total VRAM: 11866 MiB):", "llama.cpp#7217 (b2849, 'found 2 CUDA "
       "devices:'); search-index file 58671331675 (b8586); llama.cpp PR #4606 (b1697: ggml_init_cublas)",
       kind="gpu-backend"),
    # since llama.cpp PR #20185 (March 2026) each device line ends with the device's total memory (cudaDeviceProp
    # totalGlobalMem), the figure verify takes as the GPU's size when none is given; the CUDA and the HIP wording
    # both (ggml-cuda.cu in llama-cpp-python 0.3.17's vendored 49bfddec to 0.3.36's 0c1e57098; absent in 0.3.16's)
    # the device list common_params_print_info prints at start-up from early 2026 ("device_info:", then "  - %-8s:
    # %s (%zu MiB, %zu MiB free)" per device, common/arg.cpp) and --list-devices' "  %s: %s (%zu MiB, %zu MiB
    # free)": each device's total by the name its buffers use, the GPU's size where nothing else prints it (Vulkan's
    # and Metal's device lines carry none). A device the start-up never used is listed too: the total is kept for the
    # devices whose buffers the log shows (logparse._found_device); the CPU's host memory is no device's
    _p("llamacpp-device-info", LLAMACPP, "early 2026 to the newest (common_params_print_info's device_info; "
       "--list-devices from b4000)",
       r"(?:^|\s)(?:- )?(?P<device>(?:CUDA|ROCm|MUSA|Vulkan|SYCL|CANN|RPC)[0-9]+)\s*: .+ \("
       + _g(GPU_MEMORY, r"([0-9]+)") + r" MiB, [0-9]+ MiB free\)\s*$",
       "[41303] 0.00.153.447 I   - ROCm0   : AMD Radeon 8060S Graphics (122880 MiB, 125693 MiB free)",
       "llama.cpp#23858 (build 9389, two Strix Halo over RPC); llama.cpp#26208 (build 10644, its cmn prefix)",
       kind="device-info"),
    # --split-mode tensor: llama.cpp joins the GPUs into one "Meta" device and lists them (llama_prepare_model_devices
    # at 0c1e57098; llama_model_load_from_file_impl when PR #19378 came, b8738). Its buffers are then one
    # "Meta(...)" buffer type, named "Meta()" until ggml-backend-meta.cpp's names are fixed (llama.cpp PR #25688):
    # the members listed here are the devices those lines hold one share each of (logparse._meta_ranks)
    _p("llamacpp-meta-device", LLAMACPP, "b8738 to the newest (--split-mode tensor)",
       r"creating a Meta device (?:for tensor parallelism from|with) [0-9]+ devices",
       "llama_prepare_model_devices: creating a Meta device for tensor parallelism from 2 devices:",
       "src/llama.cpp@0c1e57098 llama_prepare_model_devices (llama-cpp-python 0.3.36); JohannesGaessler/llama.cpp "
       "PR #16 (the line's first form)", kind="meta-device"),
    _p("llamacpp-meta-member", LLAMACPP, "b8738 to the newest (--split-mode tensor)",
       r"(?:llama_prepare_model_devices|llama_model_load_from_file_impl):\s+- device [0-9]+: (?P<member>[^\s(]+)",
       "llama_prepare_model_devices: - device 1: CUDA1 (NVIDIA GeForce RTX 3090)",
       "src/llama.cpp@0c1e57098 llama_prepare_model_devices; JohannesGaessler/llama.cpp PR #16 ('- device 2: RPC0 "
       "(127.0.0.1:50052)')", kind="meta-member"),
    _p("llamacpp-device-vram", LLAMACPP, "spring 2026 to the newest (llama.cpp PR #20185: ', VRAM: N MiB')",
       r"\bDevice (?P<index>\d+): [^,]+, .*?\bVRAM: " + _g(GPU_MEMORY, INT) + r" MiB",
       "  Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes, VRAM: 11866 MiB",
       "search-index file 58671331675 (b8586); ROCm/ROCm#6227 (b9106, the HIP wording); "
       "vendor/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu@0.3.17 and @0.3.36 (llama-cpp-python's sdists)",
       {GPU_MEMORY: (GPU_MEMORY, "MiB")}, kind="device-vram"),
    # a device's name may hold its own parentheses (SYCL's "Intel(R) Arc(TM) A770 Graphics", search-index file
    # 21163070082): one level of them is part of the name
    _p("llamacpp-device-free", LLAMACPP, "b5000 to the newest",
       r"using device (?P<device>\S+) \(" + DEVICE_NAME + r"\) - " + _g(FREE_BEFORE_LOAD) + " MiB free",
       "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4070 SUPER) - 11053 MiB free",
       "llama.cpp PR #14363", {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "MiB")}, kind="gpu-name"),
    # later builds print the device's PCI bus id between its name and the free figure, or "unknown id" where the
    # backend reports none (Metal, Vulkan without PCI info: src/llama.cpp llama_model_load_from_file_impl)
    _p("llamacpp-device-free-bus-id", LLAMACPP, "b6900 to the newest (the PCI bus id after the name)",
       r"using device (?P<device>\S+) \(" + DEVICE_NAME + r"\) \((?:[0-9A-Fa-f:.]+|unknown id)\) - "
       + _g(FREE_BEFORE_LOAD) + " MiB free",
       "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4060 Ti) (0000:2b:00.0) - 15001 MiB "
       "free", "llama.cpp PR #16962", {FREE_BEFORE_LOAD: (FREE_BEFORE_LOAD, "MiB")}, kind="gpu-name"),
    # llama-server opens its HTTP port before it loads the model (server.cpp from PR #4881, b1840; 0.2.58's vendored
    # build printed it after, 0.3.10's before again): the line says the log is llama.cpp's, not that it came up
    _p("llamacpp-listening", LLAMACPP, "b1840 to the newest (before or after the load, by build)",
       r"server is listening|HTTP server listening",
       "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 31", "llama.cpp PR #14363",
       kind="marker"),
    # --fit's device lines: the total (the backend's own figure, what verify takes as the GPU's size when none is
    # given) and the free memory it fitted against. The first form prints the free memory left after its projection
    # (projected_free = free - projected_used, src/llama.cpp@0.3.20), so the two add up to what was free; the table
    # prints it as is. The table's model, context and compute columns are the dry runs --fit tries (b9106's ROCm log:
    # 640 MiB of context at a 4,096-cell probe, then 31,488 cells run): not read as the device's buffers.
    _p("llamacpp-fit-device", LLAMACPP, "the first --fit builds, late 2025 (llama_params_fit_impl at info level: "
       "src/llama.cpp@0.3.20; a trace line in common/fit.cpp@0.3.26 and @0.3.36)",
       r"(?:llama|common)_params_fit_impl:\s+- (?P<device>\S+) \(.*\):\s+" + _g(GPU_MEMORY, INT) + r" total,\s+"
       r"(?P<used>[0-9]+) used,\s+(?P<left>-?[0-9]+) free vs\. target of",
       "llama_params_fit_impl:   - Vulkan0 (Radeon RX 580 Series):   4096 total,   1237 used,   1932 free vs. target "
       "of   1024", "search-index file 62168197661 (a project note quoting Docker Model Runner's llama-server); the "
       "format string in vendor/llama.cpp/src/llama.cpp@0.3.20 (llama-cpp-python's sdist)",
       {GPU_MEMORY: (GPU_MEMORY, "MiB"), "used": (FREE_AT_FIT, "MiB+"), "left": (FREE_AT_FIT, "MiB+")}),
    # the layers --fit settled on, one line per device: the line above prints only with two or more devices, this one
    # with any (common/fit.cpp@0.3.36: mem[id] used and dmds_full[id].free - mem[id] left, so the two add up to what
    # the device had free; "(N overflowing)" once a MoE layer is split across devices)
    _p("llamacpp-fit-device-layers", LLAMACPP, "early 2026 to the newest (common_params_fit_impl's result per "
       "device: common/fit.cpp@0.3.26, @0.3.36)",
       r"(?:llama|common)_params_fit_impl:\s+- (?P<device>\S+) \(.*\):\s+\d+ layers(?: \(\s*\d+ overflowing\))?,"
       r"\s+(?P<used>[0-9]+) MiB used,\s+(?P<left>-?[0-9]+) MiB free\s*$",
       "0.03.826.881 I common_params_fit_impl:   - Vulkan0 (NVIDIA GeForce GTX 1070 Ti): 31 layers,   5742 MiB used,"
       "   1155 MiB free", "search-index file 67530874114 (a public hardware-trial report, b9849 Vulkan); the format "
       "strings in vendor/llama.cpp/common/fit.cpp@0.3.36 (llama-cpp-python's sdist)",
       {"used": (FREE_AT_FIT, "MiB+"), "left": (FREE_AT_FIT, "MiB+")}),
    _p("llamacpp-fit-breakdown", LLAMACPP, "late 2025 to the newest (llama_memory_breakdown_print: "
       "src/llama-context.cpp@0.3.20; common_memory_breakdown_print: common/fit.cpp@0.3.26, @0.3.36)",
       r"memory_breakdown_print: \|\s+- (?P<device>\S+) \(.*\)\s+\|\s+" + _g(GPU_MEMORY, INT) + r"\s+=\s+"
       + _g(FREE_AT_FIT, INT) + r"\s+\+\s+\(",
       "common_memory_breakdown_print: |   - ROCm1 (RX 9070 XT) | 16304 = 16140 + (30834 =  9938 +   20480 +     416) "
       "+      -30670 |", "ROCm/ROCm#6227",
       {GPU_MEMORY: (GPU_MEMORY, "MiB"), FREE_AT_FIT: (FREE_AT_FIT, "MiB")}),
    # What a refused allocation asked for (kind "refused", logparse._refused): the device would have needed it, so it
    # is held against the estimate as that device's buffer. The compute reserve names its buffer type and its bytes;
    # a tensor range (a model's or a KV cache's buffer) too, and the line after it says which; CUDA's own line names
    # only the device's index (HIP and MUSA builds print the same words) and is read when no named line follows.
    _p("llamacpp-refused-compute", LLAMACPP, "spring 2024 to the newest (ggml_gallocr_reserve_n in the ggml-alloc.c "
       "vendored by llama-cpp-python 0.2.56, 0.2.90, 0.3.2, 0.3.16; ggml_gallocr_reserve_n_impl in 0.3.36's; 0.2.29's "
       "of January 2024 prints no size)",
       r"ggml_gallocr_reserve_n(?:_impl)?: failed to allocate (?P<device>\S+) buffer of size (?P<refused>\d+)",
       "1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512",
       "llama.cpp PR #26297; vendor/llama.cpp/ggml/src/ggml-alloc.c@0.2.90 and @0.3.36 (llama-cpp-python's sdists)",
       kind="refused"),
    # 0.3.2's vendored build logs this at debug level (not printed); 0.2.56's, 0.2.90's and 0.3.10's on print it
    _p("llamacpp-refused-tensors", LLAMACPP, "spring 2024 to the newest, bar the debug-level builds of late 2024 "
       "(alloc_tensor_range: ggml-alloc.c@0.2.56, @0.2.90, @0.3.10, @0.3.36; GGML_LOG_DEBUG @0.3.2)",
       r"alloc_tensor_range: failed to allocate (?P<device>\S+) buffer of size (?P<refused>\d+)",
       "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624", "llama.cpp#20431",
       kind="refused"),
    _p("llamacpp-refused-cuda", LLAMACPP, "b1880 to the newest (ggml_backend_cuda_buffer_type_alloc_buffer: "
       "ggml-cuda.cu@0.2.29 to ggml/src/ggml-cuda/ggml-cuda.cu@0.3.36)",
       r"ggml_backend_cuda_buffer_type_alloc_buffer: allocating (?P<refused>" + LC_NUM[1:-1] + r") MiB on device "
       r"(?P<index>\d+): cudaMalloc failed",
       "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 4: cudaMalloc failed: out of "
       "memory", "ollama#6860", kind="refused"),
    # the KV cache's own words after its buffer was refused: llama_kv_cache_init's error (0.2.29 to 0.3.2), then the
    # exception llama_init_from_model prints (llama-kv-cache.cpp@0.3.36)
    _p("llamacpp-refused-kv", LLAMACPP, "b1880 to the newest",
       r"failed to allocate buffer for kv cache",
       "0.06.650.537 E llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
       "search-index file 59289607393 (a launcher's test quoting llama-server's output); the format string in "
       "vendor/llama.cpp/llama.cpp@0.2.29 and src/llama-kv-cache.cpp@0.3.36 (llama-cpp-python's sdists)",
       kind="refused"),
    # "failed to allocate memory for kv cache": llama_kv_cache_init to b1790 (vendor/llama.cpp/llama.cpp@0.2.20)
    _p("llamacpp-alloc-failed", LLAMACPP, "b1000 to the newest",
       r"failed to allocate (?:\S+ )?buffer|failed to allocate memory for kv cache|cudaMalloc failed: out of memory|"
       r"unable to allocate \S+ buffer",
       "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8900.01 MiB on device 0: cudaMalloc failed: "
       "out of memory", "ikawrakow/ik_llama.cpp PR #235", kind="failure:out-of-memory"),
)

# -- llama.cpp: what ends a start-up ---------------------------------------------------------------------------
# The KV buffers are printed before the compute buffers are reserved (llama_context's constructor, then
# sched_reserve: src/llama-context.cpp@0c1e57098, llama-cpp-python 0.3.36's vendored build), so a run can print
# them and still die. Each way it dies, on each front-end, is a row; "out-of-memory" where the line says the memory
# ran out, ENGINE_ERROR where it only says that the start-up stopped (the reason is a line before it, when printed).
ENGINE_ERROR = "engine-error"
# the llama.cpp lines that belong to a speculative draft once one began ("llamacpp-draft-begins"): its load, its
# context, its buffers and the settings its context prints, by kind and by row; the device's total (its memory
# breakdown at exit, its VRAM line), outcomes and failures stay the process's
LLAMACPP_DRAFT_KINDS = ("context", "buffer", "arg-update", "kv-cells", "marker", "gpu-name", "override")
LLAMACPP_DRAFT_ROWS = ("llamacpp-offloaded", "llamacpp-seq-max", "llamacpp-compute-buffer", "llamacpp-compute-total",
                       "llamacpp-pipeline-copies")

LLAMACPP_FAILURES = (
    _p("llamacpp-compute-buffers-failed", LLAMACPP, "b1000 to the newest ('compute pp/tg buffers' from the "
       "llama_context rewrite, b4800: src/llama-context.cpp@0c1e57098)",
       r"failed to allocate compute (?:pp |tg )?buffers",
       "graph_reserve: failed to allocate compute buffers", "llama.cpp PR #16748", kind="failure:out-of-memory"),
    _p("llamacpp-backend-oom", LLAMACPP, "b1000 to the newest (CUDA, ROCm and MUSA builds name their backend: "
       "ggml_cuda_error in ggml-cuda.cu@0c1e57098)", r"\b(?:CUDA|ROCm|MUSA) error: out of memory",
       "Aug 13 16:58:56 monster ollama[3010374]: ROCm error: out of memory", "ollama#11713",
       kind="failure:out-of-memory"),
    # the exception's text follows on the next line ("ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory");
    # it is not read on its own: the pinned-memory fallback prints the same line under its warning (llama.cpp#9271),
    # and that run goes on
    _p("llamacpp-vulkan-alloc-failed", LLAMACPP, "b2100 to the newest (ggml_vk_create_buffer_device; "
       "ggml-vulkan-buffers.cpp in the newest builds)",
       r"ggml_vulkan: (?:Device )?[Mm]emory allocation of size \d+ failed",
       "ggml_vulkan: Device memory allocation of size 118497280 failed.", "llama.cpp#15256",
       kind="failure:out-of-memory"),
    _p("llamacpp-metal-out-of-memory", LLAMACPP, "b2760 to the newest (Metal's command buffer error, printed from "
       "PR #7010)",
       r"kIOGPUCommandBufferCallbackErrorOutOfMemory",
       "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", "llama.cpp PR #7010",
       kind="failure:out-of-memory"),
    _p("llamacpp-backend-error", LLAMACPP, "b1000 to the newest (any other backend error aborts: ggml_cuda_error)",
       r"\b(?:CUDA|ROCm|MUSA) error: ",
       "CUDA error: an illegal memory access was encountered", "ollama#9283", kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-context-failed", LLAMACPP, "b1000 to the newest (common's and the old examples' own words)",
       r"failed to create context",
       "llama_init_from_gpt_params: error: failed to create context with model '/models/DeepSeek-R1-Q2_K.gguf'",
       "ikawrakow/ik_llama.cpp PR #235", kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-context-init-failed", LLAMACPP, "b4500 to the newest (llama_init_from_model: "
       "src/llama-context.cpp@0c1e57098)", r"failed to initialize the context",
       "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers",
       "vendor/llama.cpp/src/llama-context.cpp@0.3.36 (llama-cpp-python's sdist, llama.cpp 0c1e57098: the format "
       "string and sched_reserve's exception; no public log found)",
       kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-model-load-error", LLAMACPP, "b1000 to the newest (llama_model_load)", r"error loading model",
       "llama_model_load: error loading model: unable to allocate CUDA0 buffer", "llama.cpp#20431",
       kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-server-load-failed", LLAMACPP, "b3900 to the newest (llama-server's load_model)",
       r"failed to load model",
       "srv    load_model: failed to load model, '/models/Qwen3-32B-Q4_K_M.gguf'",
       "vendor/llama.cpp/tools/server/server-context.cpp@0.3.36 (llama-cpp-python's sdist, llama.cpp 0c1e57098: "
       "the format string; no public log found)",
       kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-server-unable-to-load", LLAMACPP, "b1840 to b3900 (the JSON log's error)", r"unable to load model",
       'ERR [              load_model] unable to load model | tid="22457510539264" timestamp=1740668683',
       "ikawrakow/ik_llama.cpp PR #235", kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-assert", LLAMACPP, "b1000 to the newest", r"GGML_ASSERT\(.*\) failed",
       r"D:\a\llama.cpp\llama.cpp\ggml\src\ggml.c:1721: GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed",
       "ollama#9515", kind="failure:" + ENGINE_ERROR),
    _p("llamacpp-segfault", LLAMACPP, "every build (the shell's or the runtime's report)", r"Segmentation fault",
       "Segmentation fault (core dumped)", "ollama#9352", kind="failure:" + ENGINE_ERROR),
    # ollama's Go engine: its scheduler found no layout that fits, or the runner refused the one it committed
    # (llm/server.go ollamaServer.Load@v0.20.2; llamaServer.Load's "failed to allocate memory for model" too); the
    # scheduler repeats the reason as `msg="Load failed" ... error="..."` (server/sched.go@v0.20.2)
    _p("ollama-layout-failed", LLAMACPP, "ollama 0.11.5 to the newest",
       r"memory layout cannot be allocated", "memory layout cannot be allocated with num_gpu = 26",
       "ollama#14980 (0.18.2); llm/server.go@v0.20.2", kind="failure:out-of-memory"),
    _p("ollama-commit-failed", LLAMACPP, "ollama 0.11.5 to the newest",
       r"failed to (?:allocate|commit) memory for model",
       "failed to commit memory for model (ministral-3:14b)", "ollama#13303 (its title quotes the reason; both "
       "format strings in llm/server.go@v0.20.2)", kind="failure:out-of-memory"),
    # ollama's runner is llama.cpp's code under ollama's own log lines (llm/server.go, server/sched.go)
    _p("ollama-runner-terminated", LLAMACPP, "ollama 0.1.33 to the newest",
       r'msg="llama runner terminated"',
       'time=2025-03-05T04:13:07.120-05:00 level=ERROR source=server.go:421 msg="llama runner terminated" '
       'error="exit status 0xc0000409"', "ollama#9515", kind="failure:" + ENGINE_ERROR),
    _p("ollama-runner-process-terminated", LLAMACPP, "ollama 0.1.17 to the newest",
       r"llama runner process has terminated",
       'level=ERROR source=sched.go:456 msg="error loading llama server" error="llama runner process has terminated: '
       'GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed"', "ollama#9515", kind="failure:" + ENGINE_ERROR),
)

# -- llama.cpp: what proves it came up, and the retry that is not a failure ----------------------------------------
LLAMACPP_OUTCOMES = (
    # sched_reserve retries a failed reserve without pipeline parallelism (llama.cpp PR #16748, b6840;
    # src/llama-context.cpp@0c1e57098): the failure lines above it are not the outcome, one copy of the inputs is
    _p("llamacpp-retry-without-pipeline", LLAMACPP, "b6840 to the newest (llama_context, then sched_reserve)",
       r"compute buffer allocation failed, retrying without pipeline parallelism",
       "1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",
       "llama.cpp PR #26297", kind="recovery"),
    _p("llamacpp-model-loaded", LLAMACPP, "b1840 to the newest (llama-server, after the context: PR #4881)",
       r"\bmodel loaded\b", 'INFO [main] model loaded | tid="139820253798400" timestamp=1727091153', "ollama#6926",
       kind="started"),
    # llama-server sets up its slots once common_init_from_params returned a context (server-context.cpp@0.3.36)
    _p("llamacpp-slots-initializing", LLAMACPP, "b1840 to the newest ('initializing slots' in the JSON log, then "
       "'initializing, n_slots = N')", r"initializing(?: slots|, n_slots = \d+)",
       "1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'",
       "llama.cpp PR #26297", kind="started"),
    _p("llamacpp-main-loop", LLAMACPP, "b3900 to the newest (llama-server once the model is loaded)",
       r"server is listening on \S+ - starting the main loop",
       "deep-seek-1  | main: server is listening on http://0.0.0.0:8008 - starting the main loop", "llama.cpp#11476",
       kind="started"),
    _p("llamacpp-slots-idle", LLAMACPP, "b1840 to the newest (info level until the newest builds make it a trace)",
       r"all slots are idle", "deep-seek-1  | srv  update_slots: all slots are idle", "llama.cpp#11476",
       kind="started"),
    _p("ollama-runner-started", LLAMACPP, "ollama 0.1.33 to the newest", r"llama runner started in",
       'time=2025-02-07T08:54:51.891Z level=INFO source=server.go:594 msg="llama runner started in 8.52 seconds"',
       "ollama#8922", kind="started"),
)

ANY_PATTERNS = (
    _p("torch-oom", "", "PyTorch 2.1 to the newest (vLLM and SGLang)",
       r"CUDA out of memory\. Tried to allocate " + NUM + r" (?:MiB|GiB)\. GPU \d+ has a total capacity of "
       + _g(GPU_MEMORY) + " GiB",
       "(VllmWorker rank=0 pid=2961) ERROR 03-19 07:27:53 [multiproc_executor.py:375] torch.OutOfMemoryError: CUDA "
       "out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of 23.57 GiB of which 594.88 MiB is "
       "free.", "vllm#15105",
       {GPU_MEMORY: (GPU_MEMORY, "GiB")}, kind="failure:out-of-memory"),
)

# -- vLLM and SGLang: a start-up that crashed ----------------------------------------------------------------------
# Both are Python: a start-up that dies on anything the rows above do not name (an assertion, a worker that died, a
# NCCL or CUDA error, a signal) prints one of these lines, after the pool line too (a DeepSeek-V4 pool that asserts
# on its store dtype, a graph capture that raises). CRASH is resolved per line (logparse): out of memory when the
# line says so (MEMORY_WORDS), else ENGINE_ERROR. Once the engine served (SERVED_LINES) a crash is a request's, not
# the start-up's.
CRASH = "crash"
OUT_OF_MEMORY = "out-of-memory"
PYTHON_ENGINES = (VLLM, SGLANG)
MEMORY_WORDS = re.compile(r"CUDA out of memory|OutOfMemoryError|out of memory|failed to allocate|"
                          r"No available memory for the cache blocks")
CRASH_PATTERNS = (
    # the exception's own line: alone (a traceback's last line) or after any prefix a logger or a transport writes
    # ("] ", "| ", "vllm[12]: ", stern's "pod container "), but not inside prose ("due to ImportError: ...", "with
    # KeyError: ...": a comma or a preposition before it), and not a word that only ends in Error
    # ("DistBackendError" is read from its "torch."), and not on a line vLLM's logger wrote at INFO, WARNING or
    # DEBUG ("WARNING 05-01 12:00:00 [utils.py:12] Failed to import x: ModuleNotFoundError: ..." is a message; a
    # traceback's last line is printed bare or at ERROR, whatever level a collector puts in front of it)
    _p("python-exception", "", "vLLM and SGLang, every release (Python's traceback: its last line)",
       r"^(?!.*\b(?:INFO|WARNING|DEBUG) [0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\b(?!.*\bERROR\b)).*?"
       r"(?<![A-Za-z0-9_.])(?<!, )(?<!to )(?<!by )(?<!of )(?<!with )(?<!from )(?<!raised )"
       r"(?:[a-z_][a-z0-9_]*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception)(?::\s|$)",
       "AssertionError", "sglang#25118 (tests/fixtures/logs/sglang/dsv4-flash-fp8-4x-mi300x-dp4-pool-split-assert.log)",
       kind=CRASH),
    _p("python-worker-died", "", "vLLM 0.6 to the newest, SGLang 0.3 to the newest (the process that saw it die)",
       r"Engine core initialization failed|[Ww]orker proc \S+ died unexpectedly|\bdied, exit code|"
       r"hit an exception|Received sigquit from a child process|scheduler is dead|"
       r"unexpectedly failed with exit ?code|The actor died",
       "[2026-05-13 02:15:18 DP3 TP3] Scheduler hit an exception: Traceback (most recent call last):",
       "sglang#25118 (tests/fixtures/logs/sglang/dsv4-flash-fp8-4x-mi300x-dp4-pool-split-assert.log)", kind=CRASH),
    _p("python-device-error", "", "vLLM and SGLang on CUDA and ROCm (torch's and NCCL's error text)",
       r"\bCUDA error: |\bHIP error: |no kernel image is available|illegal memory access was encountered|"
       r"NCCL error|ncclInternalError|ncclSystemError|ncclUnhandledCudaError|ncclRemoteError",
       "CUDA error: an illegal memory access was encountered", "ollama#9283 (the CUDA runtime's own text)", kind=CRASH),
    _p("python-signal", "", "any process (the interpreter's or the shell's report)",
       r"Segmentation fault|Fatal Python error|\bSIG(?:SEGV|ABRT|BUS|ILL|KILL)\b|Aborted \(core dumped\)|"
       r"killed by signal|received signal \d+",
       "Segmentation fault (core dumped)", "ollama#9352 (the shell's report)", kind=CRASH),
)
# Lines that say the start-up is done: after them a failure is a request's or the shutdown's, not the start-up's.
# vLLM's engine core is up once "init engine (profile, create kv cache, warmup model)" took (the sampler warm-up is
# part of it), its server once it listens; SGLang's server once its warm-up request passed ("fired up": its Uvicorn
# line comes before that warm-up, which can still fail).
SERVED_PATTERNS = (
    _p("sglang-ready", SGLANG, "0.4 to the newest (read in sglang/srt/entrypoints/http_server.py@v0.4.6.post2; the "
       "fixtures' logs of 2025-01 to 2026-08 print it)", r"The server is fired up and ready to roll",
       "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
       "sglang/srt/entrypoints/http_server.py@v0.4.6.post2 (the format string, after the warm-up request; the line "
       "as the docs quick start printed it: tests/fixtures/logs/sglang/llama31-8b-docs-quickstart.log)",
       kind="started"),
)
SERVED_LINES = frozenset({"vllm-ready", "vllm-serving", "sglang-ready"})

ALL_PATTERNS = (VLLM_PATTERNS + SGLANG_PATTERNS + LLAMACPP_PATTERNS + LLAMACPP_FAILURES + LLAMACPP_OUTCOMES
                + ANY_PATTERNS + CRASH_PATTERNS + SERVED_PATTERNS)

# Rows whose words any engine's process can print (a backend's abort, a crash, "model loaded"): they are read for
# llama.cpp's outcome but do not say that a log is llama.cpp's, so they do not count when the engine is chosen.
SHARED_WORDS = frozenset({"llamacpp-backend-oom", "llamacpp-backend-error", "llamacpp-segfault",
                          "llamacpp-model-loaded", "llamacpp-slots-idle", "llamacpp-server-load-failed",
                          "llamacpp-context-failed", "llamacpp-model-load-error"})
# A row whose line proves that llama.cpp's context was built: the compute buffers are printed once every reserve
# succeeded (sched_reserve, src/llama-context.cpp@0c1e57098; llama_new_context_with_model before it)
LLAMACPP_CONTEXT_BUILT = frozenset({"llamacpp-compute-buffer", "llamacpp-compute-total"})

# Rows whose line gives the free memory after the weights but not the weights: the weights are the rank's free
# memory before the load less this (SGLang to 0.4.3; 0.4.4 prints that difference itself, model_runner.py@v0.4.4)
WEIGHTS_FROM_FREE = frozenset({"sglang-load-end-free-only"})
# lines whose torch peak (TORCH_PEAK) holds the weights: the activation peak is it less the rank's weights line
ACTIVATION_FROM_TORCH_PEAK = frozenset({"vllm-profile-0.6.4"})
SGLANG_SWA_SPLIT = frozenset({"sglang-swa-pool-split"})  # the pool lines after it are one hybrid cache's two pools
SGLANG_POOL_LINES = frozenset({"sglang-kv-allocated", "sglang-kv-allocated-one-size"})
# An EAGLE-style draft worker is a second ModelRunner on every rank: it prints its own load and pool lines, unlabelled,
# after the target's load (speculative/eagle_worker.py@v0.5.9, scheduler.py@v0.5.14 init_model_worker); its pool
# comes after the target's pool (before 0.5.14 its load does too). A load line on a rank that already loaded is the
# draft's, and from then on a figure the rank already has is the target's (engines/sglang_draft sizes the draft).
SGLANG_LOAD_LINES = frozenset({"sglang-load-begin", "sglang-load-end", "sglang-load-end-free-only"})

# SGLang's "mem usage" of distributed init and of the weights is a free-memory difference, not an allocation: the free
# memory before less after ("before_avail_memory - local_gpu_memory" and "before_avail_memory - after_avail_memory",
# model_runner.py@v0.4.9.post1 l.572 and l.656, @v0.5.9 l.851 and l.1046), so it is negative when another process
# gave memory back in between ("avail mem=64.20 GB, mem usage=-27.89 GB.": the docs CI, which runs notebooks side
# by side, 2025-06-12 and 2025-07-11). The sign is read so the line (its free memory after) still is; a negative
# figure is no size of the term: logparse drops it and notes the memory given back.
SGLANG_FREE_DIFFERENCES: dict[str, str] = {
    "sglang-load-end": WEIGHTS,
    "sglang-distributed": NON_TORCH,
    "sglang-distributed-elapsed": NON_TORCH,
}

# Lines an engine prints once per start-up, first: met again after figures, or naming another release than the one
# read, they begin another start-up in the same log (a restart), and the parser keeps the last one. vLLM's API server
# prints its version once per process (engine cores and workers print the engine config line, which is not one of
# these), SGLang's launcher its arguments, llama-server its build.
# llama.cpp's first line of a model's load (llama-model-loader.cpp, once per llama_model_load_from_file): the same file
# loaded again after its weights took memory begins another start-up (logparse._opens_start_up)
LLAMACPP_LOAD_LINE = "llamacpp-load-begins"
LLAMACPP_LOADED_TERMS = frozenset({WEIGHTS, KV_CACHE, RECURRENT_STATE, COMPUTE_BUFFER})  # memory a load's buffers took
# what a load prints of each device before its load line (the fit pass, "using device ... MiB free"): carried into
# the start-up that load line begins
LLAMACPP_PRE_LOAD_TERMS = frozenset({FREE_BEFORE_LOAD, FREE_AT_FIT, GPU_MEMORY})
# a build line's count below the first build that printed the line is a partial clone's own, not llama.cpp's build
LLAMACPP_BUILD_LINES_SINCE = {LLAMACPP_BUILD_INFO: LLAMACPP_BUILD_INFO_SINCE,
                              LLAMACPP_SERVER_BUILD: LLAMACPP_SERVER_BUILD_RECORD_SINCE}
START_UP_LINES = frozenset({"vllm-version", "vllm-banner-version", "vllm-server-version", "sglang-server-args",
                            "sglang-server-args-dict", "llamacpp-build", "llamacpp-build-info",
                            "llamacpp-build-info-unnumbered", "llamacpp-build-examples", LLAMACPP_SERVER_BUILD})
