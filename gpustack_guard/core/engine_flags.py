"""The numeric backend flags gsg reads, parsed exactly as each engine parses them, with the engine's range.

A value the engine would refuse is reported (GSG016) instead of being replaced by a default; a value the engine
reads differently from its face (llama.cpp's std::stoi reads `8k` as 8) is read as the engine reads it. The same
holds for the shape of the other flags, per release read (tables in memory/profiles.py): a switch given a value
(SWITCH_FLAGS: `--enforce-eager=false` is an exit, not 'off') and a choice outside the release's list
(CHOICE_FLAGS: argparse compares exactly, so `FP8` and `` are refused).

Sources (read for the rule, not copied):
- vLLM: vllm/engine/arg_utils.py (argparse `type=int` / `float`; `human_readable_int` for --max-model-len since
  0.8.5, `human_readable_int_or_auto` (adds `auto` / `-1`) later, `human_readable_int` for
  --max-num-batched-tokens), vllm/config/{cache,scheduler,parallel}.py (pydantic `Field(gt=0, le=1)` on
  gpu_memory_utilization, `ge=1` on max_num_seqs, max_num_batched_tokens, tensor/pipeline_parallel_size).
- SGLang: python/sglang/srt/server_args.py, later python/sglang/srt/args/*.py (argparse `type=int` / `float`;
  --chunked-prefill-size -1 disables chunked prefill; --context-length and --max-total-tokens through SGLang's own,
  case-sensitive human_readable_int in python/sglang/srt/utils/common.py since PR #20577).
- llama.cpp: common/arg.cpp (int options go through std::stoi; --tensor-split through std::stof per item split
  on `,` or `/`; -ngl takes `auto` / `all` in recent builds; -np 0 throws, -1 = auto in recent server builds;
  -c 0 = the model's own length).
"""

from __future__ import annotations

import functools
import math
import re
import struct
from typing import Callable, Union

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS
from gpustack_guard.core.secrets import masked_value
from gpustack_guard.core.units import parse_size
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.versions import Version, parse_version

Number = Union[int, float]
Value = Union[int, float, tuple]
VALUE_SHOWN = 40  # characters of a rejected value a message repeats

# Version bounds of parser changes. Where the exact release is uncertain the earliest plausible one is taken,
# so a value a release may accept is never reported (the cost is a missed report on the releases before it).
VLLM_HUMAN_LEN_SINCE = "0.8.5"  # --max-model-len type=int -> human_readable_int
VLLM_HUMAN_BATCHED_SINCE = "0.11.0"  # --max-num-batched-tokens (with kv_cache_memory_bytes) -> human_readable_int
VLLM_AUTO_LEN_SINCE = "0.14.0"  # --max-model-len auto / -1 (vllm PR #29431; not in the 0.12.0 and 0.13.0 wheels)
SGLANG_HUMAN_SINCE = "0.5.9"  # --context-length / --max-total-tokens -> SGLang's human_readable_int (PR #20577,
# merged March 2026)
LLAMACPP_AUTO_SINCE = "b7000"  # -ngl auto|all and -np -1 (the fit-params work of llama.cpp PR #16653, late 2025)

# Flags an engine appends to a list each time they are given, rather than keeping the last: gsg keeps every value,
# in order, joined by the engine's own list separator (one flag with the joined value means the same to the engine).
# llama.cpp: each -ot's handler runs parse_tensor_buffer_overrides, which pushes its comma-separated pairs onto
# params.tensor_buft_overrides (common/arg.cpp@145b6280, "-ot", "--override-tensor"); --cpu-moe and --n-cpu-moe push
# onto the same list in command-line order, and the loader takes the first pattern that matches a tensor's name.
REPEATABLE: dict[str, dict[str, str]] = {"llamacpp": {"override-tensor": ","}}
# Flags an engine appends to each time they are given, which gsg keeps as separate arguments, every one in order: an
# older build takes one item per occurrence, so joining would change the meaning. llama.cpp common/arg.cpp (b3600
# and b8000 alike): --override-kv pushes onto params.kv_overrides ("may be specified multiple times"), --lora onto
# params.lora_adapters, --control-vector onto params.control_vectors ("can be repeated"); later builds also split
# each value on commas, still appending.
KEPT_EACH: dict[str, frozenset[str]] = {"llamacpp": frozenset({"override-kv", "lora", "control-vector"})}


def repeatable(family: str | None) -> dict[str, str]:
    """The flags of an engine that accumulate when repeated, with the separator that joins their values."""
    return REPEATABLE.get(family or "", {})


def kept_each(family: str | None) -> frozenset[str]:
    """The flags of an engine that accumulate when repeated and that gsg passes on once per occurrence."""
    return KEPT_EACH.get(family or "", frozenset())


