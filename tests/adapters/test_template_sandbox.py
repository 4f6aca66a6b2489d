"""The template sandbox's limits: each hit is one TemplateError (GSG011 at guard.template), fast, with the limit
named; never a hang, a RecursionError, a MemoryError or gigabytes."""

import time
import tracemalloc

import pytest
from support import REPO

from gpustack_guard.adapters import template_sandbox as S
from gpustack_guard.adapters.templates import TemplateError, TemplateRenderer

BASE = {"vars": {"a": 1}, "placement": {"gpus": 4}, "backend_version": "0.11.0"}


def render(tmp_path, source, name="t", context=BASE):
    (tmp_path / f"{name}.yaml.j2").write_text(source)
    return TemplateRenderer([tmp_path, REPO / "templates"]).render(name, context)


def test_limits_are_the_documented_values():
    assert (S.MAX_LOOP_ITERATIONS, S.MAX_RANGE, S.MAX_CALL_DEPTH, S.MAX_MACRO_CALLS, S.MAX_TEMPLATE_LOADS,
            S.MAX_OUTPUT_CHARS, S.MAX_TEMPLATE_BYTES, S.MAX_INT_BITS, S.MAX_NESTING) == (
        10_000, 1_000, 20, 1_000, 32, 65_536, 65_536, 256, 30)


LIMITS = [
    ("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
     "more than 10,000 loop iterations (the sandbox limit)"),
    ("{% for i in range(100000) %}{% endfor %}", "range() of 100,000 items (the sandbox limit is 1,000)"),
    ("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
     "calls nested more than 20 deep (the sandbox limit): does a macro call itself?"),
    ("{% macro m(n) %}{% if n < 12 %}{{ m(n + 1) }}{{ m(n + 1) }}{% endif %}{% endmacro %}{{ m(0) }}",
     "more than 1,000 macro calls (the sandbox limit)"),
    ("{% for x in [[1]] recursive %}{{ loop([[x]]) }}{% endfor %}",
     "calls nested more than 20 deep (the sandbox limit): does a macro call itself?"),
    ("{% include 't.yaml.j2' %}", "more than 32 template loads (include, import, extends; the sandbox limit), the "
                                  "last of 't.yaml.j2': does a template include itself?"),
    ("{{ 2**100000 }}", "an integer of about 100,000 bits (the sandbox limit is 256)"),
    ("{% set ns = namespace(x=3) %}{% for i in range(30) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
     "an integer of about 406 bits (the sandbox limit is 256)"),
    ("{{ 'x' * 10**9 }}", "a repeated string or list of 1,000,000,000 characters (the sandbox limit is 65,536)"),
    ("{{ ['x' * 60000] * 10000 }}", "a repeated string or list of 600,010,000 characters (the sandbox limit is "
                                    "65,536)"),
    ("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
     "a ~ concatenation of 131,072 characters (the sandbox limit is 65,536)"),
    ("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
     "a concatenation of 131,072 characters (the sandbox limit is 65,536)"),
    ("{{ 'x' | center(1000000000) }}", "a center width of 1,000,000,000 characters (the sandbox limit is 65,536)"),
    ("{{ 'x'.ljust(1000000000) }}", "a ljust() width of 1,000,000,000 characters (the sandbox limit is 65,536)"),
    ("{{ '{:>1000000000}'.format(1) }}", "a str.format width of 1,000,000,000 characters (the sandbox limit is "
                                         "65,536)"),
    ("{{ '%1000000000s' % 1 }}", "a %-format width of 1,000,000,000 characters (the sandbox limit is 65,536)"),
    ("{{ range(1000) | join('x' * 60000) }}", "a join() result of 59,944,708 characters (the sandbox limit is "
                                              "65,536)"),
    ("{{ [1] | batch(1000000000, 0) | list }}", "a batch/slice count of 1,000,000,000 characters (the sandbox "
                                               "limit is 65,536)"),
    ("{% macro m() %}{% for i in range(1000) %}{{ 'x' * 60000 }}{% endfor %}{% endmacro %}{% set y = m() %}",
     "more than 1,048,576 characters produced (the sandbox limit)"),
    ("{{ ('x' * 60000).join(range(1000)) }}", "a join() result of 59,944,708 characters (the sandbox limit is "
                                              "65,536)"),
    ("{{ ('a' * 60000) | wordwrap(1, wrapstring='x' * 60000) }}", "a wordwrap() result of 3,600,120,000 "
                                                                  "characters (the sandbox limit is 65,536)"),
    ("{{ 'x'.encode() * 10**9 }}", "a repeated string or list of 1,000,000,000 characters (the sandbox limit is "
                                   "65,536)"),
    ("{{ dict.fromkeys(range(1000), 'x' * 60000) }}", "a call result of more than 65,536 characters (the sandbox "
                                                      "limit)"),
    ("{% set ns = namespace() %}" + "".join(f"{{% set ns.a{i} = 'x' * 60000 %}}" for i in range(20)) + "{{ ns }}",
     "more than 1,048,576 characters produced (the sandbox limit)"),
]


