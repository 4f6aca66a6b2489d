"""Estimate.as_json is built once per estimate and copied per call (issue 34): every memory finding carries its
estimate's JSON, and specs with the same inputs share one Estimate. Each call must equal building it anew and
hand out containers of its own."""

from __future__ import annotations

import dataclasses

import pytest
from support.json_walk import containers

from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import MiB

FACTS = ModelFacts(architecture="LlamaForCausalLM", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
                   num_key_value_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256,
                   max_position_embeddings=131072, dtype="bfloat16", source="test:llama-8b")
A6000 = (49140 * MiB, "NVIDIA RTX A6000")


def _vllm() -> Estimate:
    return engine.estimate("vllm", FACTS, [A6000], {"max-model-len": "8192"}, "0.11.0", Policy())


def _sglang() -> Estimate:
    return engine.estimate("sglang", FACTS, [A6000], {"context-length": "8192"}, "0.5.5", Policy())


def _llamacpp_shaped() -> Estimate:
    # the fields only a llama.cpp estimate fills: its compute buffers per device, no dtype
    return dataclasses.replace(_vllm(), engine="llama.cpp", compute_buffer_per_gpu=(300 * MiB, 200 * MiB),
                               dtype="", kv_cache_dtype="", notes=("offloaded 33/33 layers",))


ESTIMATES = {"vllm": _vllm, "sglang": _sglang, "llamacpp": _llamacpp_shaped}


@pytest.mark.parametrize("make", ESTIMATES.values(), ids=list(ESTIMATES))
def test_every_call_equals_building_the_json_anew(make):
    est = make()
    long_way = Estimate._json(est)  # what as_json built on every call before the memo
    assert est.as_json() == long_way
    assert est.as_json() == long_way  # the kept copy, second time round
    assert list(est.as_json()) == list(long_way)  # same key order: the JSON output is byte-identical


@pytest.mark.parametrize("make", ESTIMATES.values(), ids=list(ESTIMATES))
def test_a_caller_changing_its_copy_changes_no_other_callers(make):
    est = make()
    first = est.as_json()
    untouched = Estimate._json(est)
    first["verdict"] = "changed"
    first["breakdown"]["weights"] = -1
    first["budget"][0]["value"] = -1
    first["budget"].append({"term": "added"})
    first["notes"].append("added")
    if "compute_buffer_bytes_per_gpu" in first:
        first["compute_buffer_bytes_per_gpu"].append(-1)
    assert est.as_json() == untouched


def test_the_json_is_kept_per_estimate_not_shared_between_them():
    vllm, sglang = _vllm(), _sglang()
    assert vllm.as_json()["engine"] == "vLLM"
    assert sglang.as_json()["engine"] == "SGLang"
    changed = dataclasses.replace(vllm, max_num_seqs=vllm.max_num_seqs + 1)  # a new estimate, built anew
    assert changed.as_json()["max_num_seqs"] == vllm.as_json()["max_num_seqs"] + 1
    assert changed.as_json()["budget"] == vllm.as_json()["budget"]


@pytest.mark.parametrize("make", ESTIMATES.values(), ids=list(ESTIMATES))
def test_extra_is_handed_out_as_a_copy_at_every_depth(make):
    # extra holds nested dicts and lists (per_device, fit, encoder_profile): a caller changing its copy changes
    # neither the estimate nor what the next caller gets
    est = dataclasses.replace(make(), extra={"per_device": [{"device": "CUDA0", "layers": 33}], "fit": {"n": [1]},
                                             "engine_generation": "V1"})
    first = est.as_json()
    first["extra"]["per_device"][0]["layers"] = -1
    first["extra"]["per_device"].append({})
    first["extra"]["fit"]["n"].append(2)
    first["extra"]["added"] = True
    assert est.extra == {"per_device": [{"device": "CUDA0", "layers": 33}], "fit": {"n": [1]},
                         "engine_generation": "V1"}
    assert est.as_json() == Estimate._json(est) and est.as_json()["extra"] == est.extra



@pytest.mark.parametrize("make", ESTIMATES.values(), ids=list(ESTIMATES))
def test_no_container_handed_out_is_one_the_estimate_keeps(make):
    # whatever field _json gains later: every dict and list of a call is new, none is the kept JSON's or extra's
    est = dataclasses.replace(make(), extra={"per_device": [{"device": "CUDA0"}], "fit": {"n": [1]}})
    est.as_json()
    kept = {id(c) for c in containers(est.__dict__["_kept_json"], [])} | {id(c) for c in containers(est.extra, [])}
    handed = containers(est.as_json(), [])
    assert len(handed) > 5 and not [c for c in handed if id(c) in kept]
