"""How a llama.cpp start-up ends (issue 32): each failure form of each front-end with its kind, the retry and later
successes that make an earlier failure not the outcome, and the lines that look like failures but are not."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import logparse as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import observed_verdict
from gpustack_guard.core.verify.logparse import parse_log

KV = "llama_kv_cache:      CUDA0 KV buffer size =  1600.00 MiB\n"
COMPUTE = "llama_context:      CUDA0 compute buffer size =   300.75 MiB\n"


def outcome(*lines: str):
    log, _ = parse_log(list(lines), "llama.cpp")
    return log.started, log.failure_kind


@pytest.mark.parametrize("line, kind", [
    ("graph_reserve: failed to allocate compute buffers\n", "out-of-memory"),
    ("llama_new_context_with_model: failed to allocate compute buffers\n", "out-of-memory"),
    ("llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers\n",
     "out-of-memory"),
    ("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 13327728640\n", "out-of-memory"),
    ("ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 33074.89 MiB\n",
     "out-of-memory"),
    ("CUDA error: out of memory\n", "out-of-memory"),
    ("ROCm error: out of memory\n", "out-of-memory"),
    ("ggml_vulkan: Device memory allocation of size 118497280 failed.\n", "out-of-memory"),
    ("error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n", "out-of-memory"),
    # ollama carries the reason in its own line: the memory words decide the kind
    ('msg="error loading llama server" error="llama runner process has terminated: CUDA error: out of memory"\n',
     "out-of-memory"),
    # words that only say the start-up stopped, or a crash that is not memory
    ("common_init_from_params: failed to create context with model 'm.gguf'\n", P.ENGINE_ERROR),
    ("llama_init_from_model: failed to initialize the context: invalid n_ctx\n", P.ENGINE_ERROR),
    ("llama_model_load: error loading model: unknown model architecture: 'foo'\n", P.ENGINE_ERROR),
    ("srv    load_model: failed to load model, 'm.gguf'\n", P.ENGINE_ERROR),
    ("ggml.c:1721: GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed\n", P.ENGINE_ERROR),
    ("CUDA error: an illegal memory access was encountered\n", P.ENGINE_ERROR),
    ("Segmentation fault (core dumped)\n", P.ENGINE_ERROR),
    ('level=ERROR source=server.go:421 msg="llama runner terminated" error="exit status 2"\n', P.ENGINE_ERROR),
])
def test_a_failure_after_the_kv_buffers_is_the_outcome_with_its_kind(line, kind):
    assert outcome(KV, line) == (False, kind)


@pytest.mark.parametrize("line", [
    # the pinned-memory fallbacks warn and go on (ggml-cuda.cu, ggml-vulkan.cpp; llama.cpp#9271)
    "ggml_cuda_host_malloc: warning: failed to allocate 4.00 MiB of pinned memory: out of memory\n",
    "ggml_vulkan: Failed to allocate pinned memory.\n",
    "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n",
    # --fit's own note that the arguments were kept
    "llama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user\n",
    # the scheduler's debug line at each graph change
    "ggml_backend_sched_alloc_splits: failed to allocate graph, reserving (backend_ids_changed = 1)\n",
])
def test_a_warning_the_engine_goes_on_from_is_no_failure(line):
    assert outcome(KV, line, COMPUTE) == (True, None)


def test_a_reason_replaces_the_words_that_only_say_the_start_up_stopped_and_the_first_reason_stays():
    stopped = "llama_init_from_model: failed to initialize the context: x\n"
    oom = "ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 1024\n"
    assert outcome(KV, stopped, oom) == (False, "out-of-memory")
    log, _ = parse_log([KV, oom, "CUDA error: out of memory\n", stopped], "llama.cpp")
    assert log.failure_line == 2 and log.failure_kind == "out-of-memory"


RETRY = "sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism\n"
HOW = {RETRY: "retried", COMPUTE: "built its context", "srv  update_slots: all slots are idle\n": "came up"}
OOM = ["ggml_backend_cuda_buffer_type_alloc_buffer: allocating 12710.31 MiB on device 0: cudaMalloc failed: "
       "out of memory\n", "graph_reserve: failed to allocate compute buffers\n"]


def test_the_pipeline_retry_makes_the_failure_before_it_not_the_outcome_and_one_copy_is_read():
    lines = [KV, "llama_context: pipeline parallelism enabled (n_copies=4)\n", *OOM, RETRY,
             "sched_reserve:      CUDA0 compute buffer size =  3177.58 MiB\n",
             "sched_reserve: reserve took 10.00 ms, sched copies = 1\n"]
    log, _ = parse_log(lines, "llama.cpp")
    assert (log.started, log.failure, observed_verdict(log)) == (True, None, "fits")
    assert log.terms()[P.PIPELINE_COPIES] == 1 and log.terms()[P.COMPUTE_BUFFER] == int(3177.58 * 2**20 + 0.5)
    assert log.notes == ["line 3: 'cudaMalloc failed: out of memory' was not the outcome: the engine retried (line 5)"]


def test_the_retry_reads_one_copy_even_when_the_excerpt_stops_before_the_compute_buffers():
    log, _ = parse_log([KV, "llama_context: pipeline parallelism enabled (n_copies=4)\n", *OOM, RETRY], "llama.cpp")
    assert log.terms()[P.PIPELINE_COPIES] == 1 and log.started


def test_a_failure_of_the_retry_is_the_outcome():
    assert outcome(KV, *OOM, RETRY, *OOM,
                   "llama_init_from_model: failed to initialize the context: failed to allocate compute pp "
                   "buffers\n") == (False, "out-of-memory")


@pytest.mark.parametrize("success", [
    COMPUTE,
    "main: model loaded\n",
    'INFO [main] model loaded | tid="1" timestamp=1\n',
    "srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096, kv_unified = 'true'\n",
    "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n",
    "srv  update_slots: all slots are idle\n",
    'level=INFO source=server.go:594 msg="llama runner started in 8.52 seconds"\n',
])
def test_a_success_after_a_failure_is_the_outcome_and_a_failure_after_the_last_success_is(success):
    # ollama starts another runner with fewer layers after one died: the later success is the outcome
    assert outcome(*OOM, success) == (True, None)
    assert outcome(*OOM, success, "CUDA error: out of memory\n") == (False, "out-of-memory")


@pytest.mark.parametrize("line", [
    "main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 31\n",
    'INFO [                    main] HTTP server listening | tid="1" timestamp=1 port="8080"\n',
])
def test_the_http_port_opening_before_the_load_says_nothing(line):
    assert outcome(line, "main: loading model\n") == (False, None)
    assert outcome(line, *OOM) == (False, "out-of-memory")


def test_an_excerpt_that_stops_after_the_kv_buffers_reads_as_started_and_one_before_them_does_not():
    assert outcome(KV) == (True, None)
    assert outcome("llama_context: n_ctx         = 4096\n") == (False, None)


def test_words_any_process_prints_do_not_make_a_log_llama_cpps():
    lines = ["INFO 05-16 14:53:28 api_server.py:149] vLLM API server version 0.4.0.post1\n",
             "RuntimeError: CUDA error: out of memory\n", "Segmentation fault (core dumped)\n",
             "model loaded\n", "all slots are idle\n"]
    log, _ = parse_log(lines)
    assert log.engine == "vllm" and not any("llama.cpp" in note for note in log.notes)


@pytest.mark.parametrize("went_on", [RETRY, COMPUTE, "srv  update_slots: all slots are idle\n"])
@pytest.mark.parametrize("times", [L.MAX_RECOVERY_NOTES, L.MAX_RECOVERY_NOTES + 1, 5000])
def test_failures_the_engine_went_on_from_are_noted_up_to_the_cap_and_counted_past_it(went_on, times):
    # a log alternating a failure and a retry or success by the thousand: a bounded number of notes, the last line
    # still decides (a failure after the last success is the outcome)
    log, _ = parse_log([KV] + [OOM[1], went_on] * times, "llama.cpp")
    listed = min(times, L.MAX_RECOVERY_NOTES)
    assert (log.started, log.failure) == (True, None)
    assert log.notes[:listed] == [f"line {2 + 2 * i}: 'failed to allocate compute buffers' was not the outcome: the "
                                  f"engine {HOW[went_on]} (line {3 + 2 * i})" for i in range(listed)]
    assert log.notes[listed:] == ([] if times == listed else [
        f"{times - listed:,} more failure(s) the engine went on from were not listed (MAX_RECOVERY_NOTES = 8)"])
    log, _ = parse_log([KV] + [OOM[1], went_on] * times + [OOM[1]], "llama.cpp")
    assert (log.started, log.failure_kind, log.failure_line) == (False, "out-of-memory", 2 + 2 * times)


def test_the_recovery_count_starts_again_with_a_restart():
    build = "build: 6840 (abcdef12) with cc for x86_64-linux-gnu\n"
    lines = [build, KV] + [OOM[1], RETRY] * (L.MAX_RECOVERY_NOTES + 3) + [build, KV, OOM[1], RETRY]
    log, _ = parse_log(lines, "llama.cpp")
    assert [n for n in log.notes if "was not the outcome" in n or "MAX_RECOVERY_NOTES" in n] == [
        f"line {len(lines) - 1}: 'failed to allocate compute buffers' was not the outcome: the engine retried "
        f"(line {len(lines)})"]


@pytest.mark.parametrize("failure, kind", [
    ("srv    load_model: failed to load model, '/models/all slots are idle.gguf'\n", P.ENGINE_ERROR),
    ("llama_model_load: error loading model: '/m/model loaded/x.gguf' is not a GGUF file\n", P.ENGINE_ERROR),
    ('level=ERROR msg="llama runner terminated" error="exit status 2" note="initializing slots"\n', P.ENGINE_ERROR),
    ("CUDA error: out of memory (main: server is listening on http://x:1 - starting the main loop)\n",
     "out-of-memory"),
    ('msg="error loading llama server" error="llama runner started in 1.00 seconds; CUDA error: out of memory"\n',
     "out-of-memory"),
])
def test_a_line_holding_a_failure_and_a_successs_words_is_the_failure(failure, kind):
    # whatever it quotes, the line reports a failure: after a success, before it, or alone after the KV buffers
    assert outcome(KV, failure) == (False, kind)
    assert outcome(KV, COMPUTE, failure) == (False, kind)
    assert outcome(KV, *OOM, failure) == (False, "out-of-memory" if kind == P.ENGINE_ERROR else kind)


@pytest.mark.parametrize("row", P.LLAMACPP_FAILURES, ids=lambda row: row.id)
def test_every_failure_row_read_from_its_own_line_stops_the_start_up(row):
    log, _ = parse_log([KV, row.example + "\n"], "llama.cpp")
    assert row.id in log.matched and row.needle and row.releases
    assert (log.started, log.failure_line) == (False, 2)
    # its own kind, unless the same line also says the memory ran out (an engine-error row quoting an allocation)
    says_oom = any(other.kind == "failure:out-of-memory" and other.regex.search(row.example)
                   for other in P.ALL_PATTERNS)
    assert log.failure_kind == ("out-of-memory" if says_oom else row.kind.split(":", 1)[1])


@pytest.mark.parametrize("row", P.LLAMACPP_OUTCOMES, ids=lambda row: row.id)
def test_every_outcome_row_read_from_its_own_line_makes_an_earlier_failure_not_the_outcome(row):
    log, _ = parse_log([KV, OOM[1], row.example + "\n"], "llama.cpp")
    assert row.id in log.matched and row.needle and row.releases
    assert (log.started, log.failure, len(log.notes)) == (True, None, 1)


def test_the_rows_named_in_the_id_sets_exist():
    ids = {row.id for row in P.ALL_PATTERNS}
    assert (P.SHARED_WORDS | P.LLAMACPP_CONTEXT_BUILT | P.START_UP_LINES) - ids == set()


@pytest.mark.parametrize("value", [
    "{{ 'all slots are idle' }}", "model loaded", "CUDA error: out of memory",
    "failed to allocate compute buffers", "compute buffer allocation failed, retrying without pipeline parallelism",
    "llama runner started in 2.01 seconds"])
def test_a_gguf_metadata_value_holding_outcome_words_says_nothing_of_the_outcome(value):
    # the model file's own strings (a chat template, a name) printed by the metadata dump
    meta = f"llama_model_loader: - kv  31:                tokenizer.chat_template str              = {value}\n"
    log, _ = parse_log([meta], "llama.cpp")
    assert (bool(log.started), log.failure, log.notes) == (False, None, [])
    assert outcome(meta, KV) == (True, None)  # the KV buffers still say it came up
    assert outcome(KV, meta) == (True, None)
    assert outcome(KV, meta, "CUDA error: out of memory\n") == (False, "out-of-memory")
