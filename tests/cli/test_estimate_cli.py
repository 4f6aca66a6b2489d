import json
import struct

import pytest


def test_estimate_json_keys_and_numbers(gsg):
    result = gsg("estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "23.58GiB",
                 "--backend-version", "0.6.4", "-o", "json", "--", "--max-model-len", "20000",
                 "--gpu-memory-utilization", "0.9")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    for key in ("weights_bytes_per_gpu", "kv_bytes_per_token_per_gpu", "kv_cache_bytes_per_gpu",
                "kv_capacity_tokens", "max_model_len", "estimated_max_model_len", "max_concurrency", "verdict",
                "breakdown"):
        assert key in doc
    assert set(doc["breakdown"]) == {"requested", "weights", "activation", "non_torch", "cuda_graphs", "kv_cache",
                                     "headroom"}
    assert doc["kv_bytes_per_token_per_gpu"] == 131_072 and doc["kv_capacity_tokens"] == 31_248
    assert doc["engine_verdict"] == "fits" and doc["max_model_len"] == 20000
    assert doc["format_version"] == "1.0"
    # validate's warning on the same numbers: 256 default sequences x 20,000 tokens > 31,504 tokens. The 2.36 GiB
    # outside the budget hold V0's CUDA graphs, context and slack: V0 samples inside its profile (worker.py
    # profile_run) and warms no sampler up after the KV cache, so no headroom warning
    assert doc["verdict"] == "kv-oversubscribed" and doc["verdict_severity"] == "warning"
    assert [f["rule"] for f in doc["findings"]] == ["GSG033"]
    assert [t["term"] for t in doc["budget"]][:3] == ["weights_bytes_per_gpu", "non_torch_bytes_per_gpu",
                                                      "forward_peak_bytes_per_gpu"]


def test_estimate_tensor_parallel_from_arguments(gsg):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB", "-o", "json",
                 "--", "--tensor-parallel-size=4", "--max-model-len=16384", "--kv-cache-dtype=fp8")
    doc = json.loads(result.out)
    assert doc["gpus"] == 4 and doc["kv_bytes_per_token_per_gpu"] == 40_960


def test_estimate_text_table_and_config_path(gsg, tmp_path):
    config = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
              "tie_word_embeddings": True, "max_position_embeddings": 131072}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = gsg("estimate", "--model", str(path), "--gpu-memory", "24GB", "--", "--max-model-len", "32768",
                 "--max-num-seqs", "16", "--gpu-memory-utilization", "0.85")
    assert result.code == 0 and "verdict: fits" in result.out and "KV bytes / token / GPU" in result.out


def test_estimate_llamacpp_with_a_gguf_type(gsg):
    def verdict(layers):
        result = gsg("estimate", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB",
                     "--backend", "llama.cpp", "-q", "q4_k_m", "-o", "json", "--", "--ctx-size", "32768",
                     "--parallel", "4", "--gpu-layers", str(layers), "--ubatch-size", "256", "--batch-size", "256")
        assert result.code == 0, result.err
        return json.loads(result.out)["verdict"]

    assert (verdict(80), verdict(60)) == ("does-not-fit", "fits")


def test_estimate_bad_size_and_unknown_model(gsg):
    bad = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "lots")
    assert bad.code == 1 and "--gpu-memory" in bad.err
    unknown = gsg("estimate", "-m", "acme/nothing", "--gpu-memory", "24GiB")
    assert unknown.code == 1 and "acme/nothing" in unknown.err


# --- the estimate judges like validate (issue 12 item 5) --------------------------------------------------

FLEET_24GB = """format_version: 1
clusters:
  - name: estimate
    workers:
      - name: estimate
        gpus:
{gpus}
"""


def validate_rules(gsg, tmp_path, backend_parameters, gpu_total, count, version="0.11.0"):
    """validate on the same numbers: a spec on `count` GPUs of one worker; the shape and memory rule ids."""
    gpus = "\n".join(f"          - {{index: {i}, name: '', memory: {{total: {gpu_total}}}}}" for i in range(count))
    (tmp_path / "fleet.yaml").write_text(FLEET_24GB.format(gpus=gpus))
    ids = ", ".join(f"estimate:cuda:{i}" for i in range(count))
    args = ", ".join(f'"{a}"' for a in backend_parameters)
    specs = tmp_path / "specs"
    specs.mkdir(exist_ok=True)
    (specs / "spec.yaml").write_text(
        "name: estimate\ncluster_name: estimate\nsource: huggingface\n"
        f"huggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nbackend: vLLM\nbackend_version: {version}\n"
        f"backend_parameters: [{args}]\ngpu_selector:\n  gpu_ids: [{ids}]\n")
    result = gsg("validate", str(specs), "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json")
    findings = json.loads(result.out)["findings"]
    return sorted(f["rule_id"] for f in findings if f["severity"] != "info" and f["rule_id"] >= "GSG020")


