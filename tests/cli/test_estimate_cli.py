import json



def test_estimate_json_keys_and_numbers(gsg):
    result = gsg("estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "23.58GiB",
                 "--backend-version", "0.6.4", "-o", "json", "--", "--max-model-len", "20000",
                 "--gpu-memory-utilization", "0.9")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    for key in ("weights_bytes_per_gpu", "kv_bytes_per_token_per_gpu", "kv_cache_bytes_per_gpu",
                "kv_capacity_tokens", "max_model_len", "estimated_max_model_len", "max_concurrency", "verdict",
                "breakdown"):
        assert key in doc
    assert set(doc["breakdown"]) == {"requested", "weights", "activation", "non_torch", "cuda_graphs", "kv_cache",
                                     "headroom"}
    assert doc["kv_bytes_per_token_per_gpu"] == 131_072 and doc["kv_capacity_tokens"] == 31_472
    assert doc["verdict"] == "fits" and doc["max_model_len"] == 20000


def test_estimate_tensor_parallel_from_arguments(gsg):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB", "-o", "json",
                 "--", "--tensor-parallel-size=4", "--max-model-len=16384", "--kv-cache-dtype=fp8")
    doc = json.loads(result.out)
    assert doc["gpus"] == 4 and doc["kv_bytes_per_token_per_gpu"] == 40_960


def test_estimate_text_table_and_config_path(gsg, tmp_path):
    config = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
              "tie_word_embeddings": True, "max_position_embeddings": 131072}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = gsg("estimate", "--model", str(path), "--gpu-memory", "24GB", "--", "--max-model-len", "32768")
    assert result.code == 0 and "verdict: fits" in result.out and "KV bytes / token / GPU" in result.out


def test_estimate_llamacpp_with_a_gguf_type(gsg):
    def verdict(layers):
        result = gsg("estimate", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB",
                     "--backend", "llama.cpp", "-q", "q4_k_m", "-o", "json", "--", "--ctx-size", "32768",
                     "--parallel", "4", "--gpu-layers", str(layers), "--ubatch-size", "256", "--batch-size", "256")
        assert result.code == 0, result.err
        return json.loads(result.out)["verdict"]

    assert (verdict(80), verdict(60)) == ("does-not-fit", "fits")


def test_estimate_bad_size_and_unknown_model(gsg):
    bad = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B", "--gpu-memory", "lots")
    assert bad.code == 1 and "--gpu-memory" in bad.err
    unknown = gsg("estimate", "-m", "acme/nothing", "--gpu-memory", "24GiB")
    assert unknown.code == 1 and "acme/nothing" in unknown.err
