"""The estimate reads the env the deployment is sent: the spec's, a template's, and ${NAME} references resolved
from the process environment; and every variable the engine config readers take reaches them (engine.ENGINE_ENV).
Before, only a spec's own literal env reached vLLM's and SGLang's arithmetic, and VLLM_USE_V2_MODEL_RUNNER never
did: `=0` on vLLM 0.27.1 was still booked on the V2 runner."""

from __future__ import annotations

import inspect
import json
import re

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import engine
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

FLEET = """\
clusters:
- name: lab
  workers:
  - name: w0
    gpus:
    - {index: 0, name: NVIDIA L40S, memory: {total: 46068MiB}}
"""
SPEC = """\
name: small
source: huggingface
huggingface_repo_id: Qwen/Qwen2.5-0.5B
gpu_selector: {gpu_ids: ['w0:cuda:0']}
backend: vLLM
backend_version: 0.27.1
backend_parameters: [--gpu-memory-utilization=0.5, --max-model-len=8192]
"""


def runner_of(gsg, monkeypatch, tmp_path, env_block: str, **process_env) -> str:
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    (folder / "a.yaml").write_text(SPEC + env_block)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    for name, value in process_env.items():
        monkeypatch.setenv(name, value)
    result = gsg("validate", str(folder), "--fleet", str(fleet), "--offline", "-o", "json")
    (deployment,) = json.loads(result.out)["deployments"]
    return deployment["estimate"]["extra"]["model_runner"]


def test_the_v2_runner_switch_reaches_the_estimate(gsg, monkeypatch, tmp_path):
    assert runner_of(gsg, monkeypatch, tmp_path, "") == "v2"
    assert runner_of(gsg, monkeypatch, tmp_path, "env: {VLLM_USE_V2_MODEL_RUNNER: '0'}\n") == "v1"


def test_a_reference_resolved_from_the_process_env_reaches_the_estimate(gsg, monkeypatch, tmp_path):
    block = "env: {VLLM_USE_V2_MODEL_RUNNER: '${RUNNER_SWITCH}'}\n"
    assert runner_of(gsg, monkeypatch, tmp_path, block, RUNNER_SWITCH="0") == "v1"
    assert runner_of(gsg, monkeypatch, tmp_path, block, RUNNER_SWITCH="1") == "v2"


def test_every_variable_the_config_readers_take_is_let_through():
    source = inspect.getsource(engine.vllm_config) + inspect.getsource(engine.sglang_config)
    literal = set(re.findall(r'env\.get\("([A-Z0-9_]+)"', source))
    named = {getattr(engine.P, name) for name in re.findall(r"env\.get\(P\.([A-Z0-9_]+)", source)}
    assert literal | named  # the readers were found
    assert (literal | named) - set(engine.ENGINE_ENV) == set()


def test_the_switch_moves_the_numbers_not_only_the_label():
    facts = catalog_facts("Qwen/Qwen2.5-0.5B")
    flags = {"gpu-memory-utilization": "0.5", "max-model-len": "8192"}
    v2 = engine.estimate("vllm", facts, [(45 * GiB, "NVIDIA L40S")], flags, "0.27.1", Policy())
    v1 = engine.estimate("vllm", facts, [(45 * GiB, "NVIDIA L40S")], flags, "0.27.1", Policy(),
                         env={"VLLM_USE_V2_MODEL_RUNNER": "0"})
    assert (v2.extra["model_runner"], v1.extra["model_runner"]) == ("v2", "v1")
    assert v1.activation != v2.activation
