"""gsg validate on hostile templates: one GSG011 line at the spec's guard.template, exit 1, fast."""

import time

import pytest
from support import FLEET, REPO

NEGATIVE = REPO / "examples" / "negative"


@pytest.mark.parametrize("example,out", [
    # a hang before (two nested range(1000) loops per document)
    ("GSG011-template-loop-limit",
     "spec.yaml:9:13: error GSG011 template [tmpl-loop-limit]: template 'nested-loops' stopped at "
     "templates/nested-loops.yaml.j2:3: more than 10,000 loop iterations (the sandbox limit)\n"),
    # a RecursionError before
    ("GSG011-template-self-include",
     "spec.yaml:9:13: error GSG011 template [tmpl-self-include]: template 'again' stopped at "
     "templates/again.yaml.j2:2: more than 32 template loads (include, import, extends; the sandbox limit), the "
     "last of 'again.yaml.j2': does a template include itself?\n"),
    ("GSG011-template-unknown-var",
     "spec.yaml:12:5: error GSG011 template [tmpl-unknown-var]: guard.vars.gpu_memory_utilisation is not read by "
     "template 'vllm-hardened', so it has no effect; did you mean 'gpu_memory_utilization'?\n"
     "    fix: rename it to gpu_memory_utilization\n"),
])
def test_a_hostile_or_misspelt_template_use_is_one_gsg011_line_fast(gsg, example, out):
    started = time.process_time()  # CPU time (about 0.3 s with the first imports): what gsg spends
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / example)
    assert time.process_time() - started < 1.0
    assert (result.code, result.out) == (1, out)
    assert "Error" not in result.err  # no RecursionError, no traceback
