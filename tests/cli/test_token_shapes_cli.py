"""A token pasted where no name says "secret" (a plain flag's value, a label, an engine log line) is masked by its
shape in every output: validate's text, JSON and SARIF, `gsg verify --log`, `gsg render` (stdout and --out);
the message still names the flag and the file:line. --show-secrets shows what the spec holds."""

from __future__ import annotations

import json

import pytest
import yaml
from support import FLEET, REPO

from gpustack_guard.core.secrets import MASK

R36 = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
TOKENS = {  # built from parts: a literal token in a source file would trip secret scanners on a push
    "huggingface": "hf" + "_" + R36[:34],
    "openai": "sk" + "-proj-" + R36 + "_-" + R36 + "T3BlbkFJ" + R36,
    "github": "gh" + "p_" + R36,
    "github-fine-grained": "github" + "_pat_" + "11ABCDEFG0" + R36[:12] + "_" + R36 + R36[:23],
    "slack": "xo" + "xb-" + "123456789012-1234567890123-" + R36[:24],
    "aws": "AK" + "IA" + "IOSFODNN7EXAMPLE",
    "jwt": "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
EXAMPLE = REPO / "examples" / "negative" / "GSG016-argument-value" / "spec.yaml"


def _spec(tmp_path, argument: str, **extra) -> None:
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["backend_parameters"] = [argument]
    spec.update(extra)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


@pytest.mark.parametrize("name", TOKENS)
def test_validate_masks_a_token_in_a_plain_flag_in_text_json_and_sarif(gsg, tmp_path, name):
    token = TOKENS[name]
    _spec(tmp_path, f"--max-model-len={token}")
    line = yaml.safe_dump(yaml.safe_load(EXAMPLE.read_text()), sort_keys=False).count("\n")  # the argument's line
    text = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)
    assert text.code == 1
    # the message cuts a long value at 40 characters ("…"): the head left is masked as well
    assert f"spec.yaml:{line}:" in text.out and f"GSG016 argument-value [bad-value]: --max-model-len '{MASK}" \
        in text.out, text.out
    as_json = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "json", cwd=tmp_path)
    finding = next(f for f in json.loads(as_json.out)["findings"] if f["rule_id"] == "GSG016")
    assert finding["line"] == line and f"--max-model-len '{MASK}" in finding["message"]
    sarif = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "sarif", cwd=tmp_path)
    assert f"--max-model-len '{MASK}" in json.loads(sarif.out)["runs"][0]["results"][0]["message"]["text"]
    report = tmp_path / "report.sarif"
    gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--report", f"sarif={report}", cwd=tmp_path)
    for shown in (text.out, text.err, as_json.out, sarif.out, report.read_text()):
        assert token not in shown and token[:12] not in shown


@pytest.mark.parametrize("name", TOKENS)
def test_render_masks_a_token_in_a_plain_flag_and_a_description_unless_shown(gsg, tmp_path, name):
    token = TOKENS[name]
    _spec(tmp_path, f"--revision={token}", description=f"owner {token}")
    shown = gsg("render", "spec.yaml", "--offline", cwd=tmp_path)
    assert shown.code == 0, shown.err
    assert token not in shown.out and f"--revision={MASK}" in shown.out and f"owner {MASK}" in shown.out
    gsg("render", "spec.yaml", "--offline", "--out", "rendered.yaml", cwd=tmp_path)
    written = (tmp_path / "rendered.yaml").read_text()
    assert token not in written and f"--revision={MASK}" in written
    assert gsg("render", "spec.yaml", "--offline", "--out", "rendered.yaml", "--check", cwd=tmp_path).code == 0
    revealed = gsg("render", "spec.yaml", "--offline", "--show-secrets", cwd=tmp_path)
    assert f"--revision={token}" in revealed.out


@pytest.mark.parametrize("name", TOKENS)
@pytest.mark.parametrize("output", ["text", "json"])
def test_verify_log_masks_a_token_in_an_engine_line(gsg, tmp_path, name, output):
    token = TOKENS[name]
    log = (REPO / "tests" / "fixtures" / "logs" / "vllm" / "v0.6.4-llama31-8b-rtx3090-29k-refused.log").read_text()
    path = tmp_path / "engine.log"
    path.write_text(log.rstrip("\n") + f" (asked by {token})\n")
    result = gsg("verify", "--log", str(path), "-m", "meta-llama/Llama-3.1-8B-Instruct", "--backend-version",
                 "0.6.4", "-o", output)
    assert token not in result.out + result.err
    assert f"(asked by {MASK}" in result.out, result.out  # whole, or its head where the line is cut


def test_the_committed_rendered_example_is_unchanged(gsg, tmp_path):
    gsg("render", "specs/", "--offline", "--out", str(tmp_path / "specs.yaml"), cwd=REPO)
    assert (tmp_path / "specs.yaml").read_bytes() == (REPO / "examples" / "rendered" / "specs.yaml").read_bytes()


PASSWORD = "Pa55" + "word9"  # built from parts, as TOKENS
URL = f"https://user:{PASSWORD}@example.com/x?token=abc123"


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github", "junit"])
def test_validate_masks_a_url_password_in_a_plain_flag_in_every_format(gsg, tmp_path, output):
    # no token shape: the URL's user info and token query are what say "secret"; the finding keeps host and path
    _spec(tmp_path, f"--max-model-len={URL}")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", output, cwd=tmp_path)
    assert result.code == 1
    assert PASSWORD not in result.out + result.err and "abc123" not in result.out + result.err
    assert "--max-model-len 'https://example.com/x?token=********'" in result.out.replace("&#x27;", "'") \
        .replace("&apos;", "'").replace("\\u0027", "'"), result.out


def test_render_masks_a_url_password_in_a_plain_flag_unless_shown(gsg, tmp_path):
    _spec(tmp_path, f"--tokenizer={URL}")
    masked = "--tokenizer=https://example.com/x?token=" + MASK
    for extra in ((), ("-o", "json")):
        shown = gsg("render", "spec.yaml", "--offline", *extra, cwd=tmp_path)
        assert shown.code == 0, shown.err
        assert PASSWORD not in shown.out and "abc123" not in shown.out and masked in shown.out, shown.out
    assert f"#   spec: {masked}" in gsg("render", "spec.yaml", "--offline", cwd=tmp_path).out
    gsg("render", "spec.yaml", "--offline", "--out", "rendered.yaml", cwd=tmp_path)
    written = (tmp_path / "rendered.yaml").read_text()
    assert PASSWORD not in written and f"- {masked}\n" in written
    revealed = gsg("render", "spec.yaml", "--offline", "--show-secrets", cwd=tmp_path)
    assert f"- --tokenizer={URL}\n" in revealed.out


def test_a_plain_flag_given_twice_with_a_url_password_names_both_masked(gsg, tmp_path):
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["backend_parameters"] = [f"--tokenizer={URL}", "--tokenizer=https://example.com/y"]
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)
    assert PASSWORD not in result.out + result.err
    assert ("spec.yaml:11:3: warning GSG014 duplicate-argument [bad-value]: --tokenizer is given twice "
            f"('https://example.com/x?token={MASK}' and 'https://example.com/y'); the last one wins") in result.out, \
        result.out
