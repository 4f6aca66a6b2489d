"""Live fleet, snapshot, server check and export against the in-memory GPUStack."""

import json

import yaml
from support import REPO

from gpustack_guard.adapters.files.fleet_file import load_fleet


def test_snapshot_then_offline_validate_equals_live_validate(gsg, fake, tmp_path):
    fake.create_unmanaged("bge-m3", gpu_selector={"gpu_ids": ["gpu-b:cuda:3"]})
    snap = tmp_path / "fleet.yaml"
    result = gsg("snapshot", "--out", str(snap))
    assert result.code == 0 and "1 cluster(s), 4 worker(s), 12 GPU(s)" in result.err
    fleet = load_fleet(str(snap))
    gpu_b3 = next(g for w in fleet.clusters[0].workers if w.name == "gpu-b" for g in w.gpus if g.index == 3)
    assert gpu_b3.memory.allocated == int(49140 * 1024**2 * 0.2)
    live = gsg("validate", "specs/", "-o", "json", cwd=REPO)
    offline = gsg("validate", "specs/", "--fleet", str(snap), "-o", "json", cwd=REPO)
    assert live.code == offline.code == 0
    assert json.loads(live.out)["findings"] == json.loads(offline.out)["findings"]


def test_live_fleet_counts_foreign_used_memory(gsg, fake, tmp_path):
    snap = tmp_path / "fleet.yaml"
    gsg("snapshot", "--out", str(snap))
    gpu_d1 = next(g for w in load_fleet(str(snap)).clusters[0].workers if w.name == "gpu-d"
                  for g in w.gpus if g.index == 1)
    assert gpu_d1.memory.used == 1536 * 1024**2


def test_list_calls_are_constant(gsg, fake, tmp_path):
    for i in range(30):
        fake.create_unmanaged(f"m{i}")
    fake.log.clear()
    gsg("snapshot", "--out", str(tmp_path / "f.yaml"))
    lists = [p for m, p in fake.log if m == "GET" and p.startswith("/v2/")]
    assert sorted(lists) == ["/v2/clusters", "/v2/model-instances", "/v2/models", "/v2/users/me", "/v2/workers"]


def test_bad_key_is_one_line_without_the_key(gsg, fake, monkeypatch):
    monkeypatch.setenv("GSG_API_KEY", "wrong-key-123456")
    result = gsg("validate", "specs/", cwd=REPO)
    assert result.code == 1 and result.out == ""
    assert result.err.strip() == ("gsg: error: GET /v2/users/me: HTTP 401 Unauthorized: Invalid authentication "
                                  "credentials — the API key is missing, wrong or expired (GSG_API_KEY / "
                                  "--api-key-file)")
    assert "wrong-key-123456" not in result.err


def test_old_server_is_refused(gsg, fake):
    fake.version = "v0.7.1"
    result = gsg("snapshot", "--out", "x.yaml")
    assert result.code == 1 and "GPUStack v0.7.1 is not supported" in result.err


def test_unreachable_server(gsg, monkeypatch, slept):
    import httpx

    import gpustack_guard.wiring as connect

    def refuse(request):
        raise httpx.ConnectError("Connection refused", request=request)

    monkeypatch.setattr(connect, "transport_factory", lambda: httpx.MockTransport(refuse))
    monkeypatch.setenv("GSG_API_KEY", "k" * 20)
    result = gsg("snapshot", "--out", "x.yaml", "--server", "http://127.0.0.1:9")
    assert result.code == 1 and result.err.startswith("gsg: error: GET /version: cannot connect to")
    # three retries, 0.5 s x 2^n each plus up to half again of jitter
    assert len(slept) == 3 and all(d <= s <= 1.5 * d for s, d in zip(slept, (0.5, 1.0, 2.0)))


def test_api_key_file_and_its_errors(gsg, fake, monkeypatch, tmp_path):
    monkeypatch.delenv("GSG_API_KEY")
    key_file = tmp_path / "key"
    key_file.write_text(fake.api_key + "\n")
    assert gsg("snapshot", "--out", str(tmp_path / "f.yaml"), "--api-key-file", str(key_file)).code == 0
    missing = gsg("snapshot", "--out", "f.yaml", "--api-key-file", str(tmp_path / "nope"))
    assert missing.code == 1 and "nope" in missing.err
    no_key = gsg("snapshot", "--out", "f.yaml")
    assert no_key.code == 1 and "no API key" in no_key.err


def test_server_check_shows_gpustacks_verdict(gsg, fake):
    result = gsg("validate", "specs/", "--server-check", "-o", "json", cwd=REPO)
    assert result.code == 0
    server = [f for f in json.loads(result.out)["findings"] if f["rule_id"] in ("GSG050", "GSG051", "GSG052")]
    assert len(server) == 4 and all("GPUStack agrees: compatible" in f["message"] for f in server)


def test_server_check_disagreement(gsg, fake, tmp_path):
    case = REPO / "examples" / "negative" / "GSG032-kv-below-max-model-len"
    result = gsg("validate", str(case / "spec.yaml"), "--server-check", "-o", "json")
    found = json.loads(result.out)["findings"]
    disagree = [f for f in found if f["rule_id"] == "GSG050"]
    assert result.code == 1 and len(disagree) == 1
    assert "GPUStack says compatible" in disagree[0]["message"] and "GSG032" in disagree[0]["message"]


def test_export_writes_specs_with_secret_references(gsg, fake, tmp_path):
    fake.create_unmanaged("chat", env={"HF_TOKEN": "hf_live_secret_value", "LOG": "info"},
                          gpu_selector={"gpu_ids": ["gpu-b:cuda:0"]})
    result = gsg("export", "--out", str(tmp_path / "adopted"))
    assert result.code == 0
    doc = yaml.safe_load((tmp_path / "adopted" / "chat.yaml").read_text())
    assert doc["env"] == {"HF_TOKEN": "${HF_TOKEN}", "LOG": "info"}
    assert doc["guard"] == {"adopt": True} and doc["cluster_name"] == "prod"
    assert "gpus_per_replica" not in doc["gpu_selector"] and "distributable" not in doc
    assert "hf_live_secret_value" not in (tmp_path / "adopted" / "chat.yaml").read_text() + result.err
    again = gsg("export", "--out", str(tmp_path / "adopted"))
    assert again.code == 0  # identical content: nothing to overwrite


def test_export_on_pre_2_3_servers_uses_the_model_list(gsg, fake, tmp_path):
    fake.version = "v2.2.3"
    fake.create_unmanaged("old-style")
    assert gsg("export", "--out", str(tmp_path / "x")).code == 0
    assert not any(p == "/v2/models/export" for _, p in fake.log)
    assert yaml.safe_load((tmp_path / "x" / "old-style.yaml").read_text())["name"] == "old-style"


def test_export_writes_the_language_server_modeline(gsg, fake, tmp_path):
    fake.create_unmanaged("chat")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "schema").mkdir()
    (tmp_path / "repo" / "schema" / "spec.schema.json").write_text("{}")
    assert gsg("export", "--out", str(tmp_path / "repo" / "specs" / "adopted")).code == 0
    first = (tmp_path / "repo" / "specs" / "adopted" / "chat.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../schema/spec.schema.json"
    assert gsg("export", "--out", str(tmp_path / "elsewhere")).code == 0  # no repository schema above it
    first = (tmp_path / "elsewhere" / "chat.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=https://gpustack-guard.dev/schema/spec-v1.json"
