"""Round 27 of hostile fleets, snapshot and live, each a case gsg mishandled before, with its neighbours: gpu_ids
pinned to a worker that is not ready (not_ready, unreachable, maintenance) were sized on that GPU and passed, though
GPUStack's StatusFilter places on ready workers only; a snapshot worker state GPUStack never writes ('Ready',
' ready', 'online') dropped the worker from automatic placement without a word; a GPU name with a look-alike or
full-width letter quietly missed its CUDA total row (profiles.CUDA_TOTALS), and one of 10,000 characters or with
an escape sequence was taken as a device name."""

from __future__ import annotations

import copy

import pytest
from support import REPO

from gpustack_guard.adapters.gpustack.client import ApiError
from gpustack_guard.adapters.gpustack.live_fleet import fleet_from_api

FLEET = (REPO / "examples" / "fleet.yaml").read_text(encoding="utf-8")
GPU_A = "      - name: gpu-a\n"
DOWN_FIX = "    fix: list GPUs of ready workers, or bring the worker back first"


def _down(gid: str, state: str) -> str:
    return (f"gpu id '{gid}' is on worker 'gpu-a' whose state is '{state}': GPUStack places on ready workers only, "
            "so the model stays pending and its memory was not checked")


def _snapshot(tmp_path, text: str) -> str:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _one_line(result) -> str:
    lines = [line for line in result.err.splitlines() if line.startswith("gsg: error:")]
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


# --- gpu_ids on a worker that is not ready ------------------------------------------------------------------------

@pytest.mark.parametrize("state", ["not_ready", "unreachable", "maintenance"])
def test_gpu_ids_on_a_snapshot_worker_that_is_not_ready_are_findings(gsg, tmp_path, state):
    fleet = _snapshot(tmp_path, FLEET.replace(GPU_A, f"{GPU_A}        state: {state}\n"))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert result.code == 1
    columns = (13, 27, 41, 55)  # llama-70b's four gpu_ids on line 10
    assert result.out.splitlines() == [
        line for index, column in enumerate(columns)
        for line in (f"specs/llama-70b.yaml:10:{column}: error GSG021 worker-selector [llama-70b]: "
                     f"{_down(f'gpu-a:cuda:{index}', state)}", DOWN_FIX)]
    assert result.err == "gsg: 4 errors, 0 warnings, 0 notes in 4 specs (4 files)\n"


def test_the_same_snapshot_with_the_worker_ready_passes(gsg, tmp_path):
    fleet = _snapshot(tmp_path, FLEET.replace(GPU_A, f"{GPU_A}        state: ready\n"))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert (result.code, result.err) == (0, "gsg: 0 errors, 1 warning, 0 notes in 4 specs (4 files)\n")


@pytest.mark.parametrize("state", ["not_ready", "Unreachable", "MAINTENANCE"])
def test_gpu_ids_on_a_live_worker_that_is_not_ready_are_findings(gsg, fake, state):
    next(w for w in fake.workers if w["name"] == "gpu-a")["state"] = state
    result = gsg("validate", "specs/", cwd=REPO)
    assert result.code == 1
    assert [line for line in result.out.splitlines() if "GSG021" in line] == [
        f"specs/llama-70b.yaml:10:{column}: error GSG021 worker-selector [llama-70b]: "
        f"{_down(f'gpu-a:cuda:{index}', state.lower())}" for index, column in enumerate((13, 27, 41, 55))]


# --- snapshot worker states GPUStack never writes -----------------------------------------------------------------

@pytest.mark.parametrize("state", ["Ready", "READY", "' ready'", "online", "''"])
def test_a_snapshot_state_gpustack_never_writes_is_one_line(gsg, tmp_path, state):
    fleet = _snapshot(tmp_path, FLEET.replace(GPU_A, f"{GPU_A}        state: {state}\n"))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    shown = state.strip("'")
    assert result.code == 1 and result.out == ""
    assert _one_line(result) == (
        f"gsg: error: {fleet}:8:16: 'clusters.0.workers.0.state': worker 'gpu-a' has state '{shown}', not one of "
        "GPUStack's (not_ready, ready, unreachable, pending, provisioning, initializing, deleting, error, maintenance)")


