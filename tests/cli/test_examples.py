"""Every example folder: positive ones validate clean, each negative one fails with its rule at its line."""

import json
import re

import pytest
from support import FLEET, REPO

NEGATIVE = sorted(p for p in (REPO / "examples" / "negative").iterdir() if p.is_dir())
POSITIVE = sorted(p for p in (REPO / "examples" / "positive").iterdir() if p.is_dir())


def test_bundled_specs_validate_clean(gsg):
    result = gsg("validate", "specs/", "--fleet", "examples/fleet.yaml", cwd=REPO)
    assert result.code == 0, result.out
    assert "error" not in result.out
    assert result.err.startswith("gsg: 0 errors")


@pytest.mark.parametrize("case", POSITIVE, ids=lambda p: p.name)
def test_positive_case(gsg, case):
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--fail-level", "warning", cwd=case)
    assert result.code == 0, result.out
    assert result.out == ""


def _expected(case):
    expected = json.loads((case / "expected.json").read_text())
    return expected, expected.get("file", "spec.yaml"), expected.get("fail_level", "error")


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_text(gsg, case):
    expected, file, level = _expected(case)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--fail-level", level, cwd=case)
    assert result.code == 1
    pattern = rf"^{re.escape(file)}:{expected['line']}:\d+: \w+ {expected['rule']} "
    assert re.search(pattern, result.out, re.M), result.out
    assert "Traceback" not in result.out + result.err


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_json(gsg, case):
    expected, file, level = _expected(case)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--fail-level", level, "-o", "json", cwd=case)
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["format_version"] == "1.1"
    hits = [f for f in doc["findings"] if f["rule_id"] == expected["rule"]]
    assert any(f["file"] == file and f["line"] == expected["line"] for f in hits), hits


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_case_github(gsg, case):
    expected, file, level = _expected(case)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--fail-level", level, "-o", "github", cwd=case)
    assert result.code == 1
    in_repository = case.relative_to(REPO).as_posix() + "/" + file  # GitHub resolves file= from the repository root
    pattern = (rf"^::(error|warning|notice) file={re.escape(in_repository)},line={expected['line']},col=\d+,"
               rf"title={expected['rule']} [a-z0-9-]+::")
    assert re.search(pattern, result.out, re.M), result.out


def test_every_rule_in_the_registry_has_a_negative_example_or_is_informational():
    from gpustack_guard.core.findings import Severity
    from gpustack_guard.core.rules.registry import RULES

    covered = {json.loads((c / "expected.json").read_text())["rule"] for c in NEGATIVE}
    # need a live server: tested with the API client (GSG050, GSG051) and the live verify (GSG044, GSG045)
    server_side = {"GSG050", "GSG051", "GSG044", "GSG045"}
    missing = {r.id for r in RULES.values() if r.severity != Severity.INFO} - covered - server_side
    assert missing == set()


@pytest.mark.parametrize("case", NEGATIVE, ids=lambda p: p.name)
def test_negative_folder_is_named_after_its_rule(case):
    from gpustack_guard.core.rules.registry import RULES

    rule = RULES[json.loads((case / "expected.json").read_text())["rule"]]
    assert case.name == f"{rule.id}-{rule.name}" or case.name.startswith(f"{rule.id}-{rule.name}-")


def test_the_readme_shows_what_the_quickstart_prints(gsg, monkeypatch):
    """README "What it checks" quotes `gsg validate specs/ --fleet examples/fleet.yaml` and the GSG032 example
    word for word: a change to the arithmetic that moves a number must move the README too."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    monkeypatch.chdir(REPO)
    quickstart = gsg("validate", "specs/", "--fleet", "examples/fleet.yaml")
    assert f"```\n{quickstart.out}{quickstart.err}```" in readme
    monkeypatch.chdir(REPO / "examples" / "negative" / "GSG032-kv-below-max-model-len")
    default_len = gsg("validate", "spec.yaml", "--fleet", "../../fleet.yaml")
    first_finding = "\n".join(default_len.out.splitlines()[:2])  # the README quotes the GSG032 line and its fix
    assert "GSG032" in first_finding.splitlines()[0] and f"```\n{first_finding}\n```" in readme
