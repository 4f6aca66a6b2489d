"""YAML 1.1 readings of unquoted values (round 21): gsg reads specs as PyYAML does (YAML 1.1), editors' schema
checks read YAML 1.2. An unquoted number the two read differently (`1:30`: 90 or the text, `010`: 8 or 10) is a
GSG002 error at its line, in validate and render alike; a text field that YAML read as a boolean, number or null
(`name: no`) says which word it was and to quote it. Env values are never shown."""

from __future__ import annotations

import json

import pytest
from support import FLEET, REPO

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()


def _spec(tmp_path, old: str, new: str, newline: str = "\n"):
    assert old in SPEC
    path = tmp_path / "a.yaml"
    path.write_bytes(SPEC.replace(old, new, 1).replace("\n", newline).encode())
    return path


def _validate(gsg, path, *extra):
    return gsg("validate", str(path), "--fleet", str(FLEET), "--offline", *extra)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_base_60_replicas_is_an_error_at_its_line_not_90_replicas(gsg, tmp_path, newline):
    # before: validate said GSG022 "90 replica(s) x 1 GPU(s) need 90 GPUs" and render wrote `replicas: 90`, exit 0
    path = _spec(tmp_path, "replicas: 1", "replicas: 1:30", newline)
    result = _validate(gsg, path)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        f"{path}:6:11: error GSG002 schema [llama-8b]: 'replicas': '1:30' is a base-60 number in YAML 1.1, so gsg "
        "and GPUStack read 90, while YAML 1.2 tools (editors) read the text '1:30'")
    assert "fix: write the number meant in plain decimal, or quote the value if text is meant" in result.out
    rendered = gsg("render", str(path), "--offline", "--out", str(tmp_path / "out.yaml"))
    assert rendered.code == 1 and "'replicas': '1:30' is a base-60 number" in rendered.err
    assert not (tmp_path / "out.yaml").exists()


def test_a_leading_zero_in_a_template_var_is_an_error_naming_both_readings(gsg, tmp_path):
    path = _spec(tmp_path, "max_num_seqs: 64", "max_num_seqs: 010")
    result = _validate(gsg, path)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        f"{path}:18:19: error GSG002 schema [llama-8b]: 'guard.vars.max_num_seqs': '010' is a base-8 number (its "
        "leading zero) in YAML 1.1, so gsg and GPUStack read 8, while YAML 1.2 tools (editors) read 10")


def test_a_base_60_text_field_is_one_finding_not_two(gsg, tmp_path):
    path = _spec(tmp_path, "name: llama-8b", "name: 1:30")
    result = _validate(gsg, path)
    assert result.code == 1
    assert [line for line in result.out.splitlines() if " error " in line] == [
        f"{path}:3:7: error GSG002 schema: 'name': '1:30' is a base-60 number in YAML 1.1, so gsg and GPUStack "
        "read 90, while YAML 1.2 tools (editors) read the text '1:30'"]


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github", "junit"])
def test_an_env_value_read_as_a_number_is_never_shown(gsg, tmp_path, output):
    path = _spec(tmp_path, "guard:", "env:\n  API_KEY: 12:34:56\n  HF_TOKEN: 0777123\n  FLAG: 98765432101234\n"
                 "guard:")
    result = _validate(gsg, path, "-o", output)
    assert result.code == 1
    for shown in ("12:34:56", "45296", "0777123", "261715", "777123", "98765432101234"):
        assert shown not in result.out + result.err
    if output == "text":
        assert [line for line in result.out.splitlines() if " error " in line] == [
            f"{path}:15:12: error GSG002 schema [llama-8b]: 'env.API_KEY': the value is a base-60 number in YAML "
            "1.1, so gsg and GPUStack read another number, while YAML 1.2 tools (editors) read the text",
            f"{path}:16:13: error GSG002 schema [llama-8b]: 'env.HF_TOKEN': the value is a base-8 number (its "
            "leading zero) in YAML 1.1, so gsg and GPUStack read another number, while YAML 1.2 tools (editors) "
            "read a decimal number",
            f"{path}:17:9: error GSG002 schema [llama-8b]: 'env.FLAG': Input should be a valid string (YAML read "
            "the unquoted value as a number: quote it)"]
    if output == "json":
        assert json.loads(result.out)["summary"]["errors"] == 3


