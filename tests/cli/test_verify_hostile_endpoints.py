"""`gsg verify SPECS` against misbehaving instance-log endpoints and instance lists (round 27): a JSON answer for a log,
a log refused because the instance went away between list and read, another model's log, an instance listed under
this model's id that names another model, ids listed twice, a start-up with no KV pool to compare, two start-ups in
one log, and secrets the engine printed. Each is one line naming the instance, exit 1 where the run cannot judge."""

import json

import pytest
from test_verify_live import L40S_LOG, deploy, instance_line, tuned

VERIFIED_LINE = ("instance llama-8b-00001 on gpu-l [gpu-l:cuda:0] vLLM, started: KV 158,656 tokens logged, 152,288 "
                 "estimated (-4.0 %); headroom 30,656 logged, 24,288 estimated over 128,000 needed (workload p99 "
                 "prompt + output = 16,000, 8 sequences)")
VERSION_LINE = b"INFO 04-24 16:32:49 [api_server.py:1043] vLLM API server version 0.8.5\n"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def args_line(model: str) -> bytes:
    return (f"INFO 04-24 16:32:50 [api_server.py:1044] args: Namespace(model='{model}', max_model_len=32768, "
            "max_num_seqs=8)\n").encode()


def verify(gsg, fake, here, served, *args):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = served
    return iid, gsg("verify", "specs/", *args)


# --- the log endpoint ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("served, says", [
    (b'{"detail": "Model instance logs are unavailable"}',
     "a JSON document (an object), not a log text: Model instance logs are unavailable"),
    (b'{"message": "upstream connect error"}\n', "a JSON document (an object), not a log text: upstream connect error"),
    (b'{"code": 503}', "a JSON document (an object), not a log text"),
    (b"[]", "a JSON document (a list), not a log text"),
    (b'"no logs yet"', "a JSON document (text), not a log text"),
    (b"[" * 64 + b"]" * 64, "a JSON document (a list), not a log text"),  # logs.MAX_JSON_ANSWER_DEPTH
])
def test_a_json_answer_for_a_log_is_named_as_one(gsg, fake, here, served, says):
    # before: "no start-up line of vLLM, SGLang or llama.cpp in its 1 line(s): a log format gsg does not know"
    _, result = verify(gsg, fake, here, served)
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert instance_line(result.out) == f"instance llama-8b-00001 on gpu-l: not verified: {says}"


@pytest.mark.parametrize("served, lines", [
    (b'{"a": 1}\n{"b": 2}\n', 2),  # JSON lines: a log of two lines, left to the parser
    (b"{not json at all\n", 1),
    (b"[" * 70_000 + b"\n", 1),  # too long to be the server's answer: the parser's
    (b"[" * 5_000 + b"]" * 5_000 + b"\n", 1),  # nested past the JSON parser's depth: no traceback
    (b"[" * 65 + b"]" * 65 + b"\n", 1),  # past MAX_JSON_ANSWER_DEPTH: on every Python (3.13's json reads 5,000)
])
def test_what_is_not_a_short_json_answer_is_left_to_the_parser(gsg, fake, here, served, lines):
    _, result = verify(gsg, fake, here, served)
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert instance_line(result.out).startswith(
        f"instance llama-8b-00001 on gpu-l: not verified: no start-up line of vLLM, SGLang or llama.cpp in its "
        f"{lines} line(s)")


def _one_endless_line():
    while True:
        yield b"x" * 65536


def test_one_endless_line_ends_at_the_byte_cap_cut_to_the_line_cap(gsg, fake, here, monkeypatch):
    monkeypatch.setenv("GSG_MAX_LOG_BYTES", str(4 * 1024 * 1024))
    _, result = verify(gsg, fake, here, _one_endless_line, "-o", "json")
    assert result.code == 1
    instance = json.loads(result.out)["deployments"][0]["instances"][0]
    assert instance["problem"].startswith("no start-up line of vLLM, SGLang or llama.cpp in its 1 line(s)")
    assert instance["notes"] == ["read the first 4 MiB of the log only (GSG_MAX_LOG_BYTES)",
                                 "1 line(s) longer than 32,768 bytes were cut (GSG_MAX_LOG_LINE_BYTES)"]


