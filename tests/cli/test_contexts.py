"""Contexts (named servers, like kubeconfig), overlays per environment, and drift over every context."""

import json
import shutil
from pathlib import Path

import httpx
import pytest
import yaml
from support import FLEET, REPO
from support.fake_gpustack import FakeGPUStack

import gpustack_guard.wiring as wiring


@pytest.fixture
def two_servers(monkeypatch, tmp_path):
    """prod and staging: two in-memory GPUStacks told apart by host, each with its own key."""
    prod, staging = FakeGPUStack.field_notes(), FakeGPUStack.field_notes()
    staging.api_key = "gsg-staging-key-9876543210"
    by_host = {"prod.gpustack.test": prod, "staging.gpustack.test": staging}
    monkeypatch.setattr(wiring, "transport_factory",
                        lambda: httpx.MockTransport(lambda request: by_host[request.url.host].handle(request)))
    (tmp_path / "prod.key").write_text(prod.api_key + "\n")
    monkeypatch.setenv("STAGING_KEY", staging.api_key)
    config = tmp_path / "gsg" / "config.yaml"
    config.parent.mkdir()
    config.write_text(yaml.safe_dump({"current-context": "staging", "contexts": {
        "prod": {"server": "http://prod.gpustack.test", "api-key-file": "../prod.key", "overlay": "prod",
                 "fleet": str(FLEET)},
        "staging": {"server": "http://staging.gpustack.test", "api-key-env": "STAGING_KEY"}}}))
    monkeypatch.setenv("GSG_CONFIG", str(config))
    monkeypatch.setenv("HF_TOKEN", "hf_test_secret_token_value")  # the example specs reference it
    return prod, staging


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """The example specs plus a prod overlay: the 8B model's sequence cap, one more flag, a description."""
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    (specs / "overlays" / "prod").mkdir(parents=True)
    (specs / "overlays" / "prod" / "llama-8b.yaml").write_text(
        "name: llama-8b\ndescription: prod\nguard: {vars: {max_num_seqs: 24}}\n"
        "backend_parameters: [--max-num-batched-tokens=4096]\n")
    monkeypatch.chdir(tmp_path)
    return specs


def _requests(fake):
    return [p for m, p in fake.log if p.startswith("/v2/models")]


def test_plan_with_a_context_talks_to_that_server_only(gsg, two_servers, tree):
    prod, staging = two_servers
    result = gsg("plan", "specs", "--context", "prod", "-o", "json")
    assert result.code == 0, result.err
    assert _requests(prod) and not _requests(staging)
    created = {c["name"]: c for c in json.loads(result.out)["changes"]}
    assert set(created) == {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}
    assert gsg("apply", "specs", "--context", "prod", "--yes").code == 0
    args = next(m for m in prod.models.values() if m["name"] == "llama-8b")["backend_parameters"]
    assert "--max-num-seqs=24" in args and "--max-num-batched-tokens=4096" in args  # the prod overlay applied
    assert "--enable-prefix-caching" in args  # the base's flags stay


def test_current_context_when_no_server_is_given_and_gsg_url_loses_to_a_named_context(gsg, two_servers, tree,
                                                                                       monkeypatch):
    prod, staging = two_servers
    assert gsg("plan", "specs").code == 0
    assert _requests(staging) and not _requests(prod)
    staging.log.clear()
    monkeypatch.setenv("GSG_URL", "http://staging.gpustack.test")
    assert gsg("plan", "specs", "--context", "prod").code == 0
    assert _requests(prod) and not _requests(staging)


def test_an_explicit_server_flag_wins_over_the_context(gsg, two_servers, tree, monkeypatch):
    prod, staging = two_servers
    monkeypatch.setenv("GSG_API_KEY", prod.api_key)
    result = gsg("plan", "specs", "--context", "staging", "--server", "http://prod.gpustack.test",
                 "--api-key-file", str(tree.parent / "prod.key"))
    assert result.code == 0, result.err
    assert _requests(prod) and not _requests(staging)


def test_drift_over_all_contexts_reports_each_with_one_exit_code(gsg, two_servers, tree):
    prod, staging = two_servers
    for context in ("prod", "staging"):
        assert gsg("apply", "specs", "--context", context, "--yes").code == 0
    assert gsg("drift", "specs", "--all-contexts", "--detailed-exitcode").code == 0
    model = next(m for m in staging.models.values() if m["name"] == "llama-8b")
    model["backend_parameters"] = [*model["backend_parameters"], "--enforce-eager"]  # by hand, staging only
    result = gsg("drift", "specs", "--all-contexts", "--detailed-exitcode", "-o", "json")
    assert result.code == 2
    doc = json.loads(result.out)
    assert [(c["context"], c["drift"]) for c in doc["contexts"]] == [("prod", False), ("staging", True)]
    changed = doc["contexts"][1]["report"]["changed"]
    assert [(c["name"], [f["field"] for f in c["fields"]]) for c in changed] == [("llama-8b", ["backend_parameters"])]
    assert [(c["sync"], c["health"]) for c in doc["contexts"]] == [("Synced", "Healthy"), ("OutOfSync", "Healthy")]
    text = gsg("drift", "specs", "--all-contexts").out
    assert "== context prod (http://prod.gpustack.test) ==" in text and "== context staging" in text


