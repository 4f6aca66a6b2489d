"""GSG030-GSG040 (but GSG035) on the pure core: exact messages and numbers from the estimation stage."""

from dataclasses import replace

import pytest
from rule_inputs import FLEET_1, LLAMA_8B, LLAMA_70B, OK, QWEN_7B, RTX4090, fleet, gpu, run_stages, vllm, worker

from gpustack_guard.core.findings import Severity
from gpustack_guard.core.memory.estimate import NoEstimate
from gpustack_guard.core.rules import memory as M
from gpustack_guard.core.units import GiB

W1 = ["w1:cuda:0"]
UNSET_LEN = vllm("a", "--max-num-seqs=16", gpu_ids=W1)
V4_SHAPED = replace(LLAMA_8B, compress_ratios=(4,) * 32, weight_bytes=16 * 10**9)


def sglang(*args: str) -> dict:
    return {"name": "a", "source": "huggingface", "huggingface_repo_id": "org/model", "gpu_selector": {"gpu_ids": W1},
            "backend": "SGLang", "backend_version": "0.5.5", "backend_parameters": list(args)}


def llamacpp(*args: str) -> dict:
    return {"name": "a", "source": "huggingface", "huggingface_repo_id": "org/model-GGUF",
            "huggingface_filename": "model-Q8_0.gguf", "gpu_selector": {"gpu_ids": ["w2:cuda:0"]},
            "backend": "llama.cpp", "backend_parameters": list(args)}


def workload(doc: dict, **guard) -> dict:
    return doc | {"guard": guard}


KV_FIX = ", or halve the KV cache with --kv-cache-dtype fp8"
SGLANG_KV_FIX = ", or halve the KV cache with --kv-cache-dtype fp8_e5m2"  # SGLang refuses `fp8`

