"""Every llama.cpp start-up line verify reads, in the format each build range prints it.

Each line is built from the LLAMA_LOG format string of the build named beside it, with realistic values (the
device name right-aligned in %10s or %12s as printed), and the test asserts the exact figure read. The builds are
the llama.cpp that llama-cpp-python vendors in its sdists (CHANGELOG.md names the commit):

    0.2.20 b38a16df (Nov 2023, ~b1500)   0.2.56 c2101a2e (Mar 2024, ~b2400)   0.2.85 398ede5e (Aug 2024, ~b3500)
    0.3.7  794fe23f (Jan 2025, ~b4500)   0.3.9  8733e0cf (May 2025, ~b5500)   0.3.16 4227c9be (Aug 2025, ~b6200)
    0.3.20 f49e9178 (~b7000)             0.3.26 7c158fbb                      0.3.36 0c1e57098 (the newest)
"""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import backend_args, logged_gguf_quantization
from gpustack_guard.core.verify.logparse import parse_log


def mib(x: float) -> int:
    return int(round(x * 2**20))


def read(lines: list[str]):
    log, _ = parse_log([line + "\n" for line in lines], "llama.cpp")
    return log


# -- before the ggml-backend buffers: the VRAM lines (b38a16df, llama.cpp) ---------------------------------------

B1500 = [
    "llm_load_tensors: ggml ctx size =    0.11 MiB",
    "llm_load_tensors: using CUDA for GPU acceleration",
    "llm_load_tensors: mem required  =   70.42 MiB",
    "llm_load_tensors: offloading 32 repeating layers to GPU",
    "llm_load_tensors: offloading non-repeating layers to GPU",
    "llm_load_tensors: offloaded 35/35 layers to GPU",
    "llm_load_tensors: VRAM used: 3577.56 MiB",
    "llama_new_context_with_model: n_ctx      = 4096",
    "llama_new_context_with_model: freq_base  = 10000.0",
    "llama_kv_cache_init: offloading v cache to GPU",
    "llama_kv_cache_init: offloading k cache to GPU",
    "llama_kv_cache_init: VRAM kv self = 2048.00 MiB",
    "llama_new_context_with_model: kv self size  = 2048.00 MiB",
    "llama_new_context_with_model: compute buffer total size = 291.32 MiB",
    "llama_new_context_with_model: VRAM scratch buffer: 288.00 MiB",
    "llama_new_context_with_model: total VRAM used: 5913.56 MiB (model: 3577.56 MiB, context: 2336.00 MiB)",
]


def test_a_b1500_cuda_start_up_reads_its_vram_lines():
    log = read(B1500)
    assert log.ranks == {"main": {P.WEIGHTS: mib(3577.56), P.KV_CACHE: mib(2048.0), P.COMPUTE_BUFFER: mib(288.0)}}
    assert log.engine_terms == {P.LAYERS_OFFLOADED: 35, P.LAYERS_TOTAL: 35, P.KV_TOKENS: 4096}
    assert (log.started, log.missing()) == (True, [])


def test_the_total_line_takes_the_models_share_where_vram_used_counted_the_kv_in():
    # the earlier builds offloaded K and V from llm_load_tensors and counted them in "VRAM used" ("MB": / 1024 / 1024)
    log = read(["llm_load_tensors: offloading v cache to GPU", "llm_load_tensors: offloading k cache to GPU",
                "llm_load_tensors: offloaded 35/35 layers to GPU", "llm_load_tensors: VRAM used: 12860 MB",
                "llama_new_context_with_model: kv self size  =  256.00 MB",
                "llama_new_context_with_model: compute buffer total size = 76.63 MB",
                "llama_new_context_with_model: VRAM scratch buffer: 70.50 MB",
                "llama_new_context_with_model: total VRAM used: 12929.52 MB (model: 12603.02 MB, context: 326.50 MB)"])
    assert log.ranks == {"main": {P.WEIGHTS: mib(12603.02), P.COMPUTE_BUFFER: mib(70.5)}}
    assert log.started  # the compute buffer was measured: the context is built