def estimate_json(gsg, *args):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.11.0", "-o", "json",
                 *args)
    assert result.code in (0, 1), result.err
    return result.code, json.loads(result.out)


def test_tp_3_with_32_heads_is_an_error_verdict_like_validate(gsg, tmp_path):
    args = ["--tensor-parallel-size=3", "--max-model-len=8192", "--max-num-seqs=4", "--gpu-memory-utilization=0.8"]
    code, doc = estimate_json(gsg, "--gpu-memory", "48GiB", "--", *args)
    assert doc["engine_verdict"] == "fits"
    assert (doc["verdict"], doc["verdict_severity"]) == ("tp-heads", "error")
    assert doc["findings"][0]["message"] == ("total number of attention heads (32) must be divisible by tensor "
                                             "parallel size (3)")
    assert code == 0  # --fail-on defaults to none
    assert validate_rules(gsg, tmp_path, args, "48GiB", 3) == \
        sorted(f["rule"] for f in doc["findings"]) == ["GSG037"]


def test_headroom_warning_agrees_with_validate(gsg, tmp_path):
    args = ["--max-model-len=8192", "--max-num-seqs=4", "--gpu-memory-utilization=0.97"]
    code, doc = estimate_json(gsg, "--gpu-memory", "24564MiB", "--", *args)
    assert doc["engine_verdict"] == "fits"
    assert (doc["verdict"], doc["verdict_severity"]) == ("headroom", "warning")
    assert [f["rule"] for f in doc["findings"]] == ["GSG034"]
    assert validate_rules(gsg, tmp_path, args, "24564MiB", 1) == ["GSG034"]


@pytest.mark.parametrize("version,gmu,expected", [
    # 0.99 x 23.99 GiB = 23.75 > 23.49 free after the CUDA context: refused before the weights load, so the
    # sampler warm-up after the KV cache (GSG043) is never reached
    ("0.11.0", "0.99", ["GSG034", "GSG041"]),
    ("0.11.0", "0.97", ["GSG034"]),  # 23.27 <= 23.49: starts, short of run-time headroom only
    ("0.7.3", "0.99", ["GSG034"]),  # V0 has no start-up check: it takes the budget and OOMs later
])
def test_one_deployment_at_a_gmu_vllm_refuses_at_startup_agrees_with_validate(gsg, tmp_path, version, gmu,
                                                                                expected):
    args = ["--max-model-len=8192", "--max-num-seqs=4", f"--gpu-memory-utilization={gmu}"]
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", version, "-o", "json",
                 "--fail-on", "error", "--gpu-memory", "24564MiB", "--", *args)
    doc = json.loads(result.out)
    assert sorted(f["rule"] for f in doc["findings"]) == expected
    refused = "GSG041" in expected
    assert (doc["verdict"], doc["verdict_severity"], result.code) == (
        ("startup-free-memory", "error", 1) if refused else ("headroom", "warning", 0))
    if refused:
        assert doc["findings"][0]["message"].endswith(
            "free memory on device (23.49 GiB after CUDA/NCCL start-up) is less than desired GPU memory "
            "utilization (0.99, 23.75 GiB)")
    assert validate_rules(gsg, tmp_path, args, "24564MiB", 1, version) == expected


@pytest.mark.parametrize("version,expected", [("0.10.0", ["GSG042"]), ("0.10.1", [])])
def test_scheduler_limits_agree_with_validate(gsg, tmp_path, version, expected):
    args = ["--max-model-len=8192", "--max-num-batched-tokens=128", "--gpu-memory-utilization=0.85"]
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", version, "-o", "json",
                 "--fail-on", "error", "--gpu-memory", "48GiB", "--", *args)
    doc = json.loads(result.out)
    judged = sorted(f["rule"] for f in doc["findings"] if f["severity"] == "error")
    assert judged == expected
    assert result.code == (1 if expected else 0)
    if expected:
        assert (doc["verdict"], doc["findings"][0]["message"]) == (
            "scheduler-limits", "max_num_batched_tokens (128) must be greater than or equal to max_num_seqs (256).")
    errors = [r for r in validate_rules(gsg, tmp_path, args, "48GiB", 1, version) if r in ("GSG042",)]
    assert errors == expected


