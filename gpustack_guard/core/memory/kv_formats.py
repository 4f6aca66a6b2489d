"""vLLM's packed KV-cache dtypes: the bytes one token takes per KV head (K and V together), by release.

The per-element table in kv.py holds the plain dtypes (bf16 2 B, fp8 1 B). The packed ones store scales or codes
beside the data, in a slot the attention backend lays out itself (its customize_spec's state_content_bytes; the
page is num_head_slots x state_content_bytes per token, vllm/v1/kv_cache_interface.py AttentionSpec). Imported
lazily: only a deployment that names one of them reaches this module.
"""

from __future__ import annotations

import math

from gpustack_guard.core.memory.profiles import known_version
from gpustack_guard.core.table_row import TableRow
from gpustack_guard.core.versions import Version


class PackedKvRow(TableRow):  # a table row: tuple-built, no generated methods to compile
    """One packed dtype's slot in releases [since, until)."""

    since: str
    until: str
    dtype: str
    rule: str  # a key of _RULES
    source: str


_TQ = "vllm/model_executor/layers/quantization/turboquant/config.py TQ_PRESETS, key_packed_size, value_packed_size, " \
      "slot_size_aligned; v1/attention/backends/turboquant_attn.py customize_spec (one slot per KV head)"
_PTH = ("vllm/v1/attention/backends/triton_attn.py customize_spec: (head_k + head_v) x 1 B + 2 fp32 scales per KV "
        "head (int4: head sizes halved, two codes a byte)")
_NVFP4 = ("vllm/v1/attention/backends/flashinfer.py customize_spec: 2 x heads slots of utils/torch_utils.py "
          "nvfp4_kv_cache_full_dim = head // 2 + head // 16 (fp4 data, one fp8 scale per 16)")
_UQ = ("vllm/v1/attention/ops/ultraquant/format.py slot_size: K and V codes head // 2 each, one UE8M0 scale per "
       "GROUP_SIZE 32 each; v1/attention/backends/ultraquant_attn.py customize_spec")
_READ = "@v0.30.0 .. @v0.34.0 (PyPI wheels)"

VLLM_PACKED_KV = (
    *(PackedKvRow("0.30.0", "0.34.1", name, "per-token-head", f"{_PTH} {_READ}")
      for name in ("int8_per_token_head", "fp8_per_token_head")),
    PackedKvRow("0.30.0", "0.34.1", "int4_per_token_head", "int4-per-token-head", f"{_PTH} {_READ}"),
    *(PackedKvRow("0.30.0", "0.34.1", name, "nvfp4", f"{_NVFP4} {_READ}") for name in ("nvfp4", "nvfp4_4over6")),
    *(PackedKvRow("0.30.0", "0.34.1", name, name, f"{_TQ} {_READ}")
      for name in ("turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc")),
    PackedKvRow("0.32.0", "0.34.1", "ultraquant_4bit", "ultraquant", f"{_UQ} @v0.32.0 .. @v0.34.0 (PyPI wheels)"),
)

# Values vLLM takes whose layout gsg has not modelled: no arithmetic, a warning instead of a made-up size
VLLM_UNSIZED_KV = {
    "octave_k3v4": "ROCm's Octave slots (v1/attention/ops/rocm_octave.py OctaveFormat.slot_bytes: rope and "
                   "Hadamard blocks, 8-byte aligned)",
    "octave_k3v3": "ROCm's Octave slots (v1/attention/ops/rocm_octave.py OctaveFormat.slot_bytes)",
    "octave_k3v3_compact": "ROCm's Octave slots (v1/attention/ops/rocm_octave.py OctaveFormat.slot_bytes, "
                           "4-byte aligned)",
    "nvfp4_ds_mla": "FlashMLA sparse's NVFP4 MLA entry (v1/kv_cache_interface.py MLAAttentionSpec, keyed on "
                    "cache_dtype_str)",
}

# TurboQuant presets: (key bits, value bits); 8-bit keys are fp8, one byte an element and no norm
_TQ_BITS = {"turboquant_k8v4": (8, 4), "turboquant_4bit_nc": (4, 4), "turboquant_k3v4_nc": (3, 4),
            "turboquant_3bit_nc": (3, 3)}