def test_a_b1500_cpu_start_up_has_no_gpu_weights():
    log = read(["llm_load_tensors: offloaded 0/35 layers to GPU", "llm_load_tensors: VRAM used: 0.00 MiB"])
    assert log.ranks == {"main": {P.WEIGHTS: 0}}


# -- the backend buffer lines, build by build --------------------------------------------------------------------

@pytest.mark.parametrize("line,device,term,value", [
    # model buffers: "%10s buffer size" (llm_load_tensors, c2101a2e and 398ede5e), "%12s model buffer size"
    # (load_tensors, 794fe23f to 0c1e57098)
    ("llm_load_tensors:      CUDA0 buffer size =  3820.94 MiB", "CUDA0", P.WEIGHTS, 3820.94),
    ("llm_load_tensors:        CPU buffer size =    70.31 MiB", "CPU", P.WEIGHTS, 70.31),
    ("load_tensors:        CUDA0 model buffer size =  4168.09 MiB", "CUDA0", P.WEIGHTS, 4168.09),
    ("load_tensors:   CPU_Mapped model buffer size =   281.81 MiB", "CPU", P.WEIGHTS, 281.81),
    ("load_tensors:  CUDA1_Split model buffer size =  1024.00 MiB", "CUDA1", P.WEIGHTS, 1024.0),
    # KV buffers: llama_kv_cache_init (c2101a2e to 794fe23f), llama_kv_cache_unified and llama_kv_cache_recurrent
    # (8733e0cf, llama-kv-cache.cpp), llama_kv_cache_unified (4227c9be), llama_kv_cache (7c158fbb, 0c1e57098)
    ("llama_kv_cache_init:      CUDA0 KV buffer size =  2048.00 MiB", "CUDA0", P.KV_CACHE, 2048.0),
    ("llama_kv_cache_unified:      CUDA0 KV buffer size =   576.00 MiB", "CUDA0", P.KV_CACHE, 576.0),
    ("llama_kv_cache_recurrent:      CUDA0 KV buffer size =    38.81 MiB", "CUDA0", P.KV_CACHE, 38.81),
    ("llama_kv_cache:      CUDA1 KV buffer size =   448.00 MiB", "CUDA1", P.KV_CACHE, 448.0),
    # compute buffers: llama_new_context_with_model (c2101a2e, 398ede5e), llama_init_from_model (794fe23f),
    # llama_context (8733e0cf, 4227c9be), sched_reserve (7c158fbb, 0c1e57098)
    ("llama_new_context_with_model:      CUDA0 compute buffer size =   296.00 MiB", "CUDA0", P.COMPUTE_BUFFER, 296.0),
    ("llama_init_from_model:      CUDA0 compute buffer size =   304.00 MiB", "CUDA0", P.COMPUTE_BUFFER, 304.0),
    ("llama_context:      CUDA0 compute buffer size =   304.00 MiB", "CUDA0", P.COMPUTE_BUFFER, 304.0),
    ("sched_reserve:      CUDA0 compute buffer size =   312.01 MiB", "CUDA0", P.COMPUTE_BUFFER, 312.01),
])
def test_buffer_lines_of_each_build(line, device, term, value):
    assert read([line]).ranks == {device: {term: mib(value)}}


