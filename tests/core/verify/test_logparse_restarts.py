"""A log holding several start-ups of one engine: a start-up line (P.START_UP_LINES) after figures, or naming
another release than the one read, opens the next start-up, and only the last is read. The memo of long lines
(MEMO_MIN_CHARS) must not change that: every copy of a repeated start-up line counts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpustack_guard.core.verify import logparse as LP
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"

VERSION = "INFO 05-16 14:53:28 api_server.py:149] vLLM API server version {version}\n"
ARGS = "INFO 05-16 14:53:28 [utils.py:328] non-default args: {{'model': 'a/b', 'max_model_len': {length}}}\n"
UNKNOWN_DEATH = "ERROR 05-16 14:53:40 [core.py:900] RuntimeError: an error gsg has no row for\n"
WEIGHTS = "INFO 05-16 14:54:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.652170 seconds\n"
KV = "INFO 05-16 14:54:10 [kv_cache_utils.py:1013] GPU KV cache size: {tokens:,} tokens\n"
# SGLang's server_args line is long: past MEMO_MIN_CHARS, so its copies after the first come from the memo
SERVER_ARGS = ("[2026-07-20 08:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tokenizer_path='Qwen/Qwen3-8B', "
               "tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, "
               "dtype='auto', kv_cache_dtype='auto', quantization=None, context_length=None, device='cuda', "
               "served_model_name='Qwen/Qwen3-8B', mem_fraction_static=0.88, max_running_requests=None)\n")
SGLANG_KV = "[2026-07-20 08:00:14] KV Cache is allocated. #tokens: {tokens}, K size: 1.00 GB, V size: 1.00 GB\n"


def test_a_start_up_line_of_another_release_opens_a_start_up_before_any_figure():
    # 0.8.5 died on something gsg has no row for (no figure, no failure read), then 0.9.0 started without
    # non-default args: the release and the arguments read are 0.9.0's, not the dead start-up's
    log, _ = parse_log([VERSION.format(version="0.8.5"), ARGS.format(length=4096), UNKNOWN_DEATH,
                        VERSION.format(version="0.9.0"), WEIGHTS, KV.format(tokens=1000)])
    assert (log.engine_version, log.args, log.engine_terms) == ("0.9.0", {}, {P.KV_TOKENS: 1000})
    assert "the log holds 2 start-ups of vllm: the last one was read" in log.notes


@pytest.mark.parametrize("lines, version", [
    # the same release printed twice before any figure (a banner and its plain form): one start-up
    ([VERSION.format(version="0.9.0"), VERSION.format(version="0.9.0"), KV.format(tokens=1000)], "0.9.0"),
    # the engine config line names its release too, after the start-up line: the same start-up
    ([VERSION.format(version="0.10.1.1"),
      "(EngineCore_0 pid=1) INFO [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: seed=0\n",
      KV.format(tokens=1000)], "0.10.1.1"),
    (["build: 6945 (cc98f8d34) with cc for x86_64\n", "build: 6945 (cc98f8d34) with cc for x86_64\n"], "6945"),
])
def test_one_release_printed_twice_is_one_start_up(lines, version):
    log, _ = parse_log(lines)
    assert log.engine_version == version
    assert not [note for note in log.notes if "start-ups" in note]


def test_llama_cpp_builds_of_two_releases_are_two_start_ups():
    log, _ = parse_log(["build: 6000 (aaaaaaaaa) with cc for x86_64\n", "build: 6945 (cc98f8d34) with cc for x86_64\n"])
    assert log.engine_version == "6945"
    assert "the log holds 2 start-ups of llama.cpp: the last one was read" in log.notes


def test_every_copy_of_a_long_start_up_line_from_the_memo_opens_a_start_up():
    assert len(SERVER_ARGS.rstrip("\n")) >= LP.MEMO_MIN_CHARS
    lines = [line for n in range(5) for line in (SERVER_ARGS, SGLANG_KV.format(tokens=1000 + n))]
    log, _ = parse_log(lines)
    assert log.terms()[P.KV_TOKENS] == 1004 and log.args["mem_fraction_static"] == 0.88
    assert "the log holds 5 start-ups of sglang: the last one was read" in log.notes


def test_copies_behind_carriage_returns_and_colours_are_start_ups_too():
    # a progress bar redrawn in front of the line, colour codes around it: each copy is the same line once cut
    bar = "".join(f"\rLoading weights {i:3d}%" for i in range(0, 101, 10))
    lines = [line for n in range(3) for line in (f"{bar}\r\x1b[32m{SERVER_ARGS.rstrip()}\x1b[0m\r\n",
                                                   SGLANG_KV.format(tokens=2000 + n))]
    log, _ = parse_log(lines)
    assert log.terms()[P.KV_TOKENS] == 2002
    assert "the log holds 3 start-ups of sglang: the last one was read" in log.notes


def _restart_lines(count: int) -> list[str]:
    return [line for n in range(count) for line in (VERSION.format(version="0.9.0"), ARGS.format(length=4096),
                                                     KV.format(tokens=n + 1))]


def _calls_to_parse(lines: list[str]) -> int:
    """Python and C function calls made while parsing: a count, not a clock, so a loaded machine cannot fail it."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        parse_log(lines)
    finally:
        sys.setprofile(None)
    return calls


