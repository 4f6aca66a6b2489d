"""Round 24 of hostile spec trees for the offline commands, each the case gsg mishandled before, with its
neighbour, grouped by class."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

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


# --- output files: a target that is not a regular file, or is one of the run's inputs -------------------------

FLEET = str(REPO / "examples" / "fleet.yaml")
VALIDATE = ("validate", "specs", "--fleet", FLEET, "--offline")
ADVISE = ("advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", str(REPO / "workloads" / "chat.yaml"), "--gpus", "1",
          "--gpu-memory", "24GiB", "--offline")


def _folder(path):
    path.mkdir()


def _fifo(path):
    os.mkfifo(path)


def _device_link(path):
    path.symlink_to("/dev/null")  # a link: a regression replaces the link, never the device itself


@pytest.mark.parametrize(("make", "kind"), [(_folder, "a directory"), (_fifo, "a FIFO"),
                                            (_device_link, "a character device")])
@pytest.mark.parametrize("command", [VALIDATE + ("--report", "json=out"), ("render", "specs", "--offline", "--out",
                                                                           "out")])
def test_an_output_path_that_is_not_a_regular_file_is_one_line_and_left_alone(gsg, specs, make, kind, command):
    """The write goes to a temporary file renamed over the target. Before: a folder was an internal error
    (IsADirectoryError), and a FIFO or a device was replaced by a regular file (as root, `--report
    json=/dev/full` turned /dev/full into a file); now the target is looked at first."""
    target = specs.parent / "out"
    make(target)
    before = os.lstat(target)
    result = gsg(*command)
    assert result.code == 1
    assert result.err.splitlines()[-1] == (f"gsg: error: out: is {kind}, not a regular file; gsg writes only "
                                           "regular files; nothing written")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert not [p.name for p in specs.parent.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_advise_emitting_into_a_file_is_one_line(gsg, specs):
    (specs.parent / "taken").write_text("x\n")
    result = gsg(*ADVISE, "--emit-specs", "taken")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "gsg: error: taken/qwen2.5-0.5b-instruct.yaml: cannot write: its folder cannot be made (file exists: a file "
        "in the way?); nothing written")
    assert (specs.parent / "taken").read_text() == "x\n"


@pytest.mark.parametrize(("command", "target", "shown"), [
    (VALIDATE + ("--report", "json=specs/llama-8b.yaml"), "specs/llama-8b.yaml",
     "gsg: error: specs/llama-8b.yaml: --report names a file this run reads; refusing to overwrite it; nothing "
     "written"),
    (("validate", "specs", "--fleet", "fleet.yaml", "--offline", "--report", "text=r.txt", "--report",
      "sarif=./fleet.yaml"), "fleet.yaml",
     "gsg: error: ./fleet.yaml: --report names a file this run reads (as fleet.yaml); refusing to overwrite it; "
     "nothing written"),
    (("render", "specs", "--offline", "--out", "specs/../specs/llama-8b.yaml"), "specs/llama-8b.yaml",
     "gsg: error: specs/../specs/llama-8b.yaml: --out names a file this run reads (as specs/llama-8b.yaml); "
     "refusing to overwrite it; nothing written"),
])
def test_an_output_file_that_is_an_input_is_refused(gsg, specs, command, target, shown):
    """Conflicting flags: the report or the rendered documents written over the spec or fleet they were made
    from (before: exit 0, the spec replaced by a JSON report)."""
    shutil.copy(FLEET, specs.parent / "fleet.yaml")  # a copy: a regression must not write over the repository's
    before = (specs.parent / target).read_bytes()
    result = gsg(*command)
    assert (result.code, result.err.splitlines()[-1]) == (1, shown)
    assert (specs.parent / target).read_bytes() == before
    assert not (specs.parent / "r.txt").exists()  # all or nothing


def test_output_files_new_or_beside_the_inputs_are_written(gsg, specs):
    """The neighbours: a report in a folder not made yet, rendered documents in a new file beside the specs."""
    result = gsg(*VALIDATE, "--report", "json=reports/deep/r.json")
    assert result.code == 0
    assert json.loads((specs.parent / "reports" / "deep" / "r.json").read_text())["format_version"] == "1.1"
    assert gsg("render", "specs", "--offline", "--out", "specs/rendered.yaml").code == 0
    assert (specs / "rendered.yaml").read_text().startswith("name: llama-70b-q4\n")


def _project_file(specs):
    return "specs/gsg.yaml", ()


def _local_template(specs):
    (specs.parent / "tpl").mkdir()
    (specs.parent / "tpl" / "mine.yaml.j2").write_text("pinned: []\n")
    return "tpl/mine.yaml.j2", ("--templates", "tpl")


def _overlay_patch(specs):
    (specs / "overlays" / "prod").mkdir(parents=True)
    (specs / "overlays" / "prod" / "changes.yaml").write_text("name: llama-8b\nreplicas: 2\n")
    return "specs/overlays/prod/changes.yaml", ("--overlay", "prod")


def _bundled_template(specs):
    (specs.parent / "templates").mkdir()  # a templates/ folder beside the specs is on the default search path
    shutil.copy(REPO / "templates" / "vllm-hardened.yaml.j2", specs.parent / "templates")
    return "templates/vllm-hardened.yaml.j2", ()


@pytest.mark.parametrize("make", [_project_file, _local_template, _overlay_patch, _bundled_template])
@pytest.mark.parametrize("command", ["validate", "render"])
def test_no_file_the_run_reads_or_may_read_is_written_over(gsg, specs, make, command):
    """The neighbours of the spec and fleet case: the project file, a template of the search path (given with
    --templates or found beside the specs), an overlay's patch; a report over one would replace it."""
    target, extra = make(specs)
    before = (specs.parent / target).read_bytes()
    flag = "--report" if command == "validate" else "--out"
    args = (VALIDATE + extra + ("--report", f"json={target}") if command == "validate"
            else ("render", "specs", "--offline", *extra, "--out", target))
    result = gsg(*args)
    assert (result.code, result.err.splitlines()[-1]) == (
        1, f"gsg: error: {target}: {flag} names a file this run reads; refusing to overwrite it; nothing written")
    assert (specs.parent / target).read_bytes() == before