@pytest.mark.parametrize("line", [
    # the host's output buffer (398ede5e on, "%10s  output buffer size") is no compute buffer
    "llama_new_context_with_model:  CUDA_Host  output buffer size =     0.98 MiB",
    "llama_context:  CUDA_Host  output buffer size =     0.58 MiB",
    # the KV totals beside the buffers (c2101a2e to 8733e0cf; the cells line from 4227c9be): the buffers are read
    "llama_new_context_with_model: KV self size  = 2048.00 MiB, K (f16): 1024.00 MiB, V (f16): 1024.00 MiB",
    "llama_kv_cache_unified: KV self size  =  576.00 MiB, K (f16):  288.00 MiB, V (f16):  288.00 MiB",
    "llama_kv_cache: size =  576.00 MiB (  4608 cells,  36 layers,  1/1 seqs), K (f16):  288.00 MiB, V (f16):  "
    "288.00 MiB",
    # the summary beside a recurrent model's RS buffer (the buffer itself is its own term: below)
    "llama_memory_recurrent: size =   62.81 MiB (     1 cells,  40 layers,  1 seqs), R (f32):    2.81 MiB, S (f32):   "
    "60.00 MiB",
])
def test_neighbour_lines_add_nothing_to_the_buffers(line):
    assert read([line]).ranks == {}


@pytest.mark.parametrize("line,types", [
    # the cache's K and V types, from the totals line of each build: "KV self size" (c2101a2e to 794fe23f, and
    # llama_kv_cache_unified at 8733e0cf), the cells line (4227c9be to 0c1e57098; ollama's runner of 2026)
    ("llama_new_context_with_model: KV self size  =  256.00 MiB, K (q4_0):   72.00 MiB, V (q4_0):   72.00 MiB",
     ("q4_0", "q4_0")),
    ("llama_init_from_model: KV self size  = 1088.00 MiB, K (q8_0):  544.00 MiB, V (f16): 1024.00 MiB",
     ("q8_0", "f16")),
    ("llama_kv_cache_unified: KV self size  =  576.00 MiB, K (f16):  288.00 MiB, V (f16):  288.00 MiB", ("f16", "f16")),
    ("llama_kv_cache: size = 1088.00 MiB (  8192 cells,  64 layers,  1/1 seqs), K (q8_0):  544.00 MiB, V (q8_0):  "
     "544.00 MiB", ("q8_0", "q8_0")),
    ("0.06.228.800 I llama_kv_cache: size =  182.75 MiB (  4352 cells,  43 layers,  1/1 seqs), K (bf16):   91.38 MiB, "
     "V (bf16):   91.38 MiB", ("bf16", "bf16")),
])
def test_the_kv_cache_types_are_read_from_each_builds_totals_line(line, types):
    log = read([line])
    assert (log.args["cache_type_k"], log.args["cache_type_v"]) == types
    assert log.ranks == {}  # the buffers carry the bytes


@pytest.mark.parametrize("line", [
    # a fork's own cache type (TheTom/llama-cpp-turboquant#308), which the estimate does not model
    "0.06.228.800 I llama_kv_cache: size = 1988.25 MiB (180224 cells,  16 layers,  1/1 seqs), K (turbo3): 1100.00 "
    "MiB, V (turbo2):  888.25 MiB",
    # ik_llama.cpp's MLA cache (ikawrakow/ik_llama.cpp PR #237): one latent cache, no K and V
    "llama_new_context_with_model: KV self size  = 10980.00 MiB, c^KV (f16): 10980.00 MiB, kv^T: not used",
    # a recurrent model's states are f32 whatever the flags
    "llama_memory_recurrent: size =  448.88 MiB (     1 cells,  64 layers,  1 seqs  2 rs_seq), R (f32):   16.88 MiB, "
    "S (f32):  432.00 MiB",
])
def test_cache_lines_without_modelled_k_and_v_types_set_none(line):
    assert "cache_type_k" not in read([line]).args


def test_a_quantised_cache_is_passed_on_and_f16_is_left_to_the_default():
    q8 = read(["llama_kv_cache: size = 1088.00 MiB (  8192 cells,  64 layers,  1/1 seqs), K (q8_0):  544.00 MiB, "
               "V (q8_0):  544.00 MiB"])
    assert [a for a in backend_args(q8) if "cache-type" in a] == ["--cache-type-k=q8_0", "--cache-type-v=q8_0"]
    f16 = read(["llama_kv_cache: size =  576.00 MiB (  4608 cells,  36 layers,  1/1 seqs), K (f16):  288.00 MiB, "
                "V (f16):  288.00 MiB"])
    assert [a for a in backend_args(f16) if "cache-type" in a] == []