@pytest.mark.parametrize("source", ["{{ " + "(" * 300 + "1" + ")" * 300 + " }}", "{% if 1 %}" * 300 + "{% endif %}" * 300,
                                    "{{ " + "[" * 31 + "]" * 31 + " }}"])
def test_deep_nesting_is_refused_before_jinjas_recursive_parser(tmp_path, source):
    with pytest.raises(TemplateError) as err:
        render(tmp_path, source)
    assert str(err.value) == (f"template 't' stopped in {tmp_path / 't.yaml.j2'}: nesting deeper than 30 levels at "
                              "line 1 (the sandbox limit)")


def test_nesting_within_the_limit_renders(tmp_path):
    out = render(tmp_path, "# {{ " + "(" * 30 + "1" + ")" * 30 + " }}\npinned: [--a={{ [[[1]]][0][0][0] }}]\n")
    assert out.pinned == ("--a=1",)


@pytest.mark.parametrize("source,message", LIMITS, ids=[m.split(" (")[0][:40] for _, m in LIMITS])
def test_each_limit_is_one_error_naming_it_fast(tmp_path, source, message):
    started = time.process_time()  # CPU time: what the template costs, whatever else the CI machine runs
    with pytest.raises(TemplateError) as err:
        render(tmp_path, source)
    elapsed = time.process_time() - started
    assert str(err.value) == f"template 't' stopped at {tmp_path / 't.yaml.j2'}:1: {message}"
    assert err.value.line == 0  # reported at the spec's guard.template line
    assert elapsed < 0.5
    tracemalloc.start()  # again, for the memory it takes (tracemalloc slows Python: not timed)
    with pytest.raises(TemplateError):
        render(tmp_path, source.replace("t.yaml.j2", "u.yaml.j2"), "u")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 2**20


def test_output_limit_stops_the_rendering(tmp_path):
    with pytest.raises(TemplateError) as err:
        render(tmp_path, "{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}")
    assert str(err.value) == (f"template 't' stopped in {tmp_path / 't.yaml.j2'}: the output passed 65,536 "
                              "characters (the sandbox limit)")


def test_a_template_file_over_the_size_limit_is_refused_unread(tmp_path):
    with pytest.raises(TemplateError) as err:
        render(tmp_path, "#" * (S.MAX_TEMPLATE_BYTES + 1))
    assert str(err.value) == (f"template 't' stopped in {tmp_path / 't.yaml.j2'}: template file "
                              f"{tmp_path / 't.yaml.j2'} is 65,537 bytes (the sandbox limit is 65,536)")


@pytest.mark.parametrize("source,message", [
    ("{{ 1 / 0 }}", "template error: ZeroDivisionError: division by zero"),
    ("{{ 10.0 ** 400 }}", "template error: OverflowError: (34, 'Numerical result out of range')"),
    ("{% set l = [1] %}{{ l.append(2) }}", "template error: access to attribute 'append' of 'list' object is "
                                            "unsafe."),
    ("{{ lipsum(100000) }}", "undefined template variable: 'lipsum' is undefined"),
])
def test_python_errors_and_mutation_are_template_errors(tmp_path, source, message):
    with pytest.raises(TemplateError) as err:
        render(tmp_path, source)
    assert str(err.value) == message and err.value.line == 1


