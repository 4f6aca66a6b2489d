"""gsg verify --log FILE --record DIR: one vector per log, a safe collision-free name, never over another file,
secrets stripped, the source kept; and the vector format read back (facts round trip, refusals by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack_guard.adapters.files.vectors import load_observed_kv, load_vector
from gpustack_guard.commands.verify_record import replay
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.verify import vector as V

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
RTX3090 = str(LOGS / "vllm/v0.6.4-llama31-8b-rtx3090-20k.log")
ARGS = ("-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version", "0.6.4")


def recorded(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def test_record_writes_one_vector_named_from_model_engine_and_version(gsg, tmp_path):
    result = gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path / "vectors"))
    assert result.code == 0, result.err
    [path] = recorded(tmp_path / "vectors")
    assert path.name.startswith("Llama-3.1-8B-Instruct-vllm-0.6.4-") and len(path.stem.rsplit("-", 1)[1]) == 12
    assert result.err == f"gsg: recorded {path}\n"
    assert result.out.splitlines()[-1] == "result: pass"  # the report is printed as without --record
    vector = load_vector(path)
    assert vector["source"] == "https://github.com/vllm-project/vllm/issues/10517"  # the log's own source line
    assert vector["backend_args"] == ["--gpu-memory-utilization=0.9", "--max-model-len=20000"]
    assert vector["gpu"] == {"name": "", "memory_bytes": 25_318_832_210}
    assert (vector["observed"]["kv_capacity_tokens"], vector["estimated"]["kv_capacity_tokens"]) == (31_232, 31_248)
    assert vector["model_facts"]["num_key_value_heads"] == 8 and vector["started"] is True
    assert list(tmp_path.joinpath("vectors").iterdir()) == [path]  # no temporary file left behind


def test_recording_the_same_log_again_adds_nothing_and_another_log_adds_a_file(gsg, tmp_path):
    gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path))
    [first] = recorded(tmp_path)
    again = gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path))
    assert again.err == f"gsg: {first} already holds this vector\n" and recorded(tmp_path) == [first]
    # the same model, engine and version from another log: a second file, never over the first
    gsg("verify", "--log", str(LOGS / "vllm/v0.6.4-llama31-8b-rtx3090-29k-refused.log"), *ARGS,
        "--record", str(tmp_path))
    assert len(recorded(tmp_path)) == 2
    assert {p.name.rsplit("-", 1)[0] for p in recorded(tmp_path)} == {"Llama-3.1-8B-Instruct-vllm-0.6.4"}


def test_a_different_file_under_the_vector_name_is_never_overwritten(gsg, tmp_path):
    gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path))
    [path] = recorded(tmp_path)
    path.write_text("{}\n")
    result = gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path))
    assert (result.code, result.out) == (1, "")
    assert result.err == (f"gsg: error: {path}: exists and differs from this vector; nothing written (remove it or "
                          f"record into another folder)\n")
    assert path.read_text() == "{}\n"


@pytest.mark.parametrize("args,message", [
    (("--source", "https://x"), "gsg: error: --source names where a recorded log is from: it needs --record DIR"),
    (("--record", "{tmp}/file.txt"), "gsg: error: {tmp}/file.txt: --record must name a folder, not a file"),
    (("--record", "{tmp}", "--source", "  "), "gsg: error: --source is empty: give a URL or a short text naming "
                                              "where the log is from"),
])
def test_record_options_refused_in_one_line(gsg, tmp_path, args, message):
    (tmp_path / "file.txt").write_text("x")
    result = gsg("verify", "--log", RTX3090, *ARGS, *(a.format(tmp=tmp_path) for a in args))
    assert (result.code, result.out, result.err) == (1, "", message.format(tmp=tmp_path) + "\n")


SECRET_LOG = """INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.1
INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'api_key': ['sk-abcdefgh12345678'], 'hf_token': 'hf_abcdefghijklmnopqrstuvwxyz', 'max_model_len': 8192}
INFO 09-03 16:28:11 proxy at http://admin:s3cretpass@proxy.local:3128 Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload
INFO 09-03 16:28:20 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.6 seconds
INFO 09-03 16:28:30 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens
"""


def test_secrets_never_reach_a_vector_nor_its_source(gsg, tmp_path, monkeypatch):
    log = tmp_path / "secret.log"
    log.write_text(SECRET_LOG)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-ABCDEF123456")
    result = gsg("verify", "--log", str(log), "--gpu-memory", "44.39GiB", "--record", str(tmp_path / "v"),
                 "--source", "https://bob:hunter22@logs.example/run?token=abcdef123456 saw tok-ABCDEF123456")
    [path] = recorded(tmp_path / "v")
    text = path.read_text()
    for secret in ("sk-abcdefgh12345678", "hf_abcdefghijklmnopqrstuvwxyz", "s3cretpass", "eyJhbGciOiJIUzI1NiJ9",
                   "hunter22", "abcdef123456", "tok-ABCDEF123456"):
        assert secret not in text and secret not in result.out + result.err
    vector = json.loads(text)
    assert vector["arguments"]["api_key"] == ["********"] and vector["arguments"]["max_model_len"] == 8192
    assert vector["source"] == "https://logs.example/run?token=******** saw ********"
    assert vector["engine_version"] == "0.10.1" and vector["observed"]["kv_capacity_tokens"] == 158_656


def test_a_log_without_an_estimate_is_recorded_with_its_observed_terms_only(gsg, tmp_path):
    log = tmp_path / "private.log"
    log.write_text(SECRET_LOG.replace("meta-llama/Llama-3.1-8B-Instruct", "/srv/models/acme/private-7b"))
    result = gsg("verify", "--log", str(log), "--gpu-memory", "80GiB", "--record", str(tmp_path / "v"))
    assert result.code == 1  # the report fails (no estimate); the vector is still written
    [path] = recorded(tmp_path / "v")
    vector = load_vector(path)
    assert path.name.startswith("private-7b-vllm-0.10.1-")
    assert (vector["model_facts"], vector["estimated"], vector["source"]) == (None, None, "private.log")
    with pytest.raises(GsgError, match="the vector holds no model facts"):
        replay(vector)


def test_a_vector_replays_from_its_own_facts_and_a_changed_input_changes_the_estimate(gsg, tmp_path):
    gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path))
    vector = load_vector(recorded(tmp_path)[0])
    estimated, verdict, reasons = replay(vector)
    assert (estimated, verdict, reasons) == (vector["estimated"], "fits", [])
    tighter = {**vector, "backend_args": ["--gpu-memory-utilization=0.8", "--max-model-len=20000"]}
    estimated, _, reasons = replay(tighter)
    assert estimated["kv_capacity_tokens"] == 11_936
    assert reasons == ["the engine started, the estimate says kv-below-max-model-len",
                       "KV capacity is off by -61.8 % (11,936 estimated, 31,232 logged; tolerance 5 %)"]


def test_model_facts_round_trip_every_field_kind():
    from gpustack_guard.adapters.model_sources.catalog import catalog_facts

    for name in ("meta-llama/Llama-3.1-8B", "deepseek-ai/DeepSeek-V4-Flash", "Qwen/Qwen3-235B-A22B"):
        facts = catalog_facts(name)
        assert facts is not None
        again = V.facts_from_json(json.loads(json.dumps(V.facts_json(facts))))
        assert V.facts_json(again) == V.facts_json(facts)
        assert again.length_config == facts.length_config and again.compress_ratios == facts.compress_ratios


@pytest.mark.parametrize("document,message", [
    ([], "not a JSON object"),
    ({"format": "other"}, "'format' is not 'gsg-verify-vector'"),
    ({"format": V.FORMAT, "format_version": 2}, "format_version 2 is not one this gsg reads (1 to 1)"),
    ({"format": V.FORMAT, "format_version": True}, "format_version True is not one this gsg reads (1 to 1)"),
    ({"format": V.FORMAT, "format_version": 1}, "lacks 'source'"),
])
def test_a_file_that_is_not_a_vector_is_named(tmp_path, document, message):
    path = tmp_path / "v.json"
    path.write_text(json.dumps(document))
    with pytest.raises(GsgError) as caught:
        load_vector(path)
    assert str(caught.value) == f"{path}: not a gsg verify vector: {message}"


@pytest.mark.parametrize("log, inputs, tokens", [
    # the sampler line and the engine generation set the deployment's env the estimate was given
    ("vllm/v1-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu050.log",
     {"gpus": None, "gpu_used_bytes": 0, "env": ["VLLM_USE_V1=1", "VLLM_USE_FLASHINFER_SAMPLER=1",
                                                 "NCCL_P2P_DISABLE=1"], "quantization": None}, 1_146_144),
    ("vllm/v0.2.7-llama2-13b-chat-llm-class-80gb.log",
     {"gpus": None, "gpu_used_bytes": 0, "env": ["VLLM_USE_V1=0", "VLLM_USE_FLASHINFER_SAMPLER=0"],
      "quantization": None}, 60_512),
    # SGLang's free memory before the weights shows what other processes held
    ("sglang/llama31-8b-docs-quickstart.log",
     {"gpus": None, "gpu_used_bytes": 740_881_859, "env": [], "quantization": None}, 445_082),
])
def test_a_vector_keeps_what_the_estimate_was_given_and_replays_to_the_recorded_estimate(gsg, tmp_path, log, inputs,
                                                                                         tokens):
    gsg("verify", "--log", str(LOGS / log), "--gpu-memory", "80GiB", "--record", str(tmp_path))
    vector = load_vector(recorded(tmp_path)[0])
    assert vector["estimate_inputs"] == inputs and vector["estimated"]["kv_capacity_tokens"] == tokens
    assert replay(vector)[0] == vector["estimated"]
    without = {**vector, "estimate_inputs": None}  # as a vector recorded before the key replays: another estimate
    assert replay(without)[0] != vector["estimated"]


@pytest.mark.parametrize("inputs, message", [
    ([], "'estimate_inputs' must be an object of gpus, gpu_used_bytes, env and quantization"),
    ({"gpus": 2, "extra": 1}, "'estimate_inputs' must be an object of gpus, gpu_used_bytes, env and quantization"),
    ({"gpus": 0}, "estimate_inputs.gpus must be a whole number from 1 to 1024 or null"),
    ({"gpus": True}, "estimate_inputs.gpus must be a whole number from 1 to 1024 or null"),
    ({"gpu_used_bytes": -1}, "estimate_inputs.gpu_used_bytes must be a whole number of bytes from 0 to 70,368,744,177,664"),
    ({"gpu_used_bytes": 70_368_744_177_665}, "estimate_inputs.gpu_used_bytes must be a whole number of bytes from 0 to "
                                             "70,368,744,177,664"),
    ({"gpus": 1025}, "estimate_inputs.gpus must be a whole number from 1 to 1024 or null"),
    ({"gpu_used_bytes": 1e30}, "estimate_inputs.gpu_used_bytes must be a whole number of bytes from 0 to 70,368,744,177,664"),
    ({"env": ["NO_EQUALS"]}, "estimate_inputs.env must be a list of at most 256 KEY=VALUE strings"),
    ({"env": ["A=1"] * 257}, "estimate_inputs.env must be a list of at most 256 KEY=VALUE strings"),
    ({"quantization": 4}, "estimate_inputs.quantization must be a string or null"),
])
def test_estimate_inputs_a_vector_cannot_hold_are_refused_by_name(tmp_path, inputs, message):
    gsg_vector = {"format": V.FORMAT, "format_version": 1, "source": "x", "engine": "vllm", "backend": "vLLM",
                  "model": "m", "model_facts": None, "backend_args": [], "gpu": {}, "started": True, "observed": {},
                  "estimate_inputs": inputs}
    path = tmp_path / "v.json"
    path.write_text(json.dumps(gsg_vector))
    with pytest.raises(GsgError) as caught:
        load_vector(path)
    assert str(caught.value) == f"{path}: not a gsg verify vector: {message}"


@pytest.mark.parametrize("facts,message", [
    ({"num_layers_from_the_future": 3}, "model_facts has an unknown key 'num_layers_from_the_future' (a vector "
                                        "from a newer gsg?)"),
    ({"length_config": {"bogus": 1}}, "model_facts.length_config has an unknown key 'bogus'"),
    ({"length_config": {"keys": [1]}}, "model_facts.length_config.keys must be a list of [name, value] pairs"),
    ({"length_config": {"rope_scaling": [{"x": 1}]}}, "model_facts.length_config.rope_scaling has an unknown key"),
    ([], "model_facts must be an object"),
])
def test_facts_a_vector_cannot_hold_are_refused_by_name(facts, message):
    with pytest.raises(V.VectorError) as caught:
        V.facts_from_json(facts)
    assert str(caught.value) == message


def test_file_names_are_safe_and_differ_by_content():
    hostile = {"model": "../../etc/passwd\x1b[31m", "engine": "vllm", "engine_version": "0.6.4; rm -rf /"}
    assert V.file_stem(hostile) == "passwd-31m-vllm-0.6.4-rm--rf"
    assert "/" not in V.file_name(hostile, "a") and not V.file_name(hostile, "a").startswith(".")
    assert V.file_name(hostile, "a") != V.file_name(hostile, "b")
    assert V.file_stem({"model": "benchmarks/vectors/trilm-3.9b/config.json", "engine": "llama.cpp",
                        "engine_version": None, "estimated_version": "b6000"}) == "trilm-3.9b-llama.cpp-b6000"
    assert len(V.file_stem({"model": "m" * 1000, "engine": "vllm"})) == V.NAME_CHARS


def test_observed_kv_capacity_is_read_from_a_verify_report_or_a_vector(gsg, tmp_path):
    report = tmp_path / "verify.json"
    report.write_text(gsg("verify", "--log", RTX3090, *ARGS, "-o", "json").out)
    assert load_observed_kv(str(report)) == (31_232, "verify report")
    gsg("verify", "--log", RTX3090, *ARGS, "--record", str(tmp_path / "v"))
    assert load_observed_kv(str(recorded(tmp_path / "v")[0])) == (31_232, "recorded vector")
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps({"observed": {"kv_capacity_tokens": 0}}))
    with pytest.raises(GsgError) as caught:
        load_observed_kv(str(failed))
    assert str(caught.value).startswith(f"{failed}: holds no observed kv_capacity_tokens")
    with pytest.raises(GsgError) as caught:
        load_observed_kv(str(tmp_path))
    assert str(caught.value) == f"{tmp_path}: not a regular file (a folder)"


def test_a_vision_model_is_recorded_with_its_encoder_and_replays_to_the_same_estimate(gsg, tmp_path):
    # the encoder's dummy item (ModelFacts.vision_encoder, a dataclass) made --record an internal error (exit 3)
    gemma3 = str(LOGS / "vllm/v0.8.5-gpustack-gemma3-namespace.log")
    result = gsg("verify", "--log", gemma3, "--gpu-memory", "80GiB", "--record", str(tmp_path))
    assert result.code in (0, 1) and "internal error" not in result.err, result.err
    vector = load_vector(recorded(tmp_path)[0])
    encoder = vector["model_facts"]["vision_encoder"]
    assert (encoder["family"], encoder["item_patches"], encoder["item_tokens"], encoder["width"]) == \
        ("gemma3", 4096, 256, 1152)
    estimated, verdict, _ = replay(vector)
    assert estimated == vector["estimated"] and estimated["encoder_peak_bytes_per_gpu"] == 242_221_056


def test_dataclass_facts_round_trip_and_are_refused_by_name_when_malformed():
    from dataclasses import replace

    from gpustack_guard.adapters.model_sources.catalog import catalog_facts
    from gpustack_guard.core.memory.gguf import RecurrentState

    facts = catalog_facts("meta-llama/Llama-3.1-8B")
    assert facts is not None
    state = RecurrentState("ssm", conv_kernel=4, inner_size=8192, state_size=128, group_count=8,
                           recurrent=(True, False, True), attention=(False, True, False))
    facts = replace(facts, recurrent_state=state, vit_shape=(27, 1152))
    stored = json.loads(json.dumps(V.facts_json(facts)))
    assert stored["recurrent_state"]["recurrent"] == [True, False, True] and stored["vit_shape"] == [27, 1152]
    again = V.facts_from_json(stored)
    assert (again.recurrent_state.recurrent, again.recurrent_state.inner_size, again.vit_shape) == \
        ((True, False, True), 8192, (27, 1152))
    with pytest.raises(V.VectorError, match="^model_facts.recurrent_state has an unknown key 'bogus'$"):
        V.facts_from_json({**stored, "recurrent_state": {**stored["recurrent_state"], "bogus": 1}})
    with pytest.raises(V.VectorError, match="^model_facts.vision_encoder must be an object$"):
        V.facts_from_json({**stored, "vision_encoder": [1]})


def test_a_llama_cpp_vector_keeps_the_placement_its_log_showed_and_replays_to_it(gsg, tmp_path):
    # ollama's runner prints no build and its load lines in the older order (the output layer after the 29 repeating
    # layers): the estimate places them so at the assumed newest build, and the vector keeps that in its env
    config = Path(__file__).resolve().parents[2] / "benchmarks" / "vectors" / "qwq-32b" / "config.json"
    gsg("verify", "--log", str(LOGS / "llama.cpp/ollama-qwq-32b-q4km-q8kv-29-of-65-rtx3060.log"), "-m", str(config),
        "--gpu-memory", "12GiB", "--quantization", "q4_k_m", "--record", str(tmp_path))
    vector = load_vector(recorded(tmp_path)[0])
    assert vector["estimate_inputs"]["env"] == ["GSG_LLAMACPP_OUTPUT_LAYER=last"]
    assert vector["estimated_version_assumed"] is True
    assert (vector["observed"]["kv_cache_bytes_per_gpu"], vector["estimated"]["kv_cache_bytes_per_gpu"]) == \
        (516_947_968, 516_947_968)
    assert replay(vector)[0] == vector["estimated"]
    # without it the build places the output layer first: one block fewer on the GPU (476.00 MiB of KV)
    without = {**vector, "estimate_inputs": {**vector["estimate_inputs"], "env": []}}
    assert replay(without)[0]["kv_cache_bytes_per_gpu"] == 499_122_176
