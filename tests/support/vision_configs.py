"""Qwen2-VL, Qwen2.5-VL and Qwen3-VL config.json shapes (as published) shared by the vision-tower and encoder-profile tests."""

QWEN25_VL_VISION = {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
                    "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
                    "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
                    "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2}
QWEN25_VL_7B = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
                "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
                "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 128000,
                "tie_word_embeddings": False, "torch_dtype": "bfloat16", "sliding_window": 32768,
                "use_sliding_window": False, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
                "vision_config": QWEN25_VL_VISION}
QWEN25_VL_3B = {**QWEN25_VL_7B, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
                "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936,
                "tie_word_embeddings": True, "vision_config": {**QWEN25_VL_VISION, "out_hidden_size": 2048}}
QWEN2_VL_7B = {**QWEN25_VL_7B, "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
               "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3,
                                 "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
                                 "temporal_patch_size": 2}}
QWEN3_VL_8B = {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
               "tie_word_embeddings": False,
               "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 4096, "intermediate_size": 12288,
                               "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
                               "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 262144,
                               "tie_word_embeddings": False, "dtype": "bfloat16"},
               "vision_config": {"deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_size": 1152,
                                 "intermediate_size": 4304, "model_type": "qwen3_vl", "num_heads": 16,
                                 "num_position_embeddings": 2304, "out_hidden_size": 4096, "patch_size": 16,
                                 "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3}}
# Qwen/Qwen3-VL-30B-A3B-Instruct's config.json (benchmarks/vectors/qwen3-vl-30b-a3b): the 0.11.0 TP 4 log's model
QWEN3_VL_30B_A3B = {"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
                    "tie_word_embeddings": False,
                    "text_config": {"model_type": "qwen3_vl_moe_text", "hidden_size": 2048, "intermediate_size": 6144,
                                    "moe_intermediate_size": 768, "num_hidden_layers": 48,
                                    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                                    "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
                                    "mlp_only_layers": [], "norm_topk_prob": True, "vocab_size": 151936,
                                    "max_position_embeddings": 262144, "tie_word_embeddings": False,
                                    "dtype": "bfloat16"},
                    "vision_config": {"deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_size": 1152,
                                      "intermediate_size": 4304, "model_type": "qwen3_vl_moe", "num_heads": 16,
                                      "num_position_embeddings": 2304, "out_hidden_size": 2048, "patch_size": 16,
                                      "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3}}