def test_limits_leave_real_templates_alone(tmp_path):
    source = ("{% macro flag(k, v) %}--{{ k }}={{ v }}{% endmacro %}pinned:\n"
              "{%- for i in range(8) %}\n  - {{ flag('x' ~ i, 2**40 * i) }}{% endfor %}\n")
    out = render(tmp_path, source)
    assert out.pinned[:2] == ("--x0=0", "--x1=1099511627776") and len(out.pinned) == 8


@pytest.mark.parametrize("name", ["../templates/vllm-hardened", "sub/vllm-hardened", "..\\vllm-hardened",
                                  "/etc/passwd", "~/t", "..", "vllm-hardened/"])
def test_template_names_that_are_paths_are_refused(tmp_path, name):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "vllm-hardened.yaml.j2").write_text("pinned: []\n")
    with pytest.raises(TemplateError) as err:
        TemplateRenderer([tmp_path, REPO / "templates"]).render(name, BASE)
    assert str(err.value) == (f"template name '{name}' is a path; name a template of the templates folder by its "
                              "file name (without folders, `..`, `~` or a leading /)")


def test_an_include_by_path_is_refused(tmp_path):
    with pytest.raises(TemplateError) as err:
        render(tmp_path, "{% include '../t.yaml.j2' %}")
    assert "template name '../t.yaml.j2' is a path" in str(err.value)


@pytest.mark.parametrize("source,expected", [
    ("{{ vars.a }}{{ vars['b'] }}{{ vars.get('c', 1) }}{{ vars.d | default(2) }}", frozenset("abcd")),
    ("{% for k in vars %}{{ k }}{% endfor %}", None),  # looped over: any key may matter
    ("{{ vars | tojson }}", None),
    ("{% for k, v in vars.items() %}{{ k }}{% endfor %}", None),
    ("{{ vars[name] }}", None),
])
def test_variables_read_come_from_the_syntax_tree(tmp_path, source, expected):
    out = render(tmp_path, "{% set name = 'a' %}# " + source + "\npinned: []\n",
                 context={**BASE, "vars": {"a": 1, "b": 2, "c": 3, "d": 4}})
    assert out.variables == expected


def test_variables_read_include_included_and_imported_templates(tmp_path):
    (tmp_path / "part.yaml.j2").write_text("{{ vars.from_include }}")
    (tmp_path / "lib.yaml.j2").write_text("{% macro m() %}{{ vars.from_import }}{% endmacro %}")
    out = render(tmp_path, "{% import 'lib.yaml.j2' as lib with context %}# {% include 'part.yaml.j2' %}"
                           "{{ lib.m() }}{{ vars.own }}\npinned: []\n",
                 context={**BASE, "vars": {"from_include": 1, "from_import": 2, "own": 3}})
    assert out.variables == frozenset({"from_include", "from_import", "own"})


def test_shipped_hardened_template_reads_its_four_variables():
    out = TemplateRenderer([REPO / "templates"]).render("vllm-hardened", BASE)
    assert out.variables == frozenset({"gpu_memory_utilization", "max_model_len", "kv_cache_dtype", "max_num_seqs"})


def test_a_name_with_other_characters_is_not_a_template_name(tmp_path):
    with pytest.raises(TemplateError) as err:
        TemplateRenderer([tmp_path]).render("vllm hardened", BASE)
    assert str(err.value) == ("template name 'vllm hardened' is not a template file name (letters, digits, '.', '_' "
                              "and '-' only)")


@pytest.mark.parametrize("source,same,differs", [
    ("{{ vars.get('c', 0) }}", {"c": 3, "z": 9}, {"c": 4}),
    ("{{ vars['c'] }}", {"c": 3, "z": 9}, {"c": 4}),
    ("{% for k, v in vars.items() %}{{ k }}{% endfor %}", {"c": 3}, {"c": 3, "z": 9}),
    ("{{ vars.get(name) }}", None, {"c": 3, "z": 9}),
])
def test_the_rendering_cache_keys_on_what_the_variables_analysis_reads(tmp_path, source, same, differs):
    """One walk of the syntax tree serves both the cache key and `variables`: a key read alone keys alone."""
    (tmp_path / "t.yaml.j2").write_text("{% set name = 'c' %}# " + source + "\npinned: []\n")
    renderer = TemplateRenderer([tmp_path])
    first = renderer.render("t", {**BASE, "vars": {"c": 3}})
    if same is not None:
        assert renderer.render("t", {**BASE, "vars": same}) is first
    assert renderer.render("t", {**BASE, "vars": differs}) is not first