@pytest.mark.parametrize("served, says", [
    (b"\x00" * 5000, "not verified: not a text log (binary data at byte 0)"),
    (b"INFO caf\xe9 \xff\xfe \xc3\x28 bad\n" + L40S_LOG, None),  # invalid UTF-8 in a line: the rest is read
    (b"\x00\x00\n" + L40S_LOG, None),  # a leading run of NUL bytes (a preallocated file) is skipped
])
def test_nul_bytes_and_invalid_utf8_in_a_log(gsg, fake, here, served, says):
    _, result = verify(gsg, fake, here, served)
    assert result.code == (1 if says else 0)
    assert instance_line(result.out) == (f"instance llama-8b-00001 on gpu-l: {says}" if says else VERIFIED_LINE)


@pytest.mark.parametrize("status, says", [
    (404, "HTTP 404 NotFound: injected log refusal"),
    (409, "HTTP 409 Error: injected log refusal"),
    (410, "HTTP 410 Error: injected log refusal"),
])
def test_a_log_refused_as_gone_says_the_instance_may_have_restarted(gsg, fake, here, status, says):
    iid, result = verify(gsg, fake, here, status)
    assert result.code == 1
    assert instance_line(result.out) == (
        f"instance llama-8b-00001 on gpu-l: not verified: the server refused the log: GET /v2/model-instances/{iid}/"
        f"logs: {says} (the instance may have been restarted or removed since it was listed; run verify again)")


