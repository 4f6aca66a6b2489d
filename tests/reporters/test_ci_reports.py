"""Reports a CI system tracks: the same paths and fingerprints from any working directory, fingerprints that
survive a finding's figures and line moving, pull-request markdown within GitHub's comment size, and every
output format written to a stream that cannot encode what it holds."""

import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from support import FLEET, REPO

from gpustack_guard.cli import main
from gpustack_guard.core.findings import Location, finding
from gpustack_guard.core.pipeline import Report
from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.reporters import FORMATS
from gpustack_guard.reporters.ci_paths import fingerprints, stable_text
from gpustack_guard.reporters.drift_output import render_markdown as drift_markdown
from gpustack_guard.reporters.markdown import COMMENT_LIMIT, GITHUB_COMMENT_CHARS
from gpustack_guard.reporters.markdown import render as validate_markdown

OVERSUBSCRIBED = REPO / "examples" / "negative" / "GSG033-kv-oversubscribed" / "spec.yaml"
HOMOGLYPH = REPO / "examples" / "negative" / "GSG004-enum-spelling-backend-homoglyph" / "spec.yaml"
CI_FORMATS = ("sarif", "junit", "gitlab", "github")


@pytest.fixture
def repository(tmp_path):
    """A repository (a .git folder) with specs two levels down and a copy of the fleet beside them."""
    (tmp_path / ".git").mkdir()
    specs = tmp_path / "deploy" / "specs"
    specs.mkdir(parents=True)
    shutil.copy(OVERSUBSCRIBED, specs / "many.yaml")
    shutil.copy(HOMOGLYPH, specs / "glyph.yaml")
    shutil.copy(FLEET, tmp_path / "fleet.yaml")
    return tmp_path


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_the_same_report_from_the_repository_root_and_from_a_subfolder(gsg, repository, fmt):
    from_root = gsg("validate", "deploy/specs", "--fleet", "fleet.yaml", "-o", fmt, cwd=repository)
    from_specs = gsg("validate", ".", "--fleet", "../../fleet.yaml", "-o", fmt, cwd=repository / "deploy" / "specs")
    from_deploy = gsg("validate", "specs/glyph.yaml", "specs/many.yaml", "--fleet", str(repository / "fleet.yaml"),
                      "-o", fmt, cwd=repository / "deploy")
    assert from_root.code == from_specs.code == from_deploy.code == 1
    assert from_root.out == from_specs.out == from_deploy.out
    assert "deploy/specs/many.yaml" in from_root.out


def test_sarif_paths_are_relative_to_srcroot(gsg, repository):
    doc = json.loads(gsg("validate", ".", "--fleet", "../../fleet.yaml", "-o", "sarif",
                         cwd=repository / "deploy" / "specs").out)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"] == {"SRCROOT": {"uri": repository.as_uri() + "/"}}
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]] == [
        {"uri": "deploy/specs/glyph.yaml", "uriBaseId": "SRCROOT"},
        {"uri": "deploy/specs/many.yaml", "uriBaseId": "SRCROOT"}]


def test_without_git_the_project_file_folder_is_the_root(gsg, repository):
    shutil.rmtree(repository / ".git")
    (repository / "deploy" / "gsg.yaml").write_text("project: team-a\n")
    out = gsg("validate", ".", "--fleet", "../../fleet.yaml", "-o", "gitlab", cwd=repository / "deploy" / "specs").out
    assert sorted(i["location"]["path"] for i in json.loads(out)) == ["specs/glyph.yaml", "specs/many.yaml"]


def _sarif_results(gsg, folder):
    return json.loads(gsg("validate", ".", "--fleet", str(FLEET), "-o", "sarif", cwd=folder).out)["runs"][0]["results"]


