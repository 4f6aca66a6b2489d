"""GSG035 and GSG041 on the pure core: real footprints summed per GPU across specs, with memory GPUStack does not
manage, and each engine's start-up check against what the deployments before it left free."""

from types import SimpleNamespace

import pytest
from rule_inputs import QWEN_05B, RTX4090, fleet, gpu, run_stages, vllm, worker

from gpustack_guard.core.rules import fleet as FL
from gpustack_guard.core.units import MiB

DISPLAY = fleet(worker("w1", gpu(0, RTX4090, used=1536 * MiB)))  # a desktop session holds 1.5 GiB
EMPTY = fleet(worker("w1", gpu(0, RTX4090)))
FIX = "lower --gpu-memory-utilization / --mem-fraction-static of the co-located deployments or move one"


def half(name: str) -> dict:
    return vllm(name, "--max-model-len=8192", "--max-num-seqs=32", "--gpu-memory-utilization=0.47",
                gpu_ids=["w1:cuda:0"])


STARTUP_FIX = "lower --gpu-memory-utilization / --mem-fraction-static of the deployments placed before it, or move one"
BGE = {"model": "bge-m3", "worker": "w1", "gpu_indexes": [0], "claims": {0: 13 * 1024 * MiB}}


def findings(*docs, fleet_, rule=FL.GPU_OVERCOMMIT):
    return [(str(f.location), f.message, f.fix, f.spec)
            for f in run_stages(*docs, fleet=fleet_, facts=QWEN_05B).findings(rule)]


def test_two_halves_and_a_display_overcommit_the_gpu():
    # each footprint: 0.47 x 23.99 GiB = 11.27 GiB budget + CUDA context and what else lives outside it, once
    assert findings(half("half-a"), half("half-b"), fleet_=DISPLAY) == [
        ("spec.yaml:12:3", "GPU w1:cuda:0 (NVIDIA GeForce RTX 4090, 23.99 GiB) would carry 25.37 GiB: half-a 11.93 "
                           "GiB, half-b 11.93 GiB, already in use 1.50 GiB (foreign processes)", FIX, "half-b")]


def test_and_the_second_refuses_to_start():
    assert findings(half("half-a"), half("half-b"), fleet_=DISPLAY, rule=FL.STARTUP_FREE_MEMORY) == [
        ("spec.yaml:12:3", "GPU w1:cuda:0 (23.99 GiB): half-b refuses with 10.56 GiB free, 11.77 GiB needed: free "
                           "memory on device (10.06 GiB after CUDA/NCCL start-up) is less than desired GPU memory "
                           "utilization (0.47, 11.27 GiB)", STARTUP_FIX, "half-b")]


def test_two_halves_alone_fit_and_both_start():
    """Sampler warm-up and allocator slack happen inside each profiled budget: counted once, they fit."""
    assert findings(half("half-a"), half("half-b"), fleet_=EMPTY) == []
    assert findings(half("half-a"), half("half-b"), fleet_=EMPTY, rule=FL.STARTUP_FREE_MEMORY) == []


def test_an_existing_instance_is_named():
    assert findings(half("half-a"), fleet_=fleet(worker("w1", gpu(0, RTX4090)), instances=(BGE,))) == [
        ("spec.yaml:4:3", "GPU w1:cuda:0 (NVIDIA GeForce RTX 4090, 23.99 GiB) would carry 24.93 GiB: half-a 11.93 "
                          "GiB, already in use 13.00 GiB (bge-m3 13.00 GiB)", FIX, "half-a")]
    assert findings(half("half-a"), fleet_=fleet(worker("w1", gpu(0, RTX4090)), instances=(BGE,)),
                    rule=FL.STARTUP_FREE_MEMORY) == [
        ("spec.yaml:4:3", "GPU w1:cuda:0 (23.99 GiB): half-a refuses with 10.99 GiB free, 11.77 GiB needed: free "
                          "memory on device (10.49 GiB after CUDA/NCCL start-up) is less than desired GPU memory "
                          "utilization (0.47, 11.27 GiB)", STARTUP_FIX, "half-a")]


def test_one_deployment_alone_is_left_to_the_memory_rules():
    assert findings(half("half-a"), fleet_=EMPTY) == []


def test_the_final_ledger_holds_every_footprint_in_apply_order():
    run = run_stages(half("b-first") | {"guard": {"wave": 0}}, half("a-second") | {"guard": {"wave": 1}},
                     fleet=DISPLAY, facts=QWEN_05B)
    footprints = run.results.ledgers["prod"].footprints["w1:cuda:0"]
    assert [name for name, _ in footprints] == ["b-first", "a-second"]
    assert footprints[0][1] == footprints[1][1] == run.results.evaluations[0].estimate.footprint


def test_a_backend_without_arithmetic_leaves_no_footprint():
    custom = half("custom") | {"backend": "Custom"}
    run = run_stages(custom, half("half-a"), fleet=EMPTY, facts=QWEN_05B)
    assert [name for name, _ in run.results.ledgers["prod"].footprints["w1:cuda:0"]] == ["half-a"]
    assert run.results.evaluations[0].estimates == () and run.results.evaluations[0].placement is not None


# --- replica_estimates: each deployment's estimate per GPU, looked up once per run ------------------------------
def _gpu(gid: str) -> SimpleNamespace:
    return SimpleNamespace(id=gid)


def _ev(replicas, estimates) -> SimpleNamespace:
    placement = None if replicas is None else SimpleNamespace(replicas=tuple(tuple(map(_gpu, r)) for r in replicas))
    return SimpleNamespace(placement=placement, estimates=tuple(estimates))


def _first_replica_the_long_way(gid, ev):
    """What the rule looked up per GPU before: the estimate of the first replica listing the GPU."""
    for gpus, est in zip(ev.placement.replicas, ev.estimates):
        if any(g.id == gid for g in gpus):
            return est
    return None


@pytest.mark.parametrize("replicas, estimates", [
    ([["a"]], ["E1"]),  # one replica, one GPU
    ([["a", "b"]], ["E1"]),  # tensor parallel: the replica's estimate on each of its GPUs
    ([["a"], ["b"]], ["E1", "E2"]),  # two replicas, one GPU each
    ([["a", "b"], ["b", "c"]], ["E1", "E2"]),  # a GPU listed by two replicas: the first one's
    ([["a"], ["b"]], ["E1"]),  # estimation stopped after the first replica: none for the second's GPU
    ([["a"], ["b"]], []),  # no arithmetic for the backend: no estimate anywhere
    ([["a"], ["b"]], [None, "E2"]),  # a replica without an estimate is skipped, not the next one's taken
    ([], []),  # parked: no replica
])
def test_each_gpu_gets_the_estimate_of_the_first_replica_that_lists_it(replicas, estimates):
    ev = _ev(replicas, estimates)
    kept = FL.replica_estimates({"m": ev})
    for gid in ("a", "b", "c", "d"):
        expected = _first_replica_the_long_way(gid, ev)
        assert kept["m"].get(gid) == expected
        assert FL._on_gpu(gid, [("m", 1)], kept) == ([("m", expected)] if expected is not None else [])


def test_a_deployment_unplaced_or_unknown_is_left_out_and_apply_order_is_kept():
    kept = FL.replica_estimates({"unplaced": _ev(None, []), "x": _ev([["a"]], ["EX"]), "y": _ev([["a"]], ["EY"])})
    assert "unplaced" not in kept
    assert FL._on_gpu("a", [("y", 1), ("unplaced", 1), ("gone", 1), ("x", 1)], kept) == [("y", "EY"), ("x", "EX")]