def test_thousands_of_restarts_are_counted_in_one_clear_note():
    log, _ = parse_log(_restart_lines(3000))
    assert log.engine_terms == {P.KV_TOKENS: 3000} and log.args == {"model": "a/b", "max_model_len": 4096}
    assert "the log holds 3,000 start-ups of vllm: the last one was read" in log.notes


def test_restarts_cost_the_same_work_each_however_many_came_before():
    # 300 start-ups read after 3,000 cost what 300 read after 300 do (a rescan of what earlier start-ups printed
    # would make the later ones ten times dearer); a first parse pays the one-time set-up (compiled patterns)
    _calls_to_parse(_restart_lines(10))
    early = _calls_to_parse(_restart_lines(600)) - _calls_to_parse(_restart_lines(300))
    late = _calls_to_parse(_restart_lines(3300)) - _calls_to_parse(_restart_lines(3000))
    assert early > 0 and late < 1.2 * early, (early, late)


def _fixture_pairs() -> list[str]:
    return sorted(str(path.relative_to(FIXTURES)) for path in FIXTURES.glob("*/*.log"))


@pytest.mark.parametrize("name", _fixture_pairs())
def test_the_memo_changes_no_outcome_on_any_fixture_read_twice_in_a_row(monkeypatch, name):
    # every long line repeats (the second copy restarts the engine): read with the memo and without it, the same
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines(keepends=True) * 2
    with_memo = parse_log(lines)
    monkeypatch.setattr(LP, "MEMO_MIN_CHARS", 10**9)
    assert parse_log(lines) == with_memo


def test_the_memo_changes_no_outcome_when_every_engine_is_fed_and_past_its_size_cap(monkeypatch):
    # a vLLM start-up (torch's out of memory: an engine-neutral line, fed to every engine's state) and an SGLang one
    # in one file, three times; then with a memo that holds one long line only: what it cannot hold is searched
    # again, with the same outcome
    vllm = (FIXTURES / "vllm" / "v1-0.8-torch-oom-two-ranks.log").read_text(encoding="utf-8")
    sglang = (FIXTURES / "sglang" / "gemma3-4b-it-vlm-fraction-h200.log").read_text(encoding="utf-8")
    lines = ((vllm + sglang) * 3).splitlines(keepends=True)
    expected, expected_vllm = parse_log(lines), parse_log(lines, "vllm")
    assert expected[0].engine == "sglang" and expected[0].started and "start-ups of sglang" in expected[0].notes[0]
    assert expected_vllm[0].failure_kind == "out-of-memory"
    parser = LP.LogParser()
    monkeypatch.setattr(LP, "MAX_MEMO_CHARS", 440)  # the OOM line (440 characters); SGLang's args (430) do not fit
    for line in lines:
        parser.feed(line)
    assert (parser.memo_chars, [len(line) for line in parser.matched_before]) == (440, [440])
    assert (parser.result(), parser.secret_values()) == expected
    monkeypatch.setattr(LP, "MEMO_MIN_CHARS", 10**9)
    assert parse_log(lines) == expected and parse_log(lines, "vllm") == expected_vllm


