"""`gsg` and `python -m gpustack_guard` start in `__main__.entry`: the collector is tuned before the first library
is imported (issue 34, start-up), with the thresholds main() applies, and the run is the same as before."""

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpustack_guard import __main__ as launcher
from gpustack_guard import wiring

ROOT = Path(__file__).resolve().parents[2]
INTERPRETER_DEFAULT = (2000 if sys.version_info >= (3, 13) else 700, 10, 10)  # gc.get_threshold() at start
QUICKSTART = ["validate", "specs/", "--fleet", "examples/fleet.yaml", "--offline"]
# Records the collector's thresholds when typer and gsg's CLI are first imported, reported at exit (entry() leaves
# with os._exit after the atexit handlers).
WATCH = """
import atexit, gc, sys
seen = {"at start": gc.get_threshold()}
WATCHED = ("typer", "gpustack_guard.cli", "gpustack_guard.console.quick_validate", "pydantic_core")
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED and name not in seen:
            seen[name] = gc.get_threshold()
        return None
sys.meta_path.insert(0, Watch())
atexit.register(lambda: sys.stderr.write(f"seen {sorted(seen.items())}\\n"))
"""


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GSG_OUTPUT", "GITHUB_ACTIONS")}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=30)


def test_the_launcher_and_main_use_the_same_thresholds():
    assert launcher.COLLECTOR_THRESHOLDS == wiring.COLLECTOR_THRESHOLDS == (100_000, 20, 100)
    before = gc.get_threshold()
    try:
        wiring.tune_collector()
        assert gc.get_threshold() == wiring.COLLECTOR_THRESHOLDS
    finally:
        gc.set_threshold(*before)


def test_the_console_script_points_at_the_launcher():
    text = (ROOT / "pyproject.toml").read_text()  # (tomllib is 3.11+; gsg supports 3.10)
    scripts = text.split("[project.scripts]\n", 1)[1].split("\n\n", 1)[0]
    assert scripts == 'gsg = "gpustack_guard.__main__:entry"'


TUNED = (100000, 20, 100)
STARTS = ["from gpustack_guard.__main__ import entry\nentry()",
          "import runpy\nrunpy.run_module('gpustack_guard', run_name='__main__')"]


# The quickstart takes the typer-free path (console/quick_validate.py): no typer at all. `-fFILE` is typer's to read
# (quick_validate leaves attached short values to it): the same run through typer, tuned before typer loads.
PATHS = {"quick": (QUICKSTART, ["gpustack_guard.console.quick_validate", "pydantic_core"]),
         "typer": (["validate", "specs/", "-fexamples/fleet.yaml", "--offline"],
                   ["gpustack_guard.cli", "gpustack_guard.console.quick_validate", "pydantic_core", "typer"])}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("start", STARTS)
def test_the_collector_is_tuned_before_the_first_library_is_imported(start, path):
    argv, imported = PATHS[path]
    child = run_python(f"{WATCH}\nsys.argv = ['gsg', *sys.argv[1:]]\n{start}\n", *argv)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("specs/llama-70b.yaml:16:13: warning GSG033 kv-oversubscribed")
    seen = ", ".join(f"({name!r}, {TUNED})" for name in imported)
    assert child.stderr.splitlines()[-2:] == ["gsg: 0 errors, 1 warning, 0 notes in 4 specs (4 files)",
                                              f"seen [('at start', {INTERPRETER_DEFAULT!r}), {seen}]"]


def test_without_the_launcher_the_default_thresholds_hold_until_main():
    """The watch itself works: cli.entry alone imports typer at the interpreter's default thresholds."""
    child = run_python(f"{WATCH}\nsys.argv = ['gsg', '--version']\nfrom gpustack_guard.cli import entry\nentry()\n")
    assert child.returncode == 0, child.stderr
    default = INTERPRETER_DEFAULT
    assert child.stderr.splitlines()[-1] == \
        f"seen [('at start', {default!r}), ('gpustack_guard.cli', {default!r}), ('typer', {default!r})]"
