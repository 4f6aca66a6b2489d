"""One entry point: engine family + flags + GPUs -> Estimate. Translates backend flags into engine configs."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from gpustack_guard.core import args as A
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang, sglang_fraction
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.memory.estimate import Estimate, LayoutUnsupported, UnsupportedModel
from gpustack_guard.core.memory.facts import GATED_DELTA_SHAPE, MAMBA2_SHAPE, ModelFacts
from gpustack_guard.core.memory.kv import kv_element_bytes
from gpustack_guard.core.memory.served_dtype import served_dtype
from gpustack_guard.core.memory.weights import weight_layout
from gpustack_guard.core.secrets import MASK
from gpustack_guard.core.units import GiB
from gpustack_guard.core.versions import parse_version

# llama.cpp's engine module (~1.7 ms of import, its tables) loads at the first llama.cpp spec, not for every run
# (issue 34, tenth round); tests/architecture/test_import_budget.py watches it
if TYPE_CHECKING:
    from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig
    from gpustack_guard.core.memory.lora import LoraRequest

ENGINES = ("vllm", "sglang", "llamacpp")
ONLINE_QUANT = {"fp8": "fp8", "bitsandbytes": "bitsandbytes"}


class Policy(Protocol):
    """What the arithmetic reads of a spec's `guard.policy` (spec.model.Policy has these fields)."""

    cuda_graph_reserve: int | None  # bytes per GPU; replaces the CUDA-graph estimate
    activation_margin: float  # extra fraction on the activation estimate
    assume_gpustack_max_model_len: bool  # an unset --max-model-len as GPUStack's worker injects it
    platform_footprint: int | None  # llama.cpp: the runtime's own VRAM per GPU

    def __hash__(self) -> int: ...  # _estimate's lru_cache keys on it (spec.model.Policy is a frozen record)


def _flag(flags: dict, key: str) -> bool:
    return key in flags and A.normal_value(flags[key]) != "false"


def vllm_config(flags: dict, policy: Policy, env: dict | None = None, version: str | None = None) -> VllmConfig:
    """Raises FlagValueError for a value vLLM would refuse: never a default in its place."""
    env = env or {}

    def value(key: str):
        return EF.read(flags, key, "vllm", version)

    max_model_len = value("max-model-len")
    return VllmConfig(
        gpu_memory_utilization=value("gpu-memory-utilization"),
        # `auto` (-1): the longest length that fits, which the arithmetic estimates when the length is unset
        max_model_len=None if max_model_len == EF.AUTO_MAX_MODEL_LEN else max_model_len,
        max_num_seqs=value("max-num-seqs"),
        max_num_batched_tokens=value("max-num-batched-tokens"),
        tensor_parallel_size=value("tensor-parallel-size") or 1,
        pipeline_parallel_size=value("pipeline-parallel-size") or 1,
        kv_cache_dtype=flags.get("kv-cache-dtype"),
        # argparse nargs='+' of str: the items as given, split on whitespace only (kv_formats.boundary_layers)
        kv_skip_layers=tuple(str(flags.get("kv-cache-dtype-skip-layers") or "").split()),
        block_size=value("block-size"),
        enforce_eager=_flag(flags, "enforce-eager"),
        enable_chunked_prefill=(None if "enable-chunked-prefill" not in flags and "no-enable-chunked-prefill"
                                not in flags else _flag(flags, "enable-chunked-prefill")),
        kv_cache_memory=value("kv-cache-memory"),
        extensible_kv_cache=(None if "enable-extensible-kv-cache" not in flags and "no-enable-extensible-kv-cache"
                             not in flags else _flag(flags, "enable-extensible-kv-cache")),
        num_gpu_blocks_override=value("num-gpu-blocks-override"),
        cuda_graph_reserve=policy.cuda_graph_reserve,
        activation_margin=policy.activation_margin,
        gpustack_max_model_len=policy.assume_gpustack_max_model_len,
        expert_parallel=_flag(flags, "enable-expert-parallel"),
        distributed_executor_backend=flags.get("distributed-executor-backend"),
        num_scheduler_steps=value("num-scheduler-steps"),
        pp_layer_partition=env.get("VLLM_PP_LAYER_PARTITION"),
        use_v1_env=env.get("VLLM_USE_V1"),
        fused_moe_chunk_size=env.get("VLLM_FUSED_MOE_CHUNK_SIZE"),
        flashinfer_sampler_env=env.get("VLLM_USE_FLASHINFER_SAMPLER"),
        v2_runner_env=env.get("VLLM_USE_V2_MODEL_RUNNER"),
        chunked_local_hybrid_env=env.get(P.VLLM_CHUNKED_LOCAL_HYBRID_ENV),
        force_fp8_marlin_env=env.get(P.VLLM_FP8_MARLIN_ENV),
        disable_sliding_window=_flag(flags, "disable-sliding-window"),
        cpu_offload_bytes=int((value("cpu-offload-gb") or 0) * GiB),
        lora=vllm_lora_request(flags, value),
        disable_custom_all_reduce=_flag(flags, "disable-custom-all-reduce"),
        nccl_p2p_disabled=_nccl_number(env.get(P.NCCL_P2P_DISABLE_ENV)) not in (None, 0),
        nccl_nvls_disabled=_nccl_number(env.get(P.NCCL_NVLS_ENABLE_ENV)) == 0,
        mamba_cache_dtype=_text(flags.get("mamba-cache-dtype")),
        mamba_ssm_cache_dtype=_text(flags.get("mamba-ssm-cache-dtype")),
        mamba_cache_mode=_vllm_mamba_cache_mode(flags, version),
        mamba_block_size=value("mamba-block-size"),
        enable_prefix_caching=(None if "enable-prefix-caching" not in flags and "no-enable-prefix-caching" not in flags
                               else _flag(flags, "enable-prefix-caching")),
        async_scheduling=(None if "async-scheduling" not in flags and "no-async-scheduling" not in flags
                          else _flag(flags, "async-scheduling")),
        use_replayssm=_flag(flags, "use-replayssm"),
        gdn_prefill_backend=gdn_prefill_backend(flags.get("additional-config")),
        disable_hybrid_kv_cache_manager=_flag(flags, "disable-hybrid-kv-cache-manager") or
        "kv-transfer-config" in flags or "kv-events-config" in flags,
        speculative_flag=_speculative_flag(flags),
        **speculative_settings(flags),
        mm_image_limit=mm_flag_limit(flags, "image"),
        mm_video_limit=mm_flag_limit(flags, "video"),
        mm_max_pixels=mm_max_pixels(flags.get("mm-processor-kwargs")),
        skip_mm_profiling=_flag(flags, "skip-mm-profiling"),
        mm_encoder_tp_mode=mm_encoder_tp_mode(flags, version),
        **capture_settings(flags, value("max-cudagraph-capture-size"), version),
        performance_mode=performance_mode(flags, version),
        attention_backend=_text(flags.get("attention-backend")),
    )


def mm_encoder_tp_mode(flags: dict, version: str | None) -> str:
    """--mm-encoder-tp-mode as the release's argparse takes it (profiles.VLLM_MM_ENCODER_TP_MODES): one of its
    choices, exactly as spelled; refused before the release that added it. A version gsg cannot read gets the
    newest row's choices. The deprecated --enable-multimodal-encoder-data-parallel sets "data" where the release's
    config does so (0.10.2-0.12.x)."""
    key = "mm-encoder-tp-mode"
    readable = version is None or parse_version(version) is not None
    release = P.arithmetic_version("vllm", version)
    row = P.vllm_encoder_tp_mode_row(P.known_version(release)) if readable else P.VLLM_MM_ENCODER_TP_MODES[-1]
    switched = row.data_switch and _flag(flags, "enable-multimodal-encoder-data-parallel")
    if key not in flags:
        return "data" if switched else P.VLLM_MM_ENCODER_TP_MODE_DEFAULT
    text = flags[key]
    if not row.choices:
        assumed = "" if version is not None else " (gsg's assumed release: pin backend_version)"
        raise EF.FlagValueError(key, _text(text), f"vLLM {release}{assumed} has no --{key} (it exists from "
                                                  f"{P.VLLM_MM_ENCODER_TP_MODE_SINCE})")
    if text is None or text is True or str(text) not in row.choices:
        shown = release if readable else P.VLLM_MM_ENCODER_TP_MODE_SINCE + "+"
        raise EF.FlagValueError(key, _text(text) if text is not True else None,
                                f"vLLM {shown} accepts {', '.join(row.choices)} (argparse choices, case-sensitive)")
    return "data" if switched else str(text)