def test_the_live_watch_reads_a_restarted_start_up_to_its_own_outcome():
    # the first start-up's KV pool is an outcome, but the engine restarts: the grace lines count again from the
    # next start-up's outcome, not from the first's, however long the restart loads quietly
    from gpustack_guard.core.verify.live import StartUpWatch

    watch = StartUpWatch(grace_lines=5)
    first = [VERSION.format(version="0.9.0"), WEIGHTS, KV.format(tokens=1000)]
    loading = [f"INFO Loading safetensors checkpoint shard {n} of 8\n" for n in range(1, 9)]
    second = [VERSION.format(version="0.9.0")] + loading + [WEIGHTS, KV.format(tokens=2000)]
    assert [watch.feed(line) for line in first + second] == [True] * (len(first) + len(second))
    assert [watch.feed("INFO GET /health 200\n") for _ in range(5)] == [True, True, True, True, False]
    log, _ = watch.result()
    assert log.engine_terms == {P.KV_TOKENS: 2000}
    assert "the log holds 2 start-ups of vllm: the last one was read" in log.notes


# llama.cpp's load line (patterns.LLAMACPP_LOAD_LINE) in a log without a build line: an excerpt from the loader on,
# or ollama's runner retried by ollama. The figures are llama.cpp's own lines of the ollama fixture
# llama.cpp/ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log (search-index file 65940070224).
BLOB = "C:\\Users\\Dragon\\.ollama\\models\\blobs\\sha256-7ccc6415b2c7cb61ff8e01fec069d6f2fd6e213c509824d642c8a15c3d002e73"
LOAD = "llama_model_loader: loaded meta data with 33 key-value pairs and 771 tensors from {path} (version GGUF V3 (latest))\n"
DEVICE = ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - {free} MiB free\n")
VOCAB_ONLY = "llama_model_load: vocab only - skipping tensors\n"
CUDA_WEIGHTS = "load_tensors:        CUDA0 model buffer size =  8128.58 MiB\n"
CPU_WEIGHTS = "load_tensors:   CPU_Mapped model buffer size = 10394.08 MiB\n"
CUDA_KV = "llama_kv_cache:      CUDA0 KV buffer size =   986.00 MiB\n"


def _load(path: str = BLOB, free: int = 11005) -> list[str]:
    return [DEVICE.format(free=free), LOAD.format(path=path), CPU_WEIGHTS, CUDA_WEIGHTS, CUDA_KV]


def test_the_same_gguf_loaded_again_after_its_buffers_is_another_start_up():
    log, _ = parse_log(_load(free=11005) + _load(free=10886), P.LLAMACPP)
    assert log.ranks == {"CUDA0": {P.FREE_BEFORE_LOAD: 10886 * 2**20, P.WEIGHTS: round(8128.58 * 2**20),
                                   P.KV_CACHE: 986 * 2**20},
                         "CPU": {P.WEIGHTS: round(10394.08 * 2**20)}}
    assert log.gpu_name == "NVIDIA GeForce RTX 3060"
    assert "the log holds 2 start-ups of llama.cpp: the last one was read" in log.notes


def test_a_vocabulary_only_load_before_the_runners_load_is_the_same_start_up():
    # ollama reads the vocabulary in its server (no tensors, no buffers), then its runner loads the same file
    log, _ = parse_log([LOAD.format(path=BLOB), VOCAB_ONLY] + _load(), P.LLAMACPP)
    assert log.ranks["CUDA0"][P.WEIGHTS] == round(8128.58 * 2**20)
    assert not any("start-ups" in note for note in log.notes)


def test_a_second_gguf_after_the_first_ones_buffers_is_a_draft_of_the_same_start_up():
    # llama-server -md: the draft model's buffers are on the same devices as the target's and add up
    draft = ["llama_model_loader: loaded meta data with 26 key-value pairs and 201 tensors from /m/draft.gguf\n",
             "load_tensors:        CUDA0 model buffer size =   500.00 MiB\n"]
    log, _ = parse_log(_load() + draft, P.LLAMACPP)
    assert log.ranks["CUDA0"][P.WEIGHTS] == round(8128.58 * 2**20) + 500 * 2**20
    assert not any("start-ups" in note for note in log.notes)


def test_a_depth_1_clones_build_info_line_opens_a_start_up():
    build = "build_info: b1-e365e65\n"  # Docker Model Runner's llama-server (ROCm/ROCm#6227's log)
    once = [build, CPU_WEIGHTS, CUDA_WEIGHTS]
    log, _ = parse_log(once + once, P.LLAMACPP)
    assert (log.engine_version, log.ranks["CUDA0"][P.WEIGHTS]) == (None, round(8128.58 * 2**20))
