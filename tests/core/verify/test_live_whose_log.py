"""verify SPECS says when an instance's log is another model's (live.model_mismatch) and when it holds no KV pool to
judge (live.nothing_to_compare): the names a model is known by in a log (a repo id, GPUStack's download folder, the
hub cache, ModelScope's folder, the deployment's name) are this model; a GGUF file name is never judged."""

from types import SimpleNamespace

import pytest

from gpustack_guard.core.verify import live as L
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import ObservedLog, parse_log


def rendered(source_id: str | None, name: str = "chat", gguf: bool = False):
    return SimpleNamespace(spec=SimpleNamespace(source_id=source_id, name=name, is_gguf=gguf))


@pytest.mark.parametrize("source_id, model", [
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
    ("Qwen/Qwen2.5-7B-Instruct", "/var/lib/gpustack/cache/model_scope/Qwen/Qwen2___5-7B-Instruct"),  # ModelScope
    ("Qwen/Qwen2.5-7B-Instruct", "/root/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/a1b2"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct"),
    ("Qwen/Qwen2.5-7B-Instruct", "chat"),  # the deployment's name, as a served model name
    ("/srv/models/qwen-custom", "/srv/models/qwen-custom/"),  # a local_path source
    ("Qwen/Qwen2.5-7B-Instruct-GGUF", "/cache/qwen2.5-7b-instruct-q4_k_m.gguf"),  # a GGUF file: not judged
    ("Qwen/Qwen2.5-7B-Instruct", None),  # the log names no model
    (None, "meta-llama/Llama-3.1-8B"),  # the spec names none
])
def test_a_log_of_this_model_is_not_another_models(source_id, model):
    assert L.model_mismatch(rendered(source_id), ObservedLog(engine=P.SGLANG, model=model)) is None


def test_a_gguf_spec_or_a_llamacpp_log_is_never_held_against_the_log_model():
    log = ObservedLog(engine=P.VLLM, model="/models/other")
    assert L.model_mismatch(rendered("Qwen/Qwen2.5-7B-Instruct-GGUF", gguf=True), log) is None
    assert L.model_mismatch(rendered("Qwen/Qwen2.5-7B-Instruct-GGUF"), log) is not None  # the neighbour
    ollama = ObservedLog(engine=P.LLAMACPP, model="/root/.ollama/models/blobs/sha256-6a0746a1ec1aef3e7ec53868f220ff")
    assert L.model_mismatch(rendered("Qwen/Qwen2.5-7B-Instruct-GGUF"), ollama) is None


@pytest.mark.parametrize("model", [
    "meta-llama/Llama-3.1-8B-Instruct",
    "/var/lib/gpustack/cache/model_scope/Qwen/Qwen2___5-72B-Instruct",  # the same family, another size
    "/data/hub/models--Qwen--Qwen2.5-7B/snapshots/a1b2",  # the base model, not the instruct one
])
def test_a_log_of_another_model_is_said(model):
    said = L.model_mismatch(rendered("Qwen/Qwen2.5-7B-Instruct"), ObservedLog(engine=P.VLLM, model=model))
    assert said == (f"the log is of model '{model}', but the spec deploys 'Qwen/Qwen2.5-7B-Instruct': another "
                    "model's log (a reused instance id, or a log the server mixed up), not compared")


def test_an_sglang_log_names_its_model_path_and_another_one_is_said():
    line = ("[2025-01-01 10:00:00] server_args=ServerArgs(model_path='/var/lib/gpustack/cache/huggingface/Qwen/"
            "Qwen3-8B', tokenizer_path='Qwen/Qwen3-8B', tp_size=1)")
    log, _ = parse_log([line])
    assert log.model == "/var/lib/gpustack/cache/huggingface/Qwen/Qwen3-8B"
    assert L.model_mismatch(rendered("Qwen/Qwen3-8B"), log) is None
    assert L.model_mismatch(rendered("Qwen/Qwen3-32B"), log).startswith(
        "the log is of model '/var/lib/gpustack/cache/huggingface/Qwen/Qwen3-8B', but the spec deploys 'Qwen/Qwen3-32B'")


def test_a_pool_in_any_form_is_something_to_compare():
    assert L.nothing_to_compare(ObservedLog(engine=P.VLLM, engine_terms={P.KV_TOKENS: 1000})) is None
    assert L.nothing_to_compare(ObservedLog(engine=P.LLAMACPP, ranks={"CUDA0": {P.KV_CACHE: 2**30}})) is None
    assert L.nothing_to_compare(ObservedLog(engine=P.VLLM, ranks={"0": {P.GPU_BLOCKS: 512}})) is None
    assert L.nothing_to_compare(ObservedLog(engine=P.VLLM, failure="CUDA out of memory")) == (
        "the engine's start-up failed before it logged a KV pool (CUDA out of memory): nothing to compare")
    assert L.nothing_to_compare(ObservedLog(engine=P.VLLM, engine_terms={P.WEIGHTS: 2**30})) == (
        "the log stops before the engine logged its KV pool (still starting, or the start-up part was cut): nothing "
        "to compare")