def performance_mode(flags: dict, version: str | None) -> str:
    """--performance-mode as the release's argparse takes it: one of its choices, exactly as spelled (profiles.
    VLLM_PERFORMANCE_MODES); refused before the release that added it. A version gsg cannot read (a custom tag)
    gets the newest release's choices, so an unreadable tag never turns a valid value into a report."""
    key = "performance-mode"
    if key not in flags:
        return P.VLLM_PERFORMANCE_MODE_DEFAULT
    text = flags[key]
    newest = P.VLLM_PERFORMANCE_MODES[-1]
    readable = version is None or parse_version(version) is not None
    release = P.arithmetic_version("vllm", version)
    row = P.vllm_performance_mode_row(P.known_version(release)) if readable else newest
    if not row.choices:
        assumed = "" if version is not None else " (gsg's assumed release: pin backend_version)"
        raise EF.FlagValueError(key, _text(text), f"vLLM {release}{assumed} has no --{key} (it exists from "
                                                  f"{P.VLLM_PERFORMANCE_MODE_SINCE})")
    if text is None or text is True or str(text) not in row.choices:
        raise EF.FlagValueError(key, _text(text) if text is not True else None,
                                f"vLLM {release if readable else P.VLLM_PERFORMANCE_MODE_SINCE + '+'} accepts "
                                f"{', '.join(row.choices)} (argparse choices, case-sensitive)")
    return str(text)



# vLLM's compilation config: --compilation-config, -O before 0.13 (a JSON object there; -O3 is a level), -cc later
COMPILATION_CONFIG_KEYS = ("compilation-config", "cc", "O")


def compilation_config(flags: dict) -> tuple[str, str, dict] | None:
    """(flag, text, object) of the deployment's compilation config JSON; None when it sets none."""
    for key in COMPILATION_CONFIG_KEYS:
        text = flags.get(key)
        if text is not None and str(text).strip().startswith("{"):
            return key, str(text), _json_object(key, str(text))
    return None


def capture_size_list(key: str, text: str | None, raw: object = None) -> tuple[int, ...]:
    """A list of CUDA-graph capture sizes: a flag's `1 2 4` (argparse nargs='+'), `1,2,4` or `[1, 2, 4]`, or the
    JSON list of the compilation config. Each is a positive whole number, as vLLM's list[int] field requires."""
    items = raw if isinstance(raw, list) else str(text or "").strip().strip("[]").replace(",", " ").split()
    sizes = []
    for item in items:
        try:
            size = item if isinstance(item, int) and not isinstance(item, bool) else int(str(item).strip())
        except ValueError:
            raise EF.FlagValueError(key, text, f"{item!r} is not a whole number") from None
        if not 1 <= size <= P.CAPTURE_SIZE_LIMIT:
            raise EF.FlagValueError(key, text, f"capture sizes are 1 to {P.CAPTURE_SIZE_LIMIT:,} (gsg's limit), "
                                               f"not {size:,}")
        sizes.append(size)
    if not sizes:
        raise EF.FlagValueError(key, text, "needs at least one capture size")
    return tuple(sizes)


def _cudagraph_mode(key: str, text: str, raw: object) -> str:
    name = P.CUDAGRAPH_MODE_NUMBERS.get(raw) if isinstance(raw, int) and not isinstance(raw, bool) else \
        str(raw).strip().upper()
    if name not in P.CUDAGRAPH_MODES:
        raise EF.FlagValueError(key, text, f"cudagraph_mode {raw!r} is none of {', '.join(P.CUDAGRAPH_MODES)}")
    return name


def capture_settings(flags: dict, max_capture_flag: int | None, version: str | None = None) -> dict:
    """The CUDA-graph capture settings of a deployment (VllmConfig's cudagraph_* fields; profiles.
    CAPTURE_SETTINGS_RULES says which release reads which). A list given both as a flag and in the compilation
    config is refused, as vLLM's create_engine_config refuses it ("mutually exclusive"); so are 0.34.0's split
    keys before 0.34.0, or with the deprecated sizes (profiles.VLLM_SPLIT_CAPTURE_KEYS)."""
    settings: dict = {}
    found = compilation_config(flags)
    if found is not None:
        key, text, config = found
        settings.update(split_capture_settings(key, text, config, version))
        if config.get("cudagraph_mode") is not None:
            settings["cudagraph_mode"] = _cudagraph_mode(key, text, config["cudagraph_mode"])
        if config.get("cudagraph_capture_sizes") is not None:
            raw = config["cudagraph_capture_sizes"]
            if not isinstance(raw, list):
                raise EF.FlagValueError(key, text, "cudagraph_capture_sizes is not a list")
            settings["cudagraph_capture_sizes"] = capture_size_list(key, text, raw)
        largest = config.get("max_cudagraph_capture_size")
        if largest is not None:
            if isinstance(largest, bool) or not isinstance(largest, int) or not 1 <= largest <= P.CAPTURE_SIZE_LIMIT:
                raise EF.FlagValueError(key, text, "max_cudagraph_capture_size is not a whole number from 1 to "
                                                   f"{P.CAPTURE_SIZE_LIMIT:,} (gsg's limit)")
            settings["max_cudagraph_capture_size"] = largest
        specialize = config.get("cudagraph_specialize_lora")
        if specialize is not None:
            if not isinstance(specialize, bool):
                raise EF.FlagValueError(key, text, f"cudagraph_specialize_lora {specialize!r} is not true or false")
            settings["cudagraph_specialize_lora"] = specialize
    for flag, field in (("cudagraph-capture-sizes", "cudagraph_capture_sizes"),
                        ("cuda-graph-sizes", "cuda_graph_sizes")):
        if flag in flags:
            if settings.get("cudagraph_capture_sizes") is not None:
                raise EF.FlagValueError(flag, flags[flag], "the compilation config sets cudagraph_capture_sizes "
                                                           "too; vLLM refuses both (mutually exclusive)")
            settings[field] = capture_size_list(flag, flags[flag])
    if max_capture_flag is not None:
        if settings.get("max_cudagraph_capture_size") is not None:
            raise EF.FlagValueError("max-cudagraph-capture-size", str(max_capture_flag), "the compilation config "
                                    "sets max_cudagraph_capture_size too; vLLM refuses both (mutually exclusive)")
        if max_capture_flag > P.CAPTURE_SIZE_LIMIT:
            raise EF.FlagValueError("max-cudagraph-capture-size", str(max_capture_flag),
                                    f"capture sizes are 1 to {P.CAPTURE_SIZE_LIMIT:,} (gsg's limit)")
        settings["max_cudagraph_capture_size"] = max_capture_flag
    legacy = [name for name in ("cudagraph_capture_sizes", "cuda_graph_sizes", "max_cudagraph_capture_size")
              if settings.get(name) is not None]
    split = [name for name, field in P.VLLM_SPLIT_CAPTURE_KEYS.items()
             if settings.get(field) is not None and field != "max_decode_capture_tokens"]
    if legacy and split and found is not None:
        raise EF.FlagValueError(found[0], found[1], f"vLLM {P.VLLM_SPLIT_CAPTURE_SINCE}+ refuses the deprecated "
                                f"{legacy[0]} with {split[0]} (_split_cudagraph_capture_sizes: 'cannot be "
                                f"combined'); set only the prefill/decode keys")
    return settings


