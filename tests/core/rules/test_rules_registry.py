"""The registry: every id once, in order, documented; each check yields only its own rule's findings."""

import re

import pytest
from rule_inputs import FLEET_1, OK, run_stages, vllm

from gpustack_guard.core.findings import Rule, Severity
from gpustack_guard.core.fleet.placement import Unplaced
from gpustack_guard.core.rules import documents, fleet, memory, placement, server, suppressions
from gpustack_guard.core.rules.registry import RULES, lookup, suggestions


def test_ids_are_unique_sorted_and_stable_in_form():
    grouped = [r.id for module in (documents, placement, memory, fleet, server, suppressions)
               for r in module.RULES]
    assert len(grouped) == len(set(grouped)) == len(RULES) == 51
    assert list(RULES) == sorted(RULES)
    assert all(re.fullmatch(r"GSG0\d\d", rid) for rid in RULES)
    assert len({r.name for r in RULES.values()}) == len(RULES)


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda r: r.id)
def test_every_rule_is_documented(rule: Rule):
    assert rule.summary and rule.what and rule.why and rule.example and rule.fix
    assert rule.check is not None or rule.emitted_by, "a rule without a check must say which stage emits it"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)


def test_defaults():
    assert {rid for rid, r in RULES.items() if r.severity is Severity.WARNING} == {
        "GSG014", "GSG015", "GSG026", "GSG028", "GSG033", "GSG034", "GSG040", "GSG044", "GSG045", "GSG050",
        "GSG055"}
    assert {rid for rid, r in RULES.items() if r.severity is Severity.INFO} == {"GSG038", "GSG039", "GSG051",
                                                                               "GSG052"}


def test_lookup_by_id_or_name_and_suggestions():
    assert lookup("gsg033") is lookup("kv-oversubscribed") is RULES["GSG033"]
    assert lookup("GSG099") is None
    assert suggestions("GSG333") == ["GSG033", "GSG053", "GSG043"]
    assert suggestions("headrom") == ["headroom"]


# Inputs that make many rules fire at once: a check must still report only its own id.
NOISY = [
    (OK, OK | {"name": "b", "backend_version": None}, vllm("c", "--tensor-parallel-size=3", gpu_ids=["w1:cuda:1"])),
    (vllm("a", "--max-model-len=65536", "--gpu-memory-utilization=0.97", gpu_ids=["w1:cuda:0"]),
     vllm("a", "--max-model-len=lots", gpu_ids=["w9:cuda:0"]), OK | {"cluster_name": "nope", "name": "z"}),
]


@pytest.mark.parametrize("docs", NOISY)
def test_each_check_yields_only_its_own_id(docs):
    results = run_stages(*docs, fleet=FLEET_1).results
    fired = set()
    for rule in RULES.values():
        if rule.check is None:
            continue
        found = list(rule.check(results))
        assert {f.rule.id for f in found} <= {rule.id}
        fired |= {f.rule.id for f in found}
    assert len(fired) >= 3


def test_every_placement_reason_belongs_to_one_rule():
    by_rule = {
        "GSG008": {Unplaced.CLUSTER_REQUIRED, Unplaced.CLUSTER_UNKNOWN},
        "GSG020": {Unplaced.GPU_ID_UNKNOWN},
        "GSG021": {Unplaced.WORKER_SELECTOR, Unplaced.WORKER_NOT_READY},
        "GSG022": {Unplaced.PARALLEL_MISMATCH, Unplaced.TOO_FEW_GPU_IDS, Unplaced.WORKER_TOO_SMALL,
                   Unplaced.TOPOLOGY_REFUSED},
        "GSG025": {Unplaced.NO_READY_WORKER, Unplaced.NO_FREE_FRACTION, Unplaced.NO_ROOM_FOR_CLAIM},
    }
    reasons = [reason for group in by_rule.values() for reason in group]
    assert sorted(reasons, key=lambda r: r.value) == sorted(Unplaced, key=lambda r: r.value)


def test_every_check_runs_once_either_per_spec_or_over_the_whole_results():
    from gpustack_guard.core.rules.registry import PER_SPEC_CHECKS, WHOLE_CHECKS

    checks = [r.check for r in RULES.values() if r.check is not None]
    per_spec = [c.per_spec for c in checks if hasattr(c, "per_spec")]
    assert (len(WHOLE_CHECKS), len(PER_SPEC_CHECKS)) == (len(checks) - len(per_spec), len(per_spec))
    assert list(PER_SPEC_CHECKS) == per_spec  # id order
    assert set(WHOLE_CHECKS) == {c for c in checks if not hasattr(c, "per_spec")}


def test_one_pass_over_the_specs_finds_what_one_pass_per_rule_found():
    from gpustack_guard.core.pipeline import run_rules

    # several specs with findings of several per-spec and whole-results rules, two on one line of one rule
    docs = [vllm("big", "--max-model-len=131072", "--max-num-seqs=512", "--gpu-memory-utilization=0.99",
                 gpu_ids=["w2:cuda:0"]),
            vllm("big", "--max-num-seqs=256", gpu_ids=["w2:cuda:0"]),
            vllm("nowhere", gpu_ids=["w9:cuda:0"]),
            OK]
    results = run_stages(*docs, fleet=FLEET_1).results

    def place(f):
        return (f.location.file, f.location.line, f.location.column, f.rule.id)

    per_rule = sorted((f for r in RULES.values() if r.check is not None for f in r.check(results)), key=place)
    fused = sorted(run_rules(results), key=place)
    assert [(place(f), f.message, f.spec) for f in fused] == [(place(f), f.message, f.spec) for f in per_rule]
    assert len({f.rule.id for f in fused}) >= 4
