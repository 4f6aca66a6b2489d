"""GSG002-GSG016 on the pure core: each rule's findings for a minimal spec, and a near miss that stays clean."""

import pytest
from rule_inputs import FLEET_1, OK, run_stages, vllm

from gpustack_guard.core import findings as F
from gpustack_guard.core.ports import TemplateError, TemplateOutput
from gpustack_guard.core.rules import documents as D

WITHOUT_REPO = {k: v for k, v in OK.items() if k != "huggingface_repo_id"}
LLAMACPP = {"name": "g", "source": "huggingface", "huggingface_repo_id": "org/m-GGUF",
            "huggingface_filename": "m-Q4_K_M.gguf", "gpu_selector": {"gpu_ids": ["w1:cuda:0"]},
            "backend": "llama.cpp", "backend_version": "b6000", "backend_parameters": []}

CASES = [
    # (rule, documents, options, [(location, message, fix)])
    (D.SCHEMA, [OK | {"replicas": "two"}], {},
     [("spec.yaml:8:1", "'replicas': Input should be a valid integer", None)]),
    (D.SCHEMA, [OK | {"replicas": 100000}], {},
     [("spec.yaml:8:1", "'replicas': Input should be less than or equal to 1024", None)]),
    (D.SCHEMA, [["not", "a", "mapping"]], {},
     [("spec.yaml:1:1", "a spec document must be a mapping of GPUStack fields", None)]),
    (D.UNKNOWN_FIELD, [OK | {"schedule_type": "spread"}], {},
     [("spec.yaml:8:1", "unknown field 'schedule_type' (GPUStack would silently drop it)", "remove it")]),
    (D.ENUM_SPELLING, [OK | {"backend": "vllm"}], {},
     [("spec.yaml:5:1", "backend 'vllm' is not spelled as GPUStack expects: it differs from 'vLLM' in the case; "
                        "GPUStack compares backend names exactly and books it as a Custom backend, without vLLM's, "
                        "SGLang's or MindIE's handling", "did you mean 'vLLM'?")]),
    (D.ENUM_SPELLING, [OK | {"backend": "vLL\u041c"}], {},
     [("spec.yaml:5:1", "backend 'vLL\u041c' is not spelled as GPUStack expects: it differs from 'vLLM' in a "
                        "look-alike letter U+041C cyrillic capital letter em in place of 'M'; GPUStack compares "
                        "backend names exactly and books it as a Custom backend, without vLLM's, SGLang's or "
                        "MindIE's handling", "did you mean 'vLLM'?")]),
    (D.ENUM_SPELLING, [OK | {"backend": "vLLM\u00a0"}], {},
     [("spec.yaml:5:1", "backend 'vLLM\\u00a0' is not spelled as GPUStack expects: it differs from 'vLLM' in "
                        "trailing whitespace (U+00A0 no-break space); GPUStack compares backend names exactly and "
                        "books it as a Custom backend, without vLLM's, SGLang's or MindIE's handling",
       "did you mean 'vLLM'?")]),
    (D.ENUM_SPELLING, [OK | {"backend": "llama-cpp"}], {},
     [("spec.yaml:5:1", "backend 'llama-cpp' is not spelled as GPUStack expects: it differs from 'llama.cpp' in "
                        "the separators (spaces, '-', '_', '.'); GPUStack compares backend names exactly and finds "
                        "no 'llama.cpp' backend under that name", "did you mean 'llama.cpp'?")]),
    (D.ENUM_SPELLING, [OK | {"source": "hugging_face"}], {},
     [("spec.yaml:2:1", "'source' is 'hugging_face', not 'huggingface' as GPUStack spells it (it differs in the "
                        "separators (spaces, '-', '_', '.')); GPUStack compares it exactly",
       "did you mean 'huggingface'?")]),
    (D.ENUM_SPELLING, [OK | {"source": "hugingface"}], {},
     [("spec.yaml:2:1", "'source' is 'hugingface', expected one of: huggingface, model_scope, local_path",
       "did you mean 'huggingface'?")]),
    (D.ENUM_SPELLING, [OK | {"categories": ["LLM"]}], {},
     [("spec.yaml:8:3", "'categories.0' is 'LLM', not 'llm' as GPUStack spells it (it differs in the case); "
                        "GPUStack compares it exactly", "did you mean 'llm'?")]),
    (D.ENUM_SPELLING, [OK | {"placement_strategy": "binpack "}], {},
     [("spec.yaml:8:1", "'placement_strategy' is 'binpack ', not 'binpack' as GPUStack spells it (it differs in "
                        "trailing whitespace); GPUStack compares it exactly", "did you mean 'binpack'?")]),
    (D.DUPLICATE_NAME, [OK, OK | {"gpu_selector": {"gpu_ids": ["w1:cuda:1"]}}], {},
     [("spec.yaml:9:1", "model name 'a' is already declared at spec.yaml:1:1 for cluster 'prod'",
       "rename one of them")]),
    (D.SOURCE_ID, [WITHOUT_REPO], {},
     [("spec.yaml:2:1", "source 'huggingface' needs 'huggingface_repo_id'", "add 'huggingface_repo_id:'")]),
    (D.SOURCE_ID, [OK | {"huggingface_repo_id": "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/tree/main"}], {},
     [("spec.yaml:3:1", "huggingface_repo_id 'https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/tree/main' is a URL, "
                        "not a Hugging Face repo id", "write 'huggingface_repo_id: Qwen/Qwen2.5-7B-Instruct'")]),
    (D.SOURCE_ID, [OK | {"huggingface_repo_id": "hf.co/org/m-GGUF/blob/main/m-Q4_K_M.gguf"}], {},
     [("spec.yaml:3:1", "huggingface_repo_id 'hf.co/org/m-GGUF/blob/main/m-Q4_K_M.gguf' is a URL, not a Hugging "
                        "Face repo id", "write 'huggingface_repo_id: org/m-GGUF' and 'huggingface_filename: "
                                        "m-Q4_K_M.gguf'")]),
    (D.SOURCE_ID, [OK | {"huggingface_repo_id": "org/a--b"}], {},
     [("spec.yaml:3:1", "huggingface_repo_id 'org/a--b' holds '--' or '..', which the hub refuses in repo ids",
       "write the hub's repo id, `namespace/name` (e.g. Qwen/Qwen2.5-7B-Instruct)")]),
    (D.SOURCE_ID, [OK | {"huggingface_filename": "../m.gguf"}], {},
     [("spec.yaml:8:1", "huggingface_filename '../m.gguf' holds a '..' component; it names a file inside the repo",
       None)]),
    (D.SOURCE_ID, [WITHOUT_REPO | {"source": "local_path", "local_path": "models/qwen"}], {},
     [("spec.yaml:7:1", "local_path 'models/qwen' is a relative path; GPUStack's server and workers resolve it "
                        "against their own working directory, not the spec's folder (write the absolute path, e.g. "
                        "/models/...)", "write the absolute path on the workers, e.g. /models/NAME")]),
    (D.SOURCE_ID, [WITHOUT_REPO | {"source": "local_path", "local_path": "~/models/qwen"}], {},
     [("spec.yaml:7:1", "local_path '~/models/qwen' starts with '~', which nothing expands (GPUStack opens the path "
                        "as written, without a shell); write the absolute path, e.g. /home/USER/...",
       "write the absolute path on the workers, e.g. /models/NAME")]),
    (D.SCHEMA, [OK | {"env": {"MY-VAR": "1"}}], {},
     [("spec.yaml:8:3", "env name 'MY-VAR' is not a valid variable name (letters, digits and '_', not starting with "
                        "a digit); the backend's shell and most programs cannot read it", "rename it, e.g. 'MY_VAR'")]),
    (D.SCHEMA, [OK | {"env": {"HF_TOKEN": "hf_abcdefghijklmnop\n"}}], {},
     [("spec.yaml:8:3", "env 'HF_TOKEN' has a line break at its end (a YAML `|` block keeps the last line break: "
                        "use `|-` or a plain scalar); it becomes part of the value (a token or URL that no longer "
                        "matches)", "remove the character (the value is not shown: it may be a secret)")]),
    (D.SCHEMA, [OK | {"env": {"DB_URL": "a\x00b"}}], {},
     [("spec.yaml:8:3", "env 'DB_URL' has a NUL byte at character 2; a process environment cannot carry it (execve "
                        "ends the value there)", "remove the character (the value is not shown: it may be a secret)")]),
    (D.GPU_ID_FORMAT, [OK | {"gpu_selector": {"gpu_ids": ["w1-0"]}}], {},
     [("spec.yaml:4:3", "gpu id 'w1-0' is not 'worker:type:index' (e.g. 'gpu-a:cuda:0')", None)]),
    (D.SERVER_MANAGED, [OK | {"id": 42}], {},
     [("spec.yaml:8:1", "'id' is managed by the GPUStack server and cannot be declared", "remove 'id'")]),
    (D.DUPLICATE_KEY, [OK], {"duplicate_keys": {0: [(("replicas",), 4, 1)]}},
     [("spec.yaml:4:1", "key 'replicas' appears twice; YAML keeps only the last", "remove one of them")]),
    (D.TEMPLATE, [OK | {"guard": {"template": "nope"}}], {},
     [("spec.yaml:8:3", "template 'nope' not found", None)]),
    # a sandbox limit (no template line): at the spec's guard.template, the message as the adapter wrote it
    (D.TEMPLATE, [OK | {"guard": {"template": "loops"}}],
     {"templates": {"loops": TemplateError("template 'loops' stopped at templates/loops.yaml.j2:3: more than 10,000 "
                                           "loop iterations (the sandbox limit)", "templates/loops.yaml.j2")}},
     [("spec.yaml:8:3", "template 'loops' stopped at templates/loops.yaml.j2:3: more than 10,000 loop iterations "
                        "(the sandbox limit)", None)]),
    # a guard.vars key the template never reads: at the key, with the closest name it does read
    (D.TEMPLATE, [OK | {"guard": {"template": "t", "vars": {"max_model_len": 8192, "gpu_memory_utilisation": 0.8}}}],
     {"templates": {"t": TemplateOutput(pinned=("--max-model-len=8192",),
                                        variables=frozenset({"gpu_memory_utilization", "max_model_len"}))}},
     [("spec.yaml:8:3", "guard.vars.gpu_memory_utilisation is not read by template 't', so it has no effect; did "
                        "you mean 'gpu_memory_utilization'?", "rename it to gpu_memory_utilization")]),
    (D.TEMPLATE, [OK | {"guard": {"template": "t", "vars": {"colour": "red"}}}],
     {"templates": {"t": TemplateOutput(variables=frozenset({"max_model_len"}))}},
     [("spec.yaml:8:3", "guard.vars.colour is not read by template 't', so it has no effect; it reads "
                        "max_model_len", "remove it")]),
    (D.TEMPLATE, [OK | {"guard": {"template": "broken"}}],
     {"templates": {"broken": TemplateError("unexpected '}'", "templates/broken.yaml.j2", 2)}},
     [("templates/broken.yaml.j2:2:1", "unexpected '}' (spec 'a', spec.yaml:8:3)", None)]),
    (D.TEMPLATE, [OK | {"guard": {"template": "bad-arg"}}],
     {"templates": {"bad-arg": TemplateOutput(pinned=("oops",))}},
     [("spec.yaml:8:3", "template 'bad-arg' renders a bad argument: 'oops' is a value that follows no flag", None)]),
    (D.PINNED_CONFLICT, [OK | {"guard": {"template": "pin"}}],
     {"templates": {"pin": TemplateOutput(pinned=("--max-model-len=4096",))}},
     [("spec.yaml:7:3", "--max-model-len=8192 contradicts --max-model-len=4096 pinned by template 'pin'",
       "remove it or set it to --max-model-len=4096")]),
    (D.FORBIDDEN_ARG, [vllm("a", "--port=8000", "--max-model-len=8192", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "--port is rejected by GPUStack: GPUStack assigns the port itself", "remove --port")]),
    (D.FORBIDDEN_ARG, [LLAMACPP | {"backend_parameters": ["-ngl", "auto"]}], {},
     [("spec.yaml:8:3", "--gpu-layers 'auto' is rejected by GPUStack: its admission check accepts only a whole "
                        "number 0-999 (whatever the engine itself would accept)", "write --gpu-layers=999 for all "
                                                                                  "layers")]),
    (D.FORBIDDEN_ARG, [LLAMACPP | {"backend_parameters": ["--n-gpu-layers=0"]}], {},
     [("spec.yaml:8:3", "--gpu-layers 0 with gpu_selector.gpu_ids is rejected by GPUStack: 0 layers runs on the "
                        "CPU only, so no GPU can be selected", "remove gpu_selector.gpu_ids, or offload layers to the "
                                                                "GPUs")]),
    (D.FORBIDDEN_ARG, [OK | {"guard": {"template": "ngl"}}],
     {"templates": {"ngl": TemplateOutput(pinned=("--gpu-layers=1000",))}},
     [("spec.yaml:8:3", "--gpu-layers '1000' is rejected by GPUStack: its admission check accepts only a whole "
                        "number 0-999 (whatever the engine itself would accept)", "write --gpu-layers=999 for all "
                                                                                  "layers")]),
    (D.DUPLICATE_ARG, [vllm("a", "--max-model-len=8192", "--max_model_len 4096", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "--max-model-len is given twice ('8192' and '4096'); the last one wins", "keep one")]),
    # arguments the template renders: at the spec's guard.template line, not 1:1
    (D.FORBIDDEN_ARG, [OK | {"guard": {"template": "t"}}], {"templates": {"t": TemplateOutput(pinned=("--port=8000",))}},
     [("spec.yaml:8:3", "template 't' renders --port, which is rejected by GPUStack: GPUStack assigns the port "
                        "itself", "remove --port from the template")]),
    (D.DUPLICATE_ARG, [OK | {"guard": {"template": "t"}}],
     {"templates": {"t": TemplateOutput(defaults=("--max-num-batched-tokens=8192", "--max-num-batched-tokens=4096"))}},
     [("spec.yaml:8:3", "template 't' renders --max-num-batched-tokens twice ('8192' and '4096'); the last one wins",
       "keep one in the template")]),
    (D.BACKEND_UNKNOWN, [OK | {"backend": "TurboServe"}], {},
     [("spec.yaml:5:1", "backend 'TurboServe' is not a built-in or known community backend; gsg checks it like "
                        "Custom (weights only)", None)]),
    (D.BACKEND_UNKNOWN, [OK | {"backend": "vLMM"}], {},
     [("spec.yaml:5:1", "backend 'vLMM' is not a built-in or known community backend; gsg checks it like "
                        "Custom (weights only)", "did you mean 'vLLM'?")]),
    # emitted by rendering: a value the engine's own parser refuses, at the argument's line
    (D.ARG_VALUE, [vllm("a", "--max-model-len=lots", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "--max-model-len 'lots': not a whole number; vLLM 0.11.0 (human_readable_int: 16k = "
                        "16,000, 16K = 16,384) accepts a whole number ≥ 1", None)]),
    # a value outside the release's argparse choices (profiles.CHOICE_FLAGS), at the argument that gives it ...
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--kv-cache-dtype=fp7", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "--kv-cache-dtype 'fp7': vLLM 0.11.0 accepts auto, fp8, fp8_e5m2, fp8_e4m3, fp8_inc, "
                        "bfloat16 (argparse choices, case-sensitive) and exits at start-up on anything else", None)]),
    # a second value of a flag that takes one (argparse: unrecognized arguments), and a value that follows no flag
    (D.ARG_VALUE, [vllm("a", "--max-model-len", "8192", "4096", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "'4096' follows --max-model-len '8192', which takes one value: the engine refuses the second "
                        "(unrecognized arguments)", None)]),
    (D.ARG_VALUE, [vllm("a", "--max-model-len", "8192", "4096", gpu_ids=["w1:cuda:0"], backend="SGLang",
                        backend_version="0.5.5")], {},
     [("spec.yaml:7:3", "'4096' follows --max-model-len '8192', which takes one value: the engine refuses the second "
                        "(unrecognized arguments)", None)]),
    (D.ARG_VALUE, [vllm("a", "sql=org/sql-lora", "--max-model-len=8192", gpu_ids=["w1:cuda:0"])], {},
     [("spec.yaml:7:3", "'sql=org/sql-lora' is a value that follows no flag", None)]),
    # the release decides: vLLM 0.8.5's --cuda-graph-sizes (SGLang 0.5.5's --served-model-name) takes one value
    (D.ARG_VALUE, [vllm("a", "--cuda-graph-sizes", "1", "2", gpu_ids=["w1:cuda:0"], backend_version="0.8.5")], {},
     [("spec.yaml:7:3", "'2' follows --cuda-graph-sizes '1', which takes one value: the engine refuses the second "
                        "(unrecognized arguments)", None)]),
    # ... and when the template rendered it: at the spec's guard.template line (it was 1:1 without backend_parameters)
    (D.ARG_VALUE, [{k: v for k, v in OK.items() if k != "backend_parameters"} | {"guard": {"template": "t"}}],
     {"templates": {"t": TemplateOutput(pinned=("--max-model-len=8192", "--kv-cache-dtype=fp7"))}},
     [("spec.yaml:7:3", "template 't' renders --kv-cache-dtype 'fp7': vLLM 0.11.0 accepts auto, fp8, fp8_e5m2, "
                        "fp8_e4m3, fp8_inc, bfloat16 (argparse choices, case-sensitive) and exits at start-up on "
                        "anything else", None)]),
]


