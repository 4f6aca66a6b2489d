import pytest

from gpustack_guard.core import args as A


def parse(items, family="vllm"):
    return A.parse(items, family)


def test_equals_space_and_two_item_forms_normalise_alike():
    forms = [["--max-model-len=8192"], ["--max-model-len 8192"], ["--max-model-len", "8192"], ["--max_model_len=8192"]]
    assert {tuple((a.key, a.value) for a in parse(f)) for f in forms} == {(("max-model-len", "8192"),)}


def test_boolean_flags_and_negative_numbers():
    parsed = parse(["--enforce-eager", "--seed", "-1", "--enable-chunked-prefill=true"])
    assert [(a.key, a.value) for a in parsed] == [("enforce-eager", None), ("seed", "-1"),
                                                  ("enable-chunked-prefill", "true")]
    assert A.same_value(None, "true") and A.same_value("0.90", "0.9") and not A.same_value("0.9", "0.92")


def test_short_aliases_per_backend():
    assert [a.key for a in parse(["-tp", "2"])] == ["tensor-parallel-size"]
    assert [a.key for a in parse(["--tp", "2"], "sglang")] == ["tp-size"]
    assert [a.key for a in parse(["-c", "4096", "-ngl", "60", "-np", "4"], "llamacpp")] == \
        ["ctx-size", "gpu-layers", "parallel"]


def test_value_without_flag_is_an_error_with_its_index():
    with pytest.raises(A.ArgError) as err:
        parse(["--a=1", "stray"])
    assert err.value.index == 1


def test_merge_pinned_defaults_and_spec():
    pinned = parse(["--gpu-memory-utilization=0.88", "--max-model-len=16384"])
    defaults = parse(["--enable-chunked-prefill", "--max-num-seqs=32"])
    spec = parse(["--max-num-seqs", "8", "--gpu-memory-utilization=0.9", "--enable-prefix-caching",
                  "--max-model-len=16384"])
    final, conflicts = A.merge(pinned, defaults, spec)
    assert A.render(final) == ["--gpu-memory-utilization=0.88", "--max-model-len=16384",
                               "--enable-chunked-prefill", "--max-num-seqs=8", "--enable-prefix-caching"]
    assert [(s.value, p.value) for s, p in conflicts] == [("0.9", "0.88")]


def test_duplicates_only_when_meaning_differs():
    pairs = A.duplicates(parse(["--max-model-len=8192", "--max_model_len", "8192", "--max-model-len=4096"]))
    assert [(a.value, b.value) for a, b in pairs] == [("8192", "4096")]


def test_numbers_compare_as_the_engine_reads_them():
    assert A.same_value("16K", "16384", "max-model-len", "vllm")
    assert A.same_value("8k", "8000", "max-num-batched-tokens", "vllm")
    assert not A.same_value("16k", "16384", "max-model-len", "vllm")
    assert not A.same_value("16K", "16384")  # without the flag, text only
    _, conflicts = A.merge(parse(["--max-model-len=16384"]), [], parse(["--max-model-len", "16K"]), "vllm")
    assert conflicts == []
    assert A.duplicates(parse(["--max-model-len=16384", "--max-model-len=16K"]), "vllm") == []


@pytest.mark.parametrize("params,says", [
    (["--enable-prefix-caching", ""], "an empty argument"),
    (["  ", "--enable-prefix-caching"], "an empty argument"),
    (["--", "--max-model-len=8192"], "'--' alone is not a flag"),
    (["-"], "'-' alone is not a flag"),
])
def test_empty_and_bare_dash_arguments_are_refused(params, says):
    from gpustack_guard.core import args as A

    with pytest.raises(A.ArgError, match=says):
        A.parse(params, "vllm")


def test_a_repeated_ot_keeps_every_value_in_order_and_other_flags_keep_the_last():
    """llama.cpp appends each -ot's pairs to one list (common/arg.cpp): the joined value is the list it builds."""
    args = A.parse(["-ot", "a=CPU", "--gpu-layers", "10", "--override-tensor=b=CUDA0,c=CPU", "-ngl", "20",
                    "--override-tensor", "d=CPU"], "llamacpp")
    assert [a.key for a in args] == ["override-tensor", "gpu-layers", "override-tensor", "gpu-layers",
                                     "override-tensor"]
    flags = A.as_dict(args, "llamacpp")
    assert flags == {"override-tensor": "a=CPU,b=CUDA0,c=CPU,d=CPU", "gpu-layers": "20"}
    assert A.as_dict(args) == {"override-tensor": "d=CPU", "gpu-layers": "20"}  # no engine: argparse's reading
    assert [(first.key, later.key) for first, later in A.duplicates(args, "llamacpp")] == [("gpu-layers", "gpu-layers")]
    # the short spellings of --cpu-moe / --n-cpu-moe name the same flags; other engines have no repeatable flag
    assert [a.key for a in A.parse(["-cmoe", "-ncmoe", "4"], "llamacpp")] == ["cpu-moe", "n-cpu-moe"]
    vllm = A.parse(["--max-model-len", "8192", "--max-model-len", "4096"], "vllm")
    assert A.as_dict(vllm, "vllm") == {"max-model-len": "4096"} and len(A.duplicates(vllm, "vllm")) == 1