def test_an_unreachable_context_is_reported_and_the_others_still_run(gsg, two_servers, tree, monkeypatch):
    monkeypatch.delenv("STAGING_KEY")
    result = gsg("drift", "specs", "--all-contexts", "-o", "json")
    assert result.code == 1
    assert "gsg: context staging: error: no API key: set STAGING_KEY" in result.err
    doc = json.loads(result.out)
    assert [c["context"] for c in doc["contexts"]] == ["prod", "staging"] and doc["contexts"][0]["error"] is None


def test_validate_uses_the_context_fleet_and_overlay_offline(gsg, two_servers, tree):
    prod, _ = two_servers
    (tree / "overlays" / "prod" / "llama-8b.yaml").write_text("name: llama-8b\nguard: {vars: {max_num_seqs: 900}}\n")
    result = gsg("validate", "specs", "--context", "prod", "-o", "json")
    assert result.code == 0 and not prod.log  # the context's fleet file: no server needed
    warned = [f["spec"] for f in json.loads(result.out)["findings"] if f["rule_id"] == "GSG033"]
    assert warned == ["llama-70b", "llama-8b"]  # the overlay's 900 sequences oversubscribe the 8B model's pool


def test_render_with_an_overlay_merges_flags_by_name(gsg, tree):
    docs = json.loads(gsg("render", "specs", "--overlay", "prod", "-o", "json").out)
    llama = next(d for d in docs if d["name"] == "llama-8b")
    assert llama["description"] == "prod"
    assert "--enable-prefix-caching" in llama["backend_parameters"]
    assert llama["backend_parameters"][-1] == "--max-num-batched-tokens=4096"
    plain = next(d for d in json.loads(gsg("render", "specs", "-o", "json").out) if d["name"] == "llama-8b")
    assert "description" not in plain and "--max-num-batched-tokens=4096" not in plain["backend_parameters"]


def test_overlay_findings_point_at_the_overlay_line(gsg, tree):
    (tree / "overlays" / "prod" / "llama-8b.yaml").write_text(
        "name: llama-8b\nbackend_parameters: [--max-num-seqs=0]\nreplicas: two\n")
    result = gsg("validate", "specs", "--overlay", "prod", "--fleet", str(FLEET), "-o", "json")
    findings = [(f["rule_id"], f["file"], f["line"]) for f in json.loads(result.out)["findings"] if f["rule_id"] == "GSG002"]
    assert findings == [("GSG002", "specs/overlays/prod/llama-8b.yaml", 3)]


@pytest.mark.parametrize("text, message", [
    ("replicas: 2\n", "an overlay document needs the `name:` of the spec it patches"),
    ("name: nobody\nreplicas: 2\n", "overlay 'prod' patches 'nobody', which no spec declares"),
])
def test_bad_overlays_are_one_line_errors(gsg, tree, text, message):
    (tree / "overlays" / "prod" / "llama-8b.yaml").write_text(text)
    result = gsg("validate", "specs", "--overlay", "prod", "--fleet", str(FLEET))
    assert result.code == 1 and result.err.startswith(f"gsg: error: specs/overlays/prod/llama-8b.yaml:1: {message}")
    assert gsg("validate", "specs", "--overlay", "qa", "--fleet", str(FLEET)).err.startswith(
        "gsg: error: specs/overlays/qa: overlay 'qa' not found")


def test_overlays_are_never_read_as_specs(gsg, tree):
    result = gsg("validate", "specs", "--fleet", str(FLEET), "-o", "json")
    assert json.loads(result.out)["summary"]["specs"] == 4


@pytest.mark.parametrize("body, message", [
    ("contexts: {a: {server: http://x, api-key: secret}}", "context 'a': unknown field 'api-key'"),
    ("contexts: {a: {api-key-env: K}}", "context 'a' needs a `server:` URL"),
    ("contexts: {a: {server: http://x, insecure: maybe}}", "context 'a': `insecure` must be true or false"),
    ("contexts: [a]", "a contexts file is a mapping with `contexts:`"),
    ("contexts: {a: {server: [}", "config.yaml:1:25: "),
])
def test_bad_contexts_files_are_one_line_errors(gsg, tmp_path, monkeypatch, body, message):
    config = tmp_path / "config.yaml"
    config.write_text(body + "\n")
    monkeypatch.setenv("GSG_CONFIG", str(config))
    result = gsg("plan", str(REPO / "specs"), "--context", "a")
    assert result.code == 1 and message in result.err and len(result.err.splitlines()) == 1
    assert "secret" not in result.err


