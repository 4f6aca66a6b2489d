"""llama.cpp's refused allocations read as figures: the size a device asked for and could not get is that device's
compute (or KV) buffer, the request verify holds against the estimate. Lines as the builds print them (the vendored
llama.cpp of llama-cpp-python 0.2.29 to 0.3.36), under each backend's buffer names and ollama's journal prefix."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

GALLOCR = "ggml_gallocr_reserve_n: failed to allocate {dev} buffer of size 150995968"
GALLOCR_IMPL = "1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate {dev} buffer of size 150995968"
JOURNAL = "Aug 13 16:58:56 monster ollama[3010374]: ggml_gallocr_reserve_n: failed to allocate {dev} buffer of size " \
          "150995968"


def read(*lines: str):
    log, _ = parse_log([line + "\n" for line in lines], "llama.cpp")
    return log


@pytest.mark.parametrize("form", [GALLOCR, GALLOCR_IMPL, JOURNAL], ids=["reserve_n", "reserve_n_impl", "ollama"])
@pytest.mark.parametrize("device", ["CUDA0", "ROCm0", "Vulkan0", "MTL0", "MUSA0", "CUDA12"])
def test_a_refused_compute_reserve_is_that_devices_compute_buffer(form, device):
    log = read(form.format(dev=device), "llama_init_from_model: failed to initialize the context: failed to allocate "
               "compute pp buffers")
    assert log.failure_kind == "out-of-memory" and not log.started
    assert log.binding_rank() == device
    assert log.ranks[device] == {P.COMPUTE_BUFFER: 150_995_968}
    assert log.notes == [f"line 1: {device}'s compute buffer is the request of 150,995,968 B it refused (the figure "
                         "the device needed, not one it held)"]


def test_the_refusing_device_binds_over_a_fuller_kv_device():
    """ollama#6860's shape: the KV of four devices, then the fifth's reserve refused; the refusal is what bound."""
    log = read("llama_kv_cache_init:      CUDA0 KV buffer size =   640.00 MiB",
               "llama_kv_cache_init:      CUDA4 KV buffer size =    64.00 MiB",
               "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1144.00 MiB on device 4: cudaMalloc failed: "
               "out of memory",
               "ggml_gallocr_reserve_n: failed to allocate CUDA4 buffer of size 1199570944",
               "llama_new_context_with_model: failed to allocate compute buffers")
    assert log.binding_rank() == "CUDA4"
    assert log.terms()[P.KV_CACHE] == 64 * 2**20 and log.terms()[P.COMPUTE_BUFFER] == 1_199_570_944


def test_a_host_buffer_refusal_is_the_cpus_and_leaves_the_gpus_binding():
    log = read("llama_kv_cache_init:      CUDA0 KV buffer size =   640.00 MiB",
               "ggml_gallocr_reserve_n: failed to allocate CUDA_Host buffer of size 150995968")
    assert log.ranks["CPU"] == {P.COMPUTE_BUFFER: 150_995_968}
    assert log.binding_rank() == "CUDA0"


def test_a_retry_without_pipeline_parallelism_drops_the_refused_request_and_reads_its_own():
    refused = ("ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512",
               "graph_reserve: failed to allocate compute buffers",
               "sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism")
    came_up = read(*refused, "sched_reserve:      CUDA1 compute buffer size =  1024.00 MiB",
                   "srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'")
    assert came_up.started and came_up.failure is None
    assert came_up.ranks["CUDA1"] == {P.COMPUTE_BUFFER: 1024 * 2**20}
    assert not any("refused" in note and "CUDA1's" in note for note in came_up.notes)
    # no line after the retry: the device has no figure of its own, and no rank is left behind to bind
    cut = read(*refused)
    assert cut.ranks == {} and cut.binding_rank() is None
    # refused again without the copies: the second request is the device's
    again = read(*refused, "ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 2147483648",
                 "graph_reserve: failed to allocate compute buffers")
    assert again.ranks["CUDA1"] == {P.COMPUTE_BUFFER: 2**31} and again.failure_kind == "out-of-memory"