def test_merge_renders_a_repeated_ot_as_one_list():
    final, conflicts = A.merge([], [], A.parse(["-ot", "a=CPU", "-ot", "b=CPU"], "llamacpp"), "llamacpp")
    assert A.render(final) == ["--override-tensor=a=CPU,b=CPU"] and conflicts == []


@pytest.mark.parametrize("flag,first,second", [
    ("--override-kv", "tokenizer.ggml.add_bos_token=bool:false", "general.name=str:x"),
    ("--lora", "a.gguf", "b.gguf"),
    ("--control-vector", "happy.gguf", "calm.gguf"),
])
def test_llamacpp_flags_appended_per_occurrence_are_passed_on_each_and_not_duplicates(flag, first, second):
    """llama.cpp appends each --override-kv / --lora / --control-vector to a list (common/arg.cpp): merge once kept
    the last only, dropping the first from the deployment, and GSG014 said 'the last one wins'."""
    spec = A.parse([flag, first, "-c", "4096", flag, second], "llamacpp")
    final, conflicts = A.merge([], [A.Arg(flag[2:], "template.gguf", 0)], spec, "llamacpp")
    assert A.render(final) == [f"{flag}={first}", "--ctx-size=4096", f"{flag}={second}"] and conflicts == []
    assert A.duplicates(spec, "llamacpp") == []
    # without the spec's own, the template's default stays; vLLM keeps argparse's last-wins reading
    assert A.render(A.merge([], [A.Arg(flag[2:], "template.gguf", 0)], [], "llamacpp")[0]) == \
        [f"{flag}=template.gguf"]
    vllm = A.parse(["--lora-modules", "a=/a", "--lora-modules", "b=/b"], "vllm")
    assert A.render(A.merge([], [], vllm, "vllm")[0]) == ["--lora-modules=b=/b"]


@pytest.mark.parametrize("item, key, value", [
    # a value holding '=' after a blank: the flag ends at the blank (SGLang --lora-paths NAME=PATH ...)
    ("--lora-paths lora0=org/a lora1=org/b", "lora-paths", "lora0=org/a lora1=org/b"),
    ("--lora-modules sql=/adapters/sql", "lora-modules", "sql=/adapters/sql"),  # vLLM's NAME=PATH
    ("--lora-paths 'lora0=org/a' lora1=org/b", "lora-paths", "lora0=org/a lora1=org/b"),  # quotes: the worker's
    ("--chat-template='a b'", "chat-template", "a b"),
    ("--max-model-len\t8192", "max-model-len", "8192"),
])
def test_a_flag_ends_at_its_first_equals_sign_or_blank(item, key, value):
    assert A.as_dict(parse([item], "sglang")) == {key: value}


