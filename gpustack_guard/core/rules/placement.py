"""Placement rules (GSG008, GSG020-GSG025): the cluster exists, gpu_ids exist, selectors match, the parallel
size fits, and GPUStack's own admission. Each reads the placement stage's structured result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from gpustack_guard.core import args as A
from gpustack_guard.core import echo
from gpustack_guard.core.deploy.injection import PARALLEL_FLAGS
from gpustack_guard.core.findings import Finding, Rule, finding
from gpustack_guard.core.fleet.model import Cluster
from gpustack_guard.core.fleet.placement import Ledger, PlacementFailure, Unplaced
from gpustack_guard.core.rules import per_spec
from gpustack_guard.core.rules.memory import flag_location
from gpustack_guard.core.units import gib

if TYPE_CHECKING:
    from gpustack_guard.core.stages.results import Evaluation


def _failed(ev: Evaluation, *reasons: Unplaced) -> PlacementFailure | None:
    failure = ev.placed.failure
    return failure if failure is not None and failure.reason in reasons else None


def _cluster_of(ev: Evaluation) -> Cluster:
    """The spec's cluster, for a result past the cluster check: the placement stage sets it (and the ledger) on
    every result but a CLUSTER_REQUIRED / CLUSTER_UNKNOWN failure."""
    cluster = ev.cluster
    assert cluster is not None, "placed past the cluster check without a cluster"
    return cluster


def _ledger_of(ev: Evaluation) -> Ledger:
    """The ledger the spec was placed against (set with the cluster, see _cluster_of)."""
    ledger = ev.placed.ledger
    assert ledger is not None, "placed past the cluster check without a ledger"
    return ledger


@per_spec
def _cluster(ev: Evaluation) -> Iterator[Finding]:
    failure = _failed(ev, Unplaced.CLUSTER_REQUIRED, Unplaced.CLUSTER_UNKNOWN)
    if failure is None:
        return
    spec, doc = ev.rendered.spec, ev.rendered.doc
    known = ", ".join(failure.known) or "none"
    if failure.reason is Unplaced.CLUSTER_REQUIRED and not failure.known:
        # no cluster at all (an empty snapshot, a server that lists none): no cluster_name would help
        yield finding(CLUSTER, doc.at("name"), "the fleet has no cluster: nothing can be placed (an empty snapshot, "
                      "or a server that lists no clusters)", spec=spec.name)
    elif failure.reason is Unplaced.CLUSTER_REQUIRED:
        yield finding(CLUSTER, doc.at("name"), f"cluster_name is required: the fleet has several clusters ({known})",
                      spec=spec.name, fix="add 'cluster_name:'")
    else:
        yield finding(CLUSTER, doc.at("cluster_name"), f"cluster '{spec.cluster_name}' is not in the fleet "
                      f"(known: {known})", spec=spec.name)


CLUSTER = Rule(
    "GSG008", "cluster", "cluster_name is missing or names no cluster in the fleet.",
    what="A `cluster_name` that no cluster of the fleet has, or none at all when the fleet has several clusters.",
    why="GPUStack rejects a deployment to an unknown cluster; without a cluster nothing can be placed or sized.",
    example="name: elsewhere\ncluster_name: staging",
    fix="Name one of the clusters the message lists (a fleet with one cluster may omit cluster_name).",
    check=_cluster)


@per_spec
def _gpu_ids_exist(ev: Evaluation) -> Iterator[Finding]:
    failure = _failed(ev, Unplaced.GPU_ID_UNKNOWN)
    if failure is None:
        return
    known = ", ".join(sorted(_ledger_of(ev).gpus)[:8])
    for i, gid in failure.missing:
        yield finding(GPU_ID_UNKNOWN, ev.rendered.doc.at("gpu_selector", "gpu_ids", i),
                      f"gpu id '{gid}' is not in cluster '{_cluster_of(ev).name}' (known: {known}…)",
                      spec=ev.rendered.name)


GPU_ID_UNKNOWN = Rule(
    "GSG020", "gpu-id-unknown", "A gpu_ids entry names no GPU in the fleet.",
    what="A well-formed gpu_selector.gpu_ids entry that names no GPU of the cluster.",
    why="GPUStack keeps the model pending forever: no worker has that GPU.",
    example="gpu_selector:\n  gpu_ids:\n    - gpu-z:cuda:0",
    fix="Use one of the GPU ids the message lists (`gsg snapshot` writes them all).",
    check=_gpu_ids_exist)


@per_spec
def _selector(ev: Evaluation) -> Iterator[Finding]:
    failure = _failed(ev, Unplaced.WORKER_SELECTOR, Unplaced.WORKER_NOT_READY)
    if failure is None:
        return
    spec = ev.rendered.spec
    if failure.reason is Unplaced.WORKER_NOT_READY:
        gpus = _ledger_of(ev).gpus
        for i, gid in failure.missing:
            worker = gpus[gid].worker
            yield finding(WORKER_SELECTOR, ev.rendered.doc.at("gpu_selector", "gpu_ids", i),
                          f"gpu id '{gid}' is on worker '{echo.value(worker.name)}' whose state is "
                          f"'{echo.value(worker.state)}': GPUStack "
                          "places on ready workers only, so the model stays pending and its memory was not checked",
                          spec=spec.name, fix="list GPUs of ready workers, or bring the worker back first")
        return
    if failure.missing:  # gpu_ids on workers the selector excludes: the two selectors contradict each other
        for i, gid in failure.missing:
            yield finding(WORKER_SELECTOR, ev.rendered.doc.at("gpu_selector", "gpu_ids", i),
                          f"gpu id '{gid}' is on a worker that worker_selector {spec.worker_selector} excludes: "
                          "GPUStack applies both selectors, so this GPU is never used",
                          spec=spec.name, fix="drop worker_selector or list GPUs of the workers it selects")
        return
    yield finding(WORKER_SELECTOR, ev.rendered.doc.at("worker_selector"),
                  f"worker_selector {spec.worker_selector or {}} matches no ready worker of cluster "
                  f"'{_cluster_of(ev).name}'", spec=spec.name, fix="fix the labels or label a worker")


WORKER_SELECTOR = Rule(
    "GSG021", "worker-selector", "worker_selector matches no ready worker of the cluster.",
    what="A worker_selector whose labels no ready worker of the cluster carries (GPUStack adds worker-name to "
         "every worker's labels), gpu_selector.gpu_ids on workers the worker_selector excludes, or gpu_ids on a "
         "worker that is not ready (not_ready, unreachable, maintenance, ...).",
    why="The model stays pending: GPUStack finds no candidate worker.",
    example="worker_selector:\n  gpu: h100",
    fix="Correct the labels, or label a worker.",
    check=_selector)

_CANNOT_PLACE_FIX = "pin gpu_selector.gpu_ids, free GPUs or lower the parallel size"


def _cannot_place(ev: Evaluation, failure: PlacementFailure, rule: Rule, reason: str) -> Finding:
    return finding(rule, ev.rendered.doc.at("name"),
                   f"GPUStack cannot place replica {failure.replica}: {reason}"
                   " (gsg does not simulate multi-worker placement)", spec=ev.rendered.name, fix=_CANNOT_PLACE_FIX)


@per_spec
def _parallel_size(ev: Evaluation) -> Iterator[Finding]:
    if ev.placed.unused_gpu_ids:
        yield _unused_gpu_ids(ev)
    failure = _failed(ev, Unplaced.PARALLEL_MISMATCH, Unplaced.TOO_FEW_GPU_IDS, Unplaced.WORKER_TOO_SMALL,
                      Unplaced.TOPOLOGY_REFUSED)
    if failure is None:
        return
    spec, doc = ev.rendered.spec, ev.rendered.doc
    if failure.reason is Unplaced.PARALLEL_MISMATCH:
        yield finding(PARALLEL_SIZE, doc.at("gpu_selector", "gpus_per_replica"),
                      f"gpus_per_replica is {failure.count} but the parallel size (tp x pp) is {failure.parallel}: "
                      "GPUStack's scheduler rejects the model (world size does not match the selected gpu count) "
                      "unless env GPUSTACK_SKIP_GPU_COUNT_CHECK=1", spec=spec.name, fix="make them equal")
    elif failure.reason is Unplaced.TOO_FEW_GPU_IDS:
        yield finding(PARALLEL_SIZE, doc.at("gpu_selector", "gpu_ids"),
                      f"{spec.replicas} replica(s) x {failure.count} GPU(s) need {failure.needed} GPUs; gpu_ids "
                      f"lists {failure.listed}", spec=spec.name,
                      fix="list more gpu_ids or lower replicas / --tensor-parallel-size")
    elif failure.reason is Unplaced.TOPOLOGY_REFUSED:
        yield finding(PARALLEL_SIZE, doc.at("gpu_selector", "gpu_ids"),
                      f"GPUStack's worker refuses this multi-worker vLLM layout (MP executor): {failure.detail}",
                      spec=spec.name, fix="list the same number of GPUs on every worker or change the parallel sizes")
    else:
        yield _cannot_place(ev, failure, PARALLEL_SIZE, f"needs {failure.count} GPUs on one worker; the largest "
                                                        f"eligible worker has {failure.largest_worker}")


def _unused_gpu_ids(ev: Evaluation) -> Finding:
    """More gpu_ids than replicas x parallel size: GPUStack quietly runs on a subset and the rest idle."""
    r, placed = ev.rendered, ev.placed
    spec = r.spec
    selector, placement = spec.gpu_selector, placed.placement
    # the placement stage reports unused gpu_ids only for a manual placement of the listed gpu_ids
    assert selector is not None and selector.gpu_ids and placement is not None
    listed = len(selector.gpu_ids)
    per_replica = len(placement.replicas[0])
    tp_key, pp_key = PARALLEL_FLAGS.get(r.family, ("tensor-parallel-size", "pipeline-parallel-size"))
    tp, pp = A.parallel_size(r.flags, r.family)
    set_by_spec = tp * pp > 1
    if set_by_spec:
        why = f"--{tp_key} {tp} x --{pp_key} {pp} = {tp * pp} GPUs per replica"
        where = flag_location(ev, f"--{tp_key}" if f"{tp_key}" in r.flags else f"--{pp_key}")
    elif selector.gpus_per_replica:
        why = f"gpus_per_replica is {per_replica}"
        where = r.doc.at("gpu_selector", "gpus_per_replica")
    else:
        why = (f"no parallel size is set, so GPUStack runs {per_replica} GPU(s) per replica (the largest power of "
               f"two <= {listed} / {spec.replicas})")
        where = r.doc.at("gpu_selector", "gpu_ids")
    used = per_replica * spec.replicas
    return finding(PARALLEL_SIZE, where,
                   f"gpu_ids lists {listed} GPUs but {spec.replicas} replica(s) use {used}: {why}. GPUStack does not "
                   f"reject this: it sets gpus_per_replica to {per_replica} and leaves "
                   f"{', '.join(placed.unused_gpu_ids)} idle", spec=spec.name,
                   fix=f"list {used} gpu_ids, or set the parallel size to use all {listed}")


PARALLEL_SIZE = Rule(
    "GSG022", "parallel-size", "The tensor/pipeline-parallel size does not fit the chosen GPUs.",
    what="A tensor x pipeline parallel size that differs from gpus_per_replica, needs more gpu_ids than listed, "
         "leaves listed gpu_ids unused (replicas x GPUs per replica below the gpu_ids count), needs more GPUs "
         "than the largest eligible worker has, or a multi-worker layout GPUStack's worker refuses.",
    why="vLLM and SGLang start one rank per GPU: with too few GPUs the instance never starts. With more gpu_ids "
        "than it needs GPUStack quietly runs on a subset: the parallel size it injects (and gsg's arithmetic) "
        "is not the one the listed GPUs suggest, and the rest sit idle.",
    example="gpu_selector:\n  gpu_ids: [gpu-c:cuda:0, gpu-c:cuda:1]\n"
            "backend_parameters: [--tensor-parallel-size=4]",
    fix="Make the parallel size match the GPUs: list more gpu_ids, lower replicas or --tensor-parallel-size.",
    check=_parallel_size)


@per_spec
def _admission_fraction(ev: Evaluation) -> Iterator[Finding]:
    spec, doc = ev.rendered.spec, ev.rendered.doc
    forced = " GPUStack force-places a single replica on manual gpu_ids anyway (overcommit);" \
        if spec.replicas == 1 else " GPUStack refuses to place it;"
    for check in ev.placed.admission:
        if check.fraction and check.free_fraction < check.fraction:
            ref = check.gpu
            yield finding(ADMISSION_FRACTION, doc.at("gpu_selector", "gpu_ids"),
                          f"GPU {ref.id} has {check.free_fraction:.2f} of {gib(ref.total)} free by GPUStack's "
                          f"bookings, below the {check.fraction:.2f} it books for this deployment.{forced} vLLM "
                          "will not start", spec=spec.name,
                          fix="lower --gpu-memory-utilization or move the deployment",
                          gpu=ref.id, free_fraction=round(check.free_fraction, 4), fraction=check.fraction)


ADMISSION_FRACTION = Rule(
    "GSG023", "admission-free-fraction",
    "A chosen GPU's free fraction is below gpu_memory_utilization: GPUStack will not schedule it.",
    what="A pinned GPU whose free fraction by GPUStack's bookings (earlier specs in wave/file order, existing "
         "instances, system reserve) is below the fraction this deployment books.",
    why="GPUStack admits a vLLM/SGLang GPU only with total x gmu free; a single manual replica is force-placed "
        "anyway and vLLM then fails its startup memory check.",
    example="name: first\ngpu_selector: {gpu_ids: [gpu-b:cuda:0]}\n---\nname: second\n"
            "gpu_selector: {gpu_ids: [gpu-b:cuda:0]}   # two default-gmu (0.9) vLLM deployments",
    fix="Lower --gpu-memory-utilization of the deployments that share the GPU, or move one.",
    check=_admission_fraction)


@per_spec
def _admission_booking(ev: Evaluation) -> Iterator[Finding]:
    spec, doc = ev.rendered.spec, ev.rendered.doc
    for check in ev.placed.admission:
        ref = check.gpu
        if check.booked > ref.total:
            yield finding(ADMISSION_BOOKING, doc.at("gpu_selector", "gpu_ids"),
                          f"GPU {ref.id}: GPUStack bookings {gib(check.booked)} (this deployment "
                          f"{gib(check.booking)}, others {gib(check.booked - check.booking)}) exceed its "
                          f"{gib(ref.total)}", spec=spec.name,
                          fix="lower --gpu-memory-utilization / move one deployment",
                          gpu=ref.id, booked=check.booked, total=ref.total)


ADMISSION_BOOKING = Rule(
    "GSG024", "admission-booking",
    "GPUStack's bookings (total x gmu per GPU) with existing instances exceed the GPU.",
    what="A pinned GPU on which GPUStack's bookings (this deployment's, earlier specs', existing instances') "
         "add up to more than the GPU.",
    why="The bookings are what GPUStack believes is in use; beyond the total the later instance cannot start.",
    example="name: big-booking\ngpu_selector:\n  gpu_ids: [gpu-b:cuda:3]   # already booked by another model\n"
            "backend_parameters: [--gpu-memory-utilization=0.9]",
    fix="Lower --gpu-memory-utilization, or move one deployment to another GPU.",
    check=_admission_booking)


@per_spec
def _no_placement(ev: Evaluation) -> Iterator[Finding]:
    failure = _failed(ev, Unplaced.NO_READY_WORKER, Unplaced.NO_FREE_FRACTION, Unplaced.NO_ROOM_FOR_CLAIM)
    if failure is None:
        return
    if failure.reason is Unplaced.NO_READY_WORKER:
        yield finding(NO_PLACEMENT, ev.rendered.doc.at("name"), f"cluster '{_cluster_of(ev).name}' has no ready worker",
                      spec=ev.rendered.name)
    elif failure.reason is Unplaced.NO_FREE_FRACTION:
        yield _cannot_place(ev, failure, NO_PLACEMENT,
                            f"needs {failure.count} GPU(s) with a free fraction of at least {failure.fraction:.2f}; "
                            f"the best GPU has {failure.best_fraction:.2f}")
    else:
        yield _cannot_place(ev, failure, NO_PLACEMENT, f"no worker has {failure.count} GPU(s) with room for the claim")


NO_PLACEMENT = Rule(
    "GSG025", "no-placement", "No worker in the cluster can take this deployment.",
    what="Automatic placement (no gpu_ids) for which no ready worker has enough GPUs passing GPUStack's admission, "
         "after the specs placed before it.",
    why="The model, or one of its replicas, stays pending.",
    example="name: eight-a\nworker_selector: {gpu: rtx4090}\nbackend_parameters: [--tensor-parallel-size=2]\n---\n"
            "name: eight-b\nworker_selector: {gpu: rtx4090}\nbackend_parameters: [--tensor-parallel-size=2]",
    fix="Pin gpu_selector.gpu_ids, free GPUs, or lower the parallel size.",
    check=_no_placement)

RULES = (CLUSTER, GPU_ID_UNKNOWN, WORKER_SELECTOR, PARALLEL_SIZE, ADMISSION_FRACTION, ADMISSION_BOOKING,
         NO_PLACEMENT)
