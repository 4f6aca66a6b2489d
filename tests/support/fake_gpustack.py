"""An in-memory GPUStack 2.3 `/v2` API behind httpx.MockTransport, following the semantics in gpustack-api.md:
409 on a duplicate name, sparse PUT (only sent fields change), `distributed_inference_across_workers`
rewritten when a PUT omits it, server-filled fields after create, restart 409 while one is in flight,
the `{items, pagination}` list envelope with `page=-1`, and injectable faults."""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import parse_qs

import httpx
import yaml

GiB = 1024**3
MiB = 1024**2
SERVER_MANAGED = {"id", "created_at", "updated_at", "deleted_at", "ready_replicas", "meta", "cluster_id",
                  "owner_principal_id", "access_policy", "revision_history_limit"}
CREATE_FIELDS = ["name", "source", "huggingface_repo_id", "huggingface_filename", "model_scope_model_id",
                 "model_scope_file_path", "local_path", "description", "meta", "replicas", "categories",
                 "placement_strategy", "cpu_offloading", "distributed_inference_across_workers", "worker_selector",
                 "gpu_selector", "gpu_type_selector", "backend", "backend_version", "backend_parameters",
                 "image_name", "run_command", "native_anthropic_api", "env", "restart_on_error", "distributable",
                 "extended_kv_cache", "speculative_config", "scaling_schedule", "generic_proxy", "lora_list",
                 "cluster_id", "ready_replicas"]
DEFAULTS = {"description": None, "meta": {}, "replicas": 1, "categories": [], "placement_strategy": "spread",
            "cpu_offloading": None, "worker_selector": {}, "gpu_selector": None, "gpu_type_selector": None,
            "backend_version": None, "backend_parameters": None, "image_name": None, "run_command": None,
            "native_anthropic_api": False, "env": None, "restart_on_error": True, "distributable": False,
            "extended_kv_cache": None, "speculative_config": None, "scaling_schedule": None,
            "generic_proxy": False, "lora_list": None, "huggingface_repo_id": None, "huggingface_filename": None,
            "model_scope_model_id": None, "model_scope_file_path": None, "local_path": None}


def clone(value):
    """Plain JSON data copied (faster than copy.deepcopy, and the data is JSON anyway)."""
    return json.loads(json.dumps(value))


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def error(status: int, reason: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"code": status, "reason": reason, "message": message})


@dataclass
class Fault:
    at: int  # the n-th request (1-based) to /v2/ gets the fault
    kind: str  # "500", "503", "409", "timeout-before", "timeout-after", "reset-before", "reset-after"