def test_a_finding_keeps_its_fingerprint_when_its_figures_and_line_move(gsg, repository):
    specs = repository / "deploy" / "specs"
    (specs / "glyph.yaml").unlink()
    before = _sarif_results(gsg, specs)
    text = (specs / "many.yaml").read_text()
    moved = "# a comment that moves every line down\n" + text.replace("--max-num-seqs=64", "--max-num-seqs=48") \
        .replace("prompt_tokens_p99: 16000", "prompt_tokens_p99: 15000")
    (specs / "many.yaml").write_text(moved)
    after = _sarif_results(gsg, specs)
    assert [r["ruleId"] for r in before] == [r["ruleId"] for r in after] == ["GSG033"]
    assert before[0]["message"]["text"] != after[0]["message"]["text"]  # its figures did move
    assert before[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    assert after[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 11
    assert before[0]["partialFingerprints"] == after[0]["partialFingerprints"]
    # a different deployment is a different finding
    (specs / "many.yaml").write_text(moved.replace("name: many-seqs", "name: other-seqs"))
    assert _sarif_results(gsg, specs)[0]["partialFingerprints"] != before[0]["partialFingerprints"]


def test_stable_text_masks_figures_with_their_units_only():
    assert stable_text("--max-num-seqs 64 x 20,000 tokens (24.90 GiB per GPU, 512 MB, 7 bytes): 10 fit") == \
        "--max-num-seqs # x # tokens (# per GPU, #, #)"
    assert stable_text("cluster 'a' is not in the fleet (known: b)") == "cluster 'a' is not in the fleet (known"


def test_fingerprints_differ_by_rule_file_and_spec_but_not_by_figures():
    def at(rule_id, file, message, spec="x"):
        return finding(RULES[rule_id], Location(file, 3, 1), message, spec=spec)

    prints = fingerprints([at("GSG033", "a.yaml", "holds 10 GiB"), at("GSG033", "b.yaml", "holds 10 GiB"),
                           at("GSG034", "a.yaml", "holds 10 GiB"), at("GSG033", "a.yaml", "holds 10 GiB", "y")],
                          "/repo")
    assert len(set(prints)) == 4
    assert fingerprints([at("GSG033", "a.yaml", "holds 10 GiB")], "/repo") == \
        fingerprints([at("GSG033", "a.yaml", "holds 9.5 GiB")], "/repo") == prints[:1]


def test_junit_names_the_location_where_jenkins_shows_it(gsg, repository):
    import xml.etree.ElementTree as ET

    result = gsg("validate", ".", "--fleet", "../../fleet.yaml", "-o", "junit", cwd=repository / "deploy" / "specs")
    cases = {c.get("name"): c for c in ET.fromstring(result.out).iter("testcase")}
    failing = cases["many-seqs GSG033 kv-oversubscribed"]
    assert failing.get("classname") == "deploy/specs/many.yaml"
    assert failing.get("file") is None and failing.get("line") is None
    assert failing.find("failure").get("message").startswith("deploy/specs/many.yaml:10:5: --max-num-seqs 64 x ")
    assert failing.find("failure").text.startswith("deploy/specs/many.yaml:10:5: error: --max-num-seqs 64 x ")


# --- pull-request markdown ------------------------------------------------------------------------------------

def _many_findings(count: int) -> Report:
    found = [finding(RULES["GSG034"], Location(f"specs/team/deployment-{i:05d}.yaml", 12, 5),
                     "--gpu-memory-utilization 0.95 leaves 0.98 GiB of headroom on GPU 0 (at least 1.00 GiB)",
                     spec=f"deployment-{i:05d}", fix="lower --gpu-memory-utilization to 0.94") for i in range(count)]
    return Report(found, files=count, specs=count)


def test_validate_markdown_of_3000_warnings_fits_a_comment_with_its_summary():
    text = validate_markdown(_many_findings(3000))
    shown = text.count("| ⚠️ |")
    assert len(text) <= COMMENT_LIMIT < GITHUB_COMMENT_CHARS == 65_536
    assert text.startswith("## gsg validate\n\n0 errors, 3000 warnings, 0 notes in 3000 specs (3000 files).\n")
    assert 100 < shown < 3000
    assert text.endswith(f"_… {3000 - shown} more line(s) not shown here (a comment holds 60,000 characters): "
                         "`gsg validate -o json` (or `-o sarif`) writes the whole report: keep it as the job's "
                         "artifact_\n")


@pytest.mark.parametrize("count", [0, 1, 30])
def test_validate_markdown_that_fits_is_whole(count):
    text = validate_markdown(_many_findings(count))
    assert text.count("| ⚠️ |") == count and "not shown here" not in text


def test_a_small_limit_cuts_at_a_line_and_says_how_much():
    text = validate_markdown(_many_findings(10), limit=1_000)
    assert len(text) <= 1_000
    lines = text.splitlines()
    assert lines[2] == "0 errors, 10 warnings, 0 notes in 10 specs (10 files)."
    shown = text.count("| ⚠️ |")
    assert f"_… {10 - shown} more line(s) not shown here (a comment holds 1,000 characters)" in text


def _drift(count: int) -> dict:
    empty = {k: [] for k in ("pinned_edits", "changed", "missing", "orphaned", "conflicts", "unhealthy", "unmanaged",
                                "legacy")}
    return {**empty, "owners": [], "notes": [],
            "missing": [{"name": f"deployment-{i:05d}", "spec_file": f"specs/d{i:05d}.yaml"} for i in range(count)]}


def test_drift_markdown_is_capped_alike():
    text = drift_markdown(_drift(5000))
    assert len(text) <= COMMENT_LIMIT
    assert text.startswith("## gsg drift\n\n**Drift detected.**\n")
    assert "more line(s) not shown here (a comment holds 60,000 characters): `gsg drift -o json` writes the " \
           "whole report" in text
    assert "not shown" not in drift_markdown(_drift(3))


def test_plan_markdown_shares_the_limit():
    from gpustack_guard.reporters import plan_output

    assert plan_output.COMMENT_LIMIT is COMMENT_LIMIT


# --- streams that cannot encode everything ---------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_to_an_ascii_stream_escapes_instead_of_failing(monkeypatch, fmt):
    """A homoglyph in a backend name (U+041C), quoted in the finding; markdown's icons too."""
    stdout, stderr = (io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict") for _ in range(2))
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setenv("GSG_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(HOMOGLYPH.parent)
    code = main(["validate", "spec.yaml", "--fleet", str(FLEET), "-o", fmt])
    stdout.flush()
    stderr.flush()
    written, errors = stdout.buffer.getvalue().decode("ascii"), stderr.buffer.getvalue().decode("ascii")
    assert code == 1, errors
    assert errors == "gsg: 1 error, 0 warnings, 0 notes in 1 spec (1 file)\n"
    assert "GSG004" in written
    if fmt not in ("json", "sarif", "gitlab"):  # JSON escapes it itself (\u041c, lower case)
        assert "vLL\\u041c" in written


def test_a_real_process_under_lang_c_and_an_ascii_encoding_exits_1_not_3():
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C", "GSG_OFFLINE": "1"}
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run([sys.executable, "-m", "gpustack_guard", "validate", "spec.yaml", "--fleet", str(FLEET),
                           "-o", "markdown"], cwd=HOMOGLYPH.parent, env=env, capture_output=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert b"| \\u274c | `GSG004` enum-spelling |" in done.stdout and b"vLL\\u041c" in done.stdout
    assert done.stderr == b"gsg: 1 error, 0 warnings, 0 notes in 1 spec (1 file)\n"


def test_drift_of_every_context_in_one_comment_is_capped_as_a_whole():
    from types import SimpleNamespace

    from gpustack_guard.commands.drift import _render_all
    from gpustack_guard.reporters import ChangeFormat

    names = [f"ctx-{i}" for i in range(4)]
    contexts = SimpleNamespace(contexts={n: SimpleNamespace(server=f"https://{n}.example") for n in names})
    results = [(n, _drift(1500), None) for n in names]  # each fits alone (~45,000 characters), not all four
    text = _render_all(results, contexts, ChangeFormat.MARKDOWN)
    assert len(drift_markdown(_drift(1500))) < COMMENT_LIMIT < len("".join(drift_markdown(_drift(1500)) * 4))
    assert len(text) <= COMMENT_LIMIT and text.startswith("## gsg drift: ctx-0\n\n**Drift detected.**\n")
    assert "more line(s) not shown here (a comment holds 60,000 characters)" in text
