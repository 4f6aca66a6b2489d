"""Fuzzing the spec loader and the pure validate pipeline with mutated spec YAML (Hypothesis): whatever the bytes,
the answer is findings, never an exception, within 2 s and 64 MB per example (the whole test: a few seconds)."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FLEET

from gpustack_guard.adapters.files import yaml_positions
from gpustack_guard.adapters.files.fleet_file import load_fleet
from gpustack_guard.adapters.files.spec_loader import spec_documents
from gpustack_guard.core.findings import Finding
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.pipeline import validate
from gpustack_guard.core.ports import TemplateError, TemplateOutput
from gpustack_guard.core.spec.check import SpecDoc

SEEDS = [
    b"name: qwen\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nreplicas: 1\n"
    b"gpu_selector:\n  gpu_ids: [gpu-a:cuda:0]\nbackend: vLLM\nbackend_version: 0.11.0\nbackend_parameters:\n"
    b"  - --gpu-memory-utilization=0.4\n  - --max-model-len=8192\nenv: {HF_HUB_OFFLINE: '1'}\n",
    b"defaults: &d {source: huggingface, backend: SGLang}\n---\nname: merged\n<<: *d\n"
    b"huggingface_repo_id: Qwen/Qwen3-1.7B\ngpu_selector: {gpu_ids: [gpu-b:cuda:0, gpu-b:cuda:1]}\n"
    b"guard:\n  template: vllm-hardened\n  vars: {gpu_memory_utilization: 0.5}\n  wave: 2\n",
    b"name: \"quoted \\u00e9\"\nsource: huggingface\nhuggingface_repo_id: 'meta-llama/Llama-3.2-1B'\n"
    b"categories: [llm, chat]\nreplicas: 0\nbackend: llama.cpp\nbackend_parameters: [-ngl 99, --ctx-size 4096]\n",
]
TOKENS = [b"&a ", b"*a", b"<<: *a\n", b"[", b"{", b"]", b"}", b": ", b"- ", b"! ", b"!!binary ", b"%YAML 1.1\n",
          b"---\n", b"...\n", b"\t", b"\x00", b"\"", b"'", b"#", b"? ", b"|\n", b">-\n", b"\n  ", b"2001-13-45",
          b"1e999999", b".inf", b"-.nan", b"0x" + b"f" * 200, b"9" * 5000, b"1:2:3:4:5", b"~", b"\xef\xbb\xbf",
          b"\xff\xfe", b"\xe9", b"\xc3", "é€😀\u202e\u00a0".encode(),
          # tags (issue 31): core tags on text of another kind, tags gsg refuses, on scalars and collections
          b"!!bool ", b"!!timestamp ", b"!!null ", b"!!int ", b"!!float ", b"!!str ", b"!!set ", b"!!omap ",
          b"!!pairs ", b"!!python/object:os.system ", b"!!python/name:os.system ", b"!foo ", b"!<tag:x,2000:y> "]

_NESTING = st.sampled_from([b"[", b"{a: ", b"- ", b"k:\n  "]).flatmap(
    lambda opener: st.integers(1, 1500).map(lambda n: opener * n))
_INSERT = st.one_of(st.sampled_from(TOKENS), _NESTING, st.text(max_size=20).map(str.encode),
                    st.binary(max_size=8))


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "insert", "delete"]))
        if kind == "flip" and data:
            index = min(where, len(data) - 1)
            data[index] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[where:]
        elif kind == "delete":
            del data[where:where + draw(st.integers(1, 20))]
        else:
            data[where:where] = draw(_INSERT)
    return bytes(data)


FACTS = facts_from_config({
    "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
    "tie_word_embeddings": True, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}, "test:qwen-0.5b")


class Templates:  # the renderer port without files: one template, the rest unknown
    def render(self, name, context):
        if name == "vllm-hardened":
            return TemplateOutput(pinned=("--gpu-memory-utilization=0.88",), defaults=("--enable-chunked-prefill",))
        raise TemplateError(f"template '{name}' not found", "spec.yaml")


def _resolve(spec, file):
    return FACTS, None


@pytest.fixture(scope="module")
def fleet():
    return load_fleet(str(FLEET))


def run(data: bytes, fleet) -> list[Finding]:
    located, problem = spec_documents(data, "spec.yaml")
    docs = [SpecDoc("spec.yaml", i, doc) for i, doc in enumerate(located)]
    report = validate(docs, [problem] if problem else [], Templates(), _resolve, fleet, {})
    assert all(isinstance(f, Finding) for f in report.findings)
    for f in report.findings:  # every finding prints: one line with its place
        assert str(f.location).startswith("spec.yaml") and f.message and "\n" not in f.message
    return report.findings


def test_the_seeds_are_clean_or_only_findings(fleet):
    assert [run(seed, fleet) is not None for seed in SEEDS] == [True, True, True]


@settings(max_examples=120, deadline=2000, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=mutated())
def test_mutated_specs_give_findings_never_an_error_within_time_and_memory(data, fleet):
    tracemalloc.start()
    start = time.process_time()
    try:
        run(data, fleet)
    finally:
        elapsed = time.process_time() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < 2.0
    assert peak < 64 * 2**20


def test_the_worst_of_each_class_is_bounded(fleet, monkeypatch):
    monkeypatch.setattr(yaml_positions, "MAX_DOCUMENTS", 10_000)  # the real 100,000 costs seconds under tracemalloc
    laughs = b"a: &a [" + b"x," * 9 + b"]\n" + b"".join(
        b"%c: &%c [" % (98 + i, 98 + i) + b",".join([b"*%c" % (97 + i)] * 9) + b"]\n" for i in range(9))
    for data in (laughs, b"v: " + b"[" * 999 + b"]" * 999, b"---\na: 1\n" * 20_000, b"a: " + b"9" * 100_000,
                 b"a: " + b"x" * 1_000_000, b"k:\n" + b"  - " * 900 + b"x\n",
                 b"k: [" + b"a," * 1_000_000 + b"]\n", b"k:\n" + b"  - a\n" * 5_000,
                 b"k: {" + b"".join(b"k%d: 1," % i for i in range(200_000)) + b"}\n"):
        start = time.process_time()
        findings = run(data, fleet)
        assert time.process_time() - start < 1.0
        assert [f.rule.id for f in findings] == ["GSG017"], findings
        tracemalloc.start()
        run(data, fleet)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 64 * 2**20
