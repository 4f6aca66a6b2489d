"""The live fleet: GPUStack's clusters, workers, GPUs and instances as the same Fleet model the snapshot uses.

Four list calls whatever the cluster size (clusters, workers, model instances, models); GPUs come from each
worker's status. Capacity later counts max(allocated, used), so memory held outside GPUStack is seen.
"""

from __future__ import annotations

from datetime import datetime, timezone

from gpustack_guard.core.fleet.model import Cluster, Fleet, Gpu, GpuMemory, Instance, SystemReserved, Worker
from gpustack_guard.core.ownership import Owner, owner


def _claims(claim: dict | None) -> dict[int, int]:
    vram = (claim or {}).get("vram") or {}
    return {int(index): int(amount) for index, amount in vram.items() if amount}


def _worker(raw: dict) -> Worker:
    gpus = []
    for device in ((raw.get("status") or {}).get("gpu_devices") or []):
        memory = device.get("memory") or {}
        if device.get("index") is None or not memory.get("total"):
            continue
        gpus.append(Gpu(index=device["index"], vendor=device.get("vendor") or "", type=device.get("type") or "cuda",
                        name=device.get("name") or "",
                        memory=GpuMemory(total=memory["total"], used=memory.get("used") or 0,
                                         allocated=memory.get("allocated") or 0)))
    reserved = raw.get("system_reserved") or {}
    return Worker(name=raw["name"], labels=raw.get("labels") or {}, state=raw.get("state") or "not_ready",
                  system_reserved=SystemReserved(ram=reserved.get("ram") or 0, vram=reserved.get("vram") or 0),
                  gpus=gpus)


def _instances(raw: dict, owners: dict[int, Owner]) -> list[Instance]:
    model_owner = owners.get(raw.get("model_id"))
    base = dict(model=raw.get("model_name") or "", name=raw.get("name"), state=raw.get("state") or "pending",
                restart_count=raw.get("restart_count") or 0,
                managed_by=model_owner.managed_by if model_owner else None,
                project=model_owner.project if model_owner else None)
    found = []
    if raw.get("worker_name"):
        found.append(Instance(**base, worker=raw["worker_name"], gpu_indexes=raw.get("gpu_indexes") or [],
                              claims=_claims(raw.get("computed_resource_claim"))))
    for sub in ((raw.get("distributed_servers") or {}).get("subordinate_workers") or []):
        if sub.get("worker_name"):
            found.append(Instance(**base, worker=sub["worker_name"], gpu_indexes=sub.get("gpu_indexes") or [],
                                  claims=_claims(sub.get("computed_resource_claim"))))
    return found


def fleet_from_api(clusters: list[dict], workers: list[dict], instances: list[dict], models: list[dict],
                   server: str, version: str | None) -> Fleet:
    owners = {m["id"]: owner(m) for m in models if "id" in m}
    result = []
    for cluster in sorted(clusters, key=lambda c: c.get("name", "")):
        cid = cluster.get("id")
        result.append(Cluster(
            name=cluster["name"], id=cid,
            workers=[_worker(w) for w in sorted(workers, key=lambda w: w.get("name", ""))
                     if w.get("cluster_id") == cid],
            instances=[i for raw in instances if raw.get("cluster_id") == cid for i in _instances(raw, owners)],
        ))
    return Fleet(captured_at=datetime.now(timezone.utc).replace(microsecond=0).isoformat(), server=server,
                 server_version=version, clusters=result)
