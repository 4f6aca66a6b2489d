"""The CLI finds model facts in the standard hub cache ($HF_HOME/hub here, set by conftest) with no network."""

import json

from support.hub_cache import populate

CONFIG = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
          "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
          "vocab_size": 151936, "tie_word_embeddings": True, "max_position_embeddings": 32768,
          "torch_dtype": "bfloat16"}


def test_estimate_offline_reads_a_downloaded_repo_from_hf_home(gsg, tmp_path):
    populate(tmp_path / "hf-home" / "hub", "acme/tiny-chat", "a" * 40,
             {"config.json": json.dumps(CONFIG).encode(),
              "model.safetensors.index.json": json.dumps({"metadata": {"total_size": 988_097_536}}).encode()})
    result = gsg("estimate", "--model", "acme/tiny-chat", "--gpu-memory", "24GiB")
    assert result.code == 0 and "(facts: hub:acme/tiny-chat)" in result.out
    assert "weights                            0.92 GiB" in result.out


def test_estimate_offline_miss_names_the_cache_and_the_ref(gsg, tmp_path):
    result = gsg("estimate", "--model", "acme/tiny-chat", "--gpu-memory", "24GiB")
    assert result.code == 1
    assert result.err.strip().endswith(f"hub lookup is off (--offline): the hub cache {tmp_path / 'hf-home' / 'hub'} "
                                       "has no acme/tiny-chat/config.json (no ref 'main' for the repo)")


def test_the_old_private_cache_is_not_read(gsg, tmp_path):
    old = tmp_path / "gsg-cache" / "hf" / "acme--tiny-chat"  # $GSG_CACHE_DIR/hf/: files with no commit recorded
    old.mkdir(parents=True)
    (old / "config.json").write_text(json.dumps(CONFIG))
    result = gsg("estimate", "--model", "acme/tiny-chat", "--gpu-memory", "24GiB")
    assert result.code == 1 and "has no acme/tiny-chat/config.json (no ref 'main'" in result.err
