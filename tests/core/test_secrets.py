"""Secrets (issue 13): env values from the process environment whatever their name, literal values by a broad
rule and guard.secrets, secret backend flags, and URL user info never printed by any command; --show-secrets
shows them."""

import json
import re

import pytest
import yaml
from support import REPO

from gpustack_guard.core.secrets import (
    MASK,
    is_secret_flag,
    is_secret_key,
    is_secret_value,
    mask_args,
    secret_arg_values,
)

# Every value here must be absent from everything gsg prints or writes without --show-secrets.
SECRET_VALUES = {
    "DB_PASS": "db-pass-value-1",
    "LICENSE_KEY": "license-key-value-2",
    "ENCRYPTION_KEY": "encryption-key-value-3",
    "WANDB_KEY": "wandb-key-value-4",
    "BEARER": "bearer-value-5",
    "DATABASE_URL": "postgres://app:dburl-password-6@db.internal:5432/app",
    "CUSTOM_THING": "custom-listed-value-7",  # named in guard.secrets
}
FROM_ENVIRONMENT = "plain-name-env-value-8"  # read through ${PLAIN_SETTING}: a secret whatever its name
FLAG_SECRETS = ["hf_flagtoken_value_9", "first-token-value-10", "second-token-value-11", "license-flag-value-12"]
ALL = list(SECRET_VALUES.values()) + [FROM_ENVIRONMENT, "dburl-password-6"] + FLAG_SECRETS


@pytest.mark.parametrize("name", ["DB_PASS", "LICENSE_KEY", "ENCRYPTION_KEY", "WANDB_KEY", "BEARER", "HF_TOKEN",
                                  "HF_API_KEY", "HF_HUB_TOKEN",
                                  "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "MY_APIKEY",
                                  "SMTP_PASSWORD", "TLS_CERT", "PRIVATE_DATA", "OAUTH_CLIENT", "api-key"])
def test_secret_names(name):
    assert is_secret_key(name)


@pytest.mark.parametrize("name", ["TOKENIZERS_PARALLELISM", "LOG_LEVEL", "CUDA_VISIBLE_DEVICES", "PASSTHROUGH",
                                  "VLLM_ATTENTION_BACKEND", "NCCL_DEBUG", "PWD", "KEYBOARD_LAYOUT", "HF_HOME",
                                  "HF_HUB_CACHE", "HF_TOKEN_PATH", "HF_HUB_OFFLINE"])
def test_ordinary_names(name):
    assert not is_secret_key(name)


def test_secret_values_whatever_their_name():
    assert is_secret_value("postgres://app:pw@db/app") and is_secret_value("https://u:p@host/x")
    assert is_secret_value("Bearer abc.def") and is_secret_value("hf_abcdefghijkl")
    assert not is_secret_value("https://huggingface.co/x") and not is_secret_value("user@example.com")
    assert not is_secret_value("postgres://app@db/app")  # a user without a password


@pytest.mark.parametrize("flag", ["hf-token", "api-key", "token", "password", "auth-token", "private-key"])
def test_secret_flags(flag):
    assert is_secret_flag(flag)


@pytest.mark.parametrize("flag", ["max-num-batched-tokens", "tokenizer", "tokenizer-mode", "kv-cache-dtype",
                                  "ssl-keyfile", "skip-tokenizer-init", "enable-prefix-caching"])
def test_ordinary_flags(flag):
    assert not is_secret_flag(flag)


def test_mask_args_in_both_forms():
    params = ["--hf-token=abc12345", "--api-key", "k-1234567", "--max-num-batched-tokens", "8192", "--enforce-eager",
              "--license", "lic-1234"]
    assert mask_args(params, ["license"]) == ["--hf-token=" + MASK, "--api-key", MASK, "--max-num-batched-tokens",
                                              "8192", "--enforce-eager", "--license", MASK]
    assert secret_arg_values(params, ["license"]) == ["abc12345", "k-1234567", "lic-1234"]
    assert mask_args(["--token", "--enforce-eager"]) == ["--token", "--enforce-eager"]  # no value to hide
    assert mask_args(None) is None


def test_mask_args_hides_every_value_of_a_secret_flag_that_takes_several():
    """vLLM's --api-key is a list from 0.10.1 (nargs='+'): each item up to the next flag is a key."""
    params = ["--api-key", "k-1234567", "k-7654321", "--max-num-seqs", "8"]
    assert mask_args(params) == ["--api-key", MASK, MASK, "--max-num-seqs", "8"]
    assert secret_arg_values(params) == ["k-1234567", "k-7654321"]


