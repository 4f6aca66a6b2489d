"""Round 27 of hostile specs: backend_parameters as GPUStack's worker splits them (a pasted command line, quotes,
line breaks, JSON) and flags spelled with the wrong number of dashes, each the case gsg misread before, with its
neighbours."""

from __future__ import annotations

import pytest
from support import FLEET, TWO_GPU_VLLM_SPEC

from gpustack_guard.core import args as A

SPEC = TWO_GPU_VLLM_SPEC
SEPARATE = '["--max-num-seqs", "16", "--max-model-len=4096", "--enforce-eager"]'


def _validate(gsg, tmp_path, params: str):
    (tmp_path / "specs").mkdir(exist_ok=True)
    (tmp_path / "specs" / "a.yaml").write_text(f"{SPEC}backend_parameters: {params}\n")
    return gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)


# --- the worker's split (gpustack 2.3.0 utils/command.py flatten_to_argv; checked against it on 200,000 random
# items of flags, quotes, backslashes, brackets and line breaks: the same tokens or the same refusal) -------------

@pytest.mark.parametrize("item,tokens", [
    ("--enforce-eager --max-model-len 4096", ["--enforce-eager", "--max-model-len", "4096"]),
    ("--max-model-len '4096'", ["--max-model-len", "4096"]),
    ('--tokenizer "my tok" -tp 2', ["--tokenizer", "my tok", "-tp", "2"]),
    ("--max-model-len 4096 \\\n--kv-cache-dtype fp8", ["--max-model-len", "4096", "--kv-cache-dtype", "fp8"]),
    ("--max-model-len 4096 \\\r\n-tp 2 \\", ["--max-model-len", "4096", "-tp", "2"]),  # CRLF, a stray backslash
    ("--max-model-len=4096\n--enforce-eager", ["--max-model-len=4096", "--enforce-eager"]),
    # JSON right after '=' stays whole, blanks and quotes included; JSON after a blank is split like the rest
    ('--hf-overrides={"rope_scaling": {"type": "yarn", "factor": 4.0}} -q fp8',
     ['--hf-overrides={"rope_scaling": {"type": "yarn", "factor": 4.0}}', "-q", "fp8"]),
    ('--hf-overrides {"a": 1}', ["--hf-overrides", "{a:", "1}"]),
    ("--max-model-len=4096; rm -rf /", ["--max-model-len=4096;", "rm", "-rf", "/"]),  # no shell: words
    # an item that does not open with a flag is one token as written: a value, a number, '--' alone
    ("4096 8192", ["4096 8192"]),
    ("'a b'", ["'a b'"]),
    ("-1.5 x", ["-1.5 x"]),
    ("-- --x", ["-- --x"]),
    ("  --enforce-eager  ", ["--enforce-eager"]),
    ("   ", []),
])
def test_worker_tokens_are_the_gpustack_workers(item, tokens):
    assert A.worker_tokens(item) == tokens


@pytest.mark.parametrize("item", ["--chat-template 'unclosed", '--tokenizer "a', "--x \\'a b'"])
def test_an_item_the_worker_cannot_split_raises(item):
    with pytest.raises(ValueError, match="No closing quotation"):
        A.worker_tokens(item)


def test_a_pasted_command_line_sizes_what_the_engine_gets(gsg, tmp_path):
    """`--max-num-seqs 16 --max-model-len 4096 --enforce-eager` in one item: gsg read one flag, --max-num-seqs,
    with the value '16 --max-model-len ...' unchecked, and sized the native 131,072 tokens with CUDA graphs
    (GSG033, GSG034, GSG038); the engine gets three flags, as from separate items."""
    separate = _validate(gsg, tmp_path, SEPARATE)
    assert (separate.code, separate.out, separate.err) == (0, "", "gsg: 0 errors, 0 warnings, 0 notes in 1 spec "
                                                                  "(1 file)\n")
    for pasted in ('["--max-num-seqs 16 --max-model-len 4096 --enforce-eager"]',
                   '["--max-num-seqs \'16\'", "--max-model-len=4096\\n--enforce-eager"]',
                   '["--max-num-seqs 16 \\\\\\n  --max-model-len 4096 --enforce-eager"]'):
        assert _validate(gsg, tmp_path, pasted) == separate, pasted


