"""The console entry leaves with os._exit after flushing (no interpreter teardown, issue 34): a real process must
still deliver every byte, the exit code, library atexit handlers and running non-daemon threads, as before."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ["validate", "specs/", "--fleet", "examples/fleet.yaml", "--offline"]


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GSG_OUTPUT", "GITHUB_ACTIONS")}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, env=env, timeout=30)


def console(*args: str, prelude: str = "") -> subprocess.CompletedProcess:
    """`python -m gpustack_guard ARGS` with `prelude` run first in the same process."""
    return run_python(f"{prelude}\nimport sys\nsys.argv = ['gsg', *sys.argv[1:]]\n"
                      "from gpustack_guard.cli import entry\nentry()\n", *args)


def test_the_console_delivers_every_byte_and_the_exit_code_main_returns(gsg):
    in_process = gsg(*QUICKSTART, "-o", "json", cwd=ROOT)
    child = console(*QUICKSTART, "-o", "json")
    assert child.returncode == in_process.code == 0
    assert child.stdout.decode() == in_process.out  # every byte, though nothing was torn down
    assert json.loads(child.stdout)["summary"]["specs"] == 4
    assert child.stderr.decode().splitlines()[-1] == in_process.err.splitlines()[-1]


def test_an_error_still_exits_1_with_its_one_line():
    child = console("validate", "specs/", "--fleet", "no-such-fleet.yaml", "--offline")
    assert child.returncode == 1
    assert child.stderr.decode().startswith("gsg: error: ") and "no-such-fleet.yaml" in child.stderr.decode()
    assert "Traceback" not in child.stderr.decode()


def test_atexit_handlers_of_libraries_still_run_after_the_output():
    prelude = "import atexit, sys\natexit.register(lambda: sys.stdout.write('handler ran\\n'))"
    child = console(*QUICKSTART, "-o", "text", prelude=prelude)
    assert child.returncode == 0
    assert child.stdout.decode().endswith("handler ran\n")


def test_a_running_non_daemon_thread_is_waited_for():
    # the thread writes only once validate has handed its results over, i.e. after the command's own output
    prelude = ("import threading, time, sys\nimport gpustack_guard.wiring as w\n"
               "def late():\n"
               "    while not w._KEPT_UNTIL_EXIT: time.sleep(0.01)\n"
               "    time.sleep(0.2); sys.stderr.write('thread done\\n')\n"
               "threading.Thread(target=late).start()")
    child = console(*QUICKSTART, "-o", "text", prelude=prelude)
    assert child.returncode == 0
    assert child.stderr.decode().endswith("thread done\n")


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_reader_that_stops_early_gets_no_traceback(output):
    child = subprocess.Popen([sys.executable, "-m", "gpustack_guard", *QUICKSTART, "-o", output], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={k: v for k, v in os.environ.items() if k not in ("GSG_OUTPUT", "GITHUB_ACTIONS")})
    assert child.stdout is not None and child.stderr is not None
    child.stdout.read(5)
    child.stdout.close()  # like `| head -c 5`
    err = child.stderr.read().decode()
    assert child.wait(timeout=30) == 0
    assert "Traceback" not in err and "Exception ignored" not in err


def test_in_process_runs_keep_nothing_until_exit(gsg):
    import gpustack_guard.wiring as wiring

    assert gsg(*QUICKSTART, "-o", "json", cwd=ROOT).code == 0
    assert wiring._KEPT_UNTIL_EXIT == [] and wiring._exit_without_teardown is False


def test_keep_until_exit_holds_results_only_once_the_entry_asked(monkeypatch):
    import gpustack_guard.wiring as wiring

    kept: list[object] = []
    monkeypatch.setattr(wiring, "_KEPT_UNTIL_EXIT", kept)
    wiring.keep_until_exit("report")
    assert kept == []
    monkeypatch.setattr(wiring, "_exit_without_teardown", True)
    wiring.keep_until_exit("docs", "report")
    assert kept == ["docs", "report"]