@dataclass
class FakeGPUStack:
    api_key: str = "gsg-test-key-0123456789"
    version: str = "v2.3.0"
    latency: float = 0.0  # seconds per request, round trip
    ready_after_polls: int = 0  # instances become running after this many GETs of the model
    clusters: list = field(default_factory=list)
    workers: list = field(default_factory=list)
    models: dict = field(default_factory=dict)
    instances: dict = field(default_factory=dict)
    faults: list = field(default_factory=list)
    log: list = field(default_factory=list)  # (method, path) of every request
    model_calls: int = 0  # requests to /v2/ so far (faults count these)
    page_size_cap: int | None = None  # emulate a server that ignores page=-1 and pages anyway
    server_seconds: float = 0.0  # CPU the fake spent answering (a real server spends it on its own machine)
    # GET /v2/model-instances/{id}/logs, by instance id: bytes (the log), a callable returning an iterator of
    # byte chunks (streamed: huge or endless logs), or an int status (refused). An instance without an entry
    # answers an empty log, as GPUStack's worker does for an engine that has written nothing yet.
    instance_logs: dict = field(default_factory=dict)
    log_queries: list = field(default_factory=list)  # the query of every log request, parsed

    def __post_init__(self):
        self._lock = threading.Lock()  # apply sends requests from several threads; a real server serialises rows
        self._ids = itertools.count(1)
        self._instance_ids = itertools.count(1)
        self._polls: dict[int, int] = {}

    # --- setup ---------------------------------------------------------------------------------------
    def add_cluster(self, name: str) -> int:
        cid = next(self._ids)
        self.clusters.append({"id": cid, "name": name, "provider": "Docker", "state": "ready", "is_default":
                              not self.clusters, "created_at": now(), "updated_at": now()})
        return cid

    def add_worker(self, cluster_id: int, name: str, gpus: list[tuple[str, int]], labels=None, used=None):
        devices = [{"vendor": "nvidia", "type": "cuda", "index": i, "device_index": i, "name": gpu_name,
                    "uuid": f"GPU-{name}-{i}", "memory": {"total": total, "used": (used or {}).get(i, 0),
                                                           "allocated": 0, "is_unified_memory": False}}
                   for i, (gpu_name, total) in enumerate(gpus)]
        self.workers.append({"id": next(self._ids), "name": name, "cluster_id": cluster_id, "state": "ready",
                             "labels": {"os": "linux", "arch": "amd64", "worker-name": name, **(labels or {})},
                             "hostname": name, "ip": "127.0.0.1", "ifname": "lo", "port": 10150,
                             "system_reserved": {"ram": 0, "vram": 0},
                             "status": {"gpu_devices": devices}, "created_at": now(), "updated_at": now()})

    @classmethod
    def field_notes(cls, **kwargs) -> FakeGPUStack:
        fake = cls(**kwargs)
        cid = fake.add_cluster("prod")
        a6000, r4090 = ("NVIDIA RTX A6000", 49140 * MiB), ("NVIDIA GeForce RTX 4090", 24564 * MiB)
        fake.add_worker(cid, "gpu-a", [a6000] * 4, {"gpu": "a6000", "role": "tp4"})
        fake.add_worker(cid, "gpu-b", [a6000] * 4, {"gpu": "a6000"})
        fake.add_worker(cid, "gpu-c", [r4090] * 2, {"gpu": "rtx4090"})
        fake.add_worker(cid, "gpu-d", [a6000, r4090], {"gpu": "mixed"}, used={1: 1536 * MiB})
        return fake

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    # --- dispatch --------------------------------------------------------------------------------------
    def handle(self, request: httpx.Request) -> httpx.Response:
        # `latency` is the round trip: half on the way in, half on the way back, both outside the lock, so
        # the fake's own work (a real server's, on its own machine) overlaps other requests in flight.
        if self.latency:
            time.sleep(self.latency / 2)
        with self._lock:
            start = time.perf_counter()
            try:
                response = self._handle(request)
            finally:
                self.server_seconds += time.perf_counter() - start
        if self.latency:
            time.sleep(self.latency / 2)
        return response

    def _handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.log.append((request.method, path))
        if path == "/version":
            return httpx.Response(200, json={"version": self.version, "git_commit": "63a03ba"})
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Unauthorized", "Invalid authentication credentials")
        query = {k: v[-1] for k, v in parse_qs(request.url.query.decode()).items()}
        body = json.loads(request.content) if request.content else None
        fault = None
        if path.startswith("/v2/"):
            self.model_calls += 1
            fault = next((f for f in self.faults if f.at == self.model_calls), None)
        if fault and fault.kind.endswith("-before"):
            raise self._exception(fault, request)
        if fault and fault.kind in ("500", "503", "409"):
            code = int(fault.kind)
            return error(code, {500: "InternalServerError", 503: "ServiceUnavailable", 409: "Conflict"}[code],
                         "injected fault")
        response = self._route(request.method, path, query, body)
        if fault and fault.kind.endswith("-after"):
            raise self._exception(fault, request)  # the server did the work; the client never hears
        return response

    def _exception(self, fault: Fault, request: httpx.Request) -> Exception:
        if fault.kind.startswith("timeout"):
            return httpx.ReadTimeout("injected timeout", request=request)
        return httpx.RemoteProtocolError("injected connection reset", request=request)

    def _route(self, method: str, path: str, query: dict, body):
        parts = path.strip("/").split("/")
        if path == "/v2/users/me":
            return httpx.Response(200, json={"id": 1, "username": "admin", "is_admin": True})
        if path == "/v2/clusters" and method == "GET":
            return self._list(self.clusters, query)
        if path == "/v2/workers" and method == "GET":
            return self._list([self._worker_public(w) for w in self.workers], query)
        if path == "/v2/model-instances" and method == "GET":
            return self._list(list(self.instances.values()), query)
        if len(parts) == 4 and parts[:2] == ["v2", "model-instances"] and parts[3] == "logs" and method == "GET":
            return self._instance_log(parts[2], query)
        if path == "/v2/models" and method == "GET":
            return self._list([self._public(m) for m in self.models.values()], query)
        if path == "/v2/models" and method == "POST":
            return self._create(body)
        if path == "/v2/models/export" and method == "POST":
            return self._export(body or {})
        if path == "/v2/model-evaluations" and method == "POST":
            return self._evaluate(body or {})
        if len(parts) >= 3 and parts[:2] == ["v2", "models"] and parts[2].isdigit():
            model = self.models.get(int(parts[2]))
            if model is None:
                return error(404, "NotFound", "Model not found")
            if len(parts) == 4 and parts[3] == "restart" and method == "POST":
                return self._restart(model)
            if method == "GET":
                self._advance(model)
                return httpx.Response(200, json=self._public(model))
            if method == "PUT":
                return self._update(model, body)
            if method == "DELETE":
                self._set_instances(model, 0)
                del self.models[model["id"]]
                return httpx.Response(200, json=None)
        return error(404, "NotFound", f"no route {method} {path}")

    # --- instance logs ---------------------------------------------------------------------------------
    def _instance_log(self, key: str, query: dict) -> httpx.Response:
        self.log_queries.append(query)
        if not key.isdigit() or int(key) not in self.instances:
            return error(404, "NotFound", f"Model instance {key} not found")
        if query.get("follow") not in (None, "false", "False"):
            raise AssertionError("gsg asked to follow a log: the answer would never end")
        served = self.instance_logs.get(int(key), b"")
        if isinstance(served, int):
            reasons = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 500: "InternalServerError",
                       502: "BadGateway", 503: "ServiceUnavailable", 504: "GatewayTimeout"}
            return error(served, reasons.get(served, "Error"), "injected log refusal")
        if callable(served):
            return httpx.Response(200, content=served(), headers={"content-type": "application/octet-stream"})
        lines = served.split(b"\n")
        if "offset" in query:  # GPUStack's window: `limit` lines from `offset`
            start, limit = int(query["offset"]), int(query.get("limit", 1000))
            lines = lines[start:start + limit]
        return httpx.Response(200, content=b"\n".join(lines), headers={"content-type": "application/octet-stream"})

    # --- lists -----------------------------------------------------------------------------------------
    def _list(self, items: list, query: dict) -> httpx.Response:
        if "search" in query:
            items = [i for i in items if query["search"].lower() in i.get("name", "").lower()]
        for key in ("cluster_id", "model_id"):
            if key in query:
                items = [i for i in items if str(i.get(key)) == query[key]]
        page = int(query.get("page", 1))
        per_page = int(query.get("perPage", 100))
        if page == -1 and self.page_size_cap:
            page, per_page = 1, self.page_size_cap
        total = len(items)
        if page > 0:
            items = items[(page - 1) * per_page: page * per_page]
        else:
            per_page = max(total, 1)
        pages = max(1, -(-total // per_page))
        return httpx.Response(200, json={"items": items, "pagination": {
            "page": page, "perPage": per_page, "total": total, "totalPage": pages}})

    # --- models ----------------------------------------------------------------------------------------
    def _default_distributed(self, model: dict) -> bool:
        return (model.get("backend") or "vLLM") in ("vLLM", "SGLang", "MindIE")

    def _create(self, body: dict) -> httpx.Response:
        problem = self._validate(body)
        if problem:
            return problem
        if any(m["name"] == body["name"] for m in self.models.values()):
            return error(409, "AlreadyExists", f"Model with name '{body['name']}' already exists.")
        mid = next(self._ids)
        model = {**clone(DEFAULTS), **clone({k: v for k, v in body.items() if k in CREATE_FIELDS})}
        model.update(id=mid, created_at=now(), updated_at=now(), ready_replicas=0, state="pending",
                     state_message=None, owner_principal_id=1, access_policy="authed", restarting_since=None)
        model.setdefault("backend", "vLLM")
        if model.get("distributed_inference_across_workers") is None:
            model["distributed_inference_across_workers"] = self._default_distributed(model)
        self.models[mid] = model
        self._server_fill(model)
        self._set_instances(model, model["replicas"])
        return httpx.Response(200, json=self._public(model))

    def _validate(self, body, stored: dict | None = None) -> httpx.Response | None:
        if not isinstance(body, dict) or "name" not in body or "source" not in body:
            return error(422, "Invalid", "1 validation errors:\n  {'loc': ('body', 'source'), 'msg': 'Field required'}")
        id_field = {"huggingface": "huggingface_repo_id", "model_scope": "model_scope_model_id",
                    "local_path": "local_path"}.get(body["source"])
        if id_field is None or not body.get(id_field):
            return error(422, "Invalid", "1 validation errors:\n  {'msg': 'source id required'}")
        cluster = body.get("cluster_id", (stored or {}).get("cluster_id"))  # PUT backfills it from the row
        if cluster is None and (body.get("gpu_selector") or {}).get("gpu_ids"):
            return error(400, "BadRequest", "A cluster context is required for manual GPU selection")
        return None

    def _server_fill(self, model: dict) -> None:
        """What the scheduler and the worker write back after create (a real server bumps updated_at too)."""
        model["updated_at"] = now()
        if not model.get("categories"):
            model["categories"] = ["llm"]
        if model.get("backend") == "vLLM" and not model.get("backend_version"):
            model["backend_version"] = "0.11.0"
        selector = model.get("gpu_selector")
        if selector and selector.get("gpu_ids") and not selector.get("gpus_per_replica"):
            selector["gpus_per_replica"] = len(selector["gpu_ids"]) // max(model["replicas"], 1) or 1

    def _update(self, model: dict, body: dict) -> httpx.Response:
        problem = self._validate(body, model)
        if problem:
            return problem
        fields_set = {k: v for k, v in body.items() if k in CREATE_FIELDS}
        if "distributed_inference_across_workers" not in fields_set:  # the validator rewrites it
            fields_set["distributed_inference_across_workers"] = self._default_distributed({**model, **body})
        if "backend" in fields_set and fields_set["backend"] != model.get("backend"):
            for cleared in ("run_command", "image_name", "backend_version"):
                fields_set.setdefault(cleared, None)
        model.update(clone(fields_set))
        model["updated_at"] = now()
        self._set_instances(model, model["replicas"])
        return httpx.Response(200, json=self._public(model))

    def _restart(self, model: dict) -> httpx.Response:
        if model.get("restarting_since"):
            return error(409, "Conflict", "A restart is already in progress for this model")
        deleted = len([i for i in self.instances.values() if i["model_id"] == model["id"]])
        self._set_instances(model, 0)
        self._set_instances(model, model["replicas"])
        return httpx.Response(200, json={"spec_digest": "abc", "restarted": True, "deleted_instances": deleted,
                                         "message": "restarted"})

    def _set_instances(self, model: dict, count: int) -> None:
        mine = [i for i in self.instances.values() if i["model_id"] == model["id"]]
        for inst in mine[count:]:
            del self.instances[inst["id"]]
        for _ in range(count - len(mine)):
            iid = next(self._instance_ids)
            worker, indexes = self._place(model)
            vram = {str(i): int(self._gpu_total(worker, i) * self._gmu(model)) for i in indexes} if worker else {}
            self.instances[iid] = {
                "id": iid, "name": f"{model['name']}-{iid:05d}", "model_id": model["id"],
                "model_name": model["name"], "cluster_id": model.get("cluster_id"),
                "worker_name": worker["name"] if worker else None, "worker_id": worker["id"] if worker else None,
                "gpu_indexes": indexes, "state": "running" if self.ready_after_polls == 0 and worker else "scheduled",
                "state_message": "" if worker else "No available workers", "restart_count": 0,
                "computed_resource_claim": {"vram": vram, "is_unified_memory": False},
                "source": model["source"], "created_at": now(), "updated_at": now()}
        self._polls[model["id"]] = 0
        self._refresh(model)

    def _gmu(self, model: dict) -> float:
        for arg in model.get("backend_parameters") or []:
            if arg.startswith("--gpu-memory-utilization"):
                return float(arg.split("=", 1)[1] if "=" in arg else arg.split()[1])
        return 0.9

    def _gpu_total(self, worker: dict, index: int) -> int:
        return next(d["memory"]["total"] for d in worker["status"]["gpu_devices"] if d["index"] == index)

    def _place(self, model: dict):
        ids = (model.get("gpu_selector") or {}).get("gpu_ids")
        if ids:
            worker_name = ids[0].split(":")[0]
            worker = next((w for w in self.workers if w["name"] == worker_name), None)
            return worker, [int(i.rsplit(":", 1)[1]) for i in ids if i.startswith(worker_name + ":")]
        for worker in self.workers:
            if worker.get("cluster_id") == model.get("cluster_id") and all(
                    worker["labels"].get(k) == v for k, v in (model.get("worker_selector") or {}).items()):
                return worker, [0]
        return None, []

    def _advance(self, model: dict) -> None:
        self._polls[model["id"]] = self._polls.get(model["id"], 0) + 1
        if self._polls[model["id"]] >= self.ready_after_polls:
            for inst in self.instances.values():
                if inst["model_id"] == model["id"] and inst["worker_name"] and inst["state"] == "scheduled":
                    inst["state"] = "running"
        self._refresh(model)

    def _refresh(self, model: dict) -> None:
        mine = [i for i in self.instances.values() if i["model_id"] == model["id"]]
        model["ready_replicas"] = sum(1 for i in mine if i["state"] == "running")
        model["state"] = "running" if mine and model["ready_replicas"] == len(mine) else "pending"

    def _public(self, model: dict) -> dict:
        return model  # httpx serialises the body at once, so no copy is needed

    def _worker_public(self, worker: dict) -> dict:
        """`allocated` is injected server-side from instance claims, as GPUStack's routes do."""
        out = clone(worker)
        for device in out["status"]["gpu_devices"]:
            device["memory"]["allocated"] = sum(
                int(i["computed_resource_claim"]["vram"].get(str(device["index"]), 0))
                for i in self.instances.values() if i["worker_name"] == worker["name"])
        return out

    def _export(self, body: dict) -> httpx.Response:
        names = {c["id"]: c["name"] for c in self.clusters}
        docs = []
        for model in self.models.values():
            if body.get("cluster_id") and model.get("cluster_id") != body["cluster_id"]:
                continue
            doc = {"name": model["name"], "cluster_name": names.get(model.get("cluster_id"))}
            for key in CREATE_FIELDS:
                if key not in SERVER_MANAGED and key not in doc and model.get(key) not in (None,):
                    doc[key] = model[key]
            doc["enable_model_route"] = True
            docs.append(doc)
        return httpx.Response(200, text=yaml.safe_dump_all(docs, sort_keys=False),
                              headers={"content-type": "application/x-yaml"})

    def _evaluate(self, body: dict) -> httpx.Response:
        results = []
        for spec in body.get("model_specs") or []:
            claim = sum(int(self._gpu_total(w, 0) * self._gmu(spec)) for w in self.workers[:1])
            results.append({"compatible": True, "compatibility_messages": [], "scheduling_messages": [
                "The model requires approximately 12.00 GiB of VRAM"], "resource_claim": {"ram": 0, "vram": claim}})
        return httpx.Response(200, json={"results": results})

    # --- test helpers ----------------------------------------------------------------------------------
    def by_name(self, name: str) -> dict | None:
        return next((m for m in self.models.values() if m["name"] == name), None)

    def create_unmanaged(self, name: str, **fields) -> dict:
        body = {"name": name, "source": "huggingface", "huggingface_repo_id": "Qwen/Qwen2.5-0.5B-Instruct",
                "cluster_id": self.clusters[0]["id"], "backend_parameters": ["--gpu-memory-utilization=0.2"],
                "gpu_selector": {"gpu_ids": ["gpu-b:cuda:3"]}, **fields}
        return self._create(body).json()


def in_front(fake, monkeypatch, instead=None, *, then=None):
    """The CLI's client wired to `fake`, each request first offered to `instead(request)`: an answer (or a raised
    error) replaces the fake's (the server may have acted first), None lets the fake answer; `then(request,
    answer)` sees the fake's answer (after the fake acted) and may return another. Returns the (method, path) of
    every request, in order."""
    import gpustack_guard.wiring as wiring

    calls: list[tuple[str, str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append((request.method, request.url.path))
        answer = instead(request) if instead is not None else None
        if answer is not None:
            return answer
        answer = fake.handle(request)
        return (then(request, answer) if then is not None else None) or answer

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    return calls