_FP32 = 4
_UQ_GROUP = 32
# --kv-cache-dtype-skip-layers (CacheConfig.kv_cache_dtype_skip_layers list[str], argparse nargs='+' type=str):
# a layer whose index, or whose kind ("sliding_window"), it names stores its KV cache at the model's dtype
# (model_executor/layers/attention/attention.py Attention.__init__, kv_cache_dtype "auto"; mla_attention.py the same
# by index), its page padded to the quantized layers' page (platforms/interface.py skip_page_size_padded). Read in
# the 0.30.0 .. 0.34.0 wheels; gsg sizes it on a dense model only.
SKIP_LAYERS_READ_SINCE = "0.30.0"
# TurboQuantConfig.get_boundary_skip_layers(n=2): a dense model keeps its first and last 2 layers at the model's
# dtype (engine/arg_utils.py adds them to kv_cache_dtype_skip_layers for turboquant_* and ultraquant_4bit)
BOUNDARY_SKIP = 2
BOUNDARY_SKIP_DTYPES = (*_TQ_BITS, "ultraquant_4bit")


def _turboquant(name: str, head: int) -> int:
    key_bits, value_bits = _TQ_BITS[name]
    key = head if key_bits == 8 else math.ceil(head * key_bits / 8) + 2  # MSE codes + an fp16 norm
    value = math.ceil(head * value_bits / 8) + 4  # codes + fp16 scale and zero
    slot = key + value
    return slot + slot % 2  # slot_size_aligned: even


def head_slot_bytes(dtype: str, head: int) -> int | None:
    """Bytes one token takes per KV head, K and V together, in a packed dtype; None for any other dtype."""
    row = next((r for r in VLLM_PACKED_KV if r.dtype == dtype), None)
    if row is None:
        return None
    if row.rule == "per-token-head":
        return 2 * head + 2 * _FP32
    if row.rule == "int4-per-token-head":
        return 2 * (head // 2) + 2 * _FP32
    if row.rule == "nvfp4":
        return 2 * (head // 2 + head // 16)
    if row.rule == "ultraquant":
        return 2 * (head // 2) + 2 * (head // _UQ_GROUP)
    return _turboquant(row.rule, head)


def boundary_layers(dtype: str, layers: int, skip: tuple[str, ...] = ()) -> int:
    """Layers vLLM keeps at the model's dtype on a dense model: TurboQuant's and UltraQuant's boundary layers and
    those --kv-cache-dtype-skip-layers names by index (attention.py: `str(layer_idx) in kv_cache_dtype_skip_layers`,
    so only the plain decimal text of an index matches; `0,1` is one item that matches none)."""
    kept = {int(item) for item in skip if item.isdecimal() and str(int(item)) == item and int(item) < layers}
    if dtype in BOUNDARY_SKIP_DTYPES and layers > 0:
        n = min(BOUNDARY_SKIP, layers // 2)
        kept |= set(range(n)) | set(range(layers - n, layers))
    return len(kept)


def is_packed(dtype: str) -> bool:
    return any(r.dtype == dtype for r in VLLM_PACKED_KV)


def vllm_unsized(dtype: str | None, release: Version | None, is_mla: bool, windowed: bool,
                 skip: tuple[str, ...] = ()) -> str | None:
    """Why gsg cannot size vLLM's KV cache in `dtype` (None: it can). A packed dtype is sized from the rows read;
    a release newer than them takes the newest, one older than its first row is not sized."""
    name = dtype or "auto"
    if skip and name != "auto":
        if is_mla or windowed:
            return ("gsg sizes --kv-cache-dtype-skip-layers on a dense model only (here MLA, sliding-window or "
                    "linear-attention layers): no memory arithmetic")
        if release is not None and release < known_version(SKIP_LAYERS_READ_SINCE):
            return (f"gsg has read --kv-cache-dtype-skip-layers from vLLM {SKIP_LAYERS_READ_SINCE} on, not in this "
                    "release: no memory arithmetic")
    if name in VLLM_UNSIZED_KV:
        return f"gsg does not size a KV cache in {name}, {VLLM_UNSIZED_KV[name]}: no memory arithmetic"
    if not is_packed(name):
        return None
    if is_mla:
        return (f"gsg does not size an MLA model's KV cache in {name} (the MLA backends lay it out themselves, "
                "model_executor/layers/attention/mla_attention.py): no memory arithmetic")
    if windowed and name in BOUNDARY_SKIP_DTYPES:
        return (f"gsg does not size {name} on a model with sliding-window or split attention layers (vLLM keeps the "
                "first and last layers, of whatever kind, at the model's dtype: TurboQuantConfig."
                "get_boundary_skip_layers): no memory arithmetic")
    first = min(known_version(r.since) for r in VLLM_PACKED_KV if r.dtype == name)
    if release is not None and release < first:
        return (f"gsg has read the layout of {name} from vLLM {first} on, not in this release: no memory "
                "arithmetic")
    return None
