"""llama.cpp's buffer overrides (--override-tensor, --cpu-moe, --n-cpu-moe): each moved tensor's line, in the wordings
of llama.cpp's info and debug levels and ik_llama.cpp's, is read as the override the rebuild passes on."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import parse_log

BUFFERS = ["load_tensors:   CPU_Mapped model buffer size =  9222.78 MiB",
           "load_tensors:        CUDA0 model buffer size =  2200.21 MiB"]


@pytest.mark.parametrize("line, flag", [
    # llama.cpp at info level (spring 2025), as a gpt-oss-20b run with --n-cpu-moe printed it
    ("tensor blk.0.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CUDA_Host",
     "--override-tensor=blk.0.ffn_gate_exps.weight=CUDA_Host"),
    # later builds print it at debug level (-lv 5) behind the timestamp and level letter
    ("0.01.100 D tensor blk.0.ffn_down_exps.weight (136 MiB q4_0) buffer type overridden to CUDA_Host",
     "--override-tensor=blk.0.ffn_down_exps.weight=CUDA_Host"),
    # ik_llama.cpp's wording, a tensor sent to the CPU itself
    ("Tensor blk.39.ffn_up_exps.weight (size = 210.00 MiB) buffer type overridden to CPU",
     "--override-tensor=blk.39.ffn_up_exps.weight=CPU"),
])
def test_a_moved_tensor_is_passed_on_as_an_override(line, flag):
    log, _ = parse_log([line] + BUFFERS)
    assert flag in backend_args(log)


def test_every_moved_tensor_is_passed_on_once_and_none_means_no_override():
    lines = ["tensor blk.0.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CUDA_Host",
             "tensor blk.1.ffn_gate_exps.weight (134 MiB mxfp4) buffer type overridden to CPU"]
    log, _ = parse_log(lines + lines + BUFFERS)  # a second load prints them again
    assert [a for a in backend_args(log) if a.startswith("--override")] == [
        "--override-tensor=blk.0.ffn_gate_exps.weight=CUDA_Host,blk.1.ffn_gate_exps.weight=CPU"]
    plain, _ = parse_log(BUFFERS)
    assert not any(a.startswith("--override") for a in backend_args(plain))
    # the word alone (a help text, a comment) is no override
    quoted, _ = parse_log(["# moves experts: buffer type overridden to CUDA_Host"] + BUFFERS)
    assert "override_tensor" not in quoted.args
