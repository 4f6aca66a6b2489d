"""gsg templates and gsg catalog: what a newcomer needs to find before writing a spec."""

import json

from support import REPO


def test_templates_lists_variables_defaults_reads_and_pins(gsg):
    result = gsg("templates", "-o", "json", cwd=REPO)
    assert result.code == 0
    found = {t["name"]: t for t in json.loads(result.out)["templates"]}
    assert set(found) == {"vllm-hardened", "sglang-pinned", "llamacpp-offload"}
    hardened = found["vllm-hardened"]
    assert hardened["variables"] == [{"name": "gpu_memory_utilization", "default": "0.88"},
                                     {"name": "kv_cache_dtype", "default": '"fp8"'},
                                     {"name": "max_model_len", "default": "16384"},
                                     {"name": "max_num_seqs", "default": "32"}]
    assert hardened["reads"] == ["backend_version", "placement.gpus"]  # not the workload: it says so
    assert "guard.workload is not read here" in hardened["summary"]
    assert hardened["pinned"][2] == '--kv-cache-dtype={{ vars.kv_cache_dtype | default("fp8") }}'
    assert hardened["defaults"] == ["--enable-chunked-prefill", "--swap-space=0", "--disable-log-requests"]
    assert found["llamacpp-offload"]["reads"] == ["ollama.num_batch", "ollama.num_ctx", "ollama.num_gpu",
                                                  "ollama.num_parallel"]


def test_a_spec_tree_template_shadows_the_shipped_one(gsg, tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "vllm-hardened.yaml.j2").write_text(
        "{#- ours -#}\npinned:\n  - --max-model-len={{ vars.len | default(4096) }}\ndefaults: []\nenv: {}\n")
    (tmp_path / "specs").mkdir()
    text = gsg("templates", str(tmp_path / "specs")).out
    block = text.split("vllm-hardened", 1)[1].split("\n\n")[0]
    assert "  ours" in block and "    len = 4096" in block and "    --max-model-len={{ vars.len | default(4096) }}" in block


def test_catalog_lists_models_with_counts_and_the_matching_rule(gsg):
    result = gsg("catalog", "-o", "json")
    doc = json.loads(result.out)
    models = {m["name"]: m for m in doc["models"]}
    assert models["meta-llama/Llama-3.1-8B"]["parameters"] == 8_030_261_248
    assert models["meta-llama/Llama-3.1-8B"]["key"] == "llama-3.1-8b"
    assert "-instruct" in doc["matching"]
    text = gsg("catalog").out
    assert text.splitlines()[0].split() == ["model", "parameters", "layers", "context", "architecture"]
    assert any(line.startswith("meta-llama/Llama-3.1-8B ") and " 8.03B " in line for line in text.splitlines())


def test_templates_json_shows_the_sandbox_limits_and_survives_a_broken_template(gsg, tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "broken.yaml.j2").write_text("pinned:\n  - {% if %}\n")
    (tmp_path / "templates" / "huge.yaml.j2").write_text("#" * 70_000)
    result = gsg("templates", "-o", "json", cwd=tmp_path)
    # both listed, and the run fails: every spec naming either would stop at it
    assert result.code == 1
    assert result.err.splitlines() == [
        "gsg: error: templates/broken.yaml.j2: does not parse: line 2: Expected an expression, got 'end of "
        "statement block'",
        "gsg: error: templates/huge.yaml.j2: not read: 70,000 bytes, over the sandbox limit of 65,536"]
    doc = json.loads(result.out)
    assert doc["sandbox_limits"] == {"loop_iterations": 10_000, "range_items": 1_000, "call_depth": 20,
                                     "macro_calls": 1_000, "template_loads": 32, "output_chars": 65_536,
                                     "produced_chars": 1_048_576, "value_chars": 65_536, "int_bits": 256,
                                     "template_bytes": 65_536, "nesting": 30}
    found = {t["name"]: t["summary"] for t in doc["templates"]}
    assert found["broken"] == "(does not parse: line 2: Expected an expression, got 'end of statement block')"
    assert found["huge"] == "(not read: 70,000 bytes, over the sandbox limit of 65,536)"
    problems = {t["name"]: t["problem"] for t in doc["templates"]}
    assert problems["huge"] == "not read: 70,000 bytes, over the sandbox limit of 65,536"
    assert all(problem is None for name, problem in problems.items() if name not in ("broken", "huge"))
