"""GSG035 on the pure core: real footprints summed per GPU across specs, with memory GPUStack does not manage."""

from rule_inputs import QWEN_05B, RTX4090, fleet, gpu, run_stages, vllm, worker
from gpustack_guard.core.rules import fleet as FL
from gpustack_guard.core.units import MiB

DISPLAY = fleet(worker("w1", gpu(0, RTX4090, used=1536 * MiB)))  # a desktop session holds 1.5 GiB
EMPTY = fleet(worker("w1", gpu(0, RTX4090)))
FIX = "lower --gpu-memory-utilization / --mem-fraction-static of the co-located deployments or move one"


def half(name: str) -> dict:
    return vllm(name, "--max-model-len=8192", "--max-num-seqs=32", "--gpu-memory-utilization=0.47",
                gpu_ids=["w1:cuda:0"])


def findings(*docs, fleet_):
    return [(str(f.location), f.message, f.fix, f.spec)
            for f in run_stages(*docs, fleet=fleet_, facts=QWEN_05B).findings(FL.GPU_OVERCOMMIT)]


def test_two_halves_and_a_display_overcommit_the_gpu():
    assert findings(half("half-a"), half("half-b"), fleet_=DISPLAY) == [
        ("spec.yaml:12:3", "GPU w1:cuda:0 (NVIDIA GeForce RTX 4090, 23.99 GiB) would carry 26.74 GiB: half-a 12.62 "
                           "GiB, half-b 12.62 GiB, already in use 1.50 GiB (foreign processes)", FIX, "half-b")]


def test_two_halves_alone_still_exceed_the_gpu():
    assert findings(half("half-a"), half("half-b"), fleet_=EMPTY) == [
        ("spec.yaml:12:3", "GPU w1:cuda:0 (NVIDIA GeForce RTX 4090, 23.99 GiB) would carry 25.24 GiB: half-a 12.62 "
                           "GiB, half-b 12.62 GiB", FIX, "half-b")]


def test_an_existing_instance_is_named():
    instance = {"model": "bge-m3", "worker": "w1", "gpu_indexes": [0], "claims": {0: 12 * 1024 * MiB}}
    assert findings(half("half-a"), fleet_=fleet(worker("w1", gpu(0, RTX4090)), instances=(instance,))) == [
        ("spec.yaml:4:3", "GPU w1:cuda:0 (NVIDIA GeForce RTX 4090, 23.99 GiB) would carry 24.62 GiB: half-a 12.62 "
                          "GiB, already in use 12.00 GiB (bge-m3 12.00 GiB)", FIX, "half-a")]


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
