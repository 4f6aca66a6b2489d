"""GSG008 and GSG020-GSG025 on the pure core: one structured placement reason per finding, exact messages."""

import pytest
from rule_inputs import FLEET_1, OK, RTX4090, fleet, gpu, run_stages, vllm, worker

from gpustack_guard.core.fleet.placement import Unplaced
from gpustack_guard.core.rules import placement as P
from gpustack_guard.core.units import GiB

AUTO = vllm("a", "--max-model-len=8192", "--max-num-seqs=16")
TWO_CLUSTERS = fleet(worker("w1", gpu(0)), more_clusters=("dev",))
BOOKED = fleet(worker("w1", gpu(0, allocated=8 * GiB, used=9 * GiB)))
NOT_READY = fleet(worker("w1", gpu(0), state="not_ready"))
# a ready worker beside one in each of the states GPUStack's StatusFilter leaves out
DOWN = {state: fleet(worker("w1", gpu(0), gpu(1)), worker("w2", gpu(0), state=state))
        for state in ("not_ready", "unreachable", "maintenance")}
DOWN_FIX = "list GPUs of ready workers, or bring the worker back first"


def _down(gid: str, state: str) -> str:
    return (f"gpu id '{gid}' is on worker 'w2' whose state is '{state}': GPUStack places on ready workers only, so "
            "the model stays pending and its memory was not checked")


def tp(size: int, name: str = "a", gpu_ids=None, **fields):
    return vllm(name, f"--tensor-parallel-size={size}", "--max-model-len=8192", "--max-num-seqs=16",
                gpu_ids=gpu_ids, **fields)


CANNOT = "GPUStack cannot place replica {}: {} (gsg does not simulate multi-worker placement)"
CANNOT_FIX = "pin gpu_selector.gpu_ids, free GPUs or lower the parallel size"

