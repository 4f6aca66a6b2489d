"""Every scenario × 5 seeds, end to end against fake servers with noise, all at once in one event loop.

Each run is the real `gsg soak` pipeline (commands.soak.soak: load driver, scraper, rounds, verdict) at
--round-seconds 2. The servers are in-process (httpx transports, no sockets), and the loop runs on a virtual
clock (support.virtual_time) that the soak and the fake engines read too: every TTFT, gap, round and memory
slope is the fakes' own, free of this machine's load, and the matrix costs its CPU, not 4 × 2 s of waiting.
tests/cli/test_soak.py covers the socket path in real time.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from support.soak_fakes import SCENARIOS, Router, Scenario
from support.virtual_time import VirtualClock, run

from gpustack_guard.commands.soak import SoakOptions, build_report, soak

pytestmark = pytest.mark.xdist_group("soak-scenarios")  # the module-scoped matrix runs once, on one worker

SEEDS = range(5)
# the engines rotate over the seeds; llama.cpp exposes no memory and no preemption counter, so it only
# serves the scenarios that need neither
FLAVOURS = {"stable": ("vllm", "vllm-old", "sglang", "gpustack", "llamacpp"),
            "memory-growth": ("vllm", "vllm-old", "sglang", "gpustack", "vllm"),
            "preemption": ("vllm", "vllm-old", "sglang", "gpustack", "vllm"),
            "failing": ("vllm", "vllm-old", "sglang", "gpustack", "llamacpp"),
            "reasoning": ("vllm", "vllm-old", "sglang", "gpustack", "llamacpp")}
EXPECTED = {"stable": "stable", "memory-growth": "memory-growth", "preemption": "preemption", "failing": "failing",
            "reasoning": "stable"}
REFERENCE_CASES = {("preemption", "stable"): "local", ("latency-drift", "stable"): "local",
                   ("latency-drift", "latency-drift"): "shared"}


def _slow(name: str) -> Scenario:
    """Fewer, longer requests than the default fake: less CPU for three dozen soaks."""
    return dataclasses.replace(SCENARIOS[name], ttft_s=0.15)


async def _one(clock: VirtualClock, scenario: str, seed: int, flavour: str, reference: str | None = None):
    router = Router(clock)
    ours = router.serve(_slow(scenario), seed, flavour)
    ref = router.serve(_slow(reference), seed + 100) if reference else None
    opts = SoakOptions(url=ours.url, model="qwen3-8b", rounds=4, round_seconds=2, concurrency=3,
                       prompt_tokens=32, max_tokens=3, metrics_urls=[ours.url + "/metrics"], seed=seed,
                       reference_url=ref.url if ref else None, output="json", transport_factory=lambda: router,
                       clock=clock)
    plan, progress = await soak(opts)
    return build_report(opts, plan, progress), ours


@pytest.fixture(scope="module")
def matrix():
    cases = [(scenario, seed, FLAVOURS[scenario][seed], None) for scenario in FLAVOURS for seed in SEEDS]
    cases += [(ours, seed, "vllm", ref) for ours, ref in REFERENCE_CASES for seed in (0, 1)]

    clock = VirtualClock()

    async def all_at_once():
        return await asyncio.gather(*(_one(clock, *case) for case in cases))

    return dict(zip(cases, run(all_at_once(), clock)))


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_scenario_classified_right_over_five_seeds(matrix, scenario):
    runs = {(seed, flavour): report for (name, seed, flavour, ref), (report, _) in matrix.items()
            if name == scenario and ref is None}
    got = {key: report.verdict.verdict for key, report in runs.items()}
    wrong = {key: runs[key].verdict.evidence for key in got if got[key] != EXPECTED[scenario]}
    assert got == {(seed, FLAVOURS[scenario][seed]): EXPECTED[scenario] for seed in SEEDS}, wrong


def test_every_run_completed_its_rounds_with_requests(matrix):
    assert all(len(report.rounds) == 4 and all(r.requests >= 3 for r in report.rounds)  # one per stream at least
               for report, _ in matrix.values())


def test_reasoning_only_streams_have_a_real_ttft(matrix):
    """gpustack#6205: a client waiting for `content` sees none, and reports TTFT 0 or an error."""
    for (name, seed, flavour, ref), (report, server) in matrix.items():
        if name == "reasoning":
            assert all(r.errors == 0 for r in report.rounds)
            assert all(r.ttft_p50_s >= 0.8 * server.engine.scenario.ttft_s * 0.75 for r in report.rounds)
            assert all(r.itl_p50_s >= 0.004 for r in report.rounds)
            assert all(r.output_tokens_per_s > 0 for r in report.rounds)


