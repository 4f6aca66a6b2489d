"""GSG041 works out a GPU's failing start-up checks once per (GPU total, memory held before, alone, estimates in
start order) and labels them with each GPU's own names (issue 34, fourteenth round). GPUs that differ in one of
those alone must get the long way's findings: a key part dropped would hand a neighbour's answer back."""

from __future__ import annotations

from rule_inputs import A6000, QWEN_05B, RTX4090, fleet, gpu, run_stages, vllm, worker

from gpustack_guard.core.memory.colocation import startup_sequence
from gpustack_guard.core.rules import fleet as FL
from gpustack_guard.core.units import GiB, MiB


def _on(index: int, name: str, gmu: str = "0.47") -> dict:
    return vllm(name, "--max-model-len=8192", "--max-num-seqs=32", f"--gpu-memory-utilization={gmu}",
                gpu_ids=[f"w1:cuda:{index}"])


# gpu 0 and 1 alike (a memo hit: each must name its own specs); 2 holds less before (occupied); 3 is larger (total);
# 4 holds one deployment with more memory held before; 5 and 6 start the same two estimates in opposite orders;
# 7 is gpu 0 with other estimates (another gmu)
GPUS = fleet(worker("w1", *(gpu(i, RTX4090, used=1536 * MiB) for i in (0, 1)), gpu(2, RTX4090, used=512 * MiB),
                    gpu(3, A6000, used=1536 * MiB), gpu(4, RTX4090, used=13 * GiB),
                    *(gpu(i, RTX4090, used=1536 * MiB) for i in (5, 6, 7))))
DOCS = [_on(0, "a0"), _on(0, "b0"), _on(1, "a1"), _on(1, "b1"), _on(2, "a2"), _on(2, "b2"), _on(3, "a3"),
        _on(3, "b3"), _on(4, "alone"), _on(5, "c5", "0.30"), _on(5, "d5", "0.60"), _on(6, "e6", "0.60"),
        _on(6, "f6", "0.30"), _on(7, "g7", "0.45"), _on(7, "h7", "0.45")]


def _long_way(results) -> list[tuple]:
    """The rule as it was before the memo: every GPU's start-up sequence worked out anew."""
    by_name = {ev.rendered.name: ev for ev in results.evaluations}
    estimates = FL.replica_estimates(by_name)
    found = []
    for ledger in results.ledgers.values():
        for gid, entries in ledger.footprints.items():
            occupied = ledger.occupied_before(gid)
            if not entries:
                continue
            alone = len(entries) == 1 and occupied == 0
            total = ledger.gpus[gid].total
            for check in startup_sequence(total, occupied, FL._on_gpu(gid, entries, estimates)):
                if check.starts or (alone and not check.free_memory_check):
                    continue
                found.append((gid, check.name, check.outcome, check.free_at_start, check.needs_free, check.reason))
    return found


def _memo_way(results) -> list[tuple]:
    return [(f.data["gpu"], f.spec, f.message.split(f" {f.spec} ", 1)[1].split(" with ", 1)[0], f.data["free"],
             f.data["needed"], f.message.split(" needed: ", 1)[1]) for f in FL._startup_free_memory(results)]


def test_every_gpu_gets_the_long_ways_findings_and_its_own_names():
    results = run_stages(*DOCS, fleet=GPUS, facts=QWEN_05B).results
    expected = _long_way(results)
    assert _memo_way(results) == expected
    named = {(gid, name) for gid, name, *_ in expected}
    assert {("w1:cuda:0", "b0"), ("w1:cuda:1", "b1")} <= named  # the hit names gpu 1's own spec
    reported = {gid: (outcome, free, needed) for gid, _, outcome, free, needed, _ in expected}
    assert reported["w1:cuda:0"] == reported["w1:cuda:1"]
    for neighbour in ("w1:cuda:2", "w1:cuda:4", "w1:cuda:7"):  # gpu 0 with one key part changed
        assert reported[neighbour] != reported["w1:cuda:0"]
    assert ("w1:cuda:5", "d5") in named and ("w1:cuda:6", "f6") in named  # the order of the estimates is a key
    assert reported["w1:cuda:5"] != reported["w1:cuda:6"]


def test_the_findings_are_the_rules_own_and_in_gpu_order():
    results = run_stages(*DOCS, fleet=GPUS, facts=QWEN_05B).results
    found = list(FL._startup_free_memory(results))
    assert [f.spec for f in found] == [name for _, name, *_ in _long_way(results)]
    for f in found:
        assert f.message.startswith(f"GPU {f.data['gpu']} (") and f.rule is FL.STARTUP_FREE_MEMORY