def test_fail_on_makes_a_non_fits_verdict_exit_1(gsg):
    args = ("--gpu-memory", "24564MiB", "--", "--max-model-len=8192", "--max-num-seqs=4",
            "--gpu-memory-utilization=0.97")
    assert estimate_json(gsg, *args)[0] == 0
    assert estimate_json(gsg, "--fail-on", "error", *args)[0] == 0  # a warning verdict
    assert estimate_json(gsg, "--fail-on", "warning", *args)[0] == 1
    fits = ("--gpu-memory", "24564MiB", "--", "--max-model-len=8192", "--max-num-seqs=4",
            "--gpu-memory-utilization=0.85")
    code, doc = estimate_json(gsg, "--fail-on", "warning", *fits)
    assert (code, doc["verdict"], doc["verdict_severity"], doc["findings"]) == (0, "fits", None, [])
    tp3 = ("--fail-on", "error", "--gpu-memory", "48GiB", "--", "--tensor-parallel-size", "3")
    assert estimate_json(gsg, *tp3)[0] == 1
    bad = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "24GiB", "--fail-on", "sometimes")
    assert bad.code == 1 and "--fail-on must be none, warning or error" in bad.err


def test_a_size_without_a_unit_is_refused(gsg):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "24")
    assert result.code == 1
    assert "'24' has no unit: write 24GiB, 24GB or 24MiB" in result.err and "--gpu-memory" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize("model", ["./config.json", "missing/config.json", "/nowhere/model.gguf", "~/x.gguf"])
def test_a_missing_local_path_is_file_not_found_not_a_hub_lookup(gsg, tmp_path, model):
    result = gsg("estimate", "-m", model, "--gpu-memory", "24GiB", cwd=tmp_path)
    assert result.code == 1 and "file not found" in result.err and model in result.err
    assert "hub" not in result.err.lower()


def test_unknown_quantization_method_is_gsg030_naming_it(gsg, tmp_path):
    config = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
              "max_position_embeddings": 8192, "quantization_config": {"quant_method": "hqq", "bits": 4}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = gsg("estimate", "-m", str(tmp_path / "config.json"), "--gpu-memory", "24GiB")
    assert result.code == 1 and "GSG030 model-facts: quantization method 'hqq'" in result.err


