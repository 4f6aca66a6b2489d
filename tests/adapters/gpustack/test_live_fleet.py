"""The live fleet from GPUStack's lists: wrongly typed fields are one line naming the field; lists are read page
by page and indexed by id (benchmarks/large_fleet.py: time and memory grow with the items, not clusters x workers)."""

import copy
import json

import httpx
import pytest

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient, Limits
from gpustack_guard.adapters.gpustack.live_fleet import exported_documents, fetch_fleet, fleet_from_api

GiB = 1024**3
WORKER = {"id": 11, "name": "gpu-a", "cluster_id": 1, "state": "ready", "labels": {"gpu": "a6000"},
          "system_reserved": {"ram": 0, "vram": 0},
          "status": {"gpu_devices": [{"index": 0, "vendor": "nvidia", "type": "cuda", "name": "A6000",
                                      "memory": {"total": 48 * GiB, "used": GiB, "allocated": 0}}]}}
INSTANCE = {"id": 21, "name": "m-1", "model_id": 5, "model_name": "m", "cluster_id": 1, "worker_name": "gpu-a",
            "state": "running", "gpu_indexes": [0], "computed_resource_claim": {"vram": {"0": 10 * GiB}}}


def fleet(workers=None, instances=None, clusters=None):
    return fleet_from_api(clusters or [{"id": 1, "name": "prod"}], workers or [WORKER], instances or [INSTANCE],
                          [{"id": 5, "name": "m"}], "http://gpustack.test", "v2.3.0")


def changed(base: dict, dotted: str, value):
    item = copy.deepcopy(base)
    target = item
    *parents, last = dotted.split(".")
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return item


def test_a_well_formed_fleet():
    found = fleet()
    worker = found.clusters[0].workers[0]
    assert (worker.name, worker.labels, worker.gpus[0].memory.total, worker.gpus[0].memory.used) == \
        ("gpu-a", {"gpu": "a6000"}, 48 * GiB, GiB)
    assert found.clusters[0].instances[0].claims == {0: 10 * GiB}


@pytest.mark.parametrize("dotted,value,message", [
    ("name", KeyError, "GET /v2/workers: item 0: field 'name' is missing or null, expected text"),
    ("name", 7, "GET /v2/workers: item 0: field 'name' is an integer, expected text"),
    ("cluster_id", "1", "GET /v2/workers: item 0: field 'cluster_id' is text, expected an integer"),
    ("labels", ["a"], "GET /v2/workers: item 0: field 'labels' is a list, expected an object"),
    ("labels", {"gpu": 1}, "GET /v2/workers: item 0: field 'labels.gpu' is an integer, expected text"),
    ("status", "ok", "GET /v2/workers: item 0: field 'status' is text, expected an object"),
    ("status.gpu_devices", {"0": {}}, "GET /v2/workers: item 0: field 'status.gpu_devices' is an object, "
                                      "expected a list"),
    ("status.gpu_devices.0.memory.total", "48GiB", "GET /v2/workers: item 0: field "
                                                   "'status.gpu_devices[0].memory.total' is text, expected an integer"),
    ("status.gpu_devices.0.memory.used", -1, "GET /v2/workers: item 0: field 'status.gpu_devices[0].memory.used' "
                                             "is an integer, expected an integer >= 0"),
    ("status.gpu_devices.0.index", True, "GET /v2/workers: item 0: field 'status.gpu_devices[0].index' is a "
                                         "boolean, expected an integer"),
    ("system_reserved.vram", 1.5, "GET /v2/workers: item 0: field 'system_reserved.vram' is a number, expected "
                                  "an integer"),
])
def test_a_wrongly_typed_worker_field_is_named(dotted, value, message):
    with pytest.raises(ApiError) as exc:
        fleet(workers=[changed(WORKER, dotted, value)])
    assert str(exc.value) == message


@pytest.mark.parametrize("dotted,value,message", [
    ("gpu_indexes", [0, "1"], "GET /v2/model-instances: item 0: field 'gpu_indexes[1]' is text, expected an "
                              "integer >= 0"),
    ("computed_resource_claim.vram", {"gpu0": 1}, "GET /v2/model-instances: item 0: field "
                                                  "'computed_resource_claim.vram.gpu0' is text, expected a GPU "
                                                  "index as key"),
    ("restart_count", "2", "GET /v2/model-instances: item 0: field 'restart_count' is text, expected an integer"),
    ("distributed_servers", {"subordinate_workers": [{"worker_name": 3}]},
     "GET /v2/model-instances: item 0: field 'distributed_servers.subordinate_workers[0].worker_name' is an "
     "integer, expected text"),
])
def test_a_wrongly_typed_instance_field_is_named(dotted, value, message):
    with pytest.raises(ApiError) as exc:
        fleet(instances=[changed(INSTANCE, dotted, value)])
    assert str(exc.value) == message


