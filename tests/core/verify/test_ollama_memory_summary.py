"""ollama's memory summary (ml/device.go BackendMemory.Log): the devices' figures of its Go engine, which prints no
llama.cpp buffer line; beside a llama.cpp runner's own lines it is ollama's estimate and is not read."""

from __future__ import annotations

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

GiB, MiB = 2**30, 2**20
T = "time=2026-04-09T23:30:17.631-07:00 level={level} source=device.go:251 "


def summary(weights: str, kv: str, graph: str, *, device: str = "CUDA0", level: str = "INFO") -> list[str]:
    head = T.format(level=level)
    return [head + f'msg="model weights" device={device} size="{weights}"',
            head + f'msg="kv cache" device={device} size="{kv}"',
            head + f'msg="compute graph" device={device} size="{graph}"',
            head + 'msg="total memory" size="9.9 GiB"']


def request(parallel: int, kv_size: int, flash: str = "Enabled") -> str:
    return (f'time=2025-11-13T10:10:51.937+08:00 level=INFO source=runner.go:1222 msg=load request="{{Operation:commit '
            f'LoraPath:[] Parallel:{parallel} BatchSize:512 FlashAttention:{flash} KvSize:{kv_size} KvCacheType: '
            'NumThreads:8 GPULayers:37[ID:0 Layers:37(0..36)] MultiUserCache:false ProjectorPath: MainGPU:0 '
            'UseMmap:true}"')


GO_ENGINE_NOTE = ("line {line}: the figures are ollama's memory summary (ml/device.go), each rounded to 0.1 of its "
                  "unit (0.05 GiB is 51 MiB): ollama's Go engine prints no llama.cpp buffer line")


def parse(lines: list[str]):
    log, _ = parse_log(lines)
    return log


def test_the_go_engine_summary_is_read_with_each_line_in_its_own_unit():
    # HumanBytes2 picks GiB, MiB, KiB or B by size; ROCm and Vulkan devices are named as ggml names them
    log = parse([request(2, 8192, "true")] + summary("2.3 GiB", "576.0 MiB", "12.5 KiB", device="ROCm0"))
    assert log.engine == P.LLAMACPP and log.started
    assert log.ranks == {"ROCm0": {P.WEIGHTS: round(2.3 * GiB), P.KV_CACHE: 576 * MiB, P.COMPUTE_BUFFER: 12800}}
    assert (log.terms()[P.KV_TOKENS], log.terms()[P.SEQUENCES]) == (8192, 2)
    assert log.notes == [GO_ENGINE_NOTE.format(line=2)]
    vulkan = parse(summary("700 B", "1.0 GiB", "64.0 MiB", device="Vulkan0"))
    assert vulkan.ranks["Vulkan0"][P.WEIGHTS] == 700


def test_each_summary_replaces_the_one_before():
    # at OLLAMA_DEBUG every fit and alloc pass prints a summary at debug level; the committed one (info) is last
    log = parse(summary("4.0 GiB", "1.0 GiB", "300.0 MiB", level="DEBUG")
                + summary("3.5 GiB", "896.0 MiB", "250.0 MiB", level="DEBUG")[:2]  # cut before its graph line
                + summary("3.2 GiB", "800.0 MiB", "200.0 MiB"))
    assert log.ranks == {"CUDA0": {P.WEIGHTS: round(3.2 * GiB), P.KV_CACHE: 800 * MiB, P.COMPUTE_BUFFER: 200 * MiB}}


def test_a_summary_without_its_total_line_still_ends_at_the_next_weights_line():
    first = summary("4.0 GiB", "1.0 GiB", "300.0 MiB")[:3]
    log = parse(first + summary("3.0 GiB", "512.0 MiB", "100.0 MiB")[:1])
    assert log.ranks == {"CUDA0": {P.WEIGHTS: 3 * GiB}}


def test_beside_a_llama_cpp_runner_the_summary_is_ollamas_estimate_and_is_not_read():
    # ollama 0.20.2's llama runner: llm/server.go llamaServer.Load logs its estimate before the runner loads; the
    # runner's own buffer lines are the figures (the context too: llama.cpp's n_ctx, not the request's KvSize)
    lines = (summary("4.1 GiB", "1.8 GiB", "1.8 GiB") + [request(1, 32768)] + [
        "load_tensors:        CUDA0 model buffer size =  4168.09 MiB",
        "llama_context: n_ctx         = 4096",
        "llama_kv_cache:      CUDA0 KV buffer size =   224.00 MiB",
        "llama_context:      CUDA0 compute buffer size =   304.00 MiB"])
    log = parse(lines)
    assert log.ranks == {"CUDA0": {P.WEIGHTS: round(4168.09 * MiB), P.KV_CACHE: 224 * MiB,
                                   P.COMPUTE_BUFFER: 304 * MiB}}
    assert log.terms()[P.KV_TOKENS] == 4096 and P.SEQUENCES not in log.terms()
    assert log.notes == ["line 1: ollama's memory summary is its estimate before the llama.cpp runner loaded "
                         "(llm/server.go): the runner's own buffer lines were read"]


