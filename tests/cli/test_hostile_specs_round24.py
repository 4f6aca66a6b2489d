"""Round 24 of hostile spec trees for the offline commands, each the case gsg mishandled before, with its
neighbour, grouped by class."""

from __future__ import annotations

import time

# --- templates: constant expressions are folded under the sandbox's limits ------------------------------------

EVIL = ('pinned:\n'
        '  - --max-num-seqs={{ vars.n | default("x" * 10**10) }}\n'
        '  - --x={{ "y" | center(10**10) }}\n'
        '  - --y={{ "z" * 10**9 }}\n')


def test_gsg_templates_describes_a_template_of_huge_constants_without_building_them(tmp_path):
    """Jinja folds constant expressions while compiling. `gsg templates` compiled with a plain sandbox, whose
    `*` is not intercepted and whose filters are not guarded: `{{ "x" * 10**10 }}` built 10 GB and
    `{{ "y" | center(10**10) }}` hung (validate and render, on the limited sandbox, said GSG011 at once). Now the
    listing folds with the rendering sandbox: nothing is built, and the template is described as written. Run in
    a child capped at 2 GiB of address space, so that a regression is an internal error (MemoryError) quickly, not a machine out of memory."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "evil.yaml.j2").write_text(EVIL)
    cap = "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); " \
          "sys.argv = ['gsg', 'templates', '--templates', 'tpl', '-o', 'json']; " \
          "runpy.run_module('gpustack_guard', run_name='__main__')"
    started = time.monotonic()
    child = subprocess.run([sys.executable, "-c", cap], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                           env={**os.environ, "GSG_OFFLINE": "1"})
    assert time.monotonic() - started < 30
    assert (child.returncode, child.stderr) == (0, "")
    evil = json.loads(child.stdout)["templates"][0]
    assert (evil["name"], evil["variables"], evil["problem"]) == ("evil", [{"name": "n", "default": "(expression)"}],
                                                                  None)
    assert evil["pinned"] == ['--max-num-seqs={{ vars.n | default("x" * 10**10) }}', '--x={{ "y" | center(10**10) }}',
                              '--y={{ "z" * 10**9 }}']


def test_the_same_template_still_stops_a_spec_at_its_first_limit(gsg, tmp_path):
    """The neighbour: rendering it is GSG011 naming the template's line and the limit."""
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "evil.yaml.j2").write_text(EVIL)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(
        "name: a\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nbackend: vLLM\n"
        "guard:\n  template: evil\n")
    result = gsg("render", "specs", "--offline", "--templates", "tpl", cwd=tmp_path)
    assert result.code == 1
    assert result.err.splitlines()[0] == (
        "specs/a.yaml:6:13: error GSG011 template [a]: template 'evil' stopped at tpl/evil.yaml.j2:2: a repeated "
        "string or list of 10,000,000,000 characters (the sandbox limit is 65,536)")
