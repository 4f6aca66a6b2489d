"""GSG053: an engine release that cannot load the checkpoint's weights format (profiles.QUANT_LOADERS), on the
pure pipeline; the versions on both sides of each row's boundary."""

import pytest
from rule_inputs import FLEET_1, run_stages, vllm

from gpustack_guard.core.findings import Severity
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.rules.memory import QUANT_UNLOADABLE

QWEN_7B_CONFIG = {
    "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
CT_MXFP4 = {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized", "config_groups": {"group_0": {
    "targets": ["Linear"], "weights": {"type": "float", "num_bits": 4, "strategy": "group", "group_size": 32,
                                       "symmetric": True}}}}
CT_NVFP4 = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {"group_0": {
    "targets": ["Linear"], "weights": {"type": "float", "num_bits": 4, "strategy": "tensor_group", "group_size": 16,
                                       "symmetric": True}}}}
MODELOPT_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}


def qwen(quantization: dict | None):
    config = QWEN_7B_CONFIG | ({"quantization_config": quantization} if quantization else {})
    return facts_from_config(config, "test:qwen-7b-quantised")


def sglang(name: str, version: str | None) -> dict:
    doc = {"name": name, "source": "huggingface", "huggingface_repo_id": "org/model",
           "gpu_selector": {"gpu_ids": ["w1:cuda:0"]}, "backend": "SGLang",
           "backend_parameters": ["--context-length=8192"]}
    return doc | ({"backend_version": version} if version is not None else {})


def deployment(family: str, version: str | None) -> dict:
    if family == "sglang":
        return sglang("q", version)
    doc = vllm("q", "--max-model-len=8192", "--max-num-seqs=16", gpu_ids=["w1:cuda:0"])
    if version is None:
        del doc["backend_version"]
        return doc
    return doc | {"backend_version": version}


def found(family: str, version: str | None, quantization: dict | None, facts=None):
    run = run_stages(deployment(family, version), fleet=FLEET_1, facts=facts or qwen(quantization))
    return [(f.severity, f.message, f.fix) for f in run.findings(QUANT_UNLOADABLE)]


VLLM_INIT = "vllm/model_executor/layers/quantization/__init__.py"
VLLM_CT = "vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
SGL_INIT = "python/sglang/srt/layers/quantization/__init__.py"

# (engine, checkpoint, last release that cannot load it, first that can, the message's weights and releases)
BOUNDARIES = [
    ("vllm", {"quant_method": "mxfp4"}, "0.10.0", "0.10.1", "mxfp4",
     f"from 0.10.1 on ({VLLM_INIT}@v0.10.1 'mxfp4' (Mxfp4Config); absent @v0.10.0)"),
    ("vllm", CT_MXFP4, "0.13.0", "0.14.0", "mxfp4_dense (compressed-tensors)",
     f"from 0.14.0 on ({VLLM_CT}@v0.14.0 _is_mxfp4 (CompressedTensorsW4A16Mxfp4); absent @v0.13.0)"),
    ("vllm", CT_NVFP4, "0.8.5", "0.9.0", "nvfp4 (compressed-tensors)",
     f"from 0.9.0 on ({VLLM_CT}@v0.9.0 _is_fp4a16_nvfp4 (W4A4 _is_fp4a4_nvfp4 from @v0.9.1); absent @v0.8.5)"),
    ("vllm", MODELOPT_NVFP4, "0.7.3", "0.8.0", "nvfp4 (modelopt)",
     f"from 0.8.0 on ({VLLM_INIT}@v0.8.0 'nvfp4' (ModelOptNvFp4Config, 'modelopt_fp4' from @v0.9.0); absent "
     "@v0.7.3)"),
    ("sglang", {"quant_method": "mxfp4"}, "0.4.10", "0.5.0rc0", "mxfp4",
     f"from 0.5.0rc0 on ({SGL_INIT}@v0.5.0rc0 'mxfp4' (Mxfp4Config, added on CUDA); absent @v0.4.10)"),
    ("sglang", MODELOPT_NVFP4, "0.4.5", "0.4.6", "nvfp4 (modelopt)",
     f"from 0.4.6 on ({SGL_INIT}@v0.4.6 'modelopt_fp4' (ModelOptFp4Config); absent @v0.4.5)"),
    ("sglang", {"quant_method": "modelopt", "quant_algo": "FP8"}, "0.4.1", "0.4.2", "fp8 (modelopt)",
     f"from 0.4.2 on ({SGL_INIT}@v0.4.2 'modelopt'; absent @v0.4.1)"),
]


