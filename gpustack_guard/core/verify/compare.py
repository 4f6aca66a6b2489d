"""The observed start-up held against the estimate (pure): the deployment rebuilt from the log's own arguments,
term by term differences, and the reasons verify fails."""

from __future__ import annotations

import json
import re

from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.memory.engines.sglang import start_up_bytes as sglang_start_up
from gpustack_guard.core.memory.estimate import (
    DOES_NOT_FIT,
    FITS,
    KV_BELOW_MAX_LEN,
    NO_KV_MEMORY,
    SAMPLER_WARMUP_OOM,
    STATE_BLOCKS_BELOW_SEQS,
    Estimate,
)
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import ObservedLog

DEFAULT_TOLERANCE_PERCENT = 5.0
MAX_TOLERANCE_PERCENT = 1000.0  # --tolerance: past this every comparison passes, so it is a typo


def tolerance_problem(percent: float) -> str | None:
    """Why a --tolerance is refused (offline and live alike); None when it is a usable percentage."""
    if 0 <= percent <= MAX_TOLERANCE_PERCENT:
        return None
    return f"--tolerance is a percentage from 0 to {MAX_TOLERANCE_PERCENT:g}, not {percent:g}"

# The rows compared, in the order printed: (term, label, kind). Bytes are per GPU, the binding rank's.
ROWS = (
    (P.GPU_MEMORY, "GPU memory", "bytes"),
    (P.REQUESTED, "requested by the engine", "bytes"),
    (P.WEIGHTS, "weights", "bytes"),
    (P.FORWARD_PEAK, "forward peak", "bytes"),
    (P.SAMPLER_PEAK, "sampler peak", "bytes"),
    (P.ENCODER_PEAK, "encoder peak", "bytes"),
    (P.ACTIVATION, "activation peak", "bytes"),
    (P.NON_TORCH, "non-torch", "bytes"),
    (P.CUDA_GRAPHS, "CUDA graphs", "bytes"),
    (P.PREFILL_GRAPHS, "prefill CUDA graphs (SGLang)", "bytes"),
    (P.KV_CACHE, "KV cache", "bytes"),
    (P.RECURRENT_STATE, "recurrent state (llama.cpp RS buffer)", "bytes"),
    (P.MAMBA_STATE, "mamba state pool (SGLang)", "bytes"),
    (P.MAMBA_SPECULATIVE, "mamba draft-token states (SGLang)", "bytes"),
    (P.MM_KV_RESERVE, "multimodal KV-budget reserve (SGLang)", "bytes"),
    (P.COMPUTE_BUFFER, "compute buffer", "bytes"),
    (P.PROJECTOR_WEIGHTS, "vision projector weights (llama.cpp mmproj)", "bytes"),
    (P.PROJECTOR_COMPUTE, "vision projector compute buffer (llama.cpp)", "bytes"),
    (P.KV_TOKENS, "KV capacity", "tokens"),
    (P.SAMPLER_WARMUP, "sampler warm-up", "bytes"),
    (P.MAX_MODEL_LEN, "max model length", "tokens"),
    (P.MAX_CONCURRENCY, "max concurrency", "times"),
    (P.PIPELINE_COPIES, "graph input copies (llama.cpp)", "times"),
    (P.GRAPHS_PIECEWISE, "CUDA graphs, PIECEWISE", "count"),
    (P.GRAPHS_FULL, "CUDA graphs, FULL", "count"),
    (P.MAX_CAPTURE_SIZE, "largest capture size", "tokens"),
    (P.ATTENTION_BLOCK, "attention block", "tokens"),
    (P.ENCODER_BUDGET, "encoder cache budget", "tokens"),
    (P.ENCODER_ITEMS, "encoder profile items", "count"),
)

# A failure kind as the estimate names the same verdict
TP_HEADS = "tp-heads"  # validate's GSG037: the engine refuses the tensor-parallel size before sizing any memory
FAILURE_VERDICT = {"kv-below-max-model-len": KV_BELOW_MAX_LEN, "no-kv-memory": NO_KV_MEMORY,
                   "not-divisible-by-parallel-size": TP_HEADS,
                   "out-of-memory-warming-up-sampler": SAMPLER_WARMUP_OOM,  # vLLM V1 names where it died
                   # a hybrid's state blocks below max_num_seqs under FULL decode graphs (vLLM 0.20+)
                   "mamba-blocks-below-max-num-seqs": STATE_BLOCKS_BELOW_SEQS,
                   "out-of-memory": DOES_NOT_FIT}  # an allocation at start-up failed: the deployment does not fit
# A bare allocation failure does not say where at start-up it happened (loading, profiling, graph capture, the
# sampler warm-up): each estimate verdict that dies of memory at start-up agrees with it. A named place does not
# widen: the sampler warm-up's own message agrees only with that verdict.
START_UP_MEMORY_DEATHS = (DOES_NOT_FIT, SAMPLER_WARMUP_OOM)


def verdicts_agree(observed: str | None, estimated: str | None) -> bool:
    """Whether the estimate's verdict is the engine's: the same one, or one place of a bare start-up OOM."""
    if observed is None or estimated is None:
        return False
    return observed == estimated or (observed == DOES_NOT_FIT and estimated in START_UP_MEMORY_DEATHS)
