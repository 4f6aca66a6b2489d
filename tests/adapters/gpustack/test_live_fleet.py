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


BIG = 10**30  # past 64 bits, well under the digits json can read
MEMORY = "status.gpu_devices.0.memory"


@pytest.mark.parametrize("dotted,value,message", [
    (f"{MEMORY}.total", BIG, "field 'status.gpu_devices[0].memory.total' is an integer of 31 digits, expected a "
                             "64-bit integer"),
    (f"{MEMORY}.total", -BIG, "field 'status.gpu_devices[0].memory.total' is an integer of 31 digits, expected a "
                              "64-bit integer"),
    (f"{MEMORY}.total", -1, "field 'status.gpu_devices[0].memory.total' is an integer, expected an integer >= 0"),
    (f"{MEMORY}.total", float("inf"), "field 'status.gpu_devices[0].memory.total' is an infinite number, expected "
                                      "an integer"),
    (f"{MEMORY}.total", float("nan"), "field 'status.gpu_devices[0].memory.total' is NaN, expected an integer"),
    (f"{MEMORY}.total", 4.8e10, "field 'status.gpu_devices[0].memory.total' is a number, expected an integer"),
    (f"{MEMORY}.allocated", True, "field 'status.gpu_devices[0].memory.allocated' is a boolean, expected an "
                                  "integer"),
    (f"{MEMORY}.allocated", -5, "field 'status.gpu_devices[0].memory.allocated' is an integer, expected an "
                                "integer >= 0"),
    ("status.gpu_devices.0.memory", [48], "field 'status.gpu_devices[0].memory' is a list, expected an object"),
    ("status.gpu_devices", ["A6000"], "field 'status.gpu_devices[0]' is text, expected an object"),
    (f"{MEMORY}.total", 2**46 + 1, "field 'status.gpu_devices[0].memory.total' is out of range: input should be "
                                   "less than or equal to 70368744177664"),
    ("status.gpu_devices.0.index", 1024, "field 'status.gpu_devices[0].index' is out of range: input should be "
                                         "less than or equal to 1023"),
    ("system_reserved.ram", 2**62, "field 'system_reserved.ram' is out of range: input should be less than or "
                                   "equal to 1125899906842624"),
    ("status.gpu_devices.0.index", -1, "field 'status.gpu_devices[0].index' is an integer, expected an integer "
                                       ">= 0"),
    ("status.gpu_devices.0.index", 2**63, "field 'status.gpu_devices[0].index' is an integer of 19 digits, "
                                          "expected a 64-bit integer"),
    ("status.gpu_devices.0.name", {"x": 1}, "field 'status.gpu_devices[0].name' is an object, expected text"),
    ("status.gpu_devices.0.vendor", 3, "field 'status.gpu_devices[0].vendor' is an integer, expected text"),
    ("status.gpu_devices.0.type", ["cuda"], "field 'status.gpu_devices[0].type' is a list, expected text"),
    ("system_reserved.ram", -1, "field 'system_reserved.ram' is an integer, expected an integer >= 0"),
    ("cluster_id", BIG, "field 'cluster_id' is an integer of 31 digits, expected a 64-bit integer"),
    ("state", 1, "field 'state' is an integer, expected text"),
    ("labels", {"gpu\x1b[2J": 1}, "field 'labels.gpu?[2J' is an integer, expected text"),
])
def test_nested_gpu_and_worker_numbers_are_bounded_and_named(dotted, value, message):
    with pytest.raises(ApiError) as exc:
        fleet(workers=[changed(WORKER, dotted, value)])
    assert str(exc.value) == f"GET /v2/workers: item 0: {message}"


@pytest.mark.parametrize("dotted,value", [(f"{MEMORY}.total", 2**46), (f"{MEMORY}.used", 0),
                                          ("status.gpu_devices.0.index", 1023),
                                          ("status.gpu_devices.0.index", 0), ("cluster_id", 1)])
def test_the_bounds_themselves_are_accepted(dotted, value):
    assert fleet(workers=[changed(WORKER, dotted, value)]).clusters


@pytest.mark.parametrize("dotted,value,message", [
    ("gpu_indexes", [2**64], "field 'gpu_indexes[0]' is an integer of 20 digits, expected an integer >= 0"),
    ("gpu_indexes", [float("nan")], "field 'gpu_indexes[0]' is NaN, expected an integer >= 0"),
    ("computed_resource_claim.vram", {"²": 1}, "field 'computed_resource_claim.vram.?' is text, expected a "
                                              "GPU index as key"),
    ("computed_resource_claim.vram", {"1" * 12: 1}, "field 'computed_resource_claim.vram.111111111111' is text, "
                                                   "expected a GPU index as key"),
    ("computed_resource_claim.vram", {"0": -1}, "field 'computed_resource_claim.vram.0' is an integer, expected an "
                                               "integer >= 0"),
    ("computed_resource_claim.vram", {"0": BIG}, "field 'computed_resource_claim.vram.0' is an integer of 31 "
                                                "digits, expected a 64-bit integer"),
    ("model_id", BIG, "field 'model_id' is an integer of 31 digits, expected a 64-bit integer"),
    ("restart_count", -2, "field 'restart_count' is an integer, expected an integer >= 0"),
])
def test_instance_numbers_are_bounded_and_named(dotted, value, message):
    with pytest.raises(ApiError) as exc:
        fleet(instances=[changed(INSTANCE, dotted, value)])
    assert str(exc.value) == f"GET /v2/model-instances: item 0: {message}"


def test_a_cluster_id_past_64_bits_is_named():
    with pytest.raises(ApiError) as exc:
        fleet(clusters=[{"id": BIG, "name": "prod"}])
    assert str(exc.value) == ("GET /v2/clusters: item 0: field 'id' is an integer of 31 digits, expected a 64-bit "
                              "integer")


@pytest.mark.parametrize("number,line", [("9" * 5000, 2), ("-" + "1_0" * 2200, 3), ("+" + "7" * 4301, 2)])
def test_an_export_number_python_cannot_read_is_named_by_line(number, line):
    text = "name: a\n" + ("env: {}\n" if line == 3 else "") + f"replicas: {number}\n"
    with pytest.raises(ApiError) as exc:
        exported_documents(text)
    assert str(exc.value) == (f"POST /v2/models/export: line {line}: a number of {len(number):,} characters, not a "
                              "number gsg can use")


def test_long_export_values_that_are_not_decimal_numbers_load():
    text = f"name: a\nhex: 0x{'f' * 5000}\nwords: {'ab' * 3000}\nquoted: '{'9' * 5000}'\n"
    assert exported_documents(text)[0]["quoted"] == "9" * 5000
