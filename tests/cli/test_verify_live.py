"""gsg verify SPECS against the in-memory GPUStack: each running instance's start-up log held against its spec's
estimate on that instance's GPU, and every way a log can fail to arrive or to be read, each one line."""

import json

import pytest
from support import REPO

LOGS = REPO / "tests" / "fixtures" / "logs"
L40S_LOG = (LOGS / "vllm" / "v1-0.8.5-llama31-8b-l40s.log").read_bytes()  # Llama-3.1-8B, 1x L40S, 158,656 tokens
MiB = 1024**2
PROJECT = "demo"
SPEC = """name: llama-8b
source: huggingface
huggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct
gpu_selector:
  gpu_ids: [gpu-l:cuda:0]
backend: vLLM
backend_version: 0.8.5
backend_parameters:
  - --max-model-len=32768
  - --max-num-seqs=8
guard:
  workload: {prompt_tokens_p99: 12000, max_output_tokens: 4000}
"""


def deploy(fake, tmp_path, spec=SPEC, replicas=1, owner=PROJECT, name="llama-8b"):
    """The spec in a project folder (the working directory's specs/), and its model on the server as `gsg apply`
    leaves it (the marker); returns the instance ids."""
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    (folder / "gsg.yaml").write_text(f"project: {PROJECT}\n")
    (folder / f"{name}.yaml").write_text(spec)
    if not any(w["name"] == "gpu-l" for w in fake.workers):
        fake.add_worker(fake.clusters[0]["id"], "gpu-l", [("NVIDIA L40S", 46068 * MiB)] * 2, {"gpu": "l40s"})
    meta = {"gsg.dev/managed-by": "gsg/0.0.0", "gsg.dev/spec": f"{name}.yaml"}
    if owner:
        meta["gsg.dev/project"] = owner
    model = fake._create({"name": name, "source": "huggingface", "huggingface_repo_id":
                          "meta-llama/Llama-3.1-8B-Instruct", "cluster_id": fake.clusters[0]["id"],
                          "backend": "vLLM", "backend_version": "0.8.5", "replicas": replicas,
                          "gpu_selector": {"gpu_ids": ["gpu-l:cuda:0", "gpu-l:cuda:1"][:replicas]},
                          "backend_parameters": ["--max-model-len=32768", "--max-num-seqs=8"], "meta": meta}).json()
    ids = [i["id"] for i in fake.instances.values() if i["model_id"] == model["id"]]
    for replica, iid in enumerate(ids):  # one GPU each, as GPUStack splits the listed gpu_ids between replicas
        fake.instances[iid]["gpu_indexes"] = [replica]
    return ids


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def tuned(gmu: str) -> str:
    return SPEC.replace("  - --max-num-seqs=8\n", f"  - --max-num-seqs=8\n  - --gpu-memory-utilization={gmu}\n")


def instance_line(out: str) -> str:
    return next(line.strip() for line in out.splitlines() if line.strip().startswith("instance "))


