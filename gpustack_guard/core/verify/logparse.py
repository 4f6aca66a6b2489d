"""An engine's start-up log, line by line, into observed terms (pure: text in, terms out).

Lines come from an iterator (the adapter reads the file streaming, with a size and a line-length cap), so a log
of any length is read in bounded memory: only the figures of the table in `patterns.py` are kept. Unknown lines
are ignored; the essential lines an engine always prints are reported by name when missing.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from gpustack_guard.core.secrets import (
    MASK,
    URL_SCHEME,
    is_secret_flag,
    is_secret_key,
    is_secret_value,
    mask_url,
    url_secrets,
)
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.log_records import CRI_MAX_JOINED_CHARS, CriJoiner, unwrap_entry_array, unwrap_record
from gpustack_guard.core.verify.sift import Sifter
from gpustack_guard.core.versions import version_lt

MAX_LOG_FIGURE = 10**18  # bytes, tokens or blocks: an exabyte, past any deployment; a larger figure is no reading
MAX_FIGURE_DIGITS = 24  # longer digit runs are not converted at all (int() of 5,000 digits is refused by Python)
MAX_RANKS = 1024  # workers and devices kept apart; a log naming more is not one deployment's start-up
MAX_FAILURE_CHARS = 300  # the engine's reason, as printed, in one line
MAX_ARG_VALUE_CHARS = 4096  # an argument value longer than this is kept as text, never evaluated
MAX_ARG_NESTING = 16  # brackets deeper than this are kept as text (literal_eval recurses)
# Argument and config dumps (vLLM's non-default args and engine config, SGLang's server_args) cost about a
# millisecond each to read; a start-up prints one or two, a restart the same again. A log repeating or varying
# them by the thousand (32 MiB of them is ~45,000) would take minutes: the same text is read once, and at most
# this many different ones are read per log (a note says so past it).
MAX_ARGUMENT_DUMPS = 64
# A line this long that a start-up printed before is not searched again: the patterns it matched are kept
# (repeated long lines are a hostile log's cheapest shape; short lines are cheaper to search than to hash).
MEMO_MIN_CHARS = 256
MAX_MEMO_CHARS = 4 * 1024 * 1024  # the long lines kept for that, in all: a bounded share of verify's memory
# A failure the engine went on from (llama.cpp's retry, a later success) is kept as a note; a log alternating the
# two by the thousand would print a note for each: past this many, the rest are counted in one note.
MAX_RECOVERY_NOTES = 8
TEXT_KINDS = ("version", "args", "arg-update", "model", "marker")  # lines read for what ran, not for a figure
OUTCOME_KINDS = ("started", "recovery")  # lines that say a start-up came up or went on after a failure
METADATA_DUMP = "llama_model_loader: - kv "  # llama.cpp's dump of the GGUF's key/values, one per line
OTHER_ENGINE_HITS = 3  # another engine's lines this many times: the log holds two engines' start-ups (a note)
DEFAULT_BLOCK_SIZE = 16  # vLLM's default --block-size on CUDA since 0.2 (tokens = blocks x block size)
# V1's engine core sizes each worker's pool and logs it ("GPU KV cache size", "Maximum concurrency"; "# GPU blocks"
# in 0.7) once per worker, unprefixed, then gives every worker the smallest (v1/engine/core.py@v0.8.4
# _initialize_kv_caches: get_kv_cache_config per worker, then v1/core/kv_cache_utils.py unify_kv_cache_configs'
# min_num_blocks): within one start-up the engine's figure is the least of those lines, not the last
PER_WORKER_POOL_TERMS = frozenset({P.KV_TOKENS, P.MAX_CONCURRENCY, P.GPU_BLOCKS})


# Terminal sequences anywhere in a line: colours and erases (CSI, with tqdm's private `?25l` cursor modes), a
# title or link (OSC, bounded: an unterminated one is left, not searched to the line's end from every start), a
# charset switch (`tput sgr0` writes ESC ( B), and a paste's caret form of a colour
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\^\[\[[0-9;]*m")
# The timestamp a log collector writes before each line (`kubectl logs --timestamps`, `docker logs -t`, Loki and
# CloudWatch exports): ISO 8601 with a `T`, which no engine prints itself (vLLM: `INFO 10-31 15:07:49`; SGLang:
# `[2025-10-31 15:07:49]`). Taken off so that a pattern's look-behind sees the engine's own line.
_COLLECTOR_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]+")
_PIECE_BREAK = re.compile(r"\r\n?|\n")
# Ray's driver folds the lines its workers print alike (numbers aside) into one copy, written after its aggregation
# window with `[repeated Nx across cluster]` at the end, the first time also its notice of the feature
# (ray/_private/ray_logging/__init__.py LogDeduplicator, since Ray 2.4). The suffix is Ray's, not the engine's: a
# pattern ending at the line's end reads the engine's text without it. Found from the end, once: linear.
RAY_FOLD_MARK = "x across cluster]"
_RAY_FOLD = re.compile(r"\[repeated (?P<times>[0-9]{1,9})x across cluster\]"
                       r"(?: \(Ray deduplicates logs by default\.[^()]{0,400}\))?[ \t]*")
# V1's refusal "To serve at least one request with the model's max seq len (N), (X GiB KV cache is needed ..." is one
# line in a log; a note that quotes it reflowed (vLLM 0.23 and 0.28 records, each at the comma after the length)
# leaves its head alone on a line: the head is held and read with the lines that carry its figures
_REFUSAL_HEAD = re.compile(r"To serve at least one request with the models?'s max seq len \([0-9]+\),(?=\W{0,4}$)")
_REFUSAL_FIGURES = re.compile(r"\(?[0-9.]+ GiB KV cache is needed")
_REFUSAL_GOES_ON = re.compile(r"Based on the available memory|Try increasing")
_REFUSAL_DONE = re.compile(r"maximum model length is [0-9]+|Try increasing")
REFUSAL_CARRY_LINES = 3  # the head and at most two lines after it


# 0.10.1 names its workers `VllmWorker TP0`, `VllmWorker PP1_TP0` (v1/executor/multiproc_executor.py@v0.10.1.1)
_VLLM_PROCESS = re.compile(r"\((?P<proc>[A-Za-z]+(?:_[A-Za-z]+\d*)*)(?: rank=(?P<rank>\d+)| "
                           r"(?P<coords>(?:PP\d+_)?TP\d+|PP\d+))? pid=(?P<pid>\d+)[^)]*\)")
# Ray nests its worker's prefix in the engine core's: `(EngineCore_DP0 pid=1) (RayWorkerWrapper pid=2) INFO ...`
_VLLM_NESTED = re.compile(r"\s*" + _VLLM_PROCESS.pattern)
# a worker's coordinates as multiproc_executor.py@v0.34.0 names it: Worker_DP0_PP1_PCP0_TP1_DCP0_EP1
_VLLM_TP = re.compile(r"_(?P<where>(?:TP|PP|DP|EP|PCP|DCP)\d+(?:_(?:TP|PP|DP|EP|PCP|DCP)\d+)*)$")
# `[2026-07-20 08:00:01.123 DP0 PP1 ATTN_CP0 MOE_DP1 TP3 EP3]` (SGLANG_LOG_MS adds the milliseconds;
# scheduler.py@v0.5.23 names the coordinates)
# 0.3.0 to 0.3.3.post1 stamp the time only (utils.py configure_logger datefmt "%H:%M:%S"; the date from 0.3.4)
_SGLANG_RANK = re.compile(r"\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d+)?(?P<ranks>(?: [A-Z]+(?:_[A-Z]+)*\d+)+)\]")
_EXCEPTION = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception)|torch\.OutOfMemoryError): ")
MAIN = "main"
KEY_NAME_MAX_CHARS = 128  # an argument's name in a dump; past it the name's last 128 characters are read
HOST_DEVICE = re.compile(r"^(?:CPU.*|.*_Host|.*_Mapped)$")
# llama.cpp's own buffer lines: where a log has one, ollama's memory summary was its estimate (P.OLLAMA_LAYOUT)
LLAMACPP_BUFFER_LINES = ("llamacpp-model-buffer", "llamacpp-kv-buffer", "llamacpp-vram-weights")

ESSENTIAL = {
    P.VLLM: ((P.WEIGHTS, "'Model loading took' (V1) or 'Loading model weights took' (V0)"),
             (P.KV_TOKENS, "'GPU KV cache size' (V1) or '# GPU blocks' (V0)")),
    P.SGLANG: ((P.WEIGHTS, "'Load weight end'"), (P.KV_TOKENS, "'KV Cache is allocated'")),
    P.LLAMACPP: ((P.WEIGHTS, "'model buffer size'"), (P.KV_CACHE, "'KV buffer size'")),
}


# -- secrets ---------------------------------------------------------------------------------------------------

_BEARER = re.compile(r"(?i)(\bBearer\s+)([^\s'\",]+)")
# A name before a separator is bounded (URL_SCHEME, KEY_NAME_MAX_CHARS): unbounded, it is tried from
# every character of a long run without the separator, quadratic in the line (a 32 KiB dump of letters took
# minutes). A longer name is matched by its last characters, the ones that say whether it is a secret.
_URL_PASSWORD = re.compile("(" + URL_SCHEME + r"://[^/\s:@'\"]*:)([^/\s@'\"]+)(@)")
# a URL as printed in a line or an argument value: it ends at a space, a quote or a bracket
_URL_WORD = re.compile(URL_SCHEME + r"://[^\s'\"<>()\[\]{},]+")
# a list value (`'api_key': ['sk-...']`) keeps its bracket and quotes: only the value inside is masked
_KEY_VALUE = re.compile(rf"(?P<key>[A-Za-z_][A-Za-z0-9_.-]{{0,{KEY_NAME_MAX_CHARS - 1}}})"
                        r"(?P<sep>['\"]?\s*[=:]\s*(?:\[\s*)?['\"]?)(?P<value>[^\s,'\"()\[\]{}]+)")
# a secret flag and its value as a command line or an argv list prints them (`--api-key abc`, `'--api-key', 'abc'`)
_FLAG_THEN_VALUE = re.compile(rf"(?P<flag>--[A-Za-z][A-Za-z0-9_-]{{0,{KEY_NAME_MAX_CHARS - 1}}})"
                              r"(?P<sep>['\"]?(?:\s*,\s*|\s+)['\"]?)(?P<value>[^\s,'\"()\[\]{}]+)")
_WORD = re.compile(r"[^\s'\",()\[\]{}<>=]+")
_NOT_A_SECRET = {"none", "null", "false", "true", "''", ""}


def mask_secrets(text: str, found: set[str] | None = None) -> str:
    """A log line with credentials masked: Bearer keys, URLs as mask_url shows them (user info, token and signing
    parameters), values of secret-named keys (api_key=, 'hf_token': ...), token-looking words (hf_..., sk-...).
    Values masked are added to `found` for a final scrub."""
    def hide(value: str) -> str:
        if found is not None:
            found.add(value)
        return MASK

    def url(m: re.Match) -> str:
        if found is not None:
            found.update(value for value in url_secrets(m.group(0)) if MASK not in value)
        return mask_url(m.group(0))

    text = _BEARER.sub(lambda m: m.group(1) + hide(m.group(2)), text)
    # a password with a character the URL pass stops at (a comma, a bracket) is masked whole first
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + hide(m.group(2)) + m.group(3), text)
    text = _URL_WORD.sub(url, text)

    def key_value(m: re.Match) -> str:
        key, value = m.group("key"), m.group("value")
        secret_name = is_secret_flag(key) or (key.isupper() and is_secret_key(key))
        if secret_name and value.lower() not in _NOT_A_SECRET and value != MASK:
            return m.group("key") + m.group("sep") + hide(value)
        return m.group(0)

    text = _KEY_VALUE.sub(key_value, text)

    def flag_value(m: re.Match) -> str:
        value = m.group("value")
        if is_secret_flag(m.group("flag")) and not value.startswith("-") and value.lower() not in _NOT_A_SECRET \
                and MASK not in value:
            return m.group("flag") + m.group("sep") + hide(value)
        return m.group(0)

    text = _FLAG_THEN_VALUE.sub(flag_value, text)
    def word(m: re.Match) -> str:
        value = m.group(0)
        return hide(value) if MASK not in value and is_secret_value(value) else value

    return _WORD.sub(word, text)


# -- arguments as printed --------------------------------------------------------------------------------------

def split_top_level(text: str) -> list[str]:
    """`a=1, b=[1, 2], c='x, y'` into its items: commas inside brackets and quotes do not split."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]


