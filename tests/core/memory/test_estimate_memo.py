"""The memory estimate is memoised per distinct input (engine._estimate, issue 34): specs that repeat a model,
GPU, release, arguments and policy share one Estimate; a spec differing in any one input gets its own."""

from __future__ import annotations

import dataclasses

import pytest

from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

FACTS = ModelFacts(architecture="LlamaForCausalLM", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                   num_key_value_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256,
                   max_position_embeddings=131072, dtype="bfloat16", source="test:llama-8b")
A6000 = (49140 * MiB, "NVIDIA RTX A6000")
BASE = {"family": "vllm", "facts": FACTS, "gpus": [A6000], "flags": {"max-model-len": "8192"}, "version": "0.11.0",
        "policy": Policy(), "env": {}, "foreign": 0}


def estimate(**changed):
    return engine.estimate(**(BASE | changed))


def test_identical_inputs_share_one_estimate_and_irrelevant_env_does_not_split_them():
    assert estimate() is estimate()
    assert estimate(flags=dict(BASE["flags"])) is estimate()  # an equal dict, not the same one
    assert estimate(env={"HF_HOME": "/data", "NCCL_DEBUG": "INFO"}) is estimate()  # moves no memory


@pytest.mark.parametrize("changed", [
    {"family": "sglang", "flags": {"context-length": "8192"}},
    {"facts": dataclasses.replace(FACTS, num_key_value_heads=4)},
    {"facts": dataclasses.replace(FACTS, vocab_size=150000)},
    {"gpus": [(24564 * MiB, "NVIDIA GeForce RTX 4090")]},
    {"gpus": [(40960 * MiB, "NVIDIA RTX A6000")]},  # the same name, a different total
    {"gpus": [A6000, (24564 * MiB, "NVIDIA GeForce RTX 4090")], "flags": {"max-model-len": "8192",
                                                                           "tensor-parallel-size": "2"}},
    {"flags": {"max-model-len": "4096"}},
    {"flags": {"max-model-len": "8192", "gpu-memory-utilization": "0.8"}},
    {"flags": {"max-model-len": "8192", "kv-cache-dtype": "fp8"}},
    {"version": "0.8.5"},
    {"policy": Policy(cuda_graph_reserve=2048 * MiB)},
    {"policy": Policy(activation_margin=0.5)},
    {"version": "0.8.5", "env": {"VLLM_USE_V1": "0"}},  # beside version 0.8.5 alone (V1 by default there)
], ids=lambda c: ",".join(c))
def test_a_spec_differing_in_one_input_gets_its_own_result(changed):
    # the neighbour: the base spec with every other input of this case (tensor parallel, the release) as given
    neighbour = {k: v for k, v in changed.items() if k in ("flags", "version") and len(changed) > 1}
    if "flags" in neighbour and "gpus" in changed:
        neighbour["gpus"] = [A6000, A6000]
    own, other = estimate(**changed), estimate(**neighbour)
    assert own is not other
    assert own.as_json() != other.as_json()


def test_foreign_memory_is_part_of_the_key_for_sglang():
    sglang = {"family": "sglang", "flags": {"context-length": "8192"}}
    crowded = estimate(**sglang, foreign=8192 * MiB)
    assert crowded is not estimate(**sglang)
    assert crowded.kv_cache < estimate(**sglang).kv_cache