# Deployment verdicts (validate's rules over the same deployment) that are refusals the engine itself makes at
# start-up, ahead of its memory arithmetic: they are the engine's verdict when they fire.
ENGINE_REFUSALS = (TP_HEADS,)
# validate's GSG035 over the logged deployment alone: the memory other processes held at start (foreign_at_start)
# beside the engine's own buffers is more than the card. It fires only for an engine that allocates fixed buffers
# (SGLang sizes its pool from the memory it finds free: fleet._sizes_from_free), whose allocation then fails
GPU_OVERCOMMIT = "gpu-overcommit"


def engine_verdict(memory_verdict: str, deployment_verdict: str | None) -> str:
    """What the engine does with the deployment: a refusal of its shape first, an allocation that others' memory
    leaves no room for next, else the memory arithmetic's."""
    if deployment_verdict in ENGINE_REFUSALS:
        return deployment_verdict
    return DOES_NOT_FIT if deployment_verdict == GPU_OVERCOMMIT else memory_verdict

# The memory-relevant arguments each engine printed, passed to the estimate as flags (vLLM's names, then
# SGLang's); the rest (host, port, chat templates, keys) says nothing about memory.
VLLM_ARGS = ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "gpu_memory_utilization", "dtype",
             "kv_cache_dtype", "quantization", "block_size", "max_num_seqs", "max_num_batched_tokens",
             "enforce_eager", "cpu_offload_gb", "enable_expert_parallel", "num_gpu_blocks_override",
             "kv_cache_memory_bytes", "speculative_config", "max_seq_len_to_capture", "cuda_graph_sizes",
             "cudagraph_capture_sizes", "max_cudagraph_capture_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype",
             "enable_lora", "max_loras", "max_lora_rank", "fully_sharded_loras", "lora_dtype", "attention_backend",
             "mm_encoder_tp_mode")
# printed switches whose False is a flag of its own: prefix caching sets a hybrid's mamba cache mode ('align' keeps
# two state pages per sequence, v1/kv_cache_interface.py@v0.18.0 MambaSpec.max_memory_usage_bytes); async scheduling
# the steps of batched tokens a window's pages hold from 0.26.0 (engines/vllm.py window_in_flight_steps)
VLLM_SWITCHES = {"enable_prefix_caching": ("--enable-prefix-caching", "--no-enable-prefix-caching"),
                 "async_scheduling": ("--async-scheduling", "--no-async-scheduling")}
SGLANG_ARGS = ("tp_size", "pp_size", "mem_fraction_static", "context_length", "dtype", "kv_cache_dtype",
               "quantization", "max_running_requests", "max_total_tokens", "chunked_prefill_size", "page_size",
               "disable_cuda_graph", "cuda_graph_max_bs", "speculative_algorithm", "speculative_num_steps",
               "speculative_eagle_topk", "speculative_num_draft_tokens",
               # the LoRA memory pool (core/memory/lora.py); lora_paths alone turns it on, enable_lora says so
               "enable_lora", "max_lora_rank", "max_loras_per_batch", "lora_target_modules", "lora_backend",
               # switches engine.sglang_config reads: prefill graphs off (SGLANG_PREFILL_GRAPHS_OFF), per-phase
               # graphs off (0.5.14+), the hybrid pools' layout (SWA, mamba) and the overlap scheduler
               "disable_piecewise_cuda_graph", "enable_torch_compile", "enable_dp_attention",
               "disable_decode_cuda_graph", "disable_prefill_cuda_graph", "disable_radix_cache",
               "disable_overlap_schedule", "disable_hybrid_swa_memory", "swa_full_tokens_ratio",
               "max_mamba_cache_size", "mamba_full_memory_ratio", "mamba_ssm_dtype",
               # DP attention's reserve in the default fraction (profiles.SGLANG_DP_ATTENTION_RESERVE)
               "dp_size", "attn_dp_size", "disaggregation_mode")
# vLLM's config line: its names for the same settings (what the engine resolved, used where no args were printed)
VLLM_CONFIG = {"tensor_parallel_size": "tensor_parallel_size", "pipeline_parallel_size": "pipeline_parallel_size",
               "max_seq_len": "max_model_len", "dtype": "dtype", "quantization": "quantization",
               "kv_cache_dtype": "kv_cache_dtype", "enforce_eager": "enforce_eager"}
_HUB_CACHE_FOLDER = re.compile(r"models--([^/]+)--([^/]+)")


def model_candidates(model: str | None) -> list[str]:
    """Names to look the log's model up by, most specific first: as printed, the repo id inside a hub cache path
    (`.../models--Qwen--Qwen1.5-7B-Chat`), the path's last two folders (`.../Qwen/Qwen2.5-7B`), its last folder."""
    if not model:
        return []
    found = [model]
    hub = _HUB_CACHE_FOLDER.search(model)
    if hub:
        found.append(f"{hub.group(1)}/{hub.group(2)}")
    parts = [p for p in model.rstrip("/").split("/") if p and p not in (".", "..")]
    if "/" in model and len(parts) >= 2 and not model.lower().endswith(".gguf"):
        found.append(f"{parts[-2]}/{parts[-1]}")
    if parts and "/" in model:
        found.append(parts[-1])
    return list(dict.fromkeys(found))


