"""`gsg estimate` with vLLM's --performance-mode: the JSON names the mode beside each budget term it moved and
gives both batches; a value or release vLLM refuses is one line on stderr and exit 1 (profiles.
VLLM_PERFORMANCE_MODES)."""

import json

import pytest

LLAMA_70B_ON_2_H100 = ("-m", "meta-llama/Llama-3.1-70B-Instruct", "--gpu-memory", "81559MiB",
                       "--gpu-name", "NVIDIA H100 80GB HBM3")


def test_json_shows_the_mode_per_term_and_both_batches(gsg):
    result = gsg("estimate", *LLAMA_70B_ON_2_H100, "--backend-version", "0.19.0", "-o", "json", "--",
                 "--tensor-parallel-size", "2", "--max-model-len", "8192", "--performance-mode", "throughput")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    rules = {row["term"]: row["rule"] for row in doc["budget"]}
    assert rules["forward_peak_bytes_per_gpu"] == "live-tensors-piecewise-inductor+performance-mode-throughput"
    assert rules["sampler_peak_bytes_per_gpu"] == "triton-top-k-top-p-after-forward+performance-mode-throughput"
    assert rules["sampler_warmup_bytes_per_gpu"] == "post-kv-sampler-warmup+performance-mode-throughput"
    assert "performance-mode" not in rules["cuda_graphs_bytes_per_gpu"]
    mode = doc["extra"]["performance_mode"]
    assert (mode["mode"], mode["applied"], mode["defaults_factor"], mode["since"]) == ("throughput", True, 2, "0.17.0")
    assert (mode["balanced"]["max_num_batched_tokens"], mode["balanced"]["max_num_seqs"]) == (8192, 1024)
    assert (mode["this_mode"]["max_num_batched_tokens"], mode["this_mode"]["max_num_seqs"]) == (16384, 2048)
    assert (doc["max_num_seqs"], doc["kv_capacity_tokens"], doc["verdict"]) == (2048, 3472, "kv-below-max-model-len")


def test_json_cites_the_0_34_0_row_at_0_34_0(gsg):
    result = gsg("estimate", *LLAMA_70B_ON_2_H100, "--backend-version", "0.34.0", "-o", "json", "--",
                 "--tensor-parallel-size", "2", "--max-model-len", "8192", "--performance-mode", "interactivity")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    mode = doc["extra"]["performance_mode"]
    assert (mode["since"], mode["every_capture_size_to"], mode["terms"]) == ("0.34.0", 32, ["cuda_graphs_bytes_per_gpu"])
    assert mode["this_mode"]["cuda_graph_counts"] == {"piecewise": 76, "full": 76}
    graphs = next(row for row in doc["budget"] if row["term"] == "cuda_graphs_bytes_per_gpu")
    assert graphs["rule"].endswith("+performance-mode-interactivity") and "@v0.34.0" in graphs["source"]


@pytest.mark.parametrize("version,value,line", [
    ("0.19.0", "THROUGHPUT", "--performance-mode 'THROUGHPUT': vLLM 0.19.0 accepts balanced, interactivity, "
                             "throughput (argparse choices, case-sensitive)"),
    ("0.19.0", "1", "--performance-mode '1': vLLM 0.19.0 accepts balanced, interactivity, throughput (argparse "
                    "choices, case-sensitive)"),
    ("0.16.0", "throughput", "--performance-mode 'throughput': vLLM 0.16.0 has no --performance-mode (it exists "
                             "from 0.17.0)"),
    ("custom-build", "fast", "--performance-mode 'fast': vLLM 0.17.0+ accepts balanced, interactivity, throughput "
                             "(argparse choices, case-sensitive)"),
])
def test_a_refused_value_is_one_line_and_exit_1(gsg, version, value, line):
    result = gsg("estimate", "-m", "Qwen/Qwen3-8B", "--gpu-memory", "80GiB", "--backend-version", version,
                 "-o", "json", "--", "--performance-mode", value)
    assert (result.code, result.out) == (1, "")
    assert result.err == f"gsg: error: GSG016 argument-value: {line}\n"


def test_an_empty_value_is_one_line_and_exit_1(gsg):
    for args in (("--performance-mode", ""), ("--performance-mode=",)):
        result = gsg("estimate", "-m", "Qwen/Qwen3-8B", "--gpu-memory", "80GiB", "--backend-version", "0.19.0",
                     "--", *args)
        assert result.code == 1 and result.out == "" and result.err.count("\n") == 1
        assert result.err.startswith("gsg: error: ") and "Traceback" not in result.err


def test_an_unreadable_tag_runs_with_a_note(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen3-8B", "--gpu-memory", "80GiB", "--backend-version", "custom-build",
                 "-o", "json", "--", "--performance-mode", "throughput")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["extra"]["performance_mode"]["applied"] is False and doc["max_num_seqs"] == 1024
    assert "--performance-mode throughput not applied: gsg reads vLLM 'custom-build' as 0.11.0, which has no such " \
           "mode (it exists from 0.17.0)" in doc["notes"]
