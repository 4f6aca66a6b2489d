"""The render shortcuts of issue 34's fourteenth round give what the long way gave: whether a spec's arguments may
hold a secret kept with the clean-arguments memo, the template context's default workload and ollama dicts and
unset parallel size made once, the parallel size kept per rendered spec, the unused source fields listed per source.
Each is compared with the long way on the common case and on the neighbours that must not take it."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from rule_inputs import documents, vllm

from gpustack_guard.core import args as A
from gpustack_guard.core import render as R
from gpustack_guard.core.pipeline import render_all
from gpustack_guard.core.ports import TemplateOutput
from gpustack_guard.core.secrets import extra_names, resolve_env, secret_arg_values
from gpustack_guard.core.spec.check import check_document
from gpustack_guard.core.spec.model import OllamaAliases


def render_two(first: dict, second: dict, keep: int = R.MAX_CLEAN_ARGUMENTS_KEPT, renderer=None):
    """Both specs rendered in one run (the second may take the first's memo entry); the rendered specs."""
    R._CLEAN_ARGUMENTS.clear()
    saved = R.MAX_CLEAN_ARGUMENTS_KEPT
    R.MAX_CLEAN_ARGUMENTS_KEPT = keep
    try:
        rendered, found = render_all(documents(first, second), renderer, lambda spec, file: (None, "unknown"), {})
    finally:
        R.MAX_CLEAN_ARGUMENTS_KEPT = saved
    assert [f.rule.id for f in found if f.severity.value == "error"] == []
    return rendered


SECRET_URL = "--tokenizer=https://user:pw-1234567@host.example/org/model"
SECRET_NEIGHBOURS = {  # (first spec, what the second's guard adds, its secret values, its args_plain)
    "plain arguments": (vllm("a", "--max-model-len=8192"), {}, [], True),
    "a URL with a password": (vllm("a", SECRET_URL), {}, ["pw-1234567"], False),
    "a flag named like a secret": (vllm("a", "--hf-token=sk-abcdef123"), {}, ["sk-abcdef123"], False),
    # guard.secrets is not part of the memo's key: the second spec shares the first's entry (plain arguments),
    # and its own guard.secrets must still be asked
    "guard.secrets only": (vllm("a", "--my-flag=letmein"), {"secrets": ["--my-flag"]}, ["letmein"], True),
}


@pytest.mark.parametrize(("first", "guard", "expected", "plain"), SECRET_NEIGHBOURS.values(),
                         ids=list(SECRET_NEIGHBOURS))
def test_secret_values_through_the_memo_equal_the_long_way(first, guard, expected, plain):
    second = first | {"name": "b"} | ({"guard": guard} if guard else {})
    with_memo = render_two(first, second)
    assert len(R._CLEAN_ARGUMENTS) == 1  # the second spec took the first's entry
    without = render_two(first, second, keep=0)
    for r in with_memo + without:
        assert r.secret_values == secret_arg_values(A.render(r.args), r.secret_flags)  # the long way
        assert not r.args_plain or not R._may_hold_secret_any(r.args)  # never claimed plain wrongly
    assert with_memo[1].secret_values == without[1].secret_values == expected
    assert with_memo[1].args_plain is plain  # the memo's answer, used for the second spec
    assert without[1].args_plain is False  # without the memo: not known, asked by secret_values


class Contexts:
    """Records every context; renders --max-num-seqs=8 whatever the context."""

    def __init__(self):
        self.seen: list[dict] = []

    def render(self, name, context):
        self.seen.append(context)
        return TemplateOutput(pinned=("--max-num-seqs=8",), defaults=(), env=(), variables=frozenset(),
                              source=f"{name}.yaml.j2")


TEMPLATED = vllm("a") | {"guard": {"template": "t"}}
CONTEXT_NEIGHBOURS = {
    "defaults": TEMPLATED,
    "a workload field": TEMPLATED | {"guard": {"template": "t", "workload": {"concurrency": 4}}},
    "a workload mix": TEMPLATED | {"guard": {"template": "t", "workload": {"mix": [
        {"name": "chat", "prompt_tokens_p99": 100, "max_output_tokens": 50, "concurrency": 2}]}}},
    "ollama aliases": TEMPLATED | {"guard": {"template": "t", "ollama": {"num_ctx": 2048}}},
    "empty ollama aliases": TEMPLATED | {"guard": {"template": "t", "ollama": {}}},
    "own tensor parallel size": TEMPLATED | {"backend_parameters": ["--tensor-parallel-size=2"]},
    "own arguments, no parallel size": TEMPLATED | {"backend_parameters": ["--max-model-len=4096"]},
}


@pytest.mark.parametrize("data", CONTEXT_NEIGHBOURS.values(), ids=list(CONTEXT_NEIGHBOURS))
def test_template_context_equals_the_long_way_and_hands_out_fresh_dicts(data):
    spec = check_document(documents(data)[0])[0].spec
    family = A.backend_family(spec.effective_backend, spec.is_gguf)
    spec_args = A.parse(spec.backend_parameters, family)
    context = R.template_context(spec, family, spec_args, None)
    assert context["workload"] == spec.guard.workload.to_dict()
    assert context["ollama"] == (spec.guard.ollama or OllamaAliases()).to_dict()
    tp, pp = A.parallel_size(A.as_dict(spec_args), family)
    assert context["placement"]["gpus"] == R.gpus_per_replica(spec, family, (tp, pp))
    # each context gets its own dicts: a template changing one (a sandbox allows it) changes no other spec's
    context["workload"]["concurrency"] = 99
    context["workload"].get("mix", []).append("x")
    context["ollama"]["num_ctx"] = 99
    again = R.template_context(spec, family, spec_args, None)
    assert again["workload"] == spec.guard.workload.to_dict()
    assert again["ollama"] == (spec.guard.ollama or OllamaAliases()).to_dict()


def test_template_gpus_follow_the_spec_own_parallel_size():
    contexts = Contexts()
    render_two(CONTEXT_NEIGHBOURS["own tensor parallel size"], TEMPLATED | {"name": "b"}, renderer=contexts)
    assert [c["placement"]["gpus"] for c in contexts.seen] == [2, 1]


@pytest.mark.parametrize("params", [[], ["--tensor-parallel-size=2"], ["--pipeline-parallel-size=2"],
                                    ["--tensor-parallel-size=2", "--pipeline-parallel-size=3"]])
def test_kept_parallel_size_equals_the_flags_reading(params):
    rendered = render_two(vllm("a", *params), vllm("b", *params))
    for r in rendered:
        assert r.parallel_size() == A.parallel_size(r.flags, r.family)
        assert r.parallel_size() == r.parallel_size()  # asked twice: the same answer


def test_unused_source_fields_are_warned_in_source_order():
    data = vllm("a") | {"model_scope_model_id": "org/other", "local_path": "/models/m",
                        "model_scope_file_path": "x.gguf"}
    _, found = check_document(documents(data)[0])
    assert [f.message.split(" is set")[0] for f in found if f.rule.id == "GSG006"] == [
        "model_scope_model_id", "model_scope_file_path", "local_path"]
    local = vllm("a") | {"source": "local_path", "local_path": "/models/m", "huggingface_filename": "x.gguf"}
    local.pop("huggingface_repo_id")
    _, found = check_document(documents(local)[0])
    assert [f.message.split(" is set")[0] for f in found if f.rule.id == "GSG006"] == ["huggingface_filename"]


def test_rendered_spec_init_takes_every_field_in_order_with_its_default():
    # RenderedSpec writes its own __init__ (speed): a field added to the class must be added there too
    init_fields = [f for f in dataclasses.fields(R.RenderedSpec) if f.init]
    parameters = list(inspect.signature(R.RenderedSpec.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == [f.name for f in init_fields]
    assert [p.default for p in parameters] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in init_fields]
    r = render_two(vllm("a"), vllm("b"))[1]
    assert list(vars(r)) == [f.name for f in dataclasses.fields(R.RenderedSpec)] + ["_flags"] * ("_flags" in vars(r))
    assert r.name == r.spec.name == "b"
    assert r._documents == {} and r._documents is not render_two(vllm("a"), vllm("b"))[1]._documents
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.family = "sglang"  # type: ignore[misc]
    copy = dataclasses.replace(r, family="sglang")
    assert copy.family == "sglang" and copy.args == r.args and copy._documents == {}
    other = check_document(documents(vllm("c"))[0])[0]
    assert dataclasses.replace(r, spec=other.spec).name == "c"  # the name follows the spec


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ({}, set(), [])),
    ({"MODE": "fast"}, ({"MODE": "fast"}, {"MODE"}, [])),  # named in guard.secrets
    ({"LEVEL": "2"}, ({"LEVEL": "2"}, set(), [])),
    ({"HF_TOKEN": "x"}, ({"HF_TOKEN": "x"}, {"HF_TOKEN"}, [])),
    ({"A": "${A}"}, ({"A": "${A}"}, {"A"}, ["A"])),
])
def test_resolve_env_with_and_without_env(env, expected):
    assert resolve_env(env, {}, {"MODE"}) == expected
    first, second = resolve_env({}, {}), resolve_env({}, {})
    assert all(a is not b for a, b in zip(first, second))  # fresh containers: callers may change theirs


@pytest.mark.parametrize("listed", [[], ["HF_TOKEN"], ["--my-flag"], ["HF_TOKEN", "--my-flag", "---x"]])
def test_extra_names_fast_path_equals_the_split(listed):
    env, flags = extra_names(listed)
    assert env == {n for n in listed if not n.startswith("-")}
    assert flags == {n.lstrip("-") for n in listed if n.startswith("-")}
    assert extra_names(iter(listed)) == (env, flags)  # any iterable, as before


@pytest.mark.parametrize(("extra", "managed"), [({}, []), ({"state": "running"}, ["state"]),
                                                ({"state": "x", "id": 3}, ["id", "state"])])
def test_server_managed_fields_asked_first_still_found_in_order(extra, managed):
    checked, found = check_document(documents(vllm("a") | extra)[0])
    assert [f.message.split("'")[1] for f in found if "managed by the GPUStack server" in f.message] == managed
    assert (checked.spec is None) is bool(managed)  # an error: the document comes back unvalidated
