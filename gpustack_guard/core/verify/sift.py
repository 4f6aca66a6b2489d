"""Which patterns a log line can match, decided once per line shape: the speed of `gsg verify` on long logs.

A line is searched only if it holds one of KEYWORDS, and then only with the patterns whose required text
(Pattern.needle, or one of Pattern.needles) it holds. Those are ~300 substring tests a line: ~20 us, which made a
server's 32 MiB of access-log lines take 20 s in CI (benchmarks/hostile_logs.py). A long-running server's lines
differ mostly in their numbers (times, ports, counters), so the tests are made once per *shape*: the line with
every ASCII digit written as 0. A text holds in the shape whenever it holds in the line (each digit maps to 0);
a text without a digit holds in the shape only where it holds in the line (no other character becomes a 0). So
the sift of the shape is the line's own for digit-free texts and a superset for the few with a digit: the
keyword gate is then asked of the line itself, and LogParser._search tests each candidate's texts on the line.
Speed only, at the edge it serves: the result is the same as testing every text on every line (a test says so).
"""

from __future__ import annotations

from typing import Iterable

from gpustack_guard.core.verify import patterns as P

# The shapes sifted so far are kept up to this many bytes in all (a log of distinct shapes is sifted line by line)
MAX_SHAPE_BYTES = 4 * 1024 * 1024
_SHAPE_BYTES = bytes.maketrans(b"123456789", b"000000000")  # the key: UTF-8 keeps ASCII digits as single bytes
_SHAPE_TEXT = str.maketrans("123456789", "000000000")

MAX_TERM_LINE_CHARS = 4096  # figures are in short lines; a longer line is only read for the arguments it prints
LONG_LINE_KINDS = ("args", "version")  # their patterns match once their prefix is found: linear on any line
# A line holds a figure only if it has one of these words, so the regexes (some with a lazy gap) only see candidate
# lines. Every pattern's example holds one (tests/core/verify).
KEYWORDS = ("vLLM", "LLM engine", "Custom allreduce", "args", "max model len", "took", "profiling", "total_gpu_memory",
            "gpu_memory_utilization", "can use", "weights take", "non_torch_memory", "activation peak",
            "available_kv_cache_memory", "blocks", "KV cache", "KV Cache", "KV budget", "concurrency",
            "Graph capturing", "CUDA graph", "init engine", "Uvicorn", "max seq len", "No available memory",
            "Insufficient memory",
            "Free memory", "divisible", "warming up sampler", "ServerArgs", "torch distributed", "Load weight",
            "Memory pool end", "graph end", "max_total_num_tokens", "Not enough memory", "no GPU memory",
            "build:", "build_info:", "build = ", "build info", "kv_unified", "full-size SWA", "loaded meta data",
            "offloaded", "offloading", "buffer size",
            "n_ctx", "n_seq_max", "n_batch", "n_ubatch", "flash_attn", "Flash Attention", "size =", "KV self size",
            "compute capability", "ggml_cuda_init", "ggml_init_cublas", "using device", "MiB free)", "listening",
            "allocate",
            "cudaMalloc", "out of memory", "pid=",
            "pipeline parallelism", "sched copies", "VRAM", "top-p & top-k sampling", "Memory baseline", "Post-capture",
            "mxfp4.py:", "leveraging the Marlin kernel", "window memory pool", "SWAKVPool", "max_num_batched_tokens=",
            "memory calculation", "pool sizes", "attention block size", "free vs. target", "MiB used,",
            "memory_breakdown_print", "profiled value", "Encoder cache will be initialized", "FLASHINFER",
            "FlashInfer backend", "Requested memory", 'msg="model weights"', 'msg="kv cache"', 'msg="compute graph"',
            'msg="total memory"',
            "KvSize:", "memory layout", "memory for model", "buffer type overridden", "runner --model",
            "file type", "model ftype", "Meta device", ": - device ", "--kv-unified-per-slot",
            "CLIP using", "model size:", "compute allocated memory",
            # llama.cpp's ways to stop or come up (patterns.LLAMACPP_FAILURES and LLAMACPP_OUTCOMES)
            "error: ", "failed to create context", "failed to initialize the context", "error loading model",
            "failed to load model", "unable to load model", "memory allocation of size",
            "ErrorOutOfMemory", "GGML_ASSERT(", "Segmentation fault", "llama runner", "model loaded",
            "starting the main loop", "all slots are idle", "initializing", "MTP draft context", "loading draft model",
            "\u2588  version", "\u2588  model",
            # vLLM's and SGLang's crashes and their "it serves" line (patterns.CRASH_PATTERNS, SERVED_PATTERNS)
            "Error", "Exception", "died", "hit an exception", "sigquit", "scheduler is dead", "exit code",
            "exitcode", "no kernel image", "illegal memory access", "NCCL", "nccl", "Fatal Python", "SIG",
            "Aborted", "signal", "fired up")  # the banner's lines, without a prefix when piped


def shape(text: str) -> str:
    return text.translate(_SHAPE_TEXT)


_PLAIN_KEYWORDS = tuple(word for word in KEYWORDS if shape(word) == word and "0" not in word)
_NUMBERED_KEYWORDS = tuple(word for word in KEYWORDS if word not in _PLAIN_KEYWORDS)
_NUMBERED_SHAPES = tuple(map(shape, _NUMBERED_KEYWORDS))  # what they look like in a line's shape


def _holds(texts: Iterable[str], line: str) -> bool:
    return any(text in line for text in texts)


class Sifter:
    """The candidate patterns of each line, for one parser (the engines it reads)."""

    def __init__(self, engines: Iterable[str], max_bytes: int = MAX_SHAPE_BYTES):
        self.engines = frozenset(engines)
        self.max_bytes = max_bytes
        self.kept_bytes = 0
        # shape key -> (the keyword gate is exact, candidate patterns in table order)
        self.sifted: dict[bytes, tuple[bool, tuple[P.Pattern, ...]]] = {}
        # each pattern with its texts in shape, taken from P.ALL_PATTERNS on the first line sifted (tests swap it)
        self._shaped: tuple[tuple[P.Pattern, str, tuple[str, ...]], ...] | None = None

    def candidates(self, line: str) -> tuple[P.Pattern, ...]:
        key = line.encode("utf-8", "surrogatepass").translate(_SHAPE_BYTES)
        sifted = self.sifted.get(key)
        if sifted is None:
            sifted = self._sift(shape(line))
            if self.kept_bytes + len(key) <= self.max_bytes:
                self.sifted[key] = sifted
                self.kept_bytes += len(key)
        exact, candidates = sifted
        if exact or _holds(_NUMBERED_KEYWORDS, line):
            return candidates
        return ()

    def _sift(self, text: str) -> tuple[bool, tuple[P.Pattern, ...]]:
        if len(text) > MAX_TERM_LINE_CHARS:
            exact, long_only = True, True
        elif _holds(_PLAIN_KEYWORDS, text):
            exact, long_only = True, False
        elif _holds(_NUMBERED_SHAPES, text):
            exact, long_only = False, False
        else:
            return True, ()
        if self._shaped is None:
            self._shaped = tuple((p, shape(p.needle), tuple(map(shape, p.needles))) for p in P.ALL_PATTERNS)
        return exact, tuple(
            p for p, needle, needles in self._shaped
            if (not long_only or p.kind in LONG_LINE_KINDS) and (not p.engine or p.engine in self.engines)
            and needle in text and (len(needles) <= 1 or _holds(needles, text)))
