"""vLLM V1's profile of a vision encoder (engines/vllm.py encoder_profile, profiles.VLLM_ENCODER_ROWS).

profile_run encodes max-size dummy items first, then keeps their pixel values and outputs through the text dummy
run: the peak is max(encoder phase, text phase + held). Every family books the derived rule of its model file at
the release (no constant fitted to a log). Figures below are worked by hand from the shapes: 16-bit elements."""

import re

import pytest
from support.vision_configs import QWEN2_VL_7B, QWEN3_VL_8B, QWEN3_VL_30B_A3B, QWEN25_VL_3B, QWEN25_VL_7B

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.engine_flags import FlagValueError
from gpustack_guard.core.memory.engine import mm_encoder_tp_mode, mm_flag_limit, mm_limit, mm_max_pixels
from gpustack_guard.core.memory.engines.vllm import EncoderProfile, VllmConfig, encoder_profile, estimate_vllm
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.terms import ENCODER_PEAK, budget_terms
from gpustack_guard.core.memory.vision import qwen3_vl_video, qwen_vl_side
from gpustack_guard.core.units import GiB

QWEN_PIXELS = 65_536 * 3 * 2 * 14 * 14 * 2  # pixel_values of one 3,584 px image: 154,140,672 B


def gemma3_12b():
    facts = catalog_facts("google/gemma-3-12b-it")
    assert facts is not None
    return facts


@pytest.mark.parametrize("config, family, patches, tokens, pixels_per_patch, out_width, streams, beside", [
    (QWEN25_VL_7B, "qwen2_5_vl", 65_536, 16_384, 1_176, 3_584, 1, 0),
    (QWEN25_VL_3B, "qwen2_5_vl", 65_536, 16_384, 1_176, 2_048, 1, 0),
    (QWEN2_VL_7B, "qwen2_vl", 65_536, 16_384, 1_176, 3_584, 1, 0),
    # longest_edge 16,777,216: a 4,096 px square of 16 px patches; the merger's output and 3 DeepStack features,
    # all three merged before blocks 25 and 26 run (3 x 4,096 / 4 elements per patch beside them)
    (QWEN3_VL_8B, "qwen3_vl", 65_536, 16_384, 1_536, 4_096, 4, 3_072),
])
def test_the_largest_dummy_image_of_qwen_vl(config, family, patches, tokens, pixels_per_patch, out_width, streams,
                                             beside):
    enc = facts_from_config(config, "test").vision_encoder
    assert enc is not None
    assert (enc.family, enc.item_patches, enc.item_tokens, enc.pixel_elements_per_patch, enc.out_width,
            enc.output_streams, enc.held_beside_blocks) == \
        (family, patches, tokens, pixels_per_patch, out_width, streams, beside)


@pytest.mark.parametrize("indexes, streams, beside", [
    ([8, 16, 24], 4, 3 * 1_024),
    ([8, 16, 26], 4, 2 * 1_024),  # a feature of the last block (26 of 27) is merged after every block has run
    ([], 1, 0),
])
def test_qwen3_vl_deepstack_features_held_beside_the_blocks(indexes, streams, beside):
    config = {**QWEN3_VL_8B, "vision_config": {**QWEN3_VL_8B["vision_config"], "deepstack_visual_indexes": indexes}}
    enc = facts_from_config(config, "test").vision_encoder
    assert enc is not None and (enc.output_streams, enc.held_beside_blocks) == (streams, beside)


def test_gemma3_dummy_image_is_one_896_px_crop_of_256_tokens():
    enc = gemma3_12b().vision_encoder
    assert enc is not None
    assert (enc.family, enc.item_patches, enc.item_tokens, enc.pixel_elements_per_patch, enc.width, enc.inter,
            enc.gated, enc.out_width, enc.output_streams) == \
        ("gemma3", 64 * 64, 256, 3 * 14 * 14, 1_152, 4_304, False, 3_840, 1)


@pytest.mark.parametrize("max_pixels, factor, side", [
    (12_845_056, 28, 3_584),  # Qwen2/2.5-VL's default: 128 x 28
    (1_003_520, 28, 980),  # 1280 x 28 x 28, a common --mm-processor-kwargs value: floor(1001.8 / 28) x 28
    (12_845_056, 32, 3_584),  # patch 16 x merge 2
    (16_777_216, 32, 4_096),  # Qwen3-VL's longest_edge: 4,096^2 exactly, not one factor below
    (100, 28, 28),  # never below one factor
    (10**30, 28, 10_000_004),  # above vLLM's 9,999,999 px probe the probe, rounded to 28, is the cap
])
def test_qwen_vl_side_follows_smart_resize(max_pixels, factor, side):
    assert qwen_vl_side(max_pixels, factor) == side


@pytest.mark.parametrize("version, batched, items", [
    ("0.11.0", 2_048, 1), ("0.11.0", 32_767, 1), ("0.11.0", 32_768, 2), ("0.11.0", 65_536, 4),
    ("0.9.0", 32_767, 2), ("0.9.0", 16_385, 2), ("0.9.0", 16_384, 1),  # before 0.10 the budget is rounded up
])
def test_items_are_the_encoder_budget_over_one_item(version, batched, items):
    f = facts_from_config(QWEN25_VL_7B, "test")
    # at 16,384 tokens the dummy video (two frames, one temporal step) ties the image, which is kept
    assert encoder_profile(f, VllmConfig(), batched, 256, 16_384, version).items == items


