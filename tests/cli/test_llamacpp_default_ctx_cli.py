"""A llama.cpp spec without --ctx-size, end to end through `gsg validate` and `gsg estimate`: the context the build
starts with, the KV it needs, and the flag that fixes it."""

import json

from support import FLEET

SPEC = ("name: t\nsource: huggingface\nhuggingface_repo_id: bartowski/Llama-3.3-70B-Instruct-GGUF\n"
        "huggingface_filename: Llama-3.3-70B-Instruct-Q4_K_M.gguf\ngpu_selector:\n  gpu_ids: [gpu-d:cuda:0]\n"
        "backend: llama.cpp\nbackend_version: {build}\nbackend_parameters:\n  - {flag}\n"
        "guard:\n  model: {{catalog: meta-llama/Llama-3.3-70B-Instruct}}\n")


def validate(gsg, tmp_path, build: str, flag: str):
    (tmp_path / "spec.yaml").write_text(SPEC.format(build=build, flag=flag), encoding="utf-8")
    return gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)


def test_newest_build_without_ctx_size_names_the_trained_context_and_the_fix(gsg, tmp_path):
    # b7474: n_ctx 0 is Llama-3.3-70B's 131,072 cells, 80 layers x 8 KV heads x 128 x 2 x 2 B each = 40 GiB of KV
    # beside 39.37 GiB of Q4_K_M weights on a 48 GB A6000; --fit off, so nothing shortens it
    result = validate(gsg, tmp_path, "b7474", "--fit=off")
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert ("spec.yaml:10:3: error GSG036 llamacpp-offload [t]: no --ctx-size: llama.cpp b7474 starts with the "
            "model's trained context, n_ctx 131,072, whose KV cache needs 40.00 GiB: llama.cpp needs more than the "
            "GPU holds: 80/80 layers: weights 39.37 GiB + KV 40.00 GiB (ctx 131072)") in result.out
    assert "fix: set --ctx-size 25600 (the longest context that fits) or less" in result.out


def test_newest_build_with_fit_warns_with_the_shortened_context(gsg, tmp_path):
    result = validate(gsg, tmp_path, "b7474", "--flash-attn=on")
    assert result.code == 0, result.out
    assert "--fit starts it with a context of" in result.out
    assert "(not the 131,072 it takes without --ctx-size)" in result.out


def test_the_build_before_takes_4096_and_fits(gsg, tmp_path):
    # b7473: common.h's n_ctx = 4096, 1.25 GiB of KV: the same spec fits without a finding
    result = validate(gsg, tmp_path, "b7473", "--flash-attn=on")
    assert result.code == 0 and "0 errors, 0 warnings" in result.err, result.out + result.err


def test_estimate_json_says_which_context_and_why(gsg):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "80GiB", "--backend",
                 "llama.cpp", "--backend-version", "b7474", "-o", "json")
    assert result.code == 0, result.err
    context = json.loads(result.out)["extra"]["context"]
    assert context["ctx_size"] == 131072 and context["source"] == "engine-default"
    assert context["rule"] == "n-ctx-train-fit" and "common/common.h@0c1e57098" in context["file"]
