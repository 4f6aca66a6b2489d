"""GSG054: a weights format the engine refuses on the chosen GPU's compute capability (profiles.QUANT_MIN_CAPABILITY),
on the pure pipeline: per method, a GPU below the release's minimum and one exactly at it, at releases on both sides
of the row's boundary."""

import pytest
from rule_inputs import fleet, run_stages, vllm, worker

from gpustack_guard.core.findings import Severity
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.rules.memory import QUANT_GPU_UNSUPPORTED, QUANT_UNLOADABLE

QWEN_7B_CONFIG = {
    "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8"}
MODELOPT_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}
VQ = "vllm/model_executor/layers/quantization"
SQ = "python/sglang/srt/layers/quantization"
GPUS = {"t4": "Tesla T4", "v100": "Tesla V100-SXM2-32GB", "a100": "NVIDIA A100-SXM4-80GB",
        "a6000": "NVIDIA RTX A6000", "4090": "NVIDIA GeForce RTX 4090", "h100": "NVIDIA H100 80GB HBM3",
        "b200": "NVIDIA B200", "mystery": "Acme Tensor Card"}


def qwen(quantization: dict | None):
    config = QWEN_7B_CONFIG | ({"quantization_config": quantization} if quantization else {})
    return facts_from_config(config, "test:qwen-7b-quantised")


def deployment(family: str, version: str | None, gpu_ids: list[str]) -> dict:
    if family == "sglang":
        doc = {"name": "q", "source": "huggingface", "huggingface_repo_id": "org/model",
               "gpu_selector": {"gpu_ids": gpu_ids}, "backend": "SGLang", "backend_parameters": ["--context-length=8192"]}
    else:
        doc = vllm("q", "--max-model-len=8192", "--max-num-seqs=16", gpu_ids=gpu_ids)
        del doc["backend_version"]
    return doc | ({"backend_version": version} if version is not None else {})


def found(family: str, version: str | None, quantization: dict | None, *gpus: str, facts=None, rule=None):
    cards = [{"index": i, "name": GPUS[g], "memory": {"total": 200 * 2**30}} for i, g in enumerate(gpus)]
    ids = [f"w1:cuda:{i}" for i in range(len(gpus))]
    run = run_stages(deployment(family, version, ids), fleet=fleet(worker("w1", *cards)),
                     facts=facts or qwen(quantization))
    return [(f.severity, f.location.line, f.message, f.fix) for f in run.findings(rule or QUANT_GPU_UNSUPPORTED)]


def refusal(engine, version, weights, gpu, capability, config, minimum, source, later=None):
    fix = f"place it on GPUs of compute capability {minimum} or newer"
    if later:
        fix += f", or set backend_version to {later[0]} or later (minimum {later[1]})"
    return (Severity.ERROR, 4,
            f"{engine} {version} refuses {weights} weights on {gpu} (compute capability {capability}): {config} "
            f"needs compute capability {minimum} ({source}); the deployment fails at start-up",
            fix + f", or serve a checkpoint in a format {gpu} runs")


# (engine, checkpoint, release, GPU below its minimum, GPU exactly at it, the expected finding of the one below)
CASES = [
    ("vllm", FP8_BLOCK, "0.13.0", "t4", "a100",
     refusal("vLLM", "0.13.0", "fp8", "Tesla T4", "7.5", "Fp8Config", "8.0", f"{VQ}/fp8.py@v0.6.0 .. @v0.13.0",
             later=("0.14.0", "7.5"))),
    ("vllm", FP8_BLOCK, "0.14.0", "v100", "t4",
     refusal("vLLM", "0.14.0", "fp8", "Tesla V100-SXM2-32GB", "7.0", "Fp8Config", "7.5",
             f"{VQ}/fp8.py@v0.14.0 .. @v0.34.0")),
    ("vllm", MODELOPT_FP8, "0.26.0", "a6000", "4090",
     refusal("vLLM", "0.26.0", "fp8 (modelopt)", "NVIDIA RTX A6000", "8.6", "ModelOptFp8Config", "8.9",
             f"{VQ}/modelopt.py@v0.8.5 .. @v0.26.0", later=("0.27.0", "8.0"))),
    ("vllm", MODELOPT_FP8, "0.27.0", "t4", "a100",
     refusal("vLLM", "0.27.0", "fp8 (modelopt)", "Tesla T4", "7.5", "ModelOptFp8Config", "8.0",
             f"{VQ}/modelopt.py@v0.27.0 .. @v0.34.0")),
    ("sglang", MODELOPT_NVFP4, "0.5.12", "h100", "b200",
     refusal("SGLang", "0.5.12", "nvfp4 (modelopt)", "NVIDIA H100 80GB HBM3", "9.0", "ModelOptFp4Config", "10.0",
             f"{SQ}/modelopt_quant.py@v0.4.6 .. @v0.5.12.post1", later=("0.5.13", "8.0"))),
    ("sglang", MODELOPT_NVFP4, "0.5.13", "t4", "a100",
     refusal("SGLang", "0.5.13", "nvfp4 (modelopt)", "Tesla T4", "7.5", "ModelOptFp4Config", "8.0",
             f"{SQ}/modelopt_quant.py@v0.5.13 .. @v0.5.23")),
]


