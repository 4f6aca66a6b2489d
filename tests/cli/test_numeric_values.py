"""Issue 13: a numeric flag or spec field the engine or GPUStack refuses is one finding at its file:line and
exit 1: never an internal error, never a default in its place, never silently accepted."""

import json
import re

import pytest
from support import FLEET

VLLM = ("name: t\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n"
        "gpu_selector:\n  gpu_ids: [gpu-c:cuda:0]\nbackend: vLLM\nbackend_version: 0.11.0\n")
LLAMACPP = ("name: t\nsource: huggingface\nhuggingface_repo_id: bartowski/Llama-3.3-70B-Instruct-GGUF\n"
            "huggingface_filename: Llama-3.3-70B-Instruct-Q4_K_M.gguf\ngpu_selector:\n  gpu_ids: [gpu-d:cuda:0]\n"
            "backend: llama.cpp\nbackend_version: b6000\nguard:\n  model: {catalog: meta-llama/Llama-3.3-70B-Instruct}\n")


def rule_ids(result) -> set[str]:
    """The rules a `-o json` run reported (an output that is no report fails here, not passes)."""
    return {finding["rule_id"] for finding in json.loads(result.out)["findings"]}


def only_finding(gsg, tmp_path, text):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)
    assert result.code == 1, result.out + result.err
    assert "internal error" not in result.err and "Traceback" not in result.out + result.err
    lines = [line for line in result.out.splitlines() if re.match(r"^spec\.yaml:\d+:\d+: ", line)]
    assert len(lines) == 1, result.out
    return lines[0]


@pytest.mark.parametrize("argument,expected", [
    ("--gpu-memory-utilization nan", "spec.yaml:9:5: error GSG016 argument-value [t]: --gpu-memory-utilization "
                                     "'nan': vLLM 0.11.0 accepts a fraction in (0, 1], not nan"),
    ("--gpu-memory-utilization inf", "spec.yaml:9:5: error GSG016 argument-value [t]: --gpu-memory-utilization "
                                     "'inf': vLLM 0.11.0 accepts a fraction in (0, 1], not inf"),
    ("--gpu-memory-utilization 1.7", "spec.yaml:9:5: error GSG016 argument-value [t]: --gpu-memory-utilization "
                                     "'1.7': vLLM 0.11.0 accepts a fraction in (0, 1], not 1.7"),
    ("--tensor-parallel-size two", "spec.yaml:9:5: error GSG016 argument-value [t]: --tensor-parallel-size 'two': "
                                   "not a whole number; vLLM 0.11.0 (argparse int) accepts a whole number ≥ 1"),
    ("--tensor-parallel-size 0", "spec.yaml:9:5: error GSG016 argument-value [t]: --tensor-parallel-size '0': "
                                 "vLLM 0.11.0 accepts a whole number ≥ 1, not 0"),
    ("--max-num-seqs 0", "spec.yaml:9:5: error GSG016 argument-value [t]: --max-num-seqs '0': vLLM 0.11.0 accepts "
                         "a whole number ≥ 1, not 0"),
    ("--max-model-len 1e5", "spec.yaml:9:5: error GSG016 argument-value [t]: --max-model-len '1e5': not a whole "
                            "number; vLLM 0.11.0 (human_readable_int: 16k = 16,000, 16K = 16,384) accepts a whole "
                            "number ≥ 1"),
    ("--max-model-len\u00a04096", "spec.yaml:9:5: error GSG016 argument-value [t]: U+00A0 NO-BREAK SPACE at "
                                  "character 16 of '--max-model-len\\xa04096' looks like a space but is not one: the "
                                  "engine reads no such flag; type an ASCII space or '='"),
    ("\u2013max-model-len 4096", "spec.yaml:9:5: error GSG016 argument-value [t]: U+2013 EN DASH at character 1 of "
                                 "'\\u2013max-model-len 4096' looks like a dash but is not one: the engine reads no "
                                 "such flag; type an ASCII -"),
])
def test_a_refused_vllm_value_is_its_only_finding(gsg, tmp_path, argument, expected):
    assert only_finding(gsg, tmp_path, VLLM + f'backend_parameters:\n  - "{argument}"\n') == expected


