"""Bytes per parameter of quantised weights: the complete ggml type table and the checkpoint formats vLLM loads.

An unknown GGUF type or quantisation method raises UnsupportedModel naming it (a GSG030 model-facts finding):
never 0 bytes and never a guess from the bit width alone.
"""

from __future__ import annotations

import math

from gpustack_guard.core.memory.estimate import UnsupportedModel

# ggml type id -> (type_name, elements per block, bytes per block). From ggml-org/ggml @ d99724f2
# (docs/memory-arithmetic.md, "Weight bytes by quantisation"): include/ggml.h `enum ggml_type`, the block
# structs and their static_assert(sizeof(...)) in src/ggml-common.h, and `type_traits[]` in src/ggml.c. Q8_1 is 36 bytes
# (two ggml_half + 32 int8, ggml-common.h since 2024-03); the Python gguf package's 40 is the old fp32 layout.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
    6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36),
    10: ("q2_k", 256, 84), 11: ("q3_k", 256, 110), 12: ("q4_k", 256, 144), 13: ("q5_k", 256, 176),
    14: ("q6_k", 256, 210), 15: ("q8_k", 256, 292), 16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74),
    18: ("iq3_xxs", 256, 98), 19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110),
    22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136), 24: ("i8", 1, 1), 25: ("i16", 1, 2),
    26: ("i32", 1, 4), 27: ("i64", 1, 8), 28: ("f64", 1, 8), 29: ("iq1_m", 256, 56), 30: ("bf16", 1, 2),
    34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66),
    39: ("mxfp4", 32, 17),  # E8M0 scale byte + 32 x 4-bit E2M1
    40: ("nvfp4", 64, 36),  # 4 UE4M3 scales (one per 16) + 64 x 4-bit
    41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}