def test_gguf_with_an_unknown_tensor_type_is_gsg030_naming_the_tensor(gsg, tmp_path):
    def s(text):
        return struct.pack("<Q", len(text.encode())) + text.encode()

    kv = [("general.architecture", 8, s("llama")), ("llama.block_count", 4, struct.pack("<I", 1))]
    body = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kv))
    for key, kind, value in kv:
        body += s(key) + struct.pack("<I", kind) + value
    body += s("blk.0.ffn_down.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 256, 256) + \
        struct.pack("<IQ", 99, 0)
    (tmp_path / "m.gguf").write_bytes(body)
    result = gsg("estimate", "-m", str(tmp_path / "m.gguf"), "--gpu-memory", "24GiB", "--backend", "llama.cpp")
    assert result.code == 1
    assert "GSG030 model-facts: GGUF tensor 'blk.0.ffn_down.weight' has unknown ggml type 99" in result.err


def test_a_gguf_with_an_absurd_block_count_is_one_line_before_any_list_is_built(gsg, tmp_path):
    def s(text):
        return struct.pack("<Q", len(text.encode())) + text.encode()

    # uint64 block count 2**40: a list of one entry per block would need 8 TiB
    kv = [("general.architecture", 8, s("llama")), ("llama.block_count", 10, struct.pack("<Q", 2**40))]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, kind, value in kv:
        body += s(key) + struct.pack("<I", kind) + value
    (tmp_path / "m.gguf").write_bytes(body)
    result = gsg("estimate", "-m", str(tmp_path / "m.gguf"), "--gpu-memory", "24GiB", "--backend", "llama.cpp")
    assert result.code == 1 and result.out == ""
    assert "GGUF metadata llama.block_count 1,099,511,627,776 is outside 1..1,000" in result.err
    assert len(result.err.strip().splitlines()) == 1


QWEN_YARN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
             "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
             "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
             "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}


@pytest.mark.parametrize("version,derived,above", [("0.29.0", 131072, False), ("0.30.0", 32768, True)])
def test_yarn_length_per_version_and_the_allow_long_env(gsg, tmp_path, version, derived, above):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_YARN))
    common = ("estimate", "-m", str(tmp_path / "config.json"), "--gpu-memory", "80GiB", "--backend-version",
              version, "-o", "json")
    doc = json.loads(gsg(*common, "--", "--max-model-len", "131072").out)
    assert doc["extra"]["derived_max_model_len"] == derived
    assert ("GSG040" in [f["rule"] for f in doc["findings"]]) is above
    refused = doc["extra"]["max_model_len_refused"]
    if above:
        assert refused.startswith("User-specified max_model_len (131072) is greater than the derived max_model_len "
                                  "(max_position_embeddings=32768.0 or model_max_length=None in model's config.json)."
                                  " To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
        allowed = json.loads(gsg(*common, "--env", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "--", "--max-model-len",
                                 "131072").out)
        assert allowed["extra"]["max_model_len_refused"] is None
        assert any(n.startswith("vLLM warns: User-specified max_model_len (131072)") for n in allowed["notes"])
    else:
        assert refused is None
    unset = json.loads(gsg(*common).out)
    assert unset["max_model_len"] == derived


def test_quantization_flag_names_a_checkpoint_format_for_vllm_and_a_ggml_type_for_llamacpp(gsg):
    def weights(backend, kind):
        result = gsg("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "80GiB", "--backend", backend, "-q", kind,
                     "-o", "json", "--", *(["--ctx-size", "4096"] if backend == "llama.cpp" else
                                           ["--max-model-len", "4096"]))
        assert result.code == 0, result.err
        return json.loads(result.out)["weight_bytes"]

    # vLLM: NVFP4 on every linear layer (no experts: dense model), embeddings bf16
    linear = 28 * (3584 * 3584 * 2 + 2 * 3584 * 512 + 3 * 3584 * 18944)
    assert weights("vLLM", "nvfp4") == 7_615_616_512 * 2 - linear * 2 + linear * 9 // 16
    assert weights("llama.cpp", "mxfp4") < weights("vLLM", "nvfp4")  # ggml MXFP4 also packs the embeddings


def test_a_blocking_finding_is_one_line_with_its_rule(gsg):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "24GiB", "--gpus", "2", "--",
                 "--tensor-parallel-size", "4")
    assert result.code == 1 and "Traceback" not in result.err
    assert "GSG022 parallel-size: 1 replica(s) x 4 GPU(s) need 4 GPUs; gpu_ids lists 2 (--gpus is GPUs per replica)" \
        in result.err
    bad_kv = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "24GiB", "--", "--kv-cache-dtype",
                 "fp9")
    assert bad_kv.code == 1 and "GSG016" in bad_kv.err and "fp9" in bad_kv.err


def test_gpus_3_is_three_devices_for_llamacpp_not_gpustacks_power_of_two(gsg):
    """--gpus is one replica's GPU count: the estimate's spec states gpus_per_replica, so GPUStack's default for
    manual gpu_ids (the largest power of two, 3 -> 2) does not drop the third device (accuracy L5: its 17/16/15
    layers are -ts 17,16,16 over 48 layers + output, the output being the last device's 16th slot)."""
    result = gsg("estimate", "-m", "Qwen/Qwen3-30B-A3B", "--gpu-memory", "32GiB", "--backend", "llama.cpp",
                 "-q", "q4_k_m", "--gpus", "3", "--backend-version", "b6800", "-o", "json", "--",
                 "--ctx-size=131072", "--flash-attn=on", "--tensor-split=17,16,16")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    devices = doc["extra"]["per_device"]
    assert doc["gpus"] == 3 and [d["layers"] for d in devices] == [17, 16, 15]
    # 4 KV heads x 128 x (2 + 2) bytes x 131,072 cells per layer
    assert [d["kv"] for d in devices] == [17 * 268_435_456, 16 * 268_435_456, 15 * 268_435_456]


