"""The slow `gsg soak` processes of tests/cli/test_soak.py, started once on first use and run in the
background while the module's other tests do. Closed at exit: processes killed, server stopped, files removed."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from support.soak_fakes import FakeServer

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-soak-test-0123456789"


class SoakRuns:
    """A fake server (memory growth) and three real `gsg soak` processes against it: a 3-round soak with --out
    (text), a JSON run, and one interrupted with SIGINT during its second round."""

    def __init__(self):
        self.server = FakeServer("memory-growth", seed=3, api_key=KEY).start_in_thread()
        self.root = Path(tempfile.mkdtemp(prefix="gsg-soak-cli-"))
        self.main_dir, self.interrupted_dir = self.root / "soak", self.root / "interrupted"
        url = self.server.url
        common = ["--url", url, "--model", "qwen3-8b", "--concurrency", "4", "--prompt-tokens", "32",
                  "--max-tokens", "4"]
        self.procs = {
            "soak": self._start(*common, "--rounds", "3", "--round-seconds", "2", "--metrics-url", url + "/metrics",
                                "--out", str(self.main_dir), "--fail-on", "degraded"),
            "json": self._start(*common, "--rounds", "1", "--round-seconds", "0.5", "-o", "json"),
            "interrupted": self._start(*common, "--rounds", "50", "--round-seconds", "2", "--metrics-url",
                                       url + "/metrics", "--out", str(self.interrupted_dir)),
        }
        self._interrupter = threading.Thread(target=self._interrupt, daemon=True)
        self._interrupter.start()
        self._done: dict | None = None

    @staticmethod
    def _start(*args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "gpustack_guard", "soak", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "GSG_API_KEY": KEY}, cwd=REPO)

    def _interrupt(self) -> None:
        proc, deadline = self.procs["interrupted"], time.monotonic() + 60
        while not (self.interrupted_dir / "soak.json").exists() and time.monotonic() < deadline \
                and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(0.3)  # well inside round 2
        proc.send_signal(signal.SIGINT)

    def results(self) -> dict:
        """name -> (exit code, stdout, stderr), once every process has ended."""
        if self._done is None:
            self._interrupter.join(90)
            done = {}
            for name, proc in self.procs.items():
                out, err = proc.communicate(timeout=90)
                done[name] = (proc.returncode, out, err)
            self._done = done
        return self._done

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.server.stop_thread()
        shutil.rmtree(self.root, ignore_errors=True)


_runs: SoakRuns | None = None


def soak_runs() -> SoakRuns:
    global _runs
    if _runs is None:
        _runs = SoakRuns()
        atexit.register(close_soak_runs)
    return _runs


def close_soak_runs() -> None:
    if _runs is not None:
        _runs.close()