@pytest.mark.parametrize("family, quantization, version, below, at, expected", CASES,
                         ids=[f"{c[0]}-{c[1]['quant_method']}-{c[2]}-{c[3]}" for c in CASES])
def test_a_gpu_below_the_minimum_is_an_error_and_one_at_it_is_silent(family, quantization, version, below, at,
                                                                      expected):
    assert found(family, version, quantization, below) == [expected]
    assert found(family, version, quantization, at) == []
    assert found(family, version, None, below) == []  # the same model unquantised runs anywhere


def test_each_gpu_model_of_a_mixed_placement_is_named_once():
    messages = [m[2].split(":")[0] for m in found("vllm", "0.26.0", MODELOPT_FP8, "a6000", "a100", "4090", "a6000")]
    assert messages == ["vLLM 0.26.0 refuses fp8 (modelopt) weights on NVIDIA RTX A6000 (compute capability 8.6)",
                        "vLLM 0.26.0 refuses fp8 (modelopt) weights on NVIDIA A100-SXM4-80GB (compute capability "
                        "8.0)"]


@pytest.mark.parametrize("version", ["0.11.0", None, "latest"])
def test_an_unknown_gpu_name_says_nothing(version):
    assert found("vllm", version, MODELOPT_FP8, "mystery") == []


@pytest.mark.parametrize("version", [None, "latest"])
def test_an_unpinned_release_is_an_error_only_where_every_release_refuses(version):
    assert found("vllm", version, {"quant_method": "mxfp4"}, "t4") == [(
        Severity.ERROR, 4, "vLLM refuses mxfp4 weights on Tesla T4 (compute capability 7.5) at every release read: "
        f"Mxfp4Config needs compute capability 8.0 or more ({VQ}/mxfp4.py@v0.10.1 .. @v0.34.0); the deployment "
        "fails at start-up", "place it on GPUs of compute capability 8.0 or newer, or serve a checkpoint in a format "
        "Tesla T4 runs")]
    # fp8 on a T4: refused before 0.14.0, run from it; the release is GSG039's / GSG053's business, not an error
    assert found("vllm", version, FP8_BLOCK, "t4") == []


@pytest.mark.parametrize("quantization, gpu", [({"quant_method": "awq", "bits": 4, "group_size": 128}, "v100"),
                                               ({"quant_method": "bitsandbytes", "load_in_4bit": True}, None)])
def test_awq_asks_turing_and_bitsandbytes_volta(quantization, gpu):
    """AWQ's own config asks 7.5 (a V100 is refused; vLLM's awq_marlin needs 8.0 but is only chosen where it
    runs, so a T4 meets AWQ's 7.5); bitsandbytes asks 7.0 (a V100 runs it)."""
    if gpu:
        assert [m[2].split(":")[0] for m in found("vllm", "0.11.0", quantization, gpu)] == [
            "vLLM 0.11.0 refuses awq weights on Tesla V100-SXM2-32GB (compute capability 7.0)"]
        assert found("vllm", "0.11.0", quantization, "t4") == []
    else:
        assert found("vllm", "0.11.0", quantization, "v100") == []


def test_a_release_that_cannot_load_the_format_is_left_to_gsg053():
    assert found("vllm", "0.10.0", {"quant_method": "mxfp4"}, "t4") == []
    assert [m[0] for m in found("vllm", "0.10.0", {"quant_method": "mxfp4"}, "t4", rule=QUANT_UNLOADABLE)] == [
        Severity.ERROR]
    assert [m[0] for m in found("vllm", "0.10.1", {"quant_method": "mxfp4"}, "t4")] == [Severity.ERROR]
