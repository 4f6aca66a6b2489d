"""The live fleet: GPUStack's clusters, workers, GPUs and instances as the same Fleet model the snapshot uses.

Four paged list calls whatever the cluster size (models, clusters, workers, model instances); GPUs come from
each worker's status. Each item is turned into its record as its page arrives and grouped by cluster id, so
the work grows with the number of items, not with clusters x workers, and no raw page outlives its turn.
Capacity later counts max(allocated, used), so memory held outside GPUStack is seen.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from typing import Mapping, NoReturn

import yaml
from pydantic import ValidationError

from gpustack_guard.adapters.gpustack.client import INT64_MAX, ApiError
from gpustack_guard.adapters.gpustack.fields import Item
from gpustack_guard.adapters.gpustack.transport import printable
from gpustack_guard.core.deploy.lease import deployments
from gpustack_guard.core.fleet.model import Cluster, Fleet, Gpu, GpuMemory, Instance, SystemReserved, Worker
from gpustack_guard.core.ownership import Owner, owner

WORKERS, INSTANCES, CLUSTERS, EXPORT = "/v2/workers", "/v2/model-instances", "/v2/clusters", "/v2/models/export"
# Instance record fields as the /v2/model-instances item spells them (for messages)
_INSTANCE_FIELDS = {"model": "model_name", "worker": "worker_name", "claims": "computed_resource_claim.vram"}
MAX_EXPORT_ALIASES = 1000  # GPUStack's export writes plain documents; an alias bomb is not an export


def _refused(item: Item, exc: ValidationError, renamed: Mapping[str, str] | None = None) -> NoReturn:
    """A core record refused a value of the answer's item (past its bounds: a GPU of more than 64 TiB, index
    1024): one line naming the field as GPUStack spells it (`renamed`: record field -> answer field). The records
    are built in plain try blocks, so a fleet of 200,000 items pays nothing for this."""
    error = exc.errors()[0]
    path = [str(part) for part in error["loc"]]
    if path and renamed:
        path[0] = renamed.get(path[0], path[0])
    why = printable(str(error["msg"]), 200)
    item.out_of_range(".".join(path), why[:1].lower() + why[1:])
    raise AssertionError("unreachable")  # pragma: no cover - out_of_range raises


def _item(path: str, index: int, raw) -> Item:
    return Item("GET", path, f"item {index}", raw)


def _claims(claim: Item | None) -> dict[int, int]:
    vram = claim.child("vram") if claim else None
    if vram is None:
        return {}
    found = {}
    for index in vram.raw:
        key = str(index)
        # ASCII digits only: str.isdigit() also takes '²', which int() refuses
        if not (key.isascii() and key.isdigit() and len(key) <= 9):
            vram.fail(printable(key, 30), index, "a GPU index as key")
        amount = vram.count(key, 0)
        if amount:
            found[int(key)] = amount
    return found


def worker_from_api(index: int, raw) -> tuple[int, Worker]:
    """(cluster id, worker) from one /v2/workers item."""
    item = _item(WORKERS, index, raw)
    gpus = []
    positions: list[int] = []  # each GPU's position in status.gpu_devices (unmeasured ones are skipped)
    status = item.child("status")
    for position, device in enumerate(status.children("gpu_devices") if status else []):
        memory = device.child("memory")
        gpu_index = device.count("index", None)
        total = memory.count("total", None) if memory else None
        if memory is None or gpu_index is None or not total:
            continue  # a GPU the worker cannot measure (yet) books nothing
        used, allocated = memory.count("used", 0), memory.count("allocated", 0)
        try:
            measured = GpuMemory(total=total, used=used, allocated=allocated)
        except ValidationError as exc:
            _refused(memory, exc)
        vendor, kind, name = device.get("vendor", str, ""), device.get("type", str, "cuda"), device.get("name", str, "")
        try:
            gpus.append(Gpu(index=gpu_index, vendor=vendor, type=kind, name=name, memory=measured))
            positions.append(position)
        except ValidationError as exc:
            _refused(device, exc)
    reserved = item.child("system_reserved")
    ram, vram = (reserved.count("ram", 0), reserved.count("vram", 0)) if reserved else (0, 0)
    try:
        system_reserved = SystemReserved(ram=ram, vram=vram)
    except ValidationError as exc:
        _refused(reserved or item, exc)
    name, labels, state = item.get("name", str), item.mapping("labels", str), item.state("state", "not_ready")
    try:
        worker = Worker(name=name, labels=labels, state=state, system_reserved=system_reserved, gpus=gpus)
    except ValidationError as exc:
        _refused(item, exc)
    repeat = worker.repeated_gpu()
    if repeat is not None:
        gpu = gpus[repeat[0]]
        raise ApiError("GET", WORKERS, f"item {index}: worker '{printable(name, 60)}' lists GPU {gpu.type}:{gpu.index} "
                                       f"twice (GPUs {positions[repeat[1]]} and {positions[repeat[0]]} of "
                                       "status.gpu_devices): one GPU would count as two; refusing the fleet")
    return item.get("cluster_id", int), worker


def instances_from_api(index: int, raw, owners: dict[int, Owner]) -> tuple[int | None, list[Instance]]:
    """(cluster id, the instance on its main worker and on each subordinate worker) from one instance item."""
    item = _item(INSTANCES, index, raw)
    model_owner = owners.get(item.get("model_id", int, None))
    base = dict(model=item.get("model_name", str, ""), name=item.get("name", str, None),
                state=item.state("state", "pending"), restart_count=item.count("restart_count", 0),
                managed_by=model_owner.managed_by if model_owner else None,
                project=model_owner.project if model_owner else None)
    found = []
    places = [item] + [sub for servers in [item.child("distributed_servers")] if servers
                       for sub in servers.children("subordinate_workers")]
    for place in places:
        worker = place.get("worker_name", str, "")
        if worker:
            indexes = place.get("gpu_indexes", list, [])
            for position, gpu in enumerate(indexes):
                if type(gpu) is not int or not 0 <= gpu <= INT64_MAX:
                    place.fail(f"gpu_indexes[{position}]", gpu, "an integer >= 0")
            claims = _claims(place.child("computed_resource_claim"))
            try:
                found.append(Instance(**base, worker=worker, gpu_indexes=indexes, claims=claims))
            except ValidationError as exc:
                _refused(place, exc, _INSTANCE_FIELDS)
    return item.get("cluster_id", int, None), found


def cluster_from_api(index: int, raw) -> tuple[int, str] | None:
    """(id, name) of one /v2/clusters item; None for a cluster the server marks deleted (`deleted_at`, GPUStack's
    soft delete), which no spec's cluster name may resolve to: a create would land in a cluster that is gone, and
    one recreated under the same name would look like a second cluster of that name."""
    item = _item(CLUSTERS, index, raw)
    found = item.get("id", int), item.get("name", str)
    return None if item.get("deleted_at", str, None) is not None else found


def live_clusters(listed: list[tuple[int, str] | None]) -> list[tuple[int, str]]:
    """The clusters of a cluster_from_api list that are not deleted."""
    return [cluster for cluster in listed if cluster is not None]


def assemble(clusters: list[tuple[int, str]], workers: list[tuple[int, Worker]],
             instances: list[tuple[int | None, list[Instance]]], server: str, version: str | None) -> Fleet:
    by_cluster: dict[int, list[Worker]] = {}
    listed_at: dict[tuple[int, str], int] = {}  # (cluster id, worker name) -> the item that first listed it
    for position, (cid, worker) in enumerate(workers):
        first = listed_at.setdefault((cid, worker.name), position)
        if first != position:
            _worker_listed_twice(clusters, cid, worker.name, first, position)
        by_cluster.setdefault(cid, []).append(worker)
    placed: dict[int | None, list[Instance]] = {}
    for instance_cid, found in instances:
        placed.setdefault(instance_cid, []).extend(found)
    result = [Cluster(name=name, id=cid, workers=sorted(by_cluster.get(cid, []), key=lambda w: w.name),
                      instances=placed.get(cid, []))
              for cid, name in sorted(clusters, key=lambda c: c[1])]
    return Fleet(captured_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat(), server=server,
                 server_version=version, clusters=result)


def _worker_listed_twice(clusters: list[tuple[int, str]], cid: int, name: str, first: int, again: int) -> NoReturn:
    """GPUStack keeps worker names unique in a cluster, and GPU ids are worker:type:index: two workers of one name
    (one registered again while the list was read, or a broken server) would have their GPUs and bookings hide each
    other, and a spec pinned to one be checked against the other's GPUs (as the fleet file refuses it)."""
    cluster = next((printable(n, 60) for i, n in clusters if i == cid), None)
    where = f"cluster '{cluster}'" if cluster is not None else f"cluster id {cid}"
    raise ApiError("GET", WORKERS, f"items {first} and {again}: worker '{printable(name, 60)}' is listed twice in "
                                   f"{where}: their GPU ids would collide; refusing the fleet (try again)")


