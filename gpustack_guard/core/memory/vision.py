"""Vision tower and projector parameters of a multimodal config.json, counted as vLLM builds them (pure).

Each family's count is the sum of the module shapes in vLLM's model file (vllm/model_executor/models/...); the
defaults for keys a config leaves out are its transformers config class's, which is what vLLM reads. A
multimodal config of a family not counted here is reported by name (`unsupported`), never taken as 0.
docs/memory-arithmetic.md ("Vision towers") explains the formulas; profiles.VISION_* hold the sources.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import EncoderDummy
from gpustack_guard.core.values import frozen_value


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class VisionTower:
    """The vision encoder of a multimodal model, as vLLM loads and profiles it."""

    __repr__ = fields_repr

    params: int = 0  # vision encoder + projector parameters vLLM loads (0: no vision part)
    family: str | None = None  # which count applied, for messages
    unsupported: str | None = None  # a multimodal config gsg cannot count: what it is
    encoder: EncoderDummy | None = None  # the dummy item V1's profile_run encodes (None: not derived)


def qwen_vl_side(max_pixels: int, factor: int) -> int:
    """The side of the largest dummy image of a Qwen-VL processor: vLLM asks smart_resize (transformers
    image_processing_qwen2_vl) for a 9,999,999-pixel square, which it scales down to max_pixels and floors to the
    patch x merge factor (12,845,056 px, factor 28: 3,584 px)."""
    huge = 9_999_999
    side = round(huge / factor) * factor
    if side * side > max_pixels:
        beta = math.sqrt(huge * huge / max_pixels)  # in floats, as smart_resize computes it
        side = max(factor, math.floor(huge / beta / factor) * factor)
    return side


def qwen_vl_encoder(v: dict, family: str, *, width_key: str, default_width: int, inter: int, gated: bool,
                    default_patch: int, out_width: int, max_pixels: int, video_per_frame: bool = False) -> EncoderDummy:
    """The largest dummy image vLLM profiles a Qwen-VL encoder with: smart_resize of a 9,999,999-pixel square under
    the processor's pixel cap (Qwen2/2.5-VL: 12,845,056 px, 3,584 px square, 65,536 patches of 14, the "budget of
    16384 tokens" its startup log prints), and the ViT shapes engines/vllm.py sizes its steps from."""
    patch, merge = _get(v, "patch_size", default_patch), _get(v, "spatial_merge_size", 2)
    width = _get(v, width_key, default_width)
    side = qwen_vl_side(max_pixels, patch * merge)
    patches = (side // patch) ** 2
    chans = _get(v, "in_channels", _get(v, "in_chans", 3))
    return EncoderDummy(family, patches, patches // (merge * merge), chans * _get(v, "temporal_patch_size", 2)
                        * patch * patch, width, inter, gated, out_width, patch_factor=patch * merge,
                        patch_size=patch, video_per_frame=video_per_frame)


def _get(config: dict, key: str, default):
    """A vision_config value of the default's kind: a string or a bool where a number belongs would repeat text
    or pass as 1 in the products below (a hostile "depth": "0" times a 2**31 width is gigabytes of text). Where the
    default is a positive number (a size, a count, a ratio) the value must be positive too: a 0 patch or merge size
    divides by zero, a negative width makes negative bytes."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (isinstance(default, int) and not isinstance(value, int)) or \
                (isinstance(value, float) and not math.isfinite(value)):  # an int past a float's range is finite
            raise ValueError(f"vision_config '{key}' must be a {'whole ' if isinstance(default, int) else ''}"
                             f"number, not {str(value)[:40]!r}")
        if default > 0 and value <= 0:
            raise ValueError(f"vision_config '{key}' must be above 0, not {value}")
    elif isinstance(default, list) and not isinstance(value, list):
        raise ValueError(f"vision_config '{key}' must be a list, not {str(value)[:40]!r}")
    return value


def vit_shape(config: dict) -> tuple[int, int] | None:
    """vision_config's depth and width as SGLang reads them (server_args.py@0.4.10 adjust_mem_fraction_for_vlm:
    getattr(vision_config, "num_hidden_layers", 24), getattr(..., "hidden_size", 1024)); None without one."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return None
    return _get(vision, "num_hidden_layers", 24), _get(vision, "hidden_size", 1024)