def test_an_instance_whose_log_matches_the_estimate_passes(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    result = gsg("verify", "specs/")
    assert result.code == 0, result.out
    assert instance_line(result.out) == (
        "instance llama-8b-00001 on gpu-l [gpu-l:cuda:0] vLLM, started: KV 158,656 tokens logged, 152,288 "
        "estimated (-4.0 %); headroom 30,656 logged, 24,288 estimated over 128,000 needed (workload p99 prompt + "
        "output = 16,000, 8 sequences)")
    assert "llama-8b (specs/llama-8b.yaml:1, vLLM)" in result.out
    assert result.err.strip() == ("gsg: verify: 1 of 1 instance(s) verified in 1 deployment(s), 0 not verified, "
                                  "0 not running, 0 finding(s): pass")
    # the start of the log only, never followed
    assert fake.log_queries == [{"offset": "0", "limit": "100000", "follow": "false"}]





def test_kv_off_the_estimate_is_gsg045_at_the_spec_and_the_tolerance_moves_it(gsg, fake, here):
    (iid,) = deploy(fake, here)  # default 0.9: gsg estimates 195,952 tokens (CUDA's L40S total) where the engine logged 158,656
    fake.instance_logs[iid] = L40S_LOG
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert ("specs/llama-8b.yaml:1:7: warning GSG045 observed-kv-off-estimate [llama-8b]: instance llama-8b-00001 "
            "on gpu-l: the engine logged a KV pool of 158,656 tokens, the estimate on its GPUs is 195,952 (+23.5 %, "
            "tolerance 5 %)") in result.out
    wide = gsg("verify", "specs/", "--tolerance", "30")
    assert wide.code == 0 and "GSG045" not in wide.out
    at_error = gsg("verify", "specs/", "--fail-level", "error")  # a warning only: passes at --fail-level error
    assert at_error.code == 0 and "GSG045" in at_error.out


def test_logged_kv_below_the_workload_is_gsg044_at_the_flag_with_the_number_that_fits(gsg, fake, here):
    spec = tuned("0.78").replace("--max-num-seqs=8", "--max-num-seqs=16")
    (iid,) = deploy(fake, here, spec)
    fake.instance_logs[iid] = L40S_LOG
    result = gsg("verify", "specs/", "-o", "json")
    assert result.code == 1
    (found,) = json.loads(result.out)["findings"]
    assert (found["rule_id"], found["severity"], found["file"], found["line"]) == (
        "GSG044", "warning", "specs/llama-8b.yaml", 10)  # the --max-num-seqs entry
    assert found["message"] == (
        "instance llama-8b-00001 on gpu-l: the engine logged a KV pool of 158,656 tokens, but --max-num-seqs 16 x "
        "16,000 tokens (workload p99 prompt + output = 16,000) needs 256,000 tokens (62 % of it): 9 such sequences "
        "fit at once; the rest queue or get preempted")
    assert found["fix"] == "set --max-num-seqs 9 or lower --max-model-len, or halve the KV cache with " \
                           "--kv-cache-dtype fp8"
    assert (found["data"]["needed_kv_tokens"], found["data"]["sequences_fitting"]) == (256_000, 9)
    (deployment,) = json.loads(result.out)["deployments"]
    assert deployment["instances"][0]["workload"] == {
        "needed_tokens": 256_000, "sequences": 16, "basis": "workload p99 prompt + output = 16,000",
        "headroom_observed_tokens": -97_344, "headroom_estimated_tokens": -103_712}


def test_gsg044_follows_the_spec_policy(gsg, fake, here):
    spec = tuned("0.78").replace("--max-num-seqs=8", "--max-num-seqs=16")
    (iid,) = deploy(fake, here, spec.replace("guard:\n", "guard:\n  policy: {kv_oversubscription: off}\n"))
    fake.instance_logs[iid] = L40S_LOG
    assert gsg("verify", "specs/").code == 0
    (here / "specs" / "llama-8b.yaml").write_text(spec.replace("guard:\n", "guard:\n  policy: {strict: true}\n"))
    strict = gsg("verify", "specs/", "-o", "json")
    assert [(f["rule_id"], f["severity"]) for f in json.loads(strict.out)["findings"]] == [("GSG044", "error")]


def test_sixteen_sequences_that_fit_the_logged_pool_are_no_finding(gsg, fake, here):
    """The near miss of GSG044: 9 x 16,000 = 144,000 tokens fit in the logged 158,656."""
    (iid,) = deploy(fake, here, tuned("0.78").replace("--max-num-seqs=8", "--max-num-seqs=9"))
    fake.instance_logs[iid] = L40S_LOG
    assert gsg("verify", "specs/").code == 0


REFUSALS = {
    401: "HTTP 401 Unauthorized: injected log refusal — the API key is missing, wrong or expired",
    403: "HTTP 403 Forbidden: injected log refusal — the API key needs the 'management' scope",
    404: "HTTP 404 NotFound: injected log refusal",
    500: "HTTP 500 InternalServerError: injected log refusal",
    503: "HTTP 503 ServiceUnavailable: injected log refusal",
}


@pytest.mark.parametrize("status", sorted(REFUSALS))
def test_a_refused_log_is_one_line_and_the_next_instance_is_still_verified(gsg, fake, here, slept, status):
    first, second = deploy(fake, here, tuned("0.78"), replicas=2)
    fake.instance_logs[first] = status
    fake.instance_logs[second] = L40S_LOG
    result = gsg("verify", "specs/")
    assert result.code == 1 and "Traceback" not in result.out + result.err
    problem = next(line.strip() for line in result.out.splitlines() if "llama-8b-00001" in line)
    assert problem.startswith("instance llama-8b-00001 on gpu-l: not verified: the server refused the log: "
                              f"GET /v2/model-instances/{first}/logs: {REFUSALS[status]}"), problem
    assert "instance llama-8b-00002 on gpu-l [gpu-l:cuda:1] vLLM, started: KV 158,656 tokens" in result.out
    assert len(slept) == (3 if status == 503 else 0)  # only a busy server is asked again
    assert fake.api_key not in result.out + result.err


def test_a_timeout_on_the_log_endpoint_is_one_line(gsg, fake, here, slept):
    from support.fake_gpustack import Fault

    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    calls = fake.model_calls
    # verify's calls: me, models, clusters, workers, instances (fleet), instances (with ids), then the log
    fake.faults = [Fault(calls + n, "timeout-before") for n in range(7, 11)]
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert (f"not verified: the server refused the log: GET /v2/model-instances/{iid}/logs: timed out after 15.0s "
            "waiting for the server") in result.out


@pytest.mark.parametrize("served, says", [
    (b"", "not verified: the log is empty (the engine has written nothing yet, or the worker keeps no log)"),
    (b"INFO start\x00\x01\x02binary", "not verified: not a text log (binary data at byte 10)"),
    (b"hello\nthis is not an engine\n", "not verified: no start-up line of vLLM, SGLang or llama.cpp in its 2 "
                                         "line(s): a log format gsg does not know, or the start-up part was rotated "
                                         "away"),
    ((LOGS / "llama.cpp" / "trilm-3.9b-rtx4080.log").read_bytes(),
     "not verified: the log is llama.cpp's, but the spec deploys vLLM: not compared"),
    (b"\x1b[999;1HUnable to read logs: ClientConnectorError\n",
     "not verified: the server could not read the log: Unable to read logs: ClientConnectorError"),
], ids=["empty", "binary", "unknown", "other-engine", "proxy-failure"])
def test_a_log_gsg_cannot_use_is_one_line(gsg, fake, here, served, says):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = served
    result = gsg("verify", "specs/")
    assert result.code == 1
    assert instance_line(result.out) == f"instance llama-8b-00001 on gpu-l: {says}"


def _endless(head: bytes, line: bytes):
    def stream():
        yield head
        while True:
            yield line * 64
    return stream


def test_an_endless_log_stops_once_the_start_up_part_is_in(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = _endless(L40S_LOG, b"INFO 04-24 16:40:00 [logger.py:39] Received request chatcmpl\n")
    result = gsg("verify", "specs/", "-o", "json")
    assert result.code == 0
    instance = json.loads(result.out)["deployments"][0]["instances"][0]
    assert instance["kv_capacity_tokens"]["observed"] == 158_656
    # the last figure (max concurrency) is line 8; 2,000 lines without another one end the reading
    assert instance["lines_read"] == 2_008 and instance["notes"] == []


def test_an_endless_log_without_start_up_lines_ends_at_the_byte_cap(gsg, fake, here, monkeypatch):
    monkeypatch.setenv("GSG_MAX_LOG_BYTES", str(256 * 1024))
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = _endless(b"", b"GET /health 200\n")
    result = gsg("verify", "specs/", "-o", "json")
    assert result.code == 1
    instance = json.loads(result.out)["deployments"][0]["instances"][0]
    assert instance["problem"].startswith("no start-up line of vLLM, SGLang or llama.cpp in its 16,384 line(s)")
    assert instance["notes"] == ["read the first 0.25 MiB of the log only (GSG_MAX_LOG_BYTES)"]


def test_a_huge_log_line_and_the_line_cap_are_notes(gsg, fake, here, monkeypatch):
    monkeypatch.setenv("GSG_MAX_LOG_LINE_BYTES", "1024")
    monkeypatch.setenv("GSG_MAX_LOG_LINES", "9")
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instance_logs[iid] = b"x" * 100_000 + b"\n" + L40S_LOG + b"more\n" * 50
    result = gsg("verify", "specs/", "-o", "json")
    instance = json.loads(result.out)["deployments"][0]["instances"][0]
    assert result.code == 0 and instance["kv_capacity_tokens"]["observed"] == 158_656
    assert instance["notes"] == ["read the first 9 lines only (GSG_MAX_LOG_LINES)",
                                 "1 line(s) longer than 1,024 bytes were cut (GSG_MAX_LOG_LINE_BYTES)"]


def test_instances_not_running_and_models_not_ours_are_not_read(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    fake.instances[iid]["state"] = "starting"
    other = SPEC.replace("name: llama-8b", "name: theirs")
    deploy(fake, here, other, owner="someone-else", name="theirs")
    (here / "specs" / "absent.yaml").write_text(SPEC.replace("name: llama-8b", "name: absent"))
    result = gsg("verify", "specs/")
    assert result.code == 0, result.out
    assert "instance llama-8b-00001 on gpu-l: starting, not running: not verified" in result.out
    assert "theirs (specs/theirs.yaml:1, vLLM): the live model is owned by gsg project 'someone-else', not this " \
           "project: not verified" in result.out
    assert "absent (specs/absent.yaml:1, vLLM): no live model of this name: not deployed" in result.out
    assert fake.log_queries == []


def test_secrets_a_log_prints_never_reach_the_output(gsg, fake, here):
    (iid,) = deploy(fake, here, tuned("0.78"))
    secret_line = (b"INFO 04-24 16:32:50 [api_server.py:1043] args: Namespace(model='meta-llama/Llama-3.1-8B-Instruct', "
                   b"api_key='sk-live-0123456789abcdef', hf_token='hf_abcdefghijklmnop1234')\n")
    fake.instance_logs[iid] = secret_line + L40S_LOG
    for output in ("text", "json", "markdown"):
        result = gsg("verify", "specs/", "-o", output)
        assert result.code == 0, result.out
        assert "sk-live-0123456789abcdef" not in result.out + result.err
        assert "hf_abcdefghijklmnop1234" not in result.out + result.err


@pytest.mark.parametrize("output, shows", [
    ("sarif", '"ruleId": "GSG045"'),
    ("junit", 'GSG045'),
    ("github", "::warning file=specs/llama-8b.yaml,line=1,col=7,title=GSG045 observed-kv-off-estimate::"),
    ("gitlab", '"check_name": "GSG045'),
    ("markdown", "| warning | GSG045 | `specs/llama-8b.yaml:1:7` |"),
])
def test_findings_reach_the_validate_reporters_and_problems_go_to_stderr(gsg, fake, here, output, shows):
    first, second = deploy(fake, here, replicas=2)
    fake.instance_logs[first] = L40S_LOG
    fake.instance_logs[second] = 403
    result = gsg("verify", "specs/", "-o", output)
    assert result.code == 1
    assert shows in result.out
    if output != "markdown":
        assert f"gsg: verify: llama-8b: instance llama-8b-00002 on gpu-l: the server refused the log: GET " \
               f"/v2/model-instances/{second}/logs: HTTP 403 Forbidden" in result.err


def test_specs_and_log_are_one_or_the_other(gsg, here):
    both = gsg("verify", "specs/", "--log", "x.log")
    assert (both.code, both.err.strip()) == (1, "gsg: error: give SPECS (verify the running instances live) or "
                                                 "--log FILE (one log), not both")
    neither = gsg("verify")
    assert (neither.code, neither.err.strip()) == (1, "gsg: error: nothing to verify: give SPECS (live, against "
                                                      "--server) or --log FILE")


def test_a_format_validate_does_not_know_is_refused(gsg, fake, here):
    deploy(fake, here)
    result = gsg("verify", "specs/", "-o", "html")
    assert result.code == 1 and result.err.startswith("gsg: error: --output must be one of auto, text, json")



FLASHINFER_LINE = b"INFO 04-24 16:33:01 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n"


def _logged_and_estimated(out: str) -> tuple[str, str]:
    line = instance_line(out)
    return line.split("KV ")[1].split(" tokens logged")[0], line.split(" logged, ")[1].split(" estimated")[0]


def test_the_sampler_path_the_log_printed_is_the_one_estimated_as_gsg_verify_log_reads_it(gsg, fake, here):
    # vLLM 0.8.5 sorts the logits unless FlashInfer's sampler is on; this instance's log says it was (the spec's
    # env does not): the estimate is of what ran, the same as the spec's env setting it would give
    spec = tuned("0.78").replace("--max-num-seqs=8", "--max-num-seqs=256")
    (iid,) = deploy(fake, here, spec)
    fake.instance_logs[iid] = L40S_LOG
    assumed = _logged_and_estimated(gsg("verify", "specs/").out)
    head, rest = L40S_LOG.split(b"\n", 2)[:2], L40S_LOG.split(b"\n", 2)[2]
    fake.instance_logs[iid] = b"\n".join(head) + b"\n" + FLASHINFER_LINE + rest
    printed = _logged_and_estimated(gsg("verify", "specs/").out)
    (here / "specs" / "llama-8b.yaml").write_text(spec + "env:\n  VLLM_USE_FLASHINFER_SAMPLER: \"1\"\n")
    fake.instance_logs[iid] = L40S_LOG
    declared = _logged_and_estimated(gsg("verify", "specs/").out)
    assert assumed[0] == printed[0] == declared[0] == "158,656"
    assert printed[1] == declared[1] != assumed[1]
    assert (assumed[1], printed[1]) == ("144,544", "150,544")  # 256 rows x 128,256 x (38 - 14) B fewer
