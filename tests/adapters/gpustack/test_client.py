"""The GPUStack client over respx: every endpoint shape and every error path becomes one line, no key."""

import httpx
import pytest
import respx

from gpustack_guard.adapters.gpustack.client import DETAIL_ENTRIES_SHOWN, ApiError, GPUStackClient, Limits

BASE = "http://gpustack.test"
KEY = "gpustack_0123456789abcdef_0123456789abcdef0123456789abcdef"


def client(**kw):
    return GPUStackClient(BASE, KEY, sleep=lambda _s: None, **kw)


def err(status, reason, message):
    return httpx.Response(status, json={"code": status, "reason": reason, "message": message})


@pytest.mark.parametrize("status,reason,message,expect", [
    (401, "Unauthorized", "Invalid authentication credentials", "GSG_API_KEY"),
    (403, "Forbidden", "API key does not have permission to access management features", "'management' scope"),
    (404, "NotFound", "Model not found", "Model not found"),
    (409, "AlreadyExists", "Model with name 'x' already exists.", "already exists"),
    (422, "Invalid", "2 validation errors:\n  {'loc': ('body','source')}\n  {'loc': ('body','name')}", "(+2 lines)"),
    (500, "InternalServerError", "boom", "HTTP 500 InternalServerError: boom"),
])
@respx.mock
def test_error_envelope_becomes_one_line_naming_the_endpoint(status, reason, message, expect):
    respx.get(f"{BASE}/v2/models/7").mock(return_value=err(status, reason, message))
    with pytest.raises(ApiError) as exc:
        client().get_model(7)
    text = str(exc.value)
    assert text.startswith("GET /v2/models/7: HTTP ") and expect in text
    assert "\n" not in text and KEY not in text and exc.value.status == status


@respx.mock
def test_503_then_success_is_retried_for_idempotent_calls_only():
    route = respx.get(f"{BASE}/v2/models/1").mock(side_effect=[err(503, "ServiceUnavailable", "busy"),
                                                              httpx.Response(200, json={"id": 1, "name": "a"})])
    assert client().get_model(1) == {"id": 1, "name": "a"} and route.call_count == 2
    post = respx.post(f"{BASE}/v2/models").mock(side_effect=[err(503, "ServiceUnavailable", "busy")])
    with pytest.raises(ApiError, match="HTTP 503"):
        client().create_model({"name": "x"})
    assert post.call_count == 1


@respx.mock
def test_connection_refused_and_timeout():
    respx.get(f"{BASE}/v2/users/me").mock(side_effect=httpx.ConnectError("Connection refused"))
    with pytest.raises(ApiError, match=r"GET /v2/users/me: cannot connect to http://gpustack.test"):
        client(retries=2).me()
    assert respx.calls.call_count == 3
    respx.get(f"{BASE}/v2/models/2").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ApiError, match=r"GET /v2/models/2: timed out after 15.0s"):
        client().get_model(2)


@respx.mock
def test_malformed_json_is_named():
    respx.get(f"{BASE}/v2/users/me").mock(return_value=httpx.Response(200, text="<html>proxy login</html>"))
    with pytest.raises(ApiError, match="body is not JSON"):
        client().me()


@respx.mock
def test_a_list_that_fits_one_page_is_one_call_with_the_page_size():
    route = respx.get(f"{BASE}/v2/workers").mock(return_value=httpx.Response(200, json={
        "items": [{"name": f"w{i}"} for i in range(250)],
        "pagination": {"page": 1, "perPage": 500, "total": 250, "totalPage": 1}}))
    assert len(client().workers()) == 250 and route.call_count == 1
    assert dict(route.calls[0].request.url.params) == {"page": "1", "perPage": "500"}


