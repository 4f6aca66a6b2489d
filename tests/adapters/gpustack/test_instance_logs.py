"""Reading one instance's log: streamed under a byte cap and the request deadline, stopped by the reader, retried
only before the answer starts; on real loopback sockets where bytes arrive slowly, break off or inflate."""

import time

import httpx
import pytest
import respx
from support import REPO
from support.hostile_gpustack import HostileGPUStack

from gpustack_guard.adapters.files.logs import LogLimits
from gpustack_guard.adapters.gpustack import client as C
from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient, Limits
from gpustack_guard.adapters.gpustack.logs import live_instances, read_instance_log

LOG = (REPO / "tests" / "fixtures" / "logs" / "vllm" / "v1-0.8.5-llama31-8b-l40s.log").read_bytes()
BASE = "http://gpustack.test"
PATH = "/v2/model-instances/1/logs"


def served(mode, **options):
    server = HostileGPUStack(mode, only=("GET", PATH), **options)
    server.fake.create_unmanaged("m")  # instance 1, running on gpu-b
    server.fake.instance_logs[1] = LOG
    return server


def live_client(server, deadline=0.3):
    return GPUStackClient(server.url(), server.fake.api_key, timeout=5.0, sleep=lambda _s: None,
                          limits=Limits(request_deadline=deadline))


def test_a_dripping_log_ends_at_the_request_deadline_with_what_came():
    with served("drip", drip_interval=0.02) as server:
        got = bytearray()
        start = time.monotonic()
        result = live_client(server).instance_log(1, lines=100, max_bytes=1024**2,
                                                  consume=lambda b: got.extend(b) or True)
        elapsed = time.monotonic() - start
    assert result.stopped == C.STOPPED_AT_DEADLINE and 0.25 < elapsed < 1.5
    assert 0 < result.bytes_read == len(got) < len(LOG) and LOG.startswith(bytes(got))


def test_a_dripping_log_is_a_note_not_a_stop():
    with served("drip", drip_interval=0.02) as server:
        lines: list[str] = []
        read = read_instance_log(live_client(server), 1, LogLimits(), lambda line: lines.append(line) or True)
    assert read.problem is None and read.notes[0].startswith("the server was still sending after 0.3s "
                                                             "(GSG_REQUEST_DEADLINE): read the first ")


def test_a_log_cut_off_mid_answer_keeps_what_came():
    with served("truncated") as server:
        lines: list[str] = []
        read = read_instance_log(live_client(server, 2.0), 1, LogLimits(), lambda line: lines.append(line) or True)
    half = len(LOG) // 2
    assert read.problem is None and read.bytes_read == half
    assert read.notes == [f"the connection broke after {half:,} bytes: read what came"]
    assert "\n".join(lines) == LOG[:half].decode()  # its last line as far as it came


def test_a_gzip_bomb_for_a_log_stops_at_the_byte_cap():
    with served("gzip-bomb", bomb_bytes=64 * 1024**2) as server:
        read = read_instance_log(live_client(server, 3.0), 1, LogLimits(max_bytes=1024**2), lambda line: True)
    assert read.problem == "not a text log (binary data at byte 0)"


def test_a_reset_before_the_answer_is_retried_then_one_line():
    with served("reset") as server:
        read = read_instance_log(live_client(server, 2.0), 1, LogLimits(), lambda line: True)
        asked = [r for r in server.requests if r[1].startswith(PATH)]
    assert len(asked) == 4  # the first try and three retries
    assert read.problem.startswith(f"the server refused the log: GET {PATH}: the connection broke before the "
                                   "answer was complete")


@respx.mock
def test_the_reader_stops_the_stream_and_the_query_never_follows():
    route = respx.get(f"{BASE}{PATH}").mock(return_value=httpx.Response(200, content=b"line\n" * 10_000))
    client = GPUStackClient(BASE, "k" * 20, sleep=lambda _s: None)
    seen: list[int] = []
    result = client.instance_log(1, lines=500, max_bytes=1024**2, consume=lambda b: seen.append(len(b)) and False)
    assert (result.stopped, result.bytes_read) == (C.STOPPED_BY_READER, 50_000)
    assert dict(route.calls.last.request.url.params) == {"offset": "0", "limit": "500", "follow": "false"}


@respx.mock
def test_the_byte_cap_cuts_the_chunk_it_falls_in():
    respx.get(f"{BASE}{PATH}").mock(return_value=httpx.Response(200, content=b"x" * 5000))
    got = bytearray()
    result = GPUStackClient(BASE, "k" * 20).instance_log(1, lines=5, max_bytes=1234,
                                                         consume=lambda b: got.extend(b) or True)
    assert (result.stopped, result.bytes_read, len(got)) == (C.STOPPED_AT_CAP, 1234, 1234)