def test_human_readable_max_model_len_is_the_engines_number(gsg, tmp_path):
    (tmp_path / "spec.yaml").write_text(VLLM + "backend_parameters:\n  - --max-model-len=16K\n"
                                        "  - --enforce-eager\n")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "json", cwd=tmp_path)
    assert "GSG016" not in result.out
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "24GiB", "-o", "json",
                 "--", "--max-model-len=16K", cwd=tmp_path)
    assert result.code == 0, result.err
    assert '"max_model_len": 16384' in result.out


def test_a_refused_value_the_template_pins_points_at_the_template(gsg, tmp_path):
    text = VLLM + "guard:\n  template: vllm-hardened\n  vars: {gpu_memory_utilization: .nan}\n"
    assert only_finding(gsg, tmp_path, text) == (
        "spec.yaml:9:13: error GSG016 argument-value [t]: template 'vllm-hardened' renders "
        "--gpu-memory-utilization 'nan': vLLM 0.11.0 accepts a fraction in (0, 1], not nan")


@pytest.mark.parametrize("argument,expected", [
    ("--ctx-size -5", "spec.yaml:12:5: error GSG016 argument-value [t]: --ctx-size '-5': llama.cpp b6000 accepts a "
                      "whole number ≥ 0 (0 = the model's own length), not -5"),
    ("--tensor-split 1,nan", "spec.yaml:12:5: error GSG016 argument-value [t]: --tensor-split '1,nan': 'nan' is "
                             "not a proportion ≥ 0; llama.cpp b6000 (std::stof per item) accepts proportions ≥ 0 "
                             "separated by , or /"),
    ("-np 0", "spec.yaml:12:5: error GSG016 argument-value [t]: --parallel '0': llama.cpp b6000 accepts a whole "
              "number ≥ 1, not 0"),
])
def test_a_refused_llamacpp_value_is_its_only_finding(gsg, tmp_path, argument, expected):
    assert only_finding(gsg, tmp_path, LLAMACPP + f'backend_parameters:\n  - "{argument}"\n') == expected


def test_ngl_all_is_refused_by_the_engine_release_and_by_gpustacks_admission(gsg, tmp_path):
    (tmp_path / "spec.yaml").write_text(LLAMACPP + 'backend_parameters:\n  - "-ngl all"\n', encoding="utf-8")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)
    lines = [line for line in result.out.splitlines() if line.startswith("spec.yaml:")]
    assert lines == [
        "spec.yaml:12:5: error GSG013 forbidden-argument [t]: --gpu-layers 'all' is rejected by GPUStack: its "
        "admission check accepts only a whole number 0-999 (whatever the engine itself would accept)",
        "spec.yaml:12:5: error GSG016 argument-value [t]: --gpu-layers 'all': not a whole number (std::stoi finds no "
        "digits); llama.cpp b6000 (std::stoi) accepts a number of layers ≥ 0 (-1 = the default)"]


def test_sglang_refused_fraction(gsg, tmp_path):
    text = VLLM.replace("backend: vLLM\nbackend_version: 0.11.0", "backend: SGLang\nbackend_version: 0.5.5")
    assert only_finding(gsg, tmp_path, text + 'backend_parameters:\n  - "--mem-fraction-static=-.5"\n') == (
        "spec.yaml:9:5: error GSG016 argument-value [t]: --mem-fraction-static '-.5': SGLang 0.5.5 accepts a "
        "fraction in (0, 1], not -0.5")


SGLANG = VLLM.replace("backend: vLLM\nbackend_version: 0.11.0", "backend: SGLang\nbackend_version: 0.5.2")