def _nesting(text: str) -> int:
    deepest = depth = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        deepest = max(deepest, depth)
    return deepest


def literal(value: str) -> object:
    """A printed Python value (0.9, 'auto', None, [1, 2]); anything else (torch.bfloat16, a config object) as text."""
    if len(value) > MAX_ARG_VALUE_CHARS or _nesting(value) > MAX_ARG_NESTING:
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value


def parse_printed_args(text: str) -> dict[str, object]:
    """`Namespace(k=v, ...)`, `ServerArgs(k=v, ...)`, a config line's `k=v, ...` or a dict `{'k': v, ...}`."""
    body = text.strip()
    dict_form = body.startswith("{")
    if dict_form:
        body = body[1:-1] if body.endswith("}") else body[1:]
    elif body.endswith(")"):
        body = body[:-1]
    args: dict[str, object] = {}
    for item in split_top_level(body):
        key, sep, value = item.partition(":" if dict_form else "=")
        key = key.strip().strip("'\"")
        if sep and value.strip() and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):  # a cut line's last key: no value
            args[key] = literal(value.strip())
    return args


# -- the result ------------------------------------------------------------------------------------------------

Number = int | float


@dataclass
class ObservedLog:
    engine: str | None = None
    engine_version: str | None = None
    model: str | None = None
    gpu_name: str | None = None
    args: dict[str, object] = field(default_factory=dict)  # what the engine printed it ran with
    config: dict[str, object] = field(default_factory=dict)  # vLLM's "with config:" line
    ranks: dict[str, dict[str, Number]] = field(default_factory=dict)  # worker or device -> its figures
    engine_terms: dict[str, Number] = field(default_factory=dict)
    started: bool = False
    failure: str | None = None  # the engine's reason, masked, one line
    failure_kind: str | None = None
    failure_line: int | None = None
    lines: int = 0
    matched: dict[str, int] = field(default_factory=dict)  # pattern id -> line number of its first match
    notes: list[str] = field(default_factory=list)
    # SGLang's free-memory differences that came out negative (P.SGLANG_FREE_DIFFERENCES): another process gave
    # memory back while the engine measured; (line, rank, term, bytes given back), the term left unread
    given_back: list[tuple[int, str, str, int]] = field(default_factory=list)

    def gpu_ranks(self) -> dict[str, dict[str, Number]]:
        return {name: terms for name, terms in self.ranks.items() if not HOST_DEVICE.match(name)}

    def binding_rank(self) -> str | None:
        """The worker (or device) whose figures bound the deployment: the smallest KV pool under vLLM and SGLang
        (the engine sizes every rank's pool by the minimum), under SGLang then the rank with the least free memory
        (see `_sglang_headroom`); the fullest device under llama.cpp."""
        ranks = self.gpu_ranks() or self.ranks
        if not ranks:
            return None
        if self.engine == P.LLAMACPP:
            def used(name: str) -> Number:
                terms = ranks[name]
                return sum(terms.get(t, 0) for t in (P.WEIGHTS, P.KV_CACHE, P.COMPUTE_BUFFER))
            return max(ranks, key=used)
        # the pool's bytes, else its tokens where no rank printed bytes (DeepSeek-V4's pool split sizes tokens only):
        # never the first rank listed when a rank's own pool says which one bound
        for pool in (P.KV_CACHE, P.KV_TOKENS):
            with_kv = [name for name in ranks if pool in ranks[name]]
            if not with_kv:
                continue
            if self.engine == P.SGLANG:
                headroom = _sglang_headroom({name: ranks[name] for name in with_kv})
                return min(with_kv, key=lambda name: (ranks[name][pool], headroom(name)))
            return min(with_kv, key=lambda name: ranks[name][pool])
        with_weights = [name for name in ranks if P.WEIGHTS in ranks[name]]
        return max(with_weights, key=lambda name: ranks[name][P.WEIGHTS]) if with_weights else next(iter(ranks))

    def pool_sized(self) -> bool:
        """The start-up sized its KV pool (tokens, blocks or bytes, on any rank or the engine's own line): only then
        does a line saying it serves end it (Uvicorn's line is any server's), and only then is there a pool to
        compare (verify's nothing_to_compare)."""
        pool = (P.KV_TOKENS, P.GPU_BLOCKS, P.KV_CACHE)
        return any(t in self.engine_terms for t in pool) or any(t in terms for terms in self.ranks.values()
                                                                for t in pool)

    def terms(self) -> dict[str, Number]:
        """The deployment's observed terms per GPU: the binding rank's, filled from any rank that printed a term
        the binding one did not, then the engine's own (KV capacity, length, concurrency)."""
        out: dict[str, Number] = {}
        binding = self.binding_rank()
        ordered = ([binding] if binding else []) + [n for n in self.gpu_ranks() if n != binding]
        for name in ordered:
            for term, value in self.ranks[name].items():
                out.setdefault(term, value)
        for term, value in self.engine_terms.items():
            if term == P.KV_TOKENS or term not in out:
                out[term] = value
        if P.KV_TOKENS not in out and P.GPU_BLOCKS in out:
            block = self.block_size()
            out[P.KV_TOKENS] = int(out[P.GPU_BLOCKS]) * block
            out[P.BLOCK_SIZE] = block
        return out

    def block_size(self) -> int:
        value = self.args.get("block_size") or self.config.get("block_size")
        return value if isinstance(value, int) and value > 0 else DEFAULT_BLOCK_SIZE

    def missing(self, version: str | None = None) -> list[str]:
        """The essential lines not found, by name (nothing is missing from a log that ends in a failure). `version`
        is the release the log is of where the log does not print it (a line that release never printed is not
        missing)."""
        if self.engine is None or self.failure:
            return []
        terms = self.terms()
        names = []
        for term, name in ESSENTIAL[self.engine]:
            if term in terms:
                continue
            if self.engine == P.VLLM and term == P.WEIGHTS and \
                    version_lt(self.engine_version or version, P.VLLM_WEIGHTS_LINE_SINCE):
                continue  # before 0.4.0 V0 printed no weights line (llm_engine.py@v0.2.7, @v0.3.3)
            if any(given[2] == term for given in self.given_back):
                continue  # the line was read; its figure is memory another process gave back, not the term's
            if self.engine == P.SGLANG and term == P.WEIGHTS and P.FREE_AFTER_LOAD in terms:
                # SGLang up to 0.4.x: the end line was read but prints no mem usage; the weights are the begin
                # line's free memory less this one's
                name = "'Load weight begin' (this release's 'Load weight end' prints no mem usage)"
            names.append(name)
        return names