# 0.10.1-0.12.x count an item's whole placeholder against the budget (260 tokens for Gemma 3's 256 embeddings: a
# 0.11.0rc2 Gemma-3-27B start-up logs "a budget of 8192 tokens, and profiled with 31 image items"); 0.13 the
# embeddings alone
@pytest.mark.parametrize("version, batched, seqs, limit, items", [
    ("0.11.0", 2_048, 256, None, 7), ("0.11.0", 8_192, 256, None, 31), ("0.11.0", 8_192, 4, 1, 4),
    ("0.11.0", 8_192, 4, 3, 12), ("0.11.0", 8_192, 256, 3, 31), ("0.10.1", 8_192, 256, None, 31),
    ("0.10.0", 8_192, 256, None, 32), ("0.13.0", 2_048, 256, None, 8), ("0.19.0", 8_192, 256, None, 32),
])
def test_gemma3_items_are_capped_by_seqs_times_the_per_prompt_limit(version, batched, seqs, limit, items):
    got = encoder_profile(gemma3_12b(), VllmConfig(mm_image_limit=limit), batched, seqs, 8_192, version)
    assert got.items == items


# One 65,536-patch image at 2,048 batched tokens. Qwen2.5-VL (width 1,280, gated MLP of 3,420: 3 x 4,700 = 14,100
# elements): through 0.10 the attention step holds 13 widths (fp32 rotary of q, then of k), at 0.11.0 20 (q and k
# concatenated, then rotated in fp32), from 0.12 11 (16-bit rotary: 14,080, under the MLP's 14,100). Qwen2-VL's
# fc1/fc2 MLP of 5,120 peaks at 2 x (1,280 + 5,120) = 12,800, so from 0.12 its 11 widths (14,080) bind.
@pytest.mark.parametrize("config, version, step", [
    (QWEN25_VL_3B, "0.9.0", 13 * 1_280), (QWEN25_VL_3B, "0.10.2", 13 * 1_280), (QWEN25_VL_3B, "0.11.0", 20 * 1_280),
    (QWEN25_VL_3B, "0.12.0", 14_100), (QWEN25_VL_3B, "0.27.1", 14_100),
    (QWEN25_VL_7B, "0.9.0", 13 * 1_280), (QWEN25_VL_7B, "0.19.0", 14_100),
    (QWEN2_VL_7B, "0.10.1", 13 * 1_280), (QWEN2_VL_7B, "0.11.0", 20 * 1_280), (QWEN2_VL_7B, "0.14.1", 11 * 1_280),
])
def test_qwen_vl_encoder_phase_by_release(config, version, step):
    got = encoder_profile(facts_from_config(config, "test"), VllmConfig(), 2_048, 256, 8_192, version)
    out_width = config["vision_config"].get("out_hidden_size", config["hidden_size"])
    assert got.items == 1
    assert got.phase == QWEN_PIXELS + 65_536 * step * 2
    assert got.held == QWEN_PIXELS + 16_384 * out_width * 2



# Round 30: at tensor parallel > 1 through 0.10 each rank gathers the whole qkv before taking its heads back
# (profiles._QWEN_TP_GATHER): 8 + 3/tp widths at the gather, over the contiguous copies (5 + 6/tp) and the rotary step
# (2 + 11/tp); the MLP's inner width is the rank's share. Qwen2.5-VL at TP 2: 9.5 x 1,280 = 12,160 over the gated
# MLP's 3 x (1,280 + 1,710) = 8,970; at TP 4: 8 x 1,280 + 960 = 11,200. Qwen2-VL's fc1/fc2 MLP at TP 2:
# max(2 x (1,280 + 2,560), 3 x 1,280 + 2,560) = 7,680, under the gather's 12,160. TP 1 keeps its 13 widths. 0.11.0
# gathers, then rotates q and k concatenated in fp32: 2 + 18/tp = 11 widths at TP 2 (14,080). From 0.12 Qwen2.5-VL
# gathers nothing (3 + 8/tp = 7 widths, 8,960 at TP 2, under the MLP's 8,970); so does Qwen2-VL at 0.12.0 (8,960
# over its MLP's 7,680), which gathers again from 0.13 (test_qwen2_vl_regathers_from_0_13).
@pytest.mark.parametrize("config, version, tp, step", [
    (QWEN25_VL_7B, "0.9.2", 2, 12_160), (QWEN25_VL_7B, "0.10.2", 4, 11_200), (QWEN25_VL_3B, "0.9.2", 1, 13 * 1_280),
    (QWEN2_VL_7B, "0.8.0", 2, 12_160), (QWEN25_VL_7B, "0.11.0", 2, 14_080), (QWEN25_VL_7B, "0.12.0", 2, 8_970),
    (QWEN25_VL_7B, "0.19.0", 4, 6_405), (QWEN2_VL_7B, "0.12.0", 2, 8_960),
])
def test_qwen_vl_encoder_phase_per_rank_at_tensor_parallel(config, version, tp, step):
    got = encoder_profile(facts_from_config(config, "test"), VllmConfig(tensor_parallel_size=tp), 2_048, 256, 8_192,
                          version)
    assert got.phase == QWEN_PIXELS + 65_536 * step * 2


# Qwen3-VL-8B at TP 2 (its blocks are Qwen2.5-VL's attention beside the DeepStack features): at 0.19.0 3 x 1,152 +
# 8 x 1,152 / 2 = 8,064 over the fc1/fc2 MLP's max(2 x (1,152 + 2,152), 3 x 1,152 + 2,152) = 6,608, plus the 3,072
# DeepStack elements every rank holds, for the 65,536-patch image; at 0.11.0 the gather's concatenated rotary,
# 2 x 1,152 + 18 x 1,152 / 2 + 3,072, for the dummy video 0.11 profiles at 8,192 tokens (48,400 patches).
@pytest.mark.parametrize("version, patches, step", [("0.19.0", 65_536, 8_064 + 3_072),
                                                    ("0.11.0", 48_400, 2 * 1_152 + 9 * 1_152 + 3_072)])
def test_qwen3_vl_8b_encoder_phase_per_rank_at_tp_2(version, patches, step):
    got = encoder_profile(facts_from_config(QWEN3_VL_8B, "test"), VllmConfig(tensor_parallel_size=2), 2_048, 256,
                          8_192, version)
    assert got.item_patches == patches
    assert got.phase == patches * 1_536 * 2 + patches * step * 2

