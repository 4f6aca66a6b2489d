"""What benchmarks/fuzz.py found (round 15), each class pinned with its neighbours: a path written in a file that
no file can have (NUL, a lone surrogate, a name past NAME_MAX, a path past PATH_MAX); drift over a spec it could
not read; start-up log figures past any engine's; JSON numbers past Python's digit limit; a damaged saved plan;
a password in a malformed URL; a template that is not UTF-8. Each ends in one line naming the file, exit 1 (or a
note and the run going on, for a log), never an internal error."""

from __future__ import annotations

import json
import os
import time

import pytest
from support import FLEET, REPO

from gpustack_guard.adapters.files.regular_file import MAX_NAME_BYTES, MAX_PATH_BYTES, path_problem
from gpustack_guard.core.secrets import mask_url, url_secrets
from gpustack_guard.core.verify.logparse import MAX_LOG_FIGURE, _number

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()


def _one_error_line(result, started: float) -> str:
    assert time.process_time() - started < 2.0
    assert result.code == 1, (result.out, result.err)
    assert "Traceback" not in result.out + result.err and "internal error" not in result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


# --- a path no file can have ----------------------------------------------------------------------------------
UNUSABLE = {  # the YAML of the value, the reason
    '"a\\0b"': "the path holds a NUL character",
    "x" * (MAX_NAME_BYTES + 1): f"a name in the path is {MAX_NAME_BYTES + 1} bytes long (at most {MAX_NAME_BYTES})",
    "/".join(["x" * 200] * 21): f"the path is 4,220 bytes long (at most {MAX_PATH_BYTES:,})",
}


def test_path_problem_passes_the_longest_usable_path():
    assert path_problem("x" * MAX_NAME_BYTES) is None
    assert path_problem("/".join(["x" * 200] * 20) + "/" + "y" * 75) is None  # 4,095 bytes
    assert path_problem("/".join(["x" * 200] * 20) + "/" + "y" * 76) == "the path is 4,096 bytes long (at most 4,095)"
    # YAML refuses an escaped lone surrogate itself; a flag or a JSON file can still hold one
    assert path_problem("a\ud800b") == "the path holds a character no file name can (a lone UTF-16 surrogate)"
    assert path_problem("\u00e9" * 127) is None and path_problem("\u00e9" * 128) is not None  # bytes, not characters


@pytest.mark.parametrize("key", ["api-key-file", "ca-bundle", "fleet", "overlay"])
@pytest.mark.parametrize("value", sorted(UNUSABLE))
def test_a_context_path_no_file_can_have_is_one_line_at_its_place(gsg, tmp_path, monkeypatch, key, value):
    config = tmp_path / "config.yaml"
    config.write_text(f"contexts:\n  a:\n    server: http://127.0.0.1:9\n    {key}: {value}\n")
    monkeypatch.setenv("GSG_CONFIG", str(config))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    started = time.process_time()
    for args in (("validate", "specs", "--context", "a", "--offline"), ("config", "view")):
        line = _one_error_line(gsg(*args, cwd=tmp_path), started)
        column = len(key) + 7
        assert line == f"gsg: error: config.yaml:4:{column}: context 'a': `{key}` is not usable: {UNUSABLE[value]}"


@pytest.mark.parametrize("key", ["fleet", "rendered"])
@pytest.mark.parametrize("value", sorted(UNUSABLE))
def test_a_project_file_path_no_file_can_have_is_one_line_at_its_place(gsg, tmp_path, key, value):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / "specs" / "gsg.yaml").write_text(f"project: p\n{key}: {value}\n")
    started = time.process_time()
    line = _one_error_line(gsg("validate", "specs", "--offline", "--fleet", str(FLEET), cwd=tmp_path), started)
    assert line == f"gsg: error: specs/gsg.yaml:2:{len(key) + 3}: `{key}` is not a usable path: {UNUSABLE[value]}"


