"""`gsg soak` end to end: the CLI over loopback sockets, its files, Ctrl-C, errors, and report.html in Chromium."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from soak_cli_runs import KEY, soak_runs
from support.browser import CHROMIUM, NO_CHROMIUM, sampled_pixels

from gpustack_guard.cli import main

# The real processes start with the first test that needs them; on two workers the rest of the suite runs meanwhile.
pytestmark = pytest.mark.xdist_group("soak-cli")  # module-scoped fixtures: built once, on one worker



def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def runs():
    """The real `gsg soak` processes (started once, on first use)."""
    early = soak_runs()
    done = dict(early.results())
    done["dirs"] = (early.main_dir, early.interrupted_dir)
    return done


@pytest.fixture(scope="module")
def server():
    return soak_runs().server


@pytest.fixture(scope="module")
def soaked(runs):
    code, out, err = runs["soak"]
    return code, out, err, runs["dirs"][0]


def test_text_table_per_round_progress_on_stderr_and_the_verdict(soaked):
    code, out, err, _ = soaked
    lines = out.splitlines()
    assert lines[1].split()[:4] == ["round", "requests", "errors", "TTFT"]
    assert [line.split()[0] for line in lines[2:5]] == ["1", "2", "3"]
    assert "verdict: memory-growth" in out
    assert code == 1  # --fail-on degraded
    assert [line for line in err.splitlines() if line.startswith("gsg soak: round")] == \
        [f"gsg soak: round {i}/3: 2 s at concurrency 4 ..." for i in (1, 2, 3)]


def test_the_key_is_sent_and_never_printed(soaked, server):
    code, out, err, out_dir = soaked
    assert server.seen_auth == {f"Bearer {KEY}"}
    everything = out + err + (out_dir / "soak.json").read_text() + (out_dir / "report.html").read_text()
    assert KEY not in everything


def test_soak_json_has_the_documented_fields(soaked):
    doc = json.loads((soaked[3] / "soak.json").read_text())
    assert doc["format_version"] == "1.1" and doc["command"] == "soak"
    assert doc["verdict"] == "memory-growth" and doc["interrupted"] is False
    assert doc["engines"] == ["vLLM"]
    assert len(doc["rounds"]) == 3
    required = {"ttft_p50_s", "ttft_p95_s", "itl_p50_s", "output_tokens_per_s", "requests", "errors",
                "kv_usage_max", "preemptions", "memory_bytes"}
    assert all(required <= set(r) for r in doc["rounds"])
    assert all(r["requests"] > 10 and r["errors"] == 0 and r["memory_bytes"] > 2 * 1024 ** 3 for r in doc["rounds"])
    assert doc["trends"]["memory_source"] == "process_resident"
    assert [r["action"] for r in doc["recommendations"]] == ["recycle"]
    assert doc["evidence"] and doc["settings"]["round_seconds"] == 2.0


def test_report_html_is_self_contained(soaked):
    page = (soaked[3] / "report.html").read_text()
    assert page.count("<svg") == 6  # TTFT (with the reference), memory, KV; TTFT, ITL and end-to-end percentiles
    for needle in ("<script", "src=", "href=", "url(", "@import"):
        assert needle not in page


def test_json_output_on_stdout_rows_on_stderr(runs):
    code, out, err = runs["json"]
    doc = json.loads(out)
    # one round shows no trend, so not its absence either: inconclusive, not stable
    assert code == 0 and doc["verdict"] == "inconclusive" and len(doc["rounds"]) == 1
    assert doc["evidence"][0] == "inconclusive: 1 round(s) completed; a trend needs at least 3"
    assert "no memory signal" in " ".join(doc["evidence"]) and doc["warnings"] == [] and doc["events"] == []
    assert err.splitlines()[1].split()[0] == "round"


@pytest.mark.parametrize("args,message", [
    (["--url", "ftp://x"], "gsg: usage error: Invalid value for '--url': 'ftp://x' has the scheme 'ftp': gsg speaks "
                           "http:// and https:// only (see 'gsg soak --help')"),
    (["--rounds", "0"], "gsg: error: --rounds must be at least 1"),
    (["--memory-limit", "lots"], "gsg: error: --memory-limit 'lots': 'lots' is not a size (use bytes or units such "
                                 "as 23.58GiB, 24GB, 49140MiB)"),
    (["--pid", "999999999"], "gsg: error: --pid 999999999: no such process on this machine"),
    (["--api-key-file", "/nonexistent/key"], "gsg: error: /nonexistent/key: no such file or directory"),
    (["--workload", "/nonexistent/w.yaml"], "gsg: error: /nonexistent/w.yaml: No such file or directory"),
    # nan passes every plain comparison; inf with --rate scheduled arrivals forever before the round began
    *[(["--round-seconds", v], "gsg: error: --round-seconds must be between 0.5 and 86400")
      for v in ("0.4", "nan", "inf", "86401")],
    *[(["--request-timeout", v], "gsg: error: --request-timeout must be more than 0 and at most 86400 seconds")
      for v in ("0", "-1", "nan", "inf")],
    (["--rate", "10000", "--round-seconds", "100.5"], "gsg: error: 10000 requests/s for 100.5 s schedules 1005000 "
     "requests a round: at most 1000000 (shorten --round-seconds or cap --round-requests)"),
    (["--sweep", "rate:1,20000", "--slo", "ttft_p99=2s", "--round-seconds", "60"],
     "gsg: error: --sweep: rate step 20000: must be more than 0 and at most 10000 requests/s"),
    (["--sweep", "rate:1,5000", "--slo", "ttft_p99=2s", "--round-seconds", "201"], "gsg: error: 5000 requests/s for "
     "201 s schedules 1005000 requests a round: at most 1000000 (shorten --round-seconds or cap --round-requests)"),
    (["--rate", "0"], "gsg: error: --rate must be more than 0 and at most 10000 requests/s"),
    (["--rate", "10001"], "gsg: error: --rate must be more than 0 and at most 10000 requests/s"),
    (["--rate", "1", "--arrival", "uniform"], "gsg: error: --arrival 'uniform': expected one of poisson, constant"),
    (["--arrival", "constant"], "gsg: error: --arrival needs --rate (or --sweep rate:...): without a rate the load "
                                "is closed-loop"),
    (["--warmup-rounds", "-1"], "gsg: error: --warmup-rounds must be between 0 and 100"),
    (["--warmup-rounds", "101"], "gsg: error: --warmup-rounds must be between 0 and 100"),
    (["--slo", "ttft_p99=2"], "gsg: error: --slo: ttft_p99: '2' is not a duration: write it with its unit, e.g. 2s or "
                              "80ms"),
    (["--sweep", "rate:1,2"], "gsg: error: --sweep needs --slo: the sweep looks for the highest step that meets "
                              "them"),
    (["--sweep", "rate:2,1", "--slo", "ttft_p99=2s"], "gsg: error: --sweep: rate steps must be ascending: 1 after 2"),
    (["--sweep", "rate:1,2", "--slo", "ttft_p99=2s", "--rate", "3"],
     "gsg: error: --sweep rate:... sets the rate of each step: drop --rate"),
    (["--sweep", "concurrency:1,2", "--slo", "ttft_p99=2s", "--rate", "3"],
     "gsg: error: --sweep concurrency:... is closed-loop: drop --rate"),
    (["--dataset", "/nonexistent/d.jsonl", "--workload", "/nonexistent/w.yaml"],
     "gsg: error: --dataset and --workload both say what to send: give one"),
    (["--dataset", "/nonexistent/d.jsonl"], "gsg: error: /nonexistent/d.jsonl: no such file or directory"),
    # a generated prompt is built in memory: a length past any context window is refused, not built
    (["--prompt-tokens", "1048577"], "gsg: error: --prompt-tokens: a prompt length must be between 1 and 1,048,576 "
                                     "tokens, not 1,048,577"),
])
def test_bad_arguments_are_one_line_errors(args, message):
    base = {"--url": "http://127.0.0.1:9", "--model": "m", "--round-seconds": "0.5"}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    code, out, err = run_cli("soak", *[x for kv in base.items() for x in kv])
    assert (code, err.strip()) == (1, message)


@pytest.mark.parametrize("entry, message", [
    ("{prompt_tokens: 1048577, max_tokens: 8}", "entry 1: a prompt length must be between 1 and 1,048,576 tokens, "
                                                "not 1,048,577"),
    *[(f"{{prompt_tokens: 8, max_tokens: 8, weight: {w}}}", "entry 1: prompt_tokens and max_tokens must be >= 1, "
                                                           "weight a finite number > 0") for w in (".nan", ".inf", 0)],
])
def test_a_workload_entry_that_cannot_be_sent_is_one_line(tmp_path, entry, message):
    workload = tmp_path / "w.yaml"
    workload.write_text(f"- {entry}\n", encoding="utf-8")
    code, out, err = run_cli("soak", "--url", "http://127.0.0.1:9", "--model", "m", "--workload", str(workload))
    assert (code, err.strip()) == (1, f"gsg: error: {workload}: {message}")


@pytest.mark.parametrize("weights", [(1e308, 1e308), (1e308, 6e307, 5e307), (1.7e308, 1.5e307)])
def test_workload_weights_adding_up_past_the_largest_float_are_one_line(tmp_path, weights):
    """Each finite, their sum not: before, the first prompt drawn ended the soak with "Total of weights must be
    finite" as an internal error."""
    workload = tmp_path / "w.yaml"
    workload.write_text("".join(f"- {{prompt_tokens: 8, max_tokens: 8, weight: {w!r}}}\n" for w in weights))
    code, out, err = run_cli("soak", "--url", "http://127.0.0.1:9", "--model", "m", "--workload", str(workload))
    assert (code, err.strip()) == (1, f"gsg: error: {workload}: the weights add up past the largest number (1.8e+308): "
                                      "give them as shares, e.g. 1 and 3")


