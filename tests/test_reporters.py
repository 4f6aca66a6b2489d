"""Each output format checked against its format's rules on the negative examples."""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import FLEET, REPO
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
    assert result.out.startswith("::error file=spec.yaml,line=4,col=1,title=GSG003 unknown-field::")


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