def _layer_indexes(config: dict, key: str, default: list[int]) -> list[int]:
    """A list of ViT block indexes (Qwen3-VL's deepstack_visual_indexes): whole numbers from 0."""
    indexes = _get(config, key, default)
    for index in indexes:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"vision_config '{key}' must hold block indexes (whole numbers from 0), "
                             f"not {str(index)[:40]!r}")
    return indexes


def _vit_layer(hidden: int, inter: int, *, gated: bool, bias: bool, norms: int) -> int:
    """One pre-norm ViT block: fused QKV + output projection, an MLP (gate + up + down or fc1 + fc2) and `norms`
    parameters of normalisation (LayerNorm 4H with bias, RMSNorm 2H)."""
    attn = 4 * hidden * hidden + (4 * hidden if bias else 0)
    mlp = (3 if gated else 2) * hidden * inter + (((2 if gated else 1) * inter + hidden) if bias else 0)
    return attn + mlp + norms


def _merger(hidden: int, merge: int, out: int, norm: int) -> int:
    """Qwen's patch merger: a norm, then Linear(H m^2, H m^2) + GELU + Linear(H m^2, out), both biased."""
    wide = hidden * merge * merge
    return norm + wide * wide + wide + wide * out + out


def qwen2_vl(v: dict) -> int:
    """qwen2_vl.py Qwen2VisionTransformer: Conv3d patch embedding without bias, LayerNorm blocks with a biased
    QuickGELU fc1/fc2 MLP of mlp_ratio x embed_dim, a LayerNorm patch merger onto the text width (`hidden_size`)."""
    embed, depth = _get(v, "embed_dim", 1280), _get(v, "depth", 32)
    inter = int(embed * _get(v, "mlp_ratio", 4))
    patch = _get(v, "in_chans", 3) * _get(v, "temporal_patch_size", 2) * _get(v, "patch_size", 14) ** 2 * embed
    block = _vit_layer(embed, inter, gated=False, bias=True, norms=4 * embed)
    return patch + depth * block + _merger(embed, _get(v, "spatial_merge_size", 2), _get(v, "hidden_size", 3584),
                                           2 * embed)


def qwen2_5_vl(v: dict) -> int:
    """qwen2_5_vl.py Qwen2_5_VisionTransformer: the same patch embedding, RMSNorm blocks with a biased SiLU
    gate/up/down MLP of `intermediate_size`, an RMSNorm merger onto `out_hidden_size`."""
    hidden, depth = _get(v, "hidden_size", 1280), _get(v, "depth", 32)
    chans = _get(v, "in_chans", _get(v, "in_channels", 3))
    patch = chans * _get(v, "temporal_patch_size", 2) * _get(v, "patch_size", 14) ** 2 * hidden
    block = _vit_layer(hidden, _get(v, "intermediate_size", 3420), gated=True, bias=True, norms=2 * hidden)
    return patch + depth * block + _merger(hidden, _get(v, "spatial_merge_size", 2),
                                           _get(v, "out_hidden_size", 3584), hidden)