def _flag(key: str, value: object) -> str | None:
    if value is None or value is False or value == "auto" and key != "dtype":
        return None
    if value == [] or value == {}:  # a printed default (0.10's Namespace shows cuda_graph_sizes=[] when unset)
        return None
    if value is True:
        return f"--{key.replace('_', '-')}"
    # a dict (vLLM's non-default args print --speculative-config as a Python literal) goes back as the JSON the
    # flag takes; str() would give its repr, single-quoted
    text = json.dumps(value, default=str) if isinstance(value, dict) else str(value)
    if text.startswith("torch."):  # vLLM's config line prints the resolved torch dtype
        text = text[len("torch."):]
    return f"--{key.replace('_', '-')}={text}"


# Lines only one engine generation prints (patterns.py says which releases and runner each comes from)
V0_ONLY = ("vllm-v0-weights", "vllm-v0-weights-mb", "vllm-can-use", "vllm-profile-terms", "vllm-v0-blocks",
           "vllm-kv-below-len")
# (not "vllm-ready" nor "vllm-v1-weights": V0's llm_engine.py prints 'init engine ... took' and its
# model_runner.py 'Model loading took' by 0.9, vllm#18993)
V1_ONLY = ("vllm-v1-blocks", "vllm-v1-available-kv", "vllm-v1-kv-tokens", "vllm-v1-kv-below-len",
           "vllm-v1-kv-below-len-gb",
           "vllm-kv-tokens-one-line", "vllm-free-below-engine-budget")  # the last two: 0.30 and 0.33 on, V1 only


def engine_generation(log: ObservedLog) -> str | None:
    """"v0" or "v1" when the log's own lines say which vLLM engine ran (both, or neither: None). A release that
    defaults to V1 still ran V0 under VLLM_USE_V1=0 or a fallback, and its profile is V0's."""
    if log.engine != P.VLLM:
        return None
    v0 = any(pattern in log.matched for pattern in V0_ONLY)
    v1 = any(pattern in log.matched for pattern in V1_ONLY)
    return "v0" if v0 and not v1 else "v1" if v1 and not v0 else None


def generation_env(log: ObservedLog) -> dict[str, str]:
    """The VLLM_USE_V1 value that makes the estimate run the engine generation the log shows (the estimate
    applies it only in the releases where vLLM read it: profiles.VLLM_V0_FALLBACKS, VLLM_V1_OPT_IN_SINCE)."""
    generation = engine_generation(log)
    return {"VLLM_USE_V1": "0" if generation == "v0" else "1"} if generation else {}


def sampler_env(log: ObservedLog, version: str | None = None) -> dict[str, str]:
    """The VLLM_USE_FLASHINFER_SAMPLER value that makes the estimate sample as the log says the engine did (its
    FlashInfer line, or the PyTorch-native fallback line). A log that says neither, of a release whose default
    depends on the install (profiles.VllmSamplerRow.install_dependent: 0.9.0-0.11.0), is taken as the install
    that sorts: the larger profile, so an unknown install never makes a refused start look like a fit."""
    if log.engine != P.VLLM:
        return {}
    printed = printed_sampler_env(log)
    if printed or "vllm-sampler-flashinfer" in log.matched:  # both lines: neither is assumed over the other
        return printed
    # no version read: the release the estimate then takes (profiles.DEFAULT_VERSIONS), which may be such a release
    return unknown_install_env(version)


def printed_sampler_env(log: ObservedLog) -> dict[str, str]:
    """The sampler path the log's own line names (one of the two lines, not both), nothing assumed."""
    flashinfer = "vllm-sampler-flashinfer" in log.matched
    native = "vllm-sampler-native" in log.matched
    if log.engine != P.VLLM or flashinfer == native:
        return {}
    return {"VLLM_USE_FLASHINFER_SAMPLER": "1" if flashinfer else "0"}


def unknown_install_env(version: str | None) -> dict[str, str]:
    """The sampler environment of an install gsg knows nothing of: the sort (VLLM_USE_FLASHINFER_SAMPLER=0) where
    the release's path depends on the install (profiles.VllmSamplerRow.install_dependent), else the release's own."""
    return {"VLLM_USE_FLASHINFER_SAMPLER": "0"} if MP.vllm_sampler_row(version).install_dependent else {}


MXFP4_LINES = {"vllm-mxfp4-triton": "triton", "vllm-mxfp4-marlin": "marlin", "vllm-fp4-marlin": "marlin"}


def kernel_notes(log: ObservedLog, booked: str | None) -> list[str]:
    """Where the log names the MXFP4 MoE kernel vLLM ran and the estimate booked another (the image held
    triton_kernels or not, against GPUStack's image of the release: profiles.VLLM_GPUSTACK_IMAGES), a note that
    says so: the experts' padding, and so the weights and the pool, then differ by the kernel's shapes."""
    printed = {kernel for pattern, kernel in MXFP4_LINES.items() if pattern in log.matched}
    if log.engine != P.VLLM or booked is None or len(printed) != 1 or booked in printed:
        return []
    ran = printed.pop()
    return [f"the log says vLLM ran the {ran} MXFP4 MoE kernel, the estimate booked {booked} (GPUStack's image of "
            f"this release): the experts' padding differs by the kernel (profiles.MXFP4_PADDING)"]


