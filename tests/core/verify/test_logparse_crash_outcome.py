"""A start-up's outcome when vLLM or SGLang crash: real logs with a real crash tail from another public log. A crash
after the pool line is no start-up; its words say whether memory ran out; a crash after the engine served is a
request's; the last start-up of a log decides."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def lines(name: str, first: int = 1, last: int | None = None) -> list[str]:
    return (LOGS / name).read_text(encoding="utf-8").splitlines(True)[first - 1:last]


SGLANG_SERVED = "sglang/llama31-8b-docs-quickstart.log"  # the pool on line 7, "fired up" on line 13
# the pool on line 26, graph capture on 29, "init engine ... took" on 30, the API server on 32
VLLM_SERVED = "vllm/v1-0.10.1.1-llama31-8b-fp16-ansi-131k.log"
ASSERT_TAIL = lines("sglang/dsv4-flash-fp8-4x-mi300x-dp4-pool-split-assert.log", 31, 34)  # the scheduler's assert
GRAPH_TAIL = lines("sglang/kimi-k25-int4-8x-mi355x-tp8-graph-crash.log", 53, 55)  # TypeError, then sigquit
TORCH_OOM_TAIL = lines("vllm/v1-0.8-torch-oom-two-ranks.log", 4, 4)
CORE_FAILED_TAIL = lines("vllm/v1-0.23-llama31-70b-fp8-rtx-pro-6000-gmu075-refused.log", 9, 9)


def outcome(log_lines: list[str], engine: str | None = None):
    log, _ = parse_log(log_lines, engine)
    return log.engine, log.started, log.failure_kind, log.failure_line


@pytest.mark.parametrize("tail, kind", [(ASSERT_TAIL, "engine-error"), (GRAPH_TAIL, "engine-error"),
                                        (TORCH_OOM_TAIL, "out-of-memory")])
def test_a_crash_after_sglangs_pool_is_no_start_up(tail, kind):
    head = lines(SGLANG_SERVED, 1, 11)  # the pool and graph capture, before the server came up
    assert outcome(head) == ("sglang", True, None, None)
    assert outcome(head + tail) == ("sglang", False, kind, 12)


@pytest.mark.parametrize("tail, kind", [(ASSERT_TAIL, "engine-error"), (CORE_FAILED_TAIL, "engine-error"),
                                        (TORCH_OOM_TAIL, "out-of-memory")])
def test_a_crash_after_vllms_pool_is_no_start_up(tail, kind):
    head = lines(VLLM_SERVED, 1, 29)  # the pool and graph capture, before the engine core came up
    assert outcome(head) == ("vllm", True, None, None)
    assert outcome(head + tail) == ("vllm", False, kind, 30)


CRASH = "(EngineCore_0 pid=82) ERROR 08-27 21:03:29 [core.py:700] "


@pytest.mark.parametrize("line, kind", [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "engine-error"),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "engine-error"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
     "engine-error"),
    ("Fatal Python error: Segmentation fault", "engine-error"),
    ("Worker proc VllmWorker-1 died unexpectedly, shutting down executor.", "engine-error"),
    ("RuntimeError: Engine core initialization failed. See root cause above.", "engine-error"),
    ("AssertionError", "engine-error"),
    ("RuntimeError: CUDA error: out of memory", "out-of-memory"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", "out-of-memory"),
    ("RuntimeError: failed to allocate 2.00 GiB for the cache", "out-of-memory"),
])
def test_each_crash_line_is_a_crash_of_its_kind(line, kind):
    head = lines(VLLM_SERVED, 1, 29)
    assert outcome(head + [CRASH + line + "\n"]) == ("vllm", False, kind, 30)
    assert outcome(head + [line + "\n"]) == ("vllm", False, kind, 30)  # a traceback's own last line


@pytest.mark.parametrize("line", [
    "(APIServer pid=15) WARNING 08-27 21:03:30 [x.py:1] Could not import flash_attn due to ImportError: none",
    "(APIServer pid=15) INFO 08-27 21:03:30 [x.py:1] error rate limits are set to 0",
    "(APIServer pid=15) WARNING 08-27 21:03:30 [x.py:1] UserWarning: TypedStorage is deprecated",
    "(APIServer pid=15) INFO 08-27 21:03:30 [x.py:1] Exceptions are logged with their request id",
])
def test_a_line_that_only_names_an_error_is_no_crash(line):
    head = lines(VLLM_SERVED, 1, 29)
    assert outcome(head + [line + "\n"]) == ("vllm", True, None, None)


# the tails' failure lines: the graph crash's "hit an exception", TypeError and sigquit; the assert's "hit an
# exception" and AssertionError (its traceback's File lines are none)
@pytest.mark.parametrize("name, last, tail, failing", [
    (VLLM_SERVED, None, GRAPH_TAIL, 3), (VLLM_SERVED, None, TORCH_OOM_TAIL, 1), (VLLM_SERVED, None, CORE_FAILED_TAIL, 1),
    (VLLM_SERVED, 30, ASSERT_TAIL, 2),  # the engine core came up ("init engine ... took"): its start-up is done
    (SGLANG_SERVED, None, ASSERT_TAIL, 2), (SGLANG_SERVED, None, TORCH_OOM_TAIL, 1)])
def test_a_crash_after_the_engine_came_up_is_a_requests(name, last, tail, failing):
    served = lines(name, 1, last)
    log, _ = parse_log(served + tail)
    assert (log.started, log.failure_kind, log.failure_line) == (True, None, None)
    assert any(note.startswith(f"line {len(served) + 1}: {failing} failure line(s) after the engine came up (line ")
               for note in log.notes), log.notes


def test_sglangs_uvicorn_line_comes_before_its_warm_up_which_can_still_fail():
    head = lines(SGLANG_SERVED, 1, 12)  # "Uvicorn running" on line 12, "fired up" on 13
    assert outcome(head + TORCH_OOM_TAIL) == ("sglang", False, "out-of-memory", 13)


def test_the_last_start_up_of_a_log_with_restarts_decides():
    crashed = lines(VLLM_SERVED, 1, 29) + CORE_FAILED_TAIL
    served = lines(VLLM_SERVED)
    assert outcome(crashed + served)[:3] == ("vllm", True, None)
    assert outcome(served + crashed)[:3] == ("vllm", False, "engine-error")
    sglang_crashed = lines(SGLANG_SERVED, 1, 11) + ASSERT_TAIL
    assert outcome(sglang_crashed + lines(SGLANG_SERVED))[:3] == ("sglang", True, None)
    assert outcome(lines(SGLANG_SERVED) + sglang_crashed)[:3] == ("sglang", False, "engine-error")


def test_a_llama_cpp_log_keeps_its_own_rows():
    """A Python crash line is no llama.cpp failure row: llama-cpp-python's warning tracebacks name no outcome."""
    head = lines("llama.cpp/command-r-two-gpus.log")
    assert outcome(head + ["AssertionError\n"], "llama.cpp") == ("llama.cpp", True, None, None)