def test_a_refused_kv_buffer_is_read_from_the_tensor_range_the_kv_cache_names():
    """A launcher's test quoting llama-server (search-index file 59289607393): Vulkan, newest builds, the exception
    llama_init_from_model prints after alloc_tensor_range's line."""
    log = read("ggml_vulkan: Device memory allocation of size 1632174080 failed.",
               "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory",
               "0.05.982.175 E alloc_tensor_range: failed to allocate Vulkan0 buffer of size 1632174080",
               "0.06.650.537 E llama_init_from_model: failed to initialize the context: failed to allocate buffer for "
               "kv cache")
    assert log.failure_kind == "out-of-memory"
    assert log.binding_rank() == "Vulkan0" and log.ranks["Vulkan0"] == {P.KV_CACHE: 1_632_174_080}
    assert log.notes == ["line 3: Vulkan0's KV buffer is the request of 1,632,174,080 B it refused (the figure the "
                         "device needed, not one it held)"]


def test_a_refused_kv_buffer_adds_to_the_cache_the_device_already_holds():
    """An iSWA model: the full cache's buffer went through, the sliding one's is refused on the same device."""
    log = read("llama_kv_cache:      CUDA0 KV buffer size =  3072.00 MiB",
               "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 18.00 MiB on device 0: cudaMalloc failed: out "
               "of memory",
               "alloc_tensor_range: failed to allocate CUDA0 buffer of size 18874368",
               "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache")
    assert log.ranks["CUDA0"][P.KV_CACHE] == (3072 + 18) * 2**20


@pytest.mark.parametrize("known, device", [
    ("load_tensors:        CUDA1 model buffer size = 10240.00 MiB", "CUDA1"),
    ("load_tensors:        ROCm0 model buffer size = 10240.00 MiB", "ROCm1"),  # HIP builds print CUDA's words
    ("load_tensors:        MUSA0 model buffer size = 10240.00 MiB", "MUSA1"),
    (None, "CUDA1"),
])
def test_before_tensor_ranges_were_named_cudas_own_line_gives_the_kv_buffers_device(known, device):
    """0.2.29's to 0.3.2's builds: alloc_tensor_range prints nothing (not compiled in, then debug level), so the
    size is CUDA's line's, in MiB on a device index, and the backend is the one the log's other buffers name."""
    lines = ([known] if known else []) + [
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2560.00 MiB on device 1: cudaMalloc failed: out of "
        "memory",
        "llama_kv_cache_init: failed to allocate buffer for kv cache",
        "llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache"]
    log = read(*lines)
    assert log.ranks[device][P.KV_CACHE] == 2560 * 2**20
    assert log.failure_kind == "out-of-memory"


def test_a_refused_model_buffer_is_no_kv_or_compute_figure():
    """llama.cpp#20431's load: the tensor range is the model's; nothing says KV, so nothing is booked."""
    log = read("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: "
               "out of memory",
               "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624",
               "llama_model_load: error loading model: unable to allocate CUDA0 buffer")
    assert log.ranks == {} and log.failure_kind == "out-of-memory"


def test_a_refusal_followed_by_an_allocation_that_went_through_is_not_the_kv_caches():
    """A pinned-host refusal falls back to pageable memory and the KV buffer is then allocated: a later KV failure
    on another device is not the earlier request's."""
    log = read("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device 0: cudaMalloc failed: "
               "out of memory",
               "llama_kv_cache_init:      CUDA1 KV buffer size =   640.00 MiB",
               "llama_kv_cache_init: failed to allocate buffer for kv cache")
    assert log.ranks == {"CUDA1": {P.KV_CACHE: 640 * 2**20}}


def test_a_refused_size_past_what_any_engine_prints_is_not_read():
    log = read("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 9" + "9" * 30)
    assert log.ranks == {} and any("MAX_LOG_FIGURE" in note for note in log.notes)


# -- llama.cpp's --fit: each device's total and the free memory the fit measured ------------------------------------

