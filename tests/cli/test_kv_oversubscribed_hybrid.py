"""GSG033 on hybrid models: with no workload declared, sequences of max_model_len fit as many times as the engine's
max concurrency says, not the pool's printed token count over max_model_len (which, for sliding-window groups and
Gated DeltaNet state pages, divides the blocks over every group)."""

import json

import pytest


def _finding(gsg, model: str, *flags: str) -> dict:
    result = gsg("estimate", "--model", model, "--gpu-memory", "80GiB", "--backend-version", "0.19.0", "-o", "json",
                 "--", "--max-model-len", "32768", *flags)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    (found,) = [f for f in doc["findings"] if f["rule"] == "GSG033"]
    fit = int(found["message"].split(" such sequences fit at once")[0].rsplit(" ", 1)[1])
    assert found["fix"].startswith(f"set --max-num-seqs {fit} or lower --max-model-len")
    return {"fit": fit, "tokens": doc["kv_capacity_tokens"],
            "concurrency": doc["max_concurrency"], "message": found["message"]}


@pytest.mark.parametrize("model,flags,fit", [
    ("google/gemma-3-12b-it", ("--max-num-seqs", "256"), 9),  # 5 sliding-window layers to 1 full
    ("Qwen/Qwen3.6-27B", (), 7),                                # 3 Gated DeltaNet layers to 1 full
])
def test_a_hybrid_fits_its_max_concurrency_of_full_length_sequences(gsg, model, flags, fit):
    got = _finding(gsg, model, *flags)
    assert got["fit"] == fit == int(got["concurrency"])
    assert got["tokens"] // 32_768 < fit  # the printed token count alone would say fewer


def test_a_model_caching_every_token_in_every_layer_keeps_the_token_count(gsg):
    got = _finding(gsg, "Qwen/Qwen3-8B", "--max-num-seqs", "256")
    assert got["fit"] == got["tokens"] // 32_768 == int(got["concurrency"])
