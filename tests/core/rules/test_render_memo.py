"""Render keeps the argument work of clean specs by everything it reads (core/render.py _clean_key, issue 34):
a spec sharing the key with a clean one renders as it would alone; a spec differing in any one input does not
take the other's result."""

from __future__ import annotations

import pytest
from rule_inputs import documents, vllm

from gpustack_guard.core import render as R
from gpustack_guard.core.pipeline import render_all
from gpustack_guard.core.ports import TemplateOutput


class VarsTemplates:
    """Templates whose pinned --max-num-seqs is guard.vars.seqs (default 8); t2 pins twice as many."""

    def render(self, name, context):
        seqs = context["vars"].get("seqs", 8) * (2 if name == "t2" else 1)
        return TemplateOutput(pinned=(f"--max-num-seqs={seqs}",), defaults=("--max-model-len=8192",),
                              env=(("FROM_TEMPLATE", name),), variables=frozenset({"seqs"}), source=f"{name}.yaml.j2")


def results(first, second, keep: int):
    """Both specs rendered in one run, in order; keep: at most this many clean keys kept (0: no memo at all).
    The second spec's rendering and findings."""
    R._CLEAN_ARGUMENTS.clear()
    saved = R.MAX_CLEAN_ARGUMENTS_KEPT
    R.MAX_CLEAN_ARGUMENTS_KEPT = keep
    try:
        docs = documents(first, second)
        rendered, found = render_all(docs, VarsTemplates(), lambda spec, file: (None, "unknown"), {})
    finally:
        R.MAX_CLEAN_ARGUMENTS_KEPT = saved
    mine = [r for r in rendered if r.doc.index == 1]
    r = mine[0] if mine else None
    shown = (r.name, r.family, [a.render() for a in r.args], dict(r.env), r.pinned, r.template_source) if r else None
    return shown, sorted((f.rule.id, f.location.line, f.message) for f in found if f.spec == second["name"])


def llamacpp(name, *args, **fields):
    return {"name": name, "source": "huggingface", "huggingface_repo_id": "org/model-GGUF",
            "huggingface_filename": "model-Q4_K_M.gguf", "backend": "llama.cpp", "backend_version": "b6000",
            "backend_parameters": list(args)} | fields


TEMPLATED = vllm("a") | {"guard": {"template": "t1", "vars": {"seqs": 8}}}
NEIGHBOURS = {
    "own arguments": (vllm("a", "--max-model-len=8192"), vllm("b", "--max-model-len=4096")),
    "engine": (vllm("a", "--max-model-len=8192"), vllm("b", "--max-model-len=8192", backend="SGLang",
                                                         backend_version="0.5.5")),
    "release": (vllm("a", "--max-model-len=auto", backend_version="0.14.0"),
                vllm("b", "--max-model-len=auto", backend_version="0.11.0")),  # GSG016 before 0.14
    "gpu_ids listed": (llamacpp("a", "--gpu-layers=0"), llamacpp("b", "--gpu-layers=0",
                                                                 gpu_selector={"gpu_ids": ["w1:cuda:0"]})),
    "template": (TEMPLATED, TEMPLATED | {"name": "b", "guard": {"template": "t2", "vars": {"seqs": 8}}}),
    "template output": (TEMPLATED, TEMPLATED | {"name": "b", "guard": {"template": "t1", "vars": {"seqs": 4}}}),
    "guard.vars keys": (TEMPLATED, TEMPLATED | {"name": "b", "guard": {"template": "t1", "vars": {"seqz": 8}}}),
    "spec against template": (TEMPLATED, TEMPLATED | {"name": "b", "backend_parameters": ["--max-num-seqs=4"]}),
}


@pytest.mark.parametrize("first,second", NEIGHBOURS.values(), ids=list(NEIGHBOURS))
def test_a_spec_differing_in_one_input_renders_as_it_would_alone(first, second):
    with_memo = results(first, second, keep=4096)
    # the first spec was clean and kept; the second has a key of its own (kept too when it is clean)
    assert len(R._CLEAN_ARGUMENTS) == (1 if with_memo[1] else 2)
    assert with_memo == results(first, second, keep=0)
    clean_twin = results(first, first | {"name": second["name"]}, keep=0)
    assert with_memo != clean_twin  # the one input changes the result: rendering, or findings


