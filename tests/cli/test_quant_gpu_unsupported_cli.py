"""GSG054 through the CLI: validate (the fleet's GPU names) and estimate (--gpu-name) say the same about a weights
format the engine refuses on the GPU's compute capability: two formats, each at two releases, on a GPU below the
release's minimum and on one exactly at it."""

import json

import pytest

VQ = "vllm/model_executor/layers/quantization"
LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
    "vocab_size": 128256, "tie_word_embeddings": False, "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
    "torch_dtype": "bfloat16"}
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8"}
GPUS = {"Tesla T4": "7.5", "Tesla V100-SXM2-32GB": "7.0", "NVIDIA A100-SXM4-80GB": "8.0",
        "NVIDIA RTX A6000": "8.6", "NVIDIA L4": "8.9"}
FLEET = """clusters:
  - name: prod
    workers:
      - name: w1
        gpus:
          - {index: 0, name: GPU, memory: {total: 80GiB}}
"""


def message(version, weights, gpu, config, minimum, source):
    return (f"vLLM {version} refuses {weights} weights on {gpu} (compute capability {GPUS[gpu]}): {config} needs "
            f"compute capability {minimum} ({source}); the deployment fails at start-up")


# (checkpoint, release, GPU below the minimum, GPU at it, the message of the one below)
CASES = [
    (FP8_BLOCK, "0.13.0", "Tesla T4", "NVIDIA A100-SXM4-80GB",
     message("0.13.0", "fp8", "Tesla T4", "Fp8Config", "8.0", f"{VQ}/fp8.py@v0.6.0 .. @v0.13.0")),
    (FP8_BLOCK, "0.14.0", "Tesla V100-SXM2-32GB", "Tesla T4",
     message("0.14.0", "fp8", "Tesla V100-SXM2-32GB", "Fp8Config", "7.5", f"{VQ}/fp8.py@v0.14.0 .. @v0.34.0")),
    (MODELOPT_FP8, "0.26.0", "NVIDIA RTX A6000", "NVIDIA L4",
     message("0.26.0", "fp8 (modelopt)", "NVIDIA RTX A6000", "ModelOptFp8Config", "8.9",
             f"{VQ}/modelopt.py@v0.8.5 .. @v0.26.0")),
    (MODELOPT_FP8, "0.27.0", "Tesla T4", "NVIDIA A100-SXM4-80GB",
     message("0.27.0", "fp8 (modelopt)", "Tesla T4", "ModelOptFp8Config", "8.0",
             f"{VQ}/modelopt.py@v0.27.0 .. @v0.34.0")),
]


def validate(gsg, tmp_path, quantization, version, gpu):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B | {"quantization_config": quantization}))
    (tmp_path / "fleet.yaml").write_text(FLEET.replace("name: GPU", f"name: {gpu}"))
    (tmp_path / "spec.yaml").write_text(
        "name: llama\nsource: huggingface\nhuggingface_repo_id: org/llama-8b-quantised\n"
        f"gpu_selector:\n  gpu_ids: [w1:cuda:0]\nbackend: vLLM\nbackend_version: '{version}'\n"
        "backend_parameters: [--max-model-len=8192, --max-num-seqs=16]\nguard:\n  model:\n    config: config.json\n")
    result = gsg("validate", "spec.yaml", "--fleet", "fleet.yaml", "-o", "json", cwd=tmp_path)
    return result.code, [(f["severity"], f["line"], f["message"]) for f in json.loads(result.out)["findings"]
                         if f["rule_id"] == "GSG054"]


def estimate(gsg, tmp_path, quantization, version, gpu):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B | {"quantization_config": quantization}))
    result = gsg("estimate", "-m", str(tmp_path / "config.json"), "--gpu-memory", "80GiB", "--gpu-name", gpu,
                 "--backend-version", version, "--offline", "-o", "json", "--", "--max-model-len", "8192", "--max-num-seqs", "16")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    return doc["verdict"], [f["message"] for f in doc["findings"] if f["rule"] == "GSG054"]


@pytest.mark.parametrize("quantization, version, below, at, expected", CASES,
                         ids=[f"{c[0]['quant_method']}-{c[1]}" for c in CASES])
def test_validate_and_estimate_refuse_the_gpu_below_and_pass_the_gpu_at_the_minimum(gsg, tmp_path, quantization,
                                                                                     version, below, at, expected):
    assert validate(gsg, tmp_path, quantization, version, below) == (1, [("error", 5, expected)])
    assert estimate(gsg, tmp_path, quantization, version, below) == ("quantization-gpu-unsupported", [expected])
    code, findings = validate(gsg, tmp_path, quantization, version, at)
    assert (code, findings) == (0, [])
    assert estimate(gsg, tmp_path, quantization, version, at) == ("fits", [])


def test_estimate_text_names_the_rule_and_fails_on_error(gsg, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B | {"quantization_config": MODELOPT_FP8}))
    result = gsg("estimate", "-m", str(tmp_path / "config.json"), "--gpu-memory", "48GiB", "--gpu-name",
                 "NVIDIA RTX A6000", "--backend-version", "0.26.0", "--offline", "--fail-on", "error", "--",
                 "--max-model-len", "8192")
    assert result.code == 1
    assert f"error GSG054 quantization-gpu-unsupported: {CASES[2][4]}" in result.out


def test_an_unknown_gpu_name_gives_no_finding(gsg, tmp_path):
    assert validate(gsg, tmp_path, MODELOPT_FP8, "0.26.0", "Acme Tensor Card") == (0, [])
    assert estimate(gsg, tmp_path, MODELOPT_FP8, "0.26.0", "Acme Tensor Card") == ("fits", [])