def _sglang_headroom(ranks: dict[str, dict[str, Number]]) -> Callable[[str], tuple[Number, ...]]:
    """SGLang sizes every rank's pool from the group's least free memory after the weights (model_runner.py
    profile_max_num_token, get_available_gpu_memory(distributed=True): an all-reduce MIN over the world group),
    so the pools tie and the rank that bound them is the one with the least free memory: after its weights, then
    after its pool (same pool everywhere). Only a figure every compared rank printed is used (one rank's line
    says nothing about the others)."""
    shared = [t for t in (P.FREE_AFTER_LOAD, P.FREE_AFTER_POOL) if all(t in terms for terms in ranks.values())]
    return lambda name: tuple(ranks[name][t] for t in shared)


# -- the parser ------------------------------------------------------------------------------------------------

@dataclass
class _EngineState:
    """What one engine's patterns found; the log's engine is chosen at the end (the one with most matches)."""

    log: ObservedLog
    hits: int = 0
    contexts: int = 0  # llama.cpp: KV and compute buffers of the last context built count (a fit pass runs first)
    failure_rank: int = 0  # how much the failure so far says (_failure_rank): a later line that says more replaces it
    start_ups: int = 1  # start-ups seen in the log (_opens_start_up): only the last one is kept
    recoveries: int = 0  # failures of the start-up read that the engine went on from (MAX_RECOVERY_NOTES)
    served_line: int = 0  # vLLM or SGLang said its start-up is done (P.SERVED_LINES): a later failure is a request's
    # the lines with a failure after that: how many, the first (noted) and the last (a line matching two rows is one)
    after_served: tuple[int, int, int] = (0, 0, 0)
    # SGLang ranks that printed a hybrid SWA split: their pool lines are the full and the sliding pool of one cache
    swa_split: set[str] = field(default_factory=set)
    # llama.cpp: a refused allocation whose purpose the next line names (device or "#index", bytes), and the devices
    # whose compute buffer is a refused reserve (a retry without pipeline parallelism reserves another)
    pending_refusal: tuple[str, int, int] | None = None  # (device or "#index", bytes, line)
    refused: list[tuple[int, str, str, int]] = field(default_factory=list)  # (line, device, term, bytes) booked
    # SGLang ranks whose speculative draft began loading (P.SGLANG_LOAD_LINES): its figures are not the target's
    draft_ranks: set[str] = field(default_factory=set)
    # llama.cpp: the line that began a speculative draft (an MTP context on the target model, or a draft model):
    # the context and buffer lines after it are the draft's, not the target's (P.LLAMACPP_DRAFT_KINDS)
    draft_line: int = 0
    # llama.cpp: a build count no build printing that line can have (P.LLAMACPP_BUILD_LINES_SINCE): (line, count,
    # the first build that printed the line)
    foreign_build: tuple[int, str, int] | None = None
    llamafile_build: int = 0  # llama.cpp: the line printing llamafile's fixed build pair (P.LLAMAFILE_FIXED_BUILD)
    # ollama's last memory summary (P.OLLAMA_LAYOUT): device -> figures, and its load request's engine figures
    layout: dict[str, dict[str, Number]] = field(default_factory=dict)
    layout_engine: dict[str, Number] = field(default_factory=dict)
    layout_closed: bool = False  # its "total memory" line was read: the next summary line begins another
    layout_line: int = 0  # the line the summary kept began on
    # llama.cpp's row split before the buffers named their device ("CUDA_Split"): the weights spread over every
    # device by --tensor-split, in bytes, and the line that printed them (no one device's figure)
    split_weights: tuple[int, int] = (0, 0)
    # llama.cpp: the GGUF files whose load began in this start-up (P.LLAMACPP_LOAD_LINE), by path
    loaded_files: set[str] = field(default_factory=set)
    # llama.cpp: each device's P.LLAMACPP_PRE_LOAD_TERMS read since a buffer last took memory, and the GPU's name
    pre_load: dict[str, dict[str, Number]] = field(default_factory=dict)
    pre_load_gpu: str | None = None
    # llama.cpp: the backend ggml_cuda_init found its devices in (its header names it) and each device's total by
    # the name its buffers use (CUDA1, ROCm1), from the device lines after the header. A device ggml found is not
    # one the model uses (-dev, --tensor-split 0): result() gives the total to the devices that hold a figure. The
    # lines come before llama-server's build line and are the process's, so a restart keeps them; a header begins
    # another process's list.
    gpu_backend: str = "CUDA"
    device_totals: dict[str, Number] = field(default_factory=dict)
    # llama.cpp's vision projector (--mmproj): the device its CLIP backend line named, and whether the lines since
    # are the projector's (its load and warm-up) rather than the text model's: a refused reserve there is its own
    projector: str | None = None
    in_projector: bool = False
    # llama.cpp's --split-mode tensor: the GPUs its Meta device joins, as listed before the model loads (kept over a
    # restart like the device list: the load line that restarts comes after them)
    meta_members: list[str] = field(default_factory=list)
    began: int = 1  # the line the start-up read began on
    # the last earlier start-up that reached an outcome (_complete), as it stood when the next one began: read when
    # the last start-up has none (a restart still loading, a log cut in it)
    last_complete: _EngineState | None = None

    def restart(self) -> None:
        """The engine started again in the same log (a restart, a retry with other flags): the last start-up is
        the deployment as it runs, so what the earlier ones printed is dropped, except the last one that reached
        an outcome (last_complete: its fields are replaced below, never changed in place, so a copy keeps them)."""
        if _complete(self.log):
            self.last_complete = replace(self, last_complete=None)
        self.log = ObservedLog(engine=self.log.engine)
        self.contexts = 0
        self.failure_rank = 0
        self.recoveries = 0
        self.served_line, self.after_served = 0, (0, 0, 0)
        self.swa_split = set()
        self.pending_refusal = None
        self.refused = []
        self.draft_ranks = set()
        self.draft_line = 0
        self.foreign_build = None
        self.llamafile_build = 0
        self.layout, self.layout_engine, self.layout_closed, self.layout_line = {}, {}, False, 0
        self.split_weights = (0, 0)
        self.loaded_files = set()
        self.pre_load, self.pre_load_gpu = {}, None
        self.projector, self.in_projector = None, False
        self.start_ups += 1

    def is_draft_line(self, pattern: P.Pattern, rank: str, groups: dict[str, str | None]) -> bool:
        """An SGLang line of the speculative draft's worker (P.SGLANG_LOAD_LINES): a second load on the rank, then
        any line whose figures the rank already has from the target."""
        if pattern.engine != P.SGLANG or pattern.scope != P.RANK or not pattern.terms:
            return False
        terms = self.log.ranks.get(rank, {})
        seen = any(term in terms for term, _ in pattern.terms.values())
        if "speculative_algorithm" not in self.log.args and seen \
                and (_second_pool(pattern, terms, groups) or _load_beside_target(pattern, terms, groups)):
            # an excerpt without the arguments (or with its arguments line cut): the draft's lines, told apart by
            # what the target still holds
            self.draft_ranks.add(rank)
        elif "speculative_algorithm" not in self.log.args:
            return rank in self.draft_ranks and seen  # only what follows such a pool: its "Memory pool end"
        elif str(self.log.args.get("speculative_algorithm") or "None") in ("None", "NGRAM"):
            return False
        if pattern.id in P.SGLANG_LOAD_LINES and seen:
            self.draft_ranks.add(rank)
        return rank in self.draft_ranks and seen


def _not_the_targets(state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None], line: int) -> bool:
    """A llama.cpp line that says nothing of the target start-up, kept aside for a note: where a speculative draft
    begins, the draft's own context, weights and caches after it, and a build_info count no build printing that
    line can have (a partial clone's own)."""
    if pattern.kind == "draft-begins":
        state.draft_line = state.draft_line or line
        return True
    if state.draft_line and pattern.engine == P.LLAMACPP and (
            pattern.kind in P.LLAMACPP_DRAFT_KINDS or pattern.id in P.LLAMACPP_DRAFT_ROWS):
        return True
    if pattern.engine == P.LLAMACPP and pattern.kind == "version" \
            and (groups.get("version"), groups.get("commit")) == P.LLAMAFILE_FIXED_BUILD:
        state.llamafile_build = state.llamafile_build or line
        return True
    since = P.LLAMACPP_BUILD_LINES_SINCE.get(pattern.id)
    if since and int(groups["version"] or 0) < since:
        state.foreign_build = state.foreign_build or (line, groups["version"] or "", since)
        return True
    return False


def _llamacpp_notes(state: _EngineState) -> list[str]:
    """What the start-up read left aside (_not_the_targets), one note each."""
    notes = []
    if state.foreign_build:
        line, count, since = state.foreign_build
        notes.append(f"line {line:,}: the build line's b{count} is below b{since}, the first build that prints the "
                     "line: a partial clone's own count, not llama.cpp's build, so the build is not known from it")
    if state.llamafile_build:
        notes.append(f"line {state.llamafile_build:,}: build {P.LLAMAFILE_FIXED_BUILD[0]} "
                     f"({P.LLAMAFILE_FIXED_BUILD[1]}) is the pair llamafile prints for any llama.cpp it carries "
                     "(llama.cpp/build-info.cpp, unchanged since November 2023), not the build: give "
                     "--backend-version")
    if state.draft_line:
        notes.append(f"line {state.draft_line:,}: a speculative draft (an MTP context or a draft model) begins: its "
                     "context and buffers after it were not read; the figures are the target's, and gsg's estimate "
                     "sizes the target alone")
    return notes