# Qwen3-VL-8B: 65,536 patches of 3 x 2 x 16 x 16 = 1,536 pixel elements. Its blocks use Qwen2.5-VL's attention
# (11 widths of 1,152 from 0.12, over the fc1/fc2 MLP's 2 x (1,152 + 4,304) = 10,912; 20 widths at 0.11.0) beside
# the 3 DeepStack features merged so far (3 x 4,096 / 4 = 3,072 per patch); what it returns is 4 x 4,096 wide.
# From 0.13 the dummy video's 12,100 soft tokens are under the image's 16,384, so the image is profiled.
@pytest.mark.parametrize("version", ["0.13.0", "0.19.0"])
def test_qwen3_vl_8b_encoder_phase_and_held(version):
    got = encoder_profile(facts_from_config(QWEN3_VL_8B, "test"), VllmConfig(), 2_048, 256, 8_192, version)
    pixels = 65_536 * 1_536 * 2
    step = 11 * 1_152 + 3_072
    assert (got.items, got.modality, got.phase, got.held) == \
        (1, "image", pixels + 65_536 * step * 2, pixels + 16_384 * 4 * 4_096 * 2)
    assert got.phase == 2_264_924_160
    assert "qwen3_vl.py@v0" in got.source and "video" not in got.rule


# At 0.11-0.12 qwen3_vl.py counts a video item at 12.5 tokens a soft token (its timestamps), so one video outranks
# the image. At 8,192 tokens: 2 frames of 4,096 px resized under longest_edge 25,165,824 for both frames together
# (beta = sqrt(2 x 4,096^2 / 25,165,824), floor(4,096 / beta / 32) x 32 = 3,520 px), one temporal patch: 220^2 =
# 48,400 patches, 12,100 soft tokens, int(12,100 x 12.5) = 151,250 tokens of budget. profile_run copies the output
# into zeros of the encoder budget (0.11) or of one item's tokens (0.12) and keeps both copies: a budget of 200,000
# batched tokens tells the two apart.
@pytest.mark.parametrize("version, batched, widened, attention", [
    ("0.11.0", 2_048, 151_250, 20), ("0.11.0", 200_000, 200_000, 20),
    ("0.12.0", 2_048, 151_250, 11), ("0.12.0", 200_000, 151_250, 11),
])
def test_qwen3_vl_8b_profiles_a_video_at_0_11_and_0_12(version, batched, widened, attention):
    got = encoder_profile(facts_from_config(QWEN3_VL_8B, "test"), VllmConfig(), batched, 256, 8_192, version)
    pixels = 48_400 * 1_536 * 2
    row = 4 * 4_096 * 2  # the merger's output and 3 DeepStack features, 16 bits
    assert (got.items, got.modality, got.item_patches, got.item_tokens) == (1, "video", 48_400, 151_250)
    assert got.phase == pixels + 48_400 * (attention * 1_152 + 3_072) * 2
    assert got.held == pixels + 12_100 * row + widened * row
    assert got.rule.endswith("video-timestamp-tokens:contiguous-item-tokens:outputs-widened-to-" +
                             ("budget" if version == "0.11.0" else "item"))
    assert f"gpu_model_runner.py@v{version}" in got.source


# Qwen3-VL-30B-A3B at 65,536 tokens (the 0.11.0 TP 4 log, benchmarks/vectors/MISSES.md): the frames grow to the
# 24,576 cap, each resized to 32 px (2 x 2 patches), 12,288 frame pairs: 49,152 patches, 12,288 soft tokens; the
# log prints "a budget of 153600 tokens, and profiled with 1 video items". What stays through the text run is the
# pixel values, the ViT's output and its copy widened to 153,600 rows of 4 x 2,048: 2.67 GiB.
def test_qwen3_vl_30b_a3b_video_matches_the_logged_budget():
    facts = facts_from_config(QWEN3_VL_30B_A3B, "test")
    assert facts.vision_encoder is not None
    assert qwen3_vl_video(facts.vision_encoder, 65_536) == (24_576, 49_152, 12_288)
    got = encoder_profile(facts, VllmConfig(), 2_048, 256, 65_536, "0.11.0")
    row = 4 * 2_048 * 2
    assert (got.items, got.modality, got.item_tokens) == (1, "video", 153_600)
    assert got.held == 49_152 * 1_536 * 2 + (12_288 + 153_600) * row == 2_868_903_936
    # the same model at 0.13.0 profiles the 16,384-token image again (video: 12,288 soft tokens)
    assert encoder_profile(facts, VllmConfig(), 2_048, 256, 65_536, "0.13.0").modality == "image"


# Qwen2/2.5-VL's dummy video: frames of the largest image, two a temporal step of 16,384 tokens (65,536 patches), as
# many as fit max_model_len, capped at 16 frames (0.10.x) or 14 (0.11 on). A 0.23.0 Qwen2.5-VL-7B start-up at
# 128,000 tokens logs "a budget of 114688 tokens, and profiled with 1 video items" (7 steps).
@pytest.mark.parametrize("config, version, max_len, modality, steps", [
    (QWEN25_VL_7B, "0.23.0", 128_000, "video", 7), (QWEN25_VL_7B, "0.23.0", 200_000, "video", 7),
    (QWEN25_VL_7B, "0.19.0", 32_768, "video", 2), (QWEN25_VL_7B, "0.19.0", 32_767, "image", 1),
    (QWEN2_VL_7B, "0.13.0", 65_536, "video", 4), (QWEN2_VL_7B, "0.13.0", 8_192, "image", 1),
])
def test_qwen2_vl_video_outranks_the_image_from_two_steps(config, version, max_len, modality, steps):
    got = encoder_profile(facts_from_config(config, "test"), VllmConfig(), 2_048, 256, max_len, version)
    assert (got.modality, got.items, got.item_tokens, got.item_patches) == \
        (modality, 1, steps * 16_384, steps * 65_536)
    if modality == "video":
        assert got.rule.endswith("video-frame-steps")
        assert got.held == steps * 65_536 * 1_176 * 2 + steps * 16_384 * config["hidden_size"] * 2