def test_the_estimate_spec_states_gpus_per_replica_only_without_a_parallel_size():
    from gpustack_guard.commands.estimate import EstimateOptions, synthetic_spec

    opts = EstimateOptions(model="m", gpu_memory="32GiB", backend="llama.cpp", gpus=3)
    assert synthetic_spec(opts, "llamacpp", 3, {}, 32 * 2**30, 1)["gpu_selector"] == {
        "gpu_ids": ["estimate:cuda:0", "estimate:cuda:1", "estimate:cuda:2"], "gpus_per_replica": 3}
    # with a parallel size GPUStack takes the world size, and a count that differs stays GSG022's to report
    assert "gpus_per_replica" not in synthetic_spec(opts, "vllm", 2, {}, 32 * 2**30, 4)["gpu_selector"]


@pytest.mark.parametrize("text, message", [
    ('{"model_type": "llama", "num_key_value_heads": "eight"}', "'num_key_value_heads' must be a whole number"),
    ("[1, 2]", "config.json must be a JSON object, not list"),
    ('{"model_type": "llama",', "not a JSON config"),
    (b"\xff\xfe{}", "not a JSON config: not UTF-8 text"),
])
def test_a_hostile_config_is_one_line_exit_1(gsg, tmp_path, text, message):
    path = tmp_path / "config.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = gsg("estimate", "-m", str(path), "--gpu-memory", "24GiB")
    assert result.code == 1 and message in result.err and str(path) in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_llamacpp_flash_attention_is_auto_from_b6325_and_a_bad_value_is_refused(gsg):
    base = ("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "24GiB", "--backend", "llama.cpp", "-q", "q4_k_m",
            "-o", "json")
    new = json.loads(gsg(*base, "--backend-version", "b6325", "--", "--ctx-size=32768").out)
    old = json.loads(gsg(*base, "--backend-version", "b6324", "--", "--ctx-size=32768").out)
    assert new["extra"]["flash_attn"] is True and old["extra"]["flash_attn"] is False
    assert any("--flash-attn auto" in n for n in new["notes"])
    # the f16 mask (32768 x 512 x 2) against the f32 KQ, mask and rows: 304 MiB of logits win with FA
    assert new["compute_buffer_bytes_per_gpu"] == [(3584 + 152_064) * 512 * 4]
    assert old["compute_buffer_bytes_per_gpu"] == [32768 * 512 * 28 * 4 + 32768 * 512 * 4 + 6 * 3584 * 512 * 4]
    bad = gsg(*base, "--backend-version", "b7000", "--", "--flash-attn=maybe")
    assert bad.code == 1 and "GSG016" in bad.err and "--flash-attn 'maybe'" in bad.err and "on, off or auto" in bad.err


def test_llamacpp_flash_attention_auto_is_off_with_the_kv_cache_on_the_host(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "24GiB", "--backend", "llama.cpp", "-q",
                 "q4_k_m", "--backend-version", "b7000", "-o", "json", "--", "--ctx-size=8192", "--no-kv-offload")
    doc = json.loads(result.out)
    assert doc["extra"]["flash_attn"] is False and doc["kv_cache_bytes_per_gpu"] == 0
    assert any("--no-kv-offload" in n and "turns it off" in n for n in doc["notes"])


@pytest.mark.parametrize(("version", "args", "cells"), [
    ("b7045", ("-c", "1000", "-np", "3"), 1536),  # one cache per slot, each share padded to 256
    ("b7045", ("-c", "1000", "-np", "3", "-kvu"), 1024),  # unified: one cache of the padded n_ctx
    ("b7045", ("-c", "1000", "-np", "-1"), 1024),  # automatic slots: unified
    ("b7045", ("-c", "1000",), 1024),  # -np not given: automatic from b7000
    ("b7045", ("-c", "1000", "-np", "3", "--no-kv-unified"), 1536),
    ("b7044", ("-c", "1000", "-np", "3", "-fa", "off"), 1024),  # before PR #17046: padded to 32, one cache
])
def test_llamacpp_cells_by_slots_and_unified_cache(gsg, version, args, cells):
    result = gsg("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "24GiB", "--backend", "llama.cpp", "-q",
                 "q4_k_m", "--backend-version", version, "-o", "json", "--", *args)
    doc = json.loads(result.out)
    assert doc["kv_capacity_tokens"] == cells
    assert doc["kv_cache_bytes_per_gpu"] == cells * 28 * 4 * 128 * 2 * 2


