"""Start the real `llama-server` on loopback, read the buffers it logs, stop it by PID.

Every process is started on 127.0.0.1 with a free port, waited for with a deadline, and torn down in a finally
(SIGTERM, then SIGKILL after a grace period), so a failing test never leaves a server behind.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 60.0  # a tiny model loads in well under a second; the rest is slack for a busy CI machine
STOP_GRACE_S = 10.0
REQUEST_TIMEOUT_S = 30.0
THREADS = 2  # the CI machine's cores
LOG_VERBOSITY = 4  # the buffer lines are printed at this level only (-lv 4)

# "load_tensors:   CPU_Mapped model buffer size =     3.45 MiB", "llama_kv_cache:        CPU KV buffer size =
# 12.00 MiB", "sched_reserve:        CPU compute buffer size =    10.89 MiB" (llama.cpp prints %8.2f MiB)
BUFFER_LINE = re.compile(r"\b(?P<name>[A-Za-z0-9_]+) (?P<kind>model|KV|compute) buffer size =\s*(?P<mib>\d+\.\d\d) MiB")


@dataclass(frozen=True)
class Buffers:
    """The buffers a run logged, in MiB as printed: name -> size, per kind."""

    model: dict[str, float]
    kv: dict[str, float]
    compute: dict[str, float]


def read_buffers(log: str) -> Buffers:
    """The last size printed for each buffer: the --fit dry run prints the same lines first, with 0.00 MiB."""
    found: dict[str, dict[str, float]] = {"model": {}, "KV": {}, "compute": {}}
    for match in BUFFER_LINE.finditer(log):
        found[match["kind"]][match["name"]] = float(match["mib"])
    return Buffers(found["model"], found["KV"], found["compute"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


class ServerFailed(RuntimeError):
    pass


@dataclass
class RunningServer:
    url: str
    log_path: Path
    pid: int

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_GRACE_S)


def _wait_healthy(process: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
            raise ServerFailed(f"llama-server exited with {process.returncode} before it was ready:\n{tail}")
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise ServerFailed(f"llama-server was not healthy within {START_TIMEOUT_S:.0f} s (log: {log_path})")


@contextmanager
def llama_server(binary: Path, model: Path, args: list[str], log_path: Path) -> Iterator[RunningServer]:
    port = free_port()
    command = [str(binary), "-m", str(model), "--host", LOOPBACK, "--port", str(port), "-lv", str(LOG_VERBOSITY),
               "-t", str(THREADS), "--metrics", *args]
    with log_path.open("w") as log:
        log.write(f"# {' '.join(command[1:])}\n")
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        url = f"http://{LOOPBACK}:{port}"
        _wait_healthy(process, url, log_path)
        yield RunningServer(url, log_path, process.pid)
    finally:
        _stop(process)


def built_binary_or_skip():
    """The built llama-server for a test module's fixture: skipped where it is not built, a failure in CI
    (CI=true), where .ci/run builds it first."""
    import os

    import pytest
    from llamacpp_build import is_built, server_binary

    if is_built():
        return server_binary()
    hint = "build it with: python tests/integration/llamacpp_build.py"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but llama-server is not built at {server_binary()} ({hint})")
    pytest.skip(f"llama-server is not built at {server_binary()} ({hint})")