def split_capture_settings(key: str, text: str, config: dict, version: str | None) -> dict:
    """0.34.0's prefill/decode capture keys of the compilation config, as VllmConfig fields; refused before 0.34.0,
    whose CompilationConfig forbids keys it does not have."""
    given = [name for name in P.VLLM_SPLIT_CAPTURE_KEYS if config.get(name) is not None]
    if not given:
        return {}
    release = P.arithmetic_version("vllm", version)
    if P.known_version(release) < P.known_version(P.VLLM_SPLIT_CAPTURE_SINCE):
        raise EF.FlagValueError(key, text, f"vLLM {release} has no compilation config key {given[0]} (it comes in "
                                           f"{P.VLLM_SPLIT_CAPTURE_SINCE}; CompilationConfig forbids extra keys)")
    out: dict = {}
    for name in given:
        raw, field = config[name], P.VLLM_SPLIT_CAPTURE_KEYS[name]
        if name.endswith("_sizes"):
            if not isinstance(raw, list):
                raise EF.FlagValueError(key, text, f"{name} is not a list")
            out[field] = capture_size_list(key, text, raw) if raw else ()  # [] captures none
            continue
        least = 1 if name == "max_decode_cudagraph_capture_tokens" else 0
        if isinstance(raw, bool) or not isinstance(raw, int) or not least <= raw <= P.CAPTURE_SIZE_LIMIT:
            raise EF.FlagValueError(key, text, f"{name} is not a whole number from {least} to "
                                               f"{P.CAPTURE_SIZE_LIMIT:,} (gsg's limit)")
        out[field] = raw
    return out


def _nccl_number(value: str | None) -> int | None:
    """NCCL reads its integer switches as numbers: the number set, None when unset, empty or text that is not a
    number (NCCL's default then). NCCL_P2P_DISABLE is on for any number but 0, NCCL_NVLS_ENABLE off only at 0."""
    try:
        return int(str(value).strip()) if value is not None else None
    except ValueError:
        return None


def _json_object(key: str, text: str) -> dict:
    import json

    from gpustack_guard.core.json_depth import nests_deeper

    try:
        if nests_deeper(text):  # gsg's own limit: json's depth differs by Python release
            raise ValueError
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting past the C scanner's depth
        raise EF.FlagValueError(key, text, "not a JSON object") from None
    if not isinstance(value, dict):
        raise EF.FlagValueError(key, text, "not a JSON object")
    return value


def gdn_prefill_backend(text) -> str | None:
    """--additional-config's gdn_prefill_backend as qwen_gdn_linear_attn.py@v0.33.0 reads it (stripped, lower
    case); None when unset. Other additional-config keys are not gsg's to judge, so only this one is parsed."""
    if not isinstance(text, str) or "gdn_prefill_backend" not in text:
        return None
    value = _json_object("additional-config", text).get("gdn_prefill_backend")
    return None if value is None else str(value).strip().lower()


def mm_flag_limit(flags: dict, modality: str) -> int | None:
    """One modality's count from the deployment's flags: vLLM's dotted form (`--limit-mm-per-prompt.video 0`,
    which its argument parser folds into the JSON object, as the Qwen3-VL recipes write it) or the whole flag."""
    dotted = flags.get(f"limit-mm-per-prompt.{modality}")
    if dotted is not None:
        return mm_limit(f"{modality}={dotted}", modality)
    return mm_limit(flags.get("limit-mm-per-prompt"), modality)


def mm_limit(text: str | None, modality: str) -> int | None:
    """One modality's count of --limit-mm-per-prompt, as vLLM takes it: a JSON object ({"image": 2} or, in later
    releases, {"image": {"count": 2, ...}}) or the older `image=2,video=1`; None when it names none."""
    if text is None or not str(text).strip():
        return None
    text = str(text).strip()
    key = "limit-mm-per-prompt"
    if text.startswith(("{", "[")):
        value = _json_object(key, text).get(modality)
        value = value.get("count") if isinstance(value, dict) else value
    else:
        pairs = {name.strip(): count for name, _, count in (part.partition("=") for part in text.split(","))}
        value = pairs.get(modality)
        if value is not None:
            try:
                value = int(value.strip())
            except ValueError:
                raise EF.FlagValueError(key, text, f"the {modality} count is not a whole number") from None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise EF.FlagValueError(key, text, f"the {modality} count must be a whole number >= 0")
    return value


def mm_max_pixels(text: str | None) -> int | None:
    """max_pixels of --mm-processor-kwargs (the Qwen2/2.5-VL processor's largest image), or None."""
    if text is None or not str(text).strip():
        return None
    value = _json_object("mm-processor-kwargs", str(text)).get("max_pixels")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise EF.FlagValueError("mm-processor-kwargs", str(text), "max_pixels must be a whole number > 0")
    return value


_SPECULATIVE_FLAGS = ("speculative-config", "speculative-model", "num-speculative-tokens")


def speculative_settings(flags: dict) -> dict:
    """num_speculative_tokens, the method and the draft model of --speculative-config (a JSON object), or of the
    older --speculative-model / --num-speculative-tokens; n-gram lookup has a query length too (1 + its tokens)."""
    text = flags.get("speculative-config")
    if text is not None and str(text).strip().startswith("{"):
        config = _json_object("speculative-config", str(text))
        tokens, method, model = (config.get("num_speculative_tokens"), config.get("method"),
                                 config.get("model"))
    else:
        tokens, method, model = flags.get("num-speculative-tokens"), None, flags.get("speculative-model")
    out: dict = {}
    if tokens is not None:
        key = "speculative-config" if text is not None else "num-speculative-tokens"
        try:
            number = int(str(tokens).strip()) if not isinstance(tokens, bool) else 0
        except ValueError:
            number = 0
        if not 1 <= number <= P.CAPTURE_SIZE_LIMIT:
            raise EF.FlagValueError(key, str(text if text is not None else tokens),
                                    "num_speculative_tokens is not a whole number ≥ 1")
        out["num_speculative_tokens"] = number
    if method:
        out["speculative_method"] = str(method)
    if model:
        out["speculative_model"] = str(model)
    return out


def _speculative_flag(flags: dict) -> str | None:
    """The flag that turns on a draft with memory of its own; n-gram lookup drafts from the prompt, using none."""
    present = [name for name in _SPECULATIVE_FLAGS if name in flags]
    if any("ngram" in str(flags[name] or "").lower() for name in present):
        return None
    return present[0] if present else None


def vllm_lora_request(flags: dict, value) -> LoraRequest | None:
    """vLLM's LoRA slots: only under --enable-lora (LoRAConfig defaults: 1 slot, rank 16, every module)."""
    if not _flag(flags, "enable-lora"):
        return None
    from gpustack_guard.core.memory.lora import LoraRequest, target_names  # LoRA specs only (import budget)

    return LoraRequest(slots=value("max-loras") or P.DEFAULT_MAX_LORAS,
                       rank=value("max-lora-rank") or P.DEFAULT_MAX_LORA_RANK,
                       targets=target_names(_text(flags.get("lora-target-modules"))),
                       dtype=_text(flags.get("lora-dtype")), fully_sharded=_flag(flags, "fully-sharded-loras"),
                       specialize_active=_flag(flags, "specialize-active-lora"))


def sglang_lora_request(flags: dict, value) -> LoraRequest | None:
    """SGLang's LoRA pool: --enable-lora, or --lora-paths alone (check_lora_server_args turns LoRA on for it).
    Without --max-lora-rank the rank comes from the adapters, which gsg does not read (lora.sglang_slots)."""
    enabled = _flag(flags, "enable-lora") if "enable-lora" in flags else _text(flags.get("lora-paths")) is not None
    if not enabled:
        return None
    from gpustack_guard.core.memory.lora import LoraRequest, target_names  # LoRA specs only (import budget)

    return LoraRequest(slots=value("max-loras-per-batch") or P.SGLANG_DEFAULT_MAX_LORAS_PER_BATCH,
                       rank=value("max-lora-rank"), targets=target_names(_text(flags.get("lora-target-modules"))),
                       backend=_text(flags.get("lora-backend")))