def test_an_overlay_flag_no_folder_can_have_is_one_line(gsg, tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    started = time.process_time()
    line = _one_error_line(gsg("validate", "specs", "--offline", "--overlay", "o" * 300, cwd=tmp_path), started)
    assert line == (f"gsg: error: overlay '{'o' * 80}' is not a folder name: a name in the path is 300 bytes long "
                    "(at most 255)")


# --- drift over a spec it could not read ------------------------------------------------------------------------
UNREAD = {  # what replaces the spec, the start of the one line
    "not UTF-8": (SPEC.encode().replace(b"kv_cache_dtype", b"\xf8kv_cache_dtype"),
                  "specs/llama-8b.yaml:19:1: GSG019 unreadable-file: cannot be read: not UTF-8 text: byte 0xF8"),
    "YAML syntax": (SPEC.encode() + b"oops: [\n", "specs/llama-8b.yaml:24:1: GSG001 yaml-syntax:"),
    "wrong type": (SPEC.encode().replace(b"replicas: 1", b"replicas: [1]"),
                   "specs/llama-8b.yaml:6:11: GSG002 schema:"),
    "empty": (b"# nothing yet\n", "specs/llama-8b.yaml:1:1: GSG018 empty-spec:"),
}


@pytest.mark.parametrize("case", sorted(UNREAD))
def test_drift_stops_at_a_spec_it_could_not_read_instead_of_calling_it_in_sync(gsg, fake, specs, case):
    data, start = UNREAD[case]
    (specs / "llama-8b.yaml").write_bytes(data)
    started = time.process_time()
    line = _one_error_line(gsg("drift", str(specs), "--offline"), started)
    assert line.startswith("gsg: error: " + start), line
    assert line.endswith("(drift cannot compare 1 unreadable spec file(s) with live: fix them, see gsg validate)")


def test_drift_still_compares_a_spec_whose_only_errors_are_its_memory(gsg, fake, specs):
    """The near miss: a spec that renders, with an error of the memory arithmetic, is compared as before."""
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("gpu_memory_utilization: 0.85", "gpu_memory_utilization: 0.99"))
    assert " error GSG" in gsg("validate", str(specs), "--fleet", str(FLEET), "--offline").out
    result = gsg("drift", str(specs), "--offline")
    assert result.code == 0 and "llama-8b (specs/llama-8b.yaml)" in result.out, result.err


# --- start-up log figures no engine prints ------------------------------------------------------------------------
def test_a_log_figure_past_the_bound_or_not_finite_is_not_read():
    assert _number(str(MAX_LOG_FIGURE), "int") == MAX_LOG_FIGURE
    assert _number(str(MAX_LOG_FIGURE + 1), "int") is None
    assert _number("9" * 400, "int") is None and _number("9" * 5000, "int") is None  # never int() of 5,000 digits
    assert _number("931322574.6", "GiB") == 999_999_999_983_380_096  # just under an exabyte: read
    assert _number("931322574.7", "GiB") is None
    assert _number("1e309", "GiB") is None and _number("1e309", "float") is None
    assert _number("61.84", "GiB") == 66_400_194_396 and _number("36,184", "int") == 36_184


LOG = (REPO / "tests" / "fixtures" / "logs" / "vllm" / "v0-qwen3-06b-h100-gmu080.log").read_text()


@pytest.mark.parametrize("old, new", [
    ("# cuda blocks: 36184", "# cuda blocks: " + "9" * 400),  # was: int() past Python's digit limit
    ("# cuda blocks: 36184", "# cuda blocks: 10000000000000000001"),  # was: an overflow in the estimate
    ("take 1.12GiB", "take " + "9" * 400 + ".12GiB"),  # was: int(round(inf))
    ("take 1.12GiB", "take 931322575.12GiB"),  # an exabyte
])
def test_verify_reads_a_log_with_an_absurd_figure_and_says_which_line(gsg, tmp_path, old, new):
    assert old in LOG
    (tmp_path / "start.log").write_text(LOG.replace(old, new, 1))
    result = gsg("verify", "--log", "start.log", "-m", "Qwen/Qwen3-0.6B", "--gpu-memory", "80GiB", "--offline",
                 cwd=tmp_path)
    assert result.code in (0, 1) and "internal error" not in result.err and "Traceback" not in result.err
    line = 5 if "GiB" in old else 6
    assert (f"line {line}: a figure past 1e+18 (bytes, tokens or blocks) or not finite was not read "
            "(MAX_LOG_FIGURE)") in result.out


# --- JSON numbers past Python's digit limit ---------------------------------------------------------------------
def test_a_json_number_of_5000_digits_is_one_line_naming_the_file(gsg, tmp_path):
    huge = "1" + "0" * 5000
    (tmp_path / "obs.json").write_text('{"kv_capacity_tokens": ' + huge + "}")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"hidden_size": ' + huge + "}")
    started = time.process_time()
    for args, shown in ((("advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", str(REPO / "workloads" / "chat.yaml"),
                          "--gpus", "1", "--gpu-memory", "24GiB", "--offline", "--observed", "obs.json"), "obs.json"),
                        (("estimate", "-m", "model/config.json", "--gpu-memory", "24GiB", "--offline"),
                         "model/config.json")):
        line = _one_error_line(gsg(*args, cwd=tmp_path), started)
        assert line.startswith(f"gsg: error: {shown}: ") and line.endswith(": a number of more than 4,300 digits")


# --- a damaged saved plan -----------------------------------------------------------------------------------------
@pytest.fixture
def saved_plan(gsg, fake, specs):
    assert gsg("plan", str(specs), "--offline", "--out", "plan.json").code == 0
    return json.loads((specs.parent / "plan.json").read_text())


