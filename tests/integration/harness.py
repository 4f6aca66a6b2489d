"""A real GPUStack 2.3.0 server on loopback, with simulated workers shaped like examples/fleet.yaml.

Installs gpustack in its own virtualenv (cached under ~/.cache/gsg-it), starts PostgreSQL and the server on
127.0.0.1, creates an API key with a fixed value, a cluster and the workers, and tears everything down by PID.
Nothing leaves loopback: Hugging Face is offline and the models' config.json files are seeded from gsg's catalog.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GPUSTACK_VERSION = "2.3.0"
API_KEY = "gsg-it-fixed-key-0123456789abcdef"
ADMIN_PASSWORD = "Gsg-it-admin-123"
ARCHITECTURES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
                 "mistral": "MistralForCausalLM"}
SNAPSHOT = "0000000000000000000000000000000000000001"
# A simulated worker registers and reports ready within ~10 s; a loaded CI machine once took longer than this for
# one of four (gpu-d): a worker not ready by then is restarted once (a new process registers it again), and the
# wait begins anew; after that, the run stops naming each worker still not ready, its state and its log's end.
WORKERS_READY_SECONDS = 90.0
WORKER_RESTARTS = 1
WORKER_POLL_SECONDS = 1.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message: str) -> None:
    print(f"[gsg-it] {message}", file=sys.stderr, flush=True)


_LIVE: list[Harness] = []  # started and not yet stopped: torn down on SIGTERM/SIGHUP and at exit too


def _stop_all(*_args) -> None:
    for harness in list(_LIVE):
        harness.stop()


def _on_signal(signum, _frame) -> None:
    """A killed test run (CI timeout, Ctrl-C twice, kill) still stops PostgreSQL and the servers it started."""
    _stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _guard_process() -> None:
    if getattr(_guard_process, "done", False):
        return
    atexit.register(_stop_all)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    _guard_process.done = True  # type: ignore[attr-defined]


class Harness:
    def __init__(self, root: Path | None = None, cache: Path | None = None):
        self.root = root or Path(tempfile.mkdtemp(prefix="gsg-it-"))
        self.cache = cache or Path(os.environ.get("GSG_IT_CACHE", Path.home() / ".cache" / "gsg-it"))
        self.venv = self.cache / f"venv-gpustack-{GPUSTACK_VERSION}"
        self.pids: list[int] = []
        self._processes: dict[int, subprocess.Popen] = {}  # to reap: a zombie leader keeps its group "alive"
        self.pg_bin: Path | None = None
        self.pg_data = self.root / "pgdata"
        self.api_port = free_port()
        self.url = f"http://127.0.0.1:{self.api_port}"
        self.cluster_id: int | None = None
        self._stopped = False

    # --- lifecycle ---------------------------------------------------------------------------------------
    def start(self, repos: list[str]) -> Harness:
        started = time.monotonic()
        _guard_process()
        _LIVE.append(self)
        self._install()
        self._postgres()
        self._server()
        self._seed_hf_cache(repos)
        self._api_key()
        self._cluster_and_workers()
        log(f"GPUStack {GPUSTACK_VERSION} ready at {self.url} in {time.monotonic() - started:.0f}s")
        return self

    def stop(self) -> None:
        if self in _LIVE:
            _LIVE.remove(self)
        if self._stopped:
            return
        self._stopped = True
        for pid in reversed(self.pids):
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 15
        for pid in self.pids:
            while time.monotonic() < deadline:
                if pid in self._processes:
                    self._processes[pid].poll()
                try:
                    os.killpg(pid, 0)
                except (ProcessLookupError, PermissionError):
                    break
                time.sleep(0.2)
            else:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.pids.clear()
        if self.pg_bin and (self.pg_data / "postmaster.pid").exists():
            self._as_postgres([str(self.pg_bin / "pg_ctl"), "-D", str(self.pg_data), "-m", "immediate", "stop"],
                              check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    # --- steps -------------------------------------------------------------------------------------------
    def _install(self) -> None:
        stamp = self.venv / ".gsg-complete"
        if stamp.exists():
            return
        log(f"installing gpustack=={GPUSTACK_VERSION} into {self.venv} (cached for later runs)")
        shutil.rmtree(self.venv, ignore_errors=True)  # a half-finished install is never reused
        self.venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        done = subprocess.run([str(self.venv / "bin" / "pip"), "install", "-q", f"gpustack=={GPUSTACK_VERSION}"],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError("pip install gpustack failed:\n" + done.stderr[-2000:])
        stamp.write_text(GPUSTACK_VERSION)

    def _as_postgres(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess:
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        return subprocess.run(argv, check=check, capture_output=True, text=True)

    def _postgres(self) -> None:
        candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
        if not candidates:  # not on this image: Debian's package, from the package registry CI may reach
            subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, capture_output=True)
            candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
        self.pg_bin = candidates[-1]
        self.root.mkdir(parents=True, exist_ok=True)
        self.pg_data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.pg_data, "postgres")
        self.pg_data.chmod(0o700)
        port = free_port()
        self._as_postgres([str(self.pg_bin / "initdb"), "-D", str(self.pg_data), "-U", "postgres", "--auth=trust",
                           "-E", "UTF8"])
        self._as_postgres([str(self.pg_bin / "pg_ctl"), "-D", str(self.pg_data), "-l", str(self.pg_data / "log"),
                           "-w", "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {self.pg_data}", "start"])
        for sql in ("CREATE ROLE gpustack LOGIN PASSWORD 'gpustack'", "CREATE DATABASE gpustack OWNER gpustack"):
            subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", sql],
                           check=True, capture_output=True)
        self.database_url = f"postgresql://gpustack:gpustack@127.0.0.1:{port}/gpustack?sslmode=disable"

    def _spawn(self, argv: list[str], logfile: Path, env: dict | None = None) -> int:
        handle = logfile.open("w")
        process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                                   start_new_session=True, cwd=self.root)
        self.pids.append(process.pid)
        self._processes[process.pid] = process
        return process.pid

    def _server(self) -> None:
        self.data_dir = self.root / "data"
        env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
        self._spawn([str(self.venv / "bin" / "python"), str(HERE / "loopback.py"), "start",
                     "--data-dir", str(self.data_dir), "--database-url", self.database_url,
                     "--api-port", str(self.api_port), "--port", str(free_port()), "--proxy-port", str(free_port()),
                     "--gateway-mode", "disabled", "--disable-metrics", "--disable-builtin-observability",
                     "--disable-update-check", "--advertise-address", "127.0.0.1",
                     "--bootstrap-password", ADMIN_PASSWORD], self.root / "server.log", env)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise RuntimeError("GPUStack did not become ready:\n" + (self.root / "server.log").read_text()[-3000:])

    def _seed_hf_cache(self, repos: list[str]) -> None:
        """config.json per repo, written from gsg's catalog (after the first start: a migration moves caches)."""
        sys.path.insert(0, str(REPO))
        from gpustack_guard.adapters.model_sources.catalog import catalog_configs, catalog_key

        catalog = catalog_configs()
        for repo in repos:
            name, config = catalog[catalog_key(repo)]
            config = {"architectures": [ARCHITECTURES[config["model_type"]]], "hidden_act": "silu",
                      "rms_norm_eps": 1e-5, "rope_theta": 500000.0, **config}
            folder = self.data_dir / "cache" / "huggingface" / f"models--{repo.replace('/', '--')}"
            (folder / "refs").mkdir(parents=True, exist_ok=True)
            (folder / "refs" / "main").write_text(SNAPSHOT)
            (folder / "snapshots" / SNAPSHOT).mkdir(parents=True, exist_ok=True)
            (folder / "snapshots" / SNAPSHOT / "config.json").write_text(json.dumps(config))

    def _api_key(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            client.post("/auth/login", data={"username": "admin", "password": ADMIN_PASSWORD}).raise_for_status()
            client.post("/v2/api-keys", json={"name": "gsg-it", "custom": API_KEY}).raise_for_status()

    def mark_running(self) -> None:
        """Simulated workers run nothing: report every scheduled instance as running, as a worker would."""
        with self.api() as api:
            for inst in api.get("/v2/model-instances", params={"page": -1}).json()["items"]:
                if inst["state"] != "running" and inst.get("worker_id"):
                    body = {**inst, "state": "running", "port": 40000, "ports": [40000]}
                    api.put(f"/v2/model-instances/{inst['id']}", json=body).raise_for_status()

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)

    def _cluster_and_workers(self) -> None:
        fleet = yaml.safe_load((REPO / "examples" / "fleet.yaml").read_text())
        cluster = fleet["clusters"][0]
        sys.path.insert(0, str(REPO))
        from gpustack_guard.core.units import parse_size

        with self.api() as api:
            created = api.post("/v2/clusters", json={"name": cluster["name"], "provider": "Docker"})
            created.raise_for_status()
            self.cluster_id = created.json()["id"]
            token = api.get(f"/v2/clusters/{self.cluster_id}/registration-token").json()["token"]
        argvs: dict[str, list[str]] = {}
        for worker in cluster["workers"]:
            argv = [sys.executable, str(HERE / "sim_worker.py"), "--server", self.url, "--token", token,
                    "--name", worker["name"], "--port", str(free_port()), "--interval", "5"]
            for gpu in worker["gpus"]:
                memory = gpu["memory"]
                text = f"{gpu['name']}={parse_size(memory['total'])}"
                if memory.get("used"):
                    text += f":used={parse_size(memory['used'])}"
                argv += ["--gpu", text]
            for key, value in (worker.get("labels") or {}).items():
                argv += ["--label", f"{key}={value}"]
            argvs[worker["name"]] = argv
        self.await_workers(argvs)

    def await_workers(self, argvs: dict[str, list[str]]) -> None:
        """Start the simulated workers (name -> command) and wait until the server shows each ready, within
        WORKERS_READY_SECONDS, restarting the ones not ready WORKER_RESTARTS times (see those constants)."""
        pids = {name: self._spawn(argv, self.root / f"worker-{name}.log") for name, argv in argvs.items()}
        for restart in range(WORKER_RESTARTS + 1):
            states = self._worker_states(list(argvs))
            lagging = sorted(name for name in argvs if states.get(name) != "ready")
            if not lagging:
                return
            if restart == WORKER_RESTARTS:
                break
            shown = ", ".join(f"{name} ({states.get(name, 'not registered')})" for name in lagging)
            log(f"workers not ready after {WORKERS_READY_SECONDS:g}s: {shown}; restarting them")
            for name in lagging:
                self._end(pids[name])
                pids[name] = self._spawn(argvs[name], self.root / f"worker-{name}.restart-{restart + 1}.log")
        ends = []
        for name in lagging:
            logs = sorted(self.root.glob(f"worker-{name}*.log"))
            tail = logs[-1].read_text(errors="replace").strip().splitlines()[-3:] if logs else []
            ends.append(f"{name} ({states.get(name, 'not registered')}; log: {' | '.join(tail) or 'empty'})")
        raise RuntimeError(f"workers not ready after {WORKERS_READY_SECONDS:g}s and {WORKER_RESTARTS} restart(s): "
                           + "; ".join(ends))

    def _worker_states(self, names: list[str]) -> dict[str, str]:
        """Each worker's state as the server shows it, polled until all are ready or WORKERS_READY_SECONDS
        pass (a busy server's failed answer is one more poll, not the end)."""
        states: dict[str, str] = {}
        deadline = time.monotonic() + WORKERS_READY_SECONDS
        with self.api() as api:
            while True:
                try:
                    items = api.get("/v2/workers", params={"page": -1}).json()["items"]
                    states = {w["name"]: w["state"] for w in items}
                except (httpx.HTTPError, ValueError, KeyError, TypeError):
                    pass
                if all(states.get(name) == "ready" for name in names) or time.monotonic() >= deadline:
                    return states
                time.sleep(WORKER_POLL_SECONDS)

    def _end(self, pid: int) -> None:
        """Stop one process group this harness started (SIGTERM, then SIGKILL after 10 s) and forget it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
        process = self._processes.pop(pid, None)
        if process is not None:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
                process.wait(timeout=10)
        if pid in self.pids:
            self.pids.remove(pid)