# --- GPU names: look-alike letters, escapes, absurd lengths -------------------------------------------------------

A6000 = "NVIDIA RTX A6000"
NAME_LINE = 10  # gpu-a's first GPU in examples/fleet.yaml
ASCII_ONLY = "device names are printable ASCII, and a look-alike letter would miss the card's CUDA total"


@pytest.mark.parametrize("name,why", [
    ('"NVIDIA RTX \\u04106000"', f"GPU name has the character U+0410: {ASCII_ONLY}"),  # Cyrillic A
    ('"NVIDIA RTX A6\\u03bf00"', f"GPU name has the character U+03BF: {ASCII_ONLY}"),  # Greek omicron
    ('"\\uff2e\\uff36\\uff29\\uff24\\uff29\\uff21 RTX A6000"', f"GPU name has the character U+FF2E: {ASCII_ONLY}"),
    ('"NVIDIA RTX A6000\\e[2J"', f"GPU name has the character U+001B: {ASCII_ONLY}"),
    ('"NVIDIA RTX A6000\\u200b"', f"GPU name has the character U+200B: {ASCII_ONLY}"),  # zero-width space
    ("x" * 257, "a GPU name of 257 characters is not a device name (at most 256)"),
    ("x" * 10_000, "a GPU name of 10,000 characters is not a device name (at most 256)"),
])
def test_a_snapshot_gpu_name_that_is_not_a_device_name_is_one_line(gsg, tmp_path, name, why):
    fleet = _snapshot(tmp_path, FLEET.replace(f"{{index: 0, name: {A6000},", f"{{index: 0, name: {name},", 1))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert result.code == 1 and result.out == ""
    assert _one_line(result) == f"gsg: error: {fleet}:{NAME_LINE}:30: 'clusters.0.workers.0.gpus.0.name': {why}"


@pytest.mark.parametrize("name", ["''", "x" * 256, "NVIDIA H100 80GB HBM3", "'Apple M2 Ultra (unified)'"])
def test_gpu_names_at_the_bounds_load(gsg, tmp_path, name):
    fleet = _snapshot(tmp_path, FLEET.replace(f"{{index: 0, name: {A6000},", f"{{index: 0, name: {name},", 1))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert (result.code, result.err) == (0, "gsg: 0 errors, 1 warning, 0 notes in 4 specs (4 files)\n")


WORKER = {"id": 11, "name": "gpu-a", "cluster_id": 1, "state": "ready", "labels": {},
          "status": {"gpu_devices": [{"index": 0, "vendor": "nvidia", "type": "cuda", "name": "NVIDIA L40S",
                                      "memory": {"total": 46068 * 2**20, "used": 0, "allocated": 0}}]}}


def _live(name: str):
    worker = copy.deepcopy(WORKER)
    worker["status"]["gpu_devices"][0]["name"] = name
    return fleet_from_api([{"id": 1, "name": "prod"}], [worker], [], [], "http://gpustack.test", "v2.3.0")


@pytest.mark.parametrize("name", ["NVIDIA \u041b40S", "NVIDIA L40S\x1b[31m", "L40S " * 2000])
def test_a_live_server_s_gpu_names_are_its_own_data(name):
    """A live name is the server's text, escaped where shown (tests/cli/test_hostile_text.py): refusing it would
    stop plan, drift and apply for a label. Only a snapshot, edited by hand, must hold device names."""
    (gpu,) = _live(name).clusters[0].workers[0].gpus
    assert gpu.name == name


def test_a_long_live_gpu_name_is_cut_where_a_finding_names_the_gpu(gsg, fake, tmp_path):
    fake.workers[2]["status"]["gpu_devices"][0]["name"] = "L40S " * 2000  # gpu-c, llama-8b's first GPU
    fake.workers[2]["status"]["gpu_devices"][0]["memory"]["used"] = 20 * 2**30
    result = gsg("validate", "specs/", cwd=REPO)
    (line,) = [line for line in result.out.splitlines() if "GSG035" in line]
    assert result.code == 1 and len(line) < 400
    assert ("GPU gpu-c:cuda:0 (L40S L40S L40S L40S L40S L40S L40S L40S L40S L40S L40S L40S …(10,000 chars), 23.99 "
            "GiB) would carry") in line