def test_an_instance_removed_between_the_list_and_its_log_is_one_line(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    serve_log = fake._instance_log

    def removed_first(key, query):
        fake.instances.pop(int(key), None)
        return serve_log(key, query)

    fake._instance_log = removed_first
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert instance_line(result.out) == (
        f"instance llama-8b-00001 on gpu-l: not verified: the server refused the log: GET /v2/model-instances/{iid}/"
        f"logs: HTTP 404 NotFound: Model instance {iid} not found (the instance may have been restarted or removed "
        "since it was listed; run verify again)")


def test_a_server_error_on_the_log_gives_no_restart_hint(gsg, fake, here, slept):
    _, result = verify(gsg, fake, here, 500)
    assert instance_line(result.out).endswith("HTTP 500 InternalServerError: injected log refusal")


# --- whose log it is -----------------------------------------------------------------------------------------------
def test_the_log_of_another_model_is_said_and_not_scored(gsg, fake, here):
    # before: verified and passed (exit 0), another model's KV pool held against this spec's estimate
    served = VERSION_LINE + args_line("/var/lib/gpustack/cache/huggingface/Qwen/Qwen2.5-7B-Instruct") + L40S_LOG
    _, result = verify(gsg, fake, here, served, "-o", "json")
    assert result.code == 1
    doc = json.loads(result.out)
    instance = doc["deployments"][0]["instances"][0]
    assert instance["status"] == "not-verified" and doc["findings"] == []
    assert instance["problem"] == (
        "the log is of model '/var/lib/gpustack/cache/huggingface/Qwen/Qwen2.5-7B-Instruct', but the spec deploys "
        "'meta-llama/Llama-3.1-8B-Instruct': another model's log (a reused instance id, or a log the server mixed "
        "up), not compared")


@pytest.mark.parametrize("model", [
    "meta-llama/Llama-3.1-8B-Instruct",
    "/var/lib/gpustack/cache/huggingface/meta-llama/Llama-3.1-8B-Instruct",  # GPUStack's download folder
    "/data/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f249a16976918f6564b8830bc894c89659",
    "/models/META-LLAMA/llama-3.1-8b-instruct",  # another case
    "llama-8b",  # the deployment's name
])
def test_a_log_of_this_model_under_any_of_its_names_is_verified(gsg, fake, here, model):
    _, result = verify(gsg, fake, here, VERSION_LINE + args_line(model) + L40S_LOG)
    assert result.code == 0, result.out
    assert instance_line(result.out) == VERIFIED_LINE.replace("vLLM,", "vLLM 0.8.5,")


def test_an_instance_listed_under_this_model_that_names_another_is_not_read(gsg, fake, here):
    # before: its log was read and verified as this deployment's
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    fake.instances[iid]["model_name"] = "qwen-7b"
    model_id = fake.instances[iid]["model_id"]
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert instance_line(result.out) == (
        f"instance llama-8b-00001 on gpu-l: not verified: the server lists it under model id {model_id} ('llama-8b') "
        "but names its model 'qwen-7b': whose instance it is cannot be told, its log was not read")
    assert fake.log_queries == []


def test_an_instance_without_a_model_name_is_read(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    fake.instances[iid]["model_name"] = None
    result = gsg("verify", "specs/")
    assert result.code == 0 and instance_line(result.out) == VERIFIED_LINE


@pytest.mark.parametrize("name, says", [
    ("llama-8b-00001", "the server counts 2 items but its pages held 1 distinct ids (1 item(s) listed again under an "
                       "id already read): the list is incomplete; try again"),
    ("llama-8b-00009", "id {iid} is listed twice under different names (page 1): the list is inconsistent; try again"),
])
def test_an_instance_id_listed_twice_is_one_line(gsg, fake, here, name, says):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    fake.instances[-1] = {**fake.instances[iid], "name": name, "worker_name": "elsewhere"}
    result = gsg("verify", "specs/")
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert result.err == f"gsg: error: GET /v2/model-instances: {says.format(iid=iid)}\n"
    assert fake.log_queries == []


@pytest.mark.parametrize("change, says", [
    ({"worker_name": "ghost"}, "worker 'ghost' is not in the live fleet"),
    ({"gpu_indexes": [7]}, "worker 'gpu-l' has no GPU 7 in the live fleet"),
    ({"worker_name": None}, "the server names no GPU for this instance"),
])
def test_a_running_instance_on_gpus_the_fleet_does_not_hold_is_one_line(gsg, fake, here, change, says):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    fake.instances[iid].update(change)
    result = gsg("verify", "specs/")
    assert result.code == 1
    worker = change.get("worker_name", "gpu-l") or "(no worker)"
    assert instance_line(result.out) == f"instance llama-8b-00001 on {worker}: not verified: {says}"
    assert fake.log_queries == []


def test_hundreds_of_instances_are_each_read_once_and_the_list_is_bounded(gsg, fake, here, monkeypatch):
    (iid,) = deploy(fake, here, tuned("0.78"))
    for n in range(300):
        copy = {**fake.instances[iid], "id": 1000 + n, "name": f"llama-8b-{1000 + n}"}
        fake.instances[copy["id"]] = copy
        fake.instance_logs[copy["id"]] = L40S_LOG
    fake.instance_logs[iid] = L40S_LOG
    result = gsg("verify", "specs/")
    assert result.code == 0
    assert result.err.strip().endswith("301 of 301 instance(s) verified in 1 deployment(s), 0 not verified, 0 not "
                                       "running, 0 finding(s): pass")
    assert len(fake.log_queries) == 301
    monkeypatch.setenv("GSG_MAX_LIST_ITEMS", "200")
    fake.log_queries.clear()
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert result.err == "gsg: error: GET /v2/model-instances: more than 200 items (GSG_MAX_LIST_ITEMS)\n"
    assert fake.log_queries == []


# --- what the log holds --------------------------------------------------------------------------------------------
OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


@pytest.mark.parametrize("served, says", [
    (VERSION_LINE + OOM, "the engine's start-up failed before it logged a KV pool (torch.OutOfMemoryError: CUDA out "
                         "of memory. Tried to allocate 2.00 GiB): nothing to compare"),
    (VERSION_LINE + L40S_LOG.split(b"GPU KV cache")[0].rsplit(b"\n", 1)[0] + b"\n",
     "the log stops before the engine logged its KV pool (still starting, or the start-up part was cut): nothing to "
     "compare"),
])
def test_a_start_up_without_a_kv_pool_cannot_be_judged(gsg, fake, here, served, says):
    # before: "verified" with KV "-" tokens logged, exit 0
    _, result = verify(gsg, fake, here, served)
    assert result.code == 1
    assert instance_line(result.out) == f"instance llama-8b-00001 on gpu-l: not verified: {says}"


def test_a_log_of_two_start_ups_is_judged_on_the_last_and_says_so(gsg, fake, here):
    first = VERSION_LINE + L40S_LOG.replace(b"158,656 tokens", b"100,000 tokens")
    _, result = verify(gsg, fake, here, first + VERSION_LINE + L40S_LOG, "-o", "json")
    assert result.code == 0, result.out
    instance = json.loads(result.out)["deployments"][0]["instances"][0]
    assert instance["kv_capacity_tokens"]["observed"] == 158_656
    assert instance["notes"] == ["the log holds 2 start-ups of vllm: the last one was read"]


def test_a_start_up_that_failed_then_came_up_is_judged_on_the_one_that_came_up(gsg, fake, here):
    _, result = verify(gsg, fake, here, VERSION_LINE + OOM + VERSION_LINE + L40S_LOG)
    assert result.code == 0, result.out
    assert instance_line(result.out) == VERIFIED_LINE.replace("vLLM,", "vLLM 0.8.5,")


# --- secrets -------------------------------------------------------------------------------------------------------
HF = "hf_abcdefghijklmnopqrstuv12"


def test_secrets_the_engine_printed_in_a_quoted_failure_are_masked(gsg, fake, here):
    failure = (f"OSError: token {HF} and key {fake.api_key} are not valid for this repo\n").encode()
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = VERSION_LINE + b"HF_TOKEN=" + HF.encode() + b"\n" + failure
    for output in ("text", "json", "markdown"):
        result = gsg("verify", "specs/", "-o", output)
        assert result.code == 1
        assert HF not in result.out + result.err and fake.api_key not in result.out + result.err
        assert "OSError: token ******** and key ******** are not valid for this repo" in result.out


@pytest.mark.parametrize("served", [
    lambda key: f'{{"detail": "bad token {HF} for key {key}"}}'.encode(),
    lambda key: f"\x1b[999;1HUnable to read logs: auth {HF} {key}\n".encode(),
])
def test_secrets_in_the_servers_own_answer_are_masked(gsg, fake, here, served):
    _, result = verify(gsg, fake, here, served(fake.api_key))
    assert result.code == 1 and "not verified: " in instance_line(result.out)
    assert HF not in result.out + result.err and fake.api_key not in result.out + result.err


def test_once_the_command_time_limit_runs_out_the_other_logs_are_not_read(gsg, fake, here, monkeypatch):
    # before: the log dripping past the limit had a note naming GSG_REQUEST_DEADLINE, and every later instance was
    # "the server refused the log: ... gsg's time limit for this command ran out", a request gsg never made
    import time

    monkeypatch.setenv("GSG_COMMAND_DEADLINE", "1.5")
    first, second = deploy(fake, here, tuned("0.78"), replicas=2)

    def dripping():
        yield L40S_LOG
        while True:
            time.sleep(0.05)
            yield b"INFO 04-24 16:40:00 [logger.py:39] Received request chatcmpl\n"

    fake.instance_logs[first] = dripping
    fake.instance_logs[second] = L40S_LOG
    started = time.monotonic()
    result = gsg("verify", "specs/", "-o", "json")
    assert time.monotonic() - started < 5
    assert result.code == 1
    one, two = json.loads(result.out)["deployments"][0]["instances"]
    assert one["status"] == "verified" and one["kv_capacity_tokens"]["observed"] == 158_656
    assert len(one["notes"]) == 1 and one["notes"][0].startswith(
        "the server was still sending when gsg's time limit for this command ran out (1.5s over all requests, "
        "GSG_COMMAND_DEADLINE): read the first ")
    assert two["status"] == "not-verified" and two["problem"] == (
        "not read: gsg's time limit for this command ran out (1.5s over all requests, GSG_COMMAND_DEADLINE)")
    assert len(fake.log_queries) == 1


def test_secrets_on_the_engines_command_line_never_reach_the_output(gsg, fake, here):
    # before: `--api-key VALUE` (a space, or an argv list) and a GPUStack key by its shape were quoted as printed
    other_key = "gpustack_fedcba9876543210_0123456789abcdef0123456789abcdef"
    served = (VERSION_LINE + b"INFO 04-24 16:32:50 [api_server.py:1044] argv: ['--api-key', 'engine-secret-1', "
              b"'--max-model-len', '32768']\n" + f"OSError: key {other_key} refused; --hf-token plainsecret9\n".encode())
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = served
    for output in ("text", "json", "markdown"):
        result = gsg("verify", "specs/", "-o", output)
        assert result.code == 1
        for secret in ("engine-secret-1", other_key, "plainsecret9"):
            assert secret not in result.out + result.err
    assert "OSError: key ******** refused; --hf-token ********" in result.out
