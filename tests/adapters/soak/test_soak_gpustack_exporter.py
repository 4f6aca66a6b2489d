"""Round 27: GPUStack's exporter beside the engine's own /metrics. GPUStack's metrics_config.yaml maps SGLang's
`sglang:num_retracted_reqs`, a gauge (requests retracted in the scheduler's last pass), to its counter
gpustack:request_preemptions (SGLang "*" row since the 0.5.13 floor): a fall of that gauge is no restart. And a
metrics page opening with a BOM (a proxy's) is read from its first series."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.soak.scrape import parse_samples
from gpustack_guard.core.soak.metrics import Normaliser


def _exporter(preemptions: float, runtime: str) -> str:
    # as GPUStack's RuntimeMetricsAggregator writes it: the unified family typed by its config (Counter), the
    # instance's labels (worker, model, instance, runtime) on every series
    labels = f'worker_id="1",model_name="m",model_instance_name="m-0",runtime="{runtime}"'
    return ("# TYPE gpustack:request_preemptions counter\n"
            f"gpustack:request_preemptions_total{{{labels}}} {preemptions}\n"
            "# TYPE gpustack:num_requests_running gauge\n"
            f"gpustack:num_requests_running{{{labels}}} 2\n")


def _read(pages: list[str]) -> list[tuple]:
    norm = Normaliser(model="m")
    snaps = [norm.snapshot(float(t), parse_samples(page)) for t, page in enumerate(pages)]
    return [(s.preemptions, s.restarted, s.running) for s in snaps]


def test_sglangs_retraction_gauge_behind_gpustack_falling_is_no_restart():
    """Before: (0.0, False), (0.0, True), (2.0, False), (2.0, True): two restarts of a healthy SGLang, and the
    soak's verdict FAILING ('a crash under load')."""
    assert _read([_exporter(v, "SGLang") for v in (3, 0, 2, 1, 4)]) == [
        (0.0, False, 2.0), (0.0, False, 2.0), (2.0, False, 2.0), (2.0, False, 2.0), (5.0, False, 2.0)]


@pytest.mark.parametrize("runtime", ["vLLM", "MindIE"])
def test_other_runtimes_counters_behind_gpustack_going_back_are_a_restart(runtime):
    """vLLM's num_preemptions (and MindIE's) are counters: going back is the engine restarting, counted from 0 once
    the next scrape stays below where it was (the exporter's page has no process start time)."""
    assert _read([_exporter(v, runtime) for v in (3, 5, 1, 2)]) == [
        (0.0, False, 2.0), (2.0, False, 2.0), (2.0, False, 2.0), (4.0, True, 2.0)]


def test_sglangs_own_counter_going_back_is_still_a_restart():
    page = "# TYPE sglang:num_retracted_requests counter\nsglang:num_retracted_requests_total{{model_name=\"m\"}} {}\n"
    assert _read([page.format(v) for v in (4, 6, 1, 1)]) == [
        (0.0, False, None), (2.0, False, None), (2.0, False, None), (3.0, True, None)]


@pytest.mark.parametrize("body, expected", [
    # before: the first series ('\ufeffvllm:num_requests_running') dropped unread, running None
    (b"\xef\xbb\xbfvllm:num_requests_running 3\nvllm:num_requests_waiting 1\n", ((), 3.0, 1.0)),
    (b"\xef\xbb\xbf# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n", ((), 3.0, None)),
    # before: 'no finite reading of the series gsg reads' instead of the page's kind
    (b"\xef\xbb\xbf<!doctype html><title>login</title>", (
        ("http://e/metrics: an HTML page, not Prometheus text (a login page or proxy? point --metrics-url at the "
         "engine)",), None, None)),
])
def test_a_metrics_page_opening_with_a_bom_is_read_whole(body, expected):
    import asyncio

    import httpx

    from gpustack_guard.adapters.soak.scrape import Scraper

    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
        async with httpx.AsyncClient(transport=transport) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0).scrape_once()
    snap = asyncio.run(go())
    assert (snap.errors, snap.running, snap.waiting) == expected