@pytest.mark.parametrize(("old", "new", "where", "said"), [
    ("name: llama-8b", "name: no", "3:7", "'name': Input should be a valid string (YAML read the unquoted 'no' as "
     "a boolean: quote it, 'no', for text)"),
    ("name: llama-8b", "name: On", "3:7", "'name': Input should be a valid string (YAML read the unquoted 'On' as "
     "a boolean: quote it, 'On', for text)"),
    ("name: llama-8b", "name: ~", "3:7", "'name': Input should be a valid string (YAML read the unquoted '~' as "
     "null: quote it, '~', for text)"),
    ("  - --enable-prefix-caching", "  - yes", "13:5", "'backend_parameters.0': Input should be a valid string "
     "(YAML read the unquoted 'yes' as a boolean: quote it, 'yes', for text)"),
    ("categories: [llm]", "categories: [1.5]", "7:14", "'categories.0' is '1.5', expected one of: llm, embedding, "
     "image, reranker, speech_to_text, text_to_speech, unknown (YAML read the unquoted '1.5' as a number: quote it, "
     "'1.5', for text)"),
    ("name: llama-8b", "name: 2024-01-02", "3:7", "'name': Input should be a valid string (YAML read the unquoted "
     "'2024-01-02' as a date: quote it, '2024-01-02', for text)"),
    ("source: huggingface", "source: off", "4:9", "'source' is 'False', expected one of: huggingface, model_scope, "
     "local_path (YAML read the unquoted 'off' as a boolean: quote it, 'off', for text)"),
])
def test_a_text_field_read_as_another_type_names_the_word_written(gsg, tmp_path, old, new, where, said):
    path = _spec(tmp_path, old, new)
    result = _validate(gsg, path)
    assert result.code == 1
    assert next(line for line in result.out.splitlines() if " error " in line).endswith(said)
    rule = "GSG004" if " expected one of: " in said else "GSG002"
    assert f"{path}:{where}: error {rule}" in result.out


@pytest.mark.parametrize("value", ["01", "0x1", "1_0", "'1:30'", "!!int 1"])
def test_numbers_with_one_reading_pass_as_before(gsg, tmp_path, value):
    # a leading zero that changes nothing, hex and underscores mean one number in either reading; a quoted
    # value is text: none of them is the new finding (1_0 is 10 replicas: a placement error, not GSG002)
    result = _validate(gsg, _spec(tmp_path, "replicas: 1", f"replicas: {value}"))
    assert "base-60" not in result.out and "base-8" not in result.out


BOOLEANS = "YAML 1.1 reads unquoted yes/no/on/off/true/false as booleans"
NUMBER = "YAML reads unquoted digits as a number"


@pytest.mark.parametrize(("key", "kind", "why"), [
    ("yes", "a boolean", BOOLEANS), ("Off", "a boolean", BOOLEANS), ("~", "null", "YAML reads an unquoted ~ or null as "
     "null"), ("7", "a number", NUMBER), ("1.5", "a number", NUMBER),
    # before (round 26): "'datetime.date(2024, 1, 1)': Keys should be strings" at line 3
    ("2024-01-01", "a date", "YAML 1.1 reads an unquoted YYYY-MM-DD as a date")])
def test_a_key_read_as_another_type_is_named_at_the_key(gsg, tmp_path, key, kind, why):
    # before: "'1': Keys should be strings" (True's number) at the value's column, and "'None': ..." at line 3
    path = _spec(tmp_path, "    max_output_tokens: 1000", f"    max_output_tokens: 1000\n    {key}: 5")
    result = _validate(gsg, path)
    assert result.code == 1
    assert [line for line in result.out.splitlines() if " error " in line] == [
        f"{path}:23:5: error GSG002 schema [llama-8b]: a key of guard.workload is {kind} (written '{key}'), not a "
        f"field name: {why}"]


def test_an_overlays_base_60_number_is_named_on_the_overlay_file(gsg, tmp_path):
    # the overlay's own numbers were not carried into the overlaid document: `replicas: 1:30` there was 90
    (tmp_path / "specs" / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "specs" / "a.yaml").write_text(SPEC.replace("name: llama-8b", "name: llama-8b\ndescription: 1:10"))
    (tmp_path / "specs" / "overlays" / "prod" / "a.yaml").write_text("name: llama-8b\nreplicas: 1:30\n")
    result = gsg("validate", "specs", "--overlay", "prod", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert result.code == 1
    assert [line for line in result.out.splitlines() if " error " in line] == [
        "specs/a.yaml:4:14: error GSG002 schema [llama-8b]: 'description': '1:10' is a base-60 number in YAML 1.1, "
        "so gsg and GPUStack read 70, while YAML 1.2 tools (editors) read the text '1:10'",
        "specs/overlays/prod/a.yaml:2:11: error GSG002 schema [llama-8b]: 'replicas': '1:30' is a base-60 number in "
        "YAML 1.1, so gsg and GPUStack read 90, while YAML 1.2 tools (editors) read the text '1:30'"]