# Before 0.11 (profiles.VLLM_VIDEO_ROWS, read in the wheels) the counted video is fitted to max_model_len less images:
# at 0.8.0-0.8.3 the image limit's 16,384 tokens each (the frames split over the video limit; both limits 1 when
# not given), at 0.8.4-0.10.1 one image's, none from 0.10.2. The video profile_run encodes is sized from
# max_num_batched_tokens (2,048 here: one frame, one step of 65,536 patches), except at 0.10.0 (the counted video).
# At 128,000 tokens one image off leaves 111,616 tokens: 6 steps (98,304 tokens), where 0.11+ fits 7 (114,688).
@pytest.mark.parametrize("config, version, limits, max_len, modality, counted_steps, encoded_steps", [
    # QwenLM/Qwen3-VL#1057 (0.8.2, LLM(limit_mm_per_prompt={"image": 10, "video": 10})): 163,840 image tokens
    # leave nothing, the video is one frame and ties the image, which is kept ("profiled with 1 image items")
    (QWEN25_VL_7B, "0.8.2", (10, 10), 128_000, "image", 1, 1),
    (QWEN25_VL_7B, "0.8.2", (None, None), 128_000, "video", 6, 1),
    # two images off leave 95,232 tokens: 10 frames over 3 videos, 3 frames a video (2 steps)
    (QWEN2_VL_7B, "0.8.2", (2, 3), 128_000, "video", 2, 1),
    (QWEN2_VL_7B, "0.8.3", (10, 10), 128_000, "image", 1, 1),
    (QWEN2_VL_7B, "0.8.4", (10, 10), 128_000, "video", 6, 1),
    (QWEN2_VL_7B, "0.9.2", (None, None), 128_000, "video", 6, 1),
    (QWEN25_VL_7B, "0.9.0", (10, 10), 128_000, "video", 6, 1),  # one image off whatever the image limit
    (QWEN25_VL_7B, "0.9.2", (0, None), 128_000, "video", 7, 1),  # no image allowed: nothing off
    (QWEN25_VL_7B, "0.10.0", (None, None), 128_000, "video", 6, 6),
    (QWEN2_VL_7B, "0.10.1", (None, None), 32_768, "image", 1, 1),  # 16,384 left: one step ties the image
    (QWEN25_VL_7B, "0.10.2", (None, None), 200_000, "video", 8, 1),  # 24 frames capped at 16
])
def test_qwen2_vl_video_before_0_11_by_release(config, version, limits, max_len, modality, counted_steps,
                                               encoded_steps):
    cfg = VllmConfig(mm_image_limit=limits[0], mm_video_limit=limits[1])
    got = encoder_profile(facts_from_config(config, "test"), cfg, 2_048, 256, max_len, version)
    assert (got.modality, got.items, got.item_tokens, got.item_patches) == \
        (modality, 1, counted_steps * 16_384, encoded_steps * 65_536)
    if modality == "video":
        assert got.held == encoded_steps * (65_536 * 1_176 * 2 + 16_384 * config["hidden_size"] * 2)


# The encoded video follows max_num_batched_tokens at 0.9.2: 40,000 tokens hold 2 steps (4 frames)
def test_qwen2_vl_encoded_video_follows_the_batched_tokens_at_0_9():
    f = facts_from_config(QWEN25_VL_7B, "test")
    got = encoder_profile(f, VllmConfig(), 40_000, 256, 128_000, "0.9.2")
    assert (got.modality, got.items, got.item_tokens, got.item_patches) == ("video", 1, 98_304, 2 * 65_536)


# 0.8.2's encoded video comes from a dummy request with every limit (inputs/registry.py dummy_data_for_profiling):
# 60,000 batched tokens less one image leave 43,616, 4 frames over 2 videos, one step; the counted video takes
# 111,616 / 2 videos, 6 frames, 3 steps (49,152 tokens), two of which the 60,000-token budget holds (rounded up)
def test_qwen2_vl_0_8_2_encodes_the_video_of_the_batched_tokens_less_the_image_limit():
    cfg = VllmConfig(mm_image_limit=1, mm_video_limit=2)
    got = encoder_profile(facts_from_config(QWEN2_VL_7B, "test"), cfg, 60_000, 256, 128_000, "0.8.2")
    assert (got.modality, got.items, got.item_tokens, got.item_patches) == ("video", 2, 3 * 16_384, 65_536)
    # 0.8.3 counts the same video but encodes one built for {video: 1}: 60,000 tokens, 6 frames, 3 steps
    got = encoder_profile(facts_from_config(QWEN2_VL_7B, "test"), cfg, 60_000, 256, 128_000, "0.8.3")
    assert (got.modality, got.items, got.item_tokens, got.item_patches) == ("video", 2, 3 * 16_384, 3 * 65_536)


def test_qwen2_vl_video_follows_max_pixels_and_the_video_limit():
    f = facts_from_config(QWEN25_VL_7B, "test")
    # 980 px frames: 4,900 patches, 1,225 tokens a step; 8,192 tokens hold 6 steps, 12 frames (under the cap of 14)
    small = encoder_profile(f, VllmConfig(mm_max_pixels=1_003_520), 2_048, 256, 8_192, "0.23.0")
    assert (small.modality, small.item_tokens, small.item_patches) == ("video", 6 * 1_225, 6 * 4_900)
    assert encoder_profile(f, VllmConfig(mm_video_limit=0), 2_048, 256, 128_000, "0.23.0").modality == "image"