# the lines that print capture_model's free-memory drop (the advice line of 0.10.2 quotes the same figure)
GRAPH_TOOK_LINES = ("vllm-graphs-took", "vllm-kv-memory-advice-0.10")


def graph_took_notes(log: ObservedLog, version: str | None) -> list[str]:
    """A note where the log's graph figure is capture_model's drop in free memory at a release that reads the free
    memory before the first capture empties torch's cache (profiles.VLLM_GRAPH_TOOK_MEASURE): that figure is the
    graphs' memory less the cache the warm-ups left, a lower bound, not what the graphs hold at the warm-up."""
    took = any(pattern in log.matched for pattern in GRAPH_TOOK_LINES)
    if log.engine != P.VLLM or not took or "vllm-graphs-pool" in log.matched or engine_generation(log) == "v0":
        return []
    if MP.row_for("vllm", MP.VLLM_GRAPH_TOOK_MEASURE, version) != "net_of_cache":
        return []
    return [f"vLLM {version} measures the graphs' memory before the first capture empties torch's cache "
            "(gpu_model_runner.py capture_model, @v0.10.1 to @v0.17.0): the logged figure is the graphs' memory "
            "less the cache the warm-ups left (kernel_warmup's FlashInfer autotune forward on compute capability "
            ">= 9.0), a lower bound of what the graphs hold, negative where that cache was larger "
            "(profiles.VLLM_GRAPH_TOOK_MEASURE)"]


# custom all-reduce's lines for a TP group without P2P between its ranks (profiles.NCCL_P2P_DISABLE_ENV)
NO_P2P_LINES = ("vllm-custom-ar-no-p2p", "vllm-custom-ar-multi-node")


def p2p_env(log: ObservedLog) -> dict[str, str]:
    """NCCL_P2P_DISABLE=1 where the log says the ranks reach each other without P2P (no P2P capability, or ranks
    on different nodes): NCCL runs without its P2P transport there, as that switch makes it, whatever the GPU
    name says about NVLink."""
    if log.engine == P.VLLM and any(pattern in log.matched for pattern in NO_P2P_LINES):
        return {MP.NCCL_P2P_DISABLE_ENV: "1"}
    return {}


def engine_env(log: ObservedLog, version: str | None = None) -> dict[str, str]:
    """The deployment environment the log's own lines imply: the engine generation, the sampler path and a group
    without P2P."""
    return {**generation_env(log), **sampler_env(log, version), **p2p_env(log), **output_layer_env(log)}


def printed_env(log: ObservedLog) -> dict[str, str]:
    """The part of engine_env the log's lines show, not assume (a silent sampler is an assumption): it wins over
    an environment the user gives, as a printed argument wins over the command line."""
    return {**generation_env(log), **printed_sampler_env(log), **p2p_env(log), **output_layer_env(log),
            **pipeline_env(log)}


def pipeline_env(log: ObservedLog) -> dict[str, str]:
    """llama.cpp's scheduler without pipeline copies, as the log shows it (profiles.LLAMACPP_PIPELINE_ENV): a retry
    without them, or two or more devices' compute buffers after the KV buffers with no "pipeline parallelism
    enabled" line, which llama_context prints between the two whenever it keeps copies. Nothing for an excerpt that
    starts at the compute buffers: the line may have been cut."""
    if log.engine != P.LLAMACPP:
        return {}
    off = {MP.LLAMACPP_PIPELINE_ENV: MP.LLAMACPP_PIPELINE_OFF}
    if log.engine_terms.get(P.PIPELINE_COPIES) == 1:
        return off
    kv, compute = log.matched.get(P.LLAMACPP_KV_BUFFER), log.matched.get(P.LLAMACPP_COMPUTE_BUFFER)
    devices = [name for name, terms in log.gpu_ranks().items() if P.COMPUTE_BUFFER in terms]
    shown = P.PIPELINE_COPIES in log.engine_terms or P.LLAMACPP_PIPELINE_ENABLED in log.matched
    if shown or kv is None or compute is None or kv > compute or len(devices) < 2:
        return {}
    return off


def output_layer_env(log: ObservedLog) -> dict[str, str]:
    """Where -ngl put llama.cpp's output layer, as the log's load_tensors lines show it
    (profiles.LLAMACPP_OUTPUT_LAYER_ENV): the output line before the repeating one is the output-first placement of
    llama.cpp PR #18148, after it the older one; a repeating line alone with layers offloaded is the older one too
    (the newer prints the output line first whenever it offloads any). Nothing when the log shows neither, or only
    the output line (an excerpt cut after it, or one that starts there): the build decides."""
    if log.engine != P.LLAMACPP:
        return {}
    output = log.matched.get(P.LLAMACPP_OFFLOADING_OUTPUT)
    repeating = log.matched.get(P.LLAMACPP_OFFLOADING_REPEATING)
    offloaded = log.terms().get(P.LAYERS_OFFLOADED)
    if repeating is None or (output is None and not (isinstance(offloaded, int) and offloaded > 0)):
        return {}
    first = output is not None and output < repeating
    return {MP.LLAMACPP_OUTPUT_LAYER_ENV: MP.LLAMACPP_OUTPUT_LAYER_FIRST if first else MP.LLAMACPP_OUTPUT_LAYER_LAST}