def qwen3_vl(v: dict) -> int:
    """qwen3_vl.py Qwen3_VisionTransformer: a biased Conv3d patch embedding, learned position embeddings
    (num_position_embeddings x H), LayerNorm blocks with a biased fc1/fc2 MLP, the final merger (LayerNorm over H)
    and one DeepStack merger per deepstack_visual_indexes entry (LayerNorm over H m^2)."""
    hidden, depth = _get(v, "hidden_size", 1152), _get(v, "depth", 27)
    merge, out = _get(v, "spatial_merge_size", 2), _get(v, "out_hidden_size", 3584)
    chans = _get(v, "in_channels", _get(v, "in_chans", 3))
    patch = chans * _get(v, "temporal_patch_size", 2) * _get(v, "patch_size", 16) ** 2 * hidden + hidden
    position = _get(v, "num_position_embeddings", 2304) * hidden
    block = _vit_layer(hidden, _get(v, "intermediate_size", 4304), gated=False, bias=True, norms=4 * hidden)
    deepstack = len(_layer_indexes(v, "deepstack_visual_indexes", [8, 16, 24]))
    wide = hidden * merge * merge
    return patch + position + depth * block + _merger(hidden, merge, out, 2 * hidden) + \
        deepstack * _merger(hidden, merge, out, 2 * wide)


def qwen3_vl_encoder(v: dict, family: str, text_hidden: int) -> EncoderDummy:
    """Qwen3-VL's dummy image: its processor caps size["longest_edge"] (P.QWEN3_VL_MAX_PIXELS: 4,096 px square,
    65,536 patches of 16), which --mm-processor-kwargs max_pixels does not move (patch_factor 0). The ViT returns
    the merger's output beside one feature per DeepStack layer (qwen3_vl.py: torch.cat([hidden_states] +
    deepstack_feature_lists, dim=1)), and the features merged so far stay allocated through the later blocks."""
    merge, depth = _get(v, "spatial_merge_size", 2), _get(v, "depth", 27)
    out_width = _get(v, "out_hidden_size", text_hidden)
    indexes = _layer_indexes(v, "deepstack_visual_indexes", [8, 16, 24])
    # a feature is merged after its block runs, so the last block runs beside those of earlier blocks
    beside_last = sum(1 for i in indexes if i < depth - 1)
    enc = qwen_vl_encoder(v, family, width_key="hidden_size", default_width=1152,
                          inter=_get(v, "intermediate_size", 4304), gated=False, default_patch=16,
                          out_width=out_width, max_pixels=P.QWEN3_VL_MAX_PIXELS)
    return replace(enc, patch_factor=0, output_streams=1 + len(indexes),
                   held_beside_blocks=beside_last * out_width // (merge * merge),
                   video_side=qwen_vl_side(P.QWEN3_VL_MAX_PIXELS, enc.patch_size * merge),
                   video_factor=enc.patch_size * merge,
                   video_max_pixels=P.QWEN3_VL_VIDEO_MAX_PIXELS, video_min_pixels=P.QWEN3_VL_VIDEO_MIN_PIXELS,
                   temporal_patch=_get(v, "temporal_patch_size", 2))


def _video_resize(frames: int, side: int, factor: int, temporal: int, min_pixels: int, max_pixels: int) -> int:
    """The side transformers' Qwen3-VL video smart_resize gives `frames` square frames of `side` px: the
    frames, rounded to the temporal patch, times the area must stay within the bounds."""
    bar = round(side / factor) * factor
    t_bar = round(frames / temporal) * temporal
    if t_bar * bar * bar > max_pixels:
        beta = math.sqrt(frames * side * side / max_pixels)  # in floats, as smart_resize computes it
        return max(factor, math.floor(side / beta / factor) * factor)
    if t_bar * bar * bar < min_pixels:
        beta = math.sqrt(min_pixels / (frames * side * side))
        return math.ceil(side * beta / factor) * factor
    return bar