def sglang_config(flags: dict, version: str | None = None, env: dict | None = None) -> SglangConfig:
    """Raises FlagValueError for a value SGLang would refuse. env: the deployment's environment (ENGINE_ENV)."""

    def value(key: str):
        return EF.read(flags, key, "sglang", version)

    graphs = sglang_graph_settings(flags, version)
    prefill_off = graphs.pop("prefill_off", False)
    algorithm = flags.get("speculative-algorithm")
    return SglangConfig(
        mem_fraction_static=value("mem-fraction-static"),
        context_length=value("context-length"),
        max_running_requests=value("max-running-requests"),
        max_total_tokens=value("max-total-tokens"),
        chunked_prefill_size=value("chunked-prefill-size"),
        tp_size=value("tp-size") or 1,
        pp_size=value("pp-size") or 1,
        attn_dp_size=value("attn-dp-size") or ((value("dp-size") or 1) if _flag(flags, "enable-dp-attention") else 1),
        kv_cache_dtype=flags.get("kv-cache-dtype"),
        page_size=value("page-size") or 1,
        disable_cuda_graph=_flag(flags, "disable-cuda-graph"),
        speculative_algorithm=str(algorithm).strip().upper() if algorithm not in (None, True, "") else None,
        speculative_num_steps=value("speculative-num-steps"),
        speculative_eagle_topk=value("speculative-eagle-topk"),
        speculative_num_draft_tokens=value("speculative-num-draft-tokens"),
        speculative_draft_given=flags.get("speculative-draft-model-path") not in (None, True, ""),
        prefill_graphs_off=any(_flag(flags, key) for key in SGLANG_PREFILL_GRAPHS_OFF)
        or _sglang_dp_attention_prefill_off(flags, version)
        or ("speculative-algorithm" in flags and not _sglang_since(version, P.SGLANG_SPECULATIVE_PREFILL_GRAPHS_SINCE))
        or "lora-paths" in flags or prefill_off
        or "gguf" in (str(flags.get("load-format", "")) + str(flags.get("quantization", ""))).lower(),
        prefill_graphs_opt_in=_flag(flags, "enable-piecewise-cuda-graph"),
        **graphs,
        max_mamba_cache_size=value("max-mamba-cache-size"),
        mamba_full_memory_ratio=value("mamba-full-memory-ratio"),
        mamba_ssm_dtype=_text(flags.get("mamba-ssm-dtype")),
        disable_radix_cache=_flag(flags, "disable-radix-cache"),
        mamba_layout_unread=_sglang_mamba_unread(flags, version),
        mamba_strategy=_text(flags.get("mamba-radix-cache-strategy") or flags.get("mamba-scheduler-strategy")),
        disable_overlap_schedule=_flag(flags, "disable-overlap-schedule"),
        linear_attn_backend=_text(flags.get("linear-attn-backend")),
        aiter_honor_env=(env or {}).get(P.SGLANG_AITER_HONOR_ENV),
        attention_backend=_text(flags.get("attention-backend")),
        disable_hybrid_swa_memory=_flag(flags, "disable-hybrid-swa-memory"),
        swa_full_tokens_ratio=value("swa-full-tokens-ratio"),
        hybrid_kvcache_ratio=_text(flags.get("hybrid-kvcache-ratio")),
        lora=sglang_lora_request(flags, value),
        mm_feature_transport=_sglang_transport(flags),
        nnodes=value("nnodes") or 1,
        enable_multimodal=_flag(flags, "enable-multimodal"),
        mm_encoder_only=_flag(flags, "encoder-only"),
        disaggregated=str(flags.get("disaggregation-mode", "null")).strip().lower() not in ("null", "none", ""),
        prefill_instance=str(flags.get("disaggregation-mode", "")).strip().lower() == "prefill",
        mm_preprocess_cache_mb=value("mm-preprocess-cache-size-mb"),
        vlm_cache_mb=_sglang_env_mb(env or {}, P.SGLANG_VLM_CACHE_ENV),
        mm_feature_cache_mb=_sglang_env_mb(env or {}, P.SGLANG_MM_FEATURE_CACHE_ENV),
        legacy_ipc=_sglang_env_bool(env or {}, P.SGLANG_LEGACY_IPC_ENV),
    )


# SGLang's --mm-feature-transport choices (server_args.py@v0.5.18, arg_groups@v0.5.23)
SGLANG_FEATURE_TRANSPORTS = ("cpu", "cuda_ipc", "cuda_vmm")
# a budget variable's bound: more MB than any GPU holds is a typo, refused before the arithmetic takes it
SGLANG_ENV_MB_MAX = 2**30


def _sglang_transport(flags: dict) -> str | None:
    given = flags.get("mm-feature-transport")
    if given is not None:
        text = str(given).strip().lower()
        if text not in SGLANG_FEATURE_TRANSPORTS:
            raise EF.FlagValueError("mm-feature-transport", str(given),
                                    f"SGLang accepts {', '.join(SGLANG_FEATURE_TRANSPORTS)}")
        return text
    # the deprecated switch maps to cuda_ipc (server_args.py@v0.5.18 _handle_multimodal_feature_transport)
    return "cuda_ipc" if _flag(flags, "keep-mm-feature-on-device") else None


def _sglang_env_mb(env: dict, name: str) -> int | None:
    """An SGLang EnvInt as set (environ.py: int(value), which refuses anything else at start-up)."""
    if name not in env:
        return None
    text = str(env[name])
    try:
        mb = int(text)
    except ValueError:
        raise ValueError(f"env {name}={EF.shown(text)}: SGLang reads a whole number of MB there and "
                         "refuses this one at start-up") from None
    if abs(mb) > SGLANG_ENV_MB_MAX:
        raise ValueError(f"env {name}={EF.shown(text)}: more MB than any GPU holds (gsg takes at most "
                         f"{SGLANG_ENV_MB_MAX:,})")
    return mb


def _sglang_env_bool(env: dict, name: str) -> bool | None:
    """An SGLang EnvBool as set (environ.py: true/1/yes/y or false/0/no/n, case aside)."""
    if name not in env:
        return None
    text = str(env[name]).strip().lower()
    if text in P.SGLANG_ENV_TRUE:
        return True
    if text in ("false", "0", "no", "n"):
        return False
    raise ValueError(f"env {name}={EF.shown(str(env[name]))}: SGLang reads true/1/yes/y or false/0/no/n there "
                     "and refuses this one at start-up")


def _vllm_mamba_cache_mode(flags: dict, version: str | None) -> str | None:
    """--mamba-cache-mode as given (engines/vllm.mamba_cache_mode reads it); refused before the release that added it
    (profiles.VLLM_MAMBA_CACHE_MODE_ROWS), as --performance-mode is. Its choices: profiles.CHOICE_FLAGS."""
    key = "mamba-cache-mode"
    if key not in flags:
        return None
    text = _text(flags[key])
    if version is not None and parse_version(version) is None:
        return text  # a tag gsg cannot read: no refusal on a release whose parser was not read
    release = P.arithmetic_version("vllm", version)
    if not P.vllm_mamba_cache_mode_row(release).flag:
        assumed = "" if version is not None else " (gsg's assumed release: pin backend_version)"
        raise EF.FlagValueError(key, text, f"vLLM {release}{assumed} has no --{key} (it exists from "
                                           f"{P.VLLM_MAMBA_CACHE_MODE_SINCE}; prefix caching picks the mode)")
    return text


def _sglang_mamba_unread(flags: dict, version: str | None = None) -> str | None:
    """A flag that changes the mamba pool's layout in a way gsg has not read (engines/sglang.gated_delta_pools)."""
    strategy_read = P.sglang_gated_delta_row(version).strategy  # 0.5.16+: the extra_buffer slots are read
    if str(flags.get("mamba-scheduler-strategy", "")).strip().lower() == "extra_buffer" and not strategy_read:
        return "--mamba-scheduler-strategy extra_buffer"
    if _flag(flags, "enable-unified-memory"):  # unified_memory_pool.py: one buffer split at run time
        return "--enable-unified-memory"
    if _flag(flags, "enable-dp-attention"):
        return "--enable-dp-attention"
    # server_args.py@v0.5.8-@v0.5.13 turn the radix cache off under it (page size 1 unsupported)
    if str(flags.get("attention-backend", "")).strip().lower() == "trtllm_mha":
        return "--attention-backend trtllm_mha"
    return None


def _sglang_since(version: str | None, since: str) -> bool:
    return P.arithmetic_release("sglang", version) >= P.known_version(since)