# the video at 8,192 tokens: 2 frames of 4,096 px over the 25,165,824-pixel bound resize to 3,520 px
# (floor(4,096 / sqrt(2 x 4,096^2 / 25,165,824) / 32) x 32), one temporal step of 220^2 patches, 12,100 soft
# tokens, x 12.5 with the timestamps (0.11.0's get_max_video_tokens)
@pytest.mark.parametrize("limits, modality, patches, tokens", [
    (VllmConfig(mm_video_limit=0), "image", 65_536, 16_384),  # no video allowed: the image is the largest item
    (VllmConfig(mm_image_limit=0), "video", 48_400, 151_250),
])
def test_qwen3_vl_limits_choose_the_profiled_modality(limits, modality, patches, tokens):
    got = encoder_profile(facts_from_config(QWEN3_VL_8B, "test"), limits, 2_048, 256, 8_192, "0.11.0")
    assert (got.modality, got.items, got.item_patches, got.item_tokens) == (modality, 1, patches, tokens)
    assert got.phase > 0


# The V2 model runner (config/vllm.py@v0.25.0 puts a dense multimodal model on it) profiles no encoder before
# 0.27.0, and from 0.27.0 keeps only the encoder outputs through the text run (its dummy items are CPU tensors)
@pytest.mark.parametrize("facts, version", [(facts_from_config(QWEN25_VL_7B, "test"), "0.27.1"),
                                           (gemma3_12b(), "0.29.0")])
def test_v2_runner_holds_the_outputs_only(facts, version):
    v1 = encoder_profile(facts, VllmConfig(), 2_048, 256, 8_192, version)
    v2 = encoder_profile(facts, VllmConfig(), 2_048, 256, 8_192, version, "v2")
    enc = facts.vision_encoder
    pixels = v1.items * v1.item_patches * enc.pixel_elements_per_patch * 2
    assert (v2.items, v2.phase) == (v1.items, v1.phase)
    assert v2.held == v1.held - pixels
    assert v2.rule.endswith("v2-runner-outputs-held")


@pytest.mark.parametrize("facts", [facts_from_config(QWEN25_VL_7B, "test"), gemma3_12b()])
@pytest.mark.parametrize("version", ["0.25.0", "0.26.0"])
def test_v2_runner_before_0_27_profiles_no_encoder(facts, version):
    got = encoder_profile(facts, VllmConfig(), 2_048, 256, 8_192, version, "v2")
    assert (got.items, got.phase, got.held, got.rule) == (0, 0, 0, "v2-runner-no-encoder-profile")
    est = estimate_vllm(facts, 24 * GiB, VllmConfig(max_model_len=8_192), version=version)
    assert est.extra["model_runner"] == "v2" and est.extra["encoder_peak"] == 0
    v1 = estimate_vllm(facts, 24 * GiB, VllmConfig(max_model_len=8_192, v2_runner_env="0"), version=version)
    assert v1.extra["model_runner"] == "v1" and v1.extra["encoder_peak"] > 0


# Gemma 3 12B: 8 images of 4,096 patches at 2,048 batched tokens (7 at 0.10.1-0.12: 2,048 // 260); SigLIP's largest
# step is fc1's output and its GELU beside the residual and the norm output: 2 x (1,152 + 4,304) = 10,912 elements,
# over 8 widths of attention. At 0.11.x each 256-row output is copied into zeros of the 2,048-token budget, at 0.12.x
# of the 260-token item, and the outputs themselves stay alive too.
@pytest.mark.parametrize("version, items, widened", [("0.9.0", 8, 0), ("0.11.0", 7, 2_048), ("0.12.0", 7, 260),
                                                     ("0.19.0", 8, 0)])
def test_gemma3_12b_encoder_phase_and_held(version, items, widened):
    got = encoder_profile(gemma3_12b(), VllmConfig(), 2_048, 256, 8_192, version)
    pixels = items * 4_096 * 588 * 2
    assert (got.items, got.phase, got.held) == \
        (items, pixels + items * 4_096 * 10_912 * 2, pixels + items * (256 + widened) * 3_840 * 2)
    assert got.rule.startswith("max(encoder-phase, text+held):siglip-attention")
    assert ("outputs-widened" in got.rule) == bool(widened)
    assert "siglip.py@v0.10.1.1" in got.source


@pytest.mark.parametrize("text_phase, added", [
    (3 * GiB, 100),  # the text phase binds: only what stays allocated is added
    (GiB, GiB),  # the encoder phase binds: 2 GiB peak is 1 GiB over the text phase
    (2 * GiB - 50, 100),  # near miss: the encoder phase is 50 B over, less than what the text run holds
])
def test_derived_profile_adds_the_larger_of_held_and_the_encoder_phase_excess(text_phase, added):
    assert EncoderProfile(items=1, phase=2 * GiB, held=100).added(text_phase) == added


def test_gemma3_estimate_books_the_encoder_as_a_phase_not_a_sum():
    small = estimate_vllm(gemma3_12b(), 24 * GiB, VllmConfig(max_model_len=8_192), version="0.19.0")
    x = small.extra
    assert x["encoder_peak"] == x["encoder_profile"]["held_through_text"] == 54_263_808  # the sampler binds
    # 64 images at 16,384 batched tokens and 16 sequences (a small sampler): the encoder phase is above the text
    # phase, and only its excess counts
    big = estimate_vllm(gemma3_12b(), 80 * GiB, VllmConfig(max_model_len=8_192, max_num_batched_tokens=16_384,
                                                          max_num_seqs=16), version="0.19.0")
    x = big.extra
    text = max(x["forward_peak"], x["sampler_peak"])
    assert x["encoder_profile"]["items"] == 64 and x["encoder_profile"]["encoder_phase"] > text
    assert x["encoder_peak"] == x["encoder_profile"]["encoder_phase"] - text
    assert big.activation == x["encoder_profile"]["encoder_phase"]