# each engine's own flags; GPUStack's exporter names no engine: vLLM's, with the others said in the reason
ENGINE_FLAGS = {"vllm": ("--max-num-seqs", "--kv-cache-dtype fp8"), "vllm-old": ("--max-num-seqs", "--kv-cache-dtype fp8"),
                "sglang": ("--max-running-requests", "--kv-cache-dtype fp8_e5m2"),
                "gpustack": ("--max-num-seqs", "--kv-cache-dtype fp8")}


def test_preemption_recommends_the_engines_admission_flag_from_the_running_count(matrix):
    for (name, seed, flavour, ref), (report, server) in matrix.items():
        if name == "preemption" and ref is None:
            admit, compact = ENGINE_FLAGS[flavour]
            actions = [r.action for r in report.verdict.recommendations]
            seqs = [int(a.split()[-1]) for a in actions if a.startswith(admit + " ")]
            assert seqs and 1 <= seqs[0] <= 2, (flavour, actions)  # concurrency 3: at most 3 ran, so 2 fit
            assert compact in actions, (flavour, actions)
            unknown = [r for r in report.verdict.recommendations if "did not name the engine" in r.reason]
            assert bool(unknown) == (flavour == "gpustack"), (flavour, actions)


def test_memory_growth_recommends_a_recycle(matrix):
    for (name, seed, flavour, ref), (report, _) in matrix.items():
        if name == "memory-growth":
            assert [r.action for r in report.verdict.recommendations] == ["recycle"]
            slope = report.verdict.memory_slope_bytes_per_s
            assert 20 * 1024 ** 2 < slope < 80 * 1024 ** 2, (flavour, slope)  # the fake leaks 40 MiB/s


def test_failing_reports_the_reasons(matrix):
    for (name, seed, flavour, ref), (report, _) in matrix.items():
        if name == "failing":
            reasons = set().union(*(r.error_reasons for r in report.rounds))
            assert reasons == {"HTTP 503", "stream broken"}, reasons


@pytest.mark.parametrize("ours,ref", sorted(REFERENCE_CASES))
def test_reference_tells_local_from_shared(matrix, ours, ref):
    got = [report.verdict.locality for (name, seed, flavour, r), (report, _) in matrix.items()
           if name == ours and r == ref]
    assert got == [REFERENCE_CASES[(ours, ref)]] * 2


def test_the_reference_saw_the_same_prompts(matrix):
    (report, server) = matrix[("preemption", 0, "vllm", "stable")]
    assert report.reference_rounds and len(report.reference_rounds) == 4
    assert all(r.requests > 0 for r in report.reference_rounds)


def test_reference_metrics_are_sampled_and_charted_beside_ours():
    from gpustack_guard.reporters.soak import render_html

    clock = VirtualClock()
    router = Router(clock)
    ours = router.serve("stable", 1, "vllm")
    ref = router.serve(dataclasses.replace(SCENARIOS["stable"], memory_bytes=5 * 1024 ** 3, kv_usage=0.7), 2, "sglang")
    opts = SoakOptions(url=ours.url, model="qwen3-8b", rounds=2, round_seconds=0.5, concurrency=2, max_tokens=2,
                       metrics_urls=[ours.url + "/metrics"], reference_url=ref.url,
                       reference_metrics_urls=[ref.url + "/metrics"], output="json", transport_factory=lambda: router,
                       clock=clock)

    async def go():
        plan, progress = await soak(opts)
        return build_report(opts, plan, progress)

    report = run(go(), clock)
    assert [round(r.memory_bytes / 1024 ** 3) for r in report.reference_rounds] == [5, 5]
    assert [round(r.memory_bytes / 1024 ** 3) for r in report.rounds] == [2, 2]
    assert all(0.6 < r.kv_usage_max < 0.8 for r in report.reference_rounds)
    page = render_html(report)
    assert "reference (max)" in page and "reference max" in page


def test_long_rounds_tick_while_they_run():
    from gpustack_guard.adapters.soak.load import Target, chat_completions_url
    from gpustack_guard.adapters.soak.runner import SoakPlan, SoakProgress, run_soak
    from gpustack_guard.core.soak.prompts import WorkloadEntry

    clock = VirtualClock()
    router = Router(clock)
    ours = router.serve("stable", 1, "vllm")
    ticks = []
    plan = SoakPlan(Target("ours", chat_completions_url(ours.url), "qwen3-8b"), rounds=1, round_seconds=1.0,
                    concurrency=2, workload=[WorkloadEntry(8, 2)], transport_factory=lambda: router, clock=clock)
    run(run_soak(plan, SoakProgress(), on_tick=lambda i, t, results: ticks.append((i, len(results))),
                 tick_seconds=0.3), clock)
    assert len(ticks) >= 3 and {i for i, _ in ticks} == {0}  # a tick every 0.3 s of a 1 s round (and its drain)
    assert 0 < ticks[0][1] < ticks[1][1] < ticks[2][1]
