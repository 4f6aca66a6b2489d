"""gsg validate on hostile templates: one GSG011 line at the spec's guard.template, exit 1, fast."""

import time

from support import FLEET, REPO

NEGATIVE = REPO / "examples" / "negative"


def test_nested_loops_are_one_error_at_guard_template_fast(gsg):
    started = time.perf_counter()
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / "GSG011-template-loop-limit")
    assert time.perf_counter() - started < 5  # a hang before (two nested range(1000) loops per document)
    assert result.code == 1
    assert result.out == ("spec.yaml:9:13: error GSG011 template [tmpl-loop-limit]: template 'nested-loops' stopped "
                          "at templates/nested-loops.yaml.j2:3: more than 10,000 loop iterations (the sandbox "
                          "limit)\n")


def test_a_self_include_is_one_error_not_a_recursion_error(gsg):
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / "GSG011-template-self-include")
    assert result.code == 1
    assert result.out == ("spec.yaml:9:13: error GSG011 template [tmpl-self-include]: template 'again' stopped at "
                          "templates/again.yaml.j2:2: more than 32 template loads (include, import, extends; the "
                          "sandbox limit), the last of 'again.yaml.j2': does a template include itself?\n")
    assert "RecursionError" not in result.err


def test_a_misspelt_var_is_an_error_at_its_key_with_did_you_mean(gsg):
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / "GSG011-template-unknown-var")
    assert result.code == 1
    assert result.out == ("spec.yaml:12:5: error GSG011 template [tmpl-unknown-var]: guard.vars.gpu_memory_utilisation "
                          "is not read by template 'vllm-hardened', so it has no effect; did you mean "
                          "'gpu_memory_utilization'?\n    fix: rename it to gpu_memory_utilization\n")