@respx.mock
def test_a_busy_log_endpoint_is_asked_again_then_answers():
    pauses: list[float] = []
    respx.get(f"{BASE}{PATH}").mock(side_effect=[httpx.Response(503), httpx.Response(429, headers={"Retry-After": "1"}),
                                                 httpx.Response(200, content=LOG)])
    got = bytearray()
    result = GPUStackClient(BASE, "k" * 20, sleep=pauses.append).instance_log(
        1, lines=5, max_bytes=1024**2, consume=lambda b: got.extend(b) or True)
    assert (result.stopped, bytes(got)) == (None, LOG) and len(pauses) == 2 and pauses[1] == 1.0


@pytest.mark.parametrize("refusal", [httpx.ConnectTimeout, httpx.ConnectError])
@respx.mock
def test_a_connection_not_made_for_a_log_is_retried_as_for_any_read(refusal):
    """A connect timeout is a TimeoutException too: it was once taken for a server too slow to answer, and not
    retried, for the log alone. The log and the JSON reads share one path now, so their retries agree."""
    pauses: list[float] = []
    respx.get(f"{BASE}{PATH}").mock(side_effect=[refusal("no answer to the SYN"), httpx.Response(200, content=LOG)])
    got = bytearray()
    result = GPUStackClient(BASE, "k" * 20, sleep=pauses.append).instance_log(
        1, lines=5, max_bytes=1024**2, consume=lambda b: got.extend(b) or True)
    assert (result.stopped, bytes(got), len(pauses)) == (None, LOG, 1)
    respx.get(f"{BASE}/v2/models/1").mock(side_effect=[refusal("no answer to the SYN"),
                                                       httpx.Response(200, json={"id": 1, "name": "m"})])
    assert GPUStackClient(BASE, "k" * 20, sleep=pauses.append).get_model(1)["name"] == "m"  # the neighbour
    assert len(pauses) == 2


@respx.mock
def test_a_connection_never_made_for_a_log_ends_as_one_line_after_the_retries():
    respx.get(f"{BASE}{PATH}").mock(side_effect=httpx.ConnectTimeout("no answer to the SYN"))
    with pytest.raises(ApiError) as caught:
        GPUStackClient(BASE, "k" * 20, sleep=lambda _s: None).instance_log(1, lines=5, max_bytes=1024,
                                                                          consume=lambda b: True)
    assert str(caught.value) == f"GET {PATH}: cannot connect to {BASE}: no answer to the SYN"
    assert respx.calls.call_count == 4  # the first try and three retries


@respx.mock
def test_a_redirect_is_no_log():
    respx.get(f"{BASE}{PATH}").mock(return_value=httpx.Response(302, headers={"Location": "http://u:p@sso.test/x?t=1"}))
    with pytest.raises(ApiError) as caught:
        GPUStackClient(BASE, "k" * 20).instance_log(1, lines=5, max_bytes=100, consume=lambda b: True)
    assert str(caught.value).startswith(f"GET {PATH}: HTTP 302 redirect to http://sso.test/x: not an API answer")


@respx.mock
def test_instances_keep_their_ids_and_every_worker_they_run_on():
    respx.get(f"{BASE}/v2/model-instances").mock(return_value=httpx.Response(200, json={"items": [
        {"id": 7, "name": "big-1", "model_id": 3, "model_name": "big", "state": "running", "worker_name": "a",
         "gpu_indexes": [0, 1], "distributed_servers": {"subordinate_workers": [
             {"worker_name": "b", "gpu_indexes": [2]}]}}], "pagination": {"totalPage": 1}}))
    (found,) = live_instances(GPUStackClient(BASE, "k" * 20))
    assert (found.id, found.name, found.model_id, found.state, found.places) == (
        7, "big-1", 3, "running", (("a", (0, 1)), ("b", (2,))))


@respx.mock
def test_an_instance_without_an_integer_id_is_one_line():
    respx.get(f"{BASE}/v2/model-instances").mock(return_value=httpx.Response(200, json={"items": [
        {"id": "seven", "name": "x"}], "pagination": {"totalPage": 1}}))
    with pytest.raises(ApiError) as caught:
        live_instances(GPUStackClient(BASE, "k" * 20))
    assert str(caught.value) == ("GET /v2/model-instances: item 0: field 'id' is text, expected an integer >= 0")


@pytest.mark.parametrize("chunks, cap, last", [
    # the stream stops inside the figure: `0.9` of `0.90`, a number the pattern would read whole
    ([b"a\n", b"Memory profiling results: total_gpu_memory=23.58GiB gpu_memory_utilization=0.9"], 4096,
     "Memory profiling results: total_gpu_memory=23.58GiB gpu_memory_utilization="),
    # the line cap cuts inside a number
    ([b"x=12345678\n"], 6, "x="),
    # a cut word without a digit stays: it cannot be a figure
    ([b"the end of a wor"], 4096, "the end of a wor"),
])
def test_a_line_cut_inside_a_number_loses_that_word(chunks, cap, last):
    from gpustack_guard.adapters.files.logs import LineSplitter, LogLimits

    splitter = LineSplitter(LogLimits(max_line_bytes=cap))
    lines = [line for chunk in chunks for line in splitter.split(chunk)] + list(splitter.rest())
    assert lines[-1] == last