@functools.lru_cache(maxsize=64)
def _video_grid(frames: int, shape: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    """(patches, soft tokens) of a dummy video of `frames` frames (qwen3_vl.py _get_vision_info: the frames padded
    to the temporal patch, grid_t x grid_h x grid_w patches, merge^2 of them a token); `shape` is (side, factor,
    patch, temporal, min pixels, max pixels)."""
    side, factor, patch, temporal, low, high = shape
    resized = _video_resize(frames, side, factor, temporal, low, high)
    grid_t = max((frames + frames % temporal) // temporal, 1)
    patches = grid_t * (resized // patch) ** 2
    return patches, patches // (factor // patch) ** 2


@functools.lru_cache(maxsize=64)
def _video_frames(shape: tuple[int, int, int, int, int, int], cap: int, seq_len: int) -> int:
    frames = 2
    while frames < cap and _video_grid.__wrapped__(frames + 1, shape)[1] <= seq_len:
        frames += 1
    return frames


def qwen3_vl_video(enc: EncoderDummy, seq_len: int, max_frames: int = P.QWEN3_VL_MAX_FRAMES_PER_VIDEO) \
        -> tuple[int, int, int]:
    """(frames, patches, soft tokens) of the video vLLM profiles Qwen3-VL with at max_model_len `seq_len`:
    Qwen2VLProcessingInfo._get_max_video_frames adds frames from 2 while the next count's tokens stay within
    seq_len, then get_num_frames_with_most_features caps them at _MAX_FRAMES_PER_VIDEO (a loop of up to that many
    steps, as vLLM's own; cached)."""
    shape = (enc.video_side, enc.video_factor, enc.patch_size, enc.temporal_patch, enc.video_min_pixels,
             enc.video_max_pixels)
    frames = _video_frames(shape, max_frames, seq_len)
    return (frames, *_video_grid(frames, shape))


def qwen2_vl_video(image_patches: int, image_tokens: int, seq_len: int, max_frames: int, images: int = 0,
                   videos: int = 1) -> tuple[int, int, int]:
    """(frames, patches, soft tokens) of Qwen2/2.5-VL's dummy video: frames of the largest image, padded to two a
    temporal step; qwen2_vl.py get_num_frames_with_most_features takes `images` images' tokens off seq_len,
    _get_max_video_frames adds frames from 1 while the next count's tokens (steps x image tokens) stay within what
    is left (none when nothing is), the frames are split over `videos`, then the cap (_MAX_FRAMES_PER_VIDEO) and a
    floor of 1 apply."""
    left = seq_len - images * image_tokens
    total = 2 * (left // image_tokens) if left >= image_tokens else 0
    frames = max(1, min(total // max(videos, 1), max_frames))
    steps = (frames + frames % 2) // 2
    return frames, steps * image_patches, steps * image_tokens


def _kept_layers(total: int, feature_layer) -> int:
    """vLLM's LLaVA builds the vision encoder only up to the feature layer it reads (llava.py
    _get_num_hidden_layers): index k >= 0 keeps k + 1 layers, -k keeps total - k + 1; a list keeps the deepest."""
    layers = feature_layer if isinstance(feature_layer, list) else [feature_layer]
    return max(k + 1 if k >= 0 else total + k + 1 for k in layers)


def clip_tower(v: dict, layers: int, post_norm: bool) -> int:
    """clip.py CLIPVisionTransformer: class embedding, patch Conv2d without bias, (patches + 1) positions,
    pre-LayerNorm, LayerNorm blocks with biased projections and fc1/fc2, and the post-LayerNorm when built."""
    hidden, inter = _get(v, "hidden_size", 768), _get(v, "intermediate_size", 3072)
    patch_size = _get(v, "patch_size", 32)
    patches = (_get(v, "image_size", 224) // patch_size) ** 2
    embeddings = hidden + _get(v, "num_channels", 3) * patch_size ** 2 * hidden + (patches + 1) * hidden
    block = _vit_layer(hidden, inter, gated=False, bias=True, norms=4 * hidden)
    return embeddings + 2 * hidden + layers * block + (2 * hidden if post_norm else 0)


def siglip_tower(v: dict, layers: int, post_norm: bool) -> int:
    """siglip.py SiglipVisionTransformer: biased patch Conv2d, one position per patch, LayerNorm blocks like CLIP's,
    the post-LayerNorm when built and the attention-pooling head when vision_use_head."""
    hidden, inter = _get(v, "hidden_size", 768), _get(v, "intermediate_size", 3072)
    patch_size = _get(v, "patch_size", 16)
    patches = (_get(v, "image_size", 224) // patch_size) ** 2
    embeddings = _get(v, "num_channels", 3) * patch_size ** 2 * hidden + hidden + patches * hidden
    block = _vit_layer(hidden, inter, gated=False, bias=True, norms=4 * hidden)
    head = 0
    if v.get("vision_use_head", True):  # probe, nn.MultiheadAttention (in_proj + out_proj), LayerNorm, MLP
        head = hidden + (4 * hidden * hidden + 4 * hidden) + 2 * hidden + (2 * hidden * inter + inter + hidden)
    return embeddings + layers * block + (2 * hidden if post_norm else 0) + head


def pixtral_tower(v: dict, layers: int) -> int:
    """pixtral.py PixtralHFVisionModel: patch Conv2d without bias, ln_pre RMSNorm, RMSNorm blocks with unbiased
    q/k/v/o and a SiLU gate/up/down MLP; 2D RoPE, so no position parameters."""
    hidden, inter = _get(v, "hidden_size", 1024), _get(v, "intermediate_size", 4096)
    patch = _get(v, "num_channels", 3) * _get(v, "patch_size", 16) ** 2 * hidden
    block = _vit_layer(hidden, inter, gated=True, bias=False, norms=2 * hidden)
    return patch + hidden + layers * block


def _projector(v_hidden: int, t_hidden: int, feature_layers: int, bias: bool) -> int:
    """LLaVA's multi_modal_projector: linear_1 (vision width x feature layers -> text) + GELU + linear_2."""
    width = v_hidden * feature_layers
    return width * t_hidden + t_hidden * t_hidden + (2 * t_hidden if bias else 0)


def llava(config: dict, text_hidden: int, family: str) -> VisionTower:
    """llava.py / llava_next.py: a CLIP or Pixtral encoder cut after vision_feature_layer, no post-norm
    (init_vision_tower_for_llava(require_post_norm=False)), the two-layer projector (biased unless
    multimodal_projector_bias is false) and, for LLaVA-NeXT, the image_newline vector of text width."""
    v = config["vision_config"]
    kind = str(v.get("model_type") or "clip_vision_model")
    feature = _get(config, "vision_feature_layer", -2)
    feature_layers = len(feature) if isinstance(feature, list) else 1
    total = _get(v, "num_hidden_layers", 12 if kind == "clip_vision_model" else 24)
    layers = _kept_layers(total, feature)
    if kind == "clip_vision_model":
        tower = clip_tower(v, layers, post_norm=False)
    elif kind == "pixtral":
        tower = pixtral_tower(v, layers)
    else:
        return VisionTower(unsupported=f"a {family} vision tower of type '{kind}'")
    bias = bool(_get(config, "multimodal_projector_bias", True))
    extra = text_hidden if family == "llava_next" else 0
    return VisionTower(tower + _projector(_get(v, "hidden_size", 768), text_hidden, feature_layers, bias) + extra,
                       f"{family} ({kind}, {layers} of {total} layers)")


def gemma3(config: dict, text_hidden: int) -> VisionTower:
    """gemma3_mm.py: the whole SigLIP encoder with its post-LayerNorm, then Gemma3MultiModalProjector's
    mm_soft_emb_norm (RMSNorm, vision width) and mm_input_projection_weight (vision x text width, no bias)."""
    v = config["vision_config"]
    layers = _get(v, "num_hidden_layers", 27)
    hidden = _get(v, "hidden_size", 1152)
    shaped = {"patch_size": 14, "image_size": 896, "intermediate_size": 4304, "hidden_size": 1152, **v}
    tower = siglip_tower(shaped, layers, post_norm=True)
    # gemma3_mm.py: one 896 px crop per image without pan-and-scan (vLLM's default), mm_tokens_per_image tokens
    patch, side = _get(shaped, "patch_size", 14), _get(shaped, "image_size", 896)
    # transformers Gemma3Processor.full_image_sequence wraps the image tokens in "\n\n", <start_of_image> and
    # <end_of_image>, "\n\n": 4 tokens more in the placeholder (vLLM 0.11.0 logs 31 items at 8,192 = 8,192 // 260)
    encoder = EncoderDummy("gemma3", (side // patch) ** 2, _get(config, "mm_tokens_per_image", 256),
                           _get(shaped, "num_channels", 3) * patch * patch, hidden,
                           _get(shaped, "intermediate_size", 4304), False, text_hidden,
                           break_tokens=P.GEMMA3_IMAGE_BREAK_TOKENS)
    return VisionTower(tower + hidden + hidden * text_hidden, f"gemma3 (siglip, {layers} layers)", encoder=encoder)


def gemma4(config: dict, text_hidden: int) -> VisionTower:
    """gemma4_mm.py@v0.19.0 builds transformers' Gemma4VisionModel (AutoModel.from_config; modeling_gemma4.py in
    transformers 5.x): an unbiased patch projection, a two-axis position table (2 x position_embedding_size x H),
    RMSNorm blocks with unbiased q/k/v/o over head_dim-wide heads, q/k norms and a gated MLP, a pooler without
    weights, the std_bias/std_scale buffers when `standardize`, and four clip bounds per linear when
    `use_clipped_linears`; then Gemma4MultimodalEmbedder's unbiased projection onto the text width (its norm has no
    weight). Defaults: Gemma4VisionConfig's. No encoder dummy yet: vLLM's gemma4 encoder profile is chunked by the
    free memory and its transient depends on the transformers release (benchmarks/vectors/MISSES.md, round 25)."""
    v = config["vision_config"]
    hidden, inter = _get(v, "hidden_size", 768), _get(v, "intermediate_size", 3072)
    layers, heads = _get(v, "num_hidden_layers", 16), _get(v, "num_attention_heads", 12)
    kv_heads, head = _get(v, "num_key_value_heads", 12), _get(v, "head_dim", 64)
    patch = _get(v, "patch_size", 16)
    embeddings = 3 * patch * patch * hidden + 2 * _get(v, "position_embedding_size", 10240) * hidden
    attention = 2 * hidden * heads * head + 2 * hidden * kv_heads * head + 2 * head
    block = attention + 3 * hidden * inter + 4 * hidden
    clips = 4 * 7 * layers if v.get("use_clipped_linears") else 0  # q, k, v, o, gate, up, down
    buffers = 2 * hidden if v.get("standardize") else 0
    tower = embeddings + layers * block + clips + buffers
    return VisionTower(tower + hidden * text_hidden, f"gemma4 ({layers} layers)")


def mistral3(config: dict, text_hidden: int) -> VisionTower:
    """mistral3.py: the Pixtral encoder cut after vision_feature_layer, then Mistral3MultiModalProjector's RMSNorm,
    the patch merger's unbiased Linear(H m^2, H) and linear_1/linear_2 (unbiased unless multimodal_projector_bias)."""
    v = config["vision_config"]
    hidden = _get(v, "hidden_size", 1024)
    feature = _get(config, "vision_feature_layer", -1)
    feature_layers = len(feature) if isinstance(feature, list) else 1
    total = _get(v, "num_hidden_layers", 24)
    layers = _kept_layers(total, feature)
    merge = _get(config, "spatial_merge_size", 2)
    bias = bool(_get(config, "multimodal_projector_bias", False))
    projector = hidden + hidden * merge * merge * hidden + _projector(hidden, text_hidden, feature_layers, bias)
    return VisionTower(pixtral_tower(v, layers) + projector, f"mistral3 (pixtral, {layers} of {total} layers)")


def llama4(config: dict, text_hidden: int) -> VisionTower:
    """mllama4.py Llama4VisionModel: the unfolded patch embedding (unbiased), class and position embeddings, pre and
    post LayerNorms, biased attention and fc1/fc2 MLP per layer with two LayerNorms; the pixel-shuffle adapter's
    fc1/fc2 (multi_modal_projector_bias, default off) and Llama4MultiModalProjector's unbiased linear_1."""
    v = config["vision_config"]
    hidden, inter = _get(v, "hidden_size", 768), _get(v, "intermediate_size", 5632)
    layers, patch, side = _get(v, "num_hidden_layers", 34), _get(v, "patch_size", 14), _get(v, "image_size", 448)
    embed = _get(v, "num_channels", 3) * patch * patch * hidden + hidden + ((side // patch) ** 2 + 1) * hidden
    block = 4 * (hidden * hidden + hidden) + 2 * hidden * inter + inter + hidden + 4 * hidden
    proj_in, proj_out = _get(v, "projector_input_dim", 4096), _get(v, "projector_output_dim", 4096)
    bias = bool(_get(v, "multi_modal_projector_bias", False))
    adapter = inter * proj_in + proj_in * proj_out + ((proj_in + proj_out) if bias else 0)
    projector = _get(v, "vision_output_dim", 7680) * text_hidden
    return VisionTower(embed + 4 * hidden + layers * block + adapter + projector, f"llama4 ({layers} layers)")


def vision_tower(config: dict, text_hidden: int | None) -> VisionTower:
    """The vision part of a config.json (the top level, before its text_config is taken), or VisionTower() for a
    text-only model."""
    model_type = str(config.get("model_type") or "")
    v = config.get("vision_config")
    if model_type in P.VISION_UNCOUNTED:
        return VisionTower(unsupported=f"model type '{model_type}' ({P.VISION_UNCOUNTED[model_type]})")
    if not isinstance(v, dict):
        return VisionTower()
    if not isinstance(text_hidden, int):
        return VisionTower(unsupported=f"model type '{model_type}' without a text width to project onto")
    if model_type == "qwen2_vl":
        embed = _get(v, "embed_dim", 1280)
        return VisionTower(qwen2_vl(v), "qwen2_vl", None, qwen_vl_encoder(
            v, "qwen2_vl", width_key="embed_dim", default_width=1280, inter=int(embed * _get(v, "mlp_ratio", 4)),
            gated=False, default_patch=14, out_width=_get(v, "hidden_size", text_hidden),
            max_pixels=P.QWEN_VL_MAX_PIXELS, video_per_frame=True))
    if model_type == "qwen2_5_vl":
        return VisionTower(qwen2_5_vl(v), "qwen2_5_vl", None, qwen_vl_encoder(
            v, "qwen2_5_vl", width_key="hidden_size", default_width=1280, inter=_get(v, "intermediate_size", 3420),
            gated=True, default_patch=14, out_width=_get(v, "out_hidden_size", text_hidden),
            max_pixels=P.QWEN_VL_MAX_PIXELS, video_per_frame=True))
    if model_type in ("qwen3_vl", "qwen3_vl_moe"):
        return VisionTower(qwen3_vl(v), model_type, None, qwen3_vl_encoder(v, model_type, text_hidden))
    if model_type in ("qwen3_5", "qwen3_5_moe"):
        # qwen3_5.py builds qwen3_vl.py's Qwen3_VisionTransformer; its vision config has no DeepStack layers unless
        # it names them (getattr(vision_config, "deepstack_visual_indexes") falls back to [])
        v = {"deepstack_visual_indexes": [], **v}
        return VisionTower(qwen3_vl(v), "qwen3_vl", None, qwen3_vl_encoder(v, "qwen3_vl", text_hidden))
    if model_type in ("llava", "llava_next"):
        return llava(config, text_hidden, model_type)
    if model_type == "gemma3":
        return gemma3(config, text_hidden)
    if model_type == "mistral3":
        return mistral3(config, text_hidden)
    if model_type == "llama4":
        return llama4(config, text_hidden)
    if model_type == "gemma4" and v.get("model_type", "gemma4_vision") == "gemma4_vision":
        return gemma4(config, text_hidden)
    kind = v.get("model_type")
    return VisionTower(unsupported=f"model type '{model_type or '?'}' with a vision_config"
                                   f"{f' of type {kind!r}' if kind else ''}")