@pytest.mark.parametrize("facts, version, rule, read", [
    (facts_from_config(QWEN25_VL_7B, "test"), "0.11.0", "max(encoder-phase, text+held):vit-attention-concat-fp32-rotary",
     "utils.py@v0.10.1.1 MultiModalBudget.get_max_items (items floored); qwen2_5_vl.py@v0.11.0"),
    (facts_from_config(QWEN25_VL_7B, "test"), "0.27.1",
     "max(encoder-phase, text+held):vit-attention-16bit-rotary:v2-runner-outputs-held",
     "qwen2_5_vl.py@v0.12.0, @v0.14.1, @v0.19.0, @v0.27.1 and @v0.34.0"),
    (facts_from_config(QWEN3_VL_8B, "test"), "0.19.0", "max(encoder-phase, text+held):vit-attention-16bit-rotary",
     "qwen3_vl.py@v0.12.0, @v0.19.0 and @v0.34.0"),
    (gemma3_12b(), "0.11.0",
     "max(encoder-phase, text+held):siglip-attention:contiguous-item-tokens:outputs-widened-to-budget",
     "utils.py@v0.10.1.1 MultiModalBudget.get_max_items (items floored); siglip.py@v0.10.1.1"),
    (gemma3_12b(), "0.9.0", "max(encoder-phase, text+held):siglip-attention",
     "gpu_model_runner.py@v0.9.0.1 profile_run"),
])
def test_json_budget_names_the_encoder_rule_of_the_model(facts, version, rule, read):
    est = estimate_vllm(facts, 24 * GiB, VllmConfig(max_model_len=8_192), version=version)
    row = next(r for r in budget_terms(est) if r.term == ENCODER_PEAK)
    assert (row.rule, row.value) == (rule, est.extra["encoder_peak"])
    assert read in row.source


def test_v0_and_text_models_profile_no_encoder():
    qwen = facts_from_config(QWEN25_VL_7B, "test")
    text = facts_from_config({k: v for k, v in QWEN25_VL_7B.items() if k != "vision_config"}, "test")
    assert encoder_profile(text, VllmConfig(), 2_048, 256, 8_192, "0.11.0") == EncoderProfile()
    v0 = estimate_vllm(qwen, 24 * GiB, VllmConfig(max_model_len=8_192), version="0.6.3")
    v1 = estimate_vllm(qwen, 24 * GiB, VllmConfig(max_model_len=8_192), version="0.11.0")
    assert v0.extra["encoder_peak"] == 0 and v0.extra["encoder_profile"]["rule"] == "none"
    assert v1.extra["encoder_peak"] > 0 and v1.extra["encoder_profile"]["rule"].endswith("concat-fp32-rotary")


@pytest.mark.parametrize("cfg, rule", [
    (VllmConfig(skip_mm_profiling=True), "skipped"),
    (VllmConfig(mm_image_limit=0), "image-limit-0"),
])
def test_flags_that_turn_the_encoder_profile_off(cfg, rule):
    got = encoder_profile(gemma3_12b(), cfg, 2_048, 256, 8_192, "0.11.0")
    assert (got.items, got.phase, got.held, got.rule) == (0, 0, 0, rule)
    assert got.added(0) == 0


def test_max_pixels_shrinks_the_qwen_dummy_but_not_gemma3():
    cfg = VllmConfig(mm_max_pixels=1_003_520, mm_video_limit=0)  # no video: 8,192 tokens would hold 6 small steps
    qwen = encoder_profile(facts_from_config(QWEN25_VL_7B, "test"), cfg, 2_048, 256, 8_192, "0.11.0")
    # 980 px square: 70 x 70 = 4,900 patches, 1,225 tokens; 2,048 batched tokens hold one item
    assert (qwen.items, qwen.item_patches, qwen.item_tokens) == (1, 4_900, 1_225)
    assert qwen.phase == 4_900 * 1_176 * 2 + 4_900 * 20 * 1_280 * 2  # 0.11.0: the concatenated fp32 rotary binds
    gemma = encoder_profile(gemma3_12b(), cfg, 2_048, 256, 8_192, "0.11.0")
    assert (gemma.items, gemma.item_patches) == (7, 4_096)  # 2,048 // 260 at 0.11.0


@pytest.mark.parametrize("text, limit", [
    (None, None), ("", None), ('{"image": 2}', 2), ('{"image": 0, "video": 1}', 0), ('{"video": 1}', None),
    ('{"image": {"count": 3, "width": 512}}', 3), ("image=4,video=0", 4), ("image = 5", 5), ("video=2", None),
])
def test_limit_mm_per_prompt_forms(text, limit):
    assert mm_limit(text, "image") == limit


@pytest.mark.parametrize("text, limit", [
    (None, None), ('{"image": 2}', None), ('{"image": 0, "video": 1}', 1), ('{"video": {"count": 0}}', 0),
    ("image=4,video=0", 0),
])
def test_limit_mm_per_prompt_video_count(text, limit):
    assert mm_limit(text, "video") == limit


@pytest.mark.parametrize("flags, image, video", [
    ({"limit-mm-per-prompt.video": "0"}, None, 0),  # the Qwen3-VL recipes' dotted form
    ({"limit-mm-per-prompt.image": "0", "limit-mm-per-prompt.video": "0"}, 0, 0),
    ({"limit-mm-per-prompt": '{"image": 2}', "limit-mm-per-prompt.video": "1"}, 2, 1),
    ({}, None, None),
])
def test_limit_mm_per_prompt_dotted_flags(flags, image, video):
    assert (mm_flag_limit(flags, "image"), mm_flag_limit(flags, "video")) == (image, video)


def test_limit_mm_per_prompt_video_refusal_is_one_line():
    with pytest.raises(FlagValueError) as caught:
        mm_limit("video=x", "video")
    assert str(caught.value) == "--limit-mm-per-prompt 'video=x': the video count is not a whole number"


