"""Round 28 of hostile specs: the files `gsg plan --out` and `gsg render --out` write. Each may replace an earlier
output of its own, never a file the run reads nor any other file that is already there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import TWO_GPU_VLLM_SPEC

REPO = Path(__file__).resolve().parents[2]
PLAN = ("plan", "specs", "--offline")
RENDER = ("render", "specs", "--offline")


def _overlay_patch(specs):
    (specs / "overlays" / "prod").mkdir(parents=True)
    (specs / "overlays" / "prod" / "changes.yaml").write_text("name: llama-8b\nreplicas: 2\n")
    return "specs/overlays/prod/changes.yaml", ("--overlay", "prod")


def _bundled_template(specs):
    (specs.parent / "templates").mkdir()  # beside the specs: on the default search path
    shutil.copy(REPO / "templates" / "vllm-hardened.yaml.j2", specs.parent / "templates")
    return "templates/vllm-hardened.yaml.j2", ()


def _contexts_file(specs):
    (specs.parent / "contexts.yaml").write_text("contexts: {}\n")  # GSG_CONFIG names it
    return "contexts.yaml", ()


INPUTS = {
    "a spec": lambda specs: ("specs/llama-8b.yaml", ()),
    "the project file": lambda specs: ("specs/gsg.yaml", ()),
    "an overlay patch": _overlay_patch,
    "a template": _bundled_template,
    "the contexts file": _contexts_file,
}


@pytest.mark.parametrize("case", sorted(INPUTS))
def test_plan_out_never_replaces_a_file_the_run_reads(gsg, fake, specs, monkeypatch, case):
    """`gsg plan specs --out specs/gsg.yaml` replaced the project file with the plan's JSON, exit 0 (render and
    validate --report refused it since round 24; plan did not look)."""
    monkeypatch.setenv("GSG_CONFIG", "contexts.yaml")  # the working directory is specs.parent
    target, extra = INPUTS[case](specs)
    before = (specs.parent / target).read_bytes()
    result = gsg(*PLAN, *extra, "--out", target)
    assert (result.code, result.err.splitlines()[-1]) == (
        1, f"gsg: error: {target}: --out names a file this run reads; refusing to overwrite it; nothing written")
    assert (specs.parent / target).read_bytes() == before


def test_plan_out_through_another_spelling_of_an_input_is_refused(gsg, fake, specs):
    before = (specs / "llama-8b.yaml").read_bytes()
    result = gsg(*PLAN, "--out", "specs/../specs/llama-8b.yaml")
    assert (result.code, result.err.splitlines()[-1]) == (
        1, "gsg: error: specs/../specs/llama-8b.yaml: --out names a file this run reads (as specs/llama-8b.yaml); "
           "refusing to overwrite it; nothing written")
    assert (specs / "llama-8b.yaml").read_bytes() == before


NOT_A_PLAN = {  # an existing file's bytes: none of them a plan gsg wrote
    "a readme": b"# My project\n",
    "empty": b"",
    "a JSON object": b'{"name": "x"}\n',
    "a JSON list": b"[1, 2]\n",
    "another format version": b'{"format_version": "2.0", "changes": []}\n',
    "no changes": b'{"format_version": "1.0"}\n',
    "binary": bytes(range(256)),
    "UTF-16": '{"format_version": "1.0", "changes": []}'.encode("utf-16"),
}


@pytest.mark.parametrize("case", sorted(NOT_A_PLAN))
def test_plan_out_never_replaces_a_file_it_did_not_write(gsg, fake, specs, case):
    """`gsg plan --out README.md` replaced the readme with the plan, exit 0."""
    (specs.parent / "out.txt").write_bytes(NOT_A_PLAN[case])
    result = gsg(*PLAN, "--out", "out.txt")
    assert (result.code, result.err.splitlines()[-1]) == (
        1, "gsg: error: out.txt: exists and is not a gsg plan file; refusing to overwrite it (remove it or save the "
           "plan elsewhere); nothing written")
    assert (specs.parent / "out.txt").read_bytes() == NOT_A_PLAN[case]
    assert not [p.name for p in specs.parent.iterdir() if p.name.endswith(".tmp")]


def test_plan_out_replaces_its_own_earlier_plan_and_writes_a_new_one(gsg, fake, specs):
    assert gsg(*PLAN, "--out", "plans/deep/plan.json").code == 0  # a new file, in folders not made yet
    saved = specs.parent / "plans" / "deep" / "plan.json"
    older = json.loads(saved.read_text())
    older["changes"] = []
    saved.write_text(json.dumps(older))
    assert gsg(*PLAN, "--out", "plans/deep/plan.json").code == 0
    assert len(json.loads(saved.read_text())["changes"]) == 4
    assert gsg("apply", "plans/deep/plan.json", "--yes").code == 0  # what it wrote is still a plan apply reads


def test_plan_out_through_a_link_to_a_file_outside_replaces_the_link_only(gsg, fake, specs, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "theirs.json"
    outside.write_text("{}\n")
    (specs.parent / "plan.json").symlink_to(outside)
    result = gsg(*PLAN, "--out", "plan.json")
    assert result.code == 1
    assert outside.read_text() == "{}\n" and (specs.parent / "plan.json").is_symlink()


NOT_A_RENDER = {
    "a readme": b"# My project\n",
    "empty": b"",
    "a mapping without a name": b"contexts: {}\n",
    "a spec and a list": b"name: a\n---\n- 1\n",
    "a JSON object": b'{"format_version": "1.0"}\n',
    "a JSON list of numbers": b"[1, 2]\n",
    "bad YAML": b"name: [\n",
    "binary": bytes(range(256)),
    "HTML": b"<html><body>docs</body></html>\n",
}


@pytest.mark.parametrize("case", sorted(NOT_A_RENDER))
def test_render_out_never_replaces_a_file_it_did_not_write(gsg, specs, case):
    """`gsg render specs --out README.md` replaced the readme with the rendered documents, exit 0."""
    data = NOT_A_RENDER[case]
    (specs.parent / "out.yaml").write_bytes(data)
    result = gsg(*RENDER, "--out", "out.yaml")
    assert (result.code, result.err.splitlines()[-1]) == (
        1, "gsg: error: out.yaml: exists and is not a file gsg render wrote (spec documents with a `name`); "
           "refusing to overwrite it (remove it or render elsewhere); nothing written")
    assert (specs.parent / "out.yaml").read_bytes() == data


@pytest.mark.parametrize("output", ["yaml", "json"])
def test_render_out_replaces_an_earlier_render_of_either_format(gsg, specs, output):
    assert gsg(*RENDER, "-o", "json" if output == "yaml" else "yaml", "--out", "rendered").code == 0
    (specs / "qwen-32b-sglang.yaml").unlink()  # the tree changed since
    assert gsg(*RENDER, "-o", output, "--out", "rendered").code == 0
    text = (specs.parent / "rendered").read_text()
    assert text.startswith("[\n" if output == "json" else "name: llama-70b-q4\n")
    assert "qwen-32b" not in text
    assert gsg(*RENDER, "-o", output, "--out", "rendered", "--check").code == 0


def test_render_out_through_a_link_to_a_file_outside_never_writes_there(gsg, specs, tmp_path_factory):
    """A link in the output's place that leads out of the folder: a file it did not write is refused, and an
    earlier render behind it is left alone too (the link is replaced, never followed)."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "notes.md").write_text("mine\n")
    (specs.parent / "a.yaml").symlink_to(outside / "notes.md")
    assert gsg(*RENDER, "--out", "a.yaml").code == 1
    assert (outside / "notes.md").read_text() == "mine\n"
    assert gsg(*RENDER, "--out", str(outside / "old.yaml")).code == 0
    old = (outside / "old.yaml").read_text()
    (specs.parent / "b.yaml").symlink_to(outside / "old.yaml")
    (specs / "qwen-32b-sglang.yaml").unlink()
    assert gsg(*RENDER, "--out", "b.yaml").code == 0
    assert (outside / "old.yaml").read_text() == old
    assert not (specs.parent / "b.yaml").is_symlink() and "qwen-32b" not in (specs.parent / "b.yaml").read_text()