def output_layer_notes(log: ObservedLog, version: str | None) -> list[str]:
    """A note where the log's placement (output_layer_env) is not the one the estimate's build would have had and
    the run offloaded part of the model (on full offload both put every layer on the GPUs): ollama's bundled
    llama.cpp, a build between llama.cpp PR #18148 and the first one gsg counts it from."""
    shown = output_layer_env(log).get(MP.LLAMACPP_OUTPUT_LAYER_ENV)
    terms = log.terms()
    offloaded, total = terms.get(P.LAYERS_OFFLOADED), terms.get(P.LAYERS_TOTAL)
    partial = isinstance(offloaded, int) and isinstance(total, int) and offloaded < total
    if shown is None or version is None or not partial:
        return []
    build = version.removesuffix(" (assumed)")
    by_build = MP.arithmetic_release("llamacpp", build) >= MP.known_version(MP.LLAMACPP_OUTPUT_FIRST_SINCE)
    if by_build == (shown == MP.LLAMACPP_OUTPUT_LAYER_FIRST):
        return []
    order = "before the repeating layers (llama.cpp PR #18148's placement)" if shown == MP.LLAMACPP_OUTPUT_LAYER_FIRST \
        else "after the repeating layers (the placement before llama.cpp PR #18148)"
    return [f"the log's load lines offload the output layer {order}: -ngl's layers are placed as the log shows, not "
            f"as {build} places them ({MP.LLAMACPP_OUTPUT_LAYER_ENV}={shown})"]


def foreign_at_start(log: ObservedLog, total: int, tp: int, pp: int, gpu_name: str) -> int:
    """Memory other processes held on the GPU when an SGLang log's instance started, as the log shows it: SGLang
    sizes its pool from the free memory it measures before the weights ("Load weight begin. avail mem"), so a
    desktop or another process on the card shrinks the pool, and validate counts such memory as foreign. Here it is
    what that measurement lacks against a clean GPU (total less gsg's own start-up figure for the layout); 0 when
    the log does not print it, for vLLM, and where the card had all it should (llama.cpp: llamacpp_foreign_at_start)."""
    if log.engine == P.LLAMACPP:
        return llamacpp_foreign_at_start(log, total)
    terms = log.terms()
    free = terms.get(P.FREE_BEFORE_LOAD)
    if free is None and isinstance(terms.get(P.FREE_AFTER_LOAD), int) and isinstance(terms.get(P.WEIGHTS), int):
        free = terms[P.FREE_AFTER_LOAD] + terms[P.WEIGHTS]  # a log without "Load weight begin": the same, after
    if log.engine != P.SGLANG or not isinstance(free, int) or free <= 0:
        return 0
    return max(0, total - sglang_start_up(tp, pp, gpu_name) - free)


# The llama.cpp devices whose "using device X (...) - N MiB free" is the driver's free memory of a card of its own
# (ggml_backend_dev_memory at the load: cudaMemGetInfo for CUDA and HIP, the heap budget of VK_EXT_memory_budget for
# Vulkan): Metal's and a CPU's figure is a share of the host's memory, not a card another process took part of
_LLAMACPP_CARD_DEVICES = re.compile(r"(?:CUDA|ROCm|MUSA|Vulkan)\d+$")


def llamacpp_foreign_at_start(log: ObservedLog, total: int) -> int:
    """Memory other processes held when a llama.cpp instance loaded: llama_model_load_from_file_impl prints each
    device's free memory once the backend is up (its own context already taken), so a card that had less than its
    size less gsg's platform footprint held someone else's memory. The least of the devices that print it: one size
    is given for every GPU, and a larger card beside a smaller one would otherwise look full."""
    held = [max(0, total - MP.LLAMACPP_PLATFORM_FOOTPRINT - int(terms[P.FREE_BEFORE_LOAD]))
            for name, terms in log.gpu_ranks().items()
            if _LLAMACPP_CARD_DEVICES.match(name) and isinstance(terms.get(P.FREE_BEFORE_LOAD), int)]
    return min(held) if held else 0


def deployment_env(log: ObservedLog, given: dict[str, str], version: str | None = None) -> dict[str, str]:
    """The environment an estimate of the logged deployment runs with: what the log assumes, then the user's
    (the deployment's own env, e.g. VLLM_USE_FLASHINFER_SAMPLER=0 of a thread's command), then what it prints."""
    return {**engine_env(log, version), **given, **printed_env(log)}


def _same_at_two_places(given: object, printed: float) -> bool:
    try:
        return given is not None and round(float(given), 2) == round(printed, 2)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