@pytest.mark.parametrize("rule,docs,options,expected", CASES, ids=lambda v: getattr(v, "id", None))
def test_rule_reports_exactly(rule, docs, options, expected):
    found = run_stages(*docs, fleet=FLEET_1, **options).findings(rule)
    assert [(str(f.location), f.message, f.fix) for f in found] == expected
    assert {f.rule.id for f in found} == {rule.id}
    assert {f.severity for f in found} == {rule.severity}

# warnings of GSG016: the engine may take the value, gsg cannot size it
WARNED = [
    # a release whose parser takes any text (vLLM 0.33's `CacheDType | str`), whose validator refuses a
    # name outside its built-in list unless a platform plugin registered it: a warning, no arithmetic
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--kv-cache-dtype=fp7", gpu_ids=["w1:cuda:0"],
                        backend_version="0.33.0")], {},
     [("spec.yaml:7:3", "--kv-cache-dtype 'fp7': not a value built into vLLM 0.33.0 (auto, float16, bfloat16, fp8, "
                        "fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, nvfp4_ds_mla, turboquant_k8v4, turboquant_4bit_nc, "
                        "turboquant_k3v4_nc, turboquant_3bit_nc, octave_k3v4, octave_k3v3, octave_k3v3_compact, "
                        "ultraquant_4bit, int4_per_token_head, int8_per_token_head, fp8_per_token_head, nvfp4, "
                        "nvfp4_4over6; exactly as written): it exits at start-up ('Invalid kv_cache_dtype') unless a "
                        "platform plugin (register_kv_cache_dtype) registers that name; gsg cannot size a KV cache in "
                        "it", None)]),
    # a value vLLM takes whose layout gsg has not read: the estimation stage's warning
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--kv-cache-dtype=octave_k3v3", gpu_ids=["w1:cuda:0"],
                        backend_version="0.34.0")], {},
     [("spec.yaml:7:3", "--kv-cache-dtype 'octave_k3v3': gsg does not size a KV cache in octave_k3v3, ROCm's Octave "
                        "slots (v1/attention/ops/rocm_octave.py OctaveFormat.slot_bytes): no memory arithmetic",
       None)]),
]


