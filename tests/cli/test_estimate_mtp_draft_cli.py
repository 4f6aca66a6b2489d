"""`gsg estimate -o json` with an MTP draft: extra.speculative_draft gives the drafter's terms, the weights and KV rows
name them (profiles.VLLM_MTP_DRAFT, VLLM_GATED_DELTA_SPEC); a draft gsg does not read on a Gated DeltaNet target is
GSG030, one line."""

import json

H200 = ("--gpu-memory", "143771MiB", "--gpu-name", "NVIDIA H200")


def test_json_shows_the_mtp_layers_of_glm_4_7(gsg):
    result = gsg("estimate", "-m", "zai-org/GLM-4.7", *H200, "--backend-version", "0.24.0", "-o", "json", "--",
                 "--tensor-parallel-size", "8", "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1}')
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    draft = doc["extra"]["speculative_draft"]
    assert (draft["kind"], draft["layers"], draft["shared_heads"], draft["kv_bytes_per_token"]) == \
        ("mtp-layers", 1, 0, 512)
    assert draft["weights"] == 983_906_408 + 104_888_320
    rules = {row["term"]: row["rule"] for row in doc["budget"]}
    assert rules["weights_bytes_per_gpu"].endswith("+mtp-draft-layers")
    assert doc["kv_bytes_per_token_per_gpu"] == 47_616


def test_a_gated_delta_target_with_its_mtp_layer_has_a_verdict(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu-memory", "81559MiB", "--gpu-name",
                 "NVIDIA H100 80GB HBM3", "--backend-version", "0.24.0", "-o", "json", "--",
                 "--tensor-parallel-size", "4", "--max-model-len", "32768", "--no-enable-prefix-caching",
                 "--speculative-config", '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}')
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["extra"]["speculative_draft"]["speculative_state_blocks"] == 2
    assert doc["extra"]["gated_delta"]["pages_per_sequence_state"] == 9


def test_an_eagle_draft_on_a_gated_delta_target_is_one_gsg030_line(gsg):
    result = gsg("estimate", "-m", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu-memory", "81559MiB", "--gpu-name",
                 "NVIDIA H100 80GB HBM3", "--backend-version", "0.24.0", "--", "--tensor-parallel-size", "4",
                 "--speculative-config", '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 2}')
    assert result.code == 1 and "Traceback" not in result.err
    assert result.err.count("\n") == 1 and "GSG030" in result.err
    assert "--speculative-config (method eagle3) adds speculative state slots" in result.err