def _nested_macros(depth):
    return "{% macro m(n) %}{% if n < " + str(depth) + " %}{{ m(n + 1) }}{% endif %}{% endmacro %}{{ m(1) }}"


AT_AND_OVER = [  # (limit, the template at it, the template one over it, the error one over it)
    ("loop_iterations", "{% for i in range(1000) %}{% endfor %}" * 10,
     "{% for i in range(1000) %}{% endfor %}" * 10 + "{% for i in [1] %}{% endfor %}",
     "more than 10,000 loop iterations (the sandbox limit)"),
    ("range_items", "{% for i in range(1000) %}{% endfor %}", "{% for i in range(1001) %}{% endfor %}",
     "range() of 1,001 items (the sandbox limit is 1,000)"),
    ("call_depth", _nested_macros(20), _nested_macros(21),
     "calls nested more than 20 deep (the sandbox limit): does a macro call itself?"),
    ("macro_calls", "{% macro m() %}{% endmacro %}{% for i in range(10) %}{% for j in range(100) %}{{ m() }}"
                    "{% endfor %}{% endfor %}",
     "{% macro m() %}{% endmacro %}{% for i in range(10) %}{% for j in range(100) %}{{ m() }}{% endfor %}"
     "{% endfor %}{{ m() }}", "more than 1,000 macro calls (the sandbox limit)"),
    ("template_loads", "{% for i in range(31) %}{% include 'p.yaml.j2' %}{% endfor %}",
     "{% for i in range(32) %}{% include 'p.yaml.j2' %}{% endfor %}",
     "more than 32 template loads (include, import, extends; the sandbox limit), the last of 'p.yaml.j2': does "
     "a template include itself?"),
    ("value_chars", "{% set s = 'x' * 65536 %}", "{% set s = 'x' * 65537 %}",
     "a repeated string or list of 65,537 characters (the sandbox limit is 65,536)"),
    ("int_bits", "{% set n = 2**255 - 1 + 2**255 %}", "{% set n = 2**255 + 2**255 %}",
     "an integer of 257 bits (the sandbox limit is 256)"),
]


@pytest.mark.parametrize("source,over,message", [case[1:] for case in AT_AND_OVER], ids=[c[0] for c in AT_AND_OVER])
def test_each_limit_renders_at_it_and_stops_one_over(tmp_path, source, over, message):
    (tmp_path / "p.yaml.j2").write_text("")
    assert render(tmp_path, "# " + source + "\npinned: []\n").pinned == ()
    with pytest.raises(TemplateError) as err:
        render(tmp_path, "# " + over + "\npinned: []\n")
    assert str(err.value).endswith(f": {message}")


def test_output_renders_at_its_limit_and_stops_one_over(tmp_path):
    head = "pinned: []\n# "  # 13 characters; the comment fills the output to the limit
    assert render(tmp_path, head + "x" * (S.MAX_OUTPUT_CHARS - len(head))).pinned == ()
    with pytest.raises(TemplateError) as err:
        render(tmp_path, head + f"{{{{ 'x' * {S.MAX_OUTPUT_CHARS - len(head) + 1} }}}}")
    assert str(err.value).endswith(": the output passed 65,536 characters (the sandbox limit)")


def test_a_template_file_at_the_size_limit_is_read(tmp_path):
    head = "pinned: []\n# "
    assert render(tmp_path, head + "x" * (S.MAX_TEMPLATE_BYTES - len(head))).pinned == ()


def test_produced_characters_at_the_limit_and_one_over(tmp_path):
    # a macro body's literal text is charged once per call; {{ }} values are counted as produced
    body = "{%% macro m() %%}{{ s }}{%% endmacro %%}{%% set s = 'x' * 65536 %%}{%% for i in range(%d) %%}" \
           "{%% set y = m() %%}{%% endfor %%}"
    assert render(tmp_path, "# " + body % 16 + "\npinned: []\n").pinned == ()
    with pytest.raises(TemplateError) as err:
        render(tmp_path, "# " + body % 16 + "{{ 'x' }}\npinned: []\n")
    assert str(err.value).endswith(": more than 1,048,576 characters produced (the sandbox limit)")