def test_a_spec_sharing_the_key_reuses_it_with_its_own_name_env_and_lines():
    first = TEMPLATED | {"env": {"A": "1"}}
    second = TEMPLATED | {"name": "b", "env": {"A": "2", "SECRET_TOKEN": "${TOKEN}"}}
    R._CLEAN_ARGUMENTS.clear()
    docs = documents(first, second)
    rendered, found = render_all(docs, VarsTemplates(), lambda spec, file: (None, "unknown"), {"TOKEN": "t"})
    assert found == [] and len(R._CLEAN_ARGUMENTS) == 1  # one key for both
    assert [r.name for r in rendered] == ["a", "b"] and rendered[1].doc.index == 1
    assert rendered[1].env == {"FROM_TEMPLATE": "t1", "A": "2", "SECRET_TOKEN": "t"}
    assert rendered[1].secret_keys == frozenset({"SECRET_TOKEN"})
    assert [a.render() for a in rendered[1].args] == [a.render() for a in rendered[0].args] == [
        "--max-num-seqs=8", "--max-model-len=8192"]


def test_specs_with_findings_are_never_kept_and_the_store_is_bounded(monkeypatch):
    R._CLEAN_ARGUMENTS.clear()
    render_all(documents(vllm("a", "--max-num-seqs=0")), VarsTemplates(), lambda spec, file: (None, "x"), {})
    assert R._CLEAN_ARGUMENTS == {}
    monkeypatch.setattr(R, "MAX_CLEAN_ARGUMENTS_KEPT", 2)
    docs = documents(*(vllm(f"s{i}", f"--max-model-len={1024 * (i + 1)}") for i in range(4)))
    rendered, found = render_all(docs, VarsTemplates(), lambda spec, file: (None, "x"), {})
    assert len(R._CLEAN_ARGUMENTS) == 2 and found == []
    assert [a.render() for r in rendered for a in r.args] == [f"--max-model-len={1024 * (i + 1)}" for i in range(4)]


class CountingTemplates(VarsTemplates):
    """VarsTemplates that counts renders by template name."""

    def __init__(self):
        self.renders: dict[str, int] = {}

    def render(self, name, context):
        self.renders[name] = self.renders.get(name, 0) + 1
        return super().render(name, context)


@pytest.mark.parametrize("spec,clean", [
    (TEMPLATED, True),
    (TEMPLATED | {"backend_parameters": ["--max-num-seqs=4"]}, False),  # contradicts the pinned value
    (TEMPLATED | {"guard": {"template": "t1", "vars": {"seqz": 8}}}, False),  # a var the template never reads
])
def test_a_template_renders_once_per_spec_whether_or_not_the_spec_is_kept(spec, clean):
    # The memo's key needs the template's output: the full check must reuse it, not render it a second time.
    R._CLEAN_ARGUMENTS.clear()
    templates = CountingTemplates()
    rendered, found = render_all(documents(spec), templates, lambda spec, file: (None, "x"), {})
    assert (found == []) is clean
    assert templates.renders == {"t1": 1}


class ContextKept:
    """Keeps each context it is given (the `ollama` entry is what this test looks at)."""

    def __init__(self):
        self.contexts = []

    def render(self, name, context):
        self.contexts.append(context)
        return TemplateOutput(source=f"{name}.yaml.j2")


def test_the_ollama_entry_is_a_fresh_dict_of_the_spec_or_of_the_empty_record():
    """The empty OllamaAliases record is built once (render._no_ollama, tenth round): each spec still gets its
    own dict, equal to the empty record's, and a spec's own ollama block is its own."""
    R._CLEAN_ARGUMENTS.clear()
    kept = ContextKept()
    own = TEMPLATED | {"name": "c", "guard": {"template": "t1", "ollama": {"num_ctx": 4096}}}
    render_all(documents(TEMPLATED, TEMPLATED | {"name": "b"}, own), kept, lambda spec, file: (None, "unknown"), {})
    first, second, third = (c["ollama"] for c in kept.contexts)
    empty = {"num_ctx": None, "num_gpu": None, "num_batch": None, "num_parallel": None}
    assert first == second == empty and first is not second
    assert third == empty | {"num_ctx": 4096}