# -- the context ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lines,expected", [
    # b38a16df to 398ede5e: llama_new_context_with_model, "%s: n_ctx      = %u"
    (["llama_new_context_with_model: n_ctx      = 8192"], {P.KV_TOKENS: 8192}),
    # 794fe23f: llama_init_from_model, the width of n_ctx_per_seq; n_seq_max from there
    (["llama_init_from_model: n_seq_max     = 4", "llama_init_from_model: n_ctx         = 16384",
      "llama_init_from_model: n_ctx_per_seq = 4096", "llama_init_from_model: n_batch       = 2048"],
     {P.SEQUENCES: 4, P.KV_TOKENS: 16384}),
    # 8733e0cf to 7c158fbb: llama_context
    (["llama_context: n_seq_max     = 1", "llama_context: n_ctx         = 4096",
      "llama_context: n_ctx_per_seq = 4096", "llama_context: flash_attn    = auto"],
     {P.SEQUENCES: 1, P.KV_TOKENS: 4096}),
    # 0c1e57098: wider columns
    (["llama_context: n_seq_max             = 2", "llama_context: n_ctx                 = 32768",
      "llama_context: n_ubatch              = 512"], {P.SEQUENCES: 2, P.KV_TOKENS: 32768}),
    # offloaded layers: llm_load_tensors (b38a16df to 398ede5e), load_tensors (794fe23f to 0c1e57098)
    (["load_tensors: offloaded 29/29 layers to GPU"], {P.LAYERS_OFFLOADED: 29, P.LAYERS_TOTAL: 29}),
])
def test_context_lines_of_each_build(lines, expected):
    assert read(lines).engine_terms == expected


def test_the_padded_debug_n_ctx_line_is_not_the_context():
    # 8733e0cf's llama_kv_cache_unified prints the padded size at debug level under another name
    assert read(["llama_kv_cache_unified: n_ctx = 4352 (padded)"]).engine_terms == {}


@pytest.mark.parametrize("lines,copies", [
    # c2101a2e to 4227c9be: the copies in the line
    (["llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)"], 4),
    (["llama_context: pipeline parallelism enabled (n_copies=4)"], 4),
    # f49e9178 on: the line says no number; the reserve's line after it does (llama_context, then sched_reserve)
    (["llama_context: pipeline parallelism enabled", "llama_context: reserve took 41.20 ms, sched copies = 4"], 4),
    (["llama_context: pipeline parallelism enabled", "sched_reserve: reserve took 38.70 ms, sched copies = 1"], 1),
])
def test_pipeline_copies_of_each_build(lines, copies):
    assert read(lines).engine_terms == {P.PIPELINE_COPIES: copies}


@pytest.mark.parametrize("line,free", [
    # 794fe23f to 8733e0cf: llama_model_load_from_file_impl
    ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free", 23008),
    # 0c1e57098: llama_prepare_model_devices, the PCI bus id after the name
    ("llama_prepare_model_devices: using device CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 23664 MiB free",
     23664),
])
def test_device_lines_of_each_build(line, free):
    log = read([line])
    assert (log.gpu_name, log.ranks) == ("NVIDIA GeForce RTX 4090", {"CUDA0": {P.FREE_BEFORE_LOAD: mib(free)}})


# -- how it ends ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,kind", [
    ("llama_kv_cache_init: failed to allocate memory for kv cache", "out-of-memory"),  # b38a16df (ggml_init)
    ("llama_kv_cache_init: failed to allocate buffer for kv cache", "out-of-memory"),  # c2101a2e to 794fe23f
    ("llama_new_context_with_model: failed to allocate compute buffers", "out-of-memory"),  # c2101a2e, 398ede5e
    ("llama_init_from_model: failed to allocate compute buffers", "out-of-memory"),  # 794fe23f
    ("graph_reserve: failed to allocate compute buffers", "out-of-memory"),  # 4227c9be to 0c1e57098
    ("llama_init_from_model: failed to allocate output buffer of size 0.98 MiB", "out-of-memory"),  # 398ede5e on
])
def test_allocation_failures_of_each_build(line, kind):
    log = read([line])
    assert (log.failure_kind, log.started) == (kind, False)