def test_unknown_context_names_the_known_ones(gsg, two_servers):
    result = gsg("plan", str(REPO / "specs"), "--context", "qa")
    assert result.code == 1 and "no context 'qa' (known: prod, staging)" in result.err


def test_validate_with_a_context_and_a_fleet_reads_the_context_and_says_which_fleet(gsg, two_servers, tree,
                                                                                     tmp_path):
    """--context beside --fleet is never ignored: an unknown one is an error, the context's overlay applies, and
    the run names the fleet it used when the context names another."""
    prod, _ = two_servers
    (tree / "overlays" / "prod" / "llama-8b.yaml").write_text("name: llama-8b\nguard: {vars: {max_num_seqs: 900}}\n")
    other = tmp_path / "other-fleet.yaml"
    shutil.copy(FLEET, other)
    result = gsg("validate", "specs", "--context", "prod", "--fleet", str(other), "-o", "json")
    assert result.code == 0 and not prod.log
    assert f"gsg: validating against --fleet {other}, not context 'prod''s fleet {FLEET}" in result.err
    warned = [f["spec"] for f in json.loads(result.out)["findings"] if f["rule_id"] == "GSG033"]
    assert warned == ["llama-70b", "llama-8b"]  # the context's overlay applied
    unknown = gsg("validate", "specs", "--context", "qa", "--fleet", str(other))
    assert unknown.code == 1 and "no context 'qa' (known: prod, staging)" in unknown.err


# --- a saved plan is bound to where it was made (Terraform refuses a stale plan; gsg a stray one too) ----------

def _saved(gsg, tmp_path, *where) -> str:
    path = str(tmp_path / "prod.plan.json")
    assert gsg("plan", "specs", *where, "--out", path).code == 0
    return path


def test_a_plan_made_for_one_context_is_refused_on_another(gsg, two_servers, tree, tmp_path):
    prod, staging = two_servers
    plan = _saved(gsg, tmp_path, "--context", "prod")
    doc = json.loads(Path(plan).read_text())
    assert doc["target"] == {"server": "http://prod.gpustack.test", "context": "prod", "overlay": "prod"}
    staging.log.clear()
    result = gsg("apply", plan, "--context", "staging", "--yes")
    assert result.code == 1
    assert result.err == (f"gsg: error: {plan}: the saved plan was made against http://prod.gpustack.test "
                          "(context prod, overlay prod), not http://staging.gpustack.test (context staging, overlay prod): "
                          "plan again against this server\n")
    assert not [m for m, p in staging.log if m in ("POST", "PUT", "DELETE")]
    assert gsg("apply", plan, "--context", "prod", "--yes").code == 0
    assert {m["name"] for m in prod.models.values()} == {"llama-70b", "llama-8b", "llama-70b-q4", "qwen-32b"}


def test_the_same_server_written_differently_is_the_same_server(gsg, two_servers, tree, tmp_path, monkeypatch):
    monkeypatch.setenv("GSG_API_KEY", two_servers[1].api_key)
    plan = _saved(gsg, tmp_path, "--server", "http://staging.gpustack.test")
    assert gsg("apply", plan, "--server", "HTTP://Staging.GPUStack.test:80/", "--yes").code == 0


def test_a_plan_made_with_an_overlay_is_refused_under_another(gsg, two_servers, tree, tmp_path):
    (tree / "overlays" / "qa").mkdir()
    (tree / "overlays" / "qa" / "llama-8b.yaml").write_text("name: llama-8b\ndescription: qa\n")
    plan = _saved(gsg, tmp_path, "--context", "prod")
    result = gsg("apply", plan, "--context", "prod", "--overlay", "qa", "--yes")
    assert result.code == 1 and "the saved plan was made with http://prod.gpustack.test (context prod, " \
        "overlay prod), not http://prod.gpustack.test (context prod, overlay qa): plan again" in result.err


def test_an_older_plan_file_without_a_target_is_still_bound_to_its_server(gsg, two_servers, tree, tmp_path):
    plan = _saved(gsg, tmp_path, "--context", "prod")
    doc = json.loads(Path(plan).read_text())
    del doc["target"]
    Path(plan).write_text(json.dumps(doc))
    result = gsg("apply", plan, "--context", "staging", "--yes")
    assert result.code == 1 and "the saved plan was made against http://prod.gpustack.test, not" in result.err


def test_the_apply_prompt_names_the_server_and_context(gsg, two_servers, tree, monkeypatch):
    asked = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "no")
    result = gsg("apply", "specs", "--context", "prod")
    assert result.code == 1 and "apply cancelled" in result.err
    assert asked == ["Plan: 4 to create, 0 to update, 0 to replace, 0 to delete.\nDo you want to perform these "
                     "actions on http://prod.gpustack.test (context prod, overlay prod)? Only 'yes' will be "
                     "accepted: "]