def _release_words(family: str, version: str | None) -> str:
    return f"{EF.ENGINE_NAMES[family]} {version or P.DEFAULT_VERSIONS[family] + ' (gsg assumed)'}"


def _first_of(flags: dict, names: tuple[str, ...]) -> str | None:
    """The release's own name before its deprecated aliases (argparse gives them one dest)."""
    return next((name for name in names if name in flags), None)


def _sglang_graph_int(key: str, text: object) -> int:
    try:
        number = int(str(text).strip()) if not isinstance(text, bool) else 0
    except ValueError:
        raise EF.FlagValueError(key, str(text), "not a whole number (argparse int)") from None
    if not 1 <= number <= P.CAPTURE_SIZE_LIMIT:
        raise EF.FlagValueError(key, str(text), f"graph sizes are 1 to {P.CAPTURE_SIZE_LIMIT:,} (gsg's limit)")
    return number


def names_now(row: P.SglangGraphArgs, legacy: str) -> str:
    """The name a refused legacy graph flag has in the release."""
    return {"cuda-graph-max-bs": row.decode_max[0], "cuda-graph-bs": row.decode_list[0],
            "piecewise-cuda-graph-max-tokens": row.prefill_max[0], "piecewise-cuda-graph-tokens": row.prefill_list[0],
            "disable-piecewise-cuda-graph": "cuda-graph-backend-prefill disabled"}[legacy]


def sglang_graph_settings(flags: dict, version: str | None) -> dict:
    """SglangConfig's CUDA-graph fields from the names the release reads (profiles.SGLANG_GRAPH_ARGS), with 0.5.14+'s
    --cuda-graph-config JSON over the per-phase flags; a name the release's parser refuses is refused."""
    row = P.sglang_graph_args(version)
    for name in row.refused:
        if name in flags:
            ambiguous = [new for new in (f"{name}-decode", f"{name}-prefill") if name.startswith("cuda-graph")]
            why = (f"an ambiguous abbreviation of --{' and --'.join(ambiguous)}" if ambiguous
                   else "no longer an argument")
            raise EF.FlagValueError(name, flags[name] if isinstance(flags[name], str) else None,
                                    f"{_release_words('sglang', version)} refuses it: {why}; its deprecated alias "
                                    f"is gone from {P.SGLANG_LEGACY_GRAPH_FLAGS_GONE} (use --{names_now(row, name)})")
    out: dict = {}
    for field, names, is_list in (("cuda_graph_max_bs", row.decode_max, False),
                                  ("cuda_graph_bs", row.decode_list, True),
                                  ("prefill_graph_max_tokens", row.prefill_max, False),
                                  ("prefill_graph_tokens", row.prefill_list, True)):
        given = _first_of(flags, names)
        if given is not None:
            out[field] = capture_size_list(given, flags[given]) if is_list else _sglang_graph_int(given, flags[given])
    decode_off = _flag(flags, "disable-decode-cuda-graph") or \
        str(flags.get("cuda-graph-backend-decode", "")).strip().lower() == "disabled"
    prefill_off = _flag(flags, "disable-prefill-cuda-graph") or \
        str(flags.get("cuda-graph-backend-prefill", "")).strip().lower() == "disabled"
    if row.graph_config and flags.get("cuda-graph-config") is not None:
        text = str(flags["cuda-graph-config"])
        config = _json_object("cuda-graph-config", text)
        for phase, fields in (("decode", ("cuda_graph_max_bs", "cuda_graph_bs")),
                              ("prefill", ("prefill_graph_max_tokens", "prefill_graph_tokens"))):
            part = config.get(phase)
            if part is None:
                continue
            if not isinstance(part, dict):
                raise EF.FlagValueError("cuda-graph-config", text, f"{phase} is not a JSON object")
            if part.get("max_bs") is not None:
                out[fields[0]] = _sglang_graph_int("cuda-graph-config", part["max_bs"])
            if part.get("bs") is not None:
                if not isinstance(part["bs"], list):
                    raise EF.FlagValueError("cuda-graph-config", text, f"{phase}.bs is not a list")
                out[fields[1]] = capture_size_list("cuda-graph-config", text, part["bs"])
            if part.get("backend") is not None:
                off = str(part["backend"]).strip().lower() == "disabled"
                decode_off, prefill_off = (off, prefill_off) if phase == "decode" else (decode_off, off)
    if row.decode_reserve_follows_backend:
        # 0.5.14+: --disable-cuda-graph disables both phases (_parse_cuda_graph_config's legacy flag)
        out["decode_graphs_off"] = decode_off or _flag(flags, "disable-cuda-graph")
        out["prefill_off"] = prefill_off or _flag(flags, "disable-cuda-graph")
    return out


# Switches that turn SGLang's piecewise (prefill) CUDA graphs off (server_args.py@0.5.10
# _handle_piecewise_cuda_graph); LoRA paths and GGUF weights do as well, a speculative algorithm up to 0.5.10.post1
# (profiles.SGLANG_SPECULATIVE_PREFILL_GRAPHS_SINCE); DP attention by release
# (profiles.SGLANG_DP_ATTENTION_PREFILL_GRAPHS)
SGLANG_PREFILL_GRAPHS_OFF = ("disable-piecewise-cuda-graph", "enable-torch-compile", "enable-lora")


def _sglang_dp_attention_prefill_off(flags: dict, version: str | None) -> bool:
    """--enable-dp-attention turns the prefill graphs off where the release says so
    (profiles.SGLANG_DP_ATTENTION_PREFILL_GRAPHS)."""
    if not _flag(flags, "enable-dp-attention"):
        return False
    row = P.sglang_dp_attention_prefill_graphs(version)
    backend = str(flags.get("cuda-graph-backend-prefill") or row.default_backend).strip().lower()
    return row.every_backend or backend in row.backends