CASES = [
    # (rule, document, facts, severity, [(location, message, fix)])
    (M.MODEL_FACTS, OK, None, Severity.ERROR,
     [("spec.yaml:3:1", "no memory arithmetic possible: no catalog entry, config or guard.model for 'org/model'",
       "set guard.model.catalog, guard.model.config, or the architecture fields in guard.model")]),
    (M.MODEL_FACTS, OK, replace(LLAMA_8B, intermediate_size=None), Severity.ERROR,
     [("spec.yaml:1:1", "weight bytes unknown (missing intermediate_size in test:llama-8b)",
       "set guard.model.weight_bytes (checkpoint size) and the missing fields")]),
    (M.MODEL_FACTS, sglang("--context-length=8192"), V4_SHAPED, Severity.ERROR,
     [("spec.yaml:5:1", "gsg has no SGLang memory model for compressed sparse attention (DeepSeek-V4); estimate it "
                        "with the vLLM backend", None)]),
    (M.NO_KV_MEMORY, vllm("a", "--max-model-len=8192", "--gpu-memory-utilization=0.9", gpu_ids=W1),
     LLAMA_70B, Severity.ERROR,
     [("spec.yaml:7:3", "no memory left for the KV cache: requested 43.19 GiB − weights 131.45 GiB − activation "
                        "0.46 GiB − non-torch 0.35 GiB = KV -89.07 GiB per GPU",
       "raise --gpu-memory-utilization, add GPUs (tensor parallel) or use a smaller / quantised model")]),
    # SGLang starts with a pool shorter than the context and refuses long inputs (sglang#4048): a warning
    (M.KV_BELOW_MAX_LEN, sglang("--context-length=1048576", "--mem-fraction-static=0.9"),
     LLAMA_8B.merged({"max_position_embeddings": 1048576}), Severity.WARNING,
     [("spec.yaml:7:3", "the KV pool holds 223,481 tokens, fewer than a context of 1,048,576: SGLang starts, but "
       "refuses every input over 223,475 tokens ('exceeds the maximum allowed length') (mem_fraction_static 0.9 x "
       "47.49 GiB free after 0.50 GiB of start-up = 42.74 GiB − weights 15.46 GiB = KV 27.28 GiB per GPU)",
       "set --context-length 223481 or lower, or raise --mem-fraction-static" + SGLANG_KV_FIX)]),
    (M.KV_BELOW_MAX_LEN, UNSET_LEN, LLAMA_8B.merged({"max_position_embeddings": 1048576}), Severity.ERROR,
     [("spec.yaml:7:1", "one sequence of 1,048,576 (unset: the model's native length) tokens needs 128.00 GiB of "
                        "KV cache but only 27.63 GiB is available (requested 43.19 GiB − weights 14.99 GiB − "
                        "activation 0.22 GiB − non-torch 0.35 GiB = KV 27.63 GiB per GPU); the engine will refuse "
                        "to start. Estimated maximum model length: 226,352",
       "set --max-model-len 226352 or lower" + KV_FIX)]),
    (M.KV_OVERSUBSCRIBED, workload(vllm("a", "--max-model-len=32768", "--max-num-seqs=64", gpu_ids=W1),
                                   workload={"prompt_tokens_p99": 16000, "max_output_tokens": 4000}),
     LLAMA_8B, Severity.WARNING,
     [("spec.yaml:7:3", "--max-num-seqs 64 x 20,000 tokens (workload p99 prompt + output = 20,000) = 1,280,000 "
                        "tokens, but the KV pool holds 226,352 tokens (27.63 GiB per GPU): 11 such sequences fit "
                        "at once (max concurrency 6.91x at 32,768); the rest queue or get preempted",
       "set --max-num-seqs 11 or lower --max-model-len" + KV_FIX)]),
    (M.KV_OVERSUBSCRIBED, workload(vllm("a", "--max-model-len=32768", "--max-num-seqs=64", gpu_ids=W1),
                                   policy={"strict": True}), LLAMA_8B, Severity.ERROR,
     [("spec.yaml:7:3", "--max-num-seqs 64 x 32,768 tokens (max_model_len 32,768) = 2,097,152 tokens, but the KV "
                        "pool holds 226,352 tokens (27.63 GiB per GPU): 6 such sequences fit at once (max "
                        "concurrency 6.91x at 32,768); the rest queue or get preempted",
       "set --max-num-seqs 6 or lower --max-model-len" + KV_FIX)]),
    (M.HEADROOM, vllm("a", "--max-model-len=8192", "--max-num-seqs=16", "--gpu-memory-utilization=0.97",
                      gpu_ids=W1), LLAMA_8B, Severity.WARNING,
     [("spec.yaml:7:3", "--gpu-memory-utilization 0.97 leaves 1.44 GiB of 47.99 GiB outside the engine's budget, "
                        "but 2.97 GiB is needed there: CUDA context 0.50 GiB + CUDA graphs 0.14 GiB (captured after "
                        "the KV cache in vLLM 0.11.0) + allocator slack 2.33 GiB; expect an OOM at graph capture or under load",
       "set --gpu-memory-utilization 0.93 or lower, or --enforce-eager")]),
    # b6000 (before flash attention's auto default): -ngl 80 leaves the bf16 output on the host, and its product over
    # 512 rows runs on the GPU on a copy of it (profiles.LLAMACPP_OUTPUT_OFFLOAD), above the full KQ scratch
    (M.OFFLOAD_OVER_GPU, llamacpp("--gpu-layers=80", "--ctx-size=8192") | {"backend_version": "b6000"}, LLAMA_70B,
     Severity.ERROR,
     [("spec.yaml:7:3", "llama.cpp needs more than the GPU holds: 80/80 layers: weights 127.50 GiB + KV 2.50 GiB "
                        "(ctx 8192) + compute 2.22 GiB + output 0.00 GiB + platform 0.49 GiB = 132.71 GiB of 23.99 "
                        "GiB", "lower --gpu-layers (now 80), --ctx-size or --parallel, or enable --flash-attn")]),
    # from b7474 llama.cpp's --fit moves layers to the CPU when -ngl is not given: a warning naming the result
    (M.OFFLOAD_OVER_GPU, llamacpp("--ctx-size=8192") | {"backend_version": "b7474"}, LLAMA_70B, Severity.WARNING,
     [("spec.yaml:7:1", "the arguments do not fit: llama.cpp b7474 --fit starts it with 12 of 80 layers on the GPU "
                        "at 8,192 cells instead (leaving --fit-target free); then 12/80 layers: weights 19.13 GiB + "
                        "KV 0.38 GiB (ctx 8192) + compute 2.22 GiB + output 0.00 GiB + platform 0.49 GiB = 22.21 GiB "
                        "of 23.99 GiB", "set --gpu-layers to what you want served, or --fit off to refuse a smaller "
                                        "deployment")]),
    # -ngl given: --fit gives up and the arguments stay as they are, an error as before (flash attention is auto-on)
    (M.OFFLOAD_OVER_GPU, llamacpp("--gpu-layers=80", "--ctx-size=8192") | {"backend_version": "b7474"}, LLAMA_70B,
     Severity.ERROR,
     [("spec.yaml:7:3", "llama.cpp needs more than the GPU holds: 80/80 layers: weights 127.50 GiB + KV 2.50 GiB "
                        "(ctx 8192) + compute 2.22 GiB + output 0.00 GiB + platform 0.49 GiB = 132.71 GiB of 23.99 "
                        "GiB", "lower --gpu-layers (now 80), --ctx-size or --parallel, or enable --flash-attn")]),
    (M.TP_HEADS, vllm("a", "--max-model-len=8192", "--max-num-seqs=16", "--tensor-parallel-size=3",
                      gpu_ids=["w1:cuda:0", "w1:cuda:1", "w2:cuda:0"]), QWEN_7B, Severity.ERROR,
     [("spec.yaml:7:3", "total number of attention heads (28) must be divisible by tensor parallel size (3)",
       "set --tensor-parallel-size to a divisor of 28")]),
    (M.TP_HEADS, vllm("a", "--max-model-len=8192", "--max-num-seqs=16", "--tensor-parallel-size=2",
                      gpu_ids=["w1:cuda:0", "w1:cuda:1"]), replace(QWEN_7B, num_key_value_heads=3), Severity.ERROR,
     [("spec.yaml:7:3", "KV heads (3) and tensor parallel size (2) must divide one another",
       "set --tensor-parallel-size to a divisor or multiple of 3")]),
    (M.MAX_LEN_UNSET, UNSET_LEN, LLAMA_8B, Severity.INFO,
     [("spec.yaml:7:1", "--max-model-len is not pinned; gsg evaluated 131,072 tokens. GPUStack's worker injects "
                        "--max-model-len 8192 for vLLM when the native length is larger.", "pin --max-model-len")]),
    (M.VERSION_UNSET, {k: v for k, v in OK.items() if k != "backend_version"}, LLAMA_8B, Severity.INFO,
     [("spec.yaml:1:1", "backend_version is not pinned; gsg assumed 0.11.0 for version-dependent arithmetic "
                        "(CUDA-graph accounting, defaults)", "pin backend_version")]),
    (M.VERSION_UNSET, OK | {"backend_version": ""}, LLAMA_8B, Severity.INFO,
     [("spec.yaml:6:1", "backend_version is not pinned; gsg assumed 0.11.0 for version-dependent arithmetic "
                        "(CUDA-graph accounting, defaults)", "pin backend_version")]),
    (M.VERSION_UNSET, OK | {"backend_version": "latest"}, LLAMA_8B, Severity.INFO,
     [("spec.yaml:6:1", "backend_version 'latest' is not a pinned version (a moving tag); gsg assumed 0.11.0, as "
                        "for no version, for version-dependent arithmetic (CUDA-graph accounting, defaults), and "
                        "GPUStack runs whatever it resolves to at deploy time",
       "pin backend_version to a release, e.g. 0.11.0")]),
    (M.VERSION_UNSET, OK | {"backend_version": "nightly-2026"}, LLAMA_8B, Severity.INFO,
     [("spec.yaml:6:1", "backend_version 'nightly-2026' is not a pinned version (not a version gsg can read); gsg "
                        "assumed 0.11.0, as for no version, for version-dependent arithmetic (CUDA-graph accounting, "
                        "defaults), and GPUStack runs whatever it resolves to at deploy time", "pin backend_version to a release, e.g. 0.11.0")]),
    (M.MAX_LEN_ABOVE_NATIVE, vllm("a", "--max-model-len=65536", "--max-num-seqs=4", gpu_ids=W1), QWEN_7B,
     Severity.ERROR,  # vLLM 0.11's own verification, word for word
     [("spec.yaml:7:3", "--max-model-len 65,536 exceeds the 32,768 tokens vLLM derives for this model and version; "
                        "vLLM refuses to start: User-specified max_model_len (65536) is greater than the derived "
                        "max_model_len (max_position_embeddings=32768 or model_max_length=None in model's "
                        "config.json). To allow overriding this maximum, set the env var "
                        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme "
                        "caution. If the model uses relative position encoding (RoPE), positions exceeding "
                        "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions "
                        "exceeding derived_max_model_len will cause a CUDA array out-of-bounds error.",
       "set --max-model-len 32768 or lower")]),
    (M.MAX_LEN_ABOVE_NATIVE, vllm("a", "--max-model-len=65536", "--max-num-seqs=4", gpu_ids=W1,
                                  env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}), QWEN_7B, Severity.WARNING,
     [("spec.yaml:7:3", "--max-model-len 65,536 exceeds the model's native 32,768 tokens; vLLM allows it only "
                        "because VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and quality degrades past the native length",
       "set --max-model-len 32768 or lower")]),
]