@pytest.mark.parametrize("base,argument,expected", [
    # a sizing flag of the other engine: argparse exits on it, and the arithmetic (which reads the engine's own
    # spelling) would have sized the native length instead
    (SGLANG, "--max-model-len=4096", "--max-model-len '4096': not a flag of SGLang but of vLLM (SGLang exits at "
                                     "start-up on an unrecognized argument, and gsg's arithmetic does not read it); "
                                     "SGLang spells it --context-length"),
    (SGLANG, "--gpu-memory-utilization=0.8", "--gpu-memory-utilization '0.8': not a flag of SGLang but of vLLM "
                                             "(SGLang exits at start-up on an unrecognized argument, and gsg's "
                                             "arithmetic does not read it); SGLang spells it --mem-fraction-static"),
    (SGLANG, "--max-num-seqs 64", "--max-num-seqs '64': not a flag of SGLang but of vLLM (SGLang exits at start-up "
                                  "on an unrecognized argument, and gsg's arithmetic does not read it); SGLang "
                                  "spells it --max-running-requests"),
    (VLLM, "--mem-fraction-static=0.8", "--mem-fraction-static '0.8': not a flag of vLLM but of SGLang (vLLM exits "
                                        "at start-up on an unrecognized argument, and gsg's arithmetic does not read "
                                        "it); vLLM spells it --gpu-memory-utilization"),
    (VLLM, "--context-length=4096", "--context-length '4096': not a flag of vLLM but of SGLang (vLLM exits at "
                                    "start-up on an unrecognized argument, and gsg's arithmetic does not read it); "
                                    "vLLM spells it --max-model-len"),
    (VLLM, "--ctx-size 4096", "--ctx-size '4096': not a flag of vLLM but of llama.cpp (vLLM exits at start-up on an "
                              "unrecognized argument, and gsg's arithmetic does not read it); vLLM spells it "
                              "--max-model-len"),
])
def test_a_sizing_flag_of_another_engine_is_its_only_finding(gsg, tmp_path, base, argument, expected):
    text = base + f'backend_parameters:\n  - "{argument}"\n'
    assert only_finding(gsg, tmp_path, text) == f"spec.yaml:9:5: error GSG016 argument-value [t]: {expected}"


@pytest.mark.parametrize("argument,expected", [
    ("--compilation-config=[1,2", "--compilation-config '[1,2': not a JSON object (vLLM's parser exits at start-up "
                                  "on it)"),
    ('--hf-overrides={\\"rope_scaling\\": }', "--hf-overrides '{\"rope_scaling\": }': not a JSON object (vLLM's "
                                             "parser exits at start-up on it)"),
    ("--hf-overrides=" + '{\\"a\\":' * 65 + "1" + "}" * 65,
     "--hf-overrides '{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":…': nested deeper than 64 levels, "
     "gsg's limit for a JSON flag"),
])
def test_a_json_flag_vllm_refuses_is_its_only_finding(gsg, tmp_path, argument, expected):
    text = VLLM + f'backend_parameters:\n  - "{argument}"\n  - --max-model-len=4096\n'
    assert only_finding(gsg, tmp_path, text) == f"spec.yaml:9:5: error GSG016 argument-value [t]: {expected}"


def test_json_flags_vllm_accepts_are_no_finding(gsg, tmp_path):
    # the neighbours: a level number, a JSON object, 64 levels, and --hf-overrides text that is no object (vLLM
    # keeps it as a string)
    for argument in ("--compilation-config=3", '--compilation-config={\\"level\\": 3}',
                     "--hf-overrides=" + '{\\"a\\":' * 64 + "1" + "}" * 64, "--hf-overrides=foo"):
        (tmp_path / "spec.yaml").write_text(VLLM + f'backend_parameters:\n  - "{argument}"\n'
                                            "  - --max-model-len=4096\n")
        result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "json", cwd=tmp_path)
        assert result.code == 0 and "GSG016" not in rule_ids(result), (argument, result.out)


