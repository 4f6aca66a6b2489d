
import pytest
from support import REPO  # noqa: E402

from gpustack_guard.adapters.templates import TemplateError, TemplateRenderer

BASE = {"vars": {}, "placement": {"gpus": 4}, "backend_version": "0.11.0",
        "ollama": {"num_ctx": None, "num_gpu": None, "num_batch": None, "num_parallel": None}}


def renderer(*extra):
    return TemplateRenderer([*extra, REPO / "templates"])


def test_hardened_block_is_version_aware():
    old = renderer().render("vllm-hardened", {**BASE, "backend_version": "0.8.5"})
    assert list(old.pinned) == ["--gpu-memory-utilization=0.88", "--max-model-len=16384", "--kv-cache-dtype=fp8",
                          "--max-num-seqs=32", "--tensor-parallel-size=4"]
    assert list(old.defaults) == ["--enable-chunked-prefill", "--swap-space=0", "--disable-log-requests"]
    new = renderer().render("vllm-hardened", {**BASE, "backend_version": "0.24.1"})
    assert list(new.defaults) == ["--enable-chunked-prefill"]  # no --swap-space on vLLM >= 0.23


def test_llamacpp_template_translates_ollama_names():
    ctx = {**BASE, "ollama": {"num_ctx": 8192, "num_gpu": 60, "num_batch": 256, "num_parallel": None}}
    out = renderer().render("llamacpp-offload", ctx)
    assert list(out.pinned) == ["--ctx-size=32768", "--parallel=4", "--gpu-layers=60"]
    assert list(out.defaults[:2]) == ["--batch-size=256", "--ubatch-size=256"]


def test_undefined_variable_names_the_template_line(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --a=1\n  - --b={{ vars.nope }}\n")
    with pytest.raises(TemplateError) as err:
        renderer(tmp_path).render("t", BASE)
    assert err.value.line == 3 and "nope" in str(err.value)


def test_syntax_error_names_the_template_line(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - {% if %}\n")
    with pytest.raises(TemplateError) as err:
        renderer(tmp_path).render("t", BASE)
    assert err.value.line == 2


def test_sandbox_blocks_attribute_escapes(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - {{ vars.__class__.__mro__ }}\n")
    with pytest.raises(TemplateError):
        renderer(tmp_path).render("t", BASE)


def test_output_shape_is_checked(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned: [--a=1]\nextra: 1\n")
    with pytest.raises(TemplateError, match="only pinned, defaults and env"):
        renderer(tmp_path).render("t", BASE)


def test_rendering_is_cached_only_on_what_the_template_reads(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --gpus={{ placement.gpus }}\n")
    r = renderer(tmp_path)
    first = r.render("t", {**BASE, "vars": {"a": 1}})
    again = r.render("t", {**BASE, "vars": {"a": 2}})  # vars unused: same cached output object
    other = r.render("t", {**BASE, "placement": {"gpus": 2}})
    assert again is first and list(other.pinned) == ["--gpus=2"] and list(first.pinned) == ["--gpus=4"]


def test_cache_keys_on_the_attributes_read_not_the_whole_value(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --gpus={{ placement.gpus }}\n")
    r = renderer(tmp_path)
    first = r.render("t", {**BASE, "placement": {"gpus": 4, "gpu_ids": ["a:cuda:0"]}})
    again = r.render("t", {**BASE, "placement": {"gpus": 4, "gpu_ids": ["b:cuda:1"]}})
    assert again is first  # the template never reads gpu_ids


def test_values_equal_in_python_but_rendered_apart_are_keyed_apart(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --x={{ vars.x }}\n")
    r = renderer(tmp_path)
    # 1 == 1.0 == True and 0.0 == -0.0 in Python, yet each renders differently: none may reuse another's output
    values = [1, 1.0, True, 0.0, -0.0, "1", None, [1], 2]
    shown = [list(r.render("t", {**BASE, "vars": {"x": v}}).pinned)[0] for v in values]
    assert shown == ["--x=1", "--x=1.0", "--x=True", "--x=0.0", "--x=-0.0", "--x=1", "--x=None", "--x=[1]",
                     "--x=2"]
    assert r.render("t", {**BASE, "vars": {"x": 1}}) is r.render("t", {**BASE, "vars": {"x": 1}})


@pytest.mark.parametrize("source", [
    "{% for k, v in vars.items() %}  - --{{ k }}={{ v }}\n{% endfor %}",  # a dict method reads it whole
    "{% for k in vars %}  - --{{ k }}={{ vars[k] }}\n{% endfor %}",  # looped over and subscripted
])
def test_whole_value_reads_key_on_the_whole_value(tmp_path, source):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n" + source)
    r = renderer(tmp_path)
    assert list(r.render("t", {**BASE, "vars": {"a": 1}}).pinned) == ["--a=1"]
    assert list(r.render("t", {**BASE, "vars": {"b": 2}}).pinned) == ["--b=2"]