@frozen_value(eq=True, repr=True)
class MultiValueFlags:
    """Flags one engine's releases [since, until) parse with argparse nargs='+' or '*': every following item that
    is not a flag is one of their values (`--lora-modules a=x b=y`). Any other flag takes one value and argparse
    refuses a second one as 'unrecognized arguments'. Bounds between two releases read take the widest plausible
    range (a later `until`, an earlier `since`), so a list a release may accept is never reported."""

    since: str
    until: str | None  # the first release without them; None: still there in the newest release read
    flags: frozenset[str]
    source: str


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# vLLM: explicit nargs="+" in engine/arg_utils.py and entrypoints/openai/cli_args.py up to 0.8.x; from 0.9 get_kwargs
# gives nargs="+" to every flag generated from a list-typed (or tuple[X, ...]) config field, except where cli_args.py
# removes it (--allowed-origins/-methods/-headers take one JSON list, --middleware appends one value per flag).
# SGLang: explicit nargs="+"/"*" in srt/server_args.py; later srt/arg_groups/arg_utils.py gives nargs "+" to every
# List[X] field of srt/arg_groups/fields/*.py (an Arg's own nargs, e.g. "*", wins). llama.cpp's common/arg.cpp
# options take at most one value each.
MULTI_VALUE_FLAGS: dict[str, tuple[MultiValueFlags, ...]] = {
    "vllm": (
        MultiValueFlags("0.0.0", None, _names("served-model-name lora-modules"),
                        "arg_utils.py@v0.6.3 and cli_args.py@v0.6.3 nargs='+'; ModelConfig.served_model_name "
                        "str | list[str] (arg_utils.py@v0.11.0), BaseFrontendArgs.lora_modules "
                        "(entrypoints/common/cli_args.py@v0.34.0)"),
        MultiValueFlags("0.0.0", "0.10.0", _names("prompt-adapters"),
                        "cli_args.py@v0.6.3 .. @v0.9.0 nargs='+'; gone in v0.10.0"),
        MultiValueFlags("0.6.4", "0.10.0", _names("long-lora-scaling-factors"),
                        "LoRAConfig.long_lora_scaling_factors tuple[float, ...] (arg_utils.py@v0.8.5, @v0.9.0); "
                        "one value in v0.6.3, gone in v0.10.0"),
        MultiValueFlags("0.8.6", "0.34.0", _names("cuda-graph-sizes"),
                        "SchedulerConfig.cuda_graph_sizes list[int] (arg_utils.py@v0.9.0 .. @v0.11.0); not in "
                        "v0.8.5 nor v0.34.0"),
        MultiValueFlags("0.8.6", None, _names("collect-detailed-traces ignore-patterns"),
                        "ObservabilityConfig.collect_detailed_traces, LoadConfig.ignore_patterns list "
                        "(arg_utils.py@v0.9.0 .. @v0.34.0)"),
        MultiValueFlags("0.10.1", None, _names("allowed-media-domains logits-processors api-key"),
                        "ModelConfig.allowed_media_domains, .logits_processors, FrontendArgs.api_key list "
                        "(arg_utils.py and cli_args.py@v0.11.0, @v0.34.0; not in v0.10.0)"),
        MultiValueFlags("0.11.1", None, _names("cudagraph-capture-sizes kv-cache-dtype-skip-layers "
                                               "lora-target-modules numa-bind-cpus numa-bind-nodes "
                                               "sleep-preserve-parameter-names"),
                        "CompilationConfig.cudagraph_capture_sizes, CacheConfig.kv_cache_dtype_skip_layers, "
                        "LoRAConfig.target_modules, ParallelConfig.numa_bind_cpus/_nodes, "
                        "ModelConfig.sleep_preserve_parameter_names list (arg_utils.py@v0.34.0; not in v0.11.0)"),
    ),
    "sglang": (
        MultiValueFlags("0.0.0", None, _names(
            "lora-paths lora-target-modules numa-node custom-weight-loader tokenizer-metrics-allowed-custom-labels "
            "bucket-time-to-first-token bucket-inter-token-latency bucket-e2e-request-latency prompt-tokens-buckets "
            "generation-tokens-buckets debug-tensor-dump-layers"),
            "server_args.py@v0.5.5 nargs='+' / '*'; arg_groups/fields/*.py@v0.5.23 List fields"),
        MultiValueFlags("0.0.0", "0.5.20", _names("cuda-graph-bs"),
                        "server_args.py@v0.5.5 nargs='+'; a legacy flag from 0.5.20 (profiles.SGLANG_GRAPH_ARGS)"),
        MultiValueFlags("0.5.6", None, _names(
            "cuda-graph-bs-decode cuda-graph-bs-prefill gc-threshold encoder-urls encoder-register-urls "
            "return-aux-hidden-state-layer-ids flashinfer-autotune-skip-ops allowed-media-domains log-requests-target "
            "uvicorn-access-log-exclude-prefixes prefill-delayer-forward-passes-buckets "
            "prefill-delayer-wait-seconds-buckets"),
            "arg_groups/fields/{device,disagg,exec_,mm,observability,schedule}.py@v0.5.23 List fields "
            "(arg_groups/arg_utils.py nargs '+'); not in server_args.py@v0.5.5"),
    ),
}