def paged_models(total: int, per_page: int, shift_at: int | None = None):
    """A /v2/models that pages; with `shift_at`, one item slides to the next page while the client reads
    (a model created meanwhile), so that page repeats it."""
    def page(request):
        number = int(request.url.params["page"])
        start = (number - 1) * per_page - (1 if shift_at and number >= shift_at else 0)
        items = [{"id": i, "name": f"m{i}"} for i in range(max(0, start), min(start + per_page, total))]
        return httpx.Response(200, json={"items": items, "pagination": {
            "page": number, "perPage": per_page, "total": total, "totalPage": -(-total // per_page)}})
    return page


@respx.mock
def test_walks_every_page_and_keeps_an_item_seen_twice_once():
    route = respx.get(f"{BASE}/v2/models").mock(side_effect=paged_models(230, 100, shift_at=2))
    names = [m["name"] for m in GPUStackClient(BASE, KEY, limits=Limits(page_size=100)).models()]
    assert names == [f"m{i}" for i in range(230)] and route.call_count == 3
    assert [c.request.url.params["page"] for c in route.calls] == ["1", "2", "3"]


@respx.mock
def test_keep_sees_each_item_as_its_page_arrives():
    respx.get(f"{BASE}/v2/workers").mock(side_effect=paged_models(5, 2))
    kept = GPUStackClient(BASE, KEY, limits=Limits(page_size=2)).workers(keep=lambda i, w: (i, w["id"]))
    assert kept == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]


@respx.mock
def test_find_model_matches_exactly_not_by_substring():
    respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [{"id": 1, "name": "llama-70b-q4"}, {"id": 2, "name": "llama-70b"}],
        "pagination": {"page": 1, "perPage": 100, "total": 2, "totalPage": 1}}))
    assert [m["id"] for m in client().find_models("llama-70b")] == [2]
    assert client().find_models("llama") == []  # `?search=` matches substrings; the client keeps exact names


@respx.mock
def test_every_endpoint_path_and_auth_header():
    routes = {
        "version": respx.get(f"{BASE}/version").mock(return_value=httpx.Response(200, json={"version": "v2.3.0"})),
        "create": respx.post(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={"id": 5, "name": "a"})),
        "update": respx.put(f"{BASE}/v2/models/5").mock(return_value=httpx.Response(200, json={"id": 5,
                                                                                               "name": "a"})),
        "delete": respx.delete(f"{BASE}/v2/models/5").mock(return_value=httpx.Response(200, json=None)),
        "restart": respx.post(f"{BASE}/v2/models/5/restart").mock(return_value=httpx.Response(200, json={
            "spec_digest": "d", "restarted": True, "deleted_instances": 1, "message": ""})),
        "export": respx.post(f"{BASE}/v2/models/export").mock(return_value=httpx.Response(
            200, text="name: a\n", headers={"content-type": "application/x-yaml"})),
        "evaluate": respx.post(f"{BASE}/v2/model-evaluations").mock(return_value=httpx.Response(200, json={
            "results": [{"compatible": False}]})),
    }
    c = client()
    assert c.version()["version"] == "v2.3.0"
    assert c.create_model({"name": "a"})["id"] == 5 and c.update_model(5, {"name": "a"})["id"] == 5
    assert c.delete_model(5) is None and c.restart_model(5)["restarted"]
    assert c.export_models(cluster_id=1) == "name: a\n"
    assert c.evaluate(1, [{"name": "a"}]) == [{"compatible": False}]
    assert all(r.called for r in routes.values())
    assert routes["create"].calls[0].request.headers["authorization"] == f"Bearer {KEY}"


def test_url_scheme_is_checked():
    from gpustack_guard.core.errors import GsgError

    with pytest.raises(GsgError, match="must start with http"):
        GPUStackClient("gpustack.local:80", KEY)


# --- hostile servers (issue 13) ---------------------------------------------------------------------------

class FakeClock:
    """Monotonic time that only moves when told (or by `step` on every reading)."""

    def __init__(self, step: float = 0.0):
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def recording_client(limits=None, clock=None, **kw):
    pauses = []
    made = GPUStackClient(BASE, KEY, sleep=pauses.append, limits=limits, clock=clock or FakeClock(), **kw)
    return made, pauses


@respx.mock
def test_429_waits_for_retry_after_seconds_or_date_for_any_method():
    later = httpx.Response(429, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})  # in the past: 0
    route = respx.post(f"{BASE}/v2/models").mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "2"}), later, httpx.Response(200, json={"id": 3, "name": "a"})])
    made, pauses = recording_client()
    assert made.create_model({"name": "a"})["id"] == 3 and route.call_count == 3
    assert pauses == [2.0, 0.0]