# --- an overlay's backend_parameters merged as the engine reads the flags -----------------------------------------
@pytest.mark.parametrize("base,patch,merged", [
    # a value as an item of its own: it goes with its flag (was: left behind as a stray value, or the patch's lost)
    (["--max-model-len", "4096", "--enforce-eager"], ["--max-model-len=8192"], ["--max-model-len=8192", "--enforce-eager"]),
    (["--max-model-len", 4096, "--enforce-eager"], ["--max-model-len", "8192"],
     ["--max-model-len", "8192", "--enforce-eager"]),
    # a flag and its value in one item, as GPUStack's worker splits it
    (["--max-model-len 4096", "--enforce-eager"], ["--max-model-len=8192"], ["--max-model-len=8192", "--enforce-eager"]),
    (["--max-model-len=4096", "--enforce-eager"], ["--max-model-len '8192'"], ["--max-model-len '8192'", "--enforce-eager"]),
    # an alias, underscores and every later occurrence of the flag
    (["-tp", "2", "-q", "fp8"], ["--tensor-parallel-size=4"], ["--tensor-parallel-size=4", "-q", "fp8"]),
    (["--max_model_len=1", "--x", "--max-model-len=2"], ["--max-model-len=3"], ["--max-model-len=3", "--x"]),
    # a patch that repeats a flag keeps its repeats, at the base's place
    (["--a=1", "--lora-modules", "x=/p", "--b"], ["--lora-modules", "y=/q", "--lora-modules=z=/r"],
     ["--a=1", "--lora-modules", "y=/q", "--lora-modules=z=/r", "--b"]),
    # a base item holding two flags stays whole: the patch's flag follows it (the last one wins)
    (["--max-model-len=4096 --enforce-eager"], ["--max-model-len=8192"],
     ["--max-model-len=4096 --enforce-eager", "--max-model-len=8192"]),
    # a negative number is a value; a value before any flag stays where it was
    (["--seed", "-1", "--x"], ["--seed=2"], ["--seed=2", "--x"]),
    (["stray", "--x=1"], ["--x=2", "--y"], ["stray", "--x=2", "--y"]),
    (["--chat-template 'open", "--x"], ["--chat-template=b"], ["--chat-template=b", "--x"]),
])
def test_an_overlay_patches_backend_parameters_as_the_engine_reads_them(base, patch, merged):
    from gpustack_guard.adapters.files.overlays import merge

    assert merge({"backend": "vLLM", "backend_parameters": base},
                 {"backend_parameters": patch})["backend_parameters"] == merged