def test_the_rs_buffer_is_its_own_term_per_device():
    # a public Qwen3.5-35B-A3B run split over the CPU and one GPU: 8 and 22 of its 30 recurrent layers
    log = read(["llama_memory_recurrent:        CPU RS buffer size =    16.75 MiB",
                "llama_memory_recurrent:      CUDA0 RS buffer size =    46.06 MiB"])
    assert log.ranks["CUDA0"] == {"recurrent_state_bytes_per_gpu": round(46.06 * 1024 * 1024)}
    assert log.ranks["CPU"] == {"recurrent_state_bytes_per_gpu": round(16.75 * 1024 * 1024)}


# Metal without shared buffers (ggml-metal.cpp@0c1e57098: use_shared_buffers is the device's unified memory): an
# Intel Mac's discrete Radeon puts KV, RS and compute buffers in "MTL0_Private", the weights in "MTL0_Mapped" (or
# "MTL0_Private" with --no-mmap); each is MTL0, the device whose free memory the load line gives. The KV line is a
# public one (search-index file 61922646399: a MacBook Pro 2018's Radeon Pro 560X, 29/29 layers); the others are
# built from the build's format strings (%12s model, %10s KV/RS/compute: a 12-character name is not padded)
METAL_PRIVATE = [
    "llama_model_load_from_file_impl: using device MTL0 (AMD Radeon Pro 560X) (unknown id) - 4080 MiB free",
    "load_tensors: offloaded 29/29 layers to GPU",
    "load_tensors:   CPU_Mapped model buffer size =   292.36 MiB",
    "load_tensors:  MTL0_Mapped model buffer size =  1918.34 MiB",
    "llama_kv_cache: MTL0_Private KV buffer size = 448.00 MiB",
    "sched_reserve: MTL0_Private compute buffer size =   300.75 MiB",
    "sched_reserve:        CPU compute buffer size =    40.01 MiB",
]


def test_metals_private_buffers_are_the_metal_device():
    log = read(METAL_PRIVATE)
    assert log.binding_rank() == "MTL0"
    assert log.ranks["MTL0"] == {P.FREE_BEFORE_LOAD: mib(4080), P.WEIGHTS: mib(1918.34), P.KV_CACHE: mib(448.0),
                                 P.COMPUTE_BUFFER: mib(300.75)}
    assert set(log.ranks) == {"MTL0", "CPU"}


def test_a_no_mmap_metal_load_keeps_its_private_weights_and_recurrent_state_on_the_device():
    # a public Qwen3.5-0.8B Q4_K_M run at 4,096 tokens with every buffer in MTL0_Private (search-index file
    # 66909441714 quotes the four figures; the lines are built from the format strings)
    log = read(["load_tensors: MTL0_Private model buffer size =   521.57 MiB",
                "llama_kv_cache: MTL0_Private KV buffer size =    48.00 MiB",
                "llama_memory_recurrent: MTL0_Private RS buffer size =    19.27 MiB",
                "sched_reserve: MTL0_Private compute buffer size =    94.02 MiB"])
    assert log.ranks == {"MTL0": {P.WEIGHTS: mib(521.57), P.KV_CACHE: mib(48.0), P.RECURRENT_STATE: mib(19.27),
                                  P.COMPUTE_BUFFER: mib(94.02)}}


