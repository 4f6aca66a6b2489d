"""Bytes per parameter of quantised linear weights (memory-arithmetic.md §1.2 and llama.cpp's type table)."""

from __future__ import annotations

# GGUF tensor types: bytes per weight = block bytes / block size (ggml type traits).
GGUF_TYPE_BYTES = {
    "f32": 4.0, "f16": 2.0, "bf16": 2.0,
    "q8_0": 34 / 32, "q8_1": 36 / 32, "q5_0": 22 / 32, "q5_1": 24 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32,
    "iq4_nl": 18 / 32, "iq4_xs": 136 / 256,
    "q2_k": 84 / 256, "q3_k": 110 / 256, "q4_k": 144 / 256, "q5_k": 176 / 256, "q6_k": 210 / 256,
    "q8_k": 292 / 256, "iq2_xxs": 66 / 256, "iq2_xs": 74 / 256, "iq2_s": 82 / 256, "iq3_xxs": 98 / 256,
    "iq3_s": 110 / 256, "iq1_s": 50 / 256, "iq1_m": 56 / 256,
}
# GGUF "file types" mix tensor types; average bits per weight of the transformer blocks, from llama.cpp's
# quantize table (file size / parameter count for Llama-2-7B class models). Used only when no GGUF header
# can be read; a real header gives exact tensor bytes.
GGUF_FILE_TYPE_BPW = {
    "q2_k": 3.17, "q3_k_s": 3.50, "q3_k_m": 3.89, "q3_k_l": 4.27, "q4_0": 4.55, "q4_1": 5.0, "q4_k_s": 4.58,
    "q4_k_m": 4.84, "q5_0": 5.54, "q5_1": 6.0, "q5_k_s": 5.54, "q5_k_m": 5.67, "q6_k": 6.56, "q8_0": 8.5,
    "f16": 16.0, "bf16": 16.0, "f32": 32.0, "iq4_xs": 4.25, "iq4_nl": 4.5,
}

LINEAR_BYTES = {
    "fp8": 1.0,  # W8A8-FP8: per-tensor/channel scales are negligible
    "int8": 1.0,  # W8A8 int8: one scale per output row
    "w8a8": 1.0,
    "compressed-tensors": 1.0,
}


def gptq_bytes(bits: int, group_size: int | None) -> float:
    """GPTQ/AWQ: packed weights + fp16 scale and `bits`-bit zero per group (0.5195 B at 4 bit, g128)."""
    group = group_size if group_size and group_size > 0 else 0
    overhead = (2 + bits / 8) / group if group else 0.0
    return bits / 8 + overhead


def linear_bytes_per_param(method: str | None, bits: int | None, group_size: int | None, high: float) -> float:
    """Bytes per parameter of a linear layer for a quantisation method; unquantised -> `high` (dtype)."""
    if not method or method in ("bf16", "bfloat16", "fp16", "float16", "none"):
        return high
    method = method.lower()
    if method in ("fp32", "float32"):
        return 4.0
    if method in ("gptq", "awq", "gptq_marlin", "awq_marlin", "marlin"):
        return gptq_bytes(bits or 4, 128 if group_size is None else group_size)
    if method in ("bitsandbytes", "bnb"):
        # NF4 with a fp32 absmax per 64 weights (no double quantisation) = 4.5 bits
        return 0.5 + 4 / 64 if (bits or 4) == 4 else 1.0
    if method.startswith("gguf:"):
        kind = method.split(":", 1)[1]
        if kind in GGUF_FILE_TYPE_BPW:
            return GGUF_FILE_TYPE_BPW[kind] / 8
        if kind in GGUF_TYPE_BYTES:
            return GGUF_TYPE_BYTES[kind]
        raise ValueError(f"unknown GGUF type '{kind}'")
    if method in LINEAR_BYTES:
        return LINEAR_BYTES[method] if not bits or bits == 8 else bits / 8
    if bits:
        return bits / 8
    raise ValueError(f"unknown quantization method '{method}'")