@pytest.mark.parametrize("rule,doc,facts,severity,expected", CASES, ids=lambda v: getattr(v, "id", None))
def test_rule_reports_exactly(rule, doc, facts, severity, expected):
    found = run_stages(doc, fleet=FLEET_1, facts=facts).findings(rule)
    assert [(str(f.location), f.message, f.fix) for f in found] == expected
    assert {f.rule.id for f in found} == {rule.id} and {f.severity for f in found} == {severity}


def test_memory_findings_carry_the_estimate():
    (finding,) = run_stages(vllm("a", "--max-model-len=32768", "--max-num-seqs=64", gpu_ids=W1),
                            fleet=FLEET_1).findings(M.KV_OVERSUBSCRIBED)
    assert finding.data["sequences_fitting"] == 6
    assert finding.data["kv_capacity_tokens"] == 226_352 and finding.data["max_num_seqs"] == 64
    assert finding.data["verdict"] == "fits"


def test_estimation_failures_are_structured():
    evaluation = run_stages(sglang("--context-length=8192"), fleet=FLEET_1, facts=V4_SHAPED).results.evaluations[0]
    assert evaluation.failure.reason is NoEstimate.UNSUPPORTED_MODEL and evaluation.estimates == ()
    unknown = run_stages(OK, fleet=FLEET_1, facts=None).results.evaluations[0]
    assert unknown.failure.reason is NoEstimate.NO_FACTS


