"""Round 26 of hostile input for the offline commands: the other files a pull request can change (fleet snapshots,
workload and contexts files, overlays, templates), each the case gsg mishandled before, with its neighbours."""

from __future__ import annotations

import pytest
from support import FLEET, REPO

from gpustack_guard.adapters.soak.workload import load_workload
from gpustack_guard.core.errors import GsgError

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()
FLEET_TEXT = FLEET.read_text()
GPU_C0 = "{index: 0, name: NVIDIA GeForce RTX 4090, memory: {total: 24564MiB}}"
FIX = "(write the number meant in plain decimal, or quote the value if text is meant)"

# --- numbers YAML 1.1 reads otherwise than YAML 1.2, in the settings files: the spec's GSG002, as one line -------


def _fleet_with(tmp_path, gpu: str) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    assert GPU_C0 in FLEET_TEXT
    (tmp_path / "fleet.yaml").write_text(FLEET_TEXT.replace(GPU_C0, gpu))


@pytest.mark.parametrize("gpu,says", [
    # each was read silently: an 80-byte or 15-byte GPU, then findings about a GPU of 0.00 GiB
    ("{index: 0, name: x, memory: {total: 1:20}}", "24:49: 'clusters.0.workers.2.gpus.0.memory.total': '1:20' is a "
     "base-60 number in YAML 1.1, so gsg reads 80, while YAML 1.2 tools (editors) read the text '1:20'"),
    ("{index: 0, name: x, memory: {total: 017}}", "24:49: 'clusters.0.workers.2.gpus.0.memory.total': '017' is a "
     "base-8 number (its leading zero) in YAML 1.1, so gsg reads 15, while YAML 1.2 tools (editors) read 17"),
    ("{index: 0, name: x, memory: {total: 24564MiB, used: 1:0:0}}", "24:65: 'clusters.0.workers.2.gpus.0.memory.used':"
     " '1:0:0' is a base-60 number in YAML 1.1, so gsg reads 3600, while YAML 1.2 tools (editors) read the text "
     "'1:0:0'"),
    # gpu-c:cuda:0 went missing (GSG020 at the spec) for a GPU 'gpu-c:cuda:15' nobody wrote
    ("{index: 010, name: x, memory: {total: 24564MiB}}", "24:21: 'clusters.0.workers.2.gpus.0.index': '010' is a "
     "base-8 number (its leading zero) in YAML 1.1, so gsg reads 8, while YAML 1.2 tools (editors) read 10"),
])
def test_a_fleet_number_yaml_1_1_reads_otherwise_is_one_line_at_its_place(gsg, tmp_path, gpu, says):
    _fleet_with(tmp_path, gpu)
    result = gsg("validate", "specs", "--fleet", "fleet.yaml", "--offline", cwd=tmp_path)
    assert (result.code, result.out) == (1, "")
    assert result.err == f"gsg: error: fleet.yaml:{says} {FIX}\n"


@pytest.mark.parametrize("total", ["25757220864", "0x5FF400000", "25_757_220_864", "+25757220864", "24564MiB"])
def test_numbers_both_yamls_read_alike_are_the_fleets_sizes(gsg, tmp_path, total):
    """The neighbours: hexadecimal, underscores and a sign keep their one value (24564 MiB) in both YAMLs."""
    _fleet_with(tmp_path, f"{{index: 0, name: NVIDIA GeForce RTX 4090, memory: {{total: {total}}}}}")
    result = gsg("validate", "specs", "--fleet", "fleet.yaml", "--offline", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (0, "", "gsg: 0 errors, 0 warnings, 0 notes in 1 spec (1 file)\n")


WORKLOAD = (REPO / "workloads" / "chat.yaml").read_text()


@pytest.mark.parametrize("written,says", [
    # advised for 80 and 8 requests in flight, the header saying so and nothing else
    ("1:20", "'concurrency': '1:20' is a base-60 number in YAML 1.1, so gsg reads 80, while YAML 1.2 tools (editors) "
     "read the text '1:20'"),
    ("010", "'concurrency': '010' is a base-8 number (its leading zero) in YAML 1.1, so gsg reads 8, while YAML 1.2 "
     "tools (editors) read 10"),
])
def test_a_workload_number_yaml_1_1_reads_otherwise_is_one_line(gsg, tmp_path, written, says):
    assert "concurrency: 48" in WORKLOAD
    (tmp_path / "w.yaml").write_text(WORKLOAD.replace("concurrency: 48", f"concurrency: {written}"))
    result = gsg("advise", "-m", "meta-llama/Llama-3.1-8B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory",
                 "48GiB", "--offline", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (1, "", f"gsg: error: w.yaml:6:14: {says} {FIX}\n")


def test_a_workload_of_plain_numbers_is_advised(gsg, tmp_path):
    (tmp_path / "w.yaml").write_text(WORKLOAD.replace("concurrency: 48", "concurrency: 1_0"))
    result = gsg("advise", "-m", "meta-llama/Llama-3.1-8B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory",
                 "48GiB", "--offline", cwd=tmp_path)
    assert result.code == 0 and "workloads: chat (10 x 2,100 tokens p95)" in result.out


@pytest.mark.parametrize("written,read", [("1:30", "reads 90, while YAML 1.2 tools (editors) read the text '1:30'"),
                                          ("030", "reads 24, while YAML 1.2 tools (editors) read 30")])
def test_a_context_timeout_yaml_1_1_reads_otherwise_is_one_line(gsg, tmp_path, monkeypatch, written, read):
    (tmp_path / "config.yaml").write_text(
        f"current-context: p\ncontexts:\n  p:\n    server: http://127.0.0.1:9\n    timeout: {written}\n")
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "config.yaml"))
    result = gsg("config", "get-contexts", cwd=tmp_path)
    base = "base-60 number" if ":" in written else "base-8 number (its leading zero)"
    assert (result.code, result.out) == (1, "")
    assert result.err == (f"gsg: error: config.yaml:5:14: 'contexts.p.timeout': '{written}' is a {base} in YAML 1.1, "
                          f"so gsg {read} {FIX}\n")


