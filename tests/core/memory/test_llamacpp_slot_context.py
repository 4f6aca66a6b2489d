"""The tokens one llama-server slot can hold (engines/llamacpp.slot_context): llama_context's n_ctx_seq, the whole
context with one unified cache, a padded share with a cache per slot, n_ctx / n_parallel on builds before per-slot
streams. The estimate gave ctx / slots for a unified cache too: 8,192 where the engine logs n_ctx_seq = 32,768."""

import json

import pytest

MODEL = ("-m", "meta-llama/Llama-3.1-8B-Instruct", "-q", "q4_k_m", "--gpu-memory", "24GiB", "--backend", "llama.cpp",
         "-o", "json")


def estimate(gsg, version, *flags):
    result = gsg("estimate", *MODEL, "--backend-version", version, "--", *flags)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    return {key: doc[key] for key in ("max_model_len", "max_concurrency", "kv_capacity_tokens", "max_num_seqs")}


@pytest.mark.parametrize("version", ["b7045", "b10507"])
@pytest.mark.parametrize("flags, expected", [
    # one unified cache: every slot may fill the whole context, one such request at a time
    (("-c", "32768", "-np", "4", "--kv-unified"), (32768, 1.0, 32768, 4)),
    (("-c", "32768", "-np", "-1"), (32768, 1.0, 32768, 4)),  # automatic slots unify the cache
    (("-c", "32768",), (32768, 1.0, 32768, 4)),  # no -np: the automatic 4 slots of these builds
    # a cache per slot: each slot its share, padded to 256 cells (-c 1000 -np 3: 1,024 -> 3 x 512 cells)
    (("-c", "32768", "-np", "4"), (8192, 4.0, 32768, 4)),
    (("-c", "1000", "-np", "3"), (512, 3.0, 1536, 3)),
])
def test_a_slot_holds_the_context_of_its_cache(gsg, version, flags, expected):
    assert tuple(estimate(gsg, version, *flags).values()) == expected


def test_builds_before_per_slot_streams_split_the_context_over_the_slots(gsg):
    # the server's n_ctx_slot = n_ctx / n_parallel; one cache of the padded n_ctx
    assert estimate(gsg, "b5000", "-c", "32768", "-np", "4") == {
        "max_model_len": 8192, "max_concurrency": 4.0, "kv_capacity_tokens": 32768, "max_num_seqs": 4}
    # no -np on a build without automatic slots: one slot, the whole context
    assert estimate(gsg, "b5000", "-c", "32768") == {
        "max_model_len": 32768, "max_concurrency": 1.0, "kv_capacity_tokens": 32768, "max_num_seqs": 1}


@pytest.mark.parametrize("flags, n_ctx", [(("-c", "1024"), 1024), (("-c", "1024", "-np", "4"), 256)])
def test_llama_cpp_23652_slot_contexts(gsg, flags, n_ctx):
    """ggml-org/llama.cpp#23652 (b9265): `-c 1024` with -np omitted logs four slots of `n_ctx = 1024` (the unified
    cache of the automatic slots, PR #16736), `-np 4` given logs `n_ctx = 256` each."""
    assert estimate(gsg, "b9265", *flags)["max_model_len"] == n_ctx
