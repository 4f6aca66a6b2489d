"""GGUF header parsing (metadata and tensor table) and the model facts it gives. Pure: reads via a callback.

The callback `read(offset, size) -> bytes` lets the same parser serve a local file and an HTTP range reader.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace
from typing import Callable

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import MAX_LAYERS, BadConfig, checked_facts
from gpustack_guard.core.memory.quant import GGML_TYPES, ggml_tensor_bytes

MAGIC = b"GGUF"
# metadata value types: id -> struct format (None = string/array handled apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
MAX_HEADER_BYTES = 256 * 1024 * 1024  # a header larger than this is not a model file
MAX_KEPT_ARRAY = MAX_LAYERS  # items of an array read whole (per-layer values), not just counted
# Hyperparameters llama.cpp reads per layer when given as an array (get_key_or_arr): kept whole, the widest counted
_PER_LAYER = ("attention.head_count", "attention.head_count_kv", "feed_forward_length")
# the metadata keys (after "<arch>.") whose arrays are read whole: those and the layer types
_PER_LAYER_KEYS = ("layer_types",) + tuple("." + key for key in _PER_LAYER)


class GGUFError(ValueError):
    pass


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type_id: int

    @property
    def nbytes(self) -> int:
        """Exact bytes; an unknown or removed type id raises naming this tensor (never 0 bytes)."""
        return ggml_tensor_bytes(self.type_id, self.shape, self.name)

    @property
    def type_name(self) -> str:
        return GGML_TYPES[self.type_id][0] if self.type_id in GGML_TYPES else f"type {self.type_id}"


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict
    tensors: tuple[TensorInfo, ...]


class _Cursor:
    """Sequential reads over a random-access source, fetched in chunks."""

    def __init__(self, read: Callable[[int, int], bytes], chunk: int = 1 << 20):
        self._read, self._chunk = read, chunk
        self._buffer, self._start, self.pos = b"", 0, 0

    def take(self, size: int) -> bytes:
        if self.pos + size > MAX_HEADER_BYTES:
            raise GGUFError("GGUF header is implausibly large")
        end = self.pos + size
        while end > self._start + len(self._buffer):
            got = self._read(self._start + len(self._buffer), max(self._chunk, size))
            if not got:
                raise GGUFError("GGUF file ends inside its header")
            self._buffer += got
        data = self._buffer[self.pos - self._start:end - self._start]
        self.pos = end
        return data

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > 1 << 24:
            raise GGUFError("GGUF string length is implausible")
        return self.take(length).decode("utf-8", errors="replace")


def _value(cur: _Cursor, kind: int, keep_arrays: bool):
    if kind in _SCALARS:
        return cur.unpack(_SCALARS[kind])
    if kind == _STRING:
        return cur.string()
    if kind == _ARRAY:
        item_kind, count = cur.unpack("<I"), cur.unpack("<Q")
        if item_kind in _SCALARS and not keep_arrays:
            cur.take(struct.calcsize(_SCALARS[item_kind]) * count)  # skip, remember the length
            return _Length(count)
        if keep_arrays and count > MAX_KEPT_ARRAY:  # kept arrays are per-layer lists: bounded before built
            raise GGUFError(f"GGUF array of {count:,} items where at most {MAX_KEPT_ARRAY:,} (one per layer) are read")
        items = [_value(cur, item_kind, keep_arrays) for _ in range(count)]
        return items if keep_arrays else _Length(count)
    raise GGUFError(f"unknown GGUF metadata type {kind}")


class _Length(int):
    """An array we skipped: only its length is kept (e.g. 150k tokenizer entries)."""


def parse_header(read: Callable[[int, int], bytes]) -> GGUFHeader:
    cur = _Cursor(read)
    if cur.take(4) != MAGIC:
        raise GGUFError("not a GGUF file (bad magic)")
    version = cur.unpack("<I")
    if version not in (2, 3):
        raise GGUFError(f"unsupported GGUF version {version}")
    tensor_count, kv_count = cur.unpack("<Q"), cur.unpack("<Q")
    if tensor_count > 1_000_000 or kv_count > 1_000_000:
        raise GGUFError("GGUF counts are implausible")
    metadata = {}
    for _ in range(kv_count):
        key = cur.string()
        kind = cur.unpack("<I")
        metadata[key] = _value(cur, kind, keep_arrays=key.endswith(_PER_LAYER_KEYS))
    tensors = []
    for _ in range(tensor_count):
        name = cur.string()
        dims = cur.unpack("<I")
        shape = tuple(cur.unpack("<Q") for _ in range(dims))
        type_id = cur.unpack("<I")
        cur.unpack("<Q")  # data offset
        tensors.append(TensorInfo(name, shape, type_id))
    return GGUFHeader(version, metadata, tuple(tensors))


_BLOCK = re.compile(r"^blk\.(\d+)\.")


def facts_from_gguf(header: GGUFHeader, source: str) -> ModelFacts:
    meta = header.metadata
    arch = meta.get("general.architecture")
    if not arch:
        raise GGUFError("GGUF metadata has no general.architecture")

    def get(key: str):
        return meta.get(f"{arch}.{key}")

    layers = _whole(arch, "block_count", get("block_count"))
    if not layers:
        raise GGUFError(f"GGUF metadata has no {arch}.block_count")
    if layers > MAX_LAYERS:  # one entry per block is kept below: bounded before the list is built
        raise GGUFError(f"GGUF metadata {arch}.block_count {layers:,} is outside 1..{MAX_LAYERS:,}")
    per_layer = [0] * layers
    layer_repack = [0] * layers
    embedding = output = output_repack = 0
    for tensor in header.tensors:
        match = _BLOCK.match(tensor.name)
        if match and int(match.group(1)) < layers:
            per_layer[int(match.group(1))] += tensor.nbytes
            layer_repack[int(match.group(1))] += tensor.nbytes if cpu_repacked(tensor) else 0
        elif tensor.name.startswith("token_embd."):
            embedding += tensor.nbytes  # read by row lookup, never repacked
        elif tensor.name.startswith("output.") or tensor.name.startswith("output_norm."):
            output += tensor.nbytes
            output_repack += tensor.nbytes if cpu_repacked(tensor) else 0
    # MoE widths under llama.cpp's own keys (LLM_KV_EXPERT_*): Qwen2-MoE writes the shared expert's width,
    # DeepSeek-2 a count of shared experts as wide as a routed one (both checked before they are multiplied).
    expert_width = _whole(arch, "expert_feed_forward_length", get("expert_feed_forward_length"))
    shared_width = _whole(arch, "expert_shared_feed_forward_length", get("expert_shared_feed_forward_length"))
    shared_count = _whole(arch, "expert_shared_count", get("expert_shared_count"))
    if shared_width is None and shared_count and expert_width:
        shared_width = shared_count * expert_width
    try:
        facts = _gguf_facts(header, source, arch, layers, per_layer, embedding, output, expert_width, shared_width)
        return checked_facts(replace(facts, layer_repack_bytes=tuple(layer_repack), output_repack_bytes=output_repack))
    except BadConfig as exc:
        raise GGUFError(f"GGUF metadata: {exc}") from None


def cpu_repacked(tensor: TensorInfo) -> bool:
    """Whether llama.cpp's x86 AVX2 CPU backend repacks this weight (profiles.LLAMACPP_CPU_REPACK_TYPES): a matrix
    (or a stack of expert matrices) of a repackable type whose row count is a multiple of 8."""
    kind = GGML_TYPES[tensor.type_id][0] if tensor.type_id in GGML_TYPES else None
    return kind in P.LLAMACPP_CPU_REPACK_TYPES and len(tensor.shape) in (2, 3) \
        and tensor.shape[1] % P.LLAMACPP_CPU_REPACK_ROWS == 0



def _whole(arch: str, key: str, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise GGUFError(f"GGUF metadata {arch}.{key} must be a whole number >= 0, not {repr(value)[:40]}")
    return value


def _gguf_facts(header: GGUFHeader, source: str, arch: str, layers: int, per_layer: list[int], embedding: int,
                output: int, expert_width: int | None, shared_width: int | None) -> ModelFacts:
    meta = header.metadata

    def get(key: str):
        # a per-layer list counts its widest layer; a skipped array (only its length kept) is no hyperparameter.
        # Other types reach checked_facts, which names the field
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list) and key in _PER_LAYER:
            value = max((_whole(arch, key, v) for v in value), default=None)
        if isinstance(value, _Length):
            raise GGUFError(f"GGUF metadata {arch}.{key} must be a whole number >= 0, not an array")
        return value

    tokens = meta.get("tokenizer.ggml.tokens")
    # the three values divided or converted here are checked first (a string, a float, NaN or inf was a TypeError
    # or an OverflowError, an internal error)
    vocab = _whole(arch, "vocab_size", get("vocab_size")) or (tokens if isinstance(tokens, int) else None)
    heads = _whole(arch, "attention.head_count", get("attention.head_count"))
    heads_kv = get("attention.head_count_kv")
    hidden = _whole(arch, "embedding_length", get("embedding_length"))
    key_length = get("attention.key_length")
    tied = output == 0 or all(not t.name.startswith("output.weight") for t in header.tensors)
    window = get("attention.sliding_window")
    file_type = meta.get("general.file_type")
    if file_type is not None:
        file_type = _whole("general", "file_type", file_type)
    return ModelFacts(
        architecture=arch,
        num_hidden_layers=int(layers),
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=heads_kv,
        head_dim=key_length or (hidden // heads if hidden and heads else None),
        intermediate_size=get("feed_forward_length"),
        vocab_size=int(vocab) if vocab else None,
        tie_word_embeddings=tied,
        num_experts=get("expert_count"),
        num_experts_per_tok=get("expert_used_count"),
        moe_intermediate_size=expert_width,
        shared_expert_intermediate_size=shared_width,
        first_k_dense_replace=get("leading_dense_block_count"),
        kv_lora_rank=get("attention.kv_lora_rank"),
        qk_rope_head_dim=get("rope.dimension_count") if get("attention.kv_lora_rank") else None,
        sliding_window=window,
        max_position_embeddings=get("context_length"),
        quant_method=f"gguf:ftype{file_type}" if file_type is not None else "gguf",
        layer_weight_bytes=tuple(per_layer),
        embedding_bytes=embedding,
        # tied: llama.cpp duplicates token_embd as the output layer, beside the output norm
        output_bytes=output if not tied else embedding + output,
        weight_bytes=sum(per_layer) + embedding + output,
        source=source,
    )