def test_a_soak_workload_number_yaml_1_1_reads_otherwise_is_refused(tmp_path):
    (tmp_path / "load.yaml").write_text("- {prompt_tokens: 6000, max_tokens: 0400}\n")
    with pytest.raises(GsgError) as raised:
        load_workload(str(tmp_path / "load.yaml"))
    assert str(raised.value).endswith(":1:37: '0.max_tokens': '0400' is a base-8 number (its leading zero) in YAML "
                                      f"1.1, so gsg reads 256, while YAML 1.2 tools (editors) read 400 {FIX}")


# --- an overlay patch's repeated key: silently the last one ------------------------------------------------------

OVERLAY = "specs/overlays/prod/o.yaml"


@pytest.mark.parametrize("patch,says", [
    # validate went on with replicas 3 (a GSG022 at the base spec's line), naming neither the overlay nor the repeat
    ("name: llama-8b\nreplicas: 2\nreplicas: 3\n", "3:1: key 'replicas' appears twice"),
    ("name: llama-8b\nguard:\n  vars:\n    max_num_seqs: 8\n    max_num_seqs: 9\n",
     "5:5: key 'guard.vars.max_num_seqs' appears twice"),
    # `exclude` (left alone) became `delete` (plan deletes the deployment) without a word
    ("name: llama-8b\n$patch: exclude\n$patch: delete\n", "3:1: key '$patch' appears twice"),
    ("name: llama-8b\nname: llama-8b\nreplicas: 0\n", "2:1: key 'name' appears twice"),
])
def test_a_key_an_overlay_patch_repeats_is_one_line_at_the_overlay(gsg, tmp_path, patch, says):
    (tmp_path / "specs" / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / OVERLAY).write_text(patch)
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "--overlay", "prod", cwd=tmp_path)
    assert (result.code, result.out) == (1, "")
    assert result.err == f"gsg: error: {OVERLAY}:{says}; YAML keeps only the last (remove one of them)\n"


@pytest.mark.parametrize("patch,code,first", [
    # a whole spec the overlay adds is checked as a spec: its repeat is GSG010, as before
    ("name: new\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nreplicas: 0\n"
     "replicas: 0\n", 1, f"{OVERLAY}:5:1: error GSG010 duplicate-key [new]: key 'replicas' appears twice; YAML keeps "
     "only the last"),
    # a key overriding one a merge brought in is plain YAML
    ("base: &b {replicas: 1}\n---\nname: llama-8b\nguard: {vars: {<<: {max_num_seqs: 8}, max_num_seqs: 32}}\n", None,
     None),
])
def test_overlay_neighbours_keep_their_reading(gsg, tmp_path, patch, code, first):
    (tmp_path / "specs" / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / OVERLAY).write_text(patch if code else patch.split("---\n")[1])
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "--overlay", "prod", cwd=tmp_path)
    if code:
        assert (result.code, result.out.splitlines()[0]) == (code, first)
    else:
        assert (result.code, result.out) == (0, ""), result.err


# --- a number a template renders: its text as written, not str() of what YAML 1.1 read --------------------------

TEMPLATED = ("name: a\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nbackend: vLLM\n"
             "backend_version: 0.11.0\ngpu_selector:\n  gpu_ids: [gpu-a:cuda:0]\nguard:\n  template: t\n")


def _templated(tmp_path, template: str) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(TEMPLATED)
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "t.yaml.j2").write_text(template)


