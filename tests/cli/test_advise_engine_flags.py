"""gsg advise names each engine's own flags in its hints (issue 36): SGLang and llama.cpp get theirs, not vLLM's."""

import json

from support import REPO

from gpustack_guard.core.advise.compare import KV_NAME

CHAT = str(REPO / "workloads" / "chat.yaml")
LLAMA_70B = "meta-llama/Llama-3.3-70B-Instruct"
VLLM_ONLY = ("--max-num-seqs", "--gpu-memory-utilization", "--max-model-len", "--tensor-parallel-size",
             "--kv-cache-dtype=fp8 ", "--kv-cache-dtype fp8)")


def test_sglang_does_not_fit_hints_with_its_own_flags(gsg):
    result = gsg("advise", "-o", "json", "-m", LLAMA_70B, "--gpu-memory", "48GiB", "--gpus", "1", "--backend",
                 "SGLang", "-w", CHAT)
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["would_fit"] == [
        "add 3 GPUs of 48.00 GiB (4 in all): it starts with --mem-fraction-static=0.86 --context-length=3504 "
        "--max-running-requests=44 --chunked-prefill-size=2048 --kv-cache-dtype=fp8_e5m2 --tp-size=4",
        "fp8_e5m2 KV (--kv-cache-dtype fp8_e5m2) alone is not enough: weights, activation and overheads exceed the "
        "engine's budget by 88.26 GiB per GPU before any KV cache"]
    text = gsg("advise", "-m", LLAMA_70B, "--gpu-memory", "48GiB", "--gpus", "1", "--backend", "SGLang", "-w", CHAT)
    assert not [flag for flag in VLLM_ONLY if flag in text.out], text.out


def test_each_engine_is_told_its_own_8_bit_kv_arguments():
    assert KV_NAME == {
        "vllm": "fp8 KV (--kv-cache-dtype fp8)",
        "sglang": "fp8_e5m2 KV (--kv-cache-dtype fp8_e5m2)",  # SGLang's choices have no plain `fp8`
        "llamacpp": "q8_0 KV (--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on)"}