@pytest.mark.parametrize("docs,expected", [(docs, expected) for _, docs, _, expected in WARNED])
def test_a_kv_dtype_gsg_cannot_size_is_a_warning(docs, expected):
    found = run_stages(*docs, fleet=FLEET_1).findings(D.ARG_VALUE)
    assert [(str(f.location), f.message, f.fix) for f in found] == expected
    assert {f.severity for f in found} == {F.Severity.WARNING}



NEAR_MISSES = [
    (D.SCHEMA, [OK | {"replicas": 1024}]),
    (D.UNKNOWN_FIELD, [OK | {"guard": {"vars": {"anything": 1}}}]),
    (D.ENUM_SPELLING, [OK | {"backend": "vLLM", "source": "huggingface"}]),
    (D.ENUM_SPELLING, [OK | {"backend": "vLMM"}]),  # a typo, not a near-miss: GSG015 with did-you-mean
    (D.ENUM_SPELLING, [OK | {"backend": "llama.cpp", "categories": ["llm", "speech_to_text"]}]),
    (D.SCHEMA, [OK | {"env": {"_OK_1": "tab\tis fine", "HF_HOME": "/cache"}}]),
    # a multi-line value (a PEM key from a `|` block) carries its line breaks on purpose
    (D.SCHEMA, [OK | {"env": {"TLS_KEY": "-----BEGIN KEY-----\nMIIB\n-----END KEY-----\n"}}]),
    (D.DUPLICATE_NAME, [OK, OK | {"name": "b", "gpu_selector": {"gpu_ids": ["w1:cuda:1"]}}]),
    (D.SOURCE_ID, [WITHOUT_REPO | {"source": "local_path", "local_path": "/models/a"}]),
    (D.SOURCE_ID, [OK | {"huggingface_repo_id": "org/" + "m" * 96, "huggingface_filename": "*Q4_K_M*.gguf"}]),
    (D.GPU_ID_FORMAT, [OK | {"gpu_selector": {"gpu_ids": ["w1:cuda:0"]}}]),
    (D.SERVER_MANAGED, [OK | {"description": "kept"}]),
    (D.DUPLICATE_KEY, [OK]),
    (D.FORBIDDEN_ARG, [vllm("a", "--max-model-len=8192", "--host-name=x", gpu_ids=["w1:cuda:0"])]),
    (D.FORBIDDEN_ARG, [LLAMACPP | {"backend_parameters": ["-ngl", "999"]}]),
    (D.FORBIDDEN_ARG, [LLAMACPP | {"backend_parameters": ["-ngl", "0"], "gpu_selector": None}]),
    (D.DUPLICATE_ARG, [vllm("a", "--max-model-len=8192", "--max_model_len 8192", gpu_ids=["w1:cuda:0"])]),
    (D.BACKEND_UNKNOWN, [OK | {"backend": "SGLang"}]),
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--kv-cache-dtype=fp8", gpu_ids=["w1:cuda:0"])]),
    # flags that take several values (engine_flags.MULTI_VALUE_FLAGS): each following item is one of them
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--enable-lora", "--lora-modules", "sql=org/sql-lora",
                        "chat=org/chat-lora", gpu_ids=["w1:cuda:0"])]),
    (D.ARG_VALUE, [vllm("a", "--max-model-len=8192", "--cuda-graph-sizes", "1", "2", "4", "8",
                        gpu_ids=["w1:cuda:0"])]),
    (D.ARG_VALUE, [vllm("a", "--context-length=8192", "--lora-paths", "a=org/x", "b=org/y", gpu_ids=["w1:cuda:0"],
                        backend="SGLang", backend_version="0.5.5")]),
    (D.ARG_VALUE, [vllm("a", "--context-length=8192", "--cuda-graph-bs", "1", "2", "4", "8", gpu_ids=["w1:cuda:0"],
                        backend="SGLang", backend_version="0.5.5")]),
]


