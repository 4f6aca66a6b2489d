"""GSG053 through the CLI: validate and estimate say the same about a weights format the pinned release cannot load,
and estimate notes an unreadable backend_version as validate's GSG039 does."""

import json

import pytest
from support import FLEET

VLLM_INIT = "vllm/model_executor/layers/quantization/__init__.py"
VLLM_CT = "vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
SGL_INIT = "python/sglang/srt/layers/quantization/__init__.py"
GPT_OSS_VLLM_0100 = (f"vLLM 0.10.0 cannot load mxfp4 weights: vLLM loads them from 0.10.1 on ({VLLM_INIT}@v0.10.1 "
                     "'mxfp4' (Mxfp4Config); absent @v0.10.0); the deployment fails at start-up")
GPT_OSS_SGLANG_0410 = (f"SGLang 0.4.10 cannot load mxfp4 weights: SGLang loads them from 0.5.0rc0 on ({SGL_INIT}"
                       "@v0.5.0rc0 'mxfp4' (Mxfp4Config, added on CUDA); absent @v0.4.10); the deployment fails at "
                       "start-up")
# Qwen3-8B quantised with llm-compressor's MXFP4 preset (compressed-tensors mxfp4-pack-quantized)
QWEN3_8B_MXFP4 = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
    "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
                            "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                                "type": "float", "num_bits": 4, "strategy": "group", "group_size": 32,
                                "symmetric": True, "scale_dtype": "torch.uint8"}}}}}


def spec(tmp_path, backend: str, version: str) -> str:
    (tmp_path / "spec.yaml").write_text(
        "name: gptoss\nsource: huggingface\nhuggingface_repo_id: openai/gpt-oss-20b\n"
        f"gpu_selector:\n  gpu_ids: [gpu-b:cuda:1]\nbackend: {backend}\nbackend_version: '{version}'\n")
    return str(tmp_path / "spec.yaml")


@pytest.mark.parametrize("backend, version, message", [("vLLM", "0.10.0", GPT_OSS_VLLM_0100),
                                                       ("SGLang", "0.4.10", GPT_OSS_SGLANG_0410)])
def test_validate_and_estimate_give_the_same_error(gsg, tmp_path, backend, version, message):
    validated = gsg("validate", spec(tmp_path, backend, version), "--fleet", str(FLEET), "-o", "json")
    assert validated.code == 1
    (found,) = [f for f in json.loads(validated.out)["findings"] if f["rule_id"] == "GSG053"]
    assert (found["severity"], found["line"], found["message"]) == ("error", 7, message)
    estimated = gsg("estimate", "-m", "openai/gpt-oss-20b", "--gpu-memory", "48GiB", "--backend", backend,
                    "--backend-version", version, "-o", "json")
    assert estimated.code == 0, estimated.err
    doc = json.loads(estimated.out)
    assert (doc["verdict"], doc["verdict_severity"]) == ("quantization-unloadable", "error")
    assert [f["message"] for f in doc["findings"] if f["rule"] == "GSG053"] == [message]
    failing = gsg("estimate", "-m", "openai/gpt-oss-20b", "--gpu-memory", "48GiB", "--backend", backend,
                  "--backend-version", version, "--fail-on", "error")
    assert failing.code == 1 and f"error GSG053 quantization-unloadable: {message}" in failing.out


def test_estimate_of_a_compressed_tensors_mxfp4_config_on_a_release_before_its_scheme(gsg, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(QWEN3_8B_MXFP4))
    old = json.loads(gsg("estimate", "-m", str(config), "--gpu-memory", "24GiB", "--backend-version", "0.13.0",
                         "-o", "json", "--", "--max-model-len", "8192").out)
    assert [f["message"] for f in old["findings"] if f["rule"] == "GSG053"] == [
        f"vLLM 0.13.0 cannot load mxfp4_dense (compressed-tensors) weights: vLLM loads them from 0.14.0 on "
        f"({VLLM_CT}@v0.14.0 _is_mxfp4 (CompressedTensorsW4A16Mxfp4); absent @v0.13.0); the deployment fails at "
        "start-up"]
    new = json.loads(gsg("estimate", "-m", str(config), "--gpu-memory", "24GiB", "--backend-version", "0.14.0",
                         "-o", "json", "--", "--max-model-len", "8192").out)
    assert not [f for f in new["findings"] if f["rule"] == "GSG053"]
    assert new["weights_bytes_per_gpu"] == old["weights_bytes_per_gpu"]  # the arithmetic is the same either way


def test_estimate_notes_an_unpinned_release_of_a_gated_format(gsg):
    result = gsg("estimate", "-m", "openai/gpt-oss-20b", "--gpu-memory", "48GiB")
    assert result.code == 0
    assert ("note: GSG053 quantization-unloadable: backend_version is not pinned: whether the engine loads mxfp4 "
            "weights depends on the release GPUStack runs; vLLM loads them from 0.10.1 on") in result.out
    assert "GSG039" not in result.out  # the header's "(assumed)" says it
    assert "vLLM 0.11.0 (assumed)" in result.out


@pytest.mark.parametrize("version, kind", [("abc", "not a version gsg can read"), ("latest", "a moving tag")])
def test_estimate_notes_an_unreadable_backend_version_as_validate_does(gsg, tmp_path, version, kind):
    note = (f"backend_version '{version}' is not a pinned version ({kind}); gsg assumed 0.11.0, as for no version, "
            "for version-dependent arithmetic (CUDA-graph accounting, defaults), and GPUStack runs whatever it "
            "resolves to at deploy time")
    (tmp_path / "spec.yaml").write_text(
        "name: q\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
        f"gpu_selector:\n  gpu_ids: [gpu-b:cuda:1]\nbackend: vLLM\nbackend_version: {version}\n"
        "backend_parameters: [--max-model-len=4096, --max-num-seqs=16]\n")
    validated = gsg("validate", str(tmp_path / "spec.yaml"), "--fleet", str(FLEET), "-o", "json")
    assert [f["message"] for f in json.loads(validated.out)["findings"] if f["rule_id"] == "GSG039"] == [note]
    text = gsg("estimate", "-m", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory", "48GiB", "--backend-version", version,
               "--", "--max-model-len", "4096")
    assert text.code == 0 and f"note: GSG039 backend-version-unset: {note}\n" in text.out
    doc = json.loads(gsg("estimate", "-m", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory", "48GiB", "--backend-version",
                         version, "-o", "json", "--", "--max-model-len", "4096").out)
    assert f"GSG039 backend-version-unset: {note}" in doc["notes"]
    pinned = gsg("estimate", "-m", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory", "48GiB", "--backend-version", "0.11.0",
                 "--", "--max-model-len", "4096")
    assert "GSG039" not in pinned.out


def test_the_refusal_is_the_verdict_even_where_the_memory_also_fails(gsg):
    # the engine refuses the format before it sizes anything: a pool too small for the length comes second
    args = ("estimate", "-m", "openai/gpt-oss-20b", "--gpu-memory", "16GiB", "--gpu-name", "NVIDIA L4", "-o", "json")
    later = json.loads(gsg(*args, "--backend-version", "0.10.1", "--", "--max-model-len=131072").out)
    refused = json.loads(gsg(*args, "--backend-version", "0.10.0", "--", "--max-model-len=131072").out)
    assert later["verdict"] not in ("fits", "quantization-unloadable")  # the memory fails on its own
    assert refused["verdict"] == "quantization-unloadable"