def test_the_pre_release_runners_buffer_lines_are_not_read():
    # PR #11090's runner printed `msg="model weights" buffer=CUDA0` itself (ggml.go) beside the server's summary:
    # reading both would count the weights twice, so only the server's device= form is read
    runner = ('time=2025-07-18T14:50:57.066Z level=INFO source=ggml.go:365 msg="model weights" buffer=CUDA0 '
              'size="11.5 GiB"')
    assert parse([runner]).ranks == {}
    assert parse([runner] + summary("11.5 GiB", "1.0 GiB", "100.0 MiB")).ranks["CUDA0"][P.WEIGHTS] == round(11.5 * GiB)


def test_a_restart_drops_the_summary_of_the_start_up_before():
    first = summary("4.0 GiB", "1.0 GiB", "300.0 MiB")
    log = parse(first + ["build: 6945 (cc98f8d34) with cc for x86_64", "load_tensors: CUDA0 model buffer size = 100.00 MiB"]
                + ["build: 6946 (dd98f8d34) with cc for x86_64"] + summary("2.0 GiB", "0.5 GiB", "50.0 MiB"))
    assert log.ranks == {"CUDA0": {P.WEIGHTS: 2 * GiB, P.KV_CACHE: GiB // 2, P.COMPUTE_BUFFER: 50 * MiB}}


def test_the_go_engines_refused_layout_is_out_of_memory_with_the_summary_it_needed():
    # the committed layout is refused: the deferred summary prints what the last pass asked for, then the reason
    # (llm/server.go@v0.20.2); a later start-up that came up would clear it ("llama runner started")
    head = 'time=2026-03-02T22:32:11.002Z level=INFO source=sched.go:511 msg="Load failed" model=/m '
    log = parse(summary("6.1 GiB", "2.0 GiB", "1.1 GiB") + [head + 'error="memory layout cannot be allocated"'])
    assert (log.started, log.failure_kind) == (False, "out-of-memory")
    assert log.ranks["CUDA0"][P.KV_CACHE] == 2 * GiB
    warn = 'time=2026-03-02T22:32:11.001Z level=WARN source=server.go:896 msg="failed to commit memory for model"'
    assert parse([warn]).failure_kind == "out-of-memory"
    assert parse(["Error: 500 Internal Server Error: memory layout cannot be allocated with num_gpu = 26"]).failure_kind \
        == "out-of-memory"


def test_a_summary_figure_no_engine_prints_is_not_read():
    # 30 digits of GiB is past MAX_LOG_FIGURE: the line is named in a note and its device keeps no figure
    head = T.format(level="INFO")
    log = parse([head + 'msg="model weights" device=CUDA0 size="' + "9" * 30 + ' GiB"'] + summary(
        "1.0 GiB", "1.0 GiB", "1.0 MiB")[1:])
    assert P.WEIGHTS not in log.ranks["CUDA0"] and log.ranks["CUDA0"][P.KV_CACHE] == GiB
    # the summary kept begins at its first figure read (line 2)
    assert log.notes == [GO_ENGINE_NOTE.format(line=2), "line 1: a figure past 1e+18 (bytes, tokens or blocks) or "
                         "not finite was not read (MAX_LOG_FIGURE)"]


def test_a_llama_cpp_runners_summary_is_not_read_even_where_the_excerpt_stops_before_its_buffers():
    # llm/server.go starts the llama.cpp runner as `runner --model` and the Go engine as `runner --ollama-engine`
    start = 'time=2026-05-05T01:30:33.795+08:00 level=INFO source=server.go:432 msg="starting runner" cmd="{cmd}"'
    llama = parse([start.format(cmd="/usr/bin/ollama runner --model /m/blobs/sha256-60e0 --port 44344")]
                  + summary("4.1 GiB", "1.8 GiB", "1.8 GiB"))
    assert llama.ranks == {}
    assert llama.notes == ["line 2: ollama's memory summary is its estimate for its llama.cpp runner (`runner "
                           "--model`), and the log stops before the runner's own buffer lines: not read"]
    go = parse([start.format(cmd="C:\\\\Program Files\\\\Ollama\\\\ollama.exe runner --ollama-engine --model "
                                 "C:\\\\m\\\\blobs\\\\sha256-9026 --port 5421")] + summary("4.1 GiB", "1.8 GiB", "1.8 GiB"))
    assert go.ranks["CUDA0"][P.WEIGHTS] == round(4.1 * GiB)