@pytest.mark.parametrize("name", ["", "NVIDIA L40S", "x" * 256])
def test_live_gpu_names_at_the_bounds_load(name):
    (gpu,) = _live(name).clusters[0].workers[0].gpus
    assert gpu.name == name


# --- GPU types: the middle of worker:type:index ------------------------------------------------------------------

TYPE_WHY = "is not a device type such as cuda or rocm (GPU ids are worker:type:index)"


@pytest.mark.parametrize("kind,shown", [("''", ""), ("'cu:da'", "cu:da"), ("' cuda'", " cuda"),
                                        ('"cuda\\t"', "cuda\\t"), ("x" * 65, "x" * 64 + "…(65 chars)")])
def test_a_snapshot_gpu_type_no_gpu_id_can_name_is_one_line(gsg, tmp_path, kind, shown):
    fleet = _snapshot(tmp_path, FLEET.replace(f"{{index: 0, name: {A6000},", f"{{index: 0, type: {kind}, "
                                                                              f"name: {A6000},", 1))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert result.code == 1 and result.out == ""
    assert _one_line(result) == (f"gsg: error: {fleet}:{NAME_LINE}:30: 'clusters.0.workers.0.gpus.0.type': Value "
                                 f"error, GPU type '{shown}' {TYPE_WHY}")


def test_two_workers_whose_gpu_ids_would_be_one_are_refused(gsg, tmp_path):
    """Before, worker 'a' with type 'b:c' and worker 'a:b' with type 'c' both had GPU id a:b:c:0: the second hid
    the first's GPU, and a spec listing it was checked against the other card."""
    fleet = _snapshot(tmp_path, "clusters:\n  - name: prod\n    workers:\n"
                                "      - name: a\n        gpus: [{index: 0, type: 'b:c', memory: {total: 80GiB}}]\n"
                                "      - name: a:b\n        gpus: [{index: 0, type: c, memory: {total: 24GiB}}]\n")
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert result.code == 1 and result.out == ""
    assert _one_line(result) == (f"gsg: error: {fleet}:5:33: 'clusters.0.workers.0.gpus.0.type': Value error, "
                                 f"GPU type 'b:c' {TYPE_WHY}")


@pytest.mark.parametrize("kind", ["rocm", "cann", "musa", "mps", "npu_v2"])
def test_other_vendors_gpu_types_load_and_are_not_cuda(gsg, tmp_path, kind):
    fleet = _snapshot(tmp_path, FLEET.replace(f"{{index: 0, name: {A6000},", f"{{index: 0, type: {kind}, "
                                                                              f"name: {A6000},", 1))
    result = gsg("validate", "specs/", "--fleet", fleet, "--offline", cwd=REPO)
    assert result.code == 1
    known = sorted([f"gpu-a:{kind}:0", "gpu-a:cuda:1", "gpu-a:cuda:2", "gpu-a:cuda:3"]
                   + [f"gpu-b:cuda:{i}" for i in range(4)])
    assert result.out.splitlines()[0] == ("specs/llama-70b.yaml:10:13: error GSG020 gpu-id-unknown [llama-70b]: gpu "
                                          f"id 'gpu-a:cuda:0' is not in cluster 'prod' (known: {', '.join(known)}…)")


@pytest.mark.parametrize("kind,shown", [("", ""), ("cu:da", "cu:da")])
def test_a_live_gpu_type_no_gpu_id_can_name_is_one_line(kind, shown):
    worker = copy.deepcopy(WORKER)
    worker["status"]["gpu_devices"][0]["type"] = kind
    with pytest.raises(ApiError) as exc:
        fleet_from_api([{"id": 1, "name": "prod"}], [worker], [], [], "http://gpustack.test", "v2.3.0")
    assert str(exc.value) == (f"GET /v2/workers: item 0: field 'status.gpu_devices[0].type' is out of range: value "
                              f"error, GPU type '{shown}' {TYPE_WHY}")