CASES = [
    # (rule, documents, fleet, expected placement reason of the first spec, [(location, message, fix)])
    (P.CLUSTER, [OK | {"cluster_name": "staging"}], FLEET_1, Unplaced.CLUSTER_UNKNOWN,
     [("spec.yaml:8:1", "cluster 'staging' is not in the fleet (known: prod)", None)]),
    (P.CLUSTER, [OK], TWO_CLUSTERS, Unplaced.CLUSTER_REQUIRED,
     [("spec.yaml:1:1", "cluster_name is required: the fleet has several clusters (prod, dev)",
       "add 'cluster_name:'")]),
    (P.GPU_ID_UNKNOWN, [vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:0", "w9:cuda:0"])], FLEET_1,
     Unplaced.GPU_ID_UNKNOWN,
     [("spec.yaml:4:3", "gpu id 'w9:cuda:0' is not in cluster 'prod' (known: w1:cuda:0, w1:cuda:1, w2:cuda:0…)",
       None)]),
    (P.WORKER_SELECTOR, [AUTO | {"worker_selector": {"gpu": "h100"}}], FLEET_1, Unplaced.WORKER_SELECTOR,
     [("spec.yaml:7:1", "worker_selector {'gpu': 'h100'} matches no ready worker of cluster 'prod'",
       "fix the labels or label a worker")]),
    # the two selectors contradict each other: gpu_ids on a worker the worker_selector leaves out
    (P.WORKER_SELECTOR, [vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:0", "w2:cuda:0"])
                         | {"worker_selector": {"worker-name": "w1"}}], FLEET_1, Unplaced.WORKER_SELECTOR,
     [("spec.yaml:4:3", "gpu id 'w2:cuda:0' is on a worker that worker_selector {'worker-name': 'w1'} excludes: "
                        "GPUStack applies both selectors, so this GPU is never used",
       "drop worker_selector or list GPUs of the workers it selects")]),
    # manual gpu_ids on a worker that is not ready: before, the spec was sized on that GPU and passed
    *[(P.WORKER_SELECTOR, [vllm("a", "--max-model-len=8192", gpu_ids=["w2:cuda:0"])], DOWN[state],
       Unplaced.WORKER_NOT_READY, [("spec.yaml:4:3", _down("w2:cuda:0", state), DOWN_FIX)])
      for state in DOWN],
    # only the listed GPU of the worker that is down is named, at its own position in gpu_ids
    (P.WORKER_SELECTOR, [tp(2, gpu_ids=["w1:cuda:0", "w2:cuda:0"])], DOWN["maintenance"],
     Unplaced.WORKER_NOT_READY, [("spec.yaml:4:3", _down("w2:cuda:0", "maintenance"), DOWN_FIX)]),
    (P.PARALLEL_SIZE, [tp(2, gpu_ids=["w1:cuda:0", "w1:cuda:1"])
                       | {"gpu_selector": {"gpu_ids": ["w1:cuda:0", "w1:cuda:1"], "gpus_per_replica": 1}}],
     FLEET_1, Unplaced.PARALLEL_MISMATCH,
     [("spec.yaml:4:3", "gpus_per_replica is 1 but the parallel size (tp x pp) is 2: GPUStack's scheduler rejects "
                        "the model (world size does not match the selected gpu count) unless env "
                        "GPUSTACK_SKIP_GPU_COUNT_CHECK=1", "make them equal")]),
    (P.PARALLEL_SIZE, [tp(4, gpu_ids=["w1:cuda:0", "w1:cuda:1"])], FLEET_1, Unplaced.TOO_FEW_GPU_IDS,
     [("spec.yaml:4:3", "1 replica(s) x 4 GPU(s) need 4 GPUs; gpu_ids lists 2",
       "list more gpu_ids or lower replicas / --tensor-parallel-size")]),
    (P.PARALLEL_SIZE, [tp(4)], FLEET_1, Unplaced.WORKER_TOO_SMALL,
     [("spec.yaml:1:1", CANNOT.format(1, "needs 4 GPUs on one worker; the largest eligible worker has 2"),
       CANNOT_FIX)]),
    (P.ADMISSION_FRACTION, [OK, OK | {"name": "b"}], FLEET_1, None,
     [("spec.yaml:12:3", "GPU w1:cuda:0 has 0.10 of 47.99 GiB free by GPUStack's bookings, below the 0.90 it "
                         "books for this deployment. GPUStack force-places a single replica on manual gpu_ids "
                         "anyway (overcommit); vLLM will not start",
       "lower --gpu-memory-utilization or move the deployment")]),
    (P.ADMISSION_FRACTION, [OK, OK | {"name": "b", "replicas": 2,
                                      "gpu_selector": {"gpu_ids": ["w1:cuda:0", "w1:cuda:1"]}}], FLEET_1, None,
     [("spec.yaml:12:3", "GPU w1:cuda:0 has 0.10 of 47.99 GiB free by GPUStack's bookings, below the 0.90 it "
                         "books for this deployment. GPUStack refuses to place it; vLLM will not start",
       "lower --gpu-memory-utilization or move the deployment")]),
    (P.ADMISSION_BOOKING, [vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:0"])], BOOKED, None,
     [("spec.yaml:4:3", "GPU w1:cuda:0: GPUStack bookings 51.19 GiB (this deployment 43.19 GiB, others 8.00 GiB) "
                        "exceed its 47.99 GiB", "lower --gpu-memory-utilization / move one deployment")]),
    (P.NO_PLACEMENT, [AUTO], NOT_READY, Unplaced.NO_READY_WORKER,
     [("spec.yaml:1:1", "cluster 'prod' has no ready worker", None)]),
    # the first TP=2 deployment books both A6000s of w1: the second finds no pair with 0.90 free
    (P.NO_PLACEMENT, [tp(2), tp(2, "b")], FLEET_1, None,
     [("spec.yaml:8:1", CANNOT.format(1, "needs 2 GPU(s) with a free fraction of at least 0.90; the best GPU has "
                                         "1.00"), CANNOT_FIX)]),
    # claim-based (Custom backend): GPUStack books weights x 1.2 + 2 GiB for 8B, more than the 4090 has left
    (P.NO_PLACEMENT, [AUTO | {"backend": "Custom"}], fleet(worker("w2", gpu(0, RTX4090, allocated=10 * GiB))),
     Unplaced.NO_ROOM_FOR_CLAIM,
     [("spec.yaml:1:1", CANNOT.format(1, "no worker has 1 GPU(s) with room for the claim"), CANNOT_FIX)]),
]


@pytest.mark.parametrize("rule,docs,fleet_,reason,expected", CASES, ids=lambda v: getattr(v, "id", None))
def test_rule_reports_exactly(rule, docs, fleet_, reason, expected):
    run = run_stages(*docs, fleet=fleet_)
    found = run.findings(rule)
    assert [(str(f.location), f.message, f.fix) for f in found] == expected
    assert {f.rule.id for f in found} == {rule.id}
    if reason is not None:
        failure = run.results.evaluations[0].placed.failure
        assert failure is not None and failure.reason is reason


def test_admission_findings_carry_the_numbers():
    run = run_stages(vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:0"]), fleet=BOOKED)
    (fraction,) = run.findings(P.ADMISSION_FRACTION)
    assert fraction.data == {"gpu": "w1:cuda:0", "free_fraction": 0.8333, "fraction": 0.9}
    (booking,) = run.findings(P.ADMISSION_BOOKING)
    assert booking.data == {"gpu": "w1:cuda:0", "booked": 8 * GiB + int(49140 * 2**20 * 0.9),
                            "total": 49140 * 2**20}


NEAR_MISSES = [
    (P.CLUSTER, [OK | {"cluster_name": "dev"}], TWO_CLUSTERS),
    (P.GPU_ID_UNKNOWN, [vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:1"])], FLEET_1),
    (P.WORKER_SELECTOR, [AUTO | {"worker_selector": {"worker-name": "w1"}}], FLEET_1),
    (P.WORKER_SELECTOR, [vllm("a", "--max-model-len=8192", gpu_ids=["w1:cuda:0", "w1:cuda:1"])
                         | {"worker_selector": {"worker-name": "w1"}}], FLEET_1),
    (P.PARALLEL_SIZE, [tp(2, gpu_ids=["w1:cuda:0", "w1:cuda:1"])], FLEET_1),
    (P.WORKER_SELECTOR, [tp(2, gpu_ids=["w1:cuda:0", "w1:cuda:1"])], DOWN["not_ready"]),
    # replicas 0: GPUStack creates no instance, so a worker that is down holds nothing back
    (P.WORKER_SELECTOR, [vllm("a", "--max-model-len=8192", gpu_ids=["w2:cuda:0"]) | {"replicas": 0}],
     DOWN["not_ready"]),
    (P.ADMISSION_FRACTION, [OK, OK | {"name": "b", "gpu_selector": {"gpu_ids": ["w1:cuda:1"]}}], FLEET_1),
    (P.ADMISSION_BOOKING, [vllm("a", "--max-model-len=8192", "--gpu-memory-utilization=0.8",
                                gpu_ids=["w1:cuda:0"])], BOOKED),
    (P.NO_PLACEMENT, [tp(2), AUTO | {"name": "b", "worker_selector": {"worker-name": "w2"}}], FLEET_1),
]


@pytest.mark.parametrize("rule,docs,fleet_", NEAR_MISSES, ids=lambda v: getattr(v, "id", None))
def test_near_miss_is_clean(rule, docs, fleet_):
    assert run_stages(*docs, fleet=fleet_).findings(rule) == []


def test_automatic_placement_books_for_the_next_spec():
    """The fold: spec a's booking is in the ledger spec b is placed against, and in the final ledger."""
    run = run_stages(AUTO, AUTO | {"name": "b"}, fleet=fleet(worker("w1", gpu(0), gpu(1, RTX4090))))
    a, b = run.results.evaluations
    assert [[g.id for g in r] for r in a.placement.replicas] == [["w1:cuda:0"]]
    assert [[g.id for g in r] for r in b.placement.replicas] == [["w1:cuda:1"]]
    assert a.placed.ledger.bookings == {"w1:cuda:0": 0, "w1:cuda:1": 0}
    assert b.placed.ledger.bookings == {"w1:cuda:0": int(49140 * 2**20 * 0.9), "w1:cuda:1": 0}
    assert run.results.ledgers["prod"].bookings == {"w1:cuda:0": int(49140 * 2**20 * 0.9),
                                                    "w1:cuda:1": int(24564 * 2**20 * 0.9)}