@pytest.mark.parametrize("text, message", [
    ('{"image": -1}', "--limit-mm-per-prompt '{\"image\": -1}': the image count must be a whole number >= 0"),
    ('{"image": 1.5}', "--limit-mm-per-prompt '{\"image\": 1.5}': the image count must be a whole number >= 0"),
    ('{"image": true}', "--limit-mm-per-prompt '{\"image\": true}': the image count must be a whole number >= 0"),
    ("[1]", "--limit-mm-per-prompt '[1]': not a JSON object"),
    ("{image: 1}", "--limit-mm-per-prompt '{image: 1}': not a JSON object"),
    ('{"image": ' + "[" * 5000, "--limit-mm-per-prompt '{\"image\": " + "[" * 30 + "…': not a JSON object"),
    # nesting past json's depth: one line, not a RecursionError
    ("image=two", "--limit-mm-per-prompt 'image=two': the image count is not a whole number"),
])
def test_limit_mm_per_prompt_refusals_are_one_line(text, message):
    with pytest.raises(FlagValueError) as caught:
        mm_limit(text, "image")
    assert str(caught.value) == message


@pytest.mark.parametrize("text, pixels", [(None, None), ('{"max_pixels": 1003520}', 1_003_520),
                                          ('{"min_pixels": 3136}', None)])
def test_mm_processor_kwargs_max_pixels(text, pixels):
    assert mm_max_pixels(text) == pixels


@pytest.mark.parametrize("text", ['{"max_pixels": 0}', '{"max_pixels": "1e6"}', '{"max_pixels": -5}', "max_pixels=5"])
def test_mm_processor_kwargs_refusals(text):
    with pytest.raises(FlagValueError, match=r"^--mm-processor-kwargs "):
        mm_max_pixels(text)


# Round 30: Qwen2-VL's split_qkv gathers the whole qkv again from 0.13 (profiles._QWEN2_TP_REGATHER, read @v0.13.0 ..
# @v0.19.0): per rank max(8 + 3/tp, 6 + 8/tp) widths of 1,280. TP 2: 10 x 1,280 = 12,800 (the rotary step binds);
# TP 4: 8.75 x 1,280 = 11,200 (the gather binds). 0.12.0 gathers nothing: 3 + 8/2 = 7 widths, 8,960.
@pytest.mark.parametrize("version, tp, step", [("0.12.0", 2, 8_960), ("0.13.0", 2, 12_800), ("0.19.0", 2, 12_800),
                                               ("0.19.0", 4, 11_200), ("0.16.0", 1, 11 * 1_280)])
def test_qwen2_vl_regathers_from_0_13(version, tp, step):
    got = encoder_profile(facts_from_config(QWEN2_VL_7B, "test"), VllmConfig(tensor_parallel_size=tp), 2_048, 256,
                          8_192, version)
    assert got.phase == QWEN_PIXELS + 65_536 * step * 2
    assert ("split_qkv@v0.13.0" in got.source) == (version != "0.12.0")


# Gemma 3's SigLIP is tensor-parallel at every release read (profiles._SIGLIP_TP): residual, layer_norm1 and
# out_proj's output whole, qkv and the attention output with its reshape split: 3 x 1,152 + 5 x 1,152 / tp. TP 2:
# 6,336, under fc1/fc2 on 4,304 / 2 = 2,152: max(2 x (1,152 + 2,152), 3 x 1,152 + 2,152) = 6,608. TP 4: attention
# 3,456 + 1,440 = 4,896 over the MLP's max(2 x 2,228, 3,456 + 1,076) = 4,532. TP 1 keeps 10,912.
@pytest.mark.parametrize("version, tp, items, step", [("0.19.0", 2, 8, 6_608), ("0.19.0", 4, 8, 4_896),
                                                      ("0.12.0", 2, 7, 6_608), ("0.9.0", 1, 8, 10_912)])
def test_gemma3_siglip_step_per_rank_at_tensor_parallel(version, tp, items, step):
    got = encoder_profile(gemma3_12b(), VllmConfig(tensor_parallel_size=tp), 2_048, 256, 8_192, version)
    pixels = items * 4_096 * 588 * 2
    assert (got.items, got.phase) == (items, pixels + items * 4_096 * step * 2)


# --mm-encoder-tp-mode data (from 0.10.2; profiles.VLLM_MM_ENCODER_TP_MODES): the whole tower on every rank, which
# encodes ceil(items / tp) of the equal dummies at the TP 1 step, their pixel values copied out of the whole batch.
# Qwen2.5-VL-7B at 980 px (4,900 patches, 1,225 tokens; 8,192 batched tokens hold 6 items) at 0.19.0: the gated
# MLP's 14,100 elements a patch; 6 items' pixels + the rank's share's copy + the share's step. "weights" at TP 2
# keeps all 6 items at 8,970.
SMALL = 4_900 * 1_176 * 2  # pixel values of one 980 px image


@pytest.mark.parametrize("tp, mode, phase", [
    (2, "data", 6 * SMALL + 3 * SMALL + 3 * 4_900 * 14_100 * 2),
    (4, "data", 6 * SMALL + 2 * SMALL + 2 * 4_900 * 14_100 * 2),
    (2, "weights", 6 * SMALL + 6 * 4_900 * 8_970 * 2),
    (1, "data", 6 * SMALL + 6 * 4_900 * 14_100 * 2),  # one rank: nothing to split, the flag changes nothing
])
def test_encoder_tp_data_encodes_the_ranks_share_with_the_whole_tower(tp, mode, phase):
    cfg = VllmConfig(tensor_parallel_size=tp, mm_max_pixels=1_003_520, mm_video_limit=0, mm_encoder_tp_mode=mode)
    got = encoder_profile(facts_from_config(QWEN25_VL_7B, "test"), cfg, 8_192, 256, 8_192, "0.19.0")
    assert (got.items, got.item_patches, got.phase) == (6, 4_900, phase)
    assert got.held == 6 * SMALL + 6 * 1_225 * 3_584 * 2
    assert got.rule.endswith(":encoder-tp-data") == (mode == "data" and tp > 1)