def _second_pool(pattern: P.Pattern, terms: dict, groups: dict[str, str | None]) -> bool:
    """A second pool after the rank's pool ended, of the same token count: the draft's (pool_configurator.py@v0.5.12
    MemoryPoolConfig is shared by target and draft workers)."""
    return pattern.id in P.SGLANG_POOL_LINES and P.FREE_AFTER_POOL in terms \
        and groups.get(P.KV_TOKENS) is not None \
        and _number(str(groups[P.KV_TOKENS]), "int") == terms.get(P.KV_TOKENS)


def _load_beside_target(pattern: P.Pattern, terms: dict, groups: dict[str, str | None]) -> bool:
    """A second load on a rank whose free memory is no more than what the target's weights left: the target is still
    held, so it is the draft's load (eagle_worker.py@v0.4.2 .. @v0.5.13 loads it after the target's pool and
    graphs); a restart loads into the memory the dead process gave back."""
    if pattern.id not in P.SGLANG_LOAD_LINES or P.FREE_AFTER_LOAD not in terms:
        return False
    free = groups.get(P.FREE_BEFORE_LOAD) or groups.get(P.FREE_AFTER_LOAD)
    figure = _number(str(free), "GB") if free is not None else None
    return figure is not None and figure <= terms[P.FREE_AFTER_LOAD]


