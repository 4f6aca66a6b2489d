"""--split-mode row's buffers: "CUDA0_Split" is CUDA0's share (llama.cpp of 2025), "CUDA_Split" the whole split over
every device (2024 builds and ik_llama.cpp), which is no one device's figure; either way the rebuild runs row split."""

from __future__ import annotations

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import backend_args
from gpustack_guard.core.verify.logparse import parse_log

MiB = 2**20


def parse(lines: list[str]):
    log, _ = parse_log(lines)
    return log


def test_an_unindexed_split_buffer_is_spread_over_the_devices_and_named_in_a_note():
    # search-index file 25852725975: four RTX 3090 at -sm row, the split weights on one line, CUDA0's own 3.05 MiB
    log = parse(["llm_load_tensors: offloaded 65/65 layers to GPU",
                 "llm_load_tensors: CUDA_Split buffer size = 64738.50 MiB",
                 "llm_load_tensors:        CPU buffer size =  3187.50 MiB",
                 "llm_load_tensors:      CUDA0 buffer size =     3.05 MiB",
                 "llama_new_context_with_model: n_ctx      = 32768",
                 "llama_kv_cache_init:      CUDA0 KV buffer size =  2048.00 MiB"])
    assert "CUDA" not in log.ranks and log.ranks["CUDA0"][P.WEIGHTS] == round(3.05 * MiB)
    assert log.notes == ["line 2: 64,738.50 MiB of row-split weights (--split-mode row) are spread over the devices "
                         "by --tensor-split: they are no one device's, so the devices' weights leave them out"]
    assert "--split-mode=row" in backend_args(log)
    rocm = parse(["llm_load_tensors: ROCm_Split buffer size = 100.00 MiB",
                  "llama_kv_cache_init:      ROCm0 KV buffer size =  64.00 MiB"])
    assert set(rocm.ranks) == {"ROCm0"} and "--split-mode=row" in backend_args(rocm)


def test_an_indexed_split_buffer_is_its_devices_and_a_plain_log_is_layer_split():
    # llama.cpp#13661 (b5261, four K80 GPUs at -sm row): each device's split share beside its own buffer
    log = parse(["load_tensors:  CUDA0_Split model buffer size =   248.62 MiB",
                 "load_tensors:        CUDA0 model buffer size =  7969.22 MiB",
                 "llama_kv_cache_unified:      CUDA0 KV buffer size =   128.00 MiB"])
    assert log.ranks["CUDA0"][P.WEIGHTS] == round(248.62 * MiB) + round(7969.22 * MiB)
    assert log.notes == [] and "--split-mode=row" in backend_args(log)
    plain = parse(["load_tensors:        CUDA0 model buffer size =  7969.22 MiB"])
    assert not any(flag.startswith("--split-mode") for flag in backend_args(plain))


def test_a_restart_drops_the_split_weights_of_the_start_up_before():
    log = parse(["build: 2400 (aaaaaaa) with cc", "llm_load_tensors: CUDA_Split buffer size = 100.00 MiB",
                 "build: 2401 (bbbbbbb) with cc", "llm_load_tensors:      CUDA0 buffer size =  10.00 MiB"])
    assert log.notes == ["the log holds 2 start-ups of llama.cpp: the last one was read"]
