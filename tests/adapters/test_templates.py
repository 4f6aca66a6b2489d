
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


def test_a_kept_rendering_is_returned_before_jinja_or_the_sandbox_is_asked(tmp_path, monkeypatch):
    # the fast path (10,000-spec scale tree): a key seen before costs neither get_template's stat nor the
    # sandbox's context; a new key still goes through both
    import gpustack_guard.adapters.template_sandbox as S

    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --gpus={{ placement.gpus }}\n")
    r = renderer(tmp_path)
    first = r.render("t", BASE)
    asked = []
    monkeypatch.setattr(r._env, "get_template", lambda name, *a, **k: asked.append(name) or 1 / 0)
    monkeypatch.setattr(S, "rendering", lambda: asked.append("sandbox") or 1 / 0)
    assert r.render("t", {**BASE, "vars": {"unread": 1}}) is first
    assert asked == []
    with pytest.raises(TemplateError, match="ZeroDivisionError"):
        r.render("t", {**BASE, "placement": {"gpus": 2}})
    assert asked == ["sandbox"]


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


# --- the analysis cache: what a template reads, stored beside the compiled templates ---------------------------

READS_X = "pinned:\n  - --x={{ vars.x }}\n  - --gpus={{ placement.gpus }}\n"


def _analyses(cache):
    return sorted(p.name for p in cache.glob("analysis-*.json"))


def test_a_stored_analysis_is_reused_by_the_next_run_without_parsing(tmp_path, monkeypatch):
    import gpustack_guard.adapters.templates as T

    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    first = TemplateRenderer([tmp_path], cache_dir=cache).render("t", {**BASE, "vars": {"x": 1}})
    assert len(_analyses(cache)) == 1

    def no_parsing(*_):
        raise AssertionError("parsed again")

    monkeypatch.setattr(T, "_context_reads", no_parsing)
    monkeypatch.setattr(T, "_vars_read", no_parsing)
    again = TemplateRenderer([tmp_path], cache_dir=cache)
    assert again.render("t", {**BASE, "vars": {"x": 1}}) == first
    assert first.variables == frozenset({"x"})
    other = again.render("t", {**BASE, "vars": {"x": 2}, "placement": {"gpus": 4, "gpu_ids": ["a"]}})
    assert list(other.pinned) == ["--x=2", "--gpus=4"]


