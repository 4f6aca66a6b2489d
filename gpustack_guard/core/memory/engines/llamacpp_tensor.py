"""llama.cpp's --split-mode tensor: one "Meta" device over every GPU, each split tensor cut across them
(profiles.LLAMACPP_SPLIT_MODES, read at llama.cpp 0c1e57098).

Per GPU: its share of the weights, its whole KV heads of each layer's cache and a compute buffer of its own. The
Meta buffer's log line gives the largest GPU's share (ggml-backend-meta.cpp: the buffer's size is the max of its
per-device buffers), so the estimate's worst device is what the log prints.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

# ggml_blck_size of the tensor that keys a cache's split (its layer's attn_output.weight): 1 counts whole KV heads,
# exact wherever n_gqa x head size reaches 256 elements (a quant block of 256 rounds no further there)
UNSPLIT_BLOCK = 1
PERF_BLOCK = 128  # llama_meta_device_get_split_state grows the block to 128 while every device keeps a share


def tensor_fractions(tensor_split: Sequence[float] | None, devices: int) -> tuple[float, ...]:
    """Each GPU's proportion: -ts as given (missing ones 0), all zero or none an even split (llama.cpp's
    `tensor_split_scan.back() == 0` branch), not the free-memory split of --split-mode layer."""
    given = tuple(tensor_split or ())[:devices]
    given += (0.0,) * (devices - len(given))
    return given if any(f > 0 for f in given) else (1.0,) * devices


def head_split(heads: int, head_dim: int, gqa: int, fractions: Sequence[float], rotation: int,
               block: int = UNSPLIT_BLOCK) -> list[int]:
    """K elements of one cell each GPU holds for a layer of `heads` KV heads: cumulative split points of the
    proportions (rotated by the layer so the rounding falls on another GPU each time), each rounded down to the
    unit llama.cpp keeps whole (granularity_q / n_gqa: whole KV heads), the last GPU taking the remainder."""
    n = len(fractions)
    perf = block
    while perf < PERF_BLOCK and perf * n < gqa * head_dim:
        perf *= 2
    unit = math.lcm(gqa * head_dim, perf) // gqa
    ne = heads * head_dim
    scan, total = [], 0.0
    for j in range(n):
        total += fractions[(j + rotation) % n]
        scan.append(total)
    out, low = [0] * n, 0
    for j in range(n - 1):
        high = ne * (j + 1) // n if scan[-1] == 0 else int(ne * scan[j] / scan[-1])
        high -= high % unit
        out[(j + rotation) % n] = high - low
        low = high
    out[(n - 1 + rotation) % n] = ne - low
    return out


def rotations(kinds: Sequence[object], devices: int) -> list[int]:
    """Each layer's rotation: how many earlier layers are of its kind (attention, window, recurrent), mod the
    GPUs (get_il_eff: counting only its kind keeps an interleaved pattern from landing on one GPU)."""
    seen: dict[object, int] = {}
    out = []
    for kind in kinds:
        out.append(seen.get(kind, 0) % devices)
        seen[kind] = seen.get(kind, 0) + 1
    return out


def kv_per_gpu(facts, kv_layers: Sequence[int], windows: Sequence[bool], cell_bytes: float,
               cells: tuple[int, int], fractions: Sequence[float]) -> list[int]:
    """Each GPU's KV bytes: its whole KV heads of every offloaded attention layer's cache, at the full cache's
    cells or (a window layer) the window cache's (cells = (full, window))."""
    heads, head_dim = facts.kv_heads or 1, facts.dim_head or 1
    gqa = max(1, (facts.num_attention_heads or heads) // heads)
    turns = rotations(windows, len(fractions))
    parts = [0.0] * len(fractions)
    for il in kv_layers:
        layer_bytes = cell_bytes * cells[1 if windows[il] else 0] / (heads * head_dim)
        for j, elements in enumerate(head_split(heads, head_dim, gqa, fractions, turns[il])):
            parts[j] += layer_bytes * elements
    return [int(part) for part in parts]


def per_gpu(usage, fractions: Sequence[float], kv: Sequence[int]):
    """One GPU's figures from the whole model's on one device: weights and recurrent rows by proportion (the
    mirrored norms and biases are counted split, a few MiB), KV by whole heads, the compute buffer in full (every
    GPU runs the whole graph on its slices; counted at the one-device size, an upper bound)."""
    total = sum(fractions)
    return [replace(usage, weights=int(usage.weights * f / total), kv=kv[i], rs=int(usage.rs * f / total))
            for i, f in enumerate(fractions)]
