"""`gsg soak` never repeats a URL's credentials (issue 31): user info and token-like query values of --url,
--metrics-url and --reference-url are masked in the output, soak.json and report.html, however they come back
(a metrics endpoint's failure names its URL); bad URLs: tests/cli/test_secret_echoes.py."""

from __future__ import annotations

import json

import pytest
from support.soak_fakes import Router, Scenario
from support.virtual_time import VirtualClock, run

from gpustack_guard.commands.soak import SoakOptions, build_report, soak, write_files

pytestmark = pytest.mark.xdist_group("soak-scenarios")
SECRETS = ["pw-5511-secret", "tok-8822-query", "sig-7733-amz", "user-4242"]


def test_credentials_in_every_url_are_masked_everywhere(tmp_path, capsys):
    clock = VirtualClock()
    router = Router(clock)
    server = router.serve(Scenario("stable", ttft_s=0.15))
    ours = server.url.replace("http://", "http://user-4242:pw-5511-secret@")
    # a metrics URL that fails (404 on this path): its error, which names the URL, is a warning in every output
    metrics = server.url + "/stats?X-Amz-Signature=sig-7733-amz&access_token=tok-8822-query&page=1"

    async def go():
        opts = SoakOptions(url=ours, model="qwen3-8b", rounds=3, round_seconds=2, concurrency=2, prompt_tokens=32,
                           max_tokens=3, metrics_urls=[metrics], output="text", transport_factory=lambda: router,
                           clock=clock)
        plan, progress = await soak(opts)
        return build_report(opts, plan, progress)

    report = run(go(), clock)
    write_files(str(tmp_path), report)
    from gpustack_guard.adapters.files.output import out
    from gpustack_guard.reporters.soak import render_text

    out(render_text(report))
    printed = capsys.readouterr()
    written = [(tmp_path / "soak.json").read_text(), (tmp_path / "report.html").read_text()]
    assert report.verdict.warnings, "the failing metrics URL is reported"
    for text in [printed.out, printed.err, *written]:
        assert not any(secret in text for secret in SECRETS), text[:400]
    doc = json.loads(written[0])
    assert doc["target"]["url"] == server.url  # user info dropped (core.secrets.mask_url)
    assert doc["settings"]["metrics_urls"] == [
        server.url + "/stats?X-Amz-Signature=********&access_token=********&page=1"]
