"""GGUF hyperparameters of the wrong type in a hostile header: one GGUFError naming the key, never a TypeError or
OverflowError from the arithmetic (an internal error); per-layer arrays count their widest layer; a kept array is
bounded before it is built."""

import struct

import pytest

from gpustack_guard.core.memory.gguf import MAX_KEPT_ARRAY, GGUFError, facts_from_gguf, parse_header


def _s(text: str) -> bytes:
    return struct.pack("<Q", len(text.encode())) + text.encode()


def _u32(value: int) -> tuple[int, bytes]:
    return 4, struct.pack("<I", value)


def _array(kind: int, fmt: str, values: list) -> tuple[int, bytes]:
    return 9, struct.pack("<IQ", kind, len(values)) + b"".join(struct.pack(fmt, v) for v in values)


def _header(**overrides):
    keys = {"block_count": _u32(3), "embedding_length": _u32(256), "attention.head_count": _u32(4),
            "attention.head_count_kv": _u32(4), "feed_forward_length": _u32(512), "vocab_size": _u32(1000),
            "context_length": _u32(4096)} | overrides
    kv = [("general.architecture", 8, _s("llama"))] + [(f"llama.{k}", *v) for k, v in keys.items()]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, kind, value in kv:
        body += _s(key) + struct.pack("<I", kind) + value
    return parse_header(lambda offset, size: body[offset:offset + size])


@pytest.mark.parametrize("key,value,shown", [
    ("embedding_length", (8, _s("4096")), "llama.embedding_length must be a whole number >= 0, not '4096'"),
    ("attention.head_count", (8, _s("4")), "llama.attention.head_count must be a whole number >= 0, not '4'"),
    ("attention.head_count", (6, struct.pack("<f", 4.0)),
     "llama.attention.head_count must be a whole number >= 0, not 4.0"),
    ("vocab_size", (6, struct.pack("<f", float("inf"))), "llama.vocab_size must be a whole number >= 0, not inf"),
    ("vocab_size", (12, struct.pack("<d", float("nan"))), "llama.vocab_size must be a whole number >= 0, not nan"),
    ("vocab_size", (7, b"\x01"), "llama.vocab_size must be a whole number >= 0, not True"),
    ("embedding_length", _array(4, "<I", [256, 256]), "llama.embedding_length must be a whole number >= 0, not an "
                                                      "array"),
    ("attention.head_count_kv", _array(8, "<I", []), None),  # an empty per-layer list: none of its own
    ("feed_forward_length", (9, struct.pack("<IQ", 8, 1) + _s("512")),
     "llama.feed_forward_length must be a whole number >= 0, not '512'"),
])
def test_a_hyperparameter_of_the_wrong_type_is_one_gguf_error_naming_the_key(key, value, shown):
    header = _header(**{key: value})
    if shown is None:
        assert facts_from_gguf(header, "m.gguf").num_key_value_heads is None
        return
    with pytest.raises(GGUFError) as error:
        facts_from_gguf(header, "m.gguf")
    assert str(error.value) == f"GGUF metadata {shown}"


def test_per_layer_arrays_count_their_widest_layer():
    # llama.cpp's get_key_or_arr: OpenELM-style per-layer head and FFN widths; was read as the array's length (3)
    facts = facts_from_gguf(_header(**{"attention.head_count": _array(4, "<I", [4, 8, 4]),
                                       "attention.head_count_kv": _array(4, "<I", [1, 2, 8]),
                                       "feed_forward_length": _array(4, "<I", [512, 1024, 768])}), "m.gguf")
    assert (facts.num_attention_heads, facts.num_key_value_heads, facts.intermediate_size) == (8, 8, 1024)
    assert facts.head_dim == 256 // 8


@pytest.mark.parametrize("count,ok", [(MAX_KEPT_ARRAY, True), (MAX_KEPT_ARRAY + 1, False), (2**40, False)])
def test_a_kept_array_is_bounded_before_it_is_built(count, ok):
    values = [2] * min(count, MAX_KEPT_ARRAY + 1)
    kind, body = 9, struct.pack("<IQ", 4, count) + b"".join(struct.pack("<I", v) for v in values)
    if ok:
        assert facts_from_gguf(_header(**{"attention.head_count_kv": (kind, body)}), "m.gguf").num_key_value_heads == 2
        return
    with pytest.raises(GGUFError, match=f"GGUF array of {count:,} items where at most {MAX_KEPT_ARRAY:,}"):
        _header(**{"attention.head_count_kv": (kind, body)})