def owners_of(models: list[dict]) -> dict[int, Owner]:
    return {m["id"]: owner(m) for m in models}


def fetch_fleet(client, version: str | None) -> tuple[Fleet, list[dict]]:
    """(the live fleet, the model list read with it: plan and drift reuse it)."""
    models = deployments(client.models())  # gsg's apply leases are bookkeeping, not deployments
    owners = owners_of(models)
    fleet = assemble(live_clusters(client.clusters(keep=cluster_from_api)), client.workers(keep=worker_from_api),
                     client.model_instances(keep=lambda i, raw: instances_from_api(i, raw, owners)),
                     client.base_url, version)
    return fleet, models


def fleet_from_api(clusters: list[dict], workers: list[dict], instances: list[dict], models: list[dict],
                   server: str, version: str | None) -> Fleet:
    """The same fleet from whole lists already read (tests and tools that hold raw answers)."""
    owners = owners_of(models)
    return assemble(live_clusters([cluster_from_api(i, c) for i, c in enumerate(clusters)]),
                    [worker_from_api(i, w) for i, w in enumerate(workers)],
                    [instances_from_api(i, raw, owners) for i, raw in enumerate(instances)], server, version)


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LONG_NUMBER = re.compile(r"[-+]?[0-9][0-9_]*")  # a YAML 1.1 decimal int (the limit is on base 10 only)