def _restart(state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> None:
    """Another start-up begins at this line; llama.cpp's load line carries the device lines printed just before it
    (its fit pass, "using device ... MiB free"), which are the new load's."""
    carried = (state.pre_load, state.pre_load_gpu) if pattern.id == P.LLAMACPP_LOAD_LINE else ({}, None)
    state.restart()
    if pattern.id == P.LLAMACPP_LOAD_LINE:
        state.loaded_files.add(groups.get("path") or "")
        state.pre_load, state.pre_load_gpu = carried
        state.log.ranks.update({rank: dict(terms) for rank, terms in carried[0].items()})
        state.log.gpu_name = carried[1]


_META = re.compile(r"Meta\((?P<members>[^)]*)\)$")


def _meta_ranks(state: _EngineState, rank: str) -> tuple[str, ...]:
    """The devices a llama.cpp figure is each one's: a Meta buffer (--split-mode tensor) gives the largest GPU's
    share of the buffer (ggml-backend-meta.cpp: the max of its per-device buffers), so each member it names, or
    the Meta device's listed GPUs where its name is "Meta()", takes it; any other buffer is its own device's."""
    m = _META.match(rank)
    if m is None:
        return (rank,)
    state.log.args["split_mode"] = "tensor"
    members = tuple(name for name in m.group("members").split(",") if name) or tuple(state.meta_members)
    return members[:MAX_RANKS] or (rank,)


def _found_device(state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> bool:
    """ggml_cuda_init's header (the backend, a new process's device list) or one of its device lines (the total,
    kept by the name the device's buffers use: "Device 1" of a ROCm build is ROCm1). True when the line was one."""
    if pattern.kind == "gpu-backend":
        state.gpu_backend, state.device_totals = groups["backend"] or state.gpu_backend, {}
        return True
    if pattern.kind == "meta-device":  # another Meta device's list begins
        state.meta_members = []
        return True
    if pattern.kind == "meta-member":
        if len(state.meta_members) < MAX_RANKS:
            state.meta_members.append(groups["member"] or "")
        return True
    if pattern.kind not in ("device-vram", "device-info"):
        return False
    total = _number(groups.get(P.GPU_MEMORY) or "", "MiB")
    # the device list names the device as its buffers do; ggml_cuda_init's line gives the index of its backend's
    name = groups["device"] if pattern.kind == "device-info" else f"{state.gpu_backend}{groups['index']}"
    if total is not None and name:
        state.device_totals[name] = total
    return True


def _failure_rank(pattern: P.Pattern, kind: str) -> int:
    """What a failure line says: 0 that the start-up stopped (llama.cpp's and ollama's words after the reason, a
    Python crash without memory words), 1 that memory ran out (torch's error, a crash that says so), 2 the engine's
    own reason. The first line of the highest rank is kept."""
    if kind == "failure:" + P.ENGINE_ERROR:
        return 0
    return 2 if pattern.engine else 1


def _complete(log: ObservedLog) -> bool:
    """The start-up reached an outcome of its own: it sized its KV pool, or failed after a figure of its engine's.
    Engine-neutral lines alone (Uvicorn's "running on", torch's crash) are any engine's: another engine's start-up
    before this one prints them too."""
    return log.pool_sized() or (bool(log.failure) and bool(log.ranks or log.engine_terms))


def _start_up_read(engine: _EngineState) -> tuple[_EngineState, str]:
    """The start-up of the engine's that is read, and a note when the log holds more than one: the last one, or
    the last complete one when the last has no outcome yet (a restart still loading, a log that stops in it)."""
    name, count = engine.log.engine, engine.start_ups
    if count < 2:
        return engine, ""
    if engine.last_complete is None or _complete(engine.log):
        return engine, f"the log holds {count:,} start-ups of {name}: the last one was read"
    earlier = engine.last_complete
    return earlier, (f"the log holds {count:,} start-ups of {name}: the last one (line {engine.began:,}) has no "
                     f"outcome yet (still loading, or the log stops in it); the last complete one (line "
                     f"{earlier.began:,}) was read")


def _failure_kind(pattern: P.Pattern, line: str) -> str:
    """The pattern's kind; a crash line is out of memory when its words say so (P.MEMORY_WORDS), else an engine
    error (an assertion, a dead worker, a NCCL or CUDA error, a signal)."""
    if pattern.kind != P.CRASH:
        return pattern.kind
    return "failure:" + (P.OUT_OF_MEMORY if P.MEMORY_WORDS.search(line) else P.ENGINE_ERROR)


def _opens_start_up(pattern: P.Pattern, groups: dict[str, str | None], state: _EngineState) -> bool:
    """A start-up line begins another start-up once the one read went past its first lines, or when it names
    another release than the one read (a start-up that died before any line gsg reads, then an upgrade).
    llama.cpp's load of a GGUF file already loaded, after its weights took memory, is another start-up too (a
    restart, or ollama's runner retried with fewer layers, in a log that does not hold the build line): its
    buffer lines would otherwise add up with the first load's. Another file is a second model of the same
    start-up (a speculative draft); a vocabulary-only load or a fit pass's 0.00 MiB buffers took no memory."""
    log = state.log
    if pattern.id == P.LLAMACPP_LOAD_LINE:
        path = groups.get("path") or ""
        again = path in state.loaded_files and any(terms.get(term) for terms in log.ranks.values()
                                                   for term in P.LLAMACPP_LOADED_TERMS)
        state.loaded_files.add(path)
        return again
    if pattern.id not in P.START_UP_LINES:
        return False
    version = groups.get("version")
    other_release = bool(version and log.engine_version and version != log.engine_version)
    return other_release or bool(log.ranks or log.engine_terms or log.failure or log.started)


# llama.cpp names a buffer by its buffer type: the device, then what kind of buffer it is on that device. Metal's
# default buffer type is "MTL<i>" where the device shares the host's memory and "MTL<i>_Private" where it does not
# (ggml/src/ggml-metal/ggml-metal.cpp@0c1e57098, llama-cpp-python 0.3.36: use_shared_buffers is has_unified_memory,
# so an Intel Mac's discrete Radeon, or GGML_METAL_SHARED_BUFFERS_DISABLE, prints "MTL0_Private KV buffer size");
# weights mapped from the file are "MTL<i>_Mapped". All three are the one device MTL<i>.
_LLAMACPP_BUFFER_KIND = re.compile(r"_(?:Mapped|REPACK|Split|AARCH64|Host|Private)$")
_UNINDEXED_SPLIT = re.compile(r"[A-Za-z]+_Split$")  # "CUDA_Split", not "CUDA0_Split"


def buffer_device(name: str) -> str:
    """The device a llama.cpp buffer type lives on: CPU_Mapped and CPU_REPACK are the CPU, CUDA0_Split is CUDA0,
    and CUDA_Host (pinned host memory) is the CPU."""
    if name.endswith("_Host"):
        return "CPU"
    return _LLAMACPP_BUFFER_KIND.sub("", name)


_UNINDEXED_BACKEND = re.compile(r"[A-Za-z]+$")


def _projector_device(name: str, state: _EngineState) -> str:
    """The device a CLIP backend line names: tools/mtmd/clip.cpp prints the backend's own name (CUDA0, Vulkan1,
    MTL0, CPU); the llava builds print the backend kind, and their CUDA (and HIP) backend is device 0
    (examples/llava/clip.cpp@0.2.85: ggml_backend_cuda_init(0)), named as ggml_cuda_init's header names the build's
    devices (ROCm0 on a HIP build). Metal's buffers then carried no index."""
    if name in ("CUDA", "ROCm", "MUSA"):
        return f"{state.gpu_backend}0"
    if name != "Metal" and name != "CPU" and _UNINDEXED_BACKEND.match(name):
        return f"{name}0"
    return buffer_device(name)


# Ray's actor prefixes name the class: RayWorkerVllm (engine/ray_utils.py@v0.3.3), RayWorkerWrapper
# (executor/ray_utils.py@v0.4.3 to v1/executor/ray_utils.py@v0.33.0), RayWorkerProc (ray_executor_v2.py@v0.34.0)
_RAY_ACTORS = ("RayWorkerWrapper", "RayWorkerVllm", "RayWorkerProc")


def _rank_of(line: str, engine: str, device: str | None) -> str:
    if device:
        return buffer_device(device) if engine == P.LLAMACPP else device
    if engine == P.SGLANG:
        m = _SGLANG_RANK.search(line)
        return m.group("ranks").strip() if m else MAIN
    if engine == P.VLLM:
        m = _VLLM_PROCESS.search(line)
        if not m:
            return MAIN
        actor = m if m.group("proc") in _RAY_ACTORS else None
        while (inner := _VLLM_NESTED.match(line, m.end())) is not None:  # the innermost prefix is the worker's
            m = inner
            actor = m if m.group("proc") in _RAY_ACTORS else actor
        # a Ray actor's own worker names itself a bare `(Worker pid=N)` (no TP coordinates: Ray Serve on 0.26.0,
        # `(RayWorkerProc pid=29271) (Worker pid=29271)`, ray-project/ray PR #65486): the actor's pid is the rank,
        # or every worker's lines would fall on one rank
        if actor is not None and m is not actor and m.group("proc") == "Worker" and m.group("rank") is None \
                and m.group("coords") is None:
            m = actor
        if m.group("rank") is not None:
            return f"rank {m.group('rank')}"
        if m.group("coords") is not None:  # the names later releases give as Worker_PP1_TP0
            return m.group("coords").replace("_", " ")
        where = _VLLM_TP.search(m.group("proc"))
        if where and m.group("proc").startswith("Worker"):
            return where.group("where").replace("_", " ")
        if m.group("proc") in ("VllmWorkerProcess",) + _RAY_ACTORS:
            return f"pid {m.group('pid')}"
    return MAIN


_INDEXED_GPU = re.compile(r"(?P<backend>CUDA|ROCm|MUSA)\d+$")


def _refused_device(device: str, log: ObservedLog) -> str:
    """The device a refusal names: CUDA's own line gives only the index ("#1"), which is CUDA1, ROCm1 or MUSA1 by
    the build's backend, the one the log's other buffers name (CUDA when they name none)."""
    if not device.startswith("#"):
        return device
    backend = next((m.group("backend") for name in log.ranks if (m := _INDEXED_GPU.match(name))), "CUDA")
    return f"{backend}{device[1:]}"


_DECIMAL_COMMA = re.compile(r"[0-9]+,[0-9]{1,2}")


def _number(text: str, unit: str) -> Number | None:
    """The figure in bytes (or as counted); None for one no engine prints (an edited or corrupt log): past
    MAX_LOG_FIGURE or not finite, it would overflow the arithmetic it is held against."""
    # a comma before one or two final digits is a decimal comma (llama.cpp's "%.2f" under a comma locale,
    # P.LC_NUM); a thousands separator always groups three
    decimal_comma = _DECIMAL_COMMA.fullmatch(text) is not None
    clean = text.replace(",", ".") if decimal_comma else text.replace(",", "")
    if sum(c.isdigit() for c in clean) > MAX_FIGURE_DIGITS:
        return None
    if unit == "int":
        if decimal_comma:  # "0,0 tokens": a count has no decimals, and no thousands group of one or two digits
            return None
        value: Number = int(clean)
    else:
        value = float(clean)
        if unit != "float":
            value = value * P.UNITS[unit.rstrip("+")]
    if not math.isfinite(value) or abs(value) > MAX_LOG_FIGURE:
        return None
    return value if unit in ("int", "float") else int(round(value))


def _weights_from_free(terms: dict[str, Number]) -> None:
    """The weights of a load line that prints only the free memory after them: the free memory before, less it
    (what SGLang 0.4.4+ prints as the end line's "mem usage"); nothing when this rank printed no begin line."""
    before, after = terms.get(P.FREE_BEFORE_LOAD), terms.get(P.FREE_AFTER_LOAD)
    if before is not None and after is not None and before >= after:
        terms[P.WEIGHTS] = before - after


def _activation_from_torch_peak(terms: dict[str, Number]) -> None:
    """vLLM 0.6.4's activation peak: the profile line's torch peak less the weights the rank loaded before it
    (both torch allocations); nothing when this rank printed no weights line."""
    peak, weights = terms.get(P.TORCH_PEAK), terms.get(P.WEIGHTS)
    if peak is not None and weights is not None:
        terms[P.ACTIVATION] = max(peak - weights, 0)


def _derive_rank_terms(pattern: P.Pattern, terms: dict[str, Number]) -> None:
    """The terms a line gives only with the rank's earlier figures: SGLang's weights from its free memory, vLLM
    0.6.4's activation peak from its torch peak."""
    if pattern.id in P.WEIGHTS_FROM_FREE:
        _weights_from_free(terms)
    if pattern.id in P.ACTIVATION_FROM_TORCH_PEAK:
        _activation_from_torch_peak(terms)


def _failure_text(line: str, match: re.Match, found: set[str]) -> str:
    exc = _EXCEPTION.search(line)
    start = exc.start() if exc and exc.start() <= match.start() else match.start()
    # "Scheduler hit an exception: Traceback (most recent call last):" says what died; the traceback's head is no
    # reason (the exception line below it is), and quoted it reads like gsg's own traceback
    text = _TRACEBACK_HEAD.sub("", mask_secrets(line[start:].strip(), found)) or "Traceback"
    return text if len(text) <= MAX_FAILURE_CHARS else text[:MAX_FAILURE_CHARS - 3] + "..."


_TRACEBACK_HEAD = re.compile(r":?\s*Traceback \(most recent call last\):?\s*$")


def engine_text(piece: str) -> tuple[str, int]:
    """One line as the engine printed it, and how many copies Ray folded into it (0: none): what a terminal and a
    log collector add around it taken off (terminal sequences, a collector's ISO timestamp in front, Ray's fold
    suffix and a transport's padding at the end). The one place a line's wrapping is undone: the patterns read
    what this gives."""
    piece = _ANSI.sub("", piece)
    stamp = _COLLECTOR_TIMESTAMP.match(piece) if piece[:1].isdigit() else None
    piece = piece[stamp.end():] if stamp else piece
    folded = 0
    if RAY_FOLD_MARK in piece:
        at = piece.rfind("[repeated ")
        m = _RAY_FOLD.fullmatch(piece, at) if at >= 0 else None
        if m is not None:
            piece, folded = piece[:at], int(m.group("times"))
    # spaces a transport pads a line with (a paste, a fixed-width export) are no text of the engine's: the
    # patterns that end at the line's end ($) read the line as printed
    return piece.rstrip(" \t"), folded


class LogParser:
    """Feed it lines; `result()` gives the ObservedLog of the engine the log is from (or the one asked for)."""

    def __init__(self, engine: str | None = None):
        if engine is not None and engine not in P.ENGINES:
            raise ValueError(f"unknown engine '{engine}'")
        self.wanted = engine
        self.states = {name: _EngineState(ObservedLog(engine=name)) for name in P.ENGINES
                       if engine is None or name == engine}
        self.secrets: set[str] = set()
        self.lines = 0
        self.matches = 0  # every pattern match, the engine-neutral ones (torch's OOM) too: live verify's watch
        self.rank_overflow = False
        self.implausible_line = 0  # the first line with a figure no engine prints (see _number)
        self.dumps: dict[str, dict[str, object]] = {}  # argument texts read so far (MAX_ARGUMENT_DUMPS)
        self.dumps_skipped = 0
        self.sifter = Sifter(self.states)  # the patterns each line can match (sift.py)
        self.matched_before: dict[str, list[tuple[P.Pattern, re.Match]]] = {}  # long lines seen (MEMO_MIN_CHARS)
        self.memo_chars = 0
        self.continued = False  # the last piece fed ended in a lone CR (feed)
        self.carry: list[str] = []  # a reflowed V1 refusal's lines so far (_REFUSAL_HEAD)
        self.cri = CriJoiner()  # containerd's partial records of a long line, per stream
        self.folded = 0  # the copies Ray folded into the line being read (engine_text)
        self.folded_figures: tuple[int, int] = (0, 0)  # lines with a figure Ray folded others into, the first one

    def feed(self, raw: str) -> None:
        # a piece that ends in a lone CR (the reader splits a progress bar's redraws and a CR-only log there) is
        # part of the line the next piece goes on with: line numbers count LF-ended lines
        if not self.continued:
            self.lines += 1
        self.continued = raw.endswith("\r")
        joined = self.cri.feed(raw.rstrip("\r\n"))
        if joined is not None:  # None: a containerd partial record, its line is read when the last piece comes
            self._read(joined)

    def finish(self) -> None:
        """The end of the log: a long line whose last containerd piece never came is read as far as it got."""
        for line in self.cri.rest():
            self._read(line)
        self.cri.pieces.clear()

    def _read(self, joined: str) -> None:
        # a terminal's raw escapes are no character of a record (JSON has no raw control characters): taken off
        # first, so llama-server's JSON record reads under a coloured or redrawn terminal too
        text = unwrap_record(_ANSI.sub("", joined) if "\x1b" in joined else joined)
        # a carriage return inside a line is a terminal redraw (a progress bar) or a CRLF log joined with another:
        # each piece is a line of its own, so a figure after a progress bar is read and the bar's length is no cap;
        # a record's message may hold several lines (a traceback in one JSON record)
        pieces = _PIECE_BREAK.split(text) if ("\r" in text or "\n" in text) else [text]
        breaks = _PIECE_BREAK.findall(text) + ["\r" if self.continued else "\n"]
        for piece, after in zip(pieces, breaks):
            line, self.folded = engine_text(piece)
            self._feed_reflowed(line, redraw=after == "\r")
        self.folded = 0

    def _feed_reflowed(self, line: str, redraw: bool = False) -> None:
        if self.carry:
            if not line.strip():
                return  # an empty piece (a CR before the LF) is no line of the quote
            if redraw and not _REFUSAL_FIGURES.search(line) and not _REFUSAL_GOES_ON.search(line):
                self._feed_line(line)  # a progress bar drawn between the quote's lines: read, the quote goes on
                return
            # each line of the quote from where its text starts: a transport's prefix (a timestamp, a rank) is not
            # part of the message
            m = (_REFUSAL_FIGURES if len(self.carry) == 1 else _REFUSAL_GOES_ON).search(line)
            if m is not None:
                self.carry.append(line[m.start():].strip())
                if len(self.carry) < REFUSAL_CARRY_LINES and not _REFUSAL_DONE.search(line):
                    return
                self._flush_carry()
                return
            self._flush_carry()  # the quote ended: this line is read on its own
        head = _REFUSAL_HEAD.search(line)
        if head is not None:
            self.carry = [line[:head.end()]]  # without what a quoting transport puts after the comma
        else:
            self._feed_line(line)

    def _flush_carry(self) -> None:
        if self.carry:
            joined, self.carry = " ".join(self.carry), []
            self._feed_line(joined)

    def _feed_line(self, line: str) -> None:
        candidates = self.sifter.candidates(line)
        if not candidates:
            return
        hits = self.matched_before.get(line) if len(line) >= MEMO_MIN_CHARS else None
        if hits is None:
            hits = self._search(line, candidates)
            if len(line) >= MEMO_MIN_CHARS and self.memo_chars + len(line) <= MAX_MEMO_CHARS:
                self.matched_before[line] = hits
                self.memo_chars += len(line)
        if hits and METADATA_DUMP in line:
            # a GGUF metadata line quotes the model file's own strings (a chat template, a name): whatever words
            # they hold, they say nothing about how the start-up went
            hits = [(p, m) for p, m in hits if p.kind not in OUTCOME_KINDS and not p.kind.startswith("failure:")]
        if len(hits) > 1 and any(p.kind.startswith("failure:") for p, _ in hits):
            # a line that reports a failure is no success, whatever it quotes (a path, a message with a success's
            # words in it): its success and retry words are not read
            hits = [(p, m) for p, m in hits if p.kind not in OUTCOME_KINDS]
        if self.folded and any(p.terms for p, _ in hits):
            count, first = self.folded_figures
            self.folded_figures = (count + 1, first or self.lines)
        for pattern, m in hits:
            if pattern.kind == P.CRASH:  # Python's crash lines: llama.cpp's own rows name how it stops
                targets = [state for name, state in self.states.items() if name in P.PYTHON_ENGINES]
            else:
                targets = [self.states[pattern.engine]] if pattern.engine else list(self.states.values())
            for state in targets:
                self._apply(state, pattern, m, line)

    @staticmethod
    def _search(line: str, candidates: tuple[P.Pattern, ...]) -> list[tuple[P.Pattern, re.Match]]:
        """The candidates that match the line, with their matches. Their texts are tested on the line itself: the
        sift held them against the line's shape (a superset where a text has a digit)."""
        hits = []
        for pattern in candidates:
            if pattern.needle not in line:
                continue
            texts = pattern.needles
            if len(texts) > 1 and not any(text in line for text in texts):
                continue
            m = pattern.regex.search(line)
            if m is not None:
                hits.append((pattern, m))
        return hits

    def _apply(self, state: _EngineState, pattern: P.Pattern, m: re.Match, line: str) -> None:
        groups = m.groupdict()
        if _opens_start_up(pattern, groups, state):
            _restart(state, pattern, groups)
            state.began = self.lines
        log = state.log
        self.matches += 1
        if pattern.engine and pattern.id not in P.SHARED_WORDS:
            state.hits += 1
        log.matched.setdefault(pattern.id, self.lines)
        if _not_the_targets(state, pattern, groups, self.lines) or self._apply_text(log, pattern.kind, groups):
            return
        if self._placement(state, pattern, groups) or _found_device(state, pattern, groups) \
                or self._projector(state, pattern, groups):
            return
        if pattern.kind == "gpu-name":
            log.gpu_name = log.gpu_name or groups["name"].strip()
        if pattern.kind == "recovery":  # the engine retries what failed: the failure lines before are not the outcome
            self._drop_refused_compute(state)  # the retry reserves one input copy: the refused size is not its own
            self._went_on(state, "retried")
            log.engine_terms[P.PIPELINE_COPIES] = 1  # the retry builds its scheduler without pipeline parallelism
            return
        if pattern.kind == "started":
            log.started = True
            self._came_up(state, pattern)
            if pattern.engine == P.LLAMACPP:
                self._went_on(state, "came up")
            return
        if pattern.kind == "context":
            state.contexts += 1
            for terms in log.ranks.values():
                terms.pop(P.KV_CACHE, None)
                terms.pop(P.COMPUTE_BUFFER, None)
        # the first reason wins, except that a line saying more replaces it: the engine's own reason replaces
        # torch's generic out of memory (vLLM's sampler warm-up re-raises torch's error with the flag that fixes it),
        # and a reason replaces llama.cpp's or ollama's "it stopped" (_failure_rank)
        if not self._failure(state, pattern, m, line) or pattern.kind == P.CRASH:
            return
        if pattern.kind == "refused":
            self._refused(state, pattern, groups)
            return
        if pattern.kind in ("buffer", "context"):  # an allocation went through since: a refusal before is no KV's
            state.pending_refusal = None
        rank = _rank_of(line, log.engine or "", groups.get("device"))
        if pattern.scope == P.RANK and pattern.terms and rank not in log.ranks and len(log.ranks) >= MAX_RANKS:
            self.rank_overflow = True
            return
        if state.is_draft_line(pattern, rank, groups):
            return
        if pattern.id in P.SGLANG_SWA_SPLIT:  # the pool lines that follow add up; the split names the token count
            state.swa_split.add(rank)
            log.ranks.get(rank, {}).pop(P.KV_CACHE, None)
        pooled = pattern.id in P.SGLANG_POOL_LINES and (rank in state.swa_split or groups.get("pool_label") == "SWA ")
        self._read_rank(state, pattern, groups, rank, pooled)
        if pattern.id in P.LLAMACPP_CONTEXT_BUILT:  # every compute buffer was reserved: the context was built
            log.started = True
            self._went_on(state, "built its context")

    def _read_rank(self, state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None], rank: str,
                   pooled: bool) -> None:
        """A line's figures into its rank, or into each GPU a llama.cpp Meta buffer holds a share on."""
        log = state.log
        for share in _meta_ranks(state, rank) if pattern.engine == P.LLAMACPP else (rank,):
            self._read_terms(log, pattern, groups, share, pooled=pooled)
            if share in log.ranks:
                _derive_rank_terms(pattern, log.ranks[share])
                self._given_back(log, pattern, share)
            if pattern.engine == P.LLAMACPP and pattern.scope == P.RANK and pattern.terms:
                self._note_pre_load(state, pattern, share)

    def _given_back(self, log: ObservedLog, pattern: P.Pattern, rank: str) -> None:
        """A free-memory difference SGLang printed negative (P.SGLANG_FREE_DIFFERENCES) is no size of its term:
        another process freed memory between the two measurements. The term is dropped and the bytes kept for a
        note; the line's other figures (the free memory after it) stand."""
        term = P.SGLANG_FREE_DIFFERENCES.get(pattern.id)
        terms = log.ranks[rank]
        value = terms.get(term) if term else None
        if term is None or value is None or value >= 0:
            return
        del terms[term]
        if sum(1 for given in log.given_back if given[2] == term) < MAX_RECOVERY_NOTES:  # bounded: a note each
            log.given_back.append((self.lines, rank, term, int(-value)))

    def _came_up(self, state: _EngineState, pattern: P.Pattern) -> None:
        """A line saying the start-up is done (P.SERVED_LINES) after its pool was sized: later failures are not its."""
        if pattern.id in P.SERVED_LINES and not state.served_line and state.log.pool_sized():
            state.served_line = self.lines

    def _failure(self, state: _EngineState, pattern: P.Pattern, m: re.Match, line: str) -> bool:
        """Keep a failure line's reason (see the rank rule above); False when the line is read no further: a
        failure after vLLM or SGLang came up is a request's traceback or the shutdown's, not the start-up's."""
        log = state.log
        kind = _failure_kind(pattern, line)
        if not kind.startswith("failure:"):
            return True
        if state.served_line and log.engine in P.PYTHON_ENGINES:
            count, first, last = state.after_served
            if last != self.lines:
                state.after_served = (count + 1, first or self.lines, self.lines)
            return False
        if log.failure is None or _failure_rank(pattern, kind) > state.failure_rank:
            state.failure_rank = _failure_rank(pattern, kind)
            log.failure = _failure_text(line, m, self.secrets)
            log.failure_kind = kind.split(":", 1)[1]
            log.failure_line = self.lines
        return True

    @staticmethod
    def _note_pre_load(state: _EngineState, pattern: P.Pattern, rank: str) -> None:
        """llama.cpp's device figures printed before a load (P.LLAMACPP_PRE_LOAD_TERMS), kept until a buffer takes
        memory: a load line that begins another start-up (_opens_start_up) carries them into it."""
        terms = {term for term, _ in pattern.terms.values()}
        if terms & P.LLAMACPP_LOADED_TERMS:
            state.pre_load, state.pre_load_gpu = {}, None
        elif terms <= P.LLAMACPP_PRE_LOAD_TERMS and rank in state.log.ranks:
            figures = state.log.ranks[rank]
            state.pre_load.setdefault(rank, {}).update({term: figures[term] for term in terms if term in figures})
            if pattern.kind == "gpu-name":
                state.pre_load_gpu = state.log.gpu_name

    def _projector(self, state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> bool:
        """llama.cpp's vision projector (--mmproj): its backend line, weights and compute buffer, each the CLIP
        context's on the device the backend line named. True when the line is one of them; a text model's buffer,
        context or load line after it ends the projector's lines (llava builds load the CLIP model first)."""
        if pattern.kind != "projector":
            if pattern.kind in ("buffer", "context") or pattern.id == P.LLAMACPP_LOAD_LINE:
                state.in_projector = False
            return False
        if pattern.id == "llamacpp-projector-device":
            state.projector, state.in_projector = _projector_device(groups["projector"] or "", state), True
            return True
        device = groups.get("device")
        rank = buffer_device(device) if device else state.projector
        if rank is None:  # a figure without the backend line that names its device (an excerpt): not placed
            return True
        if rank not in state.log.ranks and len(state.log.ranks) >= MAX_RANKS:
            self.rank_overflow = True
            return True
        state.pending_refusal = None
        self._read_terms(state.log, pattern, groups, rank, pooled=False)
        return True

    def _placement(self, state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> bool:
        """Lines that say where llama.cpp's (or ollama's) weights went rather than give a device's own figure:
        ollama's summary, a buffer override, a row split. True when the line is read here and no further."""
        log = state.log
        if pattern.kind == P.OLLAMA_LAYOUT:
            self._layout(state, pattern, groups)
            return True
        if pattern.kind == "override":  # every moved tensor, by name, as -ot pairs: the rebuild places the same ones
            pair = f"{groups['tensor']}={groups['buffer']}"
            moved = str(log.args.get("override_tensor") or "")
            if not moved:
                log.args["override_tensor"] = pair
            elif pair not in moved.split(","):  # a restart's load prints the same lines again
                log.args["override_tensor"] = f"{moved},{pair}"
            return True
        device = groups.get("device") or ""
        if pattern.kind == "buffer" and device.endswith("_Split"):
            # a split buffer type is --split-mode row's (ggml-cuda's split buffer type); without a device index it is
            # the whole split over every device (builds of 2024), so it is no one device's weights
            log.args.setdefault("split_mode", "row")
            if _UNINDEXED_SPLIT.match(device):
                state.pending_refusal = None
                value = _number(groups.get(P.WEIGHTS) or "", "MiB")
                if value is not None:
                    state.split_weights = (state.split_weights[0] + int(value), state.split_weights[1] or self.lines)
                return True
        return False

    def _layout(self, state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> None:
        """One line of ollama's memory summary, kept apart until result() knows whether it was the runner's own
        allocations (the Go engine) or ollama's estimate before a llama.cpp runner. Each summary replaces the one
        before (the debug level prints one per fit and alloc pass, the info level the committed one)."""
        if pattern.scope == P.ENGINE:  # the load request: the context it asked for, whichever summary follows
            for group, (term, unit) in pattern.terms.items():
                value = _number(groups.get(group) or "", unit)
                if value is not None:
                    state.layout_engine[term] = value
            return
        if pattern.id == "ollama-layout-total":
            state.layout_closed = True
            return
        weights_again = pattern.id == "ollama-layout-weights" and any(
            term != P.WEIGHTS for terms in state.layout.values() for term in terms)
        if state.layout_closed or weights_again or not state.layout:
            state.layout, state.layout_closed, state.layout_line = {}, False, self.lines
        (group, (term, _)), = pattern.terms.items()
        value = _number(groups.get(group) or "", groups.get("unit") or "")
        rank = groups.get("device") or MAIN
        if value is None:
            self.implausible_line = self.implausible_line or self.lines
        elif rank in state.layout or len(state.layout) < MAX_RANKS:
            state.layout.setdefault(rank, {})[term] = value
        else:
            self.rank_overflow = True

    @staticmethod
    def _read_layout(state: _EngineState) -> None:
        """ollama's memory summary as the devices' buffers where the runner printed none of llama.cpp's (its Go
        engine); beside llama.cpp's own lines it was ollama's estimate, and a note says it was not read."""
        log = state.log
        if not state.layout:
            return
        if any(name in log.matched for name in LLAMACPP_BUFFER_LINES):
            log.notes.append(f"line {state.layout_line}: ollama's memory summary is its estimate before the llama.cpp "
                             "runner loaded (llm/server.go): the runner's own buffer lines were read")
            return
        if "ollama-llama-runner" in log.matched:
            log.notes.append(f"line {state.layout_line}: ollama's memory summary is its estimate for its llama.cpp "
                             "runner (`runner --model`), and the log stops before the runner's own buffer lines: "
                             "not read")
            return
        for rank, terms in state.layout.items():
            log.ranks.setdefault(rank, {}).update(terms)
        for term, value in state.layout_engine.items():
            log.engine_terms.setdefault(term, value)
        log.notes.append(f"line {state.layout_line}: the figures are ollama's memory summary (ml/device.go), each "
                         "rounded to 0.1 of its unit (0.05 GiB is 51 MiB): ollama's Go engine prints no llama.cpp "
                         "buffer line")

    def _refused(self, state: _EngineState, pattern: P.Pattern, groups: dict[str, str | None]) -> None:
        """llama.cpp's refused allocations as the figure the device needed: a compute reserve is that device's whole
        compute buffer (ggml_gallocr_reserve_n sizes one buffer per buffer type); a tensor range or CUDA's own line
        waits for the next line to say what it was for, and the KV cache's words make it part of the KV buffer."""
        log = state.log
        if pattern.id == "llamacpp-refused-kv":
            pending, state.pending_refusal = state.pending_refusal, None
            if pending is not None:
                self._book_refusal(state, _refused_device(pending[0], log), P.KV_CACHE, pending[1], pending[2])
            return
        value = _number(groups["refused"] or "", "MiB" if groups.get("index") is not None else "bytes")
        if value is None:
            self.implausible_line = self.implausible_line or self.lines
            return
        if pattern.id == "llamacpp-refused-compute":
            state.pending_refusal = None
            term = P.PROJECTOR_COMPUTE if state.in_projector else P.COMPUTE_BUFFER  # the CLIP warm-up's reserve
            self._book_refusal(state, buffer_device(groups["device"] or ""), term, int(value), self.lines)
            return
        device = groups.get("device")
        state.pending_refusal = (buffer_device(device) if device else f"#{groups['index']}", int(value), self.lines)

    def _book_refusal(self, state: _EngineState, rank: str, term: str, value: int, line: int) -> None:
        log = state.log
        if rank not in log.ranks and len(log.ranks) >= MAX_RANKS:
            self.rank_overflow = True
            return
        terms = log.ranks.setdefault(rank, {})
        if term in (P.COMPUTE_BUFFER, P.PROJECTOR_COMPUTE):  # a reserve sizes the whole buffer: a second replaces
            terms[term] = value
        else:  # the caches allocated before it on this device (iSWA's other cache) add up with it
            terms[term] = terms.get(term, 0) + value
        state.refused.append((line, rank, term, value))

    @staticmethod
    def _drop_refused_compute(state: _EngineState) -> None:
        for _, rank, term, _ in state.refused:
            terms = state.log.ranks.get(rank)
            if term == P.COMPUTE_BUFFER and terms is not None:
                terms.pop(term, None)
                if not terms:  # the device printed nothing else: it has no figures
                    del state.log.ranks[rank]
        state.refused = [r for r in state.refused if r[2] != P.COMPUTE_BUFFER]

    def _read_terms(self, log: ObservedLog, pattern: P.Pattern, groups: dict[str, str | None], rank: str, *,
                    pooled: bool) -> None:
        """The figures of one matched line into the log: engine-wide ones, or the rank's."""
        summed: dict[str, Number] = {}
        for group, (term, unit) in pattern.terms.items():
            text = groups.get(group)
            if text is None:
                continue
            value = _number(text, unit)
            if value is None:
                self.implausible_line = self.implausible_line or self.lines
                continue
            if pattern.scope == P.ENGINE:
                if term in PER_WORKER_POOL_TERMS and term in log.engine_terms:
                    value = min(value, log.engine_terms[term])
                log.engine_terms[term] = value
                continue
            terms = log.ranks.setdefault(rank, {})
            if term in terms and term in P.FALLBACK_TERMS.get(pattern.id, ()):
                continue
            if pooled:  # one of a hybrid SWA model's two pools: its bytes add up, its tokens are not the capacity
                if term == P.KV_CACHE:
                    terms[term] = terms.get(term, 0) + value
                continue
            # several buffers per device add up: KV caches (iSWA: full and sliding), model buffers (CPU_Mapped
            # and CPU_REPACK); a dry run's 0.00 MiB lines add nothing
            if pattern.kind == "buffer":
                terms[term] = terms.get(term, 0) + value
            elif unit.endswith("+"):  # K and V of one line add up; a later line replaces them
                summed[term] = summed.get(term, 0) + value
                terms[term] = summed[term]
            else:
                terms[term] = value

    def _went_on(self, state: _EngineState, how: str) -> None:
        """A failure the engine went on from (a retry, a later success) is not the outcome: a note keeps it (the
        first MAX_RECOVERY_NOTES; result() counts the rest); only a failure after the last success is."""
        log = state.log
        if log.failure is None:
            return
        state.recoveries += 1
        if state.recoveries <= MAX_RECOVERY_NOTES:
            log.notes.append(f"line {log.failure_line}: {log.failure!r} was not the outcome: the engine {how} "
                             f"(line {self.lines})")
        log.failure = log.failure_kind = log.failure_line = None

    def _apply_text(self, log: ObservedLog, kind: str, groups: dict[str, str | None]) -> bool:
        """A line that names what ran (version, model, arguments) rather than a figure: read, True; any other kind
        of line, False."""
        def masked(name: str) -> str:
            return mask_secrets(groups[name] or "", self.secrets)

        if kind not in TEXT_KINDS:
            return False
        if kind == "version":
            if groups.get("version") and not log.engine_version:
                log.engine_version = groups["version"]
            if groups.get("model"):  # vLLM's plain start-up line names the model it serves
                log.model = masked("model")
            if groups.get("config"):
                log.config = self._read_dump(groups["config"] or "", log.config)
        elif kind == "args":
            log.args = self._read_dump(groups["args"] or "", log.args)
        elif kind == "arg-update":  # one setting a later line prints: it joins the printed arguments
            if groups.get("args") is not None:
                log.args = {**log.args, **self._read_dump(groups["args"] or "", {})}
            # llama.cpp's cache line names its K and V types in its own words, not as key=value, and its resolved
            # flash attention likewise
            log.args.update({key: groups[key] for key in ("cache_type_k", "cache_type_v", "flash_attn",
                                                          "gguf_file_type", "kv_unified_per_slot") if groups.get(key)})
        elif kind == "model":
            log.model = masked("model")
        return True

    def _read_dump(self, raw: str, kept: dict[str, object]) -> dict[str, object]:
        """An argument or config dump with its secrets masked, read once per text and at most MAX_ARGUMENT_DUMPS
        different texts per log (past that, what was read before stands and the notes say how many were not)."""
        known = self.dumps.get(raw)
        if known is not None:  # its secrets were collected the first time
            return dict(known)
        if len(self.dumps) >= MAX_ARGUMENT_DUMPS:
            self.dumps_skipped += 1
            return kept
        self.dumps[raw] = parse_printed_args(mask_secrets(raw, self.secrets))
        return dict(self.dumps[raw])

    def result(self) -> ObservedLog:
        self._flush_carry()
        states = list(self.states.values())
        engine = max(states, key=lambda s: s.hits)
        best, start_ups_note = _start_up_read(engine)
        if self.wanted is None and engine.hits == 0:
            log = ObservedLog(engine=None)
        else:
            log = best.log
        log.lines = self.lines
        if log.engine and start_ups_note:
            log.notes.append(start_ups_note)
        others = [s for s in states if s is not engine and s.hits >= OTHER_ENGINE_HITS]
        if log.engine and others and self.wanted is None:
            names = ", ".join(f"{s.log.engine} ({s.hits} lines)" for s in others)
            log.notes.append(f"the log also holds lines of {names}: {log.engine} has the most and was read; "
                             f"give --backend to read another")
        if log is best.log:
            self._read_layout(best)
            for device, total in best.device_totals.items():  # the devices the start-up used
                if device in log.ranks:
                    log.ranks[device].setdefault(P.GPU_MEMORY, total)
            split, split_line = best.split_weights
            if split:
                log.notes.append(f"line {split_line}: {split / P.MiB:,.2f} MiB of row-split weights (--split-mode row) "
                                 "are spread over the devices by --tensor-split: they are no one device's, so the "
                                 "devices' weights leave them out")
        if not log.model:
            model = log.args.get("model") or log.args.get("model_path") or log.args.get("model_tag") \
                or log.config.get("model")
            log.model = str(model) if model else None
        terms = log.terms()
        if log.failure:
            log.started = False
        elif log.engine == P.LLAMACPP:
            # llama-server listens before it loads, so its port says nothing. Came up: the compute buffers, "model
            # loaded", the main loop, ollama's "runner started" (log.started). An excerpt that stops after the KV
            # buffers with no failure line is read as started: the working runs quoted in the fixtures stop there
            # (llama.cpp#9390, JamePeng/llama-cpp-python PR #1, ik_llama.cpp PR #333); a run that dies after them
            # prints its reason (patterns.LLAMACPP_FAILURES)
            log.started = log.started or P.KV_CACHE in terms
        elif log.engine and any(t in terms for t in (P.KV_TOKENS, P.GPU_BLOCKS)):
            log.started = True
        for line, rank, term, given in log.given_back[:MAX_RECOVERY_NOTES]:
            what = "weights" if term == P.WEIGHTS else "distributed init"
            log.notes.append(f"line {line:,}: {rank}'s {what} line prints a negative mem usage: free memory rose by "
                             f"{given / P.GiB:,.2f} GiB across it, another process gave memory back (SGLang prints "
                             f"the free memory before less after), so it gives no {what} figure; its free memory "
                             "after is read")
        log.notes.extend(self._limit_notes())
        if log is best.log:
            log.notes.extend(_outcome_notes(best))
        log.notes.extend(self._wrapping_notes())
        if log is best.log:
            log.notes.extend(_device_notes(best, log))
        return log

    def _limit_notes(self) -> list[str]:
        """What a reading limit left out of the log."""
        notes = []
        if self.implausible_line:
            notes.append(f"line {self.implausible_line}: a figure past {MAX_LOG_FIGURE:.0e} (bytes, tokens or "
                         "blocks) or not finite was not read (MAX_LOG_FIGURE)")
        if self.cri.cut:
            notes.append(f"a line joined from containerd's partial records was cut at {CRI_MAX_JOINED_CHARS:,} "
                         "characters (CRI_MAX_JOINED_CHARS)")
        if self.dumps_skipped:
            notes.append(f"{self.dumps_skipped:,} argument or config line(s) past {MAX_ARGUMENT_DUMPS} different "
                         "ones were not read (MAX_ARGUMENT_DUMPS)")
        return notes

    def _wrapping_notes(self) -> list[str]:
        """What the log's wrapping left out of it, whatever start-up is read."""
        notes = []
        if self.folded_figures[0]:
            count, first = self.folded_figures
            notes.append(f"line {first:,}: {count:,} line(s) with a figure are Ray's folded copies ('[repeated Nx "
                         "across cluster]'): one worker's figure is printed, the other workers' copies (their "
                         "figures may differ) are not in the log; RAY_DEDUP_LOGS=0 prints each")
        if self.rank_overflow:
            notes.append(f"more than {MAX_RANKS} workers or devices: the others were not read (MAX_RANKS)")
        return notes

    def secret_values(self) -> list[str]:
        return sorted(self.secrets)


def _outcome_notes(best: _EngineState) -> list[str]:
    """Failure lines of the start-up read that are not its outcome: after it served, or ones it went on from."""
    notes = []
    if best.after_served[0]:
        notes.append(f"line {best.after_served[1]:,}: {best.after_served[0]:,} failure line(s) after the engine "
                     f"came up (line {best.served_line:,}) are a request's or the shutdown's, not the start-up's "
                     "outcome")
    if best.recoveries > MAX_RECOVERY_NOTES:
        notes.append(f"{best.recoveries - MAX_RECOVERY_NOTES:,} more failure(s) the engine went on from were not "
                     f"listed (MAX_RECOVERY_NOTES = {MAX_RECOVERY_NOTES})")
    return notes


def _device_notes(best: _EngineState, log: ObservedLog) -> list[str]:
    """llama.cpp's device notes, the vision projector's terms and the requests a device refused."""
    notes = _llamacpp_notes(best)
    projector = {rank: terms for rank, terms in log.gpu_ranks().items()
                 if P.PROJECTOR_WEIGHTS in terms or P.PROJECTOR_COMPUTE in terms}
    for rank, terms in projector.items():
        notes.append(f"{rank} holds the vision projector (--mmproj): "
                     f"{terms.get(P.PROJECTOR_WEIGHTS, 0) / P.MiB:,.2f} MiB of weights and "
                     f"{terms.get(P.PROJECTOR_COMPUTE, 0) / P.MiB:,.2f} MiB of compute buffer beside the text "
                     "model's; gsg's llama.cpp estimate does not size a projector")
    for line, rank, term, value in best.refused:
        what = {P.COMPUTE_BUFFER: "compute buffer", P.PROJECTOR_COMPUTE: "vision projector's compute "
                "buffer"}.get(term, "KV buffer")
        notes.append(f"line {line}: {rank}'s {what} is the request of {value:,} B it refused (the figure the "
                     "device needed, not one it held)")
    return notes


def parse_log(lines: Iterable[str], engine: str | None = None) -> tuple[ObservedLog, list[str]]:
    """Parse every line (a gcloud JSON dump's entries, oldest first); returns the observed log and the secret values
    masked on the way (for a final scrub)."""
    parser = LogParser(engine)
    for line in unwrap_entry_array(lines):
        parser.feed(line)
    parser.finish()
    return parser.result(), parser.secret_values()
