"""The client's bounds on what a server can make it wait for and hold: one deadline over every phase of a
request (real loopback sockets: only there do header lines and interim answers arrive slowly), bodies bounded
after decoding, header count and size, page count, and numbers json cannot turn into values."""

import gzip
import json
import socket
import threading
import time
import tracemalloc
import zlib

import httpx
import pytest
import respx
from support.hostile_gpustack import HostileGPUStack, bomb

from gpustack_guard.adapters.gpustack.client import MAX_RESPONSE_HEADERS, ApiError, GPUStackClient, Limits
from gpustack_guard.adapters.gpustack.transport import (
    BadEncoding,
    BodyTooLarge,
    DeadlineBackend,
    read_body,
)

BASE = "http://gpustack.test"
KEY = "gpustack_0123456789abcdef_0123456789abcdef0123456789abcdef"
DEADLINE_TEXT = "no complete answer within 0.3s (GSG_REQUEST_DEADLINE); the server is too slow or stalled"


def live_client(server, **limits):
    # httpx's per-read timeout (5 s) is far longer than the deadline: only the deadline can end these
    return GPUStackClient(server.url(), server.fake.api_key, timeout=5.0, sleep=lambda _s: None,
                          limits=Limits(**{"request_deadline": 0.3, **limits}))


# --- one deadline over every phase ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["slow-headers", "continue-forever", "slow", "drip"])
def test_the_request_deadline_ends_every_phase_on_a_real_socket(mode):
    """Status line and headers, interim answers, the wait for the first byte and the body: each ends at the
    deadline, though every single read returns well within httpx's timeout."""
    with HostileGPUStack(mode, drip_interval=0.02) as server:
        client = live_client(server)
        start = time.monotonic()
        with pytest.raises(ApiError) as exc:
            client.models()
        elapsed = time.monotonic() - start
    assert str(exc.value) == f"GET /v2/models: {DEADLINE_TEXT}"
    assert 0.28 <= elapsed < 0.8, elapsed
    assert [p.split("?")[0] for _m, p in server.requests] == ["/v2/models"]  # a deadline is not retried


def test_the_deadline_ends_a_name_lookup_that_never_answers(monkeypatch):
    """getaddrinfo blocks in C where no socket timeout reaches: a resolver that hangs (a dead DNS server) ends at
    the request deadline like any other phase, and a name that resolves still connects."""
    hung = threading.Event()

    def hanging_lookup(host, *args, **kwargs):
        hung.wait(5)
        return []

    with HostileGPUStack(None) as server:
        monkeypatch.setattr(socket, "getaddrinfo", hanging_lookup)
        client = GPUStackClient(f"http://gsg-dns-test.invalid:{server.port}", server.fake.api_key, timeout=5.0,
                                sleep=lambda _s: None, limits=Limits(request_deadline=0.3))
        start = time.monotonic()
        with pytest.raises(ApiError) as exc:
            client.version()
        elapsed = time.monotonic() - start
        hung.set()
        assert str(exc.value) == f"GET /version: {DEADLINE_TEXT}" and 0.28 <= elapsed < 0.8, (exc.value, elapsed)
        monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *args, **kw: [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))])
        assert client.version()["version"]  # looked up in time: connects to what the name resolved to


def test_a_request_after_one_cut_short_gets_a_fresh_connection_and_its_own_deadline():
    with HostileGPUStack("slow-headers", drip_interval=0.02, times=1) as server:
        client = live_client(server)
        with pytest.raises(ApiError, match="no complete answer within 0.3s"):
            client.clusters()
        time.sleep(0.35)  # longer than a deadline: a stale one would fail the next request at once
        assert [name for _id, name in client.clusters(keep=lambda _i, c: (c["id"], c["name"]))]