def test_mask_args_masks_a_url_password_or_token_in_a_plain_flag():
    # --tokenizer names no secret, but a URL with user info or a token query carries one: masked in both forms,
    # the host and path kept (they say where); a plain URL and a plain value stay as written
    params = ["--tokenizer=https://user:Pa55word9@example.com/x?token=abc123", "--download-dir",
              "s3://k3y:S3cr3tV4lue@bucket/m", "--served-model-name=https://example.com/x", "--max-model-len=8192"]
    assert mask_args(params) == ["--tokenizer=https://example.com/x?token=" + MASK, "--download-dir",
                                 "s3://bucket/m", "--served-model-name=https://example.com/x", "--max-model-len=8192"]
    assert secret_arg_values(params) == ["Pa55word9", "abc123", "S3cr3tV4lue"]
    # a Bearer header pasted as a value is no URL: all of it is masked
    assert mask_args(["--header=Bearer abcdef123456"]) == ["--header=" + MASK]
    assert secret_arg_values(["--header=Bearer abcdef123456"]) == ["Bearer abcdef123456"]


SPEC = {
    "name": "secretive", "source": "huggingface", "huggingface_repo_id": "meta-llama/Llama-3.1-8B-Instruct",
    "gpu_selector": {"gpu_ids": ["gpu-c:cuda:0", "gpu-c:cuda:1"]}, "backend": "vLLM", "backend_version": "0.11.0",
    "backend_parameters": ["--tensor-parallel-size=2", "--max-model-len=8192", f"--hf-token={FLAG_SECRETS[0]}",
                           "--token", FLAG_SECRETS[1], "--token", FLAG_SECRETS[2],
                           f"--license={FLAG_SECRETS[3]}"],
    "env": {**SECRET_VALUES, "PLAIN_SETTING": "${PLAIN_SETTING}", "LOG_LEVEL": "info"},
    "guard": {"secrets": ["CUSTOM_THING", "--license"]},
}


@pytest.fixture
def secretive(tmp_path, monkeypatch):
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "secretive.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    (folder / "gsg.yaml").write_text("project: secrets-test\n")
    monkeypatch.setenv("PLAIN_SETTING", FROM_ENVIRONMENT)
    monkeypatch.chdir(tmp_path)
    return folder


def leaks(*texts: str) -> list[str]:
    return [value for value in ALL if any(value in text for text in texts)]


def test_render_masks_and_show_secrets_shows(gsg, secretive):
    masked = gsg("render", str(secretive), "-o", "json")
    assert masked.code == 0, masked.err
    assert leaks(masked.out, masked.err) == []
    document = json.loads(masked.out)[0]
    assert document["env"]["LOG_LEVEL"] == "info" and document["env"]["PLAIN_SETTING"] == MASK
    assert f"--hf-token={MASK}" in document["backend_parameters"]
    shown = gsg("render", str(secretive), "-o", "json", "--show-secrets")
    # every one, the env-derived value too (the first --token is not sent: the last one given wins)
    assert shown.code == 0 and leaks(shown.out) == [v for v in ALL if v != FLAG_SECRETS[1]]
    assert json.loads(shown.out)[0]["env"]["PLAIN_SETTING"] == FROM_ENVIRONMENT


def test_the_duplicate_argument_warning_masks_its_values(gsg, secretive):
    result = gsg("validate", str(secretive), "--fleet", str(REPO / "examples" / "fleet.yaml"))
    assert f"warning GSG014 duplicate-argument [secretive]: --token is given twice ('{MASK}' and '{MASK}')" \
        in result.out
    assert leaks(result.out, result.err) == []


def test_plan_apply_drift_and_plan_json_never_show_them(gsg, fake, secretive, tmp_path, monkeypatch):
    monkeypatch.setenv("GSG_URL", "http://gsg:url-password-13@gpustack.test")
    plan_file = tmp_path / "plan.json"
    outputs = []
    for argv in (["plan", str(secretive), "--out", str(plan_file)], ["plan", str(secretive), "-o", "json"],
                 ["apply", str(secretive), "--yes"]):
        result = gsg(*argv)
        assert result.code == 0, (argv, result.err)
        outputs += [result.out, result.err]
    live = fake.by_name("secretive")
    assert live["env"]["DB_PASS"] == SECRET_VALUES["DB_PASS"] and live["env"]["PLAIN_SETTING"] == FROM_ENVIRONMENT
    assert f"--hf-token={FLAG_SECRETS[0]}" in live["backend_parameters"]  # GPUStack gets the real values
    assert json.loads(plan_file.read_text())["server"] == "http://gpustack.test"
    # a hand edit of every secret on the server: drift and plan show that they changed, not their values
    live["env"] = {k: v + "-edited" for k, v in live["env"].items()}
    live["backend_parameters"] = [p.replace("value", "edited") for p in live["backend_parameters"]]
    for argv in (["drift", str(secretive)], ["drift", str(secretive), "-o", "json"], ["plan", str(secretive)]):
        result = gsg(*argv)
        outputs += [result.out, result.err]
        assert "env" in result.out and "backend_parameters" in result.out, argv
    outputs.append(plan_file.read_text())
    assert leaks(*outputs) == [] and not any("url-password-13" in o or "edited-" in o for o in outputs)