def test_llamacpp_more_slots_than_cells_is_refused_in_one_line(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "24GiB", "--backend", "llama.cpp", "-q",
                 "q4_k_m", "--backend-version", "b7045", "--", "-c", "256", "-np", "300")
    assert result.code == 1 and "GSG016" in result.err and "splits 256 cells over 300 slots" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    fine = gsg("estimate", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "24GiB", "--backend", "llama.cpp", "-q",
               "q4_k_m", "--backend-version", "b7045", "--", "-c", "256", "-np", "256")
    assert fine.code == 0, fine.err


@pytest.mark.parametrize("backend, model, version, args, expected", [
    ("vLLM", "Qwen/Qwen2.5-7B-Instruct", "0.11.0", ["--max-model-len", "8192"],
     {"sampler_peak_bytes_per_gpu": ("flashinfer-top-k-top-p-after-forward", "topk_topp_sampler.py@v0.9.0"),
      "cuda_graphs_bytes_per_gpu": ("full-and-piecewise-capture-sizes-every-8-after-kv", "compilation.py@v0.11.0")}),
    ("SGLang", "Qwen/Qwen2.5-7B-Instruct", "0.5.5", ["--context-length", "8192"],
     {"activation_bytes_per_gpu": ("reserved-memory", "server_args.py@v0.5.4"),
      "kv_cache_bytes_per_gpu": ("fraction-x-total-minus-weights", "model_runner.py@v0.3.6")}),
    ("llama.cpp", "meta-llama/Llama-3.1-8B-Instruct", "b7045", ["--ctx-size", "8192"],
     {"kv_cache_bytes_per_gpu": ("cells-padded-256-per-stream", "llama-context.cpp@b7045"),
      "compute_buffer_bytes_per_gpu": ("high-water-mark-plus-held-input-copies+ffn-glu-output-beside-gate-up",
                                       "ggml-alloc.c ggml_op_can_inplace (GLU not in place)@0c1e57098")}),
    ("llama.cpp", "meta-llama/Llama-3.1-8B-Instruct", "b2000", ["--ctx-size", "8192"],  # before pipeline copies
     {"compute_buffer_bytes_per_gpu": ("graph-high-water-mark+ffn-gate-up-moe-expert-loop",
                                       "llama.cpp@b1880 llama.cpp build_mixtral")}),
    ("llama.cpp", "mistralai/Mixtral-8x7B-v0.1", "b3000", ["--ctx-size", "8192"],  # all experts in one call
     {"compute_buffer_bytes_per_gpu": ("high-water-mark-plus-held-input-copies+ffn-gate-up-moe-all-experts",
                                       "llama.cpp@b2694 llama.cpp llm_build_moe_ffn")}),
])
def test_estimate_json_budget_rows_for_each_engine(gsg, backend, model, version, args, expected):
    from gpustack_guard.core.memory.terms import ENGINE_TERMS, LORA_BUFFERS, MAMBA_STATE, RECURRENT_STATE

    extra = ["-q", "q4_k_m"] if backend == "llama.cpp" else []
    result = gsg("estimate", "-m", model, "--gpu-memory", "24GiB", "--backend", backend, "--backend-version",
                 version, *extra, "-o", "json", "--", *args)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    rows = {row["term"]: row for row in doc["budget"]}
    # the recurrent-state and mamba-state rows appear only for models with such layers, the LoRA row only under
    # --enable-lora (none here)
    assert [row["term"] for row in doc["budget"]] == [t for t in ENGINE_TERMS[backend]
                                                      if t not in (RECURRENT_STATE, MAMBA_STATE, LORA_BUFFERS)]
    # the rows carry the estimate's own figures
    assert rows["weights_bytes_per_gpu"]["value"] == doc["weights_bytes_per_gpu"] > 0
    assert rows["kv_cache_bytes_per_gpu"]["value"] == doc["kv_cache_bytes_per_gpu"] > 0
    assert rows["kv_capacity_tokens"] == {**rows["kv_capacity_tokens"], "value": doc["kv_capacity_tokens"],
                                          "unit": "tokens"}
    for term, (rule, source) in expected.items():
        assert rows[term]["rule"] == rule and source in rows[term]["source"], rows[term]
    if backend == "vLLM":  # the profile's activation is the larger phase
        assert rows["activation_bytes_per_gpu"]["value"] == max(rows["forward_peak_bytes_per_gpu"]["value"],
                                                                rows["sampler_peak_bytes_per_gpu"]["value"])