@pytest.mark.parametrize("rule,docs", NEAR_MISSES, ids=lambda v: getattr(v, "id", None))
def test_near_miss_is_clean(rule, docs):
    assert run_stages(*docs, fleet=FLEET_1).findings(rule) == []


def test_a_template_that_renders_its_pins_is_no_conflict():
    found = run_stages(OK | {"guard": {"template": "pin"}}, fleet=FLEET_1,
                       templates={"pin": TemplateOutput(pinned=("--max-model-len=8192",))})
    assert found.findings(D.PINNED_CONFLICT) == [] and found.findings(D.TEMPLATE) == []


@pytest.mark.parametrize("variables", [frozenset({"max_model_len"}), None])  # read, or not known statically
def test_vars_the_template_reads_or_may_read_are_clean(variables):
    found = run_stages(OK | {"guard": {"template": "t", "vars": {"max_model_len": 8192}}}, fleet=FLEET_1,
                       templates={"t": TemplateOutput(pinned=("--max-model-len=8192",), variables=variables)})
    assert found.findings(D.TEMPLATE) == []


def test_name_skeleton_of_ascii_is_the_full_folding():
    """The ASCII shortcut gives what NFKC, case folding, the look-alike map and dropping Cf characters give."""
    import unicodedata

    from gpustack_guard.core.rules import documents

    ascii_text = "".join(chr(c) for c in range(128))
    full = "".join(c for c in unicodedata.normalize("NFKC", ascii_text).casefold().translate(documents._LOOKALIKES)
                   if unicodedata.category(c) != "Cf").casefold()
    assert documents.name_skeleton(ascii_text) == full == ascii_text.lower()
    assert documents.name_skeleton("Qwen-ΑΙ") == "qwen-ai"  # Greek capitals still fold to Latin


