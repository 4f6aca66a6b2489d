"""A simulated GPUStack 2.x worker: registers through the real worker API with a GPU inventory and keeps
itself ready (status + heartbeat), answering the server's /healthz probe. Runs nothing. Standard library only.

    python sim_worker.py --server URL --token TOKEN --name gpu-a --port 18390 \
        --gpu "NVIDIA RTX A6000=51527024640" --gpu "NVIDIA RTX A6000=51527024640:used=1610612736" \
        --label gpu=a6000
"""

import argparse
import http.server
import json
import signal
import threading
import time
import urllib.request

GiB = 1 << 30


def parse_gpu(text: str, index: int, worker: str) -> dict:
    name, _, rest = text.partition("=")
    total, *extras = rest.split(":")
    options = dict(e.split("=", 1) for e in extras)
    return {"vendor": "nvidia", "type": "cuda", "index": index, "device_index": index, "device_chip_index": 0,
            "name": name, "uuid": f"GPU-{worker}-{index}", "driver_version": "570.00", "runtime_version": "12.8",
            "compute_capability": "8.6", "arch_family": "ampere", "core": {"total": 10752, "utilization_rate": 0.0},
            "memory": {"total": int(total), "used": int(options.get("used", 0)), "utilization_rate": 0.0,
                       "is_unified_memory": False}, "temperature": 35.0}


def system_status(gpus: list[dict]) -> dict:
    return {"cpu": {"total": 32, "utilization_rate": 2.0},
            "memory": {"total": 256 * GiB, "used": 8 * GiB, "utilization_rate": 3.0, "is_unified_memory": False},
            "swap": {"total": 0, "used": 0},
            "filesystem": [{"name": "/", "mount_point": "/", "mount_from": "/dev/sim", "total": 2000 * GiB,
                            "used": 100 * GiB, "free": 1900 * GiB, "available": 1900 * GiB}],
            "os": {"name": "Ubuntu", "version": "22.04"},
            "kernel": {"name": "Linux", "release": "6.8.0", "version": "sim", "architecture": "x86_64"},
            "uptime": {"uptime": 3600.0, "boot_time": "2026-12-01 00:00:00"},
            "gpu_devices": gpus}


def post(server: str, path: str, token: str, body=None):
    request = urllib.request.Request(server.rstrip("/") + path, method="POST",
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
        return json.loads(raw) if raw else None


REGISTER_ATTEMPTS = 5  # a busy server may drop or time out the first registration; each attempt waits 30 s at most
REGISTER_PAUSE_SECONDS = 2.0


def register(server: str, token: str, body: dict) -> dict:
    """The worker as the server registered it, tried REGISTER_ATTEMPTS times (a worker whose one registration
    failed never showed up, and the harness waited for it in vain)."""
    for attempt in range(1, REGISTER_ATTEMPTS + 1):
        try:
            return post(server, "/v2/workers", token, body)
        except OSError as exc:  # urllib's HTTPError, URLError and timeouts are all OSErrors
            print(f"registration {attempt}/{REGISTER_ATTEMPTS} failed: {exc}", flush=True)
            if attempt == REGISTER_ATTEMPTS:
                raise
            time.sleep(REGISTER_PAUSE_SECONDS)
    raise AssertionError("unreachable")


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        ok = self.path.split("?")[0] == "/healthz"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'"ok"' if ok else b"{}")

    def log_message(self, *args):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gpu", action="append", default=[], help="NAME=BYTES[:used=BYTES], repeatable")
    parser.add_argument("--label", action="append", default=[], help="key=value, repeatable")
    parser.add_argument("--interval", type=float, default=10.0)
    opts = parser.parse_args()

    gpus = [parse_gpu(text, i, opts.name) for i, text in enumerate(opts.gpu)]
    status = system_status(gpus)
    identity = {"hostname": opts.name, "ip": "127.0.0.1", "ifname": "lo", "port": opts.port, "proxy_mode": "direct",
                # system_reserved must not be null (the scheduler reads .vram from it)
                "system_reserved": {"ram": 0, "vram": 0}}
    labels = dict(label.split("=", 1) for label in opts.label)
    worker = register(opts.server, opts.token, {"name": opts.name, "worker_uuid": "", "labels": labels,
                                                "status": status, **identity})
    health = http.server.ThreadingHTTPServer(("127.0.0.1", opts.port), Health)
    threading.Thread(target=health.serve_forever, daemon=True).start()
    # state_message must be present (null) for the server to move the worker from not_ready to ready
    report = {**identity, "worker_uuid": worker["worker_uuid"], "state_message": None, "status": status}
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(json.dumps({"worker_id": worker["id"], "name": worker["name"]}), flush=True)
    while not stop.is_set():
        try:
            post(opts.server, "/v2/worker-status", worker["token"], report)
            post(opts.server, "/v2/worker-heartbeat", worker["token"])
        except OSError as exc:  # the server may be restarting; keep trying
            print(f"status/heartbeat failed: {exc}", flush=True)
        stop.wait(opts.interval)
    health.shutdown()


if __name__ == "__main__":
    main()