def llamacpp_config(flags: dict, policy: Policy, facts: ModelFacts | None = None,
                    version: str | None = None, booking: bool = False, env: dict | None = None) -> LlamaCppConfig:
    """Raises FlagValueError for a value llama.cpp would refuse; values in the engine's own reading (-c 0 is the
    model's trained length, -ngl auto|all|-1 full offload, -np -1 llama.cpp's automatic slot count). Without -c the
    estimate takes the build's default context (engines.llamacpp.default_context); booking: GPUStack's scheduler's
    instead (gguf-parser's ctx_size), for what placement books."""
    from gpustack_guard.core.memory.engines import llamacpp as LC
    from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig

    def value(key: str):
        return EF.read(flags, key, "llamacpp", version)

    ctx = value("ctx-size")
    if ctx == 0:  # the model's trained length; unknown, GPUStack's booked figure as before
        ctx = facts.max_position_embeddings if facts is not None and facts.max_position_embeddings \
            else P.GPUSTACK_BOOKING_CTX
    layers = value("gpu-layers")
    parallel = value("parallel")
    setting = None
    if "flash-attn" in flags:
        # a value on a build where -fa is a switch, or none where it takes one: the engine exits (engine_flags.check)
        refused = EF.check("flash-attn", flags["flash-attn"], "llamacpp", version)
        if refused is not None:
            raise refused
        setting = "on" if flags["flash-attn"] is None else flags["flash-attn"]  # a bare -fa is the old switch
    try:
        flash, flash_auto = LC.flash_attention_on(setting, version, kv_on_host=_flag(flags, "no-kv-offload"))
    except ValueError as exc:
        raise EF.FlagValueError("flash-attn", setting, str(exc)) from None
    try:
        fit = LC.fit_active(_text(flags.get("fit")), version)
    except ValueError as exc:
        raise EF.FlagValueError("fit", str(flags.get("fit")), str(exc)) from None
    split_mode = str(flags.get("split-mode") or "layer").strip().lower()
    mode = P.llamacpp_split_mode(split_mode, version)
    if mode is None:  # common/arg.cpp: "invalid value", llama-server exits
        known = ", ".join(row.mode for row in P.LLAMACPP_SPLIT_MODES if P.llamacpp_split_mode(row.mode, version))
        raise EF.FlagValueError("split-mode", split_mode, f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} "
                                                          f"takes {known}")
    if facts is not None and LC.arch_key(facts.architecture) in mode.refused:
        raise EF.FlagValueError("split-mode", split_mode, f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} "
                                f"does not split {facts.architecture} by tensor ('LLAMA_SPLIT_MODE_TENSOR not "
                                "implemented for architecture', src/llama-model.cpp@0c1e57098): it exits at load")
    if mode.kv == "shares":
        # llama_context turns flash attention on for it (auto) or refuses to start; common/fit.cpp gives up on it
        if setting is not None and not flash:
            raise EF.FlagValueError("flash-attn", setting, "--split-mode tensor needs flash attention: llama_context "
                                                           "refuses to start without it (llama-context.cpp@0c1e57098)")
        flash, flash_auto, fit = True, flash_auto or setting is None, False
    auto_slots = parallel == EF.LLAMACPP_AUTO_PARALLEL or (parallel is None and EF.llamacpp_auto_default(version))
    # llama-server unifies the cache when the slot count is automatic, -kvu/--no-kvu decide otherwise
    unified = not _flag(flags, "no-kv-unified") and (_flag(flags, "kv-unified") or auto_slots or not parallel)
    streams = LC.kv_streams(LlamaCppConfig(parallel=parallel, kv_unified=unified), version) if parallel else 1
    unset_ctx = P.GPUSTACK_BOOKING_CTX if booking else None
    # --kv-unified-per-slot: a build before it has no such flag, llama-server exits (not read here)
    per_slot = max(0, value("kv-unified-per-slot") or 0) \
        if "kv-unified-per-slot" in EF.numeric_flags("llamacpp", version) else 0
    if ctx is None and facts is not None:  # the n_ctx the build starts with, checked against the slots as -c is
        ctx = LC.default_context(facts, LlamaCppConfig(parallel=parallel, kv_unified=unified, fit=fit,
                                                       unset_ctx=unset_ctx, slot_cap=per_slot), version)["ctx_size"]
        ctx_from_default = True
    else:
        ctx_from_default = False
    cells = LC.context_cells(ctx or P.GPUSTACK_BOOKING_CTX, 1, flash, version)[0]
    if streams > cells:
        raise EF.FlagValueError("parallel", str(parallel), f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']}"
                                    f" splits {cells:,} cells over {parallel:,} slots, less than one each "
                                    "(n_ctx_seq == 0): it refuses to start")
    return LlamaCppConfig(
        ctx_size=None if ctx_from_default else ctx,  # estimate_llamacpp resolves it again and says where from
        unset_ctx=unset_ctx,
        output_first=llamacpp_output_first(env or {}),
        pipeline_off=llamacpp_pipeline_off(env or {}),
        kv_unified=unified,
        swa_full=_flag(flags, "swa-full"),
        parallel=P.LLAMACPP_AUTO_PARALLEL if parallel == EF.LLAMACPP_AUTO_PARALLEL else parallel,
        gpu_layers=None if layers is not None and layers < 0 else layers,
        batch_size=value("batch-size"),
        ubatch_size=value("ubatch-size"),
        cache_type_k=flags.get("cache-type-k") or "f16",
        cache_type_v=flags.get("cache-type-v") or "f16",
        flash_attn=flash, flash_attn_auto=flash_auto,
        no_kv_offload=_flag(flags, "no-kv-offload"),
        tensor_split=value("tensor-split"),
        split_mode=split_mode,
        slot_cap=per_slot,
        tensor_overrides=any(key in flags for key in OVERRIDE_FLAGS),
        buft_overrides=_buft_overrides(flags, version, facts),
        # gguf-parser books the arguments as given: llama.cpp's --fit runs in the engine, after the scheduler
        # a pool --kv-unified-per-slot sized is a context set before --fit runs
        fit=fit and not booking, ctx_given="ctx-size" in flags or (per_slot > 0 and not booking),
        layers_given=layers is not None and layers != EF.LLAMACPP_AUTO_LAYERS,
        **_fit_limits(flags, version),
        platform_footprint=P.LLAMACPP_PLATFORM_FOOTPRINT if policy.platform_footprint is None
        else policy.platform_footprint,
    )


class EnvValueError(EF.FlagValueError):
    """A LLAMA_ARG_ variable's value llama-server would refuse: the message names the variable, not a flag."""

    def __init__(self, env: str, value: str | None, reason: str):
        super().__init__(env, value, reason)
        self.args = (f"env {env} {EF.shown(value)}: {reason}",)

    def __str__(self) -> str:
        return str(self.args[0])


# common/arg.cpp's is_truthy / is_falsey: the words its environment reading takes for on and off
_ENV_TRUTHY = frozenset({"on", "enabled", "true", "1"})
_ENV_FALSEY = frozenset({"off", "disabled", "false", "0"})


def llamacpp_env_flags(flags: dict, env: dict | None, version: str | None, hidden: AbstractSet[str] = frozenset()
                       ) -> tuple[dict, tuple[tuple[str, str], ...]]:
    """The flags with each option the build reads from the environment (profiles.LLAMACPP_ENV_ARGS) that the
    command line leaves unset, as llama-server reads them (the flag beats its variable), and (flag, variable) of
    each one taken. Raises EnvValueError for a value llama-server would exit on; the value of a variable in
    `hidden` (a secret: a ${NAME} reference) is masked in it."""
    if not env:
        return flags, ()
    merged, taken = dict(flags), []
    for row in P.llamacpp_env_args(version):
        if row.option in flags or (row.off is not None and row.off in flags):
            continue
        negated = row.env.replace(P.LLAMACPP_ENV_PREFIX, P.LLAMACPP_ENV_PREFIX + "NO_", 1)
        if row.kind == "bool" and negated in env:  # arg.cpp's compatibility reading: LLAMA_ARG_NO_<X> is falsey
            name, text = negated, "0"
        elif row.env in env:
            name, text = row.env, str(env[row.env])
        else:
            continue
        if row.kind == "switch":
            if text in _ENV_TRUTHY:  # a handler without a value runs only for a truthy text
                merged[row.option] = None
                taken.append((row.option, name))
            continue
        shown = MASK if name in hidden else text
        if row.kind == "bool":
            if text not in _ENV_TRUTHY | _ENV_FALSEY:
                raise EnvValueError(name, shown, "llama.cpp exits at start-up: not on|enabled|true|1 or "
                                                "off|disabled|false|0 (invalid boolean value)")
            option = row.option if text in _ENV_TRUTHY else str(row.off)
            merged[option] = None
            taken.append((option, name))
            continue
        error = EF.check(row.option, text, "llamacpp", version)
        if error is not None:
            # a secret's reason is not repeated: range refusals quote the value ("not 0")
            raise EnvValueError(name, shown, error.reason if name not in hidden else
                                f"a value {_release_words('llamacpp', version)} refuses for --{row.option}")
        merged[row.option] = text
        taken.append((row.option, name))
    return merged, tuple(taken)


def llamacpp_output_first(env: dict) -> bool | None:
    """The placement a run's log showed (profiles.LLAMACPP_OUTPUT_LAYER_ENV): True the output layer first, False
    last, None when unset (the build decides). ValueError for another value: no guess at what it meant."""
    value = env.get(P.LLAMACPP_OUTPUT_LAYER_ENV)
    if value is None:
        return None
    text = str(value).strip().lower()
    if text not in (P.LLAMACPP_OUTPUT_LAYER_FIRST, P.LLAMACPP_OUTPUT_LAYER_LAST):
        raise ValueError(f"env {P.LLAMACPP_OUTPUT_LAYER_ENV}={EF.shown(str(value))}: gsg reads "
                         f"'{P.LLAMACPP_OUTPUT_LAYER_FIRST}' or '{P.LLAMACPP_OUTPUT_LAYER_LAST}' (where -ngl puts "
                         "the output layer)")
    return text == P.LLAMACPP_OUTPUT_LAYER_FIRST


def llamacpp_pipeline_off(env: dict) -> bool:
    """Whether a run's log showed its scheduler without pipeline copies (profiles.LLAMACPP_PIPELINE_ENV). ValueError
    for another value than 'off'."""
    value = env.get(P.LLAMACPP_PIPELINE_ENV)
    if value is None:
        return False
    if str(value).strip().lower() != P.LLAMACPP_PIPELINE_OFF:
        raise ValueError(f"env {P.LLAMACPP_PIPELINE_ENV}={EF.shown(str(value))}: gsg reads "
                         f"'{P.LLAMACPP_PIPELINE_OFF}' (the log printed no pipeline parallelism)")
    return True


