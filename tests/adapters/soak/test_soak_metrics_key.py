"""Round 27: a metrics URL on the soaked endpoint's origin gets its API key (llama-server's /metrics wants it when
started with --api-key: its public paths are /health, /models and their /v1 forms); a metrics URL on any other
origin gets none, and a redirect is followed by no one."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from support.soak_fakes import Router, Scenario
from support.virtual_time import VirtualClock, run

from gpustack_guard.adapters.soak.load import Target
from gpustack_guard.adapters.soak.runner import keys_for_origin
from gpustack_guard.adapters.soak.scrape import Scraper
from gpustack_guard.commands.soak import SoakOptions, soak

pytestmark = pytest.mark.xdist_group("soak-scenarios")
KEY = "sk-metrics-7731"


@pytest.mark.parametrize("url, keyed", [
    ("http://engine.test:8080/metrics", True),
    ("HTTP://ENGINE.test:8080/metrics?x=1", True),  # scheme and host without case
    ("http://engine.test:8081/metrics", False),  # another port
    ("https://engine.test:8080/metrics", False),  # another scheme
    ("http://gpu-a.test:10151/metrics", False),  # GPUStack's exporter on a worker: another host
    ("http://engine.test.evil:8080/metrics", False),
])
def test_the_key_goes_to_metrics_urls_on_the_endpoints_origin_alone(url, keyed):
    target = Target("ours", "http://engine.test:8080/v1/chat/completions", "m", KEY)
    assert keys_for_origin([url], target) == ({url: KEY} if keyed else {})
    assert keys_for_origin([url], Target("ours", target.url, "m", None)) == {}
    assert keys_for_origin([url], None) == {}


def _soak_with_key(tmp_path, need_key: bool, other_origin: bool = False):
    clock = VirtualClock()
    router = Router(clock)
    ours = router.serve(Scenario("stable", ttft_s=0.15), flavour="llamacpp", api_key=KEY, metrics_need_key=need_key)
    other = router.serve(Scenario("stable", ttft_s=0.15), flavour="llamacpp")
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    metrics = (other if other_origin else ours).url + "/metrics"

    async def go():
        opts = SoakOptions(url=ours.url, model="qwen3-8b", rounds=2, round_seconds=2, concurrency=2,
                           prompt_tokens=32, max_tokens=3, metrics_urls=[metrics], output="text",
                           transport_factory=lambda: router, clock=clock, api_key_file=str(key_file))
        return await soak(opts)

    _, progress = run(go(), clock)
    return ours, other, progress


def test_llama_server_metrics_behind_the_api_key_are_read(tmp_path, capsys):
    """Before: every scrape was 'HTTP 401 (it wants credentials; ...)', the soak had no server signal at all."""
    ours, _, progress = _soak_with_key(tmp_path, need_key=True)
    printed = capsys.readouterr()
    assert ours.seen_auth == {f"Bearer {KEY}"}
    assert [r.scrape_error_reasons for r in progress.rounds] == [{}, {}]
    assert progress.snapshots and all(s.running is not None and not s.errors for s in progress.snapshots)
    assert KEY not in printed.out + printed.err


def test_a_metrics_url_on_another_origin_gets_no_key(tmp_path, capsys):
    _, other, progress = _soak_with_key(tmp_path, need_key=False, other_origin=True)
    printed = capsys.readouterr()
    assert other.seen_auth == set()
    assert [r.scrape_error_reasons for r in progress.rounds] == [{}, {}]
    assert KEY not in printed.out + printed.err


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_keyed_metrics_url_redirecting_elsewhere_is_not_followed(status):
    asked: list = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append((request.url.host, request.headers.get("authorization")))
        return httpx.Response(status, headers={"location": "http://collector.evil/steal"})

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await Scraper(client, ["http://e/metrics"], None, None, 0.0,
                                 keys={"http://e/metrics": KEY}).scrape_once()
    snap = asyncio.run(go())
    assert (snap.errors, asked) == ((f"http://e/metrics: HTTP {status}",), [("e", f"Bearer {KEY}")])