@pytest.mark.parametrize("line, device, total, free", [
    # the first form (src/llama.cpp@0.3.20): used is the projection, free what it leaves, so they add up
    ("llama_params_fit_impl:   - Vulkan1 (Radeon RX 560 Series):   4096 total,   1947 used,   1222 free vs. target "
     "of   1024", "Vulkan1", 4096, 3169),
    ("llama_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3090):  24135 total,  30120 used,  -6290 free vs. target "
     "of   1024", "CUDA0", 24135, 23830),  # a projection past the free memory leaves a negative figure
    ("common_params_fit_impl:   - ROCm0 (Radeon RX 7900 XTX):  24560 total,  10000 used,  14000 free vs. target of "
     "  1024", "ROCm0", 24560, 24000),
    # the table (common/fit.cpp@0.3.36, llama-context.cpp@0.3.20 before the move)
    ("common_memory_breakdown_print: |   - ROCm1 (RX 9070 XT) | 16304 = 16140 + (10782 =  9938 +     640 +     204) "
     "+      -10618 |", "ROCm1", 16304, 16140),
    ("llama_memory_breakdown_print: |   - CUDA1 (RTX 4090)   | 24080 = 23589 + (12000 = 11000 +     800 +     200) "
     "+        -11509 |", "CUDA1", 24080, 23589),
    ("0.00.011.402 I common_memory_breakdown_print: |   - MTL0 (Apple M5) | 18185 = 18185 + (14459 = 11536 +  "
     "2500 +  423) +  -14459 |", "MTL0", 18185, 18185),
    ("Aug 13 16:58:56 host ollama[301]: common_memory_breakdown_print: |   - Vulkan0 (Radeon RX 580 Series) |  4096 = "
     " 3169 + (1237 =  1000 +  136 +  101) +  -310 |", "Vulkan0", 4096, 3169),
])
def test_a_fit_line_gives_the_devices_total_and_the_memory_it_fitted_against(line, device, total, free):
    log = read(line)
    assert log.ranks[device] == {P.GPU_MEMORY: total * 2**20, P.FREE_AT_FIT: free * 2**20}
    assert P.WEIGHTS not in log.ranks[device] and P.COMPUTE_BUFFER not in log.ranks[device]


@pytest.mark.parametrize("line, device, free", [
    # the layers --fit settled on (common/fit.cpp@0.3.36): mem used and free - mem left, so the two add up to what the
    # device had free; printed for one device too, where the "total ... vs. target" line is not (b9849's Vulkan run)
    ("0.03.826.881 I common_params_fit_impl:   - Vulkan0 (NVIDIA GeForce GTX 1070 Ti): 31 layers,   5742 MiB used,   "
     "1155 MiB free", "Vulkan0", 6897),
    # a MoE layer split across devices, and a device the fit still overfills
    ("common_params_fit_impl:   - CUDA1 (NVIDIA GeForce RTX 3090): 20 layers ( 1 overflowing),  22500 MiB used,   "
     "1000 MiB free", "CUDA1", 23500),
    ("llama_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 4090):  9 layers,  25000 MiB used,   -900 MiB free",
     "CUDA0", 24100),
])
def test_the_fits_settled_layers_give_the_memory_it_fitted_against(line, device, free):
    assert read(line).ranks[device] == {P.FREE_AT_FIT: free * 2**20}


def test_the_settled_line_replaces_the_initial_projection_of_the_same_device():
    log = read("common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3090):  24135 total,  30120 used,  -6290 free vs. "
               "target of   1024",
               "common_params_fit_impl:   - CUDA0 (NVIDIA GeForce RTX 3090): 30 layers,  22000 MiB used,   1829 MiB free")
    assert log.ranks["CUDA0"] == {P.GPU_MEMORY: 24135 * 2**20, P.FREE_AT_FIT: 23829 * 2**20}


def test_the_tables_host_row_and_header_are_no_device():
    log = read("common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   "
               "compute    unaccounted |",
               "common_memory_breakdown_print: |   - Host               |                   1056 =   784 +       0 +  "
               "   272                |")
    assert log.ranks == {}


def test_the_last_fit_line_of_a_device_is_kept():
    """--fit prints a table per step (the initial parameters, then the ones it tries): the free memory is re-measured
    each time; the last one is what the parameters were fitted against."""
    log = read("common_memory_breakdown_print: |   - ROCm1 (RX 9070 XT) | 16304 = 16140 + (30834 =  9938 +   20480 +  "
               "   416) +      -30670 |",
               "common_memory_breakdown_print: |   - ROCm1 (RX 9070 XT) | 16304 = 16100 + (10782 =  9938 +     640 +  "
               "   204) +      -10578 |")
    assert log.ranks["ROCm1"][P.FREE_AT_FIT] == 16100 * 2**20


def test_ollamas_relayed_error_names_the_refused_compute_buffer():
    """ollama#11355 (0.9.6): the runner's stderr comes back inside the API's error, newlines escaped, one line."""
    log = read('Error: 500 {"error":"llama runner process has terminated: cudaMalloc failed: out of memory\\n'
               'ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 9646586240\\ntime=2025-07-10T06:38:10.'
               '605Z level=DEBUG source=ggml.go:648 msg=\\"compute graph\\" nodes=1175 splits=1"}')
    assert log.failure_kind == "out-of-memory"
    assert log.ranks == {"CUDA0": {P.COMPUTE_BUFFER: 9_646_586_240}}