def test_a_flag_hidden_in_another_flags_value_is_read(gsg, tmp_path):
    """`--tokenizer x --max-model-len 100000`: the engine gets --max-model-len 100000; gsg sized 131,072."""
    result = _validate(gsg, tmp_path, '["--tokenizer x --max-model-len 100000"]')
    assert result.code == 0
    assert "--max-num-seqs 256 x 100,000 tokens (max_model_len 100,000)" in result.out
    assert "max-model-len-unset" not in result.out


@pytest.mark.parametrize("params,line", [
    ('["--chat-template \'unclosed"]',
     "specs/a.yaml:9:22: error GSG016 argument-value [m]: GPUStack's worker cannot split \"--chat-template "
     "'unclosed\" into arguments (No closing quotation: close the quote, or give each argument an item of its "
     "own)"),
    # the worker's split gives the engine a second word after a one-value flag (was: not a whole number)
    ('["--max-model-len=4096; rm -rf /"]',
     "specs/a.yaml:9:22: error GSG016 argument-value [m]: 'rm' follows --max-model-len '4096;', which takes one "
     "value: the engine refuses the second (unrecognized arguments)"),
    ('["--max-model-len", "4096 --enforce-eager"]',  # a value item is one token: the engine reads no number
     "specs/a.yaml:9:22: error GSG016 argument-value [m]: --max-model-len '4096 --enforce-eager': not a whole "
     "number; vLLM 0.11.0 (human_readable_int: 16k = 16,000, 16K = 16,384) accepts a whole number ≥ 1"),
])
def test_what_the_worker_passes_on_is_judged(gsg, tmp_path, params, line):
    result = _validate(gsg, tmp_path, params)
    assert (result.code, result.out) == (1, f"{line}\n")


def test_a_value_with_blanks_is_rendered_so_the_worker_keeps_it_whole(gsg, tmp_path):
    """Rendered `--tokenizer=my tok` reached the engine as --tokenizer=my and a stray 'tok'."""
    assert A.Arg("tokenizer", "my tok", 0).items() == ["--tokenizer 'my tok'"]
    assert A.worker_tokens("--tokenizer 'my tok'") == ["--tokenizer", "my tok"]
    assert A.Arg("chat-template", "{{ a }}'s", 0).items() == ["--chat-template '{{ a }}'\"'\"'s'"]
    assert A.worker_tokens(A.Arg("chat-template", "{{ a }}'s", 0).items()[0]) == ["--chat-template", "{{ a }}'s"]
    # a value holding '=' is an item of its own: GPUStack 2.1 would keep a quoted `--k='a=b c'` whole, quotes in
    assert A.Arg("lora-modules", "a=/x y", 0).items() == ["--lora-modules", "a=/x y"]
    assert A.worker_tokens("a=/x y") == ["a=/x y"]
    assert A.Arg("hf-overrides", '{"a": [1, 2]}', 0).items() == ['--hf-overrides={"a": [1, 2]}']  # JSON: whole
    assert A.Arg("max-model-len", "4096", 0).items() == ["--max-model-len=4096"]
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(
        f"{SPEC}backend_parameters: [\"--max-model-len 4096 --tokenizer 'my tok'\"]\n")
    result = gsg("render", "specs", "--offline", cwd=tmp_path)
    assert result.code == 0
    assert "backend_parameters:\n- --max-model-len=4096\n- --tokenizer 'my tok'\n" in result.out