# llama-server's flags that add buffer-type overrides, long and short spellings
OVERRIDE_FLAGS = ("override-tensor", "ot", "cpu-moe", "cmoe", "n-cpu-moe", "ncmoe")


def _buft_overrides(flags: dict, version: str | None, facts: ModelFacts | None) -> tuple[tuple[str, str], ...]:
    """The (regex, buffer type) list llama.cpp checks, in the order the flags were given: -ot's pairs and the
    patterns --cpu-moe / --n-cpu-moe add (engines/llamacpp.expert_overrides). A repeated -ot arrives as one value,
    its pairs joined in order (args.as_dict, engine_flags.REPEATABLE), so every pair is checked, the earlier first."""
    from gpustack_guard.core.memory.engines import llamacpp as LC

    out: list[tuple[str, str]] = []
    for key, raw in flags.items():
        if key not in OVERRIDE_FLAGS:
            continue
        if key in ("override-tensor", "ot"):
            try:
                out += LC.parse_override_tensor(_text(raw) or "")
            except ValueError as exc:
                raise EF.FlagValueError(key, _text(raw), str(exc)) from None
        elif key in ("cpu-moe", "cmoe"):
            if _flag(flags, key):
                out += LC.expert_overrides(True, None, version)
        else:
            try:
                count = int(str(raw).strip())
            except ValueError:
                raise EF.FlagValueError(key, _text(raw), "--n-cpu-moe takes a whole number of layers") from None
            if count < 0:
                raise EF.FlagValueError(key, _text(raw), "llama.cpp refuses a negative --n-cpu-moe")
            out += LC.expert_overrides(False, count, version, LC.block_count(facts) if facts is not None else None)
    return tuple(out)


def _text(value) -> str | None:
    """A flag's value as text; a bare switch (True) is its on form."""
    if value is None:
        return None
    return "on" if value is True else str(value)


def _fit_limits(flags: dict, version: str | None) -> dict[str, Any]:
    """--fit-target (bytes per device, one value broadcast) and --fit-ctx as common/arg.cpp reads them
    (engine_flags' table); a build without --fit refuses both."""
    from gpustack_guard.core.memory.engines import llamacpp as LC

    given = [key for key in ("fit-target", "fit-ctx") if key in flags]
    if given and not LC.has_fit(version):
        raise EF.FlagValueError(given[0], _text(flags[given[0]]),
                                f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} has no --{given[0]} (it exists "
                                f"from {P.LLAMACPP_FIT_SINCE})")
    limits: dict[str, Any] = {}
    mib = EF.read(flags, "fit-target", "llamacpp", version)
    if isinstance(mib, tuple):
        limits["fit_target"] = tuple(value * P.MiB for value in mib)
    min_ctx = EF.read(flags, "fit-ctx", "llamacpp", version)
    if isinstance(min_ctx, int):
        # fit.cpp takes the int32 as uint32_t: a negative one is above every context (-1, UINT32_MAX, asks for the
        # full context), so the context is never shortened
        limits["fit_min_ctx"] = min_ctx % 2**32
    return limits


def apply_online_quantization(facts: ModelFacts, flags: dict) -> ModelFacts:
    """`--quantization fp8` on an unquantised checkpoint loads it as fp8 (vLLM online quantisation)."""
    method = (flags.get("quantization") or "").lower()
    if method in ONLINE_QUANT and not facts.quant_method:
        return replace(facts, quant_method=ONLINE_QUANT[method], weight_bytes=None)
    return facts


def _vllm_kv_sized(kv_cache_dtype: str | None, version: str | None, facts: ModelFacts,
                   skip: tuple[str, ...] = ()) -> None:
    """A KV dtype vLLM takes but gsg cannot size (kv_formats.vllm_unsized): a warning, no arithmetic."""
    from gpustack_guard.core.memory.kv import KV_DTYPE_BYTES, local_window

    if (kv_cache_dtype or "auto").lower() in KV_DTYPE_BYTES and not skip:
        return
    from gpustack_guard.core.memory.kv_formats import vllm_unsized

    windowed = bool(local_window(facts)[1]) or facts.split_attention or facts.is_gated_delta
    reason = vllm_unsized(kv_cache_dtype, parse_version(version), facts.is_mla, windowed, skip)
    if reason is not None:
        key = "kv-cache-dtype-skip-layers" if "skip-layers" in reason else "kv-cache-dtype"
        raise EF.FlagValueError(key, " ".join(skip) if key != "kv-cache-dtype" else kv_cache_dtype, reason,
                                warning=True)


def apply_served_dtype(facts: ModelFacts, flags: dict) -> ModelFacts:
    """vLLM's and SGLang's `--dtype` (and `auto`'s float32 downcast): the weights and an `auto` KV cache are sized
    in the dtype the engine loads, not the checkpoint's. A measured weight size was at the checkpoint's dtype, so
    the weights are counted from the parameters instead."""
    try:
        served = served_dtype(flags.get("dtype"), facts.dtype, facts.architecture)
    except ValueError as exc:
        raise EF.FlagValueError("dtype", flags.get("dtype"), str(exc)) from None
    if served == (facts.dtype or "bfloat16"):
        return facts
    return replace(facts, dtype=served, weight_bytes=None, layer_weight_bytes=None)


def _with_dtypes(loaded: ModelFacts, flags: dict, est: Estimate) -> Estimate:
    """The estimate says what it sized the weights and the KV cache in."""
    weights = loaded.dtype or "bfloat16"
    kv = (flags.get("kv-cache-dtype") or "auto").strip()
    return replace(est, dtype=weights, kv_cache_dtype=weights if kv == "auto" else kv)


def estimate(family: str, facts: ModelFacts, gpus: list[tuple[int, str]], flags: dict, version: str | None,
             policy: Policy, env: Mapping[str, str] | None = None, foreign: int = 0, booking: bool = False
             ) -> Estimate:
    """gpus: (total bytes, name) of one replica's GPUs, in rank order. vLLM: the smallest GPU of each pipeline
    stage; SGLang: the smallest GPU. env: the deployment's environment (VLLM_PP_LAYER_PARTITION, VLLM_USE_V1).
    foreign: memory already held on the replica's fullest GPU by processes this spec does not own; SGLang sizes
    its pool from the free memory it measures (the minimum over its ranks), so it counts there.

    Pure, so identical inputs (replicas, and the many specs that share a model and flags) are computed once.
    """
    env_items = tuple(sorted((k, str(v)) for k, v in (env or {}).items()
                             if k in ENGINE_ENV or (family == "llamacpp" and k.startswith(P.LLAMACPP_ENV_PREFIX))))
    return _estimate(family, facts, tuple(gpus), tuple(flags.items()), version, policy, env_items, foreign, booking)


# the environment variables that move memory
# (every name vllm_config and sglang_config read: one left out here never reaches them; a test holds the two equal)
ENGINE_ENV = ("VLLM_PP_LAYER_PARTITION", "VLLM_USE_V1", "VLLM_FUSED_MOE_CHUNK_SIZE", "VLLM_USE_FLASHINFER_SAMPLER",
              "VLLM_USE_V2_MODEL_RUNNER",
              P.NCCL_P2P_DISABLE_ENV, P.NCCL_NVLS_ENABLE_ENV, P.VLLM_CHUNKED_LOCAL_HYBRID_ENV, P.SGLANG_AITER_HONOR_ENV,
              P.LLAMACPP_OUTPUT_LAYER_ENV, P.LLAMACPP_PIPELINE_ENV, P.VLLM_FP8_MARLIN_ENV, P.SGLANG_VLM_CACHE_ENV,
              P.SGLANG_MM_FEATURE_CACHE_ENV,
              P.SGLANG_LEGACY_IPC_ENV)