def test_the_deadline_ends_a_tls_handshake_that_never_comes():
    """A port that accepts connections and says nothing: https waits in the handshake."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    client = GPUStackClient(f"https://127.0.0.1:{listener.getsockname()[1]}", KEY, timeout=5.0, verify=False,
                            limits=Limits(request_deadline=0.3))
    start = time.monotonic()
    with pytest.raises(ApiError) as exc:
        client.version()
    elapsed = time.monotonic() - start
    thread.join(1)
    for sock in accepted + [listener]:
        sock.close()
    assert str(exc.value) == f"GET /version: {DEADLINE_TEXT}"
    assert 0.28 <= elapsed < 0.8, elapsed


def test_the_command_deadline_cuts_a_request_short_in_its_headers():
    with HostileGPUStack("slow-headers", drip_interval=0.02) as server:
        client = live_client(server, request_deadline=30.0, command_deadline=0.3)
        start = time.monotonic()
        with pytest.raises(ApiError) as exc:
            client.models()
        elapsed = time.monotonic() - start
    assert str(exc.value) == ("GET /v2/models: gsg's time limit for this command ran out (0.3s over all requests, "
                              "GSG_COMMAND_DEADLINE)")
    assert 0.28 <= elapsed < 0.8, elapsed


def test_a_healthy_server_is_read_whole_with_the_deadline_in_place():
    with HostileGPUStack(None) as server:
        client = live_client(server)
        backends = [client._http._transport._pool._network_backend]
        assert isinstance(backends[0], DeadlineBackend)
        assert client.version()["version"].startswith("v2.") and client.clusters()
        assert client.clusters() == client.clusters()  # keep-alive connections reuse the wrapped stream


def test_proxy_pools_get_the_deadline_too(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    client = GPUStackClient(BASE, KEY)
    pools = [t._pool for t in [client._http._transport, *client._http._mounts.values()] if t is not None]
    assert len(pools) >= 2 and all(isinstance(p._network_backend, DeadlineBackend) for p in pools)


# --- bodies: decoded size, encodings ----------------------------------------------------------------------

def _encoded(body: bytes, coding: str) -> bytes:
    if coding == "gzip":
        return gzip.compress(body)
    if coding == "deflate":
        return zlib.compress(body)
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate, as some servers send it
    return packer.compress(body) + packer.flush()


@pytest.mark.parametrize("coding,header", [("gzip", "gzip"), ("gzip", "x-gzip"), ("deflate", "deflate"),
                                           ("raw", "deflate"), ("gzip", "GZIP, identity")])
def test_compressed_answers_are_decoded(coding, header):
    body = json.dumps({"items": [{"id": i, "name": f"m{i}"} for i in range(300)]}).encode()
    pieces = [_encoded(body, coding)[i:i + 1] for i in range(3)] + [_encoded(body, coding)[3:]]  # a split head
    assert read_body(pieces, header, 10**6) == body


@pytest.mark.parametrize("coding,wbits", [("gzip", 31), ("deflate", -15)])
def test_a_bomb_is_refused_without_inflating_past_the_cap(coding, wbits):
    cap = 1024**2
    wire = bomb(64 * 1024**2, wbits)  # 64 MiB of zeros in about 64 KiB: httpx would inflate it in one call
    assert len(wire) < 100 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            read_body([wire], coding, cap)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * cap, peak


def test_the_decoded_size_may_reach_the_cap_exactly():
    body = bytes(1024**2)
    assert len(read_body([gzip.compress(body)], "gzip", len(body))) == len(body)
    with pytest.raises(BodyTooLarge):
        read_body([gzip.compress(body + b"x")], "gzip", len(body))


def test_received_bytes_count_against_the_cap_too():
    """An encoding whose output is small (or data after the end of the gzip member) cannot pile up bytes."""
    wire = gzip.compress(b"{}") + bytes(2000)
    with pytest.raises(BodyTooLarge):
        read_body([wire[:1000], wire[1000:]], "gzip", 1500)
    assert read_body([wire], "gzip", len(wire)) == b"{}"


@pytest.mark.parametrize("header,wire,message", [
    ("br", b"\x1b\x03", "the answer is encoded as 'br'; gsg asks for gzip, deflate (one coding) only"),
    ("zstd", b"\x28\xb5", "the answer is encoded as 'zstd'; gsg asks for gzip, deflate (one coding) only"),
    ("gzip, gzip", b"", "the answer is encoded as 'gzip, gzip'; gsg asks for gzip, deflate (one coding) only"),
    ("gzip\x1b[2J", b"", "the answer is encoded as 'gzip?[2J'; gsg asks for gzip, deflate (one coding) only"),
    ("gzip", b"not gzip at all", "the gzip data cannot be decoded: Error -3 while decompressing data: incorrect "
                                 "header check"),
    ("gzip", gzip.compress(b'{"a": 1}', mtime=0)[:-12], "the gzip data ends before its end marker"),
    ("deflate", b"x", "the deflate data ends before its end marker"),
])
def test_encodings_gsg_did_not_ask_for_or_broken_data_are_one_line(header, wire, message):
    with pytest.raises(BadEncoding) as exc:
        read_body([wire], header, 10**6)
    assert exc.value.message == message


@respx.mock
def test_the_client_asks_only_for_encodings_it_bounds_and_names_the_endpoint():
    route = respx.get(f"{BASE}/v2/users/me").mock(return_value=httpx.Response(
        200, content=b"\x1b\x03", headers={"Content-Encoding": "br"}, stream=httpx.ByteStream(b"\x1b\x03")))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).me()
    assert route.calls[0].request.headers["accept-encoding"] == "gzip, deflate"
    assert str(exc.value) == "GET /v2/users/me: the answer is encoded as 'br'; gsg asks for gzip, deflate " \
                             "(one coding) only"


def test_a_gzip_bomb_from_a_real_server_is_one_line_and_not_retried():
    with HostileGPUStack("gzip-bomb", bomb_bytes=16 * 1024**2) as server:
        client = live_client(server, request_deadline=5.0, max_response_bytes=1024**2)
        with pytest.raises(ApiError) as exc:
            client.models()
    assert str(exc.value) == ("GET /v2/models: the answer is larger than gsg reads (1 MiB, GSG_MAX_RESPONSE_BYTES); "
                              "refused before parsing")
    assert len(server.requests) == 1


# --- headers ----------------------------------------------------------------------------------------------

SERVER_OWN_HEADERS = 5  # Server, Date, Content-Type, Content-Length, Connection


@pytest.mark.parametrize("extra,refused", [(MAX_RESPONSE_HEADERS - SERVER_OWN_HEADERS, False),
                                           (MAX_RESPONSE_HEADERS - SERVER_OWN_HEADERS + 1, True)])
def test_the_header_count_is_capped(extra, refused):
    with HostileGPUStack("many-headers", many_headers=extra) as server:
        client = live_client(server, request_deadline=5.0)
        if not refused:
            assert client.request("GET", "/v2/models") == {}
            return
        with pytest.raises(ApiError) as exc:
            client.request("GET", "/v2/models")
    assert str(exc.value) == "GET /v2/models: the answer has 501 header lines, more than gsg reads (500)"


@pytest.mark.parametrize("mode,size", [("huge-header", 10 * 1024**2), ("huge-header", 101 * 1024),
                                       ("many-headers", 20_000)])
def test_a_header_block_past_100_kib_is_one_line_and_not_retried(mode, size):
    with HostileGPUStack(mode, huge_header_bytes=size, many_headers=size) as server:
        client = live_client(server, request_deadline=5.0)
        start = time.monotonic()
        with pytest.raises(ApiError) as exc:
            client.models()
    assert str(exc.value) == ("GET /v2/models: the answer's status line and headers are larger than gsg reads "
                              "(100 KiB)")
    assert len(server.requests) == 1 and time.monotonic() - start < 2


def test_a_large_header_under_the_bound_is_read():
    with HostileGPUStack("huge-header", huge_header_bytes=90 * 1024) as server:
        assert live_client(server, request_deadline=5.0).request("GET", "/v2/models") == {}


# --- pages ------------------------------------------------------------------------------------------------

def growing_pages(request: httpx.Request) -> httpx.Response:
    page = int(request.url.params["page"])
    return httpx.Response(200, json={"items": [{"id": page, "name": f"m{page}"}],
                                     "pagination": {"page": page, "totalPage": page + 1}})


@respx.mock
def test_a_page_count_that_grows_with_every_page_stops_at_the_page_cap():
    route = respx.get(f"{BASE}/v2/models").mock(side_effect=growing_pages)
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY, limits=Limits(max_list_pages=7)).models()
    assert str(exc.value) == "GET /v2/models: the server announces 8 pages, more than gsg reads (7, GSG_MAX_LIST_PAGES)"
    assert route.call_count == 7


@pytest.mark.parametrize("pages,shown", [(10**12, "1,000,000,000,000"), (10**40, "a 41-digit number of")])
@respx.mock
def test_an_absurd_page_count_is_refused_on_the_first_page(pages, shown):
    route = respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [{"id": 1, "name": "a"}], "pagination": {"totalPage": pages}}))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).models()
    assert str(exc.value) == (f"GET /v2/models: the server announces {shown} pages, more than gsg reads (10,000, "
                              "GSG_MAX_LIST_PAGES)")
    assert route.call_count == 1


@respx.mock
def test_exactly_the_page_cap_is_read_whole():
    def pages(request):
        page = int(request.url.params["page"])
        return httpx.Response(200, json={"items": [{"id": page, "name": f"m{page}"}], "pagination": {"totalPage": 3}})

    respx.get(f"{BASE}/v2/models").mock(side_effect=pages)
    assert [m["id"] for m in GPUStackClient(BASE, KEY, limits=Limits(max_list_pages=3)).models()] == [1, 2, 3]


def test_the_page_cap_is_set_from_the_environment():
    assert Limits.from_env({"GSG_MAX_LIST_PAGES": "12"}).max_list_pages == 12
    assert Limits.from_env({}).max_list_pages == 10_000
    for text in ("0", "-3", "2.5", "many"):
        with pytest.raises(ApiError.__mro__[1], match=f"GSG_MAX_LIST_PAGES must be a positive whole number, not "
                                                      f"'{text}'"):
            Limits.from_env({"GSG_MAX_LIST_PAGES": text})


# --- numbers json cannot read -----------------------------------------------------------------------------

WORKER_PATH = "items[0].status.gpu_devices[1].memory.total"


def _worker_answer(total: str) -> bytes:
    template = {"items": [{"id": 1, "name": "w", "cluster_id": 1, "status": {"gpu_devices": [
        {"index": 0, "memory": {"total": 1}}, {"index": 1, "memory": {"total": "@@"}}]}}],
        "pagination": {"totalPage": 1}}
    return json.dumps(template).replace('"@@"', total).encode()


@pytest.mark.parametrize("number,description", [
    ("9" * 5000, "an integer of 5,000 digits"),
    ("-" + "9" * 4301, "an integer of 4,301 digits"),
    ("NaN", "'NaN'"),
    ("Infinity", "'Infinity'"),
    ("-Infinity", "'-Infinity'"),
])
@respx.mock
def test_a_number_json_cannot_read_is_one_line_naming_the_field(number, description):
    respx.get(f"{BASE}/v2/workers").mock(return_value=httpx.Response(200, content=_worker_answer(number)))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).workers()
    assert str(exc.value) == f"GET /v2/workers: field '{WORKER_PATH}' is {description}, not a number gsg can use"


@respx.mock
def test_an_integer_of_4300_digits_is_read_and_a_bare_one_names_the_answer():
    respx.get(f"{BASE}/v2/users/me").mock(return_value=httpx.Response(200, content=("7" * 4300).encode()))
    respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(200, content=("7" * 4301).encode()))
    client = GPUStackClient(BASE, KEY)
    assert client.request("GET", "/v2/users/me") == int("7" * 4300)
    with pytest.raises(ApiError) as exc:
        client.get_model(1)
    assert str(exc.value) == "GET /v2/models/1: the answer is an integer of 4,301 digits, not a number gsg can use"


@respx.mock
def test_a_field_name_from_the_server_is_printed_safely():
    body = b'{"a\\u001b[2J\\r": {"b": ' + b"1" * 5000 + b"}}"
    respx.get(f"{BASE}/v2/users/me").mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).me()
    assert str(exc.value) == ("GET /v2/users/me: field 'a?[2J?.b' is an integer of 5,000 digits, not a number gsg "
                              "can use")


# --- fields of model answers and evaluation results -------------------------------------------------------

@pytest.mark.parametrize("field,value,message", [
    ("id", 2**63, "field 'id' is an integer of 19 digits, expected a 64-bit integer"),
    ("cluster_id", [1], "field 'cluster_id' is a list, expected an integer >= 0"),
    ("cluster_id", "1", "field 'cluster_id' is text, expected an integer >= 0"),
    ("cluster_id", 2**64, "field 'cluster_id' is an integer of 20 digits, expected an integer >= 0"),
    ("replicas", "2", "field 'replicas' is text, expected an integer >= 0"),
    ("replicas", -1, "field 'replicas' is an integer, expected an integer >= 0"),
    ("replicas", True, "field 'replicas' is a boolean, expected an integer >= 0"),
    ("ready_replicas", 1.5, "field 'ready_replicas' is a number, expected an integer >= 0"),
    ("backend_parameters", ["--a", 1], "field 'backend_parameters[1]' is an integer, expected text"),
    ("backend_parameters", [None], "field 'backend_parameters[0]' is missing or null, expected text"),
    ("env", {"A": 1}, "field 'env.A' is an integer, expected text"),
    ("env", {"B\x1b]0;x\x07": {"x": 1}}, "field 'env.B?]0;x?' is an object, expected text"),
])
@respx.mock
def test_model_fields_plan_drift_and_apply_read_are_typed(field, value, message):
    respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [{"id": 1, "name": "a", field: value}], "pagination": {"totalPage": 1}}))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).models()
    assert str(exc.value) == f"GET /v2/models: item 0: {message}"


@respx.mock
def test_model_fields_at_their_bounds_are_read():
    model = {"id": 2**63 - 1, "name": "a", "cluster_id": 0, "replicas": 0, "ready_replicas": None,
             "backend_parameters": [], "env": {"A": ""}}
    respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [model], "pagination": {"totalPage": 1}}))
    assert GPUStackClient(BASE, KEY).models() == [model]


@pytest.mark.parametrize("raw,field,shown", [
    (b'{"results": [{"compatible": true, "score": 1e999}]}', "results[0].score", "an infinite number"),
    (b'{"results": [{"claim": {"ram": -1e400}}]}', "results[0].claim.ram", "an infinite number"),
    (b'{"results": [{"x": [1, ' + str(2**70).encode() + b"]}]}", "results[0].x[1]", "an integer of 22 digits"),
])
@respx.mock
def test_evaluation_results_hold_only_numbers_json_output_can_hold(raw, field, shown):
    respx.post(f"{BASE}/v2/model-evaluations").mock(return_value=httpx.Response(200, content=raw))
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).evaluate(1, [{}])
    assert str(exc.value) == f"POST /v2/model-evaluations: field '{field}' is {shown}, expected a finite number"


@respx.mock
def test_ordinary_evaluation_numbers_pass():
    respx.post(f"{BASE}/v2/model-evaluations").mock(return_value=httpx.Response(200, json={
        "results": [{"compatible": True, "score": 0.5, "resource_claim": {"vram": 2**40}}]}))
    assert GPUStackClient(BASE, KEY).evaluate(1, [{}])[0]["score"] == 0.5


def test_an_address_that_times_out_falls_back_to_the_next(monkeypatch):
    """Like socket.create_connection: an IPv6 address that swallows the SYN times out, the IPv4 one answers."""
    import httpcore

    import gpustack_guard.adapters.gpustack.transport as T

    tried = []

    class Inner:
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            tried.append(host)
            if host == "2001:db8::1":
                raise httpcore.ConnectTimeout("timed out")
            return object()

    monkeypatch.setattr(T, "_resolve_within_deadline", lambda host, port: ["2001:db8::1", "192.0.2.1"])
    with T.request_deadline(5.0):
        T.DeadlineBackend(Inner()).connect_tcp("gpustack.test", 80, timeout=1.0)
    assert tried == ["2001:db8::1", "192.0.2.1"]


# --- an id listed twice --------------------------------------------------------------------------------------

def _two_pages(first: list, second: list):
    def pages(request):
        page = int(request.url.params["page"])
        return httpx.Response(200, json={"items": first if page == 1 else second, "pagination": {"totalPage": 2}})
    return pages


@pytest.mark.parametrize("first, second, outcome", [
    ([{"id": 5, "name": "a"}], [{"id": 5, "name": "a"}, {"id": 6, "name": "b"}], [5, 6]),  # the list shifted
    ([{"id": 5, "name": "a"}], [{"id": 5, "name": "b"}, {"id": 6, "name": "c"}],
     "id 5 is listed twice under different names (page 2)"),
    ([{"id": 5, "name": "a"}], [{"id": 5, "name": "A"}, {"id": 6, "name": "c"}],  # case alone is another name
     "id 5 is listed twice under different names (page 2)"),
    ([{"id": 5, "name": "a"}, {"id": 5, "name": "a "}], [{"id": 6, "name": "c"}],  # within one page
     "id 5 is listed twice under different names (page 1)"),
    ([{"id": 5, "name": "a"}], [{"id": 6, "name": "a"}], [5, 6]),  # one name, two ids: plan's conflict, not here
])
@respx.mock
def test_an_id_listed_twice_is_kept_once_or_refused_when_its_name_differs(first, second, outcome):
    respx.get(f"{BASE}/v2/models").mock(side_effect=_two_pages(first, second))
    if isinstance(outcome, list):
        assert [m["id"] for m in GPUStackClient(BASE, KEY).models()] == outcome
        return
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).models()
    assert str(exc.value) == f"GET /v2/models: {outcome}: the list is inconsistent; try again"


# --- nesting past json's depth -------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    (b"[" * 100_000, "HTTP 200 but the body is not JSON (is http://gpustack.test a GPUStack server?)"),
    # a bad number first sends the body to a second, naming pass, which read on into the nesting: a RecursionError
    (b'{"a": NaN, "b": ' + b"[" * 100_000, "the answer is a number Python cannot read, not a number gsg can use"),
    (b'{"a": 1' + b"0" * 5000 + b', "b": ' + b"[" * 100_000,
     "the answer is a number Python cannot read, not a number gsg can use"),
    (b'{"a": NaN, "b": ' + b"[" * 50 + b"]" * 50 + b"}", "field 'a' is 'NaN', not a number gsg can use"),
])
def test_nesting_past_jsons_depth_is_one_line(body, message):
    from gpustack_guard.adapters.gpustack.client import parse_json

    with pytest.raises(ApiError) as exc:
        parse_json("GET", "/v2/models", 200, body, BASE)
    assert str(exc.value) == f"GET /v2/models: {message}"


# --- an empty page before the last -------------------------------------------------------------------------

@pytest.mark.parametrize("pages, outcome", [
    ({1: [1], 2: [2], 3: [3]}, [1, 2, 3]),
    ({1: [1], 2: [], 3: [3]}, "page 2 of 3 is empty: the server's pagination is inconsistent; try again"),
    ({1: [], 2: [2], 3: [3]}, "page 1 of 3 is empty: the server's pagination is inconsistent; try again"),
    ({1: [1], 2: [2], 3: []}, [1, 2]),  # the last page emptied while paging (a model deleted): nothing left unread
    ({1: [], 2: [], 3: []}, "page 1 of 3 is empty: the server's pagination is inconsistent; try again"),
])
@respx.mock
def test_an_empty_page_before_the_last_is_refused_not_taken_for_the_end(pages, outcome):
    def answer(request):
        page = int(request.url.params["page"])
        return httpx.Response(200, json={"items": [{"id": i, "name": f"m{i}"} for i in pages[page]],
                                         "pagination": {"totalPage": 3}})

    respx.get(f"{BASE}/v2/models").mock(side_effect=answer)
    if isinstance(outcome, list):
        assert [m["id"] for m in GPUStackClient(BASE, KEY).models()] == outcome
        return
    with pytest.raises(ApiError) as exc:
        GPUStackClient(BASE, KEY).models()
    assert str(exc.value) == f"GET /v2/models: {outcome}"


@respx.mock
def test_an_empty_list_of_zero_pages_is_empty():
    respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [], "pagination": {"page": 1, "perPage": 500, "total": 0, "totalPage": 0}}))
    assert GPUStackClient(BASE, KEY).models() == []
