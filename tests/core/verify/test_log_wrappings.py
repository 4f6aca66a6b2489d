"""Logs as operators' tools hand them over, made from fixtures and read with the exact figures of the plain log:
Ray's folded worker lines, Grafana's JSON download (one line, read whole by the reader), and a restart whose last
start-up has no outcome yet. Every other wrapping runs over every fixture in test_log_transports.SAME."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gpustack_guard.adapters.files.logs import LineSplitter, LogLimits
from gpustack_guard.core.verify import logparse as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
RAY_NOTICE = (" (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see "
              "https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication "
              "for more options.)")
# vLLM over Ray on four nodes, TP 4 (its figures: test_logparse.py's table)
RAY_TP4 = "vllm/v1-0.10.1.1-gpt-oss-120b-4xa100-80gb-tp4-four-nodes.log"
# SGLang's KV line whose pattern ends at the line's end (the token count is the last word)
SGLANG_LAST_WORD = "sglang/granite-40-h-micro-16gb-bench-one-batch-mamba.log"


def gib(x: float) -> int:
    return int(round(x * 2**30))


def lines_of(name: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n"
            for line in (LOGS / name).read_text(encoding="utf-8").splitlines(True) if not line.startswith("##")]


def read_bytes(data: bytes, limits: LogLimits | None = None) -> list[str]:
    splitter = LineSplitter(limits or LogLimits())
    return [line for at in range(0, len(data), 4093) for line in splitter.split(data[at:at + 4093])] \
        + list(splitter.rest())


def figures(lines: list[str]) -> tuple[dict, dict, dict]:
    log, _ = parse_log(lines)
    return log.terms(), log.ranks, log.engine_terms


# -- Ray's folded lines ----------------------------------------------------------------------------------------

def folded(lines: list[str], only_workers: bool) -> list[str]:
    """Every line (or every Ray worker's line) as Ray's driver prints a folded one; the first also with Ray's notice."""
    out, noticed = [], False
    for line in lines:
        if only_workers and "(RayWorkerWrapper " not in line:
            out.append(line)
            continue
        out.append(line[:-1] + " [repeated 3x across cluster]" + ("" if noticed else RAY_NOTICE) + "\n")
        noticed = True
    return out


def test_ray_folded_worker_lines_read_the_figures_of_the_plain_log_and_say_what_ray_left_out():
    plain = lines_of(RAY_TP4)
    terms, ranks, _ = figures(folded(plain, only_workers=True))
    assert (terms, ranks) == figures(plain)[:2]
    assert ranks["pid 345"] == {P.WEIGHTS: gib(17.2217), P.KV_CACHE: gib(45.32)}
    log, _ = parse_log(folded(plain, only_workers=True))
    first = next(n for n, line in enumerate(plain, 1) if "Model loading took" in line)
    assert log.notes == [f"line {first}: 3 line(s) with a figure are Ray's folded copies ('[repeated Nx across "
                         "cluster]'): one worker's figure is printed, the other workers' copies (their figures may "
                         "differ) are not in the log; RAY_DEDUP_LOGS=0 prints each"]


def test_a_folded_line_whose_figure_is_its_last_word_is_read():
    plain = lines_of(SGLANG_LAST_WORD)
    wrapped = folded(plain, only_workers=False)
    assert figures(wrapped) == figures(plain)
    assert figures(wrapped)[2][P.KV_TOKENS] == 399740


@pytest.mark.parametrize("suffix,kept", [
    (" [repeated 3x across cluster]", False),
    ("  [repeated 12x across cluster]  ", False),  # a line that ended in a space, and a padded export
    (" [repeated 3x across cluster]" + RAY_NOTICE, False),
    # the engine's own words, or Ray's suffix not at the end: the line as printed
    (" [repeated 3 times]", True),
    (" [repeated 3x across cluster] and more", True),
    (" [repeated 1234567890x across cluster]", True),  # more digits than a count Ray prints
])
def test_only_rays_own_suffix_at_the_end_is_taken_off(suffix, kept):
    line = "[2026-02-01 00:05:03 TP0] KV Cache is allocated. #tokens: 399740"
    assert L.engine_text(line + suffix)[0] == (line + suffix.rstrip() if kept else line)


def test_a_line_of_unfinished_fold_marks_is_read_in_linear_time():
    line = "[repeated " * 50_000 + "x across cluster]" + "[repeated 9" * 30_000
    started = time.process_time()
    for _ in range(4):
        L.engine_text(line)
        parse_log([line + "\n"])
    assert time.process_time() - started < 2.0


# -- Grafana's JSON download -----------------------------------------------------------------------------------

def grafana_json(lines: list[str], newest_first: bool) -> bytes:
    rows = [{"line": line[:-1], "timestamp": str(1761923269123456789 + n), "date": "2025-10-31T15:07:49.123Z",
             "fields": {"app": "vllm"}} for n, line in enumerate(lines)]
    return (json.dumps(rows[::-1] if newest_first else rows, separators=(",", ":")) + "\n").encode()


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("name", [RAY_TP4, SGLANG_LAST_WORD, "llama.cpp/command-r-two-gpus.log"])
def test_grafanas_json_download_reads_the_figures_of_the_plain_log(name, newest_first):
    plain = lines_of(name)
    data = grafana_json(plain, newest_first)
    # one line longer than a line may be: read whole, as the whole log it is
    limits = LogLimits(max_line_bytes=1024)
    assert len(data) > limits.max_line_bytes
    assert figures(read_bytes(data, limits)) == figures(plain)


def test_only_a_log_that_opens_with_a_json_array_of_entries_has_a_line_past_the_line_cap():
    limits = LogLimits(max_line_bytes=64, max_bytes=1000)
    long_array = b'[{"line":"' + b"x" * 500 + b'"}]\n'
    assert read_bytes(long_array, limits) == [long_array[:-1].decode()]
    # past max_bytes even so, and any other long line (a Python list, a second line): cut at the line cap
    assert len(read_bytes(b'[{"line":"' + b"x " * 800 + b'"}]\n', limits)[0]) <= limits.max_bytes
    assert read_bytes(b"[" + b"x" * 500 + b"\n", limits) == ["[" + "x" * 63]
    assert read_bytes(b"a\n" + long_array, limits)[1] == long_array[:64].decode()


# -- a restart whose last start-up has no outcome yet ----------------------------------------------------------

def test_a_restart_still_loading_reads_the_last_complete_start_up_and_says_so():
    plain = lines_of(RAY_TP4)
    loading = [line for line in plain if "Model loading took" not in line][:6]  # version, args, ..., no figure
    log, _ = parse_log(plain + loading)
    assert (log.terms(), log.ranks) == figures(plain)[:2]
    assert log.terms()[P.KV_TOKENS] == 2640144
    assert log.notes == [f"the log holds 2 start-ups of vllm: the last one (line {len(plain) + 1}) has no outcome "
                         "yet (still loading, or the log stops in it); the last complete one (line 1) was read"]


def test_a_last_start_up_with_an_outcome_or_no_complete_one_before_it_is_read_as_the_last():
    plain = lines_of(RAY_TP4)
    loading = [line for line in plain if "Model loading took" not in line][:6]
    # the last start-up failed: its failure is the outcome read
    failed = plain + loading + ["(EngineCore_0 pid=1159) ValueError: No available memory for the cache blocks. "
                                "Try increasing `gpu_memory_utilization` when initializing the engine.\n"]
    log, _ = parse_log(failed)
    assert log.failure is not None and log.failure.startswith("ValueError: No available memory")
    assert P.KV_TOKENS not in log.terms()
    assert log.notes[0] == "the log holds 2 start-ups of vllm: the last one was read"
    # neither start-up has an outcome: the last one is read, as before
    log, _ = parse_log(loading + loading)
    assert log.notes == ["the log holds 2 start-ups of vllm: the last one was read"]