def test_template_numbers_are_rendered_as_written(gsg, tmp_path):
    """`--max-num-seqs, 010` rendered --max-num-seqs=8 (vLLM's int() reads 10), env `A: 1:20` the text '80',
    `0x10` '16' and `1_000` '1000': values the template never wrote, sent to GPUStack."""
    _templated(tmp_path, "pinned: [--max-num-seqs, 010, --max-model-len, 4_096]\n"
                         "env: {A: 1:20, B: 1_000, C: 0x10, D: .5, E: 7, F: 0.90}\n")
    result = gsg("render", "specs", "--offline", "--templates", "tpl", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "backend_parameters:\n- --max-num-seqs=010\n- --max-model-len=4_096\n" in result.out
    assert "env:\n  A: '1:20'\n  B: '1_000'\n  C: '0x10'\n  D: '.5'\n  E: '7'\n  F: '0.90'\n" in result.out


@pytest.mark.parametrize("pinned,says", [
    ("[--max-num-seqs, 1:20]", "renders --max-num-seqs '1:20': not a whole number; vLLM 0.11.0 (argparse int) "
     "accepts a whole number ≥ 1"),
    ("[--max-num-seqs, 0x10]", "renders --max-num-seqs '0x10': not a whole number; vLLM 0.11.0 (argparse int) "
     "accepts a whole number ≥ 1"),
])
def test_a_template_number_the_engine_refuses_is_its_finding(gsg, tmp_path, pinned, says):
    """It was --max-num-seqs=80 and =16 before, both accepted; vLLM's int() refuses the text the template wrote."""
    _templated(tmp_path, f"pinned: {pinned}\n")
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "--templates", "tpl", cwd=tmp_path)
    assert result.code == 1
    assert result.out.splitlines() == [f"specs/a.yaml:9:13: error GSG016 argument-value [a]: template 't' {says}"]


# --- a soak workload's token counts: int() of what YAML read made 1.9 and true whole numbers ----------------------

TYPES = "entry 1: prompt_tokens and max_tokens must be integers, weight a number"


@pytest.mark.parametrize("entry", [
    "{prompt_tokens: 1.9, max_tokens: 8}",  # was 1 prompt token
    "{prompt_tokens: 8, max_tokens: true}",  # was 1 token of output
    "{prompt_tokens: 8, max_tokens: 8, weight: true}",  # was weight 1.0
    "{prompt_tokens: 8, max_tokens: 8.5}",
])
def test_a_soak_token_count_that_is_not_a_whole_number_is_refused(tmp_path, entry):
    (tmp_path / "load.yaml").write_text(f"- {entry}\n")
    with pytest.raises(GsgError) as raised:
        load_workload(str(tmp_path / "load.yaml"))
    assert str(raised.value) == f"{tmp_path / 'load.yaml'}: {TYPES}"


def test_soak_token_counts_written_as_whole_numbers_are_read(tmp_path):
    (tmp_path / "load.yaml").write_text("- {prompt_tokens: 8.0, max_tokens: '16', weight: 2}\n")
    [entry] = load_workload(str(tmp_path / "load.yaml"))
    assert (entry.prompt_tokens, entry.max_tokens, entry.weight) == (8, 16, 2.0)


# --- a flag name holding a non-ASCII letter: no engine reads it, and validate passed it --------------------------


def _with_parameters(tmp_path, parameters: str) -> None:
    (tmp_path / "specs").mkdir()
    assert "  - --enable-prefix-caching" in SPEC
    (tmp_path / "specs" / "a.yaml").write_text(SPEC.replace("  - --enable-prefix-caching", parameters))


@pytest.mark.parametrize("parameter,says", [
    # each passed validate (exit 0); vLLM refuses the unrecognized argument and the deployment never starts
    ("--max-num-s\u0435qs=8", "U+0435 CYRILLIC SMALL LETTER IE at character 12 of '--max-num-s\\u0435qs=8'"),
    ("--max-m\u03bfdel-len=4096", "U+03BF GREEK SMALL LETTER OMICRON at character 8 of '--max-m\\u03bfdel-len=4096'"),
    ("--max-num-seqs\uff1d8", "U+FF1D FULLWIDTH EQUALS SIGN at character 15 of '--max-num-seqs\\uff1d8'"),
    ("--enable-prefix-cach\u00edng", "U+00ED LATIN SMALL LETTER I WITH ACUTE at character 21 of "
     "'--enable-prefix-cach\\xedng'"),
])
def test_a_flag_name_with_a_non_ascii_letter_is_its_only_finding(gsg, tmp_path, parameter, says):
    _with_parameters(tmp_path, f"  - {parameter}")
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert result.code == 1
    assert result.out.splitlines() == [
        f"specs/a.yaml:13:5: error GSG016 argument-value [llama-8b]: {says} is not ASCII, as every engine flag is: "
        "the engine reads no such flag and refuses to start; type the flag in ASCII"]


@pytest.mark.parametrize("parameters", ["  - --chat-template=/t/\u00fc.jinja", "  - --chat-template\n  - /t/\u00fc.jinja",
                                        "  - --chat-template /t/\u00fc.jinja"])
def test_a_non_ascii_value_of_an_ascii_flag_is_no_finding(gsg, tmp_path, parameters):
    _with_parameters(tmp_path, parameters)
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert (result.code, result.out) == (0, "")
