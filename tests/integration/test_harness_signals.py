"""The harness cleans up after a killed test run: SIGTERM stops what it started (runs in the unit suite)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone for our purpose
        return stat.read().split()[2] != "Z"


def test_sigterm_stops_the_processes_a_harness_started(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(HERE)!r})
        import harness
        h = harness.Harness(root=__import__("pathlib").Path({str(tmp_path / "root")!r}))
        h.root.mkdir()
        harness._guard_process()
        harness._LIVE.append(h)
        pid = h._spawn(["sleep", "600"], h.root / "sleep.log")
        print(pid, flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    spawned = int(child.stdout.readline())
    assert _alive(spawned)
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == -signal.SIGTERM  # the default action still ends the run
    deadline = time.monotonic() + 20
    while _alive(spawned) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(spawned)
    assert not (tmp_path / "root").exists()
