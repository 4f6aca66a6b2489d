"""The integration harness tears its processes down on SIGTERM (issue 13: a killed test run left a `postgres`
running). Checked without PostgreSQL or GPUStack: a harness that spawned one long-lived child in its own session,
as it spawns the server, is sent SIGTERM."""

import os
import signal
import subprocess
import sys
import time

from conftest import REPO

SCRIPT = """
import sys, time
sys.path.insert(0, {integration!r})
from harness import Harness
harness = Harness()
harness.stop_on_exit()
(harness.root).mkdir(parents=True, exist_ok=True)
pid = harness._spawn([sys.executable, "-c", "import time; time.sleep(120)"], harness.root / "child.log")
print(pid, harness.root, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for its reaper is gone for our purpose
        return stat.read().split()[2] != "Z"


def test_sigterm_to_a_test_run_tears_the_harness_down():
    runner = subprocess.Popen([sys.executable, "-c", SCRIPT.format(integration=str(REPO / "tests" / "integration"))],
                              stdout=subprocess.PIPE, text=True)
    child, root = runner.stdout.readline().split()
    child = int(child)
    assert _alive(child)
    runner.send_signal(signal.SIGTERM)
    assert runner.wait(timeout=30) == -signal.SIGTERM  # still ends by the signal, after the teardown
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child) and not os.path.exists(root)
