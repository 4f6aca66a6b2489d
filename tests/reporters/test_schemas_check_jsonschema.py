"""The JSON Schemas editors load (schema/*.schema.json), held by check-jsonschema — the tool users run them with —
against every example and every README snippet they cover, and against what the loader refuses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support import REPO

CHECK = [sys.executable, "-m", "check_jsonschema"]
SCHEMAS = {kind: REPO / "schema" / f"{kind}.schema.json"
           for kind in ("spec", "overlay", "workload", "project", "contexts")}
PROJECT_KEYS = {"project", "fleet", "rendered", "select", "ignore", "per_path_ignores"}
MINIMAL = {"name": "snippet", "source": "huggingface", "huggingface_repo_id": "a/b"}


def _documents(path: Path) -> list[object]:
    """check-jsonschema reads one document per file: a multi-document spec file is checked document by document."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _readme_snippets() -> dict[str, list[object]]:
    """The README's YAML blocks that are specs, guard blocks (checked inside a minimal spec), overlay directives,
    workloads, project files or contexts files."""
    found: dict[str, list[object]] = {"spec": [], "workload": [], "overlay": [], "project": [], "contexts": []}
    for block in re.findall(r"```yaml\n(.*?)```", (REPO / "README.md").read_text(), re.S):
        doc = yaml.safe_load(block)
        if not isinstance(doc, dict):
            continue
        if "source" in doc and "name" in doc:
            found["spec"].append(doc)
        elif set(doc) == {"guard"}:
            found["spec"].append({**MINIMAL, **doc})
        elif "prompt_tokens" in doc:
            found["workload"].append(doc)
        elif "$patch" in doc:
            found["overlay"].append(doc)
        elif set(doc) <= PROJECT_KEYS:
            found["project"].append(doc)
        elif "contexts" in doc:
            found["contexts"].append(doc)
    return found


def _check(kind: str, documents: list[object], tmp_path: Path) -> subprocess.CompletedProcess:
    files = []
    for index, doc in enumerate(documents):
        path = tmp_path / f"{kind}-{index}.yaml"
        path.write_text(yaml.safe_dump(doc))
        files.append(str(path))
    return subprocess.run([*CHECK, "--schemafile", str(SCHEMAS[kind]), *files], capture_output=True, text=True,
                          timeout=120)