NEAR_MISSES = [
    (M.MODEL_FACTS, OK, replace(LLAMA_8B, intermediate_size=None, weight_bytes=16 * 10**9)),
    (M.NO_KV_MEMORY, OK, LLAMA_8B),
    (M.KV_BELOW_MAX_LEN, vllm("a", "--max-model-len=225984", "--max-num-seqs=1", gpu_ids=W1), LLAMA_8B),
    (M.KV_OVERSUBSCRIBED, workload(vllm("a", "--max-model-len=32768", "--max-num-seqs=64", gpu_ids=W1),
                                   policy={"kv_oversubscription": "off"}), LLAMA_8B),
    (M.KV_OVERSUBSCRIBED, vllm("a", "--max-model-len=32768", "--max-num-seqs=6", gpu_ids=W1), LLAMA_8B),
    (M.HEADROOM, vllm("a", "--max-model-len=8192", "--max-num-seqs=16", "--gpu-memory-utilization=0.93",
                      gpu_ids=W1), LLAMA_8B),
    (M.OFFLOAD_OVER_GPU, llamacpp("--gpu-layers=10", "--ctx-size=8192"), LLAMA_8B),
    (M.TP_HEADS, vllm("a", "--max-model-len=8192", "--max-num-seqs=16", "--tensor-parallel-size=2",
                      gpu_ids=["w1:cuda:0", "w1:cuda:1"]), QWEN_7B),
    (M.MAX_LEN_UNSET, OK, LLAMA_8B),
    # the unset length does not fit at all: GSG032 says so, GSG038 stays silent
    (M.MAX_LEN_UNSET, UNSET_LEN, LLAMA_8B.merged({"max_position_embeddings": 1048576})),
    (M.VERSION_UNSET, OK, LLAMA_8B),
    (M.MAX_LEN_ABOVE_NATIVE, vllm("a", "--max-model-len=32768", "--max-num-seqs=4", gpu_ids=W1), QWEN_7B),
]


@pytest.mark.parametrize("rule,doc,facts", NEAR_MISSES, ids=lambda v: getattr(v, "id", None))
def test_near_miss_is_clean(rule, doc, facts):
    assert run_stages(doc, fleet=FLEET_1, facts=facts).findings(rule) == []


def test_memory_rules_need_a_fleet():
    run = run_stages(vllm("a", "--tensor-parallel-size=3", gpu_ids=W1), fleet=None, facts=QWEN_7B)
    assert run.findings(M.TP_HEADS) == [] and run.results.evaluations[0].estimates == ()


def _sglang_pool(fleet_used: int = 0, instances: tuple = (), doc: dict | None = None):
    busy = fleet(worker("w1", gpu(0, used=fleet_used), gpu(1)), worker("w2", gpu(0, RTX4090)), instances=instances)
    evaluation = run_stages(doc or sglang("--context-length=1048576", "--mem-fraction-static=0.9"), fleet=busy,
                            facts=LLAMA_8B.merged({"max_position_embeddings": 1048576})).results.evaluations[0]
    return evaluation.estimates[0]


