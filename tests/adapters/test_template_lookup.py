"""Template lookup from the project root, never the working directory; which file was used; shadowing (GSG028)."""

from __future__ import annotations

import json

import pytest
from support import FLEET

OURS = ("{# the repository's template #}\npinned:\n  - --gpu-memory-utilization={{ vars.gmu | default(0.8) }}\n"
        "defaults: []\n")
SPEC = ("name: chat\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n"
        "gpu_selector:\n  gpu_ids: [gpu-c:cuda:0]\nbackend: vLLM\nbackend_version: 0.11.0\n"
        "guard:\n  template: {name}\n  vars: {{gmu: 0.7}}\n")


@pytest.fixture
def repo(tmp_path):
    """A repository whose templates/ is at its root and whose specs are two folders down."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "templates").mkdir()
    (root / "templates" / "acme.yaml.j2").write_text(OURS)
    specs = root / "deploy" / "gpu" / "specs"
    specs.mkdir(parents=True)
    (specs / "chat.yaml").write_text(SPEC.format(name="acme"))
    return root


def _gmu(gsg, specs) -> list[str]:
    doc = json.loads(gsg("render", str(specs), "-o", "json").out)
    return [a for a in doc[0]["backend_parameters"] if a.startswith("--gpu-memory")]


@pytest.mark.parametrize("where", [".", "deploy", "deploy/gpu/specs"])
def test_the_repository_template_is_found_from_any_working_directory(gsg, repo, monkeypatch, where):
    monkeypatch.chdir(repo / where)
    assert _gmu(gsg, repo / "deploy" / "gpu" / "specs") == ["--gpu-memory-utilization=0.7"]


def test_the_working_directory_templates_are_not_searched(gsg, repo, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "templates").mkdir(parents=True)
    (elsewhere / "templates" / "other.yaml.j2").write_text(OURS)
    (repo / "deploy" / "gpu" / "specs" / "chat.yaml").write_text(SPEC.format(name="other"))
    monkeypatch.chdir(elsewhere)
    result = gsg("validate", str(repo / "deploy" / "gpu" / "specs"), "--fleet", str(FLEET), "-o", "json")
    rules = {(f["rule_id"], f["line"]) for f in json.loads(result.out)["findings"]}
    assert ("GSG011", 9) in rules  # not found: the folder gsg happens to run in is not the project


def test_lookup_stops_at_the_repository_root(gsg, repo, tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "above.yaml.j2").write_text(OURS)  # outside the repository
    (repo / "deploy" / "gpu" / "specs" / "chat.yaml").write_text(SPEC.format(name="above"))
    result = gsg("render", str(repo / "deploy" / "gpu" / "specs"))
    assert result.code == 1 and "template 'above' not found" in result.err


def test_render_names_the_file_from_the_root_whatever_the_working_directory(gsg, repo, monkeypatch):
    outputs = set()
    for where in (repo, repo / "deploy" / "gpu"):
        monkeypatch.chdir(where)
        text = gsg("render", str(repo / "deploy" / "gpu" / "specs")).out
        outputs.add(text)
        assert "#   template acme: templates/acme.yaml.j2\n" in text
    assert len(outputs) == 1


def test_a_nearer_template_that_differs_is_a_warning_naming_both(gsg, repo):
    specs = repo / "deploy" / "gpu" / "specs"
    (specs / "templates").mkdir()
    (specs / "templates" / "acme.yaml.j2").write_text(OURS.replace("0.8", "0.9"))
    result = gsg("validate", str(specs), "--fleet", str(FLEET), "-o", "json")
    shadow = [f for f in json.loads(result.out)["findings"] if f["rule_id"] == "GSG028"]
    assert [(f["severity"], f["line"], f["message"]) for f in shadow] == [
        ("warning", 9, "template 'acme' is deploy/gpu/specs/templates/acme.yaml.j2, which hides "
                       "templates/acme.yaml.j2")]
    assert _gmu(gsg, specs) == ["--gpu-memory-utilization=0.7"]  # the nearest is used


def test_an_identical_copy_is_not_a_shadow(gsg, repo):
    specs = repo / "deploy" / "gpu" / "specs"
    (specs / "templates").mkdir()
    (specs / "templates" / "acme.yaml.j2").write_text(OURS)
    result = gsg("validate", str(specs), "--fleet", str(FLEET), "-o", "json")
    assert "GSG028" not in {f["rule_id"] for f in json.loads(result.out)["findings"]}


def test_a_project_file_in_the_spec_folder_does_not_hide_the_repositorys_templates(gsg, repo):
    """The usual layout: specs/gsg.yaml, templates/ beside specs/ at the repository root."""
    (repo / "deploy" / "gpu" / "specs" / "gsg.yaml").write_text("project: acme\n")
    assert _gmu(gsg, repo / "deploy" / "gpu" / "specs") == ["--gpu-memory-utilization=0.7"]


def test_outside_a_repository_the_folder_above_the_project_file_is_the_top(gsg, tmp_path):
    project = tmp_path / "outer" / "project"
    (project / "specs").mkdir(parents=True)
    (project / "specs" / "gsg.yaml").write_text("project: acme\n")
    (project / "specs" / "chat.yaml").write_text(SPEC.format(name="acme"))
    (project / "templates").mkdir()
    (project / "templates" / "acme.yaml.j2").write_text(OURS)
    assert _gmu(gsg, project / "specs") == ["--gpu-memory-utilization=0.7"]
    (tmp_path / "outer" / "templates").mkdir()  # above the top: never searched
    (tmp_path / "outer" / "templates" / "higher.yaml.j2").write_text(OURS)
    (project / "specs" / "chat.yaml").write_text(SPEC.format(name="higher"))
    result = gsg("render", str(project / "specs"))
    assert result.code == 1 and "template 'higher' not found" in result.err