def _check_parallel(facts: ModelFacts, tp: int, pp: int, tp_flag: str, pp_flag: str) -> None:
    """Sizes no engine starts with, refused before any per-stage or per-rank list is built (10**30 stages)."""
    layers = facts.num_hidden_layers or 0
    if pp > layers:
        raise ValueError(f"{pp_flag} {pp:,} is more stages than the model's {layers} layers")
    if tp > P.MAX_PARALLEL_RANKS:
        raise ValueError(f"{tp_flag} {tp:,} is beyond {P.MAX_PARALLEL_RANKS:,} ranks")


@lru_cache(maxsize=4096)
def _estimate(family: str, facts: ModelFacts, gpus: tuple, flag_items: tuple, version: str | None,
              policy: Policy, env_items: tuple = (), foreign: int = 0, booking: bool = False) -> Estimate:
    missing = [name for name in ("num_hidden_layers", "vocab_size") if getattr(facts, name) is None]
    if facts.is_gated_delta:  # the linear layers' state is sized from these (gated_delta.py)
        missing += [name for name in GATED_DELTA_SHAPE if getattr(facts, name) is None]
    if facts.is_mamba2:  # the Mamba-2 layers' state is sized from these (mamba2.py)
        missing += [name for name in MAMBA2_SHAPE if getattr(facts, name) is None]
    # a GGUF model without attention layers (Mamba) needs no attention shape: llama.cpp's recurrent arithmetic runs
    # it, other engines refuse it below for its recurrent layers
    attention_free = facts.recurrent_state is not None and not any(facts.recurrent_state.attention)
    if not facts.has_attention_shape and not attention_free:
        missing.append("the attention shape (hidden_size and num_attention_heads, or head_dim; num_key_value_heads)")
    if missing:  # a measured weight size alone does not size a KV cache
        raise UnsupportedModel(f"missing {', '.join(missing)} in {facts.source}: the KV cache cannot be sized")
    if facts.is_gated_delta and family not in ("vllm", "sglang"):
        raise UnsupportedModel(f"{facts.architecture or 'the model'} has Gated DeltaNet linear-attention layers that "
                               "keep state per sequence: gsg models their memory for vLLM and SGLang only, so there "
                               "is no verdict")
    if facts.is_mamba2 and family != "vllm":
        raise UnsupportedModel(f"{facts.architecture or 'the model'} has Mamba-2 layers that keep state per "
                               "sequence: gsg models their memory for vLLM only, so there is no verdict")
    if facts.recurrent_layers and not (family == "llamacpp" and facts.recurrent_state is not None):
        raise UnsupportedModel(f"{facts.architecture or 'the model'} has recurrent or linear-attention layers "
                               f"({facts.recurrent_layers}) that keep state per sequence, not a KV cache per token: "
                               "gsg has no memory arithmetic for them, so there is no verdict")
    if facts.unmodelled:
        raise UnsupportedModel(f"{facts.architecture or 'the model'} has {facts.unmodelled}: gsg has no rule for "
                               "it, and sizing the model without it would give a wrong number, so there is no verdict")
    if facts.vision_unsupported:
        raise UnsupportedModel(f"{facts.architecture or 'the model'} is multimodal ({facts.vision_unsupported}): gsg "
                               "cannot count its vision encoder's weights, and leaving them out would overstate "
                               "the KV cache, so there is no verdict")
    flags = dict(flag_items)
    totals = [total for total, _ in gpus]
    smallest = min(range(len(gpus)), key=lambda i: totals[i])
    if family == "vllm":
        cfg = vllm_config(flags, policy, dict(env_items), version)
        tp, pp = cfg.tensor_parallel_size, cfg.pipeline_parallel_size
        _check_parallel(facts, tp, pp, "--tensor-parallel-size", "--pipeline-parallel-size")
        # ranks are numbered stage-major (rank = stage x tp + tp_rank): each stage's smallest GPU
        stage_totals = [min(totals[s * tp:(s + 1) * tp]) for s in range(pp)] if pp > 1 and len(totals) >= tp * pp \
            else None
        loaded = apply_online_quantization(apply_served_dtype(facts, flags), flags)
        _vllm_kv_sized(cfg.kv_cache_dtype, version, loaded, cfg.kv_skip_layers)
        try:
            est = estimate_vllm(loaded, totals[smallest], cfg, version=version, gpu_name=gpus[smallest][1],
                                stage_totals=stage_totals)
        except LayoutUnsupported as exc:
            raise UnsupportedModel(f"{facts.architecture or 'the model'}: {exc}, so there is no verdict") from None
        if EF.read(flags, "max-model-len", "vllm", version) == EF.AUTO_MAX_MODEL_LEN \
                and 0 < est.estimated_max_model_len < est.max_model_len:
            # `auto`: vLLM starts with the longest length its KV cache holds, not the model's native one
            est = estimate_vllm(loaded, totals[smallest], replace(cfg, max_model_len=est.estimated_max_model_len),
                                version=version, gpu_name=gpus[smallest][1], stage_totals=stage_totals)
        return _with_dtypes(loaded, flags, est)
    if family == "sglang":
        scfg = replace(sglang_config(flags, version, dict(env_items)), foreign_bytes=foreign)
        _check_parallel(facts, scfg.tp_size, scfg.pp_size, "--tp-size", "--pp-size")
        loaded = apply_online_quantization(apply_served_dtype(facts, flags), flags)
        # kv.py sizes vLLM's packed dtypes (kv_formats); SGLang's layouts of its fp4 ones are not read: refused here
        kv_element_bytes(scfg.kv_cache_dtype, loaded)
        try:
            sest = estimate_sglang(loaded, totals[smallest], scfg, version=version, gpu_name=gpus[smallest][1])
        except LayoutUnsupported as exc:
            raise UnsupportedModel(f"{facts.architecture or 'the model'}: {exc}, so there is no verdict") from None
        return _with_dtypes(loaded, flags, sest)
    if family == "llamacpp":
        from gpustack_guard.core.memory.engines.llamacpp import estimate_llamacpp

        # GPUStack's scheduler books the arguments as given; the engine also reads its LLAMA_ARG_ variables
        flags, from_env = (flags, ()) if booking else llamacpp_env_flags(flags, dict(env_items), version)
        try:
            lcfg = replace(llamacpp_config(flags, policy, facts, version, booking, dict(env_items)),
                           from_env=from_env)
        except EF.FlagValueError as exc:  # a refusal of a value the env gave names the variable, not a flag
            variable = dict(from_env).get(exc.key)
            if variable is None:
                raise
            raise EnvValueError(variable, exc.value, exc.reason) from None
        return estimate_llamacpp(facts, totals, lcfg, version=version)
    raise ValueError(f"no memory model for backend family '{family}'")


def gpustack_fraction(family: str, flags: dict, gpu_total: int, version: str | None = None) -> float:
    """The fraction GPUStack books per GPU: gmu (vLLM, default 0.9) or mem_fraction_static (SGLang)."""
    return _gpustack_fraction(family, tuple(flags.items()), gpu_total, version)


# Placement asks once a spec, and specs share a few (flags, GPU size, release) sets: reading the flag (vLLM) or
# building SglangConfig and its fraction (SGLang) per spec was ~30 ms of 10,000 (issue 34, tenth round). Keyed on
# every input; a refusal (FlagValueError) is raised each time, never kept.
MAX_FRACTIONS_KEPT = 4096


@lru_cache(maxsize=MAX_FRACTIONS_KEPT)
def _gpustack_fraction(family: str, flag_items: tuple, gpu_total: int, version: str | None) -> float:
    flags = dict(flag_items)
    if family == "vllm":
        gmu = EF.read(flags, "gpu-memory-utilization", "vllm", version)
        return float(gmu) if isinstance(gmu, float) else P.DEFAULT_GPU_MEMORY_UTILIZATION
    if family == "sglang":
        return sglang_fraction(sglang_config(flags, version), gpu_total, version)
    return 0.0


def gpustack_weight_estimate(facts: ModelFacts) -> int:
    """GPUStack's own estimate_model_vram for LLMs: weights x 1.2 + 2 GiB."""
    return int(weight_layout(facts).total * P.GPUSTACK_WEIGHT_FACTOR) + P.GPUSTACK_WEIGHT_EXTRA
