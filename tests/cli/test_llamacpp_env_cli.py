"""A llama.cpp spec's LLAMA_ARG_ env: a value llama-server exits on is one GSG016 at the env key's line (a secret's
value masked), and the estimate says which values came from the env."""

import json
import re

from support import FLEET

LLAMACPP = ("name: t\nsource: huggingface\nhuggingface_repo_id: bartowski/Llama-3.3-70B-Instruct-GGUF\n"
            "huggingface_filename: Llama-3.3-70B-Instruct-Q4_K_M.gguf\ngpu_selector:\n  gpu_ids: [gpu-d:cuda:0]\n"
            "backend: llama.cpp\nbackend_version: b10507\nguard:\n  model: {catalog: meta-llama/Llama-3.3-70B-Instruct}\n")


def validate(gsg, tmp_path, env: str, *args: str):
    (tmp_path / "spec.yaml").write_text(LLAMACPP + env, encoding="utf-8")
    return gsg("validate", "spec.yaml", "--fleet", str(FLEET), *args, cwd=tmp_path)


def finding_lines(result) -> list[str]:
    assert "Traceback" not in result.out + result.err
    return [line for line in result.out.splitlines() if re.match(r"^spec\.yaml:\d+:\d+: ", line)]


def test_a_bad_value_is_one_finding_at_its_env_line(gsg, tmp_path):
    result = validate(gsg, tmp_path, 'env:\n  LLAMA_ARG_N_GPU_LAYERS: "20"\n  LLAMA_ARG_CTX_SIZE: "lots"\n')
    assert result.code == 1
    assert finding_lines(result) == [
        "spec.yaml:13:23: error GSG016 argument-value [t]: env LLAMA_ARG_CTX_SIZE 'lots': not a whole number "
        "(std::stoi finds no digits); llama.cpp b10507 (std::stoi) accepts a whole number ≥ 0 (0 = the model's own "
        "length)"]


def test_a_bad_boolean_names_the_variable(gsg, tmp_path):
    result = validate(gsg, tmp_path, 'env:\n  LLAMA_ARG_KV_UNIFIED: "yes"\n')
    assert result.code == 1
    assert finding_lines(result)[0].startswith("spec.yaml:12:25: error GSG016 argument-value [t]: env "
                                               "LLAMA_ARG_KV_UNIFIED 'yes': llama.cpp exits at start-up")


def test_a_flag_given_leaves_the_variable_unread(gsg, tmp_path):
    result = validate(gsg, tmp_path, 'backend_parameters:\n  - --ctx-size 8192\nenv:\n  LLAMA_ARG_CTX_SIZE: "lots"\n',
                      "-o", "json")
    assert result.code == 0, result.out
    est = json.loads(result.out)["deployments"][0]["estimate"]
    assert est["kv_capacity_tokens"] == 8192 and "from_env" not in est["extra"]


def test_a_secret_reference_is_masked(gsg, tmp_path, monkeypatch):
    monkeypatch.setenv("UB", "0xsecret9")
    result = validate(gsg, tmp_path, 'env:\n  LLAMA_ARG_UBATCH: "${UB}"\n')
    assert result.code == 1
    lines = finding_lines(result)
    assert len(lines) == 1 and "0xsecret9" not in result.out + result.err
    assert lines[0] == ("spec.yaml:12:21: error GSG016 argument-value [t]: env LLAMA_ARG_UBATCH '********': a value "
                        "llama.cpp b10507 refuses for --ubatch-size")


def test_the_estimate_reads_the_env_and_says_so(gsg, tmp_path):
    result = validate(gsg, tmp_path, 'env:\n  LLAMA_ARG_CTX_SIZE: "16384"\n  LLAMA_ARG_N_GPU_LAYERS: "all"\n',
                      "-o", "json")
    assert result.code == 0, result.out
    est = json.loads(result.out)["deployments"][0]["estimate"]
    # Llama-3.3-70B: 80 layers x 8 KV heads x 128 x 2 x 2 B = 327,680 B a cell
    assert est["kv_capacity_tokens"] == 16384 and est["kv_cache_bytes_per_gpu"] == 16384 * 327680
    assert est["extra"]["context"]["why"] == "ctx 16384 (env LLAMA_ARG_CTX_SIZE)"
    assert est["extra"]["from_env"] == {"ctx-size": "LLAMA_ARG_CTX_SIZE", "gpu-layers": "LLAMA_ARG_N_GPU_LAYERS"}


def test_a_slot_count_from_the_env_the_engine_refuses_is_at_its_line(gsg, tmp_path):
    result = validate(gsg, tmp_path, 'env:\n  LLAMA_ARG_CTX_SIZE: "512"\n  LLAMA_ARG_N_PARALLEL: "1000"\n'
                                     '  LLAMA_ARG_KV_UNIFIED: "off"\n')
    assert result.code == 1
    assert finding_lines(result) == [
        "spec.yaml:13:25: error GSG016 argument-value [t]: env LLAMA_ARG_N_PARALLEL '1000': llama.cpp b10507 splits "
        "512 cells over 1,000 slots, less than one each (n_ctx_seq == 0): it refuses to start"]