@pytest.mark.parametrize("tail, noted", [
    (b"GPU KV cache size: 158,6", True),  # the stream ends inside the number: it was not read, and that is said
    (b"GPU KV cache size: 158,656", True),  # the number may go on
    (b"GPU KV cache size: 158,656 tok", False),  # a cut word without a digit: nothing dropped
    (b"GPU KV cache size: 158,656 tokens", False),  # only the newline missing
])
@respx.mock
def test_a_live_log_that_stops_mid_number_says_so_as_the_file_reader_does(tail, noted):
    respx.route(method="GET", path=PATH).mock(return_value=httpx.Response(200, content=b"a\nINFO " + tail))
    lines: list[str] = []
    read = read_instance_log(GPUStackClient(BASE, "k" * 20), 1, LogLimits(), lambda line: lines.append(line) or True)
    cut_note = "the log stops mid-line, in a number: that number was not read"
    assert read.problem is None and read.lines == 2
    assert read.notes == ([cut_note] if noted else [])
    assert lines[-1] == ("INFO GPU KV cache size: 158," if noted else "INFO " + tail.decode())  # up to the comma


@pytest.mark.parametrize("body", [
    b"<!DOCTYPE html>\n<html><body>Sign in</body></html>",
    b"\n  <html lang='en'><head><title>Login</title></head></html>" + b"x" * 100_000,
    b"<HTML>",  # shorter than what is held back to tell
    b"<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>",  # a page without <html> (nginx's errors)
    b"  <BODY>Access denied</BODY>",
    b"<!-- proxy error page -->\n<p>Forbidden</p>",
])
@respx.mock
def test_a_login_page_as_the_log_is_named_as_one(body):
    """Before: fed to the parser as the engine's lines ("no start-up line of vLLM, SGLang or llama.cpp")."""
    respx.get(f"{BASE}{PATH}").mock(return_value=httpx.Response(200, content=body,
                                                                 headers={"content-type": "text/html"}))
    lines: list[str] = []
    read = read_instance_log(GPUStackClient(BASE, "k" * 20), 1, LogLimits(), lambda line: lines.append(line) or True)
    assert (read.problem, lines) == ("an HTML page, not a log (a login page or proxy in front of GPUStack?)", [])


@pytest.mark.parametrize("chunks", [[b"IN", b"FO 05-01 start\nnext line\n"], [b"short\n"], [b"<not html\n"]])
def test_a_log_held_back_to_tell_it_from_html_loses_nothing(chunks):
    from gpustack_guard.adapters.gpustack.logs import _LiveLines

    lines: list[str] = []
    live = _LiveLines(LogLimits(), lambda line: lines.append(line) or True)
    assert all(live.take(chunk) for chunk in chunks)
    live.flush_opening()
    live.finish()
    assert "\n".join(lines) == b"".join(chunks).decode().rstrip("\n") and not live.html


@respx.mock
def test_a_live_log_of_redraws_stops_at_the_line_cap_as_the_file_reader_does():
    # a progress bar's redraws (a lone CR each) are parsed one by one, so GSG_MAX_LOG_LINES counts them too
    respx.route(method="GET", path=PATH).mock(return_value=httpx.Response(200, content=b"a\n" + b"x\r" * 50))
    lines: list[str] = []
    read = read_instance_log(GPUStackClient(BASE, "k" * 20), 1, LogLimits(max_lines=5),
                             lambda line: lines.append(line) or True)
    assert lines == ["a"] + ["x\r"] * 4 and read.problem is None
    assert read.notes == ["read the first 5 lines only, 4 of them a terminal's redraws (pieces a lone CR ended) "
                          "(GSG_MAX_LOG_LINES)"]


@pytest.mark.parametrize("piece", [1, 2, 3])
def test_a_live_utf16_log_after_a_nul_hole_in_pieces_is_read_as_text(piece):
    """GPUStack streaming a copytruncated UTF-16 log a few bytes at a time: the HTML check held back its NUL hole
    alone, the byte-order mark then came split, and the log was "not a text log (binary data at byte ...)"."""
    from gpustack_guard.adapters.gpustack.logs import _LiveLines

    data = b"\x00" * 16 + b"\xff\xfe" + "INFO 05-01 start\nnext line\n".encode("utf-16-le")
    lines: list[str] = []
    live = _LiveLines(LogLimits(), lambda line: lines.append(line) or True)
    assert all(live.take(data[i:i + piece]) for i in range(0, len(data), piece))
    live.flush_opening()
    live.finish()
    assert (live.splitter.binary_at, lines) == (None, ["INFO 05-01 start", "next line"])
