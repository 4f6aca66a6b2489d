"""GGUF header parsing (metadata and tensor table) and the model facts it gives. Pure: reads via a callback.

The callback `read(offset, size) -> bytes` lets the same parser serve a local file and an HTTP range reader.
"""

from __future__ import annotations

import re
import struct
from dataclasses import replace
from typing import Callable, Literal

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import MAX_LAYERS, BadConfig, checked_facts
from gpustack_guard.core.memory.quant import GGML_TYPES, ggml_tensor_bytes
from gpustack_guard.core.values import frozen_value

MAGIC = b"GGUF"
# metadata value types: id -> struct format (None = string/array handled apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
MAX_HEADER_BYTES = 256 * 1024 * 1024  # a header larger than this is not a model file
MAX_KEPT_ARRAY = MAX_LAYERS  # items of an array read whole (per-layer values), not just counted
# Hyperparameters llama.cpp reads per layer when given as an array (get_key_or_arr): kept whole, the widest counted
_PER_LAYER = ("attention.head_count", "attention.head_count_kv", "feed_forward_length")
# the metadata keys (after "<arch>.") whose arrays are read whole: those and the layer types
_PER_LAYER_KEYS = ("layer_types", ".attention.recurrent_layers") + tuple("." + key for key in _PER_LAYER)


# ModelFacts.recurrent_state: defined here, where it is read, so that a run without a GGUF never builds it
@frozen_value  # identity equality: cheaper to define, never compared or hashed
class RecurrentState:
    """A GGUF's per-sequence state as llama.cpp's loader reads it (load_arch_hparams of the architecture): the
    hyperparameters that size each recurrent layer's conv (r) and scan (s) rows, and which layers hold them or
    a KV cache. Bytes are the engine's business (engines/llamacpp.py recurrent_state_row, by build)."""

    __repr__ = fields_repr

    kind: Literal["ssm", "shortconv"]  # Mamba-style conv + scan state (Mamba, gated delta net) | LFM2 short conv
    conv_kernel: int = 0  # ssm.conv_kernel (d_conv), or shortconv.l_cache for LFM2
    inner_size: int = 0  # ssm.inner_size (d_inner)
    state_size: int = 0  # ssm.state_size (d_state)
    group_count: int = 0  # ssm.group_count (n_group); 0 where the architecture's loader does not read it
    recurrent: tuple[bool, ...] = ()  # per layer: holds r and s rows (hparams.is_recr and the memory's filter)
    attention: tuple[bool, ...] = ()  # per layer: holds a KV cache (the hybrid memory's attention filter)
    # {arch}.nextn_predict_layers: the trailing blocks that are the next-token-prediction (MTP) head, which newer
    # builds leave out of the target's caches (profiles.LLAMACPP_NEXTN_OUTSIDE_CACHES_SINCE)
    nextn: int = 0


class GGUFError(ValueError):
    pass


@frozen_value(eq=True, repr=True)
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


@frozen_value(eq=True, repr=True)
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
    block_tensors = []
    for tensor in header.tensors:
        match = _BLOCK.match(tensor.name)
        if match and int(match.group(1)) < layers:
            per_layer[int(match.group(1))] += tensor.nbytes
            layer_repack[int(match.group(1))] += tensor.nbytes if cpu_repacked(tensor) else 0
            block_tensors.append((tensor.name, tensor.nbytes, tensor.nbytes if cpu_repacked(tensor) else 0))
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
    state, refused = recurrent_state(meta, arch, layers)
    try:
        facts = _gguf_facts(header, source, arch, layers, per_layer, embedding, output, expert_width, shared_width,
                            pure_recurrent=state is not None and not any(state.attention))
        return checked_facts(replace(facts, layer_repack_bytes=tuple(layer_repack), output_repack_bytes=output_repack,
                                     block_tensors=tuple(block_tensors),
                                     recurrent_state=state, recurrent_layers=refused))
    except BadConfig as exc:
        raise GGUFError(f"GGUF metadata: {exc}") from None


# Architectures whose layers keep per-sequence state in llama.cpp (llm_arch_is_recurrent / llm_arch_is_hybrid,
# src/llama-arch.cpp@0c1e57098), by how its loader marks the recurrent layers (src/models/<arch>.cpp
# load_arch_hparams) and which layers the memory's filters give a KV cache (src/llama-model.cpp create_memory):
#   "all"       Mamba, Mamba-2: every layer recurrent, no KV cache (llama_memory_recurrent without a filter)
#   "kv0"       recurrent where head_count_kv[il] == 0, attention elsewhere (Jamba, Granite 4.0-H, LFM2)
#   "kv0-ff0"   Nemotron-H: recurrent where head_count_kv and feed_forward_length are both 0, attention where only
#               feed_forward_length is (the MLP-only layers hold neither)
#   "both"      Falcon-H1: every layer has an attention and an SSM branch, so both filters take every layer
#   "interval"  Qwen3-Next, Qwen3.5: attention.recurrent_layers if the file has it, else every layer but each
#               full_attention_interval-th (default 4)
_RECURRENT_LAYOUT = {"mamba": "all", "mamba2": "all", "jamba": "kv0", "granitehybrid": "kv0", "lfm2": "kv0",
                     "lfm2moe": "kv0", "nemotron_h": "kv0-ff0", "nemotron_h_moe": "kv0-ff0", "falcon-h1": "both",
                     "qwen3next": "interval", "qwen35": "interval", "qwen35moe": "interval"}