@pytest.mark.parametrize("backend, version, args, lora_bytes, rule", [
    # SGLang: --lora-paths turns LoRA on; 2 slots x rank 256 over the linear projections (2.50 GiB)
    ("SGLang", "0.5.8", ["--lora-paths", "lora0=org/a", "--max-lora-rank", "256", "--max-loras-per-batch", "2",
                         "--lora-target-modules", "all"], 2 * 32 * 256 * 81_920 * 2,
     "slots-x-modules-x-layers-before-kv-pool"),
    # vLLM 0.34.0: 1 slot at rank 16 of every linear, the embedding and the LM head (A and B of each)
    ("vLLM", "0.34.0", ["--enable-lora"], 32 * 16 * 81_920 * 2 + 2 * 16 * (128_256 + 4096) * 2,
     "slots-x-modules-x-layers-in-model-loading"),
])
def test_estimate_json_books_the_lora_slots_as_their_own_term(gsg, backend, version, args, lora_bytes, rule):
    common = ("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "80GiB", "--backend", backend,
              "--backend-version", version, "-o", "json", "--", "--max-model-len" if backend == "vLLM" else
              "--context-length", "8192")
    with_lora, without = (json.loads(gsg(*common, *extra).out) for extra in (args, []))
    rows = {row["term"]: row for row in with_lora["budget"]}
    assert rows["lora_buffers_bytes_per_gpu"]["value"] == lora_bytes == with_lora["extra"]["lora"]["bytes"]
    assert rows["lora_buffers_bytes_per_gpu"]["rule"] == rule
    assert "lora_buffers_bytes_per_gpu" not in {row["term"] for row in without["budget"]}
    # the KV cache gives way by the slots and by the graphs vLLM captures again with adapters (from 0.11.2, inside
    # the budget at 0.34), to within one block's bytes (2 MiB at the least)
    graphs = with_lora["breakdown"]["cuda_graphs"] - without["breakdown"]["cuda_graphs"]
    assert graphs > 0 if backend == "vLLM" else graphs == 0
    block = max(2 * 2**20, (with_lora["block_size"] or 1) * with_lora["kv_bytes_per_token_per_gpu"])
    assert abs(without["kv_cache_bytes_per_gpu"] - with_lora["kv_cache_bytes_per_gpu"] - lora_bytes - graphs) <= block
    text = gsg(*common[:-3], "--", *common[-2:], *args).out  # the table names the term too
    assert "lora_buffers_bytes_per_gpu" in text


def test_estimate_json_shows_sglangs_mamba_pool_of_a_gated_deltanet_model(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu-memory", "143771MiB", "--gpus", "4",
                 "--backend", "SGLang", "--backend-version", "0.5.2", "-o", "json", "--", "--tp-size", "4")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    rows = {row["term"]: row for row in doc["budget"]}
    # 512 slots + the padding row, 19,316,736 bytes each (36 linear layers at TP 4)
    assert rows["mamba_state_bytes_per_gpu"]["value"] == 513 * 19_316_736 == doc["extra"]["mamba_pool"]["bytes"]
    assert rows["mamba_state_bytes_per_gpu"]["rule"] == "mamba-slots-fixed"
    assert "model_runner.py@v0.5.2" in rows["mamba_state_bytes_per_gpu"]["source"]
    text = gsg("estimate", "-m", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu-memory", "143771MiB", "--gpus", "4",
               "--backend", "SGLang", "--backend-version", "0.5.2", "--", "--tp-size", "4")
    assert "mamba state pool" in text.out and "mamba_state_bytes_per_gpu" in text.out


def _tiny_llama_gguf(path, **overrides) -> None:
    """A one-block llama GGUF header (no tensors) with its hyperparameters; overrides: key -> (kind, bytes), or
    None to leave the key out."""
    def s(text):
        return struct.pack("<Q", len(text.encode())) + text.encode()

    u32 = lambda v: (4, struct.pack("<I", v))  # noqa: E731
    keys = {"block_count": u32(1), "embedding_length": u32(256), "attention.head_count": u32(4),
            "attention.head_count_kv": u32(4), "feed_forward_length": u32(512), "vocab_size": u32(1000),
            "context_length": u32(4096)} | overrides
    kv = [("general.architecture", 8, s("llama"))] + [(f"llama.{key}", *value) for key, value in keys.items()
                                                      if value is not None]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, kind, value in kv:
        body += s(key) + struct.pack("<I", kind) + value
    path.write_bytes(body)