def test_a_cluster_without_a_name_is_named():
    with pytest.raises(ApiError, match=r"^GET /v2/clusters: item 0: field 'name' is missing or null, expected "
                                       r"text$"):
        fleet(clusters=[{"id": 1}])


@pytest.mark.parametrize("text,message", [
    ("name: [a\n", "POST /v2/models/export: the answer is not valid YAML at line 2: "),  # then libyaml's words
    ("name: a\n---\n- b\n", "POST /v2/models/export: document 1 is a list, expected an object"),
    ("backend: vLLM\n", "POST /v2/models/export: document 0: field 'name' is missing or null, expected text"),
    ("name: a\nenv: [A=1]\n", "POST /v2/models/export: document 0: field 'env' is a list, expected an object"),
    ("name: a\nbackend_parameters: --x\n", "POST /v2/models/export: document 0: field 'backend_parameters' is "
                                          "text, expected a list"),
    ("a: &a [x, x]\nb: [" + ", ".join(["*a"] * 1001) + "]\n", "POST /v2/models/export: more than 1000 YAML aliases: not an export"),
])
def test_a_broken_export_is_one_line(text, message):
    with pytest.raises(ApiError) as exc:
        exported_documents(text)
    assert str(exc.value) == message or message.endswith(": ") and str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


class PagedGPUStack:
    """Serves /v2 lists of generated items page by page, never holding a whole list as JSON."""

    def __init__(self, clusters: int, workers: int, instances: int):
        self.counts = {"/v2/clusters": clusters, "/v2/workers": workers, "/v2/model-instances": instances,
                       "/v2/models": 10}
        self.workers_per_cluster = workers // clusters
        self.requests = 0

    def item(self, path: str, i: int) -> dict:
        if path == "/v2/clusters":
            return {"id": i + 1, "name": f"c{i:04d}"}
        if path == "/v2/workers":
            return {**WORKER, "id": i + 1, "name": f"w{i:06d}", "cluster_id": i // self.workers_per_cluster + 1}
        if path == "/v2/models":
            return {"id": i + 1, "name": f"m{i}"}
        worker = i % self.counts["/v2/workers"]
        return {**INSTANCE, "id": i, "name": f"m-{i}", "model_id": i % 10 + 1, "worker_name": f"w{worker:06d}",
                "cluster_id": worker // self.workers_per_cluster + 1}

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        path = request.url.path
        if path == "/version":
            return httpx.Response(200, json={"version": "v2.3.0"})
        page, per_page = int(request.url.params["page"]), int(request.url.params["perPage"])
        total = self.counts[path]
        items = [self.item(path, i) for i in range((page - 1) * per_page, min(page * per_page, total))]
        return httpx.Response(200, content=json.dumps({"items": items, "pagination": {
            "page": page, "perPage": per_page, "total": total, "totalPage": -(-total // per_page)}}).encode())


def test_paged_lists_build_every_cluster_worker_and_instance():
    """20,000 instances on 2,000 workers in 10 clusters, read in pages of 1,000 (benchmarks/large_fleet.py times
    200,000 on 20,000: a timed target belongs in a benchmark, not in a test)."""
    server = PagedGPUStack(clusters=10, workers=2_000, instances=20_000)
    client = GPUStackClient("http://gpustack.test", "key", transport=httpx.MockTransport(server.handle),
                            limits=Limits(page_size=1000))
    found, models = fetch_fleet(client, "v2.3.0")
    assert len(found.clusters) == 10 and len(models) == 10
    assert sum(len(c.workers) for c in found.clusters) == 2_000
    assert sum(len(c.instances) for c in found.clusters) == 20_000
    assert [w.name for w in found.clusters[3].workers[:2]] == ["w000600", "w000601"]
    assert server.requests == 1 + 1 + 2 + 20  # clusters, models, workers and instances in pages of 1000
