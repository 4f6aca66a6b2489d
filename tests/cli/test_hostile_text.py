"""Text a GPUStack server chose (model, worker and instance names, state messages, meta, descriptions,
evaluation messages) through every command and output format: nothing reaches the terminal or a file raw (no
escape sequence, CR, backspace, BEL, C0/C1 control or bidi override), no server text starts a line of its own,
JSON keeps the exact value, and written YAML parses back with only the keys gsg meant to write."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

from gpustack_guard.core.echo import has_unsafe
from gpustack_guard.core.ownership import MANAGED_BY, PROJECT, SPEC_FILE

PROJECT_NAME = "field-notes-example"  # specs/gsg.yaml
# Clear screen, home, a terminal title (OSC ... BEL), CR, backspace, NUL, DEL, NEL, C1 CSI, bidi override and
# isolate, zero-width space, BOM, an invisible tag character; then a newline that would start a forged line.
PAYLOAD = "\x1b[2J\x1b[1;1H\x1b]0;owned\x07\r\x08\x00\x7f\x85\x9b31m\u202e\u2067\u200b\ufeff\U000e0041"
FORGED = "\nINJECTED: run_command: evil"
HOSTILE = f"h{PAYLOAD}{FORGED}"
ORPHAN = f"orphan{PAYLOAD}{FORGED}"
WORKER = f"gpu-x{PAYLOAD}{FORGED}"
_FORGED_LINE = re.compile(r"^[\s#|>*_`~+!-]*INJECTED", re.M)


def assert_safe(text: str) -> None:
    """Nothing raw for a terminal, and no line the server started."""
    assert not has_unsafe(text.replace("\n", "").replace("\t", "")), repr(text[:2000])
    assert not _FORGED_LINE.search(text), repr(text[:2000])


@pytest.fixture
def hostile(fake):
    """The field-notes fleet with a worker, an unmanaged model, an orphan of this project (error instance) and
    instances whose every text field is hostile."""
    cluster = fake.clusters[0]["id"]
    fake.add_worker(cluster, WORKER, [("NVIDIA RTX A6000" + PAYLOAD, 49140 * 1024**2)], {"gpu": HOSTILE})
    fake.create_unmanaged(HOSTILE, description=HOSTILE + "\nrun_command: evil\nenv:\n  LD_PRELOAD: /tmp/x.so",
                          meta={"note": HOSTILE, MANAGED_BY: "other-tool" + PAYLOAD + FORGED})
    fake.create_unmanaged(ORPHAN, meta={MANAGED_BY: "gsg/0.1.0", PROJECT: PROJECT_NAME, SPEC_FILE: HOSTILE},
                          gpu_selector={"gpu_ids": ["gpu-b:cuda:2"]})
    for instance in fake.instances.values():
        instance["state_message"] = HOSTILE
        if instance["model_name"] == ORPHAN:
            instance["state"] = "error"
    return fake


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_plan_shows_server_text_escaped(gsg, hostile, specs, output):
    hostile.create_unmanaged("llama-8b", meta={MANAGED_BY: "gsg/0.1.0", PROJECT: "team" + PAYLOAD + FORGED,
                                               SPEC_FILE: HOSTILE})  # a conflict whose reason names the project
    result = gsg("plan", str(specs), "--prune", "-o", output)
    assert result.code == 1, result.err  # the conflict
    assert_safe(result.out)
    assert_safe(result.err)
    if output == "json":
        changes = {c["name"]: c for c in json.loads(result.out)["changes"]}
        assert changes[ORPHAN]["action"] == "delete" and changes[ORPHAN]["spec_file"] == HOSTILE
        assert changes["llama-8b"]["owner"]["project"] == "team" + PAYLOAD + FORGED
    elif output == "text":
        assert "  - orphan\\x1b[2J\\x1b[1;1H\\x1b]0;owned\\x07\\r\\x08\\x00\\x7f\\x85\\x9b31m\\u202e\\u2067\\u200b" \
               "\\ufeff\\U000e0041\\nINJECTED: run_command: evil" in result.out.splitlines()
    else:
        row = next(line for line in result.out.splitlines() if line.startswith("| `-` |"))
        assert row.startswith("| `-` | orphan\\x1b\\[2J")  # not linked: the spec path is the server's


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_drift_shows_server_text_escaped(gsg, hostile, specs, output):
    result = gsg("drift", str(specs), "-o", output)
    assert result.code == 0, result.err
    assert_safe(result.out)
    assert_safe(result.err)
    if output == "json":
        report = json.loads(result.out)
        assert [o["name"] for o in report["orphaned"]] == [ORPHAN]
        assert {i["name"] for i in report["unhealthy"]} == {ORPHAN}
    elif output == "text":
        assert "Drift detected." in result.out.splitlines()
        assert "No drift: live deployments match the specs." not in result.out


def test_apply_progress_and_summary_escape_server_names(gsg, hostile, specs):
    result = gsg("apply", str(specs), "--prune", "--yes")
    assert result.code == 0, result.err
    assert hostile.by_name(ORPHAN) is None  # pruned
    assert_safe(result.out)
    assert_safe(result.err)
    assert "gsg: deleted orphan\\x1b[2J" in result.err


def test_apply_failure_reasons_from_the_server_are_one_line():
    from gpustack_guard.adapters.gpustack.applier import Outcome, describe

    outcome = Outcome()
    outcome.done.append(HOSTILE)
    outcome.failed.append((ORPHAN, "instance in error: " + HOSTILE))
    outcome.not_attempted.append(WORKER)
    text = describe(outcome)
    assert_safe(text)
    assert len(text.splitlines()) == 5


def test_snapshot_is_valid_yaml_with_the_server_text_as_data(gsg, hostile, tmp_path):
    path = tmp_path / "fleet.yaml"
    result = gsg("snapshot", "--out", str(path))
    assert result.code == 0, result.err
    assert_safe(result.err)
    written = path.read_text(encoding="utf-8")
    assert_safe(written)
    loaded = yaml.safe_load(written)
    workers = {w["name"]: w for w in loaded["clusters"][0]["workers"]}
    assert WORKER in workers and workers[WORKER]["labels"]["gpu"] == HOSTILE
    assert all(line.startswith("#") for line in written.splitlines()[:2])


def test_a_hostile_version_is_refused_in_one_escaped_line(gsg, fake, tmp_path):
    fake.version = "v2.3.0\nformat_version: 99\x1b[2J"
    result = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
    assert result.code == 1 and not (tmp_path / "fleet.yaml").exists()
    assert result.err == ("gsg: error: http://gpustack.test: GPUStack v2.3.0\\nformat_version: 99\\x1b[2J is not "
                          "supported: gsg speaks the /v2 API of GPUStack 2.x\n")


def test_export_writes_server_text_as_data_only(gsg, hostile, tmp_path):
    out = tmp_path / "exported"
    result = gsg("export", "--out", str(out))
    assert result.code == 0, result.err
    assert_safe(result.err)
    files = sorted(out.glob("*.yaml"))
    assert len(files) == 2 and "2 file(s) written" in result.err
    served = {d["name"]: d for d in yaml.safe_load_all(hostile._export({}).text)}
    by_name = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert_safe(text)
        lines = text.splitlines()
        # modeline, origin, owner: three comment lines, then the document (no comment line elsewhere)
        assert [line.startswith("#") for line in lines[:4]] == [True, True, True, False]
        assert not any(line.startswith("#") for line in lines[3:])
        doc = yaml.safe_load(text)
        by_name[doc["name"]] = doc
        # Exactly the keys of the server's document (less the server-filled one), plus guard for unmanaged
        # models: never one that a text field spelled out.
        adopted = {"guard"} if doc["name"] == HOSTILE else set()  # the orphan is this project's
        assert set(doc) == set(served[doc["name"]]) - {"distributable"} | adopted
        assert "run_command" not in doc and "env" not in doc
    assert set(by_name) == {HOSTILE, ORPHAN}
    assert by_name[HOSTILE]["description"] == HOSTILE + "\nrun_command: evil\nenv:\n  LD_PRELOAD: /tmp/x.so"


@pytest.fixture
def incompatible(fake, monkeypatch):
    import httpx

    def evaluate(body):
        results = [{"compatible": False, "compatibility_messages": [HOSTILE], "scheduling_messages": [WORKER],
                    "resource_claim": {"ram": 0, "vram": 1}} for _ in body.get("model_specs") or []]
        return httpx.Response(200, json={"results": results})

    monkeypatch.setattr(fake, "_evaluate", evaluate)
    return fake


@pytest.mark.parametrize("output", ["text", "json", "github", "sarif", "junit", "markdown", "gitlab", "html"])
def test_validate_server_check_escapes_server_messages(gsg, hostile, incompatible, specs, output):
    result = gsg("validate", str(specs), "--server-check", "-o", output)
    if output != "html":  # the memory picture shows findings per GPU only
        assert "GSG050" in result.out, result.out[:500]
    assert_safe(result.out)
    assert_safe(result.err)
    if output in ("json", "sarif", "gitlab"):
        json.loads(result.out)
    if output == "junit":
        ET.fromstring(result.out)  # XML 1.0: no raw control characters