# llama_model_ftype_name's sizes (src/llama-model-loader.cpp): the K-quant mixes by their suffix
_GGUF_MIX_SIZES = {"small": "_s", "medium": "_m", "large": "_l"}


def logged_gguf_quantization(log: ObservedLog) -> str | None:
    """The weights format a llama.cpp log names for its GGUF ("Q4_K - Medium" -> q4_k_m), where gsg sizes that
    file type (quant.GGUF_FILE_TYPE_BPW); a 16- or 32-bit file or a type gsg does not size gives None."""
    from gpustack_guard.core.memory.quant import GGUF_FILE_TYPE_BPW

    text = str(log.args.get("gguf_file_type") or "").strip().lower()
    text = text.removeprefix("mostly ").strip()
    base, _, rest = text.partition(" - ")
    rest = rest.strip()
    if base == "q2_k" and rest in ("", "medium"):  # Q2_K's own name says Medium; Q2_K_S is "Small"
        name = "q2_k"
    elif rest in _GGUF_MIX_SIZES and base.endswith("_k"):
        name = base + _GGUF_MIX_SIZES[rest]
    else:  # Q6_K, Q8_0, and the i-quants with their bits per weight after the dash
        name = base
    if name in ("f16", "bf16", "f32") or name not in GGUF_FILE_TYPE_BPW:
        return None
    return name


def _llamacpp_args(log: ObservedLog, version: str | None = None) -> dict[str, object]:
    """llama.cpp's flags as its log shows them (backend_args), spelled as the build reads them."""
    args: dict[str, object] = {}
    terms = log.terms()
    if P.KV_TOKENS in terms:
        args["ctx_size"] = terms[P.KV_TOKENS]
    if P.SEQUENCES in terms:
        args["parallel"] = terms[P.SEQUENCES]
    if P.LAYERS_OFFLOADED in terms:
        args["n_gpu_layers"] = terms[P.LAYERS_OFFLOADED]
    # the cache the log says it built (the later first mention wins, a restart's): a split one pads each
    # slot's cells, a unified one only the total
    unified, split = log.matched.get("llamacpp-kv-unified"), log.matched.get("llamacpp-kv-split")
    if unified is not None or split is not None:
        key = "no_kv_unified" if (split or 0) > (unified or 0) else "kv_unified"
        args[key] = True
    if "llamacpp-swa-full" in log.matched:  # a window cache of the full cache's cells
        args["swa_full"] = True
    # split buffers: one copy of the graph inputs, --fit pinned (row); Meta buffers: each GPU a share (tensor)
    if log.args.get("split_mode") in ("row", "tensor"):
        args["split_mode"] = log.args["split_mode"]
    if log.args.get("kv_unified_per_slot"):  # each slot's cap: the slot length of a pool the n_ctx line gives
        args["kv_unified_per_slot"] = int(str(log.args["kv_unified_per_slot"]))
    if log.args.get("override_tensor"):  # weights moved by buffer overrides: every moved tensor's name and buffer
        args["override_tensor"] = exact_overrides(str(log.args["override_tensor"]))
    # the context's printed batch sizes and flash attention (auto is the default gsg counts as on)
    for name, key in (("n_batch", "batch_size"), ("n_ubatch", "ubatch_size")):
        if isinstance(log.args.get(name), int):
            args[key] = log.args[name]
    # the cache's types as its line prints them: f16 is the default and is not passed
    for key in ("cache_type_k", "cache_type_v"):
        if log.args.get(key) not in (None, "f16"):
            args[key] = log.args[key]
    flash = str(log.args.get("flash_attn", "auto")).lower()
    if flash in ("enabled", "1", "disabled", "0"):
        on = flash in ("enabled", "1")
        if MP.arithmetic_release("llamacpp", version) < MP.known_version(MP.LLAMACPP_FLASH_AUTO_SINCE):
            if on:  # -fa is a switch before b6325: on is the bare flag, off is leaving it out
                args["flash_attn"] = True
        else:
            args["flash_attn"] = "on" if on else "off"
    return args


def exact_overrides(moved: str) -> str:
    """The log's moved tensors ("name=buffer,...") as -ot pairs that match each name and nothing else: the loader
    matches a pattern anywhere in a name, so "output.weight" would also take every block's attn_output.weight."""
    pairs = (pair.rpartition("=") for pair in moved.split(","))
    return ",".join(f"^{re.escape(name)}$={buffer}" for name, _, buffer in pairs)