@functools.lru_cache(maxsize=256)
def multi_value_flags(family: str | None, version: str | None = None) -> frozenset[str]:
    """The flags of an engine release that take several values. Without a readable version: those of every
    release, so that no release's list is reported."""
    rows = MULTI_VALUE_FLAGS.get(family or "", ())
    parsed = parse_version(version)
    names: set[str] = set()
    for row in rows:
        if parsed is None or (parsed >= _version(row.since) and (row.until is None or parsed < _version(row.until))):
            names |= row.flags
    return frozenset(names)


def _version(text: str) -> Version:
    parsed = parse_version(text)
    assert parsed is not None, text  # the table's own bounds
    return parsed


AUTO_MAX_MODEL_LEN = -1  # vLLM's value for `--max-model-len auto`: the longest length that fits
LLAMACPP_AUTO_LAYERS, LLAMACPP_ALL_LAYERS = -1, -2  # llama.cpp's values for -ngl auto / all
LLAMACPP_AUTO_PARALLEL = -1


class FlagValueError(ValueError):
    """A backend flag's value the engine would refuse; the message names the flag, the value and the rule."""

    def __init__(self, key: str, value: str | None, reason: str, *, warning: bool = False):
        # warning: the engine may still start (a plugin can register the value), so the finding is a warning
        self.key, self.value, self.reason, self.warning = key, value, reason, warning
        super().__init__(f"--{key} {shown(value)}: {reason}")


def shown(value: str | None) -> str:
    if value is None:
        return "without a value"
    value = masked_value(value)  # a URL's password is masked before the cut: a cut one is no longer a URL
    text = value if len(value) <= VALUE_SHOWN else value[:VALUE_SHOWN] + "…"
    return repr(text)


class _Refused(ValueError):
    """A parser's refusal; the caller adds the flag and the value."""


# --- the engines' own value parsers ------------------------------------------------------------------------

def python_int(text: str) -> int:
    """argparse `type=int`: Python's int(), which strips whitespace and takes `+7`, `1_000` but not `2.0`."""
    try:
        return int(text)
    except ValueError:
        raise _Refused("not a whole number") from None


def python_float(text: str) -> float:
    """argparse `type=float`: Python's float(), which also takes `nan` and `inf` (the range checks refuse them)."""
    try:
        return float(text)
    except ValueError:
        raise _Refused("not a number") from None


_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL_SUFFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_readable_int(text: str) -> int:
    """vLLM's human_readable_int: `25.6k` = 25,600 (lower case: powers of 1000, decimals allowed), `16K` = 16,384
    (upper case: powers of 1024, whole numbers only), otherwise Python's int()."""
    stripped = text.strip()
    match = _HUMAN.fullmatch(stripped)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL_SUFFIX:
            return int(float(number) * _DECIMAL_SUFFIX[suffix])
        if "." in number:
            raise _Refused(f"decimals are not allowed with the binary suffix {suffix} (use {suffix.lower()})")
        return int(number) * _BINARY_SUFFIX[suffix]
    return python_int(stripped)


def human_readable_int_or_auto(text: str) -> int:
    stripped = text.strip()
    if stripped == "-1" or stripped.lower() == "auto":
        return AUTO_MAX_MODEL_LEN
    return human_readable_int(stripped)


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _sglang_human() -> re.Pattern[str]:
    return re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


_SI_SUFFIX = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def sglang_human_readable_int(text: str) -> int:
    """SGLang's human_readable_int (case-sensitive, unlike vLLM's): SI `k`, `M`, `G`, `T` (decimals allowed,
    `25.6k` = 25,600), IEC `Ki`, `Mi`, `Gi`, `Ti` (whole numbers only, `1Mi` = 1,048,576); `16K` is refused."""
    stripped = text.strip()
    match = _sglang_human().fullmatch(stripped)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC_SUFFIX:
            if "." in number:
                raise _Refused(f"decimals are not allowed with the IEC suffix {suffix}")
            return int(number) * _IEC_SUFFIX[suffix]
        from decimal import Decimal  # here: only a decimal with an SI suffix needs it (~4 M instructions to import)

        return int(Decimal(number) * _SI_SUFFIX[suffix])
    return python_int(stripped)


_C_SPACE = " \t\n\v\f\r"
_INT32 = (-(2**31), 2**31 - 1)


def cpp_stoi(text: str) -> int:
    """std::stoi: leading C whitespace, an optional sign, then the longest run of ASCII digits; what follows is
    ignored (`8k` is 8, `2.5` is 2). No digit: invalid_argument; outside int32: out_of_range."""
    match = re.match(r"[+-]?[0-9]+", text.lstrip(_C_SPACE))
    if not match:
        raise _Refused("not a whole number (std::stoi finds no digits)")
    number = int(match.group())
    if not _INT32[0] <= number <= _INT32[1]:
        raise _Refused("out of the int range (std::stoi)")
    return number


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _c_float() -> re.Pattern[str]:
    return re.compile(r"[+-]?(?:(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)"
                      r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                      r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.IGNORECASE)


_FLOAT32_MAX = 3.4028234663852886e38


