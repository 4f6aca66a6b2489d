"""gsg advise --observed FILE (issue 36): the engine's own KV pool (a verify report or recorded vector) scales the
candidates of the configuration it was observed in, by observed / estimated; said in the text and the JSON."""

import json

import pytest
import yaml
from support import FLEET, REPO

# vLLM 0.8.5 on an L40S: the engine allocated 158,656 tokens where gsg estimates 192,336 (x 0.8249)
VECTOR = REPO / "tests" / "fixtures" / "vectors" / "Llama-3.1-8B-Instruct-vllm-0.8.5-2b4c27bb1487.json"
SGLANG_VECTOR = REPO / "tests" / "fixtures" / "vectors" / "Qwen2.5-7B-sglang-0.5.5-580adcc2492e.json"
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
L40S = ("--gpu-memory", "47663399567B", "--gpus", "1")


@pytest.fixture
def long11(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump({"name": "long", "prompt_tokens": {"p50": 16000, "p95": 18000, "p99": 19000},
                                    "output_tokens": {"p50": 500, "p95": 900, "p99": 1000}, "concurrency": 11}))
    return str(path)


def advise(gsg, *args):
    result = gsg("advise", "-m", LLAMA_8B, *L40S, *args)
    return result


def advise_json(gsg, *args):
    result = advise(gsg, "-o", "json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_the_observed_configurations_pool_is_scaled_by_observed_over_estimated(gsg):
    chat = str(REPO / "workloads" / "chat.yaml")
    before = advise_json(gsg, "-w", chat)["options"][0]["deployments"][0]
    after = advise_json(gsg, "-w", chat, "--observed", str(VECTOR))
    deployment = after["options"][0]["deployments"][0]
    assert (before["kv_capacity_tokens"], before["kv_cache_dtype"], before["observed_kv"]) == (210736, "auto", None)
    # 210,736 x 158,656 / 188,240 = 177,616.6: the pool the engine would really give this candidate
    assert deployment["kv_capacity_tokens"] == 177616 and deployment["kv_cache_dtype"] == "auto"
    assert deployment["observed_kv"] == {"scale": 0.8428, "estimated_kv_capacity_tokens": 210736,
                                         "kv_capacity_tokens": 177616}
    observed = after["observed"]
    assert {k: observed[k] for k in ("kind", "backend", "model", "observed_kv_capacity_tokens",
                                     "estimated_kv_capacity_tokens", "scale", "applied", "tensor_parallel_size",
                                     "kv_cache_dtype", "scaled_deployments")} == {
        "kind": "recorded vector", "backend": "vLLM", "model": LLAMA_8B, "observed_kv_capacity_tokens": 158656,
        "estimated_kv_capacity_tokens": 188240, "scale": 0.8428, "applied": True, "tensor_parallel_size": 1,
        "kv_cache_dtype": "auto", "scaled_deployments": ["llama-3.1-8b-instruct"]}
    text = advise(gsg, "-w", chat, "--observed", str(VECTOR)).out.splitlines()
    assert text[1] == (f"observed: the engine allocated 158,656 KV tokens where gsg estimated 188,240 (recorded "
                       f"vector {VECTOR}: vLLM, tensor parallel 1, KV auto): pools of that configuration scaled by "
                       "0.843")
    assert "    observed: KV pool 177,616 tokens per replica: gsg's 210,736 scaled by 0.843, as the engine " \
           "allocated (--observed)" in text


@pytest.mark.parametrize("workload", ["long", "chat"])
def test_a_smaller_observed_pool_changes_the_advice_and_the_specs_still_validate(gsg, long11, tmp_path, workload):
    # on gpu-a's A6000 gsg's auto pool holds 11 requests of 20,000 tokens (242,080 tokens); the engine's would hold
    # 204,034: 10 of them, so the fp8 candidate (not the observed configuration: its own estimate) holds the peak
    files = {"long": long11, "chat": str(REPO / "workloads" / "chat.yaml")}
    on_a6000 = ("-m", LLAMA_8B, "--fleet", str(FLEET), "--gpus", "gpu-a:cuda:0", "-w", files[workload])
    before = json.loads(gsg("advise", "-o", "json", *on_a6000).out)["options"][0]["deployments"][0]
    result = gsg("advise", "-o", "json", *on_a6000, "--observed", str(VECTOR), "--emit-specs", str(tmp_path / "out"))
    assert result.code == 0, result.err
    after = json.loads(result.out)
    deployment = after["options"][0]["deployments"][0]
    if workload == "long":
        assert (before["kv_cache_dtype"], before["kv_capacity_tokens"], before["max_num_seqs"]) == ("auto", 242080, 11)
        assert (deployment["kv_cache_dtype"], deployment["kv_capacity_tokens"], deployment["max_num_seqs"]) == \
            ("fp8", 484160, 11)
        assert deployment["observed_kv"] is None
        assert deployment["kv_cache_dtype_reason"] == ("fp8 KV because auto holds 204,034 tokens, 10 sequences at "
                                                       "once, against a peak of 220,000 tokens")
        assert after["observed"]["scaled_deployments"] == [] and after["observed"]["scaled_candidates"] >= 1
    else:  # the scaled auto candidate is the one emitted
        assert deployment["observed_kv"]["estimated_kv_capacity_tokens"] == before["kv_capacity_tokens"]
        assert deployment["kv_capacity_tokens"] == int(before["kv_capacity_tokens"] * 158656 / 188240)
    checked = gsg("validate", str(tmp_path / "out"), "--fleet", str(FLEET), "--fail-level", "warning")
    assert checked.code == 0, checked.out + checked.err


def test_an_observed_pool_of_another_configuration_scales_nothing(gsg, tmp_path):
    other = json.loads(VECTOR.read_text())
    other["backend_args"] = ["--max-model-len=32768", "--tensor-parallel-size=2"]  # two GPUs: not this candidate
    path = tmp_path / "tp2.json"
    path.write_text(json.dumps(other))
    doc = advise_json(gsg, "-w", str(REPO / "workloads" / "chat.yaml"), "--observed", str(path))
    assert doc["options"][0]["deployments"][0]["kv_capacity_tokens"] == 210736
    assert (doc["observed"]["tensor_parallel_size"], doc["observed"]["scaled_candidates"]) == (2, 0)


def test_a_larger_observed_pool_is_said_but_never_raises_the_flags(gsg):
    result = gsg("advise", "-o", "json", "-m", "Qwen/Qwen2.5-7B", "--gpu-memory", "48GiB", "--gpus", "1",
                 "--backend", "SGLang", "--backend-version", "0.5.5", "-w", str(REPO / "workloads" / "chat.yaml"),
                 "--observed", str(SGLANG_VECTOR))
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert (doc["observed"]["scale"], doc["observed"]["applied"], doc["observed"]["scaled_candidates"]) == \
        (1.3195, False, 0)
    assert doc["observed"]["summary"].endswith(": not used to raise any pool (validate prices the emitted specs by "
                                               "its own estimate; the extra is headroom)")


def _copy(tmp_path, change) -> str:
    doc = json.loads(VECTOR.read_text())
    change(doc)
    path = tmp_path / "observed.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(engine="sglang"), "records a SGLang run; this advice is for vLLM"),
    (lambda d: d.update(model="Qwen/Qwen2.5-7B"), f"records model Qwen/Qwen2.5-7B, not {LLAMA_8B}"),
    (lambda d: d.update(estimated=None), "holds no estimated kv_capacity_tokens to hold the engine's pool against "
                                         "(gsg could not estimate the logged run: see its reasons)"),
    (lambda d: d["observed"].pop("kv_capacity_tokens"), "holds no observed kv_capacity_tokens (give the JSON of `gsg "
                                                        "verify --log FILE -o json` or a vector `gsg verify --record` "
                                                        "wrote, of an engine that started)"),
    (lambda d: d.update(engine="tgi"), "names no engine gsg advises (engine 'tgi')"),
    (lambda d: d.update(backend_args="--max-model-len=1"), "'backend_args' must be a list of strings"),
])
def test_an_observation_that_cannot_scale_this_advice_is_one_line(gsg, tmp_path, change, message):
    path = _copy(tmp_path, change)
    result = advise(gsg, "-w", str(REPO / "workloads" / "chat.yaml"), "--observed", path)
    assert (result.code, result.out, result.err) == (1, "", f"gsg: error: {path}: {message}\n")