@pytest.mark.parametrize("line,quantization", [
    # print_info from 2025 (mainline b5622, ik_llama.cpp#514)
    ("print_info: file type   = Q4_K - Medium", "q4_k_m"),
    ("print_info: file type   = Q8_0", "q8_0"),
    ("print_info: file type   = Q6_K", "q6_k"),
    ("print_info: file type   = Q3_K - Large", "q3_k_l"),
    ("print_info: file type   = Q5_K - Small", "q5_k_s"),
    ("print_info: file type   = Q2_K - Medium", "q2_k"),  # plain Q2_K's own name
    ("print_info: file type   = IQ4_XS - 4.25 bpw", "iq4_xs"),
    ("print_info: file type   = Q4_K - Medium (guessed)", "q4_k_m"),  # an old file whose type the loader guessed
    # llm_load_print_meta before it, "mostly" up to mid-2023
    ("llm_load_print_meta: model ftype      = Q4_K - Medium", "q4_k_m"),
    ("llm_load_print_meta: model ftype      = mostly Q4_K - Medium", "q4_k_m"),
    ("llm_load_print_meta: model ftype      = mostly Q2_K", "q2_k"),
    # 16- and 32-bit files are the model's own dtype; types gsg does not size (Q2_K_S, ik_llama.cpp's IQ3_K) are left
    ("print_info: file type   = BF16", None),
    ("print_info: file type   = all F32", None),
    ("print_info: file type   = Q2_K - Small", None),
    ("llm_load_print_meta: model ftype      = IQ3_K - 3.4325 bpw", None),
])
def test_the_gguf_file_type_names_the_weights_format(line, quantization):
    # a GGUF of a catalog model was sized at its 16-bit weights unless --quantization was given: ik_llama.cpp#514's
    # Qwen3-30B-A3B Q4_K_M put 1.86 GiB of weights on the 5090 against the 0.63 GiB it logged
    assert logged_gguf_quantization(read([line])) == quantization


def test_no_file_type_line_names_no_format():
    assert logged_gguf_quantization(read(["llama_context: n_ctx         = 16384"])) is None


@pytest.mark.parametrize("line,slots", [
    # main's automatic slots (server.cpp from b7045), here with llama-server's log prefix of b9849
    ("0.00.079.867 I srv  llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true", 4),
    ("main: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true", 4),
    # load_model's slots (server-context.cpp@0.3.36), then server.cpp's init of 2024-2025
    ("0.07.038.001 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'", 4),
    ("1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'", 1),
    ("srv          init: initializing slots, n_slots = 8", 8),
])
def test_llama_server_slot_lines_give_the_sequences(line, slots):
    # round 29: an excerpt without llama_context's n_seq_max (the hardware-trial reports of b9849) still says how many
    # sequences the cache and the recurrent state hold; the rebuild runs with that -np, not the build's default
    log = read([line])
    assert log.terms() == {P.SEQUENCES: slots}
    assert f"--parallel={slots}" in backend_args(log)


def test_a_slot_line_without_its_count_gives_no_sequences():
    # the JSON log's record (2024) and ik_llama.cpp's keep the count in a field of their own: not read as one
    assert read(['INFO [                    init] initializing slots | tid="140" timestamp=1727091153 n_slots=1'])\
        .terms() == {}


DEVICE_INFO = [
    # common_params_print_info's list (llama.cpp#23858, build 9389: the router's [pid] before each line; #26208,
    # build 10644: the cmn prefix), then --list-devices' line without the dash
    "[41303] 0.00.153.447 I   - ROCm0   : AMD Radeon 8060S Graphics (122880 MiB, 125693 MiB free)",
    "[41303] 0.00.153.449 I   - CPU     : AMD RYZEN AI MAX+ 395 w/ Radeon 8060S (128077 MiB, 128077 MiB free)",
    "[41303] 0.00.154.397 I   - RPC0    : 10.0.69.2:50052 (122880 MiB, 125385 MiB free)",
    "0.00.213.719 I cmn  common_param:   - ROCm1   : AMD Radeon Graphics (32624 MiB, 32534 MiB free)",
    "  Vulkan0: AMD Radeon RX 6600M (8176 MiB, 8176 MiB free)",
]


