"""`gsg soak` against a real engine: the `llama-server` of test_real_llamacpp.py on a tiny GGUF, on loopback.

The simulated endpoints of tests/adapters/soak speak the metric names we wrote down; this run checks that the
real server's stream and its own /metrics (started with --metrics) come through: TTFT and inter-token gaps from
real deltas, llama.cpp's `llamacpp:*` names in the report, the process's memory through --pid. A few short rounds
at concurrency 2 on the CPU build: the verdict itself is not under test (a tiny model on a shared CI core), only
that the evidence was real and complete.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from llama_server import built_binary_or_skip, llama_server
from tiny_gguf import TinyModel, write_tiny_gguf

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("llama-server")]

ROUNDS = 3
ROUND_SECONDS = 2
CONCURRENCY = 2  # one per slot (-np 2): every request is served, none waits behind a busy slot for long
SOAK_TIMEOUT_S = 120.0  # the soak itself takes ~8 s; the rest is slack for a busy CI machine
# what llama-server exports that gsg reads (core/soak/metrics.py): running and deferred requests
LLAMACPP_SIGNALS = {"llamacpp:requests_processing", "llamacpp:requests_deferred"}


@pytest.fixture(scope="module")
def binary():
    return built_binary_or_skip()


@pytest.fixture(scope="module")
def soaked(binary, tmp_path_factory):
    folder = tmp_path_factory.mktemp("soak-llamacpp")
    model = write_tiny_gguf(folder / "tiny-q8_0.gguf", TinyModel("q8_0"))
    out_dir = folder / "out"
    with llama_server(binary, model, ["-c", "2048", "-np", str(CONCURRENCY)], folder / "llama-server.log") as server:
        done = subprocess.run(
            [sys.executable, "-m", "gpustack_guard", "soak", "--url", server.url, "--model", "tiny",
             "--rounds", str(ROUNDS), "--round-seconds", str(ROUND_SECONDS), "--concurrency", str(CONCURRENCY),
             "--prompt-tokens", "32", "--max-tokens", "8", "--metrics-url", f"{server.url}/metrics",
             "--pid", str(server.pid), "--out", str(out_dir), "--output", "json", "--fail-on", "never"],
            capture_output=True, text=True, timeout=SOAK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout), (out_dir / "soak.json"), (out_dir / "report.html").read_text()


def test_every_round_has_real_ttft_and_token_gaps(soaked):
    doc, _, _ = soaked
    rounds = doc["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    for r in rounds:
        assert r["requests"] >= 1 and r["errors"] == 0, r
        # a first token, then more deltas: llama-server streamed, so TTFT is not the whole answer's time
        assert 0 < r["ttft_p50_s"] <= r["ttft_p95_s"] < SOAK_TIMEOUT_S, r
        assert r["itl_p50_s"] is not None and r["itl_p50_s"] > 0, r
        assert r["output_tokens_per_s"] > 0, r


def test_the_report_names_llamacpps_own_metrics(soaked):
    doc, json_file, page = soaked
    assert doc["engines"] == ["llama.cpp"]
    assert set(doc["metric_names"]) >= LLAMACPP_SIGNALS, doc["metric_names"]
    assert all(name.startswith("llamacpp:") for name in doc["metric_names"]), doc["metric_names"]
    assert json.loads(json_file.read_text())["metric_names"] == doc["metric_names"]  # the file is the document
    assert "Metrics read: " + ", ".join(doc["metric_names"]) in page
    # the server's own count of requests in flight was scraped while the load ran
    assert max(r["running_max"] or 0 for r in doc["rounds"]) >= 1, doc["rounds"]
    # every scrape of /metrics answered, or a minority late: llama-server answers /metrics from its main loop,
    # between decode steps, and on a loaded CI machine 2 of 8 scrapes once took longer than the 5 s deadline
    # (the scraper's deadline line, adapters/soak/scrape.py: `no whole answer within 5 s`, once `TimeoutError`)
    late = [w for w in doc["warnings"]
            if re.fullmatch(r"\S+/metrics: no whole answer within \d+ s in (\d+) of (\d+) scrapes: .*", w)]
    assert doc["warnings"] == late, doc["warnings"]
    for warning in late:
        failed, scrapes = map(int, re.search(r"(\d+) of (\d+)", warning).groups())
        assert failed * 2 <= scrapes, warning


def test_memory_comes_from_the_server_process(soaked):
    doc, _, _ = soaked
    assert doc["trends"]["memory_source"] == "pid_rss"
    assert all(r["memory_bytes"] > 0 and r["idle_memory_bytes"] > 0 for r in doc["rounds"]), doc["rounds"]
    assert doc["verdict"] != "failing", doc["evidence"]