@respx.mock
def test_429_asking_for_longer_than_the_bound_fails_at_once():
    route = respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(429, headers={"Retry-After": "3600"}))
    made, pauses = recording_client()
    with pytest.raises(ApiError) as exc:
        made.get_model(1)
    assert str(exc.value) == ("GET /v2/models/1: HTTP 429 Too Many Requests: the server asks to retry after 3600, "
                              "longer than gsg waits (30s, GSG_MAX_RETRY_AFTER)")
    assert route.call_count == 1 and pauses == [] and exc.value.status == 429


@respx.mock
def test_export_post_is_retried_like_a_read_and_create_is_not():
    export = respx.post(f"{BASE}/v2/models/export").mock(side_effect=[
        err(502, "BadGateway", "x"), err(503, "ServiceUnavailable", "x"), httpx.Response(200, text="name: a\n")])
    made, pauses = recording_client()
    assert made.export_models() == "name: a\n" and export.call_count == 3 and len(pauses) == 2


@respx.mock
def test_a_redirect_is_not_success_and_names_where_without_credentials():
    respx.get(f"{BASE}/v2/users/me").mock(return_value=httpx.Response(
        302, headers={"Location": "https://bob:hunter22@sso.example/login?next=/v2&token=abc123"}))
    with pytest.raises(ApiError) as exc:
        client().me()
    text = str(exc.value)
    assert text.startswith("GET /v2/users/me: HTTP 302 redirect to https://sso.example/login: not an API answer")
    assert "hunter22" not in text and "abc123" not in text and "bob" not in text


@respx.mock
def test_an_answer_over_the_cap_is_refused_declared_or_not():
    respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(200, content=b"x" * 2048))
    respx.get(f"{BASE}/v2/models/2").mock(return_value=httpx.Response(
        200, stream=httpx.ByteStream(b"[" + b"1," * 2000 + b"1]")))  # no Content-Length
    made, _ = recording_client(Limits(max_response_bytes=1024))
    for model_id, declared in ((1, " (0.0 MiB declared)"), (2, "")):
        with pytest.raises(ApiError) as exc:
            made.get_model(model_id)
        assert str(exc.value) == (f"GET /v2/models/{model_id}: the answer is larger than gsg reads "
                                  f"(0.000976562 MiB, GSG_MAX_RESPONSE_BYTES){declared}; refused before parsing")


@respx.mock
def test_the_command_deadline_covers_every_request_and_pause():
    respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(200, json={"id": 1, "name": "a"}))
    clock = FakeClock()
    made, pauses = recording_client(Limits(command_deadline=10), clock)
    made.get_model(1)
    clock.now += 11
    with pytest.raises(ApiError, match=r"^GET /v2/models/1: gsg's time limit for this command ran out \(10s"):
        made.get_model(1)
    made.extend_deadline(100)  # apply --wait asks for more
    assert made.get_model(1)["id"] == 1


@respx.mock
def test_a_backoff_past_the_command_deadline_fails_instead_of_sleeping():
    respx.get(f"{BASE}/v2/models/1").mock(return_value=err(503, "ServiceUnavailable", "busy"))
    made, pauses = recording_client(Limits(command_deadline=0.4))  # the first backoff is 0.5 s or more
    with pytest.raises(ApiError, match="time limit for this command ran out"):
        made.get_model(1)
    assert pauses == []


@respx.mock
def test_url_user_info_is_neither_sent_nor_shown():
    route = respx.get(f"{BASE}/version").mock(return_value=httpx.Response(200, json={"version": "v2.3.0"}))
    made = GPUStackClient("http://admin:s3cret-pw@gpustack.test/", KEY)
    made.version()
    assert made.base_url == BASE
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"
    with pytest.raises(Exception) as exc:
        GPUStackClient("ftp://admin:s3cret-pw@gpustack.test", KEY)
    assert "s3cret-pw" not in str(exc.value) and "ftp://gpustack.test" in str(exc.value)


