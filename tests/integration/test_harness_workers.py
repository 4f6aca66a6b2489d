"""The harness waits for the simulated workers within an explicit limit, restarts a lagging one once, and stops
naming the workers still not ready (runs in the unit suite: a fake server, real processes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402


class _Server:
    """GET /v2/workers as GPUStack answers it; `ready` decides which names show as ready, by the count of
    processes started so far for that name."""

    def __init__(self, h: harness.Harness, ready_after_starts: dict[str, int | None]):
        self.harness, self.ready_after_starts = h, ready_after_starts
        self.fail_next = 1  # a busy server's first answer is a 503: one more poll, not the end

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.fail_next:
            self.fail_next -= 1
            return httpx.Response(503, text="busy")
        items = []
        for name, needed in self.ready_after_starts.items():
            starts = len(list(self.harness.root.glob(f"worker-{name}*.log")))
            items.append({"name": name, "state": "ready" if needed is not None and starts >= needed else "not_ready"})
        return httpx.Response(200, json={"items": items})


@pytest.fixture
def h(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "WORKERS_READY_SECONDS", 0.3)
    monkeypatch.setattr(harness, "WORKER_POLL_SECONDS", 0.02)
    made = harness.Harness(root=tmp_path / "root")
    made.root.mkdir()
    yield made
    made.stop()


def _serve(h, monkeypatch, ready_after_starts):
    server = _Server(h, ready_after_starts)
    monkeypatch.setattr(h, "api", lambda: httpx.Client(base_url="http://gpustack.test",
                                                       transport=httpx.MockTransport(server.handle)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


def test_a_worker_not_ready_in_time_is_restarted_once_and_then_counts(h, monkeypatch):
    _serve(h, monkeypatch, {"gpu-a": 1, "gpu-d": 2})  # gpu-d is ready only after its restart
    h.await_workers({"gpu-a": ["sleep", "600"], "gpu-d": ["sleep", "600"]})
    assert sorted(p.name for p in h.root.glob("worker-*.log")) == [
        "worker-gpu-a.log", "worker-gpu-d.log", "worker-gpu-d.restart-1.log"]
    assert len(h.pids) == 2 and all(_alive(pid) for pid in h.pids)  # the first gpu-d process was ended


def test_a_worker_never_ready_stops_the_run_naming_it_its_state_and_its_log(h, monkeypatch):
    _serve(h, monkeypatch, {"gpu-a": 1, "gpu-d": None})
    with pytest.raises(RuntimeError) as stopped:
        h.await_workers({"gpu-a": ["sleep", "600"], "gpu-d": ["sleep", "600"]})
    assert str(stopped.value) == "workers not ready after 0.3s and 1 restart(s): gpu-d (not_ready; log: empty)"