# Qwen2-VL supports "data" from 0.11.0 (supports_encoder_tp_data in qwen2_vl.py@v0.11.0, not @v0.10.2): at 0.10.2
# it falls back to "weights" (the gather, 12,160 at TP 2); at 0.11.0 the rank encodes the one 65,536-patch image
# with the TP 1 step (20 widths of 1,280), its pixel values copied once more. Gemma 3 never supports it.
@pytest.mark.parametrize("facts, version, phase", [
    (facts_from_config(QWEN2_VL_7B, "test"), "0.10.2", QWEN_PIXELS + 65_536 * 12_160 * 2),
    (facts_from_config(QWEN2_VL_7B, "test"), "0.11.0", 2 * QWEN_PIXELS + 65_536 * 20 * 1_280 * 2),
    (facts_from_config(QWEN25_VL_7B, "test"), "0.10.2", 2 * QWEN_PIXELS + 65_536 * 13 * 1_280 * 2),
])
def test_encoder_tp_data_only_where_the_model_supports_it(facts, version, phase):
    got = encoder_profile(facts, VllmConfig(tensor_parallel_size=2, mm_encoder_tp_mode="data"), 2_048, 256, 8_192,
                          version)
    assert got.phase == phase


def test_encoder_tp_data_falls_back_for_gemma3():
    data = encoder_profile(gemma3_12b(), VllmConfig(tensor_parallel_size=2, mm_encoder_tp_mode="data"), 2_048, 256,
                           8_192, "0.19.0")
    weights = encoder_profile(gemma3_12b(), VllmConfig(tensor_parallel_size=2), 2_048, 256, 8_192, "0.19.0")
    assert data == weights
    est = estimate_vllm(gemma3_12b(), 80 * GiB, VllmConfig(tensor_parallel_size=2, max_model_len=8_192,
                                                           mm_encoder_tp_mode="data"), version="0.19.0")
    assert any("falls back to 'weights'" in note for note in est.notes)


# the vision tower's weights are whole on each rank: Qwen2.5-VL-7B's 676,550,144 vision parameters at 16 bits,
# of which TP 2 counted half a rank: +676,550,144 B per GPU; Qwen2-VL-7B at TP 4: 3/4 of its tower.
@pytest.mark.parametrize("config, tp, added", [(QWEN25_VL_7B, 2, 676_550_144), (QWEN2_VL_7B, 4, None)])
def test_encoder_tp_data_replicates_the_tower_weights(config, tp, added):
    facts = facts_from_config(config, "test")
    vision = facts.vision_params * 2
    runs = [estimate_vllm(facts, 80 * GiB, VllmConfig(tensor_parallel_size=tp, max_model_len=8_192,
                                                      mm_encoder_tp_mode=mode), version="0.19.0")
            for mode in ("weights", "data")]
    assert runs[1].weights - runs[0].weights == vision - vision // tp == (added or vision - vision // tp)


@pytest.mark.parametrize("flags, version, mode", [
    ({}, "0.19.0", "weights"), ({"mm-encoder-tp-mode": "data"}, "0.10.2", "data"),
    ({"mm-encoder-tp-mode": "weights"}, "0.19.0", "weights"), ({"mm-encoder-tp-mode": "data"}, "v9-custom", "data"),
    # the deprecated switch sets "data" at 0.10.2-0.12.x (arg_utils.py create_model_config), over the flag too; it is
    # gone at 0.13.0, and before 0.10.2 it reached only mllama4 and step3_vl (none modelled)
    ({"enable-multimodal-encoder-data-parallel": None}, "0.10.2", "data"),
    ({"enable-multimodal-encoder-data-parallel": None, "mm-encoder-tp-mode": "weights"}, "0.12.0", "data"),
    ({"enable-multimodal-encoder-data-parallel": None}, "0.13.0", "weights"),
    ({"enable-multimodal-encoder-data-parallel": None}, "0.10.1.1", "weights"),
])
def test_mm_encoder_tp_mode_values(flags, version, mode):
    assert mm_encoder_tp_mode(flags, version) == mode


@pytest.mark.parametrize("flags, version, why", [
    ({"mm-encoder-tp-mode": "data"}, "0.10.1.1", "has no --mm-encoder-tp-mode (it exists from 0.10.2)"),
    ({"mm-encoder-tp-mode": "Data"}, "0.19.0", "accepts weights, data"),
    ({"mm-encoder-tp-mode": "dp"}, "0.11.0", "accepts weights, data"),
    ({"mm-encoder-tp-mode": None}, "0.12.0", "accepts weights, data"),
])
def test_mm_encoder_tp_mode_refused(flags, version, why):
    with pytest.raises(FlagValueError, match=re.escape(why)):
        mm_encoder_tp_mode(flags, version)


# a log's printed non-default args carry the mode (the args that differ from the defaults: mm_encoder_tp_mode when not
# "weights"): verify rebuilds the estimate with it, and with no flag where the log prints none
@pytest.mark.parametrize("printed, flags", [
    ("{'model': 'm', 'tensor_parallel_size': 2, 'mm_encoder_tp_mode': 'data'}", ["--mm-encoder-tp-mode=data"]),
    ("{'model': 'm', 'tensor_parallel_size': 2}", []),
])
def test_a_logged_encoder_tp_mode_reaches_the_estimate(printed, flags):
    from gpustack_guard.core.verify import compare as C
    from gpustack_guard.core.verify import patterns as VP
    from gpustack_guard.core.verify.logparse import parse_log

    log, _ = parse_log([f"INFO 12-20 10:00:00 [utils.py:253] non-default args: {printed}\n"], VP.VLLM)
    assert [f for f in C.backend_args(log) if f.startswith("--mm-encoder")] == flags