# ids ggml has removed (type_traits blck_size 0, type_size 0): a file using one is not loadable
GGML_REMOVED: dict[int, str] = {4: "Q4_2", 5: "Q4_3", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8",
                                36: "IQ4_NL_4_4", 37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8"}
GGML_TYPE_COUNT = 43

GGUF_TYPE_BYTES = {name: size / block for name, block, size in GGML_TYPES.values()}


def ggml_tensor_bytes(type_id: int, shape: tuple[int, ...], tensor: str) -> int:
    """ggml_nbytes of a tensor: rows of whole blocks (ggml_row_size refuses a partial block)."""
    if type_id in GGML_REMOVED:
        raise UnsupportedModel(f"GGUF tensor '{tensor}' has ggml type {type_id} ({GGML_REMOVED[type_id]}), which "
                               "ggml removed; re-quantise the file")
    if type_id not in GGML_TYPES:
        raise UnsupportedModel(f"GGUF tensor '{tensor}' has unknown ggml type {type_id} "
                               f"(known: 0-{GGML_TYPE_COUNT - 1})")
    name, block, size = GGML_TYPES[type_id]
    count = math.prod(shape)
    if shape and shape[0] % block:
        raise UnsupportedModel(f"GGUF tensor '{tensor}' ({name}) has rows of {shape[0]} elements, not a multiple of "
                               f"its block of {block}")
    return count // block * size


# GGUF "file types" mix tensor types; average bits per weight of the transformer blocks, from llama.cpp's
# quantize table (file size / parameter count for Llama-2-7B class models). Used only when no GGUF header
# can be read; a real header gives exact tensor bytes.
GGUF_FILE_TYPE_BPW = {
    "q2_k": 3.17, "q3_k_s": 3.50, "q3_k_m": 3.89, "q3_k_l": 4.27, "q4_0": 4.55, "q4_1": 5.0, "q4_k_s": 4.58,
    "q4_k_m": 4.84, "q5_0": 5.54, "q5_1": 6.0, "q5_k_s": 5.54, "q5_k_m": 5.67, "q6_k": 6.56, "q8_0": 8.5,
    "f16": 16.0, "bf16": 16.0, "f32": 32.0, "iq4_xs": 4.25, "iq4_nl": 4.5,
}

UNQUANTISED = ("bf16", "bfloat16", "fp16", "float16", "none")
GPTQ_LIKE = ("gptq", "awq", "gptq_marlin", "awq_marlin", "marlin")  # packed ints + fp16 scale + packed zero
FP8_METHODS = ("fp8", "fbgemm_fp8", "modelopt", "modelopt_fp8")  # one byte per weight (+ block scales)
INT8_METHODS = ("int8", "w8a8")  # one byte; one scale per output row (negligible)
MXFP4_BYTES = 17 / 32  # OCP MX: one E8M0 scale byte per 32 E2M1 weights = 4.25 bits (vLLM Mxfp4Config)
NVFP4_BYTES = 9 / 16  # one FP8 (E4M3) scale per 16 E2M1 weights = 4.5 bits (+ one fp32 global scale per tensor)
EXPERTS_ONLY = ("mxfp4",)  # vLLM's Mxfp4Config quantises FusedMoE experts only; every linear layer stays 16-bit
# compressed-tensors' `mxfp4-pack-quantized` (llm-compressor's MXFP4 and MXFP4A16 presets): the same 17/32 B on every
# Linear the config groups target, lm_head and embeddings as the ignore list leaves them (16-bit). vLLM loads it as
# CompressedTensorsW4A16Mxfp4 (Marlin) from v0.14.0 to v0.21.0 (vllm#31926; v0.13.0 has no MXFP4 scheme) and
# CompressedTensorsW4A4Mxfp4 from v0.22.0 (FlashInfer on SM100+, else Marlin): uint8 weight_packed [N, K/2] + uint8
# E8M0 weight_scale [N, K/32], no global scale (schemes/compressed_tensors_w4a16_mxfp4.py@v0.14.0, @v0.16.0,
# @v0.20.0, @v0.21.0; compressed_tensors_w4a4_mxfp4.py@v0.22.0, @v0.31.0). Before v0.14.0 vLLM cannot load it.
# Marlin keeps the scales one byte (float8_e8m0fnu, marlin_utils_fp4.py@v0.31.0 mxfp4_marlin_process_scales);
# FlashInfer's swizzle pads the scale rows to 128 and columns to 4 (cutlass_moe.py@v0.31.0 swizzle_mxfp4_scales),
# nothing for widths that are multiples of 128 -- not counted.
MXFP4_DENSE = "mxfp4_dense"
MXFP4_GROUP = 32  # E2M1 weights a scale byte (OCP MX), what vLLM's _is_mxfp4 requires
KNOWN_METHODS = UNQUANTISED + ("fp32", "float32", "bitsandbytes", "bnb", "w4a16", "mxfp4", MXFP4_DENSE, "nvfp4",
                               "modelopt_fp4") + GPTQ_LIKE + FP8_METHODS + INT8_METHODS


def gptq_bytes(bits: int, group_size: int | None) -> float:
    """GPTQ/AWQ: packed weights + fp16 scale and `bits`-bit zero per group (0.5195 B at 4 bit, g128)."""
    group = group_size if group_size and group_size > 0 else 0
    overhead = (2 + bits / 8) / group if group else 0.0
    return bits / 8 + overhead


def linear_bytes_per_param(method: str | None, bits: int | None, group_size: int | None, high: float,
                           zero_point: bool | None = None) -> float:
    """Bytes per parameter of a quantised linear layer; unquantised -> `high` (the checkpoint dtype).

    group_size is the number of weights sharing one scale (a 128x128 FP8 block: 16384).
    """
    if not method or method.lower() in UNQUANTISED:
        return high
    method = method.lower()
    if method in ("fp32", "float32"):
        return 4.0
    if method in GPTQ_LIKE:
        return gptq_bytes(bits or 4, 128 if group_size is None else group_size)
    if method == "w4a16":  # compressed-tensors pack-quantized: bf16 scale per group, a zero only if asymmetric
        width = (bits or 4) / 8
        if not group_size or group_size < 0:
            return width  # channel-wise: one scale per output row
        return width + (2 + (width if zero_point else 0)) / group_size
    if method in ("bitsandbytes", "bnb"):
        # NF4 with a fp32 absmax per 64 weights (no double quantisation) = 4.5 bits
        return 0.5 + 4 / 64 if (bits or 4) == 4 else 1.0
    if method.startswith("gguf:"):
        kind = method.split(":", 1)[1]
        if kind in GGUF_FILE_TYPE_BPW:
            return GGUF_FILE_TYPE_BPW[kind] / 8
        if kind in GGUF_TYPE_BYTES:
            return GGUF_TYPE_BYTES[kind]
        raise UnsupportedModel(f"unknown GGUF type '{kind}'")
    if method in FP8_METHODS:
        if bits and bits != 8:
            raise UnsupportedModel(f"quantization method '{method}' with {bits}-bit weights has no weight arithmetic")
        return 1.0 + (4 / group_size if group_size and group_size > 0 else 0.0)  # fp32 scale_inv per block
    if method in INT8_METHODS:
        return 1.0
    if method in ("mxfp4", MXFP4_DENSE):
        return MXFP4_BYTES
    if method in ("nvfp4", "modelopt_fp4"):
        return NVFP4_BYTES
    raise UnsupportedModel(f"quantization method '{method}' has no weight arithmetic in gsg (known: "
                           f"{', '.join(sorted(set(KNOWN_METHODS)))}, gguf:<type>); set guard.model.weight_bytes")