def test_sglang_sizes_its_pool_from_what_foreign_processes_leave_free():
    # SGLang takes mem_fraction_static of the free memory it measures: 6 GiB held by another process on the GPU
    # leave 0.9 x 6 GiB less for weights + pool than on an empty card (the startup check, GSG041, sees the same)
    empty, busy = _sglang_pool(), _sglang_pool(6 * GiB)
    assert empty.extra["free_before_weights"] - busy.extra["free_before_weights"] == 6 * GiB
    assert busy.extra["foreign_bytes"] == 6 * GiB and empty.extra["foreign_bytes"] == 0
    assert empty.kv_available - busy.kv_available in (int(0.9 * 6 * GiB), int(0.9 * 6 * GiB) + 1)
    assert (empty.kv_capacity_tokens, busy.kv_capacity_tokens) == (223_481, 179_244)


def test_sglang_foreign_memory_is_named_in_the_finding():
    busy = fleet(worker("w1", gpu(0, used=6 * GiB), gpu(1)), worker("w2", gpu(0, RTX4090)))
    (found,) = run_stages(sglang("--context-length=1048576", "--mem-fraction-static=0.9"), fleet=busy,
                          facts=LLAMA_8B.merged({"max_position_embeddings": 1048576})).findings(M.KV_BELOW_MAX_LEN)
    assert ("(mem_fraction_static 0.9 x 41.49 GiB free after 0.50 GiB of start-up and 6.00 GiB already in use = "
            "37.34 GiB − weights 15.46 GiB = KV 21.88 GiB per GPU)") in found.message


def test_sglang_counts_unmanaged_instances_bookings_and_not_vllm():
    # an instance gsg does not manage booked 10 GiB of GPU 0 (its claim is larger than the live usage reported)
    claim = ({"model": "bge-m3", "worker": "w1", "gpu_indexes": [0], "claims": {0: 10 * GiB}},)
    assert _sglang_pool(2 * GiB, claim).extra["foreign_bytes"] == 10 * GiB
    # vLLM's budget is its own fraction of the total from 0.6.4: what others hold is GSG041's, not its pool's
    doc = vllm("a", "--max-model-len=8192", "--max-num-seqs=16", gpu_ids=W1)
    busy = fleet(worker("w1", gpu(0, used=6 * GiB), gpu(1)), worker("w2", gpu(0, RTX4090)))
    alone = run_stages(doc, fleet=FLEET_1).results.evaluations[0].estimates[0]
    shared = run_stages(doc, fleet=busy).results.evaluations[0].estimates[0]
    assert alone.kv_capacity_tokens == shared.kv_capacity_tokens


def _fixes(rule, doc, facts=LLAMA_8B) -> list[str]:
    return [f.fix for f in run_stages(doc, fleet=FLEET_1, facts=facts).findings(rule)]


def test_kv_hints_name_each_engines_own_flags():
    """SGLang's --kv-cache-dtype has no `fp8` (fp8_e5m2, fp8_e4m3) and its admission flag is
    --max-running-requests: its fixes say so; a spec already on fp8 gets no KV hint."""
    oversubscribed = {"prompt_tokens_p99": 16000, "max_output_tokens": 4000}
    assert _fixes(M.KV_OVERSUBSCRIBED, workload(sglang("--context-length=32768", "--max-running-requests=64"),
                                                workload=oversubscribed)) == \
        ["set --max-running-requests 10 or lower --context-length" + SGLANG_KV_FIX]
    assert _fixes(M.KV_OVERSUBSCRIBED, workload(sglang("--context-length=32768", "--max-running-requests=64",
                                                       "--kv-cache-dtype=fp8_e4m3"), workload=oversubscribed)) == \
        ["set --max-running-requests 21 or lower --context-length"]
    assert _fixes(M.KV_OVERSUBSCRIBED, workload(vllm("a", "--max-model-len=32768", "--max-num-seqs=64",
                                                     "--kv-cache-dtype=fp8", gpu_ids=W1), workload=oversubscribed)) \
        == ["set --max-num-seqs 22 or lower --max-model-len"]


@pytest.mark.parametrize("fix, text", [
    ({"gpu_memory_utilization": 0.93, "max_num_seqs": 512},
     "set --gpu-memory-utilization 0.93 or lower, or --max-num-seqs 512 or lower"),
    ({"gpu_memory_utilization": 0.0, "max_num_seqs": 512}, "--max-num-seqs 512 or lower"),
    ({"gpu_memory_utilization": 0.93, "max_num_seqs": 0}, "set --gpu-memory-utilization 0.93 or lower"),
    ({"gpu_memory_utilization": 0.0, "max_num_seqs": 0}, "the sampler warm-up does not fit at any --max-num-seqs "
                                                         "on this GPU: use a GPU with more memory or a smaller model"),
])
def test_gsg043_never_advises_a_flag_value_of_zero(fix, text):
    from gpustack_guard.core.rules.memory import _warmup_fix_text

    assert _warmup_fix_text(fix) == text
