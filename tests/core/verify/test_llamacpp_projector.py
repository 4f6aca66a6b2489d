"""llama.cpp's vision projector (--mmproj) in a start-up log: the CLIP context's weights and compute buffer are the
projector's own terms on the device its backend line names, never the text model's, and a reserve its warm-up is
refused is the projector's (tools/mtmd/clip.cpp@0.3.36 clip_ctx, load_hparams and reserve_compute_meta;
examples/llava/clip.cpp@0.2.85 clip_model_load, llama-cpp-python's sdists)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log


def mib(x: float) -> int:
    return int(round(x * 2**20))


def read(lines: list[str]):
    log, _ = parse_log([line + "\n" for line in lines], "llama.cpp")
    return log


# the text model's lines, built from the format strings of the same builds (sched_reserve: llama-context.cpp@0.3.36)
TEXT_MODEL = [
    "llama_model_load_from_file_impl: using device CUDA0 (Tesla P100-PCIE-16GB) (0000:03:00.0) - 16017 MiB free",
    "load_tensors: offloaded 41/41 layers to GPU",
    "load_tensors:   CPU_Mapped model buffer size =   394.00 MiB",
    "load_tensors:        CUDA0 model buffer size =  9000.00 MiB",
    "llama_context: n_ctx         = 8192",
    "llama_kv_cache:      CUDA0 KV buffer size =  1280.00 MiB",
    "sched_reserve:      CUDA0 compute buffer size =   304.00 MiB",
    "sched_reserve:  CUDA_Host compute buffer size =    24.01 MiB",
]

# search-index file 58091952734 quotes a Qwen3.6 mmproj-Q8_0 on a Tesla P100 with flash attention off: the CLIP
# warm-up (a 1,472 x 1,472 image) materialises its attention in full and its reserve is refused
PROJECTOR_REFUSED = [
    "clip_ctx: CLIP using CUDA0 backend",
    "load_hparams: model size:         613.14 MiB",
    "load_hparams: metadata size:      0.12 MiB",
    "get_dummy_batch: warmup with image size = 1472 x 1472",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4657.81 MiB on device 0: cudaMalloc failed: out of memory",
    "ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 4884066560",
    "reserve_compute_meta: graph splits = 1, nodes = 877",
    "warmup: flash attention is disabled",
]


def test_a_refused_projector_warm_up_is_the_projectors_compute_not_the_text_models():
    log = read(TEXT_MODEL + PROJECTOR_REFUSED)
    # before: the refused 4,884,066,560 B replaced CUDA0's 304 MiB compute buffer as the text model's
    assert log.ranks["CUDA0"] == {P.FREE_BEFORE_LOAD: mib(16017), P.WEIGHTS: mib(9000), P.KV_CACHE: mib(1280),
                                  P.COMPUTE_BUFFER: mib(304), P.PROJECTOR_WEIGHTS: mib(613.14),
                                  P.PROJECTOR_COMPUTE: 4_884_066_560}
    assert (log.started, log.failure_kind) == (False, "out-of-memory")
    assert any(note.startswith("line 14: CUDA0's vision projector's compute buffer is the request of 4,884,066,560 B")
               for note in log.notes)


def test_a_projector_that_loads_is_read_on_its_own_device_beside_the_text_model():
    # the same file's RX 6900 XT run: llama-server's Vulkan build on Vulkan1, flash attention on (248.10 MiB)
    log = read([line.replace("CUDA0", "Vulkan1").replace("CUDA_Host", "Vulkan_Host") for line in TEXT_MODEL] + [
        "clip_ctx: CLIP using Vulkan1 backend",
        "load_hparams: projector:          qwen3vl_merger",
        "load_hparams: model size:         613.14 MiB",
        "load_tensors: loaded 334 tensors from mmproj/qwen3.6-mmproj-Q8_0.gguf",
        "get_dummy_batch: warmup with image size = 1472 x 1472",
        "reserve_compute_meta:    Vulkan1 compute buffer size =   248.10 MiB",
        "reserve_compute_meta:        CPU compute buffer size =    24.93 MiB",
        "warmup: flash attention is enabled"])
    assert log.ranks["Vulkan1"][P.COMPUTE_BUFFER] == mib(304)
    assert (log.ranks["Vulkan1"][P.PROJECTOR_WEIGHTS], log.ranks["Vulkan1"][P.PROJECTOR_COMPUTE]) == \
        (mib(613.14), mib(248.10))
    assert log.ranks["CPU"] == {P.WEIGHTS: mib(394), P.COMPUTE_BUFFER: mib(24.01), P.PROJECTOR_COMPUTE: mib(24.93)}
    assert log.started and log.failure is None
    assert "Vulkan1 holds the vision projector (--mmproj): 613.14 MiB of weights and 248.10 MiB of compute buffer " \
        "beside the text model's; gsg's llama.cpp estimate does not size a projector" in log.notes


# llamafile's llava-v1.5-7b of October 2024 (search-index file 19445609683): the llava build loads the CLIP model
# first ("MB" figures), on the CPU, then the text model
LLAVA_CPU = [
    "clip_model_load: CLIP using CPU backend",
    "clip_model_load: model size:     169.18 MB",
    "clip_model_load: metadata size:  0.17 MB",
    "clip_model_load: params backend buffer size =  169.18 MB (377 tensors)",
    "clip_model_load: compute allocated memory: 32.89 MB",
    "llama_model_loader: loaded meta data with 19 key-value pairs and 291 tensors from llava-v1.5-7b-Q4_K.gguf "
    "(version GGUF V3 (latest))",
    "llm_load_tensors:        CPU buffer size =  3891.24 MiB",
    "llama_new_context_with_model: n_ctx      = 2048",
    "llama_kv_cache_init:        CPU KV buffer size =  1024.00 MiB",
    "llama_new_context_with_model:        CPU compute buffer size =   164.01 MiB",
]


def test_a_llava_builds_projector_loads_first_and_its_figures_stay_its_own():
    log = read(LLAVA_CPU)
    assert log.ranks == {"CPU": {P.PROJECTOR_WEIGHTS: mib(169.18), P.PROJECTOR_COMPUTE: mib(32.89),
                                 P.WEIGHTS: mib(3891.24), P.KV_CACHE: mib(1024), P.COMPUTE_BUFFER: mib(164.01)}}


def test_a_text_models_refused_reserve_after_a_llava_projector_is_the_text_models():
    # the text model's lines end the projector's: its own refused reserve is its compute buffer
    log = read(LLAVA_CPU[:5] + [
        "llm_load_tensors:      CUDA0 buffer size =  3820.94 MiB",
        "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB",
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 171966464"])
    assert log.ranks["CUDA0"] == {P.WEIGHTS: mib(3820.94), P.KV_CACHE: mib(1024), P.COMPUTE_BUFFER: 171_966_464}


@pytest.mark.parametrize("header,backend_line,device", [
    # examples/llava/clip.cpp@0.2.85: the CUDA build's CLIP is ggml_backend_cuda_init(0), named by the build's devices
    ("ggml_cuda_init: found 1 CUDA devices:", "clip_model_load: CLIP using CUDA backend", "CUDA0"),
    ("ggml_cuda_init: found 2 ROCm devices:", "clip_model_load: CLIP using CUDA backend", "ROCm0"),
    ("ggml_cuda_init: found 1 CUDA devices:", "clip_model_load: CLIP using CANN backend", "CANN0"),
    ("ggml_cuda_init: found 1 CUDA devices:", "clip_model_load: CLIP using Metal backend", "Metal"),
    # tools/mtmd/clip.cpp@0.3.36 prints the backend's own name: any device, Metal's MTL0 too
    ("ggml_cuda_init: found 2 CUDA devices:", "clip_ctx: CLIP using CUDA1 backend", "CUDA1"),
    ("ggml_cuda_init: found 1 CUDA devices:", "clip_ctx: CLIP using MTL0 backend", "MTL0"),
])
def test_the_backend_line_names_the_projectors_device(header, backend_line, device):
    log = read([header, backend_line, "load_hparams: model size:         887.99 MiB"])
    assert log.ranks == {device: {P.PROJECTOR_WEIGHTS: mib(887.99)}}


def test_a_projector_figure_without_its_backend_line_is_not_placed():
    # an excerpt that starts at the size line names no device: nothing is guessed
    assert read(["load_hparams: model size:         887.99 MiB"]).ranks == {}


def test_a_restart_drops_the_earlier_start_ups_projector():
    load = "llama_model_loader: loaded meta data with 19 key-value pairs and 291 tensors from m.gguf (version GGUF V3)"
    log = read([load] + TEXT_MODEL + PROJECTOR_REFUSED[:2] + [
        load, "load_tensors:        CUDA0 model buffer size =  9000.00 MiB",
        "llama_kv_cache:      CUDA0 KV buffer size =   640.00 MiB"])
    assert log.ranks["CUDA0"] == {P.WEIGHTS: mib(9000), P.KV_CACHE: mib(640)}
    assert not any("vision projector" in note for note in log.notes)
