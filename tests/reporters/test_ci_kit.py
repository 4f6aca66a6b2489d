"""The CI kit: JSON Schema, pre-commit hooks, the GitHub action and the example pipelines."""

import json
import os
import re
import shlex
import subprocess
import sys

import jsonschema
import pytest
import yaml
from support import FLEET, REPO

pytestmark = pytest.mark.xdist_group("ci-kit")  # its module-scoped fixtures are built once, on one worker

SCHEMA_FILE = REPO / "schema" / "spec.schema.json"
SPECS = sorted(p for p in REPO.glob("specs/*.yaml") if p.name != "gsg.yaml")  # gsg.yaml: the project file
EXAMPLE_SPECS = SPECS + sorted(REPO.glob("examples/positive/*/spec.yaml"))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_committed_schema_is_what_gsg_schema_prints(gsg):
    result = gsg("schema")
    assert result.code == 0 and json.loads(result.out)["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert result.out == SCHEMA_FILE.read_text(), "run: gsg schema > schema/spec.schema.json"
    assert "$defs" not in result.out and "#/definitions/" in result.out


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_example_spec_is_valid_against_the_schema(validator, path):
    for doc in yaml.safe_load_all(path.read_text()):
        assert list(validator.iter_errors(doc)) == []


def test_specs_carry_the_language_server_modeline():
    for path in SPECS:
        assert path.read_text().startswith("# yaml-language-server: $schema=../schema/spec.schema.json\n")


@pytest.mark.parametrize("change", [
    {"schedule_type": "spread"}, {"guard": {"workload": {"p99": 1}}}, {"gpu_selector": {"ids": []}},
    {"source": "hugging_face"}, {"placement_strategy": "pack"}, {"categories": ["LLM"]},
    {"guard": {"policy": {"kv_oversubscription": "fatal"}}},
])
def test_schema_rejects_what_the_loader_rejects(validator, gsg, tmp_path, change):
    doc = {"name": "x", "source": "huggingface", "huggingface_repo_id": "Qwen/Qwen2.5-7B-Instruct", **change}
    assert list(validator.iter_errors(doc)), change
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    result = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "-o", "json")
    assert result.code == 1
    assert {f["rule_id"] for f in json.loads(result.out)["findings"]} & {"GSG003", "GSG004"}


def _hooks():
    return yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())


def test_pre_commit_hooks_are_well_formed():
    hooks = _hooks()
    assert [h["id"] for h in hooks] == ["gsg-validate", "gsg-render-check"]
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["pass_filenames"] is False and hook["require_serial"] is True
        re.compile(hook["files"])
        # a user's `args:` replaces the hook's: what must always hold lives in the entry
        assert "--offline" in shlex.split(hook["entry"]) and "--offline" not in hook["args"]


@pytest.mark.parametrize("hook", _hooks(), ids=lambda h: h["id"])
def test_hook_entry_passes_on_the_examples(gsg, hook):
    argv = shlex.split(hook["entry"])[1:] + hook["args"]
    result = gsg(*argv, cwd=REPO)
    assert result.code == 0, result.err


def test_render_check_fails_on_a_stale_file(gsg, tmp_path):
    stale = tmp_path / "rendered.yaml"
    stale.write_text("name: old\n")
    result = gsg("render", "specs/", "--out", str(stale), "--check", cwd=REPO)
    assert result.code == 1 and "is stale" in result.err and stale.read_text() == "name: old\n"


def _gsg_commands(text: str):
    """Every `gsg ...` invocation in a shell script or workflow `run:` block."""
    for line in text.splitlines():
        for match in re.finditer(r"(?:^|[\s;|&(])gsg ([a-z]+)((?: [^|>;&]*)?)", line):
            yield match.group(1), re.findall(r"(--[a-z][a-z0-9-]*)", match.group(2))


def _check_commands(gsg, text: str) -> set[str]:
    """The gsg commands the text runs, each checked to exist with every flag it is given."""
    seen = set()
    for command, flags in _gsg_commands(text):
        help_text = gsg(command, "--help")
        assert help_text.code == 0, f"gsg {command} does not exist"
        for flag in flags:
            assert flag in help_text.out, f"gsg {command} has no {flag}"
        seen.add(command)
    return seen