def cpp_stof(text: str) -> float:
    """std::stof (strtof): leading C whitespace, then the longest decimal, hex, inf or nan prefix; the rest is
    ignored. No number: invalid_argument; beyond float's range: out_of_range."""
    match = _c_float().match(text.lstrip(_C_SPACE))
    if not match:
        raise _Refused("not a number (std::stof finds none)")
    body = match.group()
    low = body.lower().lstrip("+-")
    sign = -1.0 if body.startswith("-") else 1.0
    if low.startswith(("inf", "nan")):
        return sign * (math.inf if low.startswith("inf") else math.nan)
    number = float.fromhex(body) if "x" in low else float(body)
    if abs(number) > _FLOAT32_MAX:
        raise _Refused("out of the float range (std::stof)")
    return number


def to_float32(value: float) -> float:
    """A C float's value: rounded to float32, infinite beyond its range (as C arithmetic gives, where Python's
    struct refuses)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


# --- range checks -------------------------------------------------------------------------------------------

@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Range:
    """What the engine accepts after parsing, as a predicate and the words a message uses."""

    __repr__ = fields_repr

    ok: Callable[[Number], bool]
    words: str


FRACTION = Range(lambda v: math.isfinite(v) and 0 < v <= 1, "a fraction in (0, 1]")
POSITIVE = Range(lambda v: v >= 1, "a whole number ≥ 1")
SIZE_OR_ZERO = Range(lambda v: v >= 0, "a whole number ≥ 0 (0 = the model's own length)")
POSITIVE_OR_AUTO_LEN = Range(lambda v: v >= 1 or v == AUTO_MAX_MODEL_LEN, "a whole number ≥ 1, 'auto' or -1")
POSITIVE_OR_DISABLED = Range(lambda v: v >= 1 or v == -1, "a whole number ≥ 1, or -1 (chunked prefill off)")
POSITIVE_OR_AUTO = Range(lambda v: v >= 1 or v == LLAMACPP_AUTO_PARALLEL, "a whole number ≥ 1, or -1 (auto)")
LAYERS = Range(lambda v: v >= -1, "a number of layers ≥ 0 (-1 = the default)")
LAYERS_AUTO = Range(lambda v: v >= LLAMACPP_ALL_LAYERS, "a number of layers ≥ 0, 'auto' (-1) or 'all' (-2)")
BYTES = Range(lambda v: v >= 1, "a size ≥ 1 byte")
GIB_OR_ZERO = Range(lambda v: math.isfinite(v) and v >= 0, "a number of GiB ≥ 0")
POSITIVE_RATIO = Range(lambda v: math.isfinite(v) and v > 0, "a ratio > 0")
WHOLE = Range(lambda v: True, "a whole number")


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class NumericFlag:
    """A numeric engine flag: how the engine parses it and the range it accepts."""

    __repr__ = fields_repr

    key: str  # canonical flag name (args.canonical_key)
    parse: Callable[[str], Value]
    range: Range
    engine_type: str  # how the engine parses it, for the message


def _llamacpp_layers(text: str) -> int:
    if text == "auto":
        return LLAMACPP_AUTO_LAYERS
    if text == "all":
        return LLAMACPP_ALL_LAYERS
    return cpp_stoi(text)


# llama_max_devices() (src/llama.cpp): --tensor-split and --fit-target refuse a list of this many values or more
# ("got N input configs, but system only has 16 devices", common/arg.cpp)
LLAMACPP_MAX_DEVICES = 16


def _llamacpp_device_items(text: str) -> list[str]:
    """A per-device list as common/arg.cpp splits it: runs of `,` and `/` (std::regex `[,/]+`), fewer items than
    llama_max_devices()."""
    items = re.split(r"[,/]+", text)
    if items and items[-1] == "":
        items = items[:-1]  # std::sregex_token_iterator yields no empty last token
    if len(items) >= LLAMACPP_MAX_DEVICES:
        raise _Refused(f"{len(items)} values; llama.cpp takes at most {LLAMACPP_MAX_DEVICES - 1} "
                       f"(llama_max_devices() is {LLAMACPP_MAX_DEVICES})")
    return items


_UINT64_MAX = 2**64 - 1


def cpp_stoull(text: str) -> int:
    """std::stoull: leading C whitespace, an optional sign, then the longest run of ASCII digits; the rest is
    ignored. No digit: invalid_argument; above 2^64 - 1: out_of_range. A minus sign wraps the value (strtoull), which
    no caller means, so it is refused here."""
    match = re.match(r"([+-]?)([0-9]+)", text.lstrip(_C_SPACE))
    if not match:
        raise _Refused("not a whole number (std::stoull finds no digits)")
    number = int(match.group(2))
    if number > _UINT64_MAX:
        raise _Refused("out of the unsigned long long range (std::stoull)")
    if match.group(1) == "-" and number:
        raise _Refused(f"negative: std::stoull wraps -{number} to {_UINT64_MAX + 1 - number:,}")
    return number


# --fit-target is MiB multiplied into a size_t: past this many MiB the product wraps (2^64 bytes)
LLAMACPP_FIT_TARGET_MAX_MIB = 2**44 - 1


def _llamacpp_mib_list(text: str) -> tuple[int, ...]:
    """--fit-target: MiB per device (one value broadcast), split as --tensor-split, each through std::stoull."""
    mib = tuple(cpp_stoull(item) for item in _llamacpp_device_items(text))
    if not mib:
        raise _Refused("no values")
    if any(value > LLAMACPP_FIT_TARGET_MAX_MIB for value in mib):
        raise _Refused(f"over {LLAMACPP_FIT_TARGET_MAX_MIB:,} MiB, where MiB x 1,048,576 wraps in llama.cpp's size_t")
    return mib


def _llamacpp_split(text: str) -> tuple[float, ...]:
    """--tensor-split: items split on runs of `,` and `/` (std::regex `[,/]+`), each through std::stof."""
    items = _llamacpp_device_items(text)
    fractions = []
    for item in items:
        value = cpp_stof(item)
        if not math.isfinite(value) or value < 0:
            raise _Refused(f"'{item.strip()}' is not a proportion ≥ 0")
        fractions.append(value)
    if not fractions:
        raise _Refused("no proportions")
    total = 0.0
    for value in fractions:  # load_tensors sums them in float: an infinite sum leaves no split point to place by
        total = to_float32(total + to_float32(value))
    if math.isinf(total):
        raise _Refused("the proportions add up beyond float's range, so llama.cpp cannot place a layer")
    return tuple(fractions)


def _size_bytes(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _at_least(parsed: Version | None, bound: str) -> bool:
    """A release at or after a parser change; a version gsg cannot read (a custom build's tag) gets the newest
    parser, which accepts the most, so an unreadable tag never turns a valid value into a report."""
    limit = parse_version(bound)
    return parsed is None or (limit is not None and parsed >= limit)


PYTHON_INT, PYTHON_FLOAT = "argparse int", "argparse float"
HUMAN_INT = "human_readable_int: 16k = 16,000, 16K = 16,384"


def _vllm_flags(version: str | None) -> dict[str, NumericFlag]:
    parsed = parse_version(version)

    def since(bound: str) -> bool:
        return _at_least(parsed, bound)

    if since(VLLM_AUTO_LEN_SINCE):
        length = NumericFlag("max-model-len", human_readable_int_or_auto, POSITIVE_OR_AUTO_LEN, HUMAN_INT + " or auto")
    elif since(VLLM_HUMAN_LEN_SINCE):
        length = NumericFlag("max-model-len", human_readable_int, POSITIVE, HUMAN_INT)
    else:
        length = NumericFlag("max-model-len", python_int, POSITIVE, PYTHON_INT)
    if since(VLLM_HUMAN_BATCHED_SINCE):
        batched = NumericFlag("max-num-batched-tokens", human_readable_int, POSITIVE, HUMAN_INT)
    else:
        batched = NumericFlag("max-num-batched-tokens", python_int, POSITIVE, PYTHON_INT)
    flags = [
        NumericFlag("gpu-memory-utilization", python_float, FRACTION, PYTHON_FLOAT),
        length, batched,
        NumericFlag("max-num-seqs", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("tensor-parallel-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("pipeline-parallel-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("block-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("num-gpu-blocks-override", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("num-scheduler-steps", python_int, POSITIVE, PYTHON_INT),
        # gsg reads --kv-cache-memory (argparse's abbreviation of --kv-cache-memory-bytes) with units
        NumericFlag("kv-cache-memory", _size_bytes, BYTES, "a size"),
        NumericFlag("cpu-offload-gb", python_float, GIB_OR_ZERO, PYTHON_FLOAT),
        NumericFlag("max-loras", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("max-lora-rank", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("max-cudagraph-capture-size", python_int, POSITIVE, PYTHON_INT),
        # config/cache.py mamba_block_size: int, Field(gt=0) (@v0.12.0 .. @v0.34.0)
        NumericFlag("mamba-block-size", python_int, POSITIVE, PYTHON_INT),
    ]
    return {f.key: f for f in flags}


SGLANG_HUMAN_INT = "human_readable_int: 16k = 16,000, 16Ki = 16,384"


def _sglang_flags(version: str | None) -> dict[str, NumericFlag]:
    parsed = parse_version(version)
    human = _at_least(parsed, SGLANG_HUMAN_SINCE)
    tokens = (sglang_human_readable_int, SGLANG_HUMAN_INT) if human else (python_int, PYTHON_INT)
    flags = (
        NumericFlag("mem-fraction-static", python_float, FRACTION, PYTHON_FLOAT),
        NumericFlag("context-length", tokens[0], POSITIVE, tokens[1]),
        NumericFlag("max-running-requests", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("max-total-tokens", tokens[0], POSITIVE, tokens[1]),
        NumericFlag("chunked-prefill-size", python_int, POSITIVE_OR_DISABLED, PYTHON_INT),
        NumericFlag("cuda-graph-max-bs", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("tp-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("pp-size", python_int, POSITIVE, PYTHON_INT),
        # DP attention's size (--dp-size with --enable-dp-attention; --attn-dp-size from 0.5.22): the default
        # fraction's reserve grows with it (profiles.SGLANG_DP_ATTENTION_RESERVE)
        NumericFlag("dp-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("attn-dp-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("page-size", python_int, POSITIVE, PYTHON_INT),
        # a Gated DeltaNet hybrid's mamba pool (engines/sglang.gated_delta_pools)
        NumericFlag("max-mamba-cache-size", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("mamba-full-memory-ratio", python_float, POSITIVE_RATIO, PYTHON_FLOAT),
        # a sliding-window model's second pool (engines/sglang.hybrid_swa_row): its tokens per full-pool token
        NumericFlag("swa-full-tokens-ratio", python_float, FRACTION, PYTHON_FLOAT),
        # an EAGLE-style draft's shape: what a Gated DeltaNet target's intermediate mamba states scale with
        NumericFlag("speculative-num-steps", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("speculative-eagle-topk", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("speculative-num-draft-tokens", python_int, POSITIVE, PYTHON_INT),
        # the LoRA memory pool's slots and rank (core/memory/lora.py)
        NumericFlag("max-loras-per-batch", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("max-lora-rank", python_int, POSITIVE, PYTHON_INT),
        # what picks a multimodal model's feature transport, and with it the KV budget's reserve
        # (engines/sglang.multimodal_kv_reserve)
        NumericFlag("nnodes", python_int, POSITIVE, PYTHON_INT),
        NumericFlag("mm-preprocess-cache-size-mb", python_int, WHOLE, PYTHON_INT),
    )
    return {f.key: f for f in flags}


STOI = "std::stoi"


def llamacpp_auto_default(version: str | None) -> bool:
    """Whether llama-server's slot count is automatic (-np -1) when -np is not given."""
    return _at_least(parse_version(version or DEFAULT_VERSIONS["llamacpp"]), LLAMACPP_AUTO_SINCE)


def _llamacpp_flags(version: str | None) -> dict[str, NumericFlag]:
    parsed = parse_version(version)
    recent = _at_least(parsed, LLAMACPP_AUTO_SINCE)
    flags: tuple[NumericFlag, ...] = (
        NumericFlag("ctx-size", cpp_stoi, SIZE_OR_ZERO, STOI),
        NumericFlag("parallel", cpp_stoi, POSITIVE_OR_AUTO if recent else POSITIVE, STOI),
        NumericFlag("gpu-layers", _llamacpp_layers if recent else cpp_stoi, LAYERS_AUTO if recent else LAYERS,
              "std::stoi, 'auto' or 'all'" if recent else STOI),
        NumericFlag("batch-size", cpp_stoi, POSITIVE, STOI),
        NumericFlag("ubatch-size", cpp_stoi, POSITIVE, STOI),
        NumericFlag("tensor-split", _llamacpp_split, Range(lambda v: True, "proportions ≥ 0 separated by , or /"),
              "std::stof per item"),
        NumericFlag("fit-target", _llamacpp_mib_list, Range(lambda v: True, "whole MiB ≥ 0 separated by , or /"),
                    "std::stoull per item"),
        # any int: a negative one is a uint32 above every context in fit.cpp, so --fit never shortens it
        NumericFlag("fit-ctx", cpp_stoi, Range(lambda v: True, "a whole number of cells"), STOI),
    )
    # any int: tools/server reads only N > 0 as set
    if _at_least(parse_version(version or DEFAULT_VERSIONS["llamacpp"]), P.LLAMACPP_KV_PER_SLOT_SINCE):
        flags += (NumericFlag("kv-unified-per-slot", cpp_stoi, WHOLE, STOI),)
    return {f.key: f for f in flags}


_TABLES: dict[tuple[str, str | None], dict[str, NumericFlag]] = {}


def numeric_flags(family: str, version: str | None) -> dict[str, NumericFlag]:
    """The numeric flags gsg reads for an engine release (empty for engines without arithmetic); an unset
    version is the one the arithmetic assumes (DEFAULT_VERSIONS)."""
    version = version or DEFAULT_VERSIONS.get(family)
    key = (family, version)
    if key not in _TABLES:
        if family == "vllm":
            _TABLES[key] = _vllm_flags(version)
        elif family == "sglang":
            _TABLES[key] = _sglang_flags(version)
        elif family == "llamacpp":
            _TABLES[key] = _llamacpp_flags(version)
        else:
            _TABLES[key] = {}
    return _TABLES[key]


ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp"}


# Readings the engine accepts, memoised: a spec tree repeats the same few flag values in every spec (10,000 specs:
# 42,000 readings, a few dozen distinct; ~60 ms). Keyed by the flag's name and text, checked to be the same flag
# object (the tables above live for the process); refusals are not kept (their messages name the release).
MAX_READINGS_KEPT = 4_096  # distinct readings kept; past it, new ones are read each time
_READINGS: dict[tuple[str, str], tuple[NumericFlag, Value]] = {}


def read_value(flag: NumericFlag, value: str | None, family: str, version: str | None = None) -> Value:
    """The engine's reading of one flag's value; FlagValueError when the engine would refuse it."""
    if value is not None:
        kept = _READINGS.get((flag.key, value))
        if kept is not None and kept[0] is flag:
            return kept[1]
    parsed = _read_value(flag, value, family, version)
    if value is not None and len(_READINGS) < MAX_READINGS_KEPT:
        _READINGS[(flag.key, value)] = (flag, parsed)
    return parsed


def _read_value(flag: NumericFlag, value: str | None, family: str, version: str | None) -> Value:
    version = version or DEFAULT_VERSIONS.get(family)
    engine = ENGINE_NAMES.get(family, family) + (f" {version}" if version else "")
    if value is None:
        raise FlagValueError(flag.key, value, f"{engine} needs a value: {flag.range.words}")
    try:
        parsed = flag.parse(value)
    except _Refused as exc:
        raise FlagValueError(flag.key, value, f"{exc}; {engine} ({flag.engine_type}) accepts "
                                              f"{flag.range.words}") from None
    if not isinstance(parsed, tuple) and not flag.range.ok(parsed):
        raise FlagValueError(flag.key, value, f"{engine} accepts {flag.range.words}, not {_number(parsed)}")
    if isinstance(parsed, int) and abs(parsed) > MAX_FLAG_INT and flag.key not in _BOUNDED_ELSEWHERE:
        # Python's int has no bound, but the arithmetic's floats do (1e400 tokens overflowed it: an internal error)
        raise FlagValueError(flag.key, value, f"a whole number of {len(str(abs(parsed))):,} digits, past gsg's limit "
                                              f"for a flag's number, {MAX_FLAG_INT:,} (int64, what the engines' "
                                              "tensors and kernels count with)")
    return parsed


MAX_FLAG_INT = 2**63 - 1
# parallel sizes meet a tighter bound with its own message (more GPUs than a worker holds, GSG022 / estimate)
_BOUNDED_ELSEWHERE = frozenset({"tensor-parallel-size", "pipeline-parallel-size", "tp-size", "pp-size"})


def _number(value: Number) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


# Sizing flags of one engine that another engine's parser does not know, with that engine's own spelling (None: no
# counterpart). Both parse with argparse and exit on an unrecognized argument (status 2) before loading anything,
# and gsg's arithmetic never reads the foreign flag: the spec would size one thing and start nothing.
# Read from vLLM vllm/engine/arg_utils.py and vllm/config/ (0.10.1, 0.11.0, 0.34.0: none of the SGLang or llama.cpp
# names; FlexibleArgumentParser keeps argparse's parse_args) and SGLang python/sglang/srt/server_args.py (0.5.2:
# prepare_server_args uses a plain argparse.ArgumentParser; no --max-model-len, --gpu-memory-utilization,
# --max-num-seqs, --gpu-layers, --n-gpu-layers, --ctx-size; no flag they abbreviate).
FOREIGN_FLAGS: dict[str, dict[str, tuple[str, str | None]]] = {
    "vllm": {"mem-fraction-static": ("SGLang", "--gpu-memory-utilization"),
             "context-length": ("SGLang", "--max-model-len"),
             "max-running-requests": ("SGLang", "--max-num-seqs"),
             "tp-size": ("SGLang", "--tensor-parallel-size"),
             "n-gpu-layers": ("llama.cpp", None), "gpu-layers": ("llama.cpp", None),
             "ctx-size": ("llama.cpp", "--max-model-len")},
    "sglang": {"max-model-len": ("vLLM", "--context-length"),
               "gpu-memory-utilization": ("vLLM", "--mem-fraction-static"),
               "max-num-seqs": ("vLLM", "--max-running-requests"),
               "n-gpu-layers": ("llama.cpp", None), "gpu-layers": ("llama.cpp", None),
               "ctx-size": ("llama.cpp", "--context-length")},
}


def foreign(key: str, value: str | None, family: str) -> FlagValueError | None:
    """A sizing flag of another engine that this engine's parser refuses (FOREIGN_FLAGS), or None."""
    other = FOREIGN_FLAGS.get(family, {}).get(key)
    if other is None:
        return None
    owner, own = other
    engine = ENGINE_NAMES[family]
    spelled = f"; {engine} spells it {own}" if own else f"; {engine} has no such setting"
    return FlagValueError(key, value, f"not a flag of {engine} but of {owner} ({engine} exits at start-up on an "
                                      f"unrecognized argument, and gsg's arithmetic does not read it){spelled}")


def _json_refusal(key: str, value: str | None, family: str) -> FlagValueError | None:
    """vLLM's JSON flags whose text its parser refuses at start-up: --compilation-config other than a level number
    (a dataclass read with pydantic's validate_json, arg_utils.get_kwargs), and --hf-overrides written as a JSON
    object ('{...}': union_dict_and_str hands it to json.loads; other text is kept as a string). Read from vLLM
    vllm/engine/arg_utils.py at v0.11.0; nesting past gsg's JSON depth limit is refused as well."""
    if family != "vllm" or value is None or key not in ("compilation-config", "hf-overrides"):
        return None
    text = value.strip()
    if key == "compilation-config" and text.isascii() and text.isdigit():
        return None
    if key == "hf-overrides" and not (text.startswith("{") and text.endswith("}")):
        return None
    import json  # here: most specs set neither flag (import budget)

    from gpustack_guard.core.json_depth import MAX_JSON_DEPTH, nests_deeper
    if nests_deeper(text):  # gsg's own limit (json's depth differs by Python release): said as such
        return FlagValueError(key, value, f"nested deeper than {MAX_JSON_DEPTH} levels, gsg's limit for a JSON flag")
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        return None
    return FlagValueError(key, value, "not a JSON object (vLLM's parser exits at start-up on it)")


# the words an on|off flag of llama.cpp takes (common/arg.cpp)
_ON_OFF_WORDS = {"flash-attn": "on, off or auto", "fit": "on or off"}
# how each engine's parser meets a value after a switch
_SWITCH_VALUE_REFUSAL = {"vllm": "argparse: ignored explicit argument", "sglang": "argparse: ignored explicit argument",
                         "llamacpp": "common/arg.cpp reads the value as an argument of its own: invalid argument"}


def _switch_refusal(key: str, value: str | None, family: str, version: str | None) -> FlagValueError | None:
    """A switch given a value, or an on|off flag given none, in a release gsg has read (profiles.SWITCH_FLAGS):
    `--enforce-eager=false` is no 'off' to the engine but an exit at start-up."""
    row = P.switch_row(family, parse_version(version))
    if row is None:
        return None
    engine = f"{ENGINE_NAMES[family]} {version}"
    if key in row.needs_value:
        if value is not None:
            return None  # the value's words: the arithmetic's reader (engines/llamacpp.flash_attention_on, fit_active)
        words = _ON_OFF_WORDS.get(key, "on or off")
        return FlagValueError(key, value, f"{engine} reads a value after --{key} ({words}): alone, it takes the next "
                                          "argument as that value, or exits at start-up with none left; write "
                                          f"--{key} on or --{key} off")
    if value is None:
        return None
    if key in row.true_false:
        if value.lower() in ("true", "false"):
            return None
        return FlagValueError(key, value, f"{engine} takes true or false (any case) or no value here and exits at "
                                          "start-up on anything else")
    if key not in row.flags:
        return None
    return FlagValueError(key, value, f"{engine} reads --{key} as a switch that takes no value and exits at start-up "
                                      f"on one ({_SWITCH_VALUE_REFUSAL[family]}); write --{key} alone to turn it on, "
                                      "or leave it out")


def _choice_refusal(key: str, value: str | None, family: str, version: str | None) -> FlagValueError | None:
    """A value outside the release's argparse choices (profiles.CHOICE_FLAGS), compared as argparse does: exactly,
    so `FP8` and an empty value are refused. A release gsg has not read: None."""
    row = P.choice_row(family, key, parse_version(version))
    if row is None or value in row.unset:
        return None
    compared = value.lower() if row.folded and value is not None else value
    if compared in row.choices:
        return None
    engine = f"{ENGINE_NAMES[family]} {version}"
    if row.plugins:
        if value is None:  # argparse: "expected one argument"
            return FlagValueError(key, value, f"{engine} takes a value here and exits at start-up without one")
        case = "; any case" if row.folded else "; exactly as written"
        return FlagValueError(key, value, f"not a {row.noun} built into {engine} ({', '.join(row.choices)}{case}): "
                                          f"it exits at start-up ('{row.refusal}') unless {row.registrar} "
                                          f"registers that name{row.after}", warning=True)
    return FlagValueError(key, value, f"{engine} accepts {', '.join(row.choices)} (argparse choices, case-sensitive) "
                                      "and exits at start-up on anything else")


def check(key: str, value: str | None, family: str, version: str | None) -> FlagValueError | None:
    """The refusal of one flag's value, or None when the engine accepts it (or gsg does not read the flag)."""
    refused = (foreign(key, value, family) or _json_refusal(key, value, family)
               or _switch_refusal(key, value, family, version) or _choice_refusal(key, value, family, version))
    if refused is not None:
        return refused
    flag = numeric_flags(family, version).get(key)
    if flag is None:
        return None
    try:
        read_value(flag, value, family, version)
    except FlagValueError as exc:
        # returned as a value: without its traceback and context, which hold this frame and the frames that
        # raised it in a reference cycle (garbage only the cyclic collector frees; validate pauses it)
        exc.__context__ = None
        return exc.with_traceback(None)
    return None


def read(flags: dict[str, str | None], key: str, family: str, version: str | None) -> Value | None:
    """The engine's value of a flag (None when unset); raises FlagValueError when the engine would refuse it."""
    if key not in flags:
        return None
    flag = numeric_flags(family, version).get(key)
    if flag is None:
        raise KeyError(f"gsg reads no numeric flag --{key} for {family}")
    return read_value(flag, flags[key], family, version)
