"""GPUStack's own /v2/models/export output loads unchanged and renders back with nothing lost."""

import json

import yaml
from support import EXPORT_FIXTURE


def test_export_loads_and_renders_back_with_every_field(gsg):
    result = gsg("render", str(EXPORT_FIXTURE), "-o", "json")
    assert result.code == 0, result.err
    rendered = json.loads(result.out)
    original = list(yaml.safe_load_all(EXPORT_FIXTURE.read_text()))
    assert [d["name"] for d in rendered] == ["meta-test", "llama-70b-tp2"]
    for before, after in zip(original, rendered):
        assert set(before) <= set(after)
        for key, value in before.items():
            if key != "env":
                assert after[key] == value, key
    assert rendered[1]["env"] == {"HF_TOKEN": "********", "VLLM_LOGGING_LEVEL": "INFO"}


def test_secret_value_appears_in_no_output(gsg):
    outputs = []
    for args in (("render", str(EXPORT_FIXTURE)), ("render", str(EXPORT_FIXTURE), "-o", "json")):
        result = gsg(*args)
        outputs.append(result.out + result.err)
    for fmt in ("text", "json", "github", "sarif", "junit", "markdown"):
        result = gsg("validate", str(EXPORT_FIXTURE), "--fleet", str(EXPORT_FIXTURE.parent / "nope.yaml"), "-o", fmt)
        outputs.append(result.out + result.err)
    assert all("hf_secret_value" not in text for text in outputs)


def test_show_secrets_is_explicit(gsg):
    result = gsg("render", str(EXPORT_FIXTURE), "--show-secrets")
    assert "hf_secret_value" in result.out