@pytest.mark.parametrize("body,message", [
    ({"items": [{"id": "7", "name": "a"}]}, "GET /v2/models: item 0: field 'id' is text, expected an integer"),
    ({"items": [{"id": 7, "name": None}]}, "GET /v2/models: item 0: field 'name' is missing or null, expected text"),
    ({"items": [{"id": 7, "name": "a", "meta": []}]}, "GET /v2/models: item 0: field 'meta' is a list, expected "
                                                      "an object"),
    ({"items": ["a"]}, "GET /v2/models: item 0 is text, not a model object"),
    ({"items": {}}, "GET /v2/models: unexpected answer: no 'items' list"),
    ({"items": [], "pagination": {"totalPage": "2"}}, "GET /v2/models: field 'pagination.totalPage' is text, "
                                                      "expected an integer"),
])
@respx.mock
def test_wrongly_typed_model_lists_are_one_line_naming_the_field(body, message):
    respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(ApiError) as exc:
        client().models()
    assert str(exc.value) == message


@pytest.mark.parametrize("value,message", [
    ("0", "GSG_REQUEST_DEADLINE must be a positive number, not '0'"),
    ("nan", "GSG_REQUEST_DEADLINE must be a positive number, not 'nan'"),
    ("soon", "GSG_REQUEST_DEADLINE must be a positive number, not 'soon'"),
    ("9" * 5000, f"GSG_REQUEST_DEADLINE must be a positive number, not '{'9' * 40}'"),  # infinite: refused, cut
    ("1e400", "GSG_REQUEST_DEADLINE must be a positive number, not '1e400'"),
])
def test_limits_from_the_environment(value, message):
    from gpustack_guard.core.errors import GsgError

    assert Limits.from_env({"GSG_REQUEST_DEADLINE": "2.5", "GSG_PAGE_SIZE": "50"}) == Limits(request_deadline=2.5,
                                                                                             page_size=50)
    with pytest.raises(GsgError) as exc:
        Limits.from_env({"GSG_REQUEST_DEADLINE": value})
    assert str(exc.value) == message
    with pytest.raises(GsgError, match="GSG_PAGE_SIZE must be a positive whole number, not '1.5'"):
        Limits.from_env({"GSG_PAGE_SIZE": "1.5"})


@respx.mock
def test_a_server_repeating_the_same_page_forever_is_stopped():
    route = respx.get(f"{BASE}/v2/models").mock(return_value=httpx.Response(200, json={
        "items": [{"id": 1, "name": "a"}], "pagination": {"page": 1, "perPage": 1, "total": 1000,
                                                          "totalPage": 1000}}))
    with pytest.raises(ApiError) as exc:
        client().models()
    assert str(exc.value) == ("GET /v2/models: page 2 of 1000 holds only items already read: the server's "
                              "pagination is broken")
    assert route.call_count == 2


@respx.mock
def test_a_list_past_the_item_cap_is_refused():
    respx.get(f"{BASE}/v2/models").mock(side_effect=paged_models(30, 10))
    with pytest.raises(ApiError, match=r"^GET /v2/models: more than 25 items \(GSG_MAX_LIST_ITEMS\)$"):
        GPUStackClient(BASE, KEY, limits=Limits(page_size=10, max_list_items=25)).models()


@pytest.mark.parametrize("field,value,expected", [("env", ["A=1"], "an object"), ("backend_parameters", "--x", "a list")])
@respx.mock
def test_model_fields_the_plan_reads_are_type_checked(field, value, expected):
    respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(200, json={"id": 1, "name": "a", field: value}))
    with pytest.raises(ApiError) as exc:
        client().get_model(1)
    assert str(exc.value).endswith(f"field '{field}' is {'a list' if isinstance(value, list) else 'text'}, "
                                   f"expected {expected}")


@pytest.mark.parametrize("url,shown", [
    ("http://admin:pw-123@gpustack.test:8080/x?y=1", "http://gpustack.test:8080/x?y=1"),
    ("https://admin@[::1]:443/", "https://[::1]:443/"),
    ("admin:pw-123@gpustack.test", "gpustack.test"),  # no scheme: still no password
    ("http://admin:pw-123@gpustack.test:99999", "http://gpustack.test:99999"),  # a bad port
    ("http://gpustack.test/a@b", "http://gpustack.test/a@b"),  # an '@' in the path is not user info
])
def test_redact_url(url, shown):
    from gpustack_guard.core.secrets import mask_url as redact_url

    assert redact_url(url) == shown