def test_the_device_list_gives_the_total_of_each_device_the_start_up_used():
    # round 29: the GPU's size where no other line prints it (Vulkan's device lines carry none): verify needed
    # --gpu-memory for the b9849 Vulkan reports
    buffers = ["load_tensors:        ROCm0 model buffer size =  8753.58 MiB",
               "load_tensors:        ROCm1 model buffer size =  8753.58 MiB",
               "load_tensors:      Vulkan0 model buffer size = 15009.20 MiB"]
    log = read([*DEVICE_INFO, *buffers])
    assert {name: figures.get(P.GPU_MEMORY) for name, figures in log.ranks.items()} == {
        "ROCm0": mib(122880), "ROCm1": mib(32624), "Vulkan0": mib(8176)}
    # a listed device the load never used (the RPC server here) is no device of the deployment, nor is the host
    assert "RPC0" not in log.ranks and "CPU" not in log.ranks
    assert read(DEVICE_INFO).ranks == {}


# -- the cache's cells where an excerpt keeps no n_ctx line (round 30: llama.cpp#11200, #12369, #11337) -----------

@pytest.mark.parametrize("line", [
    # llama_kv_cache_init's line (0.3.8's vendored src/llama-kv-cache.cpp:37, "%s: kv_size = %d, offload = %d, ...")
    "llama_kv_cache_init: kv_size = 32768, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 64, can_shift = 1",
    # llama_kv_cache_unified::init's bare __func__ (0.3.9's 8733e0cf), behind a journal prefix as ollama logs it
    "May 17 11:51:54 urano ollama[1900]: init: kv_size = 32768, offload = 1, type_k = 'q8_0', type_v = 'q8_0', "
    "n_layer = 36, can_shift = 1",
])
def test_kv_size_gives_the_cells_and_so_the_context_to_rebuild(line):
    log = read([line])
    assert log.engine_terms[P.KV_TOKENS] == 32768
    assert "--ctx-size=32768" in backend_args(log)


def test_a_kv_size_inside_another_word_is_not_the_caches():
    assert P.KV_TOKENS not in read(["llama_kv_cache_reinit: kv_size = 4096, offload = 1"]).engine_terms


# llamafile's build pair: llama.cpp/build-info.cpp (mozilla-ai/llamafile, unchanged from b9fcc21 of 2023-11-15 to
# 6b46419) holds LLAMA_BUILD_NUMBER 1500 and LLAMA_COMMIT "a30b324" for every llama.cpp a release vendors; its main
# prints "%s: build = %d (%s)" and its server the "build info" record (search-index file 19445609683: the JSON form,
# over n_ubatch and flash_attn lines of mid-2024 builds)
@pytest.mark.parametrize("line", [
    "main: build = 1500 (a30b324)",
    '{"build":1500,"commit":"a30b324","function":"server_cli","level":"INFO","line":2869,"msg":"build info",'
    '"tid":"10437056","timestamp":1729847059}',
    "build: 1500 (a30b324) with cc (GCC) 13.2.0 for x86_64-linux-gnu",
])
def test_llamafiles_fixed_build_pair_is_no_build(line):
    log = read([line, "llama_kv_cache_init:        CPU KV buffer size =  1024.00 MiB"])
    assert log.engine_version is None
    assert log.notes == ["line 1: build 1500 (a30b324) is the pair llamafile prints for any llama.cpp it carries "
                         "(llama.cpp/build-info.cpp, unchanged since November 2023), not the build: give "
                         "--backend-version"]


@pytest.mark.parametrize("line,version", [
    # the same count with another commit, and another count of the same forms, are builds
    ("main: build = 1500 (ff3bad83)", "1500"),
    ("main: build = 2477 (f9c7ba34)", "2477"),
    ('{"build":1702,"commit":"6f35a4a","function":"main","level":"INFO","line":2600,"msg":"build info"}', "1702"),
    ("build: 6945 (cc98f8d34) with MSVC 19.29.30154.0 for x64", "6945"),
])
def test_other_build_lines_are_read(line, version):
    log = read([line])
    assert (log.engine_version, log.notes) == (version, [])