def backend_args(log: ObservedLog, version: str | None = None) -> list[str]:
    """The flags the engine ran with that change memory, as gsg estimate takes them for the release `version`."""
    args: dict[str, object] = {}
    if log.engine == P.VLLM:
        for source, key in VLLM_CONFIG.items():
            if source in log.config:
                args[key] = log.config[source]
        args.update({key: log.args[key] for key in VLLM_ARGS if key in log.args})
        if any(pattern in log.matched for pattern in NO_P2P_LINES):  # the log shows custom all-reduce off
            args["disable_custom_all_reduce"] = True
        if "vllm-attention-backend-flashinfer" in log.matched and args.get("attention_backend") is None:
            args["attention_backend"] = "FLASHINFER"  # the backend the platform picked (its workspace: graphs)
        terms = log.terms()
        printed = terms.get(P.UTILIZATION)
        if printed is not None and not _same_at_two_places(args.get("gpu_memory_utilization"), printed):
            # the fraction the engine printed it used, unless it is the args line's own value rounded to the
            # profile line's two places (worker.py "gpu_memory_utilization ({:.2f})"): the full one sizes the budget
            args["gpu_memory_utilization"] = printed
        if args.get("max_model_len") is None and P.MAX_MODEL_LEN in terms:  # the length it ran with
            args["max_model_len"] = terms[P.MAX_MODEL_LEN]
    elif log.engine == P.SGLANG:
        args.update({key: log.args[key] for key in SGLANG_ARGS if key in log.args})
        draft = log.args.get("speculative_draft_model_path")
        # SGLang sets the draft path to the model's own for DeepSeek/GLM MTP: only another checkpoint is a draft of
        # its own (engines/sglang_draft sizes the MTP one)
        if draft not in (None, "None", "") and draft != log.args.get("model_path"):
            args["speculative_draft_model_path"] = draft
        if "cuda_graph_max_bs_decode" in log.args:  # its name from 0.5.14 (profiles.SGLANG_GRAPH_ARGS); the old
            args.pop("cuda_graph_max_bs", None)  # one is refused from 0.5.20
            args["cuda_graph_max_bs_decode"] = log.args["cuda_graph_max_bs_decode"]
        if args.get("context_length") is None and P.MAX_MODEL_LEN in log.terms():
            args["context_length"] = log.terms()[P.MAX_MODEL_LEN]
    elif log.engine == P.LLAMACPP:
        args.update(_llamacpp_args(log, version))
    flags = [_flag(key, value) for key, value in args.items()] + _vllm_switches(log)
    return [flag for flag in flags if flag]


def _vllm_switches(log: ObservedLog) -> list[str | None]:
    """The printed VLLM_SWITCHES, on or off (an unprinted one keeps the release's default)."""
    if log.engine != P.VLLM:
        return []
    return [on if log.args[key] else off for key, (on, off) in VLLM_SWITCHES.items()
            if isinstance(log.args.get(key), bool)]


def estimated_terms(est: Estimate) -> dict[str, int | float]:
    """The estimate's side: its budget rows (the names and figures `gsg estimate --output json` shows) and the
    engine-level figures beside them."""
    # every engine's coarse terms first (recorded vectors hold them), then its budget rows by name
    terms: dict[str, int | float] = {
        P.GPU_MEMORY: est.gpu_total, P.REQUESTED: est.requested, P.WEIGHTS: est.weights,
        P.ACTIVATION: est.activation, P.NON_TORCH: est.non_torch, P.CUDA_GRAPHS: est.cuda_graphs,
        P.KV_CACHE: est.kv_cache, P.KV_TOKENS: est.kv_capacity_tokens}
    terms.update({row.term: row.value for row in budget_terms(est)})
    if est.engine == "vLLM" and est.extra.get("cuda_graphs_in_budget") and MP.arithmetic_release(
            "vllm", est.version) >= MP.known_version(MP.VLLM_LOGGED_ACTIVATION_HOLDS_GRAPHS_SINCE):
        terms[P.ACTIVATION] = est.activation + est.cuda_graphs  # the graph estimate, as the worker's line counts it
    terms.update({P.MAX_MODEL_LEN: est.max_model_len, P.MAX_CONCURRENCY: round(est.max_concurrency, 2)})
    if not est.compute_buffer_per_gpu:
        terms.pop(P.COMPUTE_BUFFER, None)
    if est.extra.get("prefill_graph_reserve"):  # SGLang 0.5.10+: the reserve it keeps for its prefill graphs
        terms[P.PREFILL_GRAPHS] = est.extra["prefill_graph_reserve"]
    mamba = est.extra.get("mamba_pool") if est.engine == "SGLang" else None
    if isinstance(mamba, dict) and "speculative_state_bytes" in mamba:  # the verify buffers beside the slots
        terms[P.MAMBA_SPECULATIVE] = mamba["speculative_state_bytes"]
    if est.engine == "SGLang" and "multimodal_kv_reserve" in est.extra:  # 0.5.18+, a multimodal model
        terms[P.MM_KV_RESERVE] = est.extra["multimodal_kv_reserve"]
    counts = est.extra.get("cuda_graph_counts")
    if est.engine == "vLLM" and counts:  # the capture plan, as the capture bars and the profiler's line print it
        terms.update({P.GRAPHS_PIECEWISE: counts["piecewise"], P.GRAPHS_FULL: counts["full"]})
        if est.extra.get("cuda_graph_largest") is not None:
            terms[P.MAX_CAPTURE_SIZE] = est.extra["cuda_graph_largest"]
    encoder = est.extra.get("encoder_profile") if est.engine == "vLLM" else None
    if isinstance(encoder, dict) and encoder.get("items"):  # the dummy items profile_run encodes, and their budget
        terms.update({P.ENCODER_BUDGET: encoder["budget"], P.ENCODER_ITEMS: encoder["items"]})
    # the block a hybrid's state raised: Gated DeltaNet or Mamba-2 layers (core/memory/gated_delta.py, mamba2.py)
    gated = (est.extra.get("gated_delta") or est.extra.get("mamba2")) if est.engine == "vLLM" else None
    if isinstance(gated, dict) and gated.get("attention_block_size"):
        terms[P.ATTENTION_BLOCK] = gated["attention_block_size"]
    if "pipeline_copies" in est.extra:
        terms[P.PIPELINE_COPIES] = est.extra["pipeline_copies"]
    return terms