def test_every_example_spec_and_readme_snippet_passes(tmp_path):
    specs = [d for f in sorted((REPO / "specs").glob("*.yaml")) if f.name != "gsg.yaml" for d in _documents(f)]
    specs += [d for f in sorted((REPO / "examples" / "positive").rglob("*.yaml")) for d in _documents(f)]
    snippets = _readme_snippets()
    assert len(specs) >= 6 and len(snippets["spec"]) >= 2 and snippets["workload"]
    done = _check("spec", specs + snippets["spec"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    workloads = [d for f in sorted((REPO / "workloads").glob("*.yaml")) for d in _documents(f)]
    done = _check("workload", workloads + snippets["workload"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert snippets["overlay"]
    done = _check("overlay", snippets["overlay"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("size", ["2GiB", "141GB", "1.5 GiB", "250MiB", "49140mib", 2147483648])
def test_sizes_written_as_the_docs_write_them_pass(tmp_path, size):
    doc = {**MINIMAL, "guard": {"policy": {"cuda_graph_reserve": size}, "model": {"weight_bytes": size}}}
    assert _check("spec", [doc], tmp_path).returncode == 0


@pytest.mark.parametrize("policy", [{"cuda_graph_reserve": "2 GiBs"}, {"cuda_graph_reserve": "-1GiB"},
                                    {"cuda_graph_reserve": "lots"}, {"cuda_graph_reserve": True}])
def test_what_the_loader_refuses_the_schema_refuses(tmp_path, policy):
    assert _check("spec", [{**MINIMAL, "guard": {"policy": policy}}], tmp_path).returncode == 1


def test_overlay_documents_need_only_the_name(tmp_path):
    overlay = {"name": "llama-8b", "replicas": 2, "backend_parameters": ["--max-num-seqs=24"],
               "guard": {"vars": {"max_num_seqs": 24}, "policy": {"cuda_graph_reserve": "1GiB"}}}
    assert _check("overlay", [overlay], tmp_path).returncode == 0
    assert _check("spec", [overlay], tmp_path).returncode == 1  # a spec needs its source
    assert _check("overlay", [{"replicas": 2}], tmp_path).returncode == 1  # which spec does it patch?
    assert _check("overlay", [{"name": "x", "replica": 2}], tmp_path).returncode == 1  # unknown field


def test_committed_overlay_schema_is_current(gsg):
    result = gsg("schema", "overlay")
    assert result.out == SCHEMAS["overlay"].read_text(), "run: gsg schema overlay > schema/overlay.schema.json"


@pytest.mark.parametrize("document, code", [
    ({"name": "llama-8b", "$patch": "delete"}, 0),
    ({"name": "llama-8b", "$patch": "exclude"}, 0),
    ({**MINIMAL, "name": "llama-8b-canary", "replicas": 1}, 0),  # a whole spec only this context has
    ({"name": "llama-8b", "$patch": "replace"}, 1),  # kustomize's other directives mean nothing here
    ({"name": "llama-8b", "$patch": "delete", "replicas": 0}, 1),  # nothing beside the name takes effect
    ({"$patch": "exclude"}, 1),  # which deployment?
])
def test_overlay_directives_pass_as_the_loader_takes_them(tmp_path, document, code):
    assert _check("overlay", [document], tmp_path).returncode == code


def test_the_project_and_contexts_files_of_the_repository_and_readme_pass(tmp_path):
    snippets = _readme_snippets()
    projects = _documents(REPO / "specs" / "gsg.yaml") + snippets["project"]
    assert len(projects) >= 3 and {"fleet", "per_path_ignores"} <= {k for p in projects for k in p}  # type: ignore
    done = _check("project", projects, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert snippets["contexts"]
    done = _check("contexts", snippets["contexts"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("document, code", [
    ({"project": "team-a", "select": ["GSG03", "all", "kv-oversubscribed", "KV-Oversubscribed", " GSG033 "]}, 0),
    ({"select": ["GSG0"]}, 0),  # rules only, no project
    ({"project": "team-a", "per_path_ignores": {"specs/batch/*": ["GSG033"]}}, 0),
    ({}, 1),  # "missing `project: NAME`"
    ({"project": "-team"}, 1),  # not a project name
    ({"project": "t" * 64}, 1),
    ({"project": "team-a", "fleets": "x.yaml"}, 1),  # unknown field
    ({"project": "team-a", "fleet": "  "}, 1),
    ({"project": "team-a", "fleet": 3}, 1),
    ({"project": "team-a", "select": "GSG033"}, 1),  # a list, not one id
    ({"project": "team-a", "ignore": ["kv-oversubscribd"]}, 1),  # names no rule
    ({"project": "team-a", "per_path_ignores": {"specs/*": "GSG033"}}, 1),
])
def test_the_project_schema_takes_what_the_parser_takes(tmp_path, document, code):
    assert _check("project", [document], tmp_path).returncode == code


@pytest.mark.parametrize("document, code", [
    ({"current-context": "prod", "contexts": {"prod": {"server": "https://g.example", "api-key-env": "K",
                                                       "insecure": False, "timeout": 30, "overlay": "prod"}}}, 0),
    ({"contexts": {}}, 0),
    ({"current-context": "prod"}, 1),  # no contexts
    ({"current_context": "prod", "contexts": {}}, 1),  # unknown top-level field (was silently no context chosen)
    ({"contexts": {"prod": {"api-key-env": "K"}}}, 1),  # no server
    ({"contexts": {"prod": {"server": "ftp://g.example"}}}, 1),
    ({"contexts": {"prod": {"server": "https://g.example", "api-key": "secret"}}}, 1),  # unknown: never a key
    ({"contexts": {"prod": {"server": "https://g.example", "timeout": 0}}}, 1),
    ({"contexts": {"prod": {"server": "https://g.example", "timeout": 3601}}}, 1),
    ({"contexts": {"prod": {"server": "https://g.example", "insecure": "yes"}}}, 1),
    ({"contexts": {"prod": {"server": "https://g.example", "fleet": ["a.yaml"]}}}, 1),
])
def test_the_contexts_schema_takes_what_the_loader_takes(tmp_path, document, code):
    assert _check("contexts", [document], tmp_path).returncode == code


@pytest.mark.parametrize("kind", ["project", "contexts"])
def test_committed_project_and_contexts_schemas_are_current(gsg, kind):
    assert gsg("schema", kind).out == SCHEMAS[kind].read_text(), f"run: gsg schema {kind} > schema/{kind}.schema.json"
