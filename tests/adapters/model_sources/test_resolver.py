"""Model facts from config.json, a safetensors index, a GGUF header (local and by HTTP range), the hub cache."""

import json
import struct

import httpx
import pytest
import respx
from support.gguf_header import ARRAY, STRING, UINT32, gguf_header, gguf_string, gguf_u32

from gpustack_guard.adapters.model_sources.hub_cache import HubCache
from gpustack_guard.adapters.model_sources.resolver import FactsResolver, gguf_type_from_filename
from gpustack_guard.core.memory.gguf import GGUFError, facts_from_gguf, parse_header
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.spec.model import DeploymentSpec

QWEN_05B = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
            "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
            "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": True,
            "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}


def gguf_bytes(arch="llama", layers=2, tensor_types=(12, 14)):
    """A small GGUF v3 header with metadata and a tensor table; no tensor data."""
    s = gguf_string
    kv = [("general.architecture", STRING, s(arch)), (f"{arch}.block_count", UINT32, gguf_u32(layers)),
          (f"{arch}.embedding_length", UINT32, gguf_u32(256)),
          (f"{arch}.feed_forward_length", UINT32, gguf_u32(512)),
          (f"{arch}.attention.head_count", UINT32, gguf_u32(8)),
          (f"{arch}.attention.head_count_kv", UINT32, gguf_u32(2)),
          (f"{arch}.context_length", UINT32, gguf_u32(4096)),
          ("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", 8, 3) + s("a") + s("b") + s("c")),
          ("general.file_type", UINT32, gguf_u32(15))]
    tensors = [("token_embd.weight", (256, 3), 14)]
    for layer in range(layers):
        tensors.append((f"blk.{layer}.attn_q.weight", (256, 256), tensor_types[0]))
        tensors.append((f"blk.{layer}.ffn_down.weight", (512, 256), tensor_types[1]))
    tensors.append(("output.weight", (256, 3), 14))
    return gguf_header(kv, tensors)


def reader(data):
    return lambda offset, size: data[offset:offset + size]


def test_gguf_header_gives_exact_tensor_bytes():
    facts = facts_from_gguf(parse_header(reader(gguf_bytes())), "test")
    q4k, q6k = 144 / 256, 210 / 256
    per_layer = int(256 * 256 * q4k) + int(512 * 256 * q6k)
    assert facts.layer_weight_bytes == (per_layer, per_layer)
    assert (facts.num_hidden_layers, facts.hidden_size, facts.num_attention_heads, facts.num_key_value_heads,
            facts.head_dim, facts.vocab_size, facts.max_position_embeddings) == (2, 256, 8, 2, 32, 3, 4096)
    assert facts.weight_bytes == 2 * per_layer + 2 * 630 and not facts.tie_word_embeddings


def test_gguf_rejects_bad_magic_and_truncation():
    with pytest.raises(GGUFError, match="bad magic"):
        parse_header(reader(b"NOPE" + b"\0" * 64))
    with pytest.raises(GGUFError, match="ends inside its header"):
        parse_header(reader(gguf_bytes()[:60]))


def test_gguf_type_from_filename():
    assert gguf_type_from_filename("Llama-3.3-70B-Instruct-Q4_K_M.gguf") == "q4_k_m"
    assert gguf_type_from_filename("qwen2.5-32b-instruct-q8_0-00001-of-00003.gguf") == "q8_0"
    assert gguf_type_from_filename("model.gguf") is None


def test_config_json_with_text_config_and_quantization():
    config = {"text_config": dict(QWEN_05B), "quantization_config": {"quant_method": "awq", "bits": 4,
                                                                     "group_size": 128}}
    facts = facts_from_config(config, "t")
    assert facts.num_hidden_layers == 24 and facts.attention_bias
    assert (facts.quant_method, facts.quant_bits, facts.quant_group_size) == ("awq", 4, 128)


def spec(**extra):
    base = {"name": "m", "source": "huggingface", "huggingface_repo_id": "acme/tiny-chat"}
    return DeploymentSpec.validate({**base, **extra})


@respx.mock
def test_hub_fetch_is_cached_and_sends_the_token(tmp_path):
    commit = {"X-Repo-Commit": "c" * 40}
    config = respx.get("https://hf.test/acme/tiny-chat/resolve/main/config.json").mock(
        return_value=httpx.Response(200, text=json.dumps(QWEN_05B), headers=commit))
    respx.get(f"https://hf.test/acme/tiny-chat/resolve/{'c' * 40}/model.safetensors.index.json").mock(
        return_value=httpx.Response(200, json={"metadata": {"total_size": 988_097_536}}, headers=commit))
    resolver = FactsResolver(hub_cache=HubCache(tmp_path), hf_token="hf_test_token", endpoint="https://hf.test")
    facts, error = resolver.resolve(spec(), "specs/a.yaml")
    assert error is None and facts.weight_bytes == 988_097_536 and facts.source == "hub:acme/tiny-chat"
    assert config.calls[0].request.headers["Authorization"] == "Bearer hf_test_token"
    offline = FactsResolver(hub_cache=HubCache(tmp_path), offline=True, endpoint="https://hf.test")
    cached, _ = offline.resolve(spec(), "specs/a.yaml")
    assert cached.num_hidden_layers == 24 and config.call_count == 1


@respx.mock
def test_gated_repo_says_so(tmp_path):
    respx.get("https://hf.test/acme/tiny-chat/resolve/main/config.json").mock(return_value=httpx.Response(401))
    facts, error = FactsResolver(hub_cache=HubCache(tmp_path), endpoint="https://hf.test").resolve(spec(), "a.yaml")
    assert facts is None and "gated or private" in error and "HF_TOKEN" in error


@respx.mock
def test_unreachable_hub_is_one_line_not_a_crash(tmp_path):
    respx.get("https://hf.test/acme/tiny-chat/resolve/main/config.json").mock(
        side_effect=httpx.ConnectError("connection refused"))
    facts, error = FactsResolver(hub_cache=HubCache(tmp_path), endpoint="https://hf.test").resolve(spec(), "a.yaml")
    assert facts is None and error == "hub lookup of acme/tiny-chat/config.json failed: connection refused"


@respx.mock
def test_remote_gguf_read_by_range_requests(tmp_path):
    data = gguf_bytes()

    def serve(request):
        start, end = map(int, request.headers["Range"].removeprefix("bytes=").split("-"))
        return httpx.Response(206, content=data[start:end + 1])

    route = respx.get("https://hf.test/acme/tiny-gguf/resolve/main/tiny-Q4_K_M.gguf").mock(side_effect=serve)
    s = spec(huggingface_repo_id="acme/tiny-gguf", huggingface_filename="tiny-Q4_K_M.gguf")
    facts, error = FactsResolver(hub_cache=HubCache(tmp_path), endpoint="https://hf.test").resolve(s, "a.yaml")
    assert error is None and facts.num_hidden_layers == 2 and route.called


def test_offline_unknown_model_names_the_fields_to_set(tmp_path):
    facts, error = FactsResolver(hub_cache=HubCache(tmp_path), offline=True).resolve(spec(), "a.yaml")
    assert facts is None and "--offline" in error


def test_overrides_win_and_local_config(tmp_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(json.dumps(QWEN_05B))
    s = spec(guard={"model": {"config": "cfg/config.json", "max_position_embeddings": 8192,
                              "weight_bytes": "1GiB"}})
    facts, error = FactsResolver(hub_cache=HubCache(tmp_path), offline=True).resolve(s, str(tmp_path / "spec.yaml"))
    assert error is None and facts.max_position_embeddings == 8192 and facts.weight_bytes == 1024**3