@pytest.mark.parametrize("flag", ["--max-model-len", "--max-num-seqs"])
def test_a_whole_number_past_int64_is_its_only_finding_and_int64_is_read(gsg, tmp_path, flag):
    # 1e400 tokens overflowed the arithmetic's floats (an internal error before); the limit is 2**63 - 1
    for number in (2**63, 10**400):
        text = VLLM + f"backend_parameters:\n  - {flag}={number}\n"
        assert only_finding(gsg, tmp_path, text) == (
            f"spec.yaml:9:5: error GSG016 argument-value [t]: {flag} '{str(number)[:40]}{'…' if number > 10**40 else ''}"
            f"': a whole number of {len(str(number)):,} digits, past gsg's limit for a flag's number, "
            "9,223,372,036,854,775,807 (int64, what the engines' tensors and kernels count with)")
    (tmp_path / "spec.yaml").write_text(VLLM + f"backend_parameters:\n  - {flag}={2**63 - 1}\n")
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), cwd=tmp_path)
    # read through: the sizing findings a number this large earns, and no refusal of the flag
    assert result.code == 1 and result.err.endswith("in 1 spec (1 file)\n"), result.out + result.err
    assert "GSG016" not in result.out and "internal error" not in result.err, result.out + result.err


def test_the_engines_own_spelling_is_no_finding(gsg, tmp_path):
    # the neighbours: each engine's own flag is read, not refused
    for base, argument in ((SGLANG, "--context-length=4096"), (VLLM, "--max-model-len=4096")):
        (tmp_path / "spec.yaml").write_text(base + f"backend_parameters:\n  - {argument}\n")
        result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "-o", "json", cwd=tmp_path)
        assert result.code == 0 and "GSG016" not in rule_ids(result), result.out


@pytest.mark.parametrize("field,expected", [
    ("guard: {policy: {platform_footprint: .inf}}",
     "spec.yaml:8:38: error GSG002 schema [t]: 'guard.policy.platform_footprint': Value error, a size must be a "
     "finite number of bytes, not inf"),
    ("guard: {policy: {cuda_graph_reserve: -.inf}}",
     "spec.yaml:8:38: error GSG002 schema [t]: 'guard.policy.cuda_graph_reserve': Value error, a size must be a "
     "finite number of bytes, not -inf"),
    ("guard: {model: {weight_bytes: .nan}}",
     "spec.yaml:8:31: error GSG002 schema [t]: 'guard.model.weight_bytes': Value error, a size must be a finite "
     "number of bytes, not nan"),
    ("guard: {model: {weight_bytes: '1" + "0" * 400 + "B'}}",
     "spec.yaml:8:31: error GSG002 schema [t]: 'guard.model.weight_bytes': Value error, '10000000000000000000…(401 "
     "digits)B' is larger than any size (past a float's range)"),
    ("guard: {model: {weight_bytes: 0}}",
     "spec.yaml:8:31: error GSG002 schema [t]: 'guard.model.weight_bytes': Input should be greater than or equal "
     "to 1"),
    ("guard: {policy: {platform_footprint: 100TiB}}",
     "spec.yaml:8:38: error GSG002 schema [t]: 'guard.policy.platform_footprint': Input should be less than or "
     "equal to 70368744177664 (64 TiB)"),
    ("guard: {policy: {activation_margin: .nan}}",
     "spec.yaml:8:37: error GSG002 schema [t]: 'guard.policy.activation_margin': Input should be a finite number, "
     "not nan"),
    ("guard: {workload: {concurrency: .inf}}",
     "spec.yaml:8:33: error GSG002 schema [t]: 'guard.workload.concurrency': Input should be a valid integer, not "
     "inf"),
    ("guard: {model: {num_parameters: 10000000000000000}}",
     "spec.yaml:8:33: error GSG002 schema [t]: 'guard.model.num_parameters': Input should be less than or equal to "
     "1000000000000000"),
    ("replicas: .inf", "spec.yaml:8:11: error GSG002 schema [t]: 'replicas': Input should be a valid integer, not inf"),
    ("extended_kv_cache: {enabled: true, ram_ratio: .inf}",
     "spec.yaml:8:47: error GSG002 schema [t]: 'extended_kv_cache.ram_ratio': Input should be a finite number, not "
     "inf"),
])
def test_a_non_finite_or_absurd_spec_number_is_its_only_finding(gsg, tmp_path, field, expected):
    assert only_finding(gsg, tmp_path, VLLM + field + "\n") == expected


