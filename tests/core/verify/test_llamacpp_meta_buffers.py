"""--split-mode tensor's buffers: one "Meta" buffer type over every GPU, whose size is the largest GPU's share
(ggml/src/ggml-backend-meta.cpp@0c1e57098: the max of its per-device buffers). Its lines are read as that share on
each member GPU: the ones its name lists ("Meta(CUDA0,CUDA1)"), or, where the name is "Meta()" (the constructors name
it from a moved-from list, llama.cpp PR #25688), the GPUs llama.cpp listed when it made the Meta device
(src/llama.cpp llama_prepare_model_devices). Before this round the figures sat on one rank named "Meta()"."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import parse_log

MiB = 2**20
# the lines as llama.cpp 0c1e57098's format strings print them (%12s / %10s names, %8.2f MiB)
HEADER = ["llama_prepare_model_devices: creating a Meta device for tensor parallelism from 2 devices:",
          "llama_prepare_model_devices: - device 0: CUDA0 (NVIDIA GeForce RTX 3090)",
          "llama_prepare_model_devices: - device 1: CUDA1 (NVIDIA GeForce RTX 3090)"]
LOAD = ["llama_model_loader: loaded meta data with 30 key-value pairs and 292 tensors from /m/model.gguf (version "
        "GGUF V3 (latest))",
        "load_tensors: offloaded 33/33 layers to GPU",
        "load_tensors:   CPU_Mapped model buffer size =   281.81 MiB",
        "load_tensors:       Meta() model buffer size =  2219.18 MiB",
        "llama_context: n_ctx         = 8192",
        "llama_kv_cache:     Meta() KV buffer size =   512.00 MiB",
        "sched_reserve:     Meta() compute buffer size =   132.00 MiB",
        "sched_reserve:  CUDA_Host compute buffer size =    24.01 MiB"]
SHARE = {P.WEIGHTS: round(2219.18 * MiB), P.KV_CACHE: 512 * MiB, P.COMPUTE_BUFFER: 132 * MiB}


def parse(lines: list[str]):
    log, _ = parse_log(lines)
    return log


def test_an_unnamed_meta_buffer_is_each_listed_gpus_share():
    log = parse(HEADER + LOAD)
    assert log.ranks["CUDA0"] == SHARE and log.ranks["CUDA1"] == SHARE
    assert "Meta()" not in log.ranks and log.ranks["CPU"][P.WEIGHTS] == round(281.81 * MiB)
    assert "--split-mode=tensor" in backend_args(log)


@pytest.mark.parametrize("name, members", [("Meta(CUDA0,CUDA1)", ["CUDA0", "CUDA1"]),
                                           ("Meta(ROCm0,ROCm1,ROCm2)", ["ROCm0", "ROCm1", "ROCm2"])])
def test_a_named_meta_buffer_is_its_members_shares(name, members):
    log = parse([line.replace("Meta()", name) for line in LOAD])  # no device list needed
    assert {rank: log.ranks[rank] for rank in members} == {rank: SHARE for rank in members}


def test_the_device_list_of_given_devices_and_of_the_first_builds():
    # --device given: "creating a Meta device with N devices" and "- device i: NAME"; the first form of the list
    # came from llama_model_load_from_file_impl (JohannesGaessler/llama.cpp PR #16)
    given = ["llama_prepare_model_devices: creating a Meta device with 2 devices",
             "llama_prepare_model_devices: - device 0: CUDA2", "llama_prepare_model_devices: - device 1: CUDA3"]
    assert set(parse(given + LOAD).ranks) == {"CPU", "CUDA2", "CUDA3"}
    first = ["llama_model_load_from_file_impl: creating a Meta device for tensor parallelism from 2 devices:",
             "llama_model_load_from_file_impl: - device 0: MTL0 (Apple M2 Ultra)",
             "llama_model_load_from_file_impl: - device 1: RPC0 (127.0.0.1:50052)"]
    assert set(parse(first + LOAD).ranks) == {"CPU", "MTL0", "RPC0"}


def test_without_a_device_list_the_share_stays_one_rank_and_a_new_list_replaces_the_old():
    log = parse(LOAD)
    assert log.ranks["Meta()"] == SHARE and "--split-mode=tensor" in backend_args(log)
    again = parse(HEADER + ["llama_prepare_model_devices: creating a Meta device for tensor parallelism from 1 "
                            "devices:", "llama_prepare_model_devices: - device 0: CUDA1 (NVIDIA GeForce RTX 3090)"]
                  + LOAD)
    assert set(again.ranks) == {"CPU", "CUDA1"}


def test_a_layer_split_log_is_unchanged():
    log = parse([line.replace("Meta()", "CUDA0") for line in LOAD])
    assert log.ranks["CUDA0"] == SHARE and not any(flag.startswith("--split-mode") for flag in backend_args(log))


def test_verify_rebuilds_a_tensor_split_on_the_listed_gpus(gsg, tmp_path):
    import json
    log = tmp_path / "engine.log"
    log.write_text("\n".join(["build: 10507 (0c1e5709) with cc (Ubuntu 13.3.0) for x86_64-linux-gnu", *HEADER,
                              *LOAD]) + "\n")
    doc = json.loads(gsg("verify", "--log", str(log), "-m", "meta-llama/Llama-3.1-8B-Instruct", "--quantization",
                         "q4_k_m", "--gpu-memory", "24GiB", "-o", "json").out)
    assert "--split-mode=tensor" in doc["backend_args"] and set(doc["ranks"]) >= {"CUDA0", "CUDA1"}
    # Llama-3.1-8B's 8 KV heads, 4 a GPU: 8,192 cells x 32 layers x 4 heads x 512 bytes, as the Meta line holds
    assert doc["observed"][P.KV_CACHE] == doc["estimated"][P.KV_CACHE] == 512 * MiB
