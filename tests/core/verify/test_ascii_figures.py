"""Every pattern reads figures and builds in ASCII digits only: Python's `\\d` and int() take any script's digits,
so a line with Arabic-Indic or full-width digits would give a build like b٣٤ (newer than b100 to the version
table) or a figure no engine prints. Engines print [0-9]; such a line is not read."""

from __future__ import annotations

import re

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log


@pytest.mark.parametrize("line,engine", [
    ("build: \u0663\u0664 (dd9280a66) with cc (GCC) 12.2.0 for x86_64-linux-gnu", "llama.cpp"),
    ("build_info: b\uff19\uff11\uff10\uff16-dd9280a66", "llama.cpp"),
    ("[2025-11-30 12:50:10] KV Cache is allocated. #tokens: \u0663\u0664, K size: 1.00 GB, V size: 1.00 GB",
     "sglang"),
    ("INFO 05-01 10:00:09 gpu_executor.py:96] # GPU blocks: \uff12\uff12\uff19, # CPU blocks: 512", "vllm"),
])
def test_a_figure_in_another_scripts_digits_is_not_read(line, engine):
    log, _ = parse_log([line + "\n"], engine)
    assert log.engine_version is None
    assert P.KV_TOKENS not in log.terms() and P.GPU_BLOCKS not in log.terms()


def test_the_same_lines_in_ascii_digits_are_read():
    log, _ = parse_log(["build_info: b9106-dd9280a66\n"], "llama.cpp")
    assert log.engine_version == "9106"
    log, _ = parse_log(["INFO 05-01 10:00:09 gpu_executor.py:96] # GPU blocks: 229, # CPU blocks: 512\n"], "vllm")
    assert log.terms()[P.GPU_BLOCKS] == 229


def test_every_pattern_is_compiled_ascii():
    assert all(p.regex.flags & re.ASCII for p in P.ALL_PATTERNS)
