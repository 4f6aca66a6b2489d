"""llama.cpp's scheduler without pipeline copies where the log shows it (profiles.LLAMACPP_PIPELINE_ENV): llama.cpp#12369's
five Radeon VII print their KV and compute buffers with no "pipeline parallelism enabled" line between them, 2,664 MiB
each; gsg's four copies of the 64 MiB f32 KQ mask made that 2,906 MiB (+9.1 %), one copy 2,684 MiB (+0.8 %)."""

from __future__ import annotations

import pytest
from support import REPO

from gpustack_guard.commands import verify as V
from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.memory.engine import llamacpp_pipeline_off
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = REPO / "tests" / "fixtures" / "logs" / "llama.cpp"
OFF = {MP.LLAMACPP_PIPELINE_ENV: MP.LLAMACPP_PIPELINE_OFF}


def parsed(lines: list[str]):
    return parse_log(lines, P.LLAMACPP)[0]


def fixture(name: str):
    return parsed((LOGS / name).read_text(encoding="utf-8").splitlines(True))


def test_five_radeon_vii_without_the_line_are_estimated_with_one_copy():
    path = LOGS / "qwen25-32b-q4km-5x-radeon-vii-rocm-32768-no-fa.log"
    log = fixture(path.name)
    assert C.pipeline_env(log) == OFF
    opts = V.VerifyOptions(log=str(path), model="Qwen/Qwen2.5-32B", gpu_memory="16368MiB", gpu_name="AMD Radeon VII",
                           backend_version="b4880", quantization="q4_k_m",
                           backend_args=("--ctx-size=32768", "--n-gpu-layers=100"))
    est = V.rebuild(opts, log).evaluation.estimate
    assert est.extra["pipeline_copies"] == 1
    assert est.extra["per_device"][0]["compute"] == 2_814_377_984  # 2,684 MiB against the log's 2,664
    log.matched[P.LLAMACPP_PIPELINE_ENABLED] = 1  # as if the line had been printed: four copies, as before
    assert C.pipeline_env(log) == {}
    est = V.rebuild(opts, log).evaluation.estimate
    assert est.extra["pipeline_copies"] == 4
    assert est.extra["per_device"][0]["compute"] == 3_047_168_000


@pytest.mark.parametrize("name,env", [
    # llama.cpp#22404's two devices print the line without its count: copies kept
    ("hybrid-layer-split-2080ti-p100-kv-rs.log", {}),
    # PR #6122's two devices print "(n_copies=4)"
    ("command-r-two-gpus.log", {}),
    # PR #26297's reserve retried without pipeline parallelism: the buffers printed are the retry's
    ("retry-without-pipeline-minimax-m3-three-gpus.log", OFF),
    # four MI100 under llama-cpp-python before PR #6017: no line, and no copies at that build either
    ("mistral-7b-v02-q5km-4x-mi100-rocm-llama-cpp-python-4096.log", OFF),
    # one device: nothing to say
    ("qwen25-coder-32b-q8kv-rx7900xtx-rocm-32768.log", {}),
])
def test_each_logs_pipeline_as_its_lines_show(name, env):
    assert C.pipeline_env(fixture(name)) == env


def test_an_excerpt_that_starts_at_the_compute_buffers_says_nothing():
    lines = [f"llama_init_from_model:      ROCm{i} compute buffer size =  2664.00 MiB\n" for i in range(2)]
    assert C.pipeline_env(parsed(lines)) == {}
    kv = [f"llama_kv_cache_init:      ROCm{i} KV buffer size =  1664.00 MiB\n" for i in range(2)]
    assert C.pipeline_env(parsed(lines + kv)) == {}  # the KV lines after the compute ones: not one context
    assert C.pipeline_env(parsed(kv + lines)) == OFF


def test_the_env_reads_off_and_refuses_anything_else():
    assert llamacpp_pipeline_off({MP.LLAMACPP_PIPELINE_ENV: "Off"}) is True
    assert llamacpp_pipeline_off({}) is False
    with pytest.raises(ValueError, match="GSG_LLAMACPP_PIPELINE"):
        llamacpp_pipeline_off({MP.LLAMACPP_PIPELINE_ENV: "on"})
