"""Issue 13: values a pull request can put in a spec are reported in a short line: a 20 MB name (refused before
parsing), a 60,000-character one (echoed capped), a hub URL as a repo id, a homoglyph in a backend name, an env
value with a NUL (never echoed: it may be a secret)."""

import json
import time

import pytest
from support import FLEET

HUGE = 20 * 1024 * 1024
LONG = 60_000  # under the loader's 65,536-character value limit (GSG017), so it reaches the schema check
HUGE_NAME = f"name: {'x' * HUGE}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n"
BIG_NAME = f"name: {'x' * LONG}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n"
SMALL_NAME = "name: x\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nreplicas: two\n"


def _run(gsg, tmp_path, text, output):
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    start = time.process_time()  # CPU time: gsg runs in-process here, and a loaded CI machine stretches wall time
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "-o", output, cwd=tmp_path)
    return result, time.process_time() - start


@pytest.mark.parametrize("output", ["text", "json", "sarif", "junit"])
def test_a_20_mb_name_is_one_input_limit_finding_before_parsing(gsg, tmp_path, output):
    result, seconds = _run(gsg, tmp_path, HUGE_NAME, output)
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert seconds < 2.0
    assert "GSG017" in result.out and "20,971,595 bytes" in result.out
    baseline, _ = _run(gsg, tmp_path, SMALL_NAME, output)  # SARIF carries every rule's help: compare, not count
    assert len(result.out) - len(baseline.out) < 5_000


@pytest.mark.parametrize("output", ["text", "json", "sarif", "junit"])
def test_a_long_name_gives_short_output_quickly(gsg, tmp_path, output):
    result, seconds = _run(gsg, tmp_path, BIG_NAME, output)
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert seconds < 2.0
    # the same document with a short (wrongly typed) field: what a reporter writes whatever the values
    baseline, _ = _run(gsg, tmp_path, SMALL_NAME, output)
    assert len(result.out) - len(baseline.out) < 5_000
    assert "60,000 chars)" in result.out  # JSON writes the ellipsis as \u2026
    assert "x" * 300 not in result.out


def test_the_text_line_of_a_long_name(gsg, tmp_path):
    result, _ = _run(gsg, tmp_path, BIG_NAME, "text")
    assert result.out == (f"spec.yaml:1:7: error GSG002 schema [{'x' * 256}…(60,000 chars)]: 'name': String "
                          "should have at most 255 characters\n")


def test_json_findings_carry_the_capped_name(gsg, tmp_path):
    result, _ = _run(gsg, tmp_path, BIG_NAME, "json")
    [found] = json.loads(result.out)["findings"]
    assert found["spec"] == "x" * 256 + "…(60,000 chars)"


def test_a_secret_env_value_with_a_nul_is_never_echoed(gsg, tmp_path):
    text = ("name: t\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nenv:\n"
            "  HF_TOKEN: \"hf_SECRETSECRETSECRET\\0tail\"\n")
    result, _ = _run(gsg, tmp_path, text, "text")
    assert result.code == 1
    assert "spec.yaml:5:13: error GSG002 schema [t]: env 'HF_TOKEN' has a NUL byte at character 22" in result.out
    assert "SECRET" not in result.out + result.err


def test_a_backend_with_a_bidi_override_is_escaped_in_the_line(gsg, tmp_path):
    text = ("name: t\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n"
            "backend: \"vLLM\\u202e\"\n")
    result, _ = _run(gsg, tmp_path, text, "text")
    assert "\u202e" not in result.out
    assert ("backend 'vLLM\\u202e' is not spelled as GPUStack expects: it differs from 'vLLM' in an invisible "
            "character U+202E right-to-left override") in result.out