def test_a_changed_template_is_analysed_anew(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    TemplateRenderer([tmp_path], cache_dir=cache).render("t", {**BASE, "vars": {"x": 1}})
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --y={{ vars.y }}\n")
    out = TemplateRenderer([tmp_path], cache_dir=cache).render("t", {**BASE, "vars": {"y": 3}})
    assert list(out.pinned) == ["--y=3"] and out.variables == frozenset({"y"})
    assert len(_analyses(cache)) == 2


@pytest.mark.parametrize("stored", ['{"reads": {"vars": ["x"]}}', '{"reads": {"vars": [1]}, "vars": null}',
                                    '[1, 2]', "not json", '{"reads": {}, "vars": "x"}', " " * (70 << 10)])
def test_a_stored_analysis_not_in_the_shape_written_is_ignored(tmp_path, stored):
    import gpustack_guard.adapters.templates as T

    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    cache.mkdir()
    T._analysis_file(cache, READS_X).write_text(stored)
    first = TemplateRenderer([tmp_path], cache_dir=cache)
    out = first.render("t", {**BASE, "vars": {"x": 1}})
    assert out.variables == frozenset({"x"})
    # analysed from the source: a second spec with another placement.gpus renders anew, not from a wrong key
    assert list(first.render("t", {**BASE, "vars": {"x": 1}, "placement": {"gpus": 2}}).pinned) == ["--x=1",
                                                                                                   "--gpus=2"]


def test_a_template_that_includes_another_is_not_stored(tmp_path):
    (tmp_path / "inner.yaml.j2").write_text("  - --y={{ vars.y }}\n")
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --x={{ vars.x }}\n{% include 'inner.yaml.j2' %}")
    cache = tmp_path / "cache"
    out = TemplateRenderer([tmp_path], cache_dir=cache).render("t", {**BASE, "vars": {"x": 1, "y": 2}})
    assert list(out.pinned) == ["--x=1", "--y=2"] and out.variables == frozenset({"x", "y"})
    assert _analyses(cache) == []


def test_a_cache_folder_that_cannot_be_written_only_costs_the_analysis(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    cache.write_text("a file where the folder should be")  # mkdir fails even for root
    out = TemplateRenderer([tmp_path], cache_dir=cache).render("t", {**BASE, "vars": {"x": 1}})
    assert list(out.pinned) == ["--x=1", "--gpus=4"] and out.variables == frozenset({"x"})
    assert cache.read_text() == "a file where the folder should be"


# --- the cache key's plan: which context names and attributes, kept per template and context names (issue 34) ---

def _key_the_long_way(r, path, context):
    # _cache_key before the plan was kept: the names and attributes sorted anew for every rendering
    from gpustack_guard.adapters import templates as T

    reads = r._reads[str(path)]
    if reads is None:
        reads = dict.fromkeys(context)
    parts = [(str(path),)]
    for name in sorted(set(reads) & set(context)):
        value, attrs = T._plain(context[name]), reads[name]
        if attrs is None or not isinstance(value, dict):
            parts.append((name, T._key_part(value)))
        else:
            parts.append((name,) + tuple((a, T._key_part(value.get(a, T._ABSENT))) for a in sorted(attrs)))
    return tuple(parts)


KEY_CONTEXTS = [
    BASE,
    {**BASE, "vars": {"x": 1, "y": [2]}, "placement": {"gpus": 2, "gpu_ids": ["a:cuda:0"]}},
    {"placement": {"gpus": 4}, "vars": {"x": 1}, "backend_version": "0.11.0"},  # the same names, another order
    {"vars": {"x": "1"}},  # fewer names: placement is not part of this key
    {**BASE, "extra": 1},  # a name no template reads
    {**BASE, "vars": __import__("types").MappingProxyType({"x": 1.0})},  # a Mapping that is not a dict
    {**BASE, "placement": "not a mapping"},
]


@pytest.mark.parametrize("source", [READS_X, "pinned:\n  - --x={{ vars.items() | list }}\n",
                                    "{% include 'inner.yaml.j2' %}"], ids=["attributes", "whole", "include"])
def test_the_kept_plan_gives_the_key_of_the_long_way(tmp_path, source):
    (tmp_path / "t.yaml.j2").write_text(source)
    (tmp_path / "inner.yaml.j2").write_text("pinned: []\n")
    r = renderer(tmp_path)
    path = r.locate("t")
    for context in KEY_CONTEXTS + KEY_CONTEXTS:  # the second round from kept plans
        assert r._cache_key(path, context) == _key_the_long_way(r, path, context)
    assert len(r._key_plans) == len({tuple(c) for c in KEY_CONTEXTS})


def test_kept_plans_are_bounded(tmp_path, monkeypatch):
    from gpustack_guard.adapters import templates as T

    monkeypatch.setattr(T, "MAX_KEY_PLANS_KEPT", 2)
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    r = renderer(tmp_path)
    path = r.locate("t")
    for context in KEY_CONTEXTS:
        assert r._cache_key(path, context) == _key_the_long_way(r, path, context)
    assert len(r._key_plans) == 2


def test_a_rendered_key_repeated_is_refused_not_last_wins(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --a=1\n{% if true %}pinned:\n  - --b=2\n{% endif %}")
    with pytest.raises(TemplateError) as err:
        renderer(tmp_path).render("t", BASE)
    assert str(err.value) == "rendered template repeats the key 'pinned' (line 3 of its output); YAML keeps only the last"
