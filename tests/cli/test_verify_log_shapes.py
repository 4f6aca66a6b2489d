"""gsg verify --log on logs as they are saved: CRLF line ends, progress bars redrawn with carriage returns, an
engine restarted in the same file, two engines' logs in one file. Each gives one clean result, never a traceback."""

from __future__ import annotations

import json

LOG = ["(APIServer pid=1) INFO 12-05 10:11:12 [startup.py:40] vLLM server version 0.34.0, serving model "
       "meta-llama/Llama-3.1-8B-Instruct",
       "(EngineCore pid=2) INFO 12-05 10:11:31 [gpu_model_runner.py:442] Model loading took 14.99 GiB memory and "
       "3.652170 seconds",
       "(EngineCore pid=2) INFO 12-05 10:11:40 [kv_cache_utils.py:1169] GPU KV cache size: 158,656 tokens, Maximum "
       "concurrency for 32,768 tokens per request: 4.84x"]
ARGS = ("--gpu-memory", "80GiB", "-o", "json")


def verify(gsg, tmp_path, content: bytes, *extra: str) -> dict:
    path = tmp_path / "engine.log"
    path.write_bytes(content)
    result = gsg("verify", "--log", str(path), *ARGS, *extra)
    assert result.err == "" and result.code in (0, 1), result.err
    return json.loads(result.out)


def test_crlf_and_lf_logs_read_alike(gsg, tmp_path):
    lf = verify(gsg, tmp_path, ("\n".join(LOG) + "\n").encode())
    crlf = verify(gsg, tmp_path, ("\r\n".join(LOG) + "\r\n").encode())
    assert crlf["observed"] == lf["observed"]
    assert lf["observed"]["kv_capacity_tokens"] == 158_656 and lf["engine_version"] == "0.34.0"
    assert lf["model"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_a_progress_bar_redrawn_in_front_of_a_figure_does_not_hide_it(gsg, tmp_path):
    bars = "".join(f"\rLoading safetensors checkpoint shards: {i:3d}% |{'#' * i}|" for i in range(0, 101, 5))
    content = "\n".join([LOG[0], bars + "\r" + LOG[1], LOG[2]]) + "\n"
    doc = verify(gsg, tmp_path, content.encode())
    assert doc["observed"]["weights_bytes_per_gpu"] == round(14.99 * 2**30)


def test_a_restarted_engine_is_judged_on_its_last_start_up(gsg, tmp_path):
    refused = ("(EngineCore pid=9) ERROR 12-05 10:01:00 [core.py:900] ValueError: No available memory for the cache "
               "blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")
    earlier = [LOG[0].replace("pid=1", "pid=8"), LOG[1].replace("pid=2", "pid=9"), refused]
    doc = verify(gsg, tmp_path, ("\n".join(earlier * 3 + LOG) + "\n").encode())
    assert (doc["failure"], doc["started"], doc["observed_verdict"]) == (None, True, "fits")
    assert "the log holds 4 start-ups of vllm: the last one was read" in doc["notes"]


def test_two_engines_in_one_file_say_which_was_read(gsg, tmp_path):
    sglang = ["[2026-07-20 08:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B')",
              "[2026-07-20 08:00:13] Load weight end. type=Qwen3ForCausalLM, avail mem=70.71 GB, mem usage=7.79 GB.",
              "[2026-07-20 08:00:14] KV Cache is allocated. #tokens: 1000, K size: 1.00 GB, V size: 1.00 GB"]
    doc = verify(gsg, tmp_path, ("\n".join(LOG + sglang) + "\n").encode())
    assert doc["engine"] == "vllm"
    assert "the log also holds lines of sglang (3 lines): vllm has the most and was read; give --backend to read " \
           "another" in doc["notes"]
    doc = verify(gsg, tmp_path, ("\n".join(LOG + sglang) + "\n").encode(), "--backend", "sglang")
    assert doc["engine"] == "sglang" and doc["observed"]["kv_capacity_tokens"] == 1000


def test_a_source_build_without_release_tags_is_not_taken_for_release_0_1(gsg, tmp_path):
    # setuptools-scm's fallback in a V1 engine's own line (search-index file 21240355802): no 0.1 release printed
    # it, so the rebuild takes gsg's default release (or --backend-version), never V0-era arithmetic
    dev = ["INFO 08-06 10:17:18 [core.py:73] Initializing a V1 LLM engine (v0.1.dev8168+g475c1a0) with config: "
           "model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len=32768, tensor_parallel_size=1", *LOG[1:]]
    doc = verify(gsg, tmp_path, ("\n".join(dev) + "\n").encode())
    assert doc["engine_version"] == "0.1.dev8168+g475c1a0"
    assert doc["estimated_version"] == "0.11.0 (assumed)"  # what a V1 log without a version gets
    given = verify(gsg, tmp_path, ("\n".join(dev) + "\n").encode(), "--backend-version", "0.10.1")
    assert given["estimated_version"] == "0.10.1"
    # a release's own number is kept
    release = verify(gsg, tmp_path, ("\n".join(LOG) + "\n").encode())
    assert release["estimated_version"] == "0.34.0"
