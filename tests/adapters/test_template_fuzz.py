"""Fuzz: mutated templates (random combinations of Jinja constructs) and mutated vars fed to the renderer.

Whatever a pull request puts in a template, rendering ends in the adapter's own TemplateError or an output, never
another exception, each example in bounded time and memory."""

import time
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_guard.adapters.templates import TemplateError, TemplateRenderer

NUMBERS = st.sampled_from(["0", "1", "-1", "3", "1000", "100000", "10**9", "2**100000", "2**64", "0.5", "1e308",
                           "vars.n", "vars.missing", "(vars.s | length)"])
STRINGS = st.sampled_from(["'x'", "'%1000000000s'", "'{:>1000000000}'", "vars.s", "''", "'\\n'"])


@st.composite
def expressions(draw, depth=0):
    kind = draw(st.integers(0, 9 if depth < 2 else 2))
    if kind == 0:
        return draw(NUMBERS)
    if kind == 1:
        return draw(STRINGS)
    if kind == 2:
        return draw(st.sampled_from(["vars.n", "vars['s']", "vars.get('n', 1)", "vars.__class__", "vars.items()",
                                     "placement.gpus", "backend_version", "vars"]))
    inner, other = draw(expressions(depth + 1)), draw(expressions(depth + 1))
    return draw(st.sampled_from([
        f"({inner} * {other})", f"({inner} ** {other})", f"({inner} + {other})", f"({inner} ~ {other})",
        f"({inner} % {other})", f"({inner} / {other})", f"range({inner})", f"({inner} | center({other}))",
        f"({inner} | indent({other}))", f"({inner} | join({other}))", f"({inner} | list)", f"({inner} | int)",
        f"({inner} | batch({other}) | list)", f"({inner} | replace('', {other}))", f"[{inner}] * {other}",
        f"{inner}.center({other})", f"m({inner})", f"({inner} | default({other}))", f"({inner} | tojson)",
    ]))


@st.composite
def statements(draw, depth=0):
    expr = draw(expressions())
    kind = draw(st.integers(0, 7 if depth < 2 else 1))
    if kind == 0:
        return "{{ " + expr + " }}"
    if kind == 1:
        return "text "
    body = draw(statements(depth + 1))
    return draw(st.sampled_from([
        f"{{% for i in {expr} %}}{body}{{% endfor %}}",
        f"{{% for i in range({expr}) %}}{{% for j in range({expr}) %}}{body}{{% endfor %}}{{% endfor %}}",
        f"{{% if {expr} %}}{body}{{% else %}}{body}{{% endif %}}",
        f"{{% set ns.s = ns.s ~ ns.s %}}{{% set ns.n = ns.n * {expr} %}}{body}",
        "{% include 'fuzz.yaml.j2' %}",
        "{{ " + "(" * 40 + expr + ")" * 40 + " }}",
        f"{{% for x in [[1], [2]] recursive %}}{{{{ loop([[x]]) }}}}{body}{{% endfor %}}",
    ]))


HEADER = ("{% set ns = namespace(s='ab', n=3) %}"
          "{% macro m(n) %}{% if n is number and n < 100 %}{{ m(n + 1) }}{{ m(n + 1) }}{% endif %}{% endmacro %}")
VARS = st.dictionaries(st.sampled_from(["n", "s", "gpu_memory_utilization", "x" * 50]),
                       st.one_of(st.integers(-10**6, 10**6), st.text(max_size=20), st.floats(allow_nan=True),
                                 st.none(), st.lists(st.integers(), max_size=5)), max_size=4)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(body=st.lists(statements(), min_size=1, max_size=4), variables=VARS)
def test_any_template_ends_in_an_output_or_the_adapters_error(tmp_path_factory, body, variables):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "fuzz.yaml.j2").write_text(HEADER + "# " + "".join(body) + "\npinned: []\n")
    renderer = TemplateRenderer([folder])
    context = {"vars": variables, "placement": {"gpus": 2}, "backend_version": "0.11.0"}
    tracemalloc.start()
    started = time.process_time()  # CPU time: what the template costs, whatever the load of the CI machine
    try:
        renderer.render("fuzz", context)
    except TemplateError:
        pass  # the adapter's own error: GSG011 at guard.template
    elapsed = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 2.0, body
    assert peak < 64 * 2**20, body
