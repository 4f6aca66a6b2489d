"""Signals the verdict cannot take as given: a KV gauge outside 0..1 is not read (said so); a dead endpoint says
what the engine showed last."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.soak.scrape import parse_samples
from gpustack_guard.core.soak.metrics import Normaliser
from gpustack_guard.core.soak.rounds import RequestResult, aggregate_round
from gpustack_guard.core.soak.verdict import INCONCLUSIVE, STABLE, classify

NOT_READ = "vllm:kv_cache_usage_perc outside 0..1 (a percent, or no ratio): KV usage not read"


def _snapshot(t: float, kv: str):
    text = f'vllm:kv_cache_usage_perc{{model_name="m"}} {kv}\nvllm:num_requests_running{{model_name="m"}} 8\n'
    return Normaliser(model="m").snapshot(t, parse_samples(text))


@pytest.mark.parametrize("kv, usage, errors", [
    ("0.97", 0.97, ()), ("1", 1.0, ()), ("0", 0.0, ()),
    ("97", None, (NOT_READ,)),  # before: 97.0, a pool "at 9,700 %"
    ("1.5", None, (NOT_READ,)), ("-0.1", None, (NOT_READ,)),
])
def test_kv_usage_is_a_ratio_or_not_read(kv, usage, errors):
    snap = _snapshot(1.0, kv)
    assert (snap.kv_usage, snap.errors, snap.running) == (usage, errors, 8.0)


def _rounds(kv: str):
    results = [RequestResult(0.0, 1.0, True, 0.1, [0.01] * 9, 10)] * 20
    return [aggregate_round(i, 10.0 * i, 10.0, results, [_snapshot(10.0 * i + k, kv) for k in range(5)])
            for i in range(4)]


def test_a_percent_kv_gauge_makes_no_verdict_of_its_own():
    """Before: 97 read as a ratio pinned the pool in every round; now the verdict says KV was not seen."""
    verdict = classify(_rounds("97"), None)
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.warnings == [f"{NOT_READ} in 20 of 20 scrapes: the verdict is drawn without what it should "
                                "have shown"]
    assert not any("KV usage max" in line for line in verdict.evidence)
    good = classify(_rounds("0.5"), None)
    assert (good.verdict, good.warnings) == (STABLE, [])
    assert "KV usage max 50%; at or above 95% in 0 of 4 rounds" in good.evidence


def test_a_dead_endpoint_says_what_the_engine_showed_last_or_that_nothing_was_read():
    results = [RequestResult(0.0, 1.0, True, 0.1, [0.01] * 9, 10)] * 20
    bare = [aggregate_round(i, 10.0 * i, 10.0, results, []) for i in range(2)]
    verdict = classify(bare, None, down_at_s=15.0)
    assert verdict.evidence[:2] == ["the endpoint stopped accepting connections at 15.0 s: the run stopped there "
                                    "instead of running on against a dead server",
                                    "no engine metrics were read before it went down"]
    dead = aggregate_round(2, 20.0, 10.0, results, [])  # the round it died in read nothing
    seen = classify(_rounds("0.97")[:2] + [dead], None, down_at_s=25.0)
    assert seen.evidence[1] == "last seen, in round 2: KV usage max 97%, 8 running"


@pytest.mark.parametrize("running, errors", [
    ("8", ()), ("0", ()),
    ("-5", ("vllm:num_requests_running is no count (negative, fractional or past 18 digits): not read",)),
    ("3.5", ("vllm:num_requests_running is no count (negative, fractional or past 18 digits): not read",)),
    ("1e300", ("vllm:num_requests_running is no count (negative, fractional or past 18 digits): not read",)),
])
def test_a_request_count_that_is_no_count_is_not_read(running, errors):
    text = (f'vllm:num_requests_running{{model_name="m"}} {running}\nvllm:num_requests_waiting{{model_name="m"}} 2\n'
            'vllm:num_preemptions_total{model_name="m"} 4\nvllm:kv_cache_usage_perc{model_name="m"} 0.5\n')
    snap = Normaliser(model="m").snapshot(1.0, parse_samples(text))
    # before: -5, 3.5 or 1e300 running (and a --max-num-seqs built from it)
    assert (snap.running, snap.waiting, snap.kv_usage, snap.errors) == (
        None if errors else float(running), 2.0, 0.5, errors)


def test_a_negative_preemption_counter_is_not_read():
    norm = Normaliser(model="m")
    snaps = [norm.snapshot(float(t), parse_samples(f'vllm:num_preemptions_total{{model_name="m"}} {value}\n'))
             for t, value in enumerate(["-5", "3"])]
    # before: 8 preemptions counted from -5 to 3
    assert [(s.preemptions, s.errors) for s in snaps] == [
        (None, ("vllm:num_preemptions_total is no count (negative, fractional or past 18 digits): not read",)),
        (0.0, ())]


BYTE_GAUGES = {"process_resident_memory_bytes": "resident_bytes", "gpustack:worker_node_gram_used_bytes":
               "gpu_used_bytes", "gpustack:worker_node_gram_allocated_bytes": "gpu_allocated_bytes",
               "gpustack:worker_node_gram_total_bytes": "gpu_total_bytes",
               "gpustack:worker_node_memory_total_bytes": "host_total_bytes"}  # the last is read as a maximum


@pytest.mark.parametrize("name", BYTE_GAUGES)
@pytest.mark.parametrize("values, read", [
    (["1e308", "1e308"], None),  # before: summed to infinity, an internal error and 'Infinity' in soak.json
    (["-1e308"], None),  # before: a memory column of 300 digits of negative GiB
    (["-1"], None), (["9223372036854775808"], None),  # 2^63
    (["0", "9223372036854774784"], (9223372036854774784.0,) * 2),  # the largest double below 2^63, and nothing
    (["2147483648", "1073741824"], (3221225472.0, 2147483648.0)),  # (their sum, the larger)
])
def test_a_byte_gauge_past_2_63_or_below_zero_is_not_read(name, values, read):
    text = "".join(f'{name}{{gpu="{i}"}} {v}\n' for i, v in enumerate(values))
    text += 'vllm:num_requests_running{model_name="m"} 8\n'
    snap = Normaliser(model="m").snapshot(1.0, parse_samples(text))
    field = BYTE_GAUGES[name]
    expected = None if read is None else read[1] if field == "host_total_bytes" else read[0]
    assert (getattr(snap, field), snap.running) == (expected, 8.0)
    assert snap.errors == (() if read else (f"{name} is no byte count (negative or past 2^63 bytes): not read",))


@pytest.mark.parametrize("values, tokens", [
    (["1e308", "1e308"], None),  # before: int(inf), an internal error in round 1
    (["1e18"], None), (["99999999999999", "1"], 10**14), (["163840", "163840"], 327680),
])
def test_an_sglang_token_pool_past_18_digits_is_no_pool(values, tokens):
    text = "".join(f'sglang:max_total_num_tokens{{model_name="m",dp="{i}"}} {v}\n' for i, v in enumerate(values))
    assert Normaliser(model="m").snapshot(1.0, parse_samples(text)).kv_capacity_tokens == tokens