def test_workload_weights_just_under_the_largest_float_draw_by_share(tmp_path):
    from gpustack_guard.adapters.soak.workload import load_workload
    from gpustack_guard.core.soak.prompts import prompt_for

    workload = tmp_path / "w.yaml"
    workload.write_text("- {prompt_tokens: 8, max_tokens: 8, weight: 1.0e+308}\n"
                        "- {prompt_tokens: 9, max_tokens: 8, weight: 3.0e+307}\n")
    entries = load_workload(str(workload))
    drawn = [prompt_for(7, i, entries).prompt_tokens for i in range(2_000)]
    assert round(drawn.count(9) / len(drawn), 2) == pytest.approx(0.23, abs=0.03)  # 3 in 13


@pytest.mark.parametrize("variable", ["GSG_SOAK_MAX_SAMPLES", "GSG_SOAK_MAX_IN_FLIGHT", "GSG_SOAK_MAX_DATASET_BYTES",
                                      "GSG_SOAK_MAX_DATASET_ENTRIES", "GSG_SOAK_MAX_ROUND_GAPS"])
@pytest.mark.parametrize("value, shown", [("0", "0"), ("²", "²"), ("9" * 5000, "9" * 40)])
def test_a_soak_limit_set_to_nonsense_is_one_line(monkeypatch, variable, value, shown):
    """'²' (str.isdigit() takes it, int() does not) and 5,000 digits (past int()'s limit) were internal errors."""
    monkeypatch.setenv(variable, value)
    code, out, err = run_cli("soak", "--url", "http://127.0.0.1:9", "--model", "m")
    assert (code, err.strip()) == (1, f"gsg: error: {variable} must be a positive whole number, not '{shown}'")