@pytest.mark.parametrize("memory,expected", [
    ("{total: .inf}", r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.total': Value error, a size "
                      r"must be a finite number of bytes, not inf"),
    ("{total: 24GiB, used: .nan}", r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.used': Value "
                                   r"error, a size must be a finite number of bytes, not nan"),
    ("{total: 100TiB}", r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.total': Input should be "
                        r"less than or equal to 70368744177664"),
    # 1e308 MiB is past a float's range (int(inf) raised OverflowError, an internal error, before); 1e308 bytes
    # is a float, refused by the fleet bound
    ("{total: 1" + "0" * 308 + "MiB}", r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.total': "
                                      r"Value error, '10000000000000000000…\(309 digits\)MiB' is larger than any size "
                                      r"\(past a float's range\)"),
    ("{total: 1" + "0" * 308 + "B}", r"fleet\.yaml:6:\d+: 'clusters\.0\.workers\.0\.gpus\.0\.memory\.total': "
                                      r"Input should be less than or equal to 70368744177664"),
])
def test_a_non_finite_fleet_number_names_its_line(gsg, tmp_path, memory, expected):
    (tmp_path / "a.yaml").write_text("name: a\nsource: huggingface\nhuggingface_repo_id: x/y\n")
    (tmp_path / "fleet.yaml").write_text("clusters:\n  - name: c\n    workers:\n      - name: w\n        gpus:\n"
                                         f"          - {{index: 0, memory: {memory}}}\n")
    result = gsg("validate", "a.yaml", "--fleet", "fleet.yaml", cwd=tmp_path)
    assert result.code == 1 and "internal error" not in result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(expected, lines[0]), result.err


@pytest.mark.parametrize("argument,expected", [
    ("--gpu-memory-utilization=nan", "gsg: error: GSG016 argument-value: --gpu-memory-utilization 'nan': vLLM 0.11.0 "
                                     "accepts a fraction in (0, 1], not nan"),
    ("--tensor-parallel-size=two", "gsg: error: GSG016 argument-value: --tensor-parallel-size 'two': not a whole "
                                   "number; vLLM 0.11.0 (argparse int) accepts a whole number ≥ 1"),
    ("--max-model-len\u00a04096", "gsg: error: backend arguments: U+00A0 NO-BREAK SPACE at character 16 of "
                                  "'--max-model-len\\xa04096' looks like a space but is not one: the engine reads no "
                                  "such flag; type an ASCII space or '='"),
])
def test_estimate_refuses_in_one_line(gsg, argument, expected):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "24GiB", "--", argument)
    assert result.code == 1
    assert [line for line in result.err.splitlines() if line.strip()] == [expected]


SGLANG = ("name: t\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\n"
          "gpu_selector:\n  gpu_ids: [gpu-c:cuda:0]\nbackend: SGLang\nbackend_version: 0.5.23\n")


def test_a_graph_flag_sglang_no_longer_has_is_its_only_finding(gsg, tmp_path):
    # profiles.SGLANG_GRAPH_ARGS: from 0.5.20 argparse takes --cuda-graph-max-bs as an ambiguous abbreviation
    line = only_finding(gsg, tmp_path, SGLANG + 'backend_parameters:\n  - "--cuda-graph-max-bs 64"\n')
    assert line.startswith("spec.yaml:9:5: error GSG016 argument-value [t]: --cuda-graph-max-bs '64': SGLang 0.5.23 "
                           "refuses it: an ambiguous abbreviation of --cuda-graph-max-bs-decode and "
                           "--cuda-graph-max-bs-prefill")


def test_a_split_capture_key_before_0_34_is_its_only_finding(gsg, tmp_path):
    line = only_finding(gsg, tmp_path, VLLM + "backend_parameters:\n"
                        "  - '--compilation-config={\"max_prefill_cudagraph_capture_tokens\": 2048}'\n")
    assert "GSG016" in line and "vLLM 0.11.0 has no compilation config key max_prefill_cudagraph_capture_tokens" in line