def test_an_overlay_resolves_the_aliases_of_its_specs_engine():
    from gpustack_guard.adapters.files.overlays import merge

    llama = {"backend": "llama.cpp", "backend_parameters": ["-c", "4096", "-ngl", "99"]}
    assert merge(llama, {"backend_parameters": ["--ctx-size=8192"]})["backend_parameters"] == [
        "--ctx-size=8192", "-ngl", "99"]
    gguf = {"huggingface_filename": "m-Q4_K_M.GGUF", "backend_parameters": ["-c", "4096"]}
    assert merge(gguf, {"backend_parameters": ["--ctx-size=8192"]})["backend_parameters"] == ["--ctx-size=8192"]
    sglang = {"backend": "SGLang", "backend_parameters": ["--tp", "2"]}  # SGLang's --tp is --tp-size
    assert merge(sglang, {"backend_parameters": ["--tensor-parallel-size=4"]})["backend_parameters"] == [
        "--tensor-parallel-size=4"]
    custom = {"backend": "custom", "backend_parameters": ["-tp", "2"]}  # an engine gsg does not know: no aliases
    assert merge(custom, {"backend_parameters": ["--tensor-parallel-size=4"]})["backend_parameters"] == [
        "-tp", "2", "--tensor-parallel-size=4"]


OVERLAID = (TWO_GPU_VLLM_SPEC
            + 'backend_parameters: ["--max-num-seqs", "16", "--max-model-len", "4096", "--enforce-eager"]\n')


@pytest.mark.parametrize("patch", ['["--max-model-len=8192"]', '["--max-model-len", "8192"]',
                                   '["--max-model-len 8192"]'])
def test_a_spec_valid_alone_stays_valid_with_an_overlay_that_changes_one_flag(gsg, tmp_path, patch):
    """Both files valid alone; merged, the base's `4096` was left as a stray value (GSG016 error: the engine
    refuses it) or the overlay's `8192` followed --enforce-eager (GSG016 error). Now the overlay's value is read."""
    (tmp_path / "specs" / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "specs" / "a.yaml").write_text(OVERLAID)
    (tmp_path / "specs" / "overlays" / "prod" / "a.yaml").write_text(f"name: m\nbackend_parameters: {patch}\n")
    result = gsg("validate", "specs", "--fleet", str(REPO / "examples" / "fleet.yaml"), "--offline", "--overlay",
                 "prod", "-o", "json", cwd=tmp_path)
    assert result.code == 0, result.out
    report = json.loads(result.out)
    assert [f["rule"] for f in report["findings"]] == []
    assert report["deployments"][0]["estimate"]["max_model_len"] == 8192
