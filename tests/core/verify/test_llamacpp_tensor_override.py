"""llama.cpp's buffer overrides (--override-tensor, --cpu-moe, --n-cpu-moe): each moved tensor's line, in the wordings
of llama.cpp's info and debug levels and ik_llama.cpp's, is read as the override the rebuild passes on."""

from __future__ import annotations

import re

import pytest

from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import parse_log

BUFFERS = ["load_tensors:   CPU_Mapped model buffer size =  9222.78 MiB",
           "load_tensors:        CUDA0 model buffer size =  2200.21 MiB"]


@pytest.mark.parametrize("line, flag", [
    # llama.cpp at info level (spring 2025), as a gpt-oss-20b run with --n-cpu-moe printed it
    ("tensor blk.0.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CUDA_Host",
     "--override-tensor=^blk\\.0\\.ffn_gate_exps\\.weight$=CUDA_Host"),
    # later builds print it at debug level (-lv 5) behind the timestamp and level letter
    ("0.01.100 D tensor blk.0.ffn_down_exps.weight (136 MiB q4_0) buffer type overridden to CUDA_Host",
     "--override-tensor=^blk\\.0\\.ffn_down_exps\\.weight$=CUDA_Host"),
    # ik_llama.cpp's wording, a tensor sent to the CPU itself
    ("Tensor blk.39.ffn_up_exps.weight (size = 210.00 MiB) buffer type overridden to CPU",
     "--override-tensor=^blk\\.39\\.ffn_up_exps\\.weight$=CPU"),
])
def test_a_moved_tensor_is_passed_on_as_an_override(line, flag):
    log, _ = parse_log([line] + BUFFERS)
    assert flag in backend_args(log)


def test_every_moved_tensor_is_passed_on_once_and_none_means_no_override():
    lines = ["tensor blk.0.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CUDA_Host",
             "tensor blk.1.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CPU"]
    log, _ = parse_log(lines + lines + BUFFERS)  # a second load prints them again
    assert [a for a in backend_args(log) if a.startswith("--override")] == [
        "--override-tensor=^blk\\.0\\.ffn_gate_exps\\.weight$=CUDA_Host,^blk\\.1\\.ffn_gate_exps\\.weight$=CPU"]
    plain, _ = parse_log(BUFFERS)
    assert not any(a.startswith("--override") for a in backend_args(plain))
    # the word alone (a help text, a comment) is no override
    quoted, _ = parse_log(["# moves experts: buffer type overridden to CUDA_Host"] + BUFFERS)
    assert "override_tensor" not in quoted.args


def test_the_output_and_token_embd_lines_are_passed_on_as_those_tensors_only():
    """The loader matches a pattern anywhere in a name: the rebuild passes each moved tensor anchored and escaped,
    so output.weight moved to the CPU does not also take every block's attn_output.weight."""
    from gpustack_guard.core.memory.engines.llamacpp import parse_override_tensor

    lines = ["tensor output.weight (243 MiB q6_K) buffer type overridden to CPU",
             "tensor token_embd.weight (166 MiB q4_K) buffer type overridden to CUDA0"]
    log, _ = parse_log(lines + BUFFERS)
    [flag] = [a for a in backend_args(log) if a.startswith("--override")]
    assert flag == r"--override-tensor=^output\.weight$=CPU,^token_embd\.weight$=CUDA0"
    pairs = parse_override_tensor(flag.split("=", 1)[1])
    names = ["output.weight", "blk.3.attn_output.weight", "token_embd.weight", "output_norm.weight"]
    assert [[n for n in names if re.search(p, n)] for p, _ in pairs] == [["output.weight"], ["token_embd.weight"]]