DAMAGED = {  # a change to the saved plan, the reason
    "target a list": (lambda p: p.update(target=[]), "`target` is not an object"),
    "server a number": (lambda p: p["target"].update(server=7), "`server` is not text"),
    "specs a mapping": (lambda p: p.update(specs={"a": 1}), "`specs` is not a list of paths"),
    "specs of numbers": (lambda p: p.update(specs=[1]), "`specs` is not a list of paths"),
    "changes missing": (lambda p: p.pop("changes"), "`changes` is not a list"),
    "a change a string": (lambda p: p["changes"].__setitem__(0, "x"),
                          "change 1 is not an object with a `name` and an `action`"),
    "a change without its name": (lambda p: p["changes"][1].pop("name"),
                                  "change 2 is not an object with a `name` and an `action`"),
    "owner a list": (lambda p: p["changes"][0].update(owner=[1]), "change 1: `owner` or `live` is not an object"),
    "project a number": (lambda p: p.update(project=5), "`project` is not text"),
    "project not a name": (lambda p: p.update(project="a b"), "`project` 'a b' is not a project name"),
    "overlay with a NUL": (lambda p: p["target"].update(overlay="a\x00"),
                           "`target.overlay` is not an overlay name: the path holds a NUL character"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_saved_plan_is_one_line_naming_it(gsg, saved_plan, specs, case):
    change, reason = DAMAGED[case]
    change(saved_plan)
    (specs.parent / "plan.json").write_text(json.dumps(saved_plan))
    started = time.process_time()
    line = _one_error_line(gsg("apply", "plan.json", "--yes"), started)
    assert line == f"gsg: error: plan.json: not a gsg plan file: {reason} (save one with `gsg plan --out FILE`)"


@pytest.mark.parametrize("make, reason", [
    (lambda p: p.write_bytes(b'{"format_version": "1.0", "x": "\xff"}'), "not UTF-8 text"),
    (lambda p: p.write_text("[" * 5000 + "]" * 5000), "nested more than 64 levels deep"),
    (lambda p: os.mkfifo(p), "not a regular file (a FIFO)"),
    (lambda p: p.mkdir(), "not a regular file (a folder)"),
    (lambda p: p.symlink_to("/dev/zero"), "not a regular file (a character device)"),
])
def test_a_saved_plan_that_cannot_be_read_is_one_line_naming_it(gsg, fake, tmp_path, make, reason):
    make(tmp_path / "plan.json")
    started = time.process_time()
    line = _one_error_line(gsg("apply", "plan.json", "--yes", cwd=tmp_path), started)
    assert line == f"gsg: error: plan.json: not a readable plan file: {reason}"


# --- a password in a malformed URL ------------------------------------------------------------------------------
@pytest.mark.parametrize("url, shown, secrets", [
    ("https:/u:pw@gpustack.test/", "https:/gpustack.test/", ["pw"]),  # one slash
    ("https:///u:pw@gpustack.test/x", "https:///gpustack.test/x", ["pw"]),  # three
    ("https//u:pw@h/x", "https//h/x", ["pw"]),  # no colon
    ("u:pw@h", "h", ["pw"]),  # no scheme
    ("https:/ghp_0123456789abcdefghij0123456789abcdef@h", "https:/h",
     ["ghp_0123456789abcdefghij0123456789abcdef"]),  # a token as the user
    ("http://h/models/x@v1", "http://h/models/x@v1", []),  # the near miss: '@' in a well-formed URL's path stays
])
def test_user_info_of_a_malformed_url_is_masked(url, shown, secrets):
    assert mask_url(url) == shown
    assert url_secrets(url) == secrets


def test_a_context_server_with_one_slash_never_prints_its_password(gsg, tmp_path, monkeypatch):
    config = tmp_path / "config.yaml"
    config.write_text("contexts:\n  b:\n    server: https:/u:s3cr3t-pw@gpustack.test/\n")
    monkeypatch.setenv("GSG_CONFIG", str(config))
    result = gsg("config", "view", cwd=tmp_path)
    assert result.code == 1 and "s3cr3t-pw" not in result.out + result.err
    assert result.err == ("gsg: error: config.yaml:3: context 'b': server 'https:/gpustack.test/' has no scheme: "
                          "write http://HOST[:PORT] or https://HOST[:PORT]\n")


# --- a template that is not UTF-8 ---------------------------------------------------------------------------------
def test_a_template_that_is_not_utf8_stops_the_spec_instead_of_rendering_replacement_characters(gsg, tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / "tpl").mkdir()
    source = (REPO / "templates" / "vllm-hardened.yaml.j2").read_bytes()
    (tmp_path / "tpl" / "vllm-hardened.yaml.j2").write_bytes(source.replace(b"--kv-cache-dtype", b"--kv-\xffcache"))
    result = gsg("validate", "specs", "--offline", "--fleet", str(FLEET), "--templates", "tpl", cwd=tmp_path)
    assert result.code == 1
    assert ("specs/a.yaml:15:13: error GSG011 template [llama-8b]: template 'vllm-hardened' stopped in "
            "tpl/vllm-hardened.yaml.j2: template file tpl/vllm-hardened.yaml.j2 cannot be read: not UTF-8 text: "
            "byte 0xFF at line 8 (save the file as UTF-8)") in result.out
    listed = gsg("templates", "--templates", "tpl", "-o", "json", cwd=tmp_path)
    row = next(t for t in json.loads(listed.out)["templates"] if t["name"] == "vllm-hardened")
    assert row["summary"] == "(not read: not UTF-8 text: byte 0xFF at line 8 (save the file as UTF-8))"
    assert listed.code == 1 and listed.err == ("gsg: error: tpl/vllm-hardened.yaml.j2: not read: not UTF-8 text: "
                                               "byte 0xFF at line 8 (save the file as UTF-8)\n")


@pytest.mark.parametrize("broken, line, message", [
    (b"| default(0.88)", 6, "No filter named 'defaulx'."),  # found compiling the tree, after it parsed
    (b"is below(", 16, "unexpected '}', expected ')'"),  # the near neighbour: a syntax error, found parsing
])
def test_gsg_templates_lists_a_template_that_does_not_compile_as_not_parsing(gsg, tmp_path, broken, line, message):
    (tmp_path / "tpl").mkdir()
    source = (REPO / "templates" / "vllm-hardened.yaml.j2").read_bytes()
    assert broken in source
    mangled = b"| defaulx(0.88)" if broken.startswith(b"|") else b"is below(("
    (tmp_path / "tpl" / "vllm-hardened.yaml.j2").write_bytes(source.replace(broken, mangled, 1))
    listed = gsg("templates", "--templates", "tpl", "-o", "json", cwd=tmp_path)
    assert listed.code == 1 and listed.err == f"gsg: error: tpl/vllm-hardened.yaml.j2: does not parse: line {line}: " \
        f"{message}\n"
    row = next(t for t in json.loads(listed.out)["templates"] if t["name"] == "vllm-hardened")
    assert row["summary"] == f"(does not parse: line {line}: {message})"


def test_a_saved_plan_naming_a_deployment_nobody_has_is_the_plans_error_not_a_target_flags(gsg, saved_plan, specs):
    saved_plan["changes"][0]["name"] = "gone-model"
    (specs.parent / "plan.json").write_text(json.dumps(saved_plan))
    started = time.process_time()
    line = _one_error_line(gsg("apply", "plan.json", "--yes"), started)
    assert line == ("gsg: error: plan.json: 'gone-model' of the saved plan matches no spec and no live model now; "
                    "plan again")
    assert gsg("apply", str(specs), "--yes", "--target", "gone-model").err == \
        "gsg: error: --target gone-model matches no spec and no live model\n"  # the flag's own error is unchanged


# --- render --check against a committed file that cannot be read -------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda p, good: p.write_bytes(good.replace(b"llama-8b", b"llama-\xff8b", 1)),  # not UTF-8
    lambda p, good: p.write_bytes(b"\xff\xfe" + good.decode().encode("utf-16-le")),  # UTF-16
    lambda p, good: p.write_bytes(good * 3),  # larger than the text could be: read no further
    lambda p, good: os.mkfifo(p),
    lambda p, good: p.mkdir(),
    lambda p, good: p.symlink_to("/dev/zero"),
])
def test_render_check_calls_a_committed_file_it_cannot_read_stale(gsg, tmp_path, make):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    assert gsg("render", "specs", "--offline", "--out", "good.yaml", cwd=tmp_path).code == 0
    make(tmp_path / "rendered.yaml", (tmp_path / "good.yaml").read_bytes())
    started = time.process_time()
    line = _one_error_line(gsg("render", "specs", "--offline", "--out", "rendered.yaml", "--check", cwd=tmp_path),
                           started)
    assert line == "gsg: rendered.yaml is stale: run `gsg render ... --out rendered.yaml` and commit it"


def test_render_check_still_accepts_the_committed_file_with_windows_line_ends(gsg, tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    assert gsg("render", "specs", "--offline", "--out", "rendered.yaml", cwd=tmp_path).code == 0
    path = tmp_path / "rendered.yaml"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert gsg("render", "specs", "--offline", "--out", "rendered.yaml", "--check", cwd=tmp_path).code == 0
