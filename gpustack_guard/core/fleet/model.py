"""The fleet: clusters, workers, GPUs and already-placed instances. One model for the snapshot file and the
live cluster, so every rule runs the same on both."""

from __future__ import annotations

from typing import Any, Optional

from gpustack_guard.core import echo
from gpustack_guard.core.records import Record, field
from gpustack_guard.core.units import MAX_DEVICE_BYTES, MAX_MODEL_BYTES, parse_size, size_or_none

FORMAT_VERSION = 1


def _claims(value: Any) -> Any:
    """Claims are bytes by GPU index; YAML may give the index as text and the bytes with units."""
    if isinstance(value, dict):
        claims: dict[int, int] = {}
        for key, size in value.items():
            index = int(key)
            if index in claims:  # `0:` and `"0":` are two YAML keys but one GPU: the last would hide the first
                raise ValueError(f"GPU index {index} is claimed twice")
            claims[index] = parse_size(size)
        return claims
    return value


MAX_GPUS_PER_WORKER = 1024  # beyond this a count is a typo (also --gpus' bound); indices 0-1023
# NVML's name buffer is 96 bytes (NVML_DEVICE_NAME_V2_BUFFER_SIZE); other vendors' tools report names as short
MAX_GPU_NAME = 256
# GPUStack's WorkerStateEnum (gpustack/schemas/workers.py; /work/shared/research/gpustack-openapi.json). Its
# scheduler's StatusFilter places on "ready" workers only, manual gpu_ids included.
WORKER_STATES = ("not_ready", "ready", "unreachable", "pending", "provisioning", "initializing", "deleting", "error",
                 "maintenance")


def gpu_name_problem(name: str) -> str | None:
    """Why a snapshot's GPU name is not a device name, or None. The name picks the card's CUDA total row and
    engine defaults (profiles.CUDA_TOTALS): a look-alike letter ('NVIDIA Л40S' with a Cyrillic L) or a full-width
    one would quietly miss its row and budget the card's NVML total, and a 10,000-character name would fill every
    finding that names the GPU. Vendors' tools report short ASCII names. (A live server's names are its own: they
    are escaped where shown, as every server text is.)"""
    if len(name) > MAX_GPU_NAME:
        return f"a GPU name of {len(name):,} characters is not a device name (at most {MAX_GPU_NAME})"
    odd = next((c for c in name if not (c.isascii() and c.isprintable())), None)
    if odd is not None:
        return (f"GPU name has the character U+{ord(odd):04X}: device names are printable ASCII, and a look-alike "
                "letter would miss the card's CUDA total")
    return None


def _gpu_type(value: Any) -> Any:
    """The type is the middle of GPUStack's GPU id `worker:type:index`, which a gpu_ids entry splits from the right
    (worker names may hold colons): an empty type, or one holding a colon, names no GPU a spec can list, and
    worker 'a' with type 'b:c' would have the id of worker 'a:b' with type 'c', one hiding the other's GPU."""
    if isinstance(value, str) and not (value and ":" not in value and value.isascii() and value.isprintable()
                                       and len(value) <= 64 and value == value.strip()):
        raise ValueError(f"GPU type '{echo.value(value, 64)}' is not a device type such as cuda or rocm (GPU ids are "
                         "worker:type:index)")
    return value


class GpuMemory(Record):
    total: int = field(before=size_or_none, gt=0, le=MAX_DEVICE_BYTES)
    used: int = field(0, before=size_or_none, ge=0, le=MAX_DEVICE_BYTES)  # live usage reported by the worker
    allocated: int = field(0, before=size_or_none, ge=0, le=MAX_DEVICE_BYTES)  # GPUStack's bookings on this GPU


class Gpu(Record):
    index: int = field(ge=0, le=MAX_GPUS_PER_WORKER - 1)
    vendor: str = "nvidia"
    type: str = field("cuda", before=_gpu_type)
    name: str = ""
    memory: GpuMemory


class SystemReserved(Record):
    ram: int = field(0, before=size_or_none, ge=0, le=MAX_MODEL_BYTES)
    vram: int = field(0, before=size_or_none, ge=0, le=MAX_DEVICE_BYTES)


class Worker(Record):
    name: str
    labels: dict[str, str] = field(factory=dict)
    state: str = "ready"
    system_reserved: SystemReserved = field(factory=SystemReserved)
    gpus: list[Gpu] = field(factory=list)

    def gpu_id(self, gpu: Gpu) -> str:
        return f"{self.name}:{gpu.type}:{gpu.index}"

    def repeated_gpu(self) -> tuple[int, int] | None:
        """(position of the first GPU whose id an earlier one has, that earlier position), or None. GPUStack
        addresses a GPU by worker, type and index: two entries of one id are one GPU listed twice (a broken
        worker report), and counted as two they would pass a TP=2 replica on one card."""
        seen: dict[tuple[str, int], int] = {}
        for position, gpu in enumerate(self.gpus):
            first = seen.setdefault((gpu.type, gpu.index), position)
            if first != position:
                return position, first
        return None

    @property
    def all_labels(self) -> dict[str, str]:
        """GPUStack adds worker-name to every worker's labels."""
        return {"worker-name": self.name, **self.labels}


class Instance(Record):
    """A model instance already on the fleet, with GPUStack's per-GPU claim (bytes by GPU index)."""

    model: str
    name: Optional[str] = None
    worker: str
    state: str = "running"
    gpu_indexes: list[int] = field(factory=list)
    claims: dict[int, int] = field(factory=dict, before=_claims)
    restart_count: int = 0
    managed_by: Optional[str] = None  # gsg's ownership marker, when present
    project: Optional[str] = None  # the gsg project that owns the model (its marker's project), when present


class Cluster(Record):
    name: str
    id: Optional[int] = None
    workers: list[Worker] = field(factory=list)
    instances: list[Instance] = field(factory=list)


class Fleet(Record):
    format_version: int = FORMAT_VERSION
    captured_at: Optional[str] = None
    server: Optional[str] = None
    server_version: Optional[str] = None
    clusters: list[Cluster]

    def cluster(self, name: str | None) -> Cluster | None:
        if name is None:
            return self.clusters[0] if len(self.clusters) == 1 else None
        return next((c for c in self.clusters if c.name == name), None)


class GpuRef:
    """A GPU with its worker, addressed by GPUStack's id `worker:type:index`."""

    __slots__ = ("worker", "gpu", "id")

    def __init__(self, worker: Worker, gpu: Gpu):
        self.worker, self.gpu = worker, gpu
        self.id = worker.gpu_id(gpu)

    @property
    def total(self) -> int:
        return self.gpu.memory.total


def gpu_index(cluster: Cluster) -> dict[str, GpuRef]:
    return {ref.id: ref for ref in (GpuRef(w, g) for w in cluster.workers for g in w.gpus)}