_DEVICE_NAME = re.compile(r"^(\D+?)(\d+)$")  # CUDA0, ROCm3, Vulkan1, MTL0, SYCL0: a backend and its index


def same_device_terms(log: ObservedLog, est: Estimate, estimated: dict) -> dict:
    """llama.cpp's terms of the device the log binds on, not of the estimate's fullest one: a log without its model
    buffers binds on the device with the most KV and compute (llama.cpp#12369: 13 layers on ROCm0-3, 12 on ROCm4,
    whose output layer makes it the estimate's fullest), and comparing two devices' caches is not a measurement.
    The log's devices in index order stand for the estimate's in split order when one backend names them all and
    their count is the estimate's (an unused iGPU's Vulkan0 or an RPC server leaves the comparison as it was)."""
    per_device = est.extra.get("per_device")
    binding = log.binding_rank()
    if log.engine != P.LLAMACPP or not isinstance(per_device, list) or binding is None:
        return estimated
    ranks = log.gpu_ranks()
    named = [m for m in map(_DEVICE_NAME.match, ranks) if m is not None]
    if not named or len(named) != len(ranks) or len({m.group(1) for m in named}) != 1 \
            or len(named) != len(per_device):
        return estimated
    order = sorted(named, key=lambda m: int(m.group(2)))
    device = per_device[[m.group(0) for m in order].index(binding)]
    return {**estimated, P.KV_CACHE: device["kv"], P.WEIGHTS: device["weights"], P.ACTIVATION: device["compute"],
            **({P.COMPUTE_BUFFER: device["compute"]} if P.COMPUTE_BUFFER in estimated else {})}


@frozen_value(eq=True, repr=True)
class Delta:
    term: str
    observed: int | float | None
    estimated: int | float | None

    @property
    def difference(self) -> int | float | None:
        if self.observed is None or self.estimated is None:
            return None
        diff = self.estimated - self.observed
        return round(diff, 2) if isinstance(diff, float) else diff

    @property
    def percent(self) -> float | None:
        """The estimate's error relative to what the engine logged, in percent: positive where the estimate is
        above the log, also against a negative logged figure (a graph capture that gave memory back)."""
        if self.difference is None or not self.observed:
            return None
        return round(100.0 * self.difference / abs(self.observed), 1)

    def as_json(self) -> dict:
        return {"term": self.term, "observed": self.observed, "estimated": self.estimated,
                "difference": self.difference, "percent": self.percent}


# Terms shown only when the log printed them: a count the estimate always has, which alone says nothing
SHOWN_WHEN_LOGGED = frozenset({P.GRAPHS_PIECEWISE, P.GRAPHS_FULL, P.MAX_CAPTURE_SIZE, P.ATTENTION_BLOCK,
                               P.ENCODER_BUDGET, P.ENCODER_ITEMS})


def deltas(observed: dict, estimated: dict) -> list[Delta]:
    """Every compared term either side printed or computed."""
    return [Delta(term, observed.get(term), estimated.get(term)) for term, _, _ in ROWS
            if term in observed or (term in estimated and term not in SHOWN_WHEN_LOGGED)]


def observed_verdict(log: ObservedLog) -> str | None:
    """The engine's own verdict: fits when it started, its failure's name when it did not, None when the log
    stops before either."""
    if log.started:
        return FITS
    if log.failure_kind:
        return FAILURE_VERDICT.get(log.failure_kind, log.failure_kind)
    return None


def reasons(log: ObservedLog, estimated_verdict: str, compared: list[Delta], tolerance_percent: float) -> list[str]:
    """Why verify fails: the verdicts differ, or KV capacity is off by more than the tolerance."""
    found = []
    seen = observed_verdict(log)
    if seen == FITS and estimated_verdict != FITS:
        found.append(f"the engine started, the estimate says {estimated_verdict}")
    elif seen == P.ENGINE_ERROR:  # an assertion, a dead worker, a device error: it says nothing of the estimate
        found.append(f"the engine crashed at start-up for a reason other than memory (line {log.failure_line:,}): no "
                     f"memory verdict to hold the estimate's ({estimated_verdict}) against")
    elif seen is not None and seen != FITS and estimated_verdict == FITS:
        found.append(f"the engine failed at start-up ({log.failure_kind}), the estimate says fits")
    kv = next((d for d in compared if d.term == P.KV_TOKENS), None)
    if seen == FITS and kv is not None and kv.percent is not None and abs(kv.percent) > tolerance_percent:
        found.append(f"KV capacity is off by {kv.percent:+.1f} % ({kv.estimated:,} estimated, {kv.observed:,} "
                     f"logged; tolerance {tolerance_percent:g} %)")
    return found