@pytest.mark.parametrize("value,items", [
    ("a b", ["--tokenizer 'a b'"]),
    ("it's", ["--tokenizer 'it'\"'\"'s'"]),
    ('say "hi"', ["--tokenizer 'say \"hi\"'"]),
    ("$(id); rm -rf /", ["--tokenizer '$(id); rm -rf /'"]),
    ("tab\there", ["--tokenizer 'tab\there'"]),
    ('{"a": 1} x', ["--tokenizer '{\"a\": 1} x'"]),
    ("a=b c", ["--tokenizer", "a=b c"]),
    ("x \\\ny", ["--tokenizer", "x \\\ny"]),  # the worker joins a backslash-newline even inside quotes
    ("x\\", ["--tokenizer 'x\\'"]),  # it drops a trailing backslash, not one quoted
])
def test_every_rendered_value_is_read_back_by_the_worker_as_written(value, items):
    assert A.Arg("tokenizer", value, 0).items() == items
    assert [token for item in items for token in A.worker_tokens(item)] == ["--tokenizer", value]
    assert [(a.key, a.value) for a in A.parse(items, "vllm")] == [("tokenizer", value)]


# --- a flag with the wrong number of dashes: gsg read it as the flag, the engine refuses it -----------------------

LLAMACPP = """name: m
source: huggingface
huggingface_repo_id: bartowski/Meta-Llama-3.1-8B-Instruct-GGUF
huggingface_filename: Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf
backend: llama.cpp
"""


@pytest.mark.parametrize("family,item,says", [
    ("vllm", "-max-model-len=4096", "'-max-model-len' has one dash: vLLM (argparse) reads a long flag only after "
     "two, --max-model-len, and refuses '-max-model-len' (unrecognized arguments)"),
    ("vllm", "-gpu_memory_utilization 0.8", "'-gpu_memory_utilization' has one dash: vLLM (argparse) reads a long "
     "flag only after two, --gpu_memory_utilization, and refuses '-gpu_memory_utilization' (unrecognized "
     "arguments)"),
    ("vllm", "-quantization fp8", "'-quantization' has one dash: vLLM (argparse) reads a long flag only after two, "
     "--quantization, and refuses '-quantization' (unrecognized arguments)"),
    ("vllm", "---max-model-len=4096", "'---max-model-len' has 3 dashes: vLLM reads no such flag and refuses to "
     "start (unrecognized argument); write --max-model-len"),
    ("sglang", "-context-length 4096", "'-context-length' has one dash: SGLang (argparse) reads a long flag only "
     "after two, --context-length, and refuses '-context-length' (unrecognized arguments)"),
    ("sglang", "-tp-size 2", "'-tp-size' has one dash: SGLang (argparse) reads a long flag only after two, "
     "--tp-size, and refuses '-tp-size' (unrecognized arguments)"),
    ("llamacpp", "-ctx-size 4096", "'-ctx-size' has one dash: llama.cpp reads a flag only as spelled, --ctx-size, "
     "and refuses '-ctx-size' (invalid argument)"),
    ("llamacpp", "-n-gpu-layers 99", "'-n-gpu-layers' has one dash: llama.cpp reads a flag only as spelled, "
     "--n-gpu-layers, and refuses '-n-gpu-layers' (invalid argument)"),
    ("llamacpp", "--ngl 99", "'--ngl' has two dashes: llama.cpp reads a flag only as spelled, -ngl, and refuses "
     "'--ngl' (invalid argument)"),
    ("llamacpp", "--c=4096", "'--c' has two dashes: llama.cpp reads a flag only as spelled, -c, and refuses '--c' "
     "(invalid argument)"),
    ("llamacpp", "----parallel 2", "'----parallel' has 4 dashes: llama.cpp reads no such flag and refuses to start "
     "(unrecognized argument); write --parallel"),
])
def test_a_flag_with_the_wrong_dashes_is_refused(family, item, says):
    with pytest.raises(A.ArgError) as caught:
        A.parse(["--enforce-eager", item], family)
    assert (str(caught.value), caught.value.index) == (says, 1)


