"""The per-spec shortcuts of issue 34 round 6 give what the long way gave: secret values from the argument keys
first, SpecDoc built by its constructor after the check, display_path with the working directory given."""

from __future__ import annotations

import dataclasses
import os

import pytest
from rule_inputs import documents, vllm

from gpustack_guard.adapters.files.spec_loader import display_path
from gpustack_guard.core import args as A
from gpustack_guard.core.pipeline import render_all
from gpustack_guard.core.secrets import secret_arg_values
from gpustack_guard.core.spec.check import SpecDoc, check_document


def rendered_one(data: dict, environ: dict | None = None):
    rendered, found = render_all(documents(data), None, lambda spec, file: (None, "unknown"), environ or {})
    assert [f.rule.id for f in found if f.severity.value == "error"] == []
    return rendered[0]


@pytest.mark.parametrize(("params", "guard_secrets", "expected"), [
    ([], [], []),
    (["--max-model-len=8192", "--enforce-eager"], [], []),
    (["--hf-token=sk-abcdef123"], [], ["sk-abcdef123"]),
    (["--max-model-len=8192", "--hf-token", "sk-abcdef123"], [], ["sk-abcdef123"]),  # the value as its own item
    (["--AUTH-TOKEN=hf_abcdefghijkl"], [], ["hf_abcdefghijkl"]),  # any letter case
    (["--auth_token=hf_abcdefghijkl"], [], ["hf_abcdefghijkl"]),  # underscores
    (["--max-model-len=4096", "--my-flag=letmein"], ["--my-flag"], ["letmein"]),  # guard.secrets names it
    (["--my-flag=letmein"], ["--other-flag"], []),
    (["--token"], [], []),  # a secret-named flag without a value hides nothing
])
def test_secret_values_from_keys_equal_the_rendered_arguments(params, guard_secrets, expected):
    data = vllm("a", *params) | ({"guard": {"secrets": guard_secrets}} if guard_secrets else {})
    r = rendered_one(data)
    assert r.secret_values == expected
    assert r.secret_values == secret_arg_values(A.render(r.args), r.secret_flags)  # the long way


def test_secret_values_keep_env_secrets_before_argument_ones():
    data = vllm("a", "--hf-token=sk-abcdef123") | {"env": {"HF_TOKEN": "hf_zyxwvutsrqpo", "MODE": "fast"}}
    assert rendered_one(data).secret_values == ["hf_zyxwvutsrqpo", "sk-abcdef123"]
    assert rendered_one(vllm("a") | {"env": {"HF_TOKEN": "hf_zyxwvutsrqpo"}}).secret_values == ["hf_zyxwvutsrqpo"]


def test_check_document_copies_every_field_of_spec_doc():
    # check_document builds SpecDoc by its constructor: a field added to SpecDoc must be added there too
    assert [f.name for f in dataclasses.fields(SpecDoc)] == ["file", "index", "located", "spec"]
    doc = documents(vllm("a"), vllm("b"), file="specs/x.yaml")[1]
    checked, found = check_document(doc)
    assert found == [] and checked.spec is not None and checked.spec.name == "b"
    assert checked == dataclasses.replace(doc, spec=checked.spec)
    assert (checked.file, checked.index, checked.located) == ("specs/x.yaml", 1, doc.located)


def test_check_document_with_an_error_returns_the_document_unchanged():
    doc = documents(vllm("a") | {"replicas": "two"})[0]
    checked, found = check_document(doc)
    assert checked is doc and [f.rule.id for f in found] == ["GSG002"]


@pytest.mark.parametrize("path", ["specs/a.yaml", "./specs/../specs/a.yaml", "{cwd}/specs/a.yaml",
                                  "{cwd}/../elsewhere/a.yaml", "/etc/gsg/a.yaml", "{cwd}", "{cwd}x/a.yaml"])
def test_display_path_with_the_working_directory_given_is_the_same(path):
    cwd = os.getcwd()
    path = path.format(cwd=cwd)
    assert display_path(path, cwd) == display_path(path)
    assert display_path(f"{cwd}/specs/a.yaml", cwd) == os.path.join("specs", "a.yaml")