def test_export_writes_no_secret_and_says_what_it_masked(gsg, fake, tmp_path):
    fake.create_unmanaged("chat", env={"DB_PASS": SECRET_VALUES["DB_PASS"], "DATABASE_URL":
                                       SECRET_VALUES["DATABASE_URL"], "LOG": "info"},
                          backend_parameters=[f"--hf-token={FLAG_SECRETS[0]}", "--max-model-len=4096"])
    result = gsg("export", "--out", str(tmp_path / "adopted"))
    assert result.code == 0, result.err
    written = yaml.safe_load((tmp_path / "adopted" / "chat.yaml").read_text())
    assert written["env"] == {"DB_PASS": "${DB_PASS}", "DATABASE_URL": "${DATABASE_URL}", "LOG": "info"}
    assert written["backend_parameters"] == [f"--hf-token={MASK}", "--max-model-len=4096"]
    assert f"gsg: chat: secret backend argument values written as {MASK}" in result.err
    assert leaks(result.out, result.err, (tmp_path / "adopted" / "chat.yaml").read_text()) == []


def test_a_url_password_is_never_printed_in_errors_or_the_snapshot(gsg, fake, tmp_path, monkeypatch):
    monkeypatch.setenv("GSG_URL", "http://admin:url-password-14@gpustack.test")
    snap = tmp_path / "fleet.yaml"
    assert gsg("snapshot", "--out", str(snap)).code == 0
    text = snap.read_text()
    assert "url-password-14" not in text and "admin@" not in text
    assert text.startswith("# gsg fleet snapshot of http://gpustack.test (GPUStack")
    assert "server: http://gpustack.test" in text
    fake.version = "v0.7.1"
    refused = gsg("snapshot", "--out", str(snap))
    assert refused.code == 1 and refused.err.startswith("gsg: error: http://gpustack.test: GPUStack v0.7.1")


def test_the_pinned_conflict_error_masks_a_secret_flag(gsg, tmp_path, monkeypatch):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "with-token.yaml.j2").write_text("pinned:\n  - --hf-token=pinned-token-value-15\n"
                                                  "defaults: []\nenv: {}\n")
    spec = {k: v for k, v in SPEC.items() if k not in ("env", "guard")}
    spec["backend_parameters"] = ["--max-model-len=8192", "--hf-token=spec-token-value-16"]
    spec["guard"] = {"template": "with-token"}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    result = gsg("validate", "s.yaml", "--templates", str(templates), "--fleet", str(REPO / "examples" / "fleet.yaml"))
    assert f"GSG012 pinned-conflict [secretive]: --hf-token={MASK} contradicts --hf-token={MASK} pinned by " \
           "template 'with-token'" in result.out, result.out
    assert "token-value-1" not in result.out + result.err


@pytest.mark.parametrize("value", ["plain", "a&b<c>d", "say \"hi\" & 'bye'", "&amp;", "<<>>''\"\"", "", "é&ü"])
def test_html_escaped_writes_what_html_escape_writes(value):
    import html

    from gpustack_guard.core.secrets import html_escaped

    assert html_escaped(value) == html.escape(value)
    assert html_escaped(value, quote=False) == html.escape(value, quote=False)


# _token_shaped compiles the token pattern only for a value starting as one of its alternatives can: the same answer
# as the pattern itself on every value, including each prefix's neighbours.
@pytest.mark.parametrize("value", [
    "Bearer x", "Bearer  x", "Bearerx", "bearer x", "hf_abcdefgh", "hf_abcdefg", " hf_abcdefgh1 ", "HF_abcdefgh",
    "sk-12345678", "sk-1234567", "ghp_abcdefgh", "gho_abcdefgh", "ghx_abcdefgh", "gh", "github_pat_", "glpat-",
    "xoxb-", "xoxz-", "AKIAABCDEFGHIJKL", "AKIAabcdefghijkl", "gpustack_0123456789abcdef_01234567",
    "gpustack_0123456789abcdef_0123456", "", " ", "plain", "\tsk-12345678",
])
def test_the_token_prefilter_answers_as_the_pattern(value):
    from gpustack_guard.core import secrets as S

    assert S._token_shaped(value) is (re.compile(S._TOKEN_PATTERN).match(value.strip()) is not None)