@pytest.mark.parametrize(("key", "value", "message"), [
    # n_ctx_train: llama.cpp's default context from b3579 and from b7474 (--fit's starting point)
    ("context_length", (4, struct.pack("<I", 0)), "'max_position_embeddings' 0 is outside 1..1,000,000,000"),
    ("context_length", (5, struct.pack("<i", -1)), "'max_position_embeddings' -1 is outside 1..1,000,000,000"),
    ("context_length", (10, struct.pack("<Q", 2**40)),
     "'max_position_embeddings' 1,099,511,627,776 is outside 1..1,000,000,000"),
    # n_ff: the feed-forward width of the compute buffer (LLAMACPP_FFN_FORMS)
    ("feed_forward_length", (4, struct.pack("<I", 0)), "'intermediate_size' 0 is outside 1..1,000,000,000"),
    # expert counts: the MoE widths of the compute buffer
    ("expert_count", (4, struct.pack("<I", 0)), "'num_experts' 0 is outside 1..1,000,000,000"),
    ("expert_count", (10, struct.pack("<Q", 2**40)), "'num_experts' 1,099,511,627,776 is outside 1..1,000,000,000"),
    ("expert_used_count", (10, struct.pack("<Q", 2**63)),
     "'num_experts_per_tok' 9,223,372,036,854,775,808 is outside 1..1,000,000,000"),
])
@pytest.mark.parametrize("build", [None, "b7474", "b4020"])
def test_hostile_gguf_hyperparameters_are_one_gsg030_line_at_every_build(gsg, tmp_path, key, value, message, build):
    _tiny_llama_gguf(tmp_path / "m.gguf", **{key: value})
    version = ["--backend-version", build] if build else []
    result = gsg("estimate", "-m", str(tmp_path / "m.gguf"), "--gpu-memory", "24GiB", "--backend", "llama.cpp",
                 *version)
    assert result.code == 1 and result.out == ""
    assert result.err.strip().splitlines() == \
        [f"gsg: error: {tmp_path / 'm.gguf'}: GSG030 model-facts: GGUF metadata: {message}"]


def test_a_gguf_without_a_trained_context_is_counted_at_gpustacks_booking_with_a_note(gsg, tmp_path):
    # llama.cpp needs n_ctx_train to start from its unset -c (b7474 on); gsg counts GPUStack's 8,192 and says so
    _tiny_llama_gguf(tmp_path / "m.gguf", context_length=None)
    result = gsg("estimate", "-m", str(tmp_path / "m.gguf"), "--gpu-memory", "24GiB", "--backend", "llama.cpp",
                 "-o", "json")
    assert result.code == 0
    est = json.loads(result.out)
    context = est["extra"]["context"] if "extra" in est else est["estimates"][0]["extra"]["context"]
    assert (context["ctx_size"], context["source"]) == (8192, "gpustack-booking")


def test_align_block_above_the_batched_tokens_is_a_scheduler_limits_error(gsg):
    # Qwen3.6-27B raises its attention block to 784 tokens; prefix caching (mode "align") in vLLM 0.20.0 asserts
    # block_size <= max_num_batched_tokens at start-up (config/vllm.py validate_block_size)
    args = ["--max-model-len=32768", "--enable-prefix-caching", "--max-num-batched-tokens=512"]
    result = gsg("estimate", "-m", "Qwen/Qwen3.6-27B", "--backend-version", "0.20.0", "-o", "json",
                 "--fail-on", "error", "--gpu-memory", "80GiB", "--gpu-name", "NVIDIA H100 80GB HBM3", "--", *args)
    doc = json.loads(result.out)
    found = [f for f in doc["findings"] if f["rule"] == "GSG042"]
    assert result.code == 1 and doc["verdict"] == "scheduler-limits"
    assert [(f["severity"], f["message"]) for f in found] == [(
        "error", "vLLM 0.20.0 refuses to start: In Mamba cache align mode, block_size (784) must be <= "
                 "max_num_batched_tokens (512).")]
    assert "--max-num-batched-tokens 784 or more" in found[0]["fix"]
    off = gsg("estimate", "-m", "Qwen/Qwen3.6-27B", "--backend-version", "0.20.0", "-o", "json", "--gpu-memory",
              "80GiB", "--gpu-name", "NVIDIA H100 80GB HBM3", "--", "--max-model-len=32768",
              "--max-num-batched-tokens=512")
    assert not [f for f in json.loads(off.out)["findings"] if f["rule"] == "GSG042"]