def _check_events(text: str) -> None:
    """Checked on the parser's events, before anything is built: a few kilobytes of YAML aliases can expand to
    gigabytes once walked (GPUStack's export writes plain documents, so more than a handful of aliases is not an
    export), and a plain scalar of more digits than Python turns into an int would stop the load with a
    ValueError that names nothing."""
    aliases = 0
    digits = sys.get_int_max_str_digits() or None
    for event in yaml.parse(text, Loader=_FAST_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_EXPORT_ALIASES:
                raise ApiError("POST", EXPORT, f"more than {MAX_EXPORT_ALIASES} YAML aliases: not an export")
        elif digits and isinstance(event, yaml.ScalarEvent) and not event.style and len(event.value) > digits \
                and _LONG_NUMBER.fullmatch(event.value):
            raise ApiError("POST", EXPORT, f"line {event.start_mark.line + 1}: a number of {len(event.value):,} "
                                           "characters, not a number gsg can use")


def exported_documents(text: str) -> list[dict]:
    """The deployment documents of POST /v2/models/export; each must be an object with a text name."""
    try:
        _check_events(text)
        loaded = list(yaml.load_all(text, Loader=_FAST_LOADER))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ApiError("POST", EXPORT, f"the answer is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}"
                       ) from None
    except RecursionError:
        raise ApiError("POST", EXPORT, "the answer nests too deeply to be an export") from None
    docs = []
    for index, doc in enumerate(d for d in loaded if d is not None):
        item = Item("POST", EXPORT, f"document {index}", doc)
        item.get("name", str)
        item.get("env", dict, None)  # masking walks these two
        item.get("backend_parameters", list, None)
        docs.append(doc)
    return docs