# the architectures whose loader reads ssm.group_count (ssm_n_group stays 0 for the others: Mamba, Jamba)
_READS_GROUP_COUNT = frozenset({"mamba2", "falcon-h1", "granitehybrid", "nemotron_h", "nemotron_h_moe", "qwen3next",
                                "qwen35", "qwen35moe"})
# llama.cpp's other recurrent and hybrid architectures: state of other shapes (RWKV's wkv, PLaMo 2, Kimi and
# MiniMax linear attention) that gsg has not read, so they keep the refusal
_UNREAD_RECURRENT = frozenset({"rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "plamo2", "kimi-linear", "kimi-k3",
                               "bailingmoe3", "glm5-next", "qwen4exp", "minimax-01"})


def recurrent_state(meta: dict, arch: str, layers: int) -> tuple[RecurrentState | None, str | None]:
    """(the per-sequence state llama.cpp keeps, the reason another engine's arithmetic cannot run), both None for
    an attention-only architecture. Keys are read as the architecture's llama.cpp loader reads them."""
    if arch in _UNREAD_RECURRENT:
        return None, f"GGUF architecture '{arch}', whose recurrent state gsg has not read"
    layout = _RECURRENT_LAYOUT.get(arch)
    if layout is None:
        return None, None

    def number(key: str, default: int | None = None) -> int:
        value = _whole(arch, key, meta.get(f"{arch}.{key}"))
        if value is None:
            if default is None:
                raise GGUFError(f"GGUF metadata has no {arch}.{key}, which llama.cpp's {arch} loader requires")
            return default
        return value

    def per_layer(key: str) -> list[int]:
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):
            values = [_whole(arch, key, v) or 0 for v in value]
            return (values + [0] * layers)[:layers]  # llama.cpp's get_key_or_arr: missing layers are 0
        return [_whole(arch, key, value) or 0] * layers

    nextn = 0
    if layout == "all":
        recurrent, attention = [True] * layers, [False] * layers
    elif layout == "both":
        recurrent, attention = [True] * layers, [True] * layers
    elif layout == "kv0":
        recurrent = [kv == 0 for kv in per_layer("attention.head_count_kv")]
        attention = [not r for r in recurrent]
    elif layout == "kv0-ff0":
        kv, ff = per_layer("attention.head_count_kv"), per_layer("feed_forward_length")
        recurrent = [k == 0 and f == 0 for k, f in zip(kv, ff)]
        attention = [k != 0 and f == 0 for k, f in zip(kv, ff)]
    else:
        marks = meta.get(f"{arch}.attention.recurrent_layers")
        if isinstance(marks, list):
            recurrent = [bool(m) for m in (marks + [False] * layers)[:layers]]
        else:
            interval = number("full_attention_interval", 4)
            if interval < 1:
                raise GGUFError(f"GGUF metadata {arch}.full_attention_interval must be >= 1, not {interval}")
            recurrent = [(il + 1) % interval != 0 for il in range(layers)]
        attention = [not r for r in recurrent]
        nextn = number("nextn_predict_layers", 0)
        if nextn >= layers:  # llama.cpp asserts nextn_predict_layers < n_layer (src/llama-model.cpp@7c158fbb4)
            raise GGUFError(f"GGUF metadata {arch}.nextn_predict_layers {nextn:,} must be below its {layers:,} blocks")
    if arch in ("lfm2", "lfm2moe"):
        state = RecurrentState("shortconv", conv_kernel=number("shortconv.l_cache"))
    else:
        state = RecurrentState("ssm", conv_kernel=number("ssm.conv_kernel"), inner_size=number("ssm.inner_size"),
                               state_size=number("ssm.state_size"),
                               group_count=number("ssm.group_count", 0) if arch in _READS_GROUP_COUNT else 0)
    for name in ("conv_kernel", "inner_size", "state_size", "group_count"):
        if getattr(state, name) > MAX_STATE_WIDTH:
            raise GGUFError(f"GGUF metadata {arch}: {name} {getattr(state, name):,} is beyond {MAX_STATE_WIDTH:,}")
    state = replace(state, recurrent=tuple(recurrent), attention=tuple(attention),
                    nextn=nextn if layout == "interval" else 0)
    return state, f"GGUF architecture '{arch}' ({sum(recurrent)} of {layers} layers recurrent)"


# no real state-space model comes near: past it a width is a typo or an attack (products reach 10^18 otherwise)
MAX_STATE_WIDTH = 1 << 20


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
                output: int, expert_width: int | None, shared_width: int | None,
                pure_recurrent: bool = False) -> ModelFacts:
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

    if pure_recurrent:  # Mamba's converter writes head_count and feed_forward_length 0 ("unused"): not bad values
        unused = (f"{arch}.attention.head_count", f"{arch}.feed_forward_length")
        meta = {k: v for k, v in meta.items() if not (k.startswith(unused) and v == 0)}
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