@pytest.mark.parametrize("name", ["github-workflow.yml", "gitlab-ci.yml"])
def test_example_pipelines_load_and_reference_real_commands(gsg, name):
    text = (REPO / "examples" / "ci" / name).read_text()
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    assert _check_commands(gsg, text) == {"validate", "plan", "drift"}
    if name.startswith("github"):
        assert set(doc[True if True in doc else "on"]) >= {"pull_request", "schedule"}
        for job in doc["jobs"].values():
            assert job["runs-on"] and job["steps"]
            for step in job["steps"]:
                assert ("run" in step) != ("uses" in step)
                if "uses" in step:
                    assert PINNED.fullmatch(step["uses"]), step["uses"]
                assert text.count("${{") == text.count("}}")
        # every action pinned by commit, with the release it is named in a comment beside it
        assert re.findall(r"uses: \S+@[0-9a-f]{40}  # v\d+\.\d+\.\d+\n", text) and "@v" not in text


# A third-party action pinned by its full commit (a tag can be moved under a workflow that trusts it).
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")


def test_action_is_a_valid_composite_action(gsg):
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite" and {"command", "specs", "api-key"} <= set(action["inputs"])
    for step in action["runs"]["steps"]:
        assert ("run" in step) != ("uses" in step)
        if "run" in step:
            assert step["shell"] == "bash"
        else:
            assert PINNED.fullmatch(step["uses"]), step["uses"]
    script = (REPO / "scripts" / "action.sh").read_text()
    assert _check_commands(gsg, script) == {"validate", "plan", "drift"}
    assert script.count("gsg validate") == 1  # one run writes the annotations, SARIF and the summary


def test_action_script_annotates_writes_sarif_and_summary(tmp_path):
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
           "GSG_COMMAND": "validate", "GSG_SPECS": "spec.yaml", "GSG_FLEET_FILE": str(FLEET),
           "GSG_FAIL_LEVEL": "error", "GSG_SARIF": str(tmp_path / "gsg.sarif"), "GSG_OFFLINE": "1",
           "GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "RUNNER_TEMP": str(tmp_path)}
    done = subprocess.run(["bash", "-x", str(REPO / "scripts" / "action.sh")],
                          cwd=REPO / "examples" / "negative" / "GSG037-tp-heads",
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    runs = [line for line in done.stderr.splitlines() if line.startswith("+ gsg validate")]
    assert len(runs) == 1 and " --offline " in runs[0]  # the action never reaches the hub unless asked to
    assert ("::error file=examples/negative/GSG037-tp-heads/spec.yaml,line=9,col=5,title=GSG037 tp-heads::"
            in done.stdout)
    assert json.loads((tmp_path / "gsg.sarif").read_text())["runs"][0]["results"]
    assert (tmp_path / "summary.md").read_text().startswith("## gsg validate")
    assert "exit-code=1" in (tmp_path / "out").read_text()


@pytest.mark.parametrize("doc, rule", [
    ({"name": "x", "source": "huggingface", "huggingface_filename": "m.gguf"}, "GSG006"),
    ({"name": "x", "source": "model_scope", "huggingface_repo_id": "a/b"}, "GSG006"),
    ({"name": "x", "source": "local_path"}, "GSG006"),
    ({"name": "x", "source": "huggingface", "huggingface_repo_id": "a/b", "gpu_selector": {"gpu_ids": ["gpu-a-0"]}},
     "GSG007"),
])
def test_schema_checks_source_ids_and_gpu_ids_like_the_loader(validator, gsg, tmp_path, doc, rule):
    assert list(validator.iter_errors(doc)), doc
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    result = gsg("validate", str(tmp_path), "--fleet", str(FLEET), "-o", "json")
    assert rule in {f["rule_id"] for f in json.loads(result.out)["findings"]}


def test_schema_accepts_worker_names_with_colons(validator):
    doc = {"name": "x", "source": "huggingface", "huggingface_repo_id": "a/b",
           "gpu_selector": {"gpu_ids": ["host:8080:cuda:3"]}}
    assert list(validator.iter_errors(doc)) == []


def test_every_top_level_and_guard_field_has_a_hover_text():
    schema = json.loads(SCHEMA_FILE.read_text())
    missing = [k for k, v in schema["properties"].items() if not v.get("description")]
    for record in ("Guard", "Policy", "Workload", "GPUSelector"):
        missing += [f"{record}.{k}" for k, v in schema["definitions"][record]["properties"].items()
                    if not v.get("description")]
    assert missing == []