@pytest.mark.parametrize("line", [
    "(EngineCore_0 pid=82) WARNING 08-27 21:03:29 [utils.py:12] Failed to import triton: ModuleNotFoundError: "
    "No module named 'triton'\n",
    "(EngineCore_0 pid=82) INFO 08-27 21:03:29.123 [config.py:90] KeyError: 'rope_type' read as the default\n",
    "DEBUG 08-27 21:03:29 [x.py:1] OSError: retried\n",
])
def test_an_exception_named_in_a_vllm_info_or_warning_line_is_no_crash(line):
    head = lines(VLLM_SERVED, 1, 29)
    assert outcome(head + [line]) == ("vllm", True, None, None)
    # the same text at ERROR, or behind a collector's own level, is the crash it says
    assert outcome(head + [line.replace("WARNING", "ERROR").replace("INFO", "ERROR").replace("DEBUG", "ERROR")])[:3] \
        == ("vllm", False, "engine-error")
    assert outcome(head + ["2025-10-31 15:07:49,123 - INFO - " + line.split("] ", 1)[1]])[:3] == \
        ("vllm", False, "engine-error")


def test_a_crash_quoted_from_a_traceback_head_names_what_died_not_the_head():
    """"Scheduler hit an exception: Traceback (most recent call last):" is quoted as what died; the traceback's
    head is no reason, and quoted it read like gsg's own traceback (benchmarks/fuzz.py found it)."""
    log, _ = parse_log(lines(SGLANG_SERVED, 1, 11) + ASSERT_TAIL)
    assert (log.failure, log.failure_line) == ("hit an exception", 12)
