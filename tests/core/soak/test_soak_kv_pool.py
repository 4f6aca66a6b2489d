"""The KV pool the engine really allocated, read from its /metrics where it exports one (vLLM's cache config
info, SGLang's max_total_num_tokens; llama.cpp exports none), and the one a verify report gives (--observed)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from gpustack_guard.adapters.soak.scrape import parse_samples
from gpustack_guard.core.soak.metrics import Normaliser, Snapshot, kv_pool_tokens, observed_kv_pool
from gpustack_guard.reporters.soak import kv_pool_line

VLLM = """# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_cpu_blocks="2048",num_gpu_blocks="1952",num_gpu_blocks_override="None",swap_space_bytes="4294967296"} 1.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3.0
"""
SGLANG = """# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{model_name="m"} 367404.0
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m"} 2.0
"""
LLAMACPP = """# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 1
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 4096
"""


@pytest.mark.parametrize("text,tokens", [
    (VLLM, 1952 * 16),
    (VLLM.replace('num_gpu_blocks="1952"', 'num_gpu_blocks="None"'), None),  # before profiling sized the pool
    (VLLM + VLLM.replace("1952", "1000").replace("CacheConfig", "x").split("\n", 2)[2], 1952 * 16 + 1000 * 16),
    (SGLANG, 367_404),
    (SGLANG.replace("367404.0", "0.0"), None),
    (LLAMACPP, None),
    ("", None),
])
def test_the_pool_each_engine_exports(text, tokens):
    samples = parse_samples(text)
    assert kv_pool_tokens(samples) == tokens
    assert Normaliser().snapshot(1.0, samples).kv_capacity_tokens == tokens


def test_the_scraped_pool_is_used_and_a_verify_report_is_compared_with_it():
    snaps = [Snapshot(t=0.0), Snapshot(t=1.0, kv_capacity_tokens=31_232), Snapshot(t=2.0)]
    pool = observed_kv_pool(snaps, (30_000, "verify report"))
    assert pool == {"observed_kv_capacity_tokens": 31_232, "from": "metrics", "metrics_kv_capacity_tokens": 31_232,
                    "file_kv_capacity_tokens": 30_000, "file_kind": "verify report", "difference_percent": 4.1}
    assert kv_pool_line(pool) == ("KV pool: 31,232 tokens allocated by the engine (its /metrics); the verify report "
                                  "given with --observed says 30,000 (+4.1 %)")
    only_file = observed_kv_pool([Snapshot(t=0.0)], (158_656, "recorded vector"))
    assert only_file is not None and only_file["observed_kv_capacity_tokens"] == 158_656
    assert kv_pool_line(only_file) == ("KV pool: 158,656 tokens, from the recorded vector given with --observed "
                                       "(the metrics export no pool size)")
    assert observed_kv_pool([Snapshot(t=0.0)], None) is None


def test_a_bad_observed_file_stops_the_soak_before_its_first_round(tmp_path):
    from gpustack_guard.cli import main

    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"observed": {}}))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["soak", "--url", "http://127.0.0.1:9", "--model", "m", "--observed", str(path)])
    assert code == 1
    assert err.getvalue().strip().splitlines() == [
        f"gsg: error: {path}: holds no observed kv_capacity_tokens (give the JSON of `gsg verify --log FILE -o json` "
        "or a vector `gsg verify --record` wrote, of an engine that started)"]


@pytest.mark.parametrize("label, expected", [("12", 12), ("0", 0), ("None", None), ("", None), ("-1", None),
                                          ("²", None), ("١٢", None), ("9" * 19, None), ("9" * 18, 10**18 - 1)])
def test_a_count_label_is_a_plain_ascii_whole_number_or_nothing(label, expected):
    """A /metrics label is the server's text: `²` and Arabic-Indic digits pass str.isdigit but not int(), and
    a 5,000-digit label would raise; each is simply no figure, never a stopped soak."""
    from gpustack_guard.core.soak.metrics import whole

    assert whole(label) == expected