def test_ot_given_twice_is_no_duplicate_argument():
    """llama.cpp appends every -ot (common/arg.cpp): both count, in order, so GSG014's 'the last one wins' is wrong
    for it; a flag llama.cpp keeps once (-c) still warns."""
    doc = vllm("a", "-ot", r"blk\.0\.ffn_down_exps=CUDA0", "--override-tensor", "exps=CPU", "-c", "8192", "-c", "4096",
               gpu_ids=["w1:cuda:0"], backend="llama.cpp", backend_version="b8467")
    run = run_stages(doc, fleet=FLEET_1)
    assert [f.message for f in run.findings(D.DUPLICATE_ARG)] == [
        "--ctx-size is given twice ('8192' and '4096'); the last one wins"]


@pytest.mark.parametrize("doc,sent", [
    (vllm("a", "--max-model-len=8192", "--enable-lora", "--lora-modules", "sql=org/sql-lora", "chat=org/chat-lora",
          gpu_ids=["w1:cuda:0"]),
     ["--max-model-len=8192", "--enable-lora", "--lora-modules", "sql=org/sql-lora", "chat=org/chat-lora"]),
    # the flag's item split on blanks, as GPUStack's worker does: each value an item of its own, never `--k=a b`
    (vllm("a", "--context-length=8192", "--cuda-graph-bs 1 2", "4", "8", gpu_ids=["w1:cuda:0"], backend="SGLang",
          backend_version="0.5.5"),
     ["--context-length=8192", "--cuda-graph-bs", "1", "2", "4", "8"]),
])
def test_several_values_reach_gpustack_as_separate_items(doc, sent):
    run = run_stages(doc, fleet=FLEET_1)
    assert [e.rendered.request_body()["backend_parameters"] for e in run.results.evaluations] == [sent]
    assert run.findings(D.ARG_VALUE) == [] and [e.failure for e in run.results.evaluations] == [None]


@pytest.mark.parametrize("sizes,graph_bytes", [(("1", "2", "4", "8"), 16 * 2**20), (("1", "2", "4", "160"), 320 * 2**20)])
def test_sglang_reads_every_cuda_graph_bs_value_given_as_items(sizes, graph_bytes):
    """cuda_graph_max_bs = max(--cuda-graph-bs): the last of four separate items sets the graph reserve."""
    run = run_stages(vllm("a", "--context-length=8192", "--cuda-graph-bs", *sizes, gpu_ids=["w1:cuda:0"],
                          backend="SGLang", backend_version="0.5.5"), fleet=FLEET_1)
    assert run.results.evaluations[0].estimates[0].cuda_graphs == graph_bytes