def test_a_dead_endpoint_stops_after_the_first_round(monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run_cli("soak", "--url", f"http://127.0.0.1:{port}", "--model", "m", "--rounds", "5",
                             "--round-seconds", "0.5", "--concurrency", "1")
    assert code == 1
    assert err.splitlines()[-1] == (f"gsg: error: http://127.0.0.1:{port}/v1/chat/completions: connection refused "
                                    "for every request of round 1 (check the URL, the key and --model)")


def test_workload_file_shapes_the_prompts(server, tmp_path, monkeypatch):
    monkeypatch.setenv("GSG_API_KEY", KEY)
    workload = tmp_path / "w.yaml"
    workload.write_text("- {prompt_tokens: 20, max_tokens: 3}\n- {prompt_tokens: 60, max_tokens: 5, weight: 2}\n")
    before = server.engine.requests
    code, out, err = run_cli("soak", "--url", server.url, "--model", "qwen3-8b", "--rounds", "1",
                             "--round-seconds", "0.5", "--concurrency", "2", "--workload", str(workload), "-o", "json")
    doc = json.loads(out)
    assert doc["settings"]["workload"] == [{"prompt_tokens": 20, "max_tokens": 3, "weight": 1.0},
                                           {"prompt_tokens": 60, "max_tokens": 5, "weight": 2.0}]
    mine = list(server.seen_bodies)[-(server.engine.requests - before):]
    assert {b["max_tokens"] for b in mine} == {3, 5}
    workload.write_text("- {prompt_tokens: 20}\n")
    code, out, err = run_cli("soak", "--url", server.url, "--model", "m", "--workload", str(workload))
    assert (code, err.strip()) == (1, f"gsg: error: {workload}: entry 1: max_tokens is missing")


def test_a_round_at_its_cap_of_inter_token_gaps_is_reported_in_one_warning(server, monkeypatch):
    # one stream, 4 tokens a request (3 gaps): the second request brings the round to 6 gaps held, the cap
    monkeypatch.setenv("GSG_API_KEY", KEY)
    monkeypatch.setenv("GSG_SOAK_MAX_ROUND_GAPS", "6")
    code, out, err = run_cli("soak", "--url", server.url, "--model", "qwen3-8b", "--rounds", "1",
                             "--round-seconds", "5", "--concurrency", "1", "--prompt-tokens", "8", "--max-tokens", "4",
                             "-o", "json")
    doc = json.loads(out)
    assert [(r["requests"], r["gap_cap_hit"]) for r in doc["rounds"]] == [(2, True)]
    assert doc["rounds"][0]["seconds"] < 2.0  # stopped there, not at --round-seconds
    assert [w for w in doc["warnings"] if "GSG_SOAK_MAX_ROUND_GAPS" in w] == [
        "round(s) 1 stopped starting requests at 6 inter-token gaps held (GSG_SOAK_MAX_ROUND_GAPS, the memory a "
        "round may keep): their percentiles are exact over the requests they ran, in less than --round-seconds"]


def test_ctrl_c_stops_cleanly_with_the_rounds_so_far(runs):
    code, out, err = runs["interrupted"]
    folder = runs["dirs"][1]
    doc = json.loads((folder / "soak.json").read_text())
    assert code == 130, err
    assert doc["interrupted"] is True and len(doc["rounds"]) == 1
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"gsg: interrupted after 1 of 50 rounds; written to {folder}"
    assert "verdict: inconclusive — interrupted, rounds so far" in out
    assert "Interrupted: the rounds completed so far." in (folder / "report.html").read_text()


# ---------------------------------------------------------------- the report in a real browser

def start_screenshot(page: Path, out: Path, profile: str) -> subprocess.Popen:
    return subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                             # half the device pixels: the pure-Python PNG decoder is the slow part
                             "--window-size=1200,1000", "--force-device-scale-factor=0.5", f"--screenshot={out}",
                             "--enable-logging=stderr", "--v=0",
                             page.as_uri()], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def verdict_on(png: Path, log: str) -> tuple[bool, list[str]]:
    """(non-blank, console lines): non-blank = at least 2 % of pixels off the background, 10+ colours."""
    pixels = sampled_pixels(png.read_bytes())
    background = max(set(pixels), key=pixels.count)
    busy = sum(1 for p in pixels if p != background) / len(pixels)
    return busy >= 0.02 and len(set(pixels)) >= 10, [line for line in log.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def shots(soaked, tmp_path_factory):
    """The report and a control page (blank, one console error), rendered at once."""
    folder = tmp_path_factory.mktemp("shots")
    bad = folder / "bad.html"
    bad.write_text('<html><body><script>console.error("boom")</script></body></html>')
    with tempfile.TemporaryDirectory() as p1, tempfile.TemporaryDirectory() as p2:
        procs = {"report": start_screenshot(soaked[3] / "report.html", folder / "report.png", p1),
                 "bad": start_screenshot(bad, folder / "bad.png", p2)}
        logs = {name: proc.communicate(timeout=60)[1] for name, proc in procs.items()}
    return {name: verdict_on(folder / f"{name}.png", log) for name, log in logs.items()}


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_report_renders_in_chromium_non_blank_without_console_errors(shots):
    assert shots["report"] == (True, [])


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_browser_check_catches_a_blank_page_and_a_console_error(shots):
    non_blank, console = shots["bad"]
    assert not non_blank and len(console) == 1 and '"boom"' in console[0]


def test_round_requests_bring_a_long_open_loop_round_within_the_arrival_cap():
    from gpustack_guard.commands.soak import SoakOptions, _check
    from gpustack_guard.core.errors import GsgError

    fast = dict(url="http://127.0.0.1:9", model="m", rate=10_000.0, round_seconds=200.0)
    _check(SoakOptions(**fast, round_requests=1_000_000))  # 2,000,000 scheduled, 1,000,000 sent: allowed
    with pytest.raises(GsgError, match=r"^10000 requests/s for 200 s schedules 1000001 requests a round"):
        _check(SoakOptions(**fast, round_requests=1_000_001))


_UNSENDABLE = ("the API key has a space, a control or a non-ASCII character (character {}): no HTTP header carries it "
               "as a bearer token (a key file of two lines?)")


_KEYS_NO_HEADER_CARRIES = [
    ("sk-\u00e9t\u00e9", 4),  # before: 'internal error: UnicodeEncodeError' after round 1 began (exit 3)
    ("sk-one\nsk-two", 7),  # before: every request 'LocalProtocolError', a failing verdict
    ("sk-a b", 5), ("sk-a\tb", 5), ("sk-\x7f", 4),
]


@pytest.mark.parametrize("key, at", _KEYS_NO_HEADER_CARRIES)
def test_a_key_file_no_header_can_carry_is_one_line_naming_the_file(server, tmp_path, key, at):
    before = server.engine.requests
    key_file = tmp_path / "key"
    key_file.write_text(key + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    code, out, err = run_cli("soak", "--url", server.url, "--model", "qwen3-8b", "--rounds", "1",
                             "--round-seconds", "0.5", "--api-key-file", str(key_file))
    assert (code, out, err) == (1, "", f"gsg: error: {key_file}: {_UNSENDABLE.format(at)}\n")
    assert server.engine.requests == before  # refused before a request went out


@pytest.mark.parametrize("key, at", _KEYS_NO_HEADER_CARRIES + [("\ufeffsk-bom", 1)])  # a file's BOM is dropped
def test_a_key_variable_no_header_can_carry_is_one_line_naming_the_variable(server, monkeypatch, key, at):
    before = server.engine.requests
    monkeypatch.setenv("GSG_REFERENCE_API_KEY", key)
    code, out, err = run_cli("soak", "--url", server.url, "--model", "qwen3-8b", "--rounds", "1",
                             "--round-seconds", "0.5", "--reference-url", server.url)
    assert (code, out, err) == (1, "", f"gsg: error: GSG_REFERENCE_API_KEY: {_UNSENDABLE.format(at)}\n")
    assert server.engine.requests == before


def test_a_printable_ascii_key_is_sent_as_it_is(server, tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text("\ufeff  gpustack_0a1b_c+d/e=~.-  \n", encoding="utf-8")
    key_file.chmod(0o600)
    run_cli("soak", "--url", server.url, "--model", "qwen3-8b", "--rounds", "1", "--round-seconds", "0.5",
            "--concurrency", "1", "--api-key-file", str(key_file))
    assert "Bearer gpustack_0a1b_c+d/e=~.-" in server.seen_auth  # the server's own key is another: a 401, sent