@pytest.mark.parametrize("family,items,flags", [
    ("vllm", ["-tp", "2", "-pp=1", "-q", "fp8", "-O3", "-O.level=3", "-dcp", "1"],
     {"tensor-parallel-size": "2", "pipeline-parallel-size": "1", "quantization": "fp8", "O3": None,
      "O.level": "3", "dcp": "1"}),
    ("vllm", ["--max_model_len=4096", "-x", "1"], {"max-model-len": "4096", "x": "1"}),  # an unknown short flag
    ("sglang", ["--tp", "2", "--context-length=4096"], {"tp-size": "2", "context-length": "4096"}),
    ("llamacpp", ["-c", "4096", "--ctx-size=4096", "-ngl", "99", "--n-gpu-layers", "99", "--gpu-layers=99",
                  "-no-kvu", "--n_cpu_moe", "2", "-ncmoe", "2"],
     {"ctx-size": "4096", "gpu-layers": "99", "no-kv-unified": None, "n-cpu-moe": "2"}),
])
def test_the_engines_own_spellings_pass(family, items, flags):
    assert A.as_dict(A.parse(items, family), family) == flags


def test_a_wrong_dash_is_one_line_at_its_item(gsg, tmp_path):
    """`-max-model-len=4096` was sized as --max-model-len 4096 (GSG033 at 4,096 tokens): vLLM refuses to start."""
    result = _validate(gsg, tmp_path, '["--enforce-eager", "-max-model-len=4096"]')
    assert (result.code, result.out) == (1, "specs/a.yaml:9:41: error GSG016 argument-value [m]: '-max-model-len' "
                                            "has one dash: vLLM (argparse) reads a long flag only after two, "
                                            "--max-model-len, and refuses '-max-model-len' (unrecognized "
                                            "arguments)\n")
    (tmp_path / "specs" / "a.yaml").write_text(f"{LLAMACPP}backend_parameters: [--ngl 99]\n")
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert (result.code, result.out) == (1, "specs/a.yaml:6:22: error GSG016 argument-value [m]: '--ngl' has two "
                                            "dashes: llama.cpp reads a flag only as spelled, -ngl, and refuses "
                                            "'--ngl' (invalid argument)\n")


# --- an unknown key in gsg's own guard block, at every level: named as a setting gsg does not read ----------------

def test_an_unknown_guard_key_at_any_level_says_gsg_reads_no_such_setting(gsg, tmp_path):
    """The guard block never reaches GPUStack: 'GPUStack would silently drop it' was the wrong reason."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(
        f"{SPEC}guard:\n  bogus: 1\n  workload: {{prompt_tokens_p99: 100, bogus: 2}}\n  policy: {{bogus: 3}}\n"
        "  model: {bogus: 4}\n  ollama: {bogus: 5}\n  vars: {anything: 6}\ngpu_selector2: 7\n")
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    unread = "(gsg reads no such guard setting: it has no effect)\n    fix: remove it\n"
    assert (result.code, result.out) == (1, (
        f"specs/a.yaml:10:3: error GSG003 unknown-field [m]: unknown field 'guard.bogus' {unread}"
        f"specs/a.yaml:11:38: error GSG003 unknown-field [m]: unknown field 'guard.workload.bogus' {unread}"
        f"specs/a.yaml:12:12: error GSG003 unknown-field [m]: unknown field 'guard.policy.bogus' {unread}"
        f"specs/a.yaml:13:11: error GSG003 unknown-field [m]: unknown field 'guard.model.bogus' {unread}"
        f"specs/a.yaml:14:12: error GSG003 unknown-field [m]: unknown field 'guard.ollama.bogus' {unread}"
        "specs/a.yaml:16:1: error GSG003 unknown-field [m]: unknown field 'gpu_selector2' (GPUStack would silently "
        "drop it)\n    fix: did you mean 'gpu_selector'?\n"))