@pytest.mark.parametrize("family, quantization, refused, loaded, weights, releases", BOUNDARIES,
                         ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_a_release_before_the_loader_is_an_error_and_the_first_with_it_is_silent(family, quantization, refused,
                                                                                   loaded, weights, releases):
    engine = {"vllm": "vLLM", "sglang": "SGLang"}[family]
    since = releases.split(" ")[1]
    assert found(family, refused, quantization) == [(
        Severity.ERROR, f"{engine} {refused} cannot load {weights} weights: {engine} loads them {releases}; the "
        "deployment fails at start-up", f"set backend_version to {since} or later, or serve a checkpoint this "
        "release loads")]
    assert found(family, loaded, quantization) == []
    assert found(family, "99.0.0", quantization) == []


@pytest.mark.parametrize("quant_method, last, removed, releases", [
    ("bitsandbytes", "0.27.0", "0.28.0",
     f"before 0.28.0 ({VLLM_INIT}@v0.6.0 .. @v0.27.0 'bitsandbytes'; absent @v0.28.0 (bitsandbytes.py gone))"),
    ("gguf", "0.23.0", "0.24.0", f"before 0.24.0 ({VLLM_INIT}@v0.6.0 .. @v0.23.0 'gguf'; absent @v0.24.0 (gguf.py "
                                 "gone))"),
])
def test_a_vllm_release_after_the_loader_was_removed_is_an_error(quant_method, last, removed, releases):
    facts = qwen({"quant_method": quant_method, "load_in_4bit": True}) if quant_method == "bitsandbytes" else \
        qwen(None).merged({"quant_method": "gguf:q4_k_m"})
    assert found("vllm", last, None, facts) == []
    assert found("vllm", removed, None, facts) == [(
        Severity.ERROR, f"vLLM {removed} cannot load {quant_method} weights: vLLM loads them {releases}; the "
        "deployment fails at start-up", f"set backend_version to a release before {removed}, or serve a checkpoint "
        "this release loads")]


@pytest.mark.parametrize("version, said", [(None, "is not pinned"), ("abc", "'abc' names no release"),
                                           ("latest", "'latest' names no release"), ("", "is not pinned")])
def test_an_unknown_release_is_a_note_for_a_format_some_releases_cannot_load(version, said):
    assert found("vllm", version, {"quant_method": "mxfp4"}) == [(
        Severity.INFO, f"backend_version {said}: whether the engine loads mxfp4 weights depends on the release "
        f"GPUStack runs; vLLM loads them from 0.10.1 on ({VLLM_INIT}@v0.10.1 'mxfp4' (Mxfp4Config); absent "
        "@v0.10.0)", "set backend_version to 0.10.1 or later")]
    assert [m[0] for m in found("sglang", version, MODELOPT_NVFP4)] == [Severity.INFO]


@pytest.mark.parametrize("quantization", [None, {"quant_method": "awq", "bits": 4, "group_size": 128},
                                          {"quant_method": "gptq", "bits": 4, "group_size": 128},
                                          {"quant_method": "fp8"}])
@pytest.mark.parametrize("family, version", [("vllm", "0.6.0"), ("vllm", None), ("sglang", "0.4.0"),
                                             ("sglang", "junk")])
def test_formats_every_release_read_loads_say_nothing(quantization, family, version):
    assert found(family, version, quantization) == []


def test_a_stated_method_takes_the_most_permissive_loader():
    """guard.model.quantization names gsg's method, not the checkpoint's loader: nvfp4 is an error only where no
    loader of it exists (vLLM 0.7.3), not at 0.8.0 where ModelOpt's loads but compressed-tensors' does not."""
    stated = qwen(None).merged({"quant_method": "nvfp4", "quant_bits": 4, "quant_group_size": 16})
    assert stated.quant_format is None
    assert [m[1].split(":")[0] for m in found("vllm", "0.7.3", None, stated)] == [
        "vLLM 0.7.3 cannot load nvfp4 weights"]
    assert found("vllm", "0.8.0", None, stated) == []
    assert [m[1].split(":")[0] for m in found("vllm", "0.8.0", CT_NVFP4)] == [
        "vLLM 0.8.0 cannot load nvfp4 (compressed-tensors) weights"]


def test_the_checkpoint_format_is_read_from_the_config():
    assert qwen(CT_MXFP4).quant_format == "compressed-tensors"
    assert (qwen(MODELOPT_NVFP4).quant_method, qwen(MODELOPT_NVFP4).quant_format) == ("nvfp4", "modelopt")
    assert qwen(None).quant_format is None