@pytest.mark.parametrize("version,message", [
    (["v2"], "GET /version: field 'version' is a list, expected a version such as v2.3.0"),
    ("v" * 100, "GET /version: field 'version' is text of 100 characters, expected a version such as v2.3.0"),
])
@respx.mock
def test_a_version_that_is_not_one_is_refused_without_echoing_it(version, message):
    respx.get(f"{BASE}/version").mock(return_value=httpx.Response(200, json={"version": version}))
    with pytest.raises(ApiError) as exc:
        client().version()
    assert str(exc.value) == message


@respx.mock
def test_a_content_length_of_a_non_ascii_digit_is_no_length():
    # '²' is a digit to str.isdigit, not to int(): the answer is read and bounded as one without a length
    respx.get(f"{BASE}/v2/models/1").mock(return_value=httpx.Response(
        200, headers=[(b"content-length", b"\xb2")], stream=httpx.ByteStream(b'{"id": 1, "name": "a"}')))
    made, _ = recording_client(Limits(max_response_bytes=1024))
    assert made.get_model(1) == {"id": 1, "name": "a"}


@pytest.mark.parametrize("dates,skew", [
    (["Sun, 06 Dec 2026 10:00:00 GMT"], 1_796_551_200.0),
    (["Sun, 06 Dec 2026 10:00:00 -0000"], 1_796_551_200.0),  # no zone said: UTC, never this host's zone
    (["Sun, 06 Dec 2026 10:00:00 GMT", "not a date"], 1_796_551_200.0),  # an unreadable one keeps the last
    ([""], 0.0),  # no Date at all: this host's clock, as before
])
def test_the_server_clock_is_read_from_the_date_header(monkeypatch, dates, skew):
    import gpustack_guard.adapters.gpustack.client as module

    answers = iter(dates)
    c = client(transport=httpx.MockTransport(
        lambda r: httpx.Response(200, json={"version": "v2.0.0"}, headers={"Date": next(answers)})))
    monkeypatch.setattr(module.time, "time", lambda: 0.0)
    for _ in dates:
        c.request("GET", "/version")
    assert c.server_time(0.0) == skew


@pytest.mark.parametrize("total,expect", [
    (None, 3), ("3", 3), (True, 3), (-1, 3),  # no count, or none gsg can read: the pages are the list
    (3, 3), (2, 3),  # a count below the items (one deleted while paging) is no hole
    (4, "the server counts 4 items but its pages held 3: the list is incomplete; try again"),
])
def test_a_list_whose_pages_hold_fewer_items_than_it_counts_is_refused(total, expect):
    pages = {1: [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], 2: [{"id": 3, "name": "c"}]}

    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        return httpx.Response(200, json={"items": pages[page], "pagination": {
            "page": page, "perPage": 2, "total": total, "totalPage": 2}})

    c = client(transport=httpx.MockTransport(answer))
    if isinstance(expect, int):
        assert len(c.models()) == expect
    else:
        with pytest.raises(ApiError) as caught:
            c.models()
        assert caught.value.detail == expect


@pytest.mark.parametrize("body, says", [
    ({"error": {"message": "model not loaded", "type": "x"}}, "HTTP 400 Bad Request: model not loaded"),
    # before: "None", and Python's repr of a list with its `input` (the request's own values)
    ({"error": {"message": None, "type": "x"}, "message": "bad model"}, "HTTP 400 Bad Request: bad model"),
    ({"error": {"message": None}}, "HTTP 400 Bad Request"),
    ({"error": {"message": [{"loc": ["body", "n"], "msg": "too big", "input": "hf_secret_echo_0001"}]}},
     "HTTP 400 Bad Request: n: too big"),
    ({"detail": [{"loc": ["body", f"f{i}"], "msg": "bad"} for i in range(DETAIL_ENTRIES_SHOWN + 2)]},
     "HTTP 400 Bad Request: " + "; ".join(f"f{i}: bad" for i in range(DETAIL_ENTRIES_SHOWN)) + " (+2 more)"),
])
def test_an_error_body_message_is_text_never_none_nor_a_repr(body, says):
    c = client(transport=httpx.MockTransport(lambda _r: httpx.Response(400, json=body)))
    with pytest.raises(ApiError) as caught:
        c.get_model(7)
    assert str(caught.value) == f"GET /v2/models/7: {says}"