@pytest.mark.parametrize("family,version,items,key,values", [
    # vLLM --lora-modules: nargs='+' (cli_args.py@v0.6.3 .. entrypoints/common/cli_args.py@v0.34.0)
    ("vllm", "0.11.0", ["--enable-lora", "--lora-modules", "sql=org/sql-lora", "chat=org/chat-lora"], "lora-modules",
     ("sql=org/sql-lora", "chat=org/chat-lora")),
    ("vllm", "0.6.3", ["--served-model-name", "a", "b"], "served-model-name", ("a", "b")),
    ("vllm", "0.9.0", ["--cuda-graph-sizes", "1", "2", "4"], "cuda-graph-sizes", ("1", "2", "4")),
    ("vllm", "0.34.0", ["--cudagraph-capture-sizes", "1", "2", "--max-num-seqs=8"], "cudagraph-capture-sizes",
     ("1", "2")),
    # SGLang: server_args.py@v0.5.5 nargs='*' / '+', arg_groups List fields in 0.5.23
    ("sglang", "0.5.5", ["--lora-paths", "a=x", "b=y"], "lora-paths", ("a=x", "b=y")),
    ("sglang", "0.5.5", ["--cuda-graph-bs", "1", "2", "4", "8"], "cuda-graph-bs", ("1", "2", "4", "8")),
    ("sglang", "0.5.23", ["--cuda-graph-bs-decode", "1", "2"], "cuda-graph-bs-decode", ("1", "2")),
    # the flag's own item split on blanks by the worker, then the items that follow
    ("sglang", None, ["--cuda-graph-bs 1 2", "4"], "cuda-graph-bs", ("1", "2", "4")),
])
def test_a_flag_that_takes_several_values_takes_every_following_value(family, version, items, key, values):
    parsed = A.parse(items, family, version)
    arg = next(a for a in parsed if a.key == key)
    assert (arg.value, arg.values, arg.index) == (" ".join(values), values, items.index(next(
        i for i in items if i.startswith(f"--{key}"))))
    assert A.as_dict(parsed, family)[key] == " ".join(values)
    # passed on as separate items: `--k=a b` would reach the engine as the one value 'a b'
    rendered = A.render(A.merge([], [], parsed, family)[0])
    assert rendered[rendered.index(f"--{key}"):][:len(values) + 1] == [f"--{key}", *values]


@pytest.mark.parametrize("family,version,items,index,message", [
    ("vllm", "0.11.0", ["--max-model-len", "4096", "8192"], 2,
     "'8192' follows --max-model-len '4096', which takes one value: the engine refuses the second (unrecognized "
     "arguments)"),
    ("sglang", "0.5.5", ["--served-model-name", "a", "b"], 2,  # one value in SGLang, several in vLLM
     "'b' follows --served-model-name 'a', which takes one value: the engine refuses the second (unrecognized "
     "arguments)"),
    # the release decides: --cuda-graph-sizes takes one value before the list fields (arg_utils.py@v0.8.5 has none),
    # --prompt-adapters is gone in 0.10.0
    ("vllm", "0.8.5", ["--cuda-graph-sizes", "1", "2"], 2,
     "'2' follows --cuda-graph-sizes '1', which takes one value: the engine refuses the second (unrecognized "
     "arguments)"),
    ("sglang", "0.5.20", ["--cuda-graph-bs", "1", "2"], 2,
     "'2' follows --cuda-graph-bs '1', which takes one value: the engine refuses the second (unrecognized "
     "arguments)"),
    ("llamacpp", "b8000", ["--lora", "a.gguf", "b.gguf"], 2,
     "'b.gguf' follows --lora 'a.gguf', which takes one value: the engine refuses the second (unrecognized "
     "arguments)"),
    ("vllm", "0.11.0", ["sql=org/sql-lora", "--lora-modules", "chat=org/chat-lora"], 0,
     "'sql=org/sql-lora' is a value that follows no flag"),
    ("vllm", "0.11.0", ["--lora-modules=sql=org/sql-lora", "chat=org/chat-lora"], 1,  # '=' gives exactly one
     "'chat=org/chat-lora' follows --lora-modules 'sql=org/sql-lora', whose '=' gives it exactly one value: the "
     "engine refuses the second (unrecognized arguments)"),
])
def test_a_second_value_of_a_one_value_flag_or_a_value_after_nothing_is_refused(family, version, items, index,
                                                                                 message):
    with pytest.raises(A.ArgError) as err:
        A.parse(items, family, version)
    assert (err.value.index, str(err.value)) == (index, message)


def test_without_a_readable_version_every_release_list_flag_takes_several_values():
    """No false error on a release gsg cannot name: the union of the table's rows."""
    for version in (None, "latest", "custom-build"):
        assert A.as_dict(A.parse(["--cuda-graph-sizes", "1", "2", "--prompt-adapters", "a=x", "b=y"], "vllm",
                                 version)) == {"cuda-graph-sizes": "1 2", "prompt-adapters": "a=x b=y"}


def test_a_list_flag_alone_or_with_one_value_renders_as_before():
    parsed = A.parse(["--lora-target-modules", "--lora-paths", "a=x", "--enable-lora"], "sglang", "0.5.5")
    assert A.render(parsed) == ["--lora-target-modules", "--lora-paths=a=x", "--enable-lora"]


def test_a_second_value_of_a_one_value_secret_flag_is_refused_without_showing_either():
    with pytest.raises(A.ArgError) as err:
        A.parse(["--api-key", "sk-first-1234", "sk-second-5678"], "sglang", "0.5.5")
    assert (err.value.index, str(err.value)) == (
        2, "a second value follows --api-key, which takes one value: the engine refuses it (unrecognized arguments)")
