"""llama.cpp per-device VRAM with layer offload (docs/memory-arithmetic.md, "llama.cpp").

Per device: platform footprint + weights of its layers (+ the output layer where it goes) + KV of its layers +
one compute buffer. llama.cpp reserves the compute buffer by allocating its worst-case graph (min(n_ctx, n_ubatch)
tokens over the full KV cache) with ggml-alloc, which frees and reuses tensors: the buffer is the high-water mark
of live tensors, so the attention scratch and the logits share it — the larger one sizes it, not their sum.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import replace

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.engine_flags import FlagValueError, llamacpp_auto_default, to_float32
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS, Estimate, UnsupportedModel
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.kv import longest_fitting
from gpustack_guard.core.memory.quant import GGUF_TYPE_BYTES
from gpustack_guard.core.memory.terms import COMPUTE_BUFFER
from gpustack_guard.core.memory.weights import routed_expert_bytes, weight_layout
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.versions import parse_version

QUANTISED_CACHE = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}
F32, F16 = 4, 2  # bytes of ggml's f32 (KQ, logits) and f16 (flash-attention mask) tensors


@frozen_value  # identity equality: cheaper to define, never compared
class LlamaCppConfig:
    """The llama-server arguments the llama.cpp arithmetic reads."""

    __repr__ = fields_repr

    ctx_size: int | None = None  # total cells, shared by all --parallel slots
    parallel: int | None = None
    gpu_layers: int | None = None  # -ngl; None = everything
    batch_size: int | None = None
    ubatch_size: int | None = None
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    flash_attn: bool = False
    flash_attn_auto: bool = False  # on because --flash-attn is auto (given, or the default from b6325)
    no_kv_offload: bool = False
    kv_unified: bool = True  # one cache for all slots; False: one stream of n_ctx / parallel cells per slot
    swa_full: bool = False  # --swa-full: the sliding-window cache as large as the full one (ollama's runner sets it)
    tensor_split: tuple[float, ...] | None = None
    platform_footprint: int = P.LLAMACPP_PLATFORM_FOOTPRINT
    split_mode: str = "layer"  # --split-mode: layer (default), row or none
    tensor_overrides: bool = False  # --override-tensor / -ot given (llama.cpp then keeps one copy of the inputs)
    # (regex, buffer type) in the order llama.cpp checks them: -ot's pairs and what --cpu-moe / --n-cpu-moe add
    buft_overrides: tuple[tuple[str, str], ...] = ()
    fit: bool = False  # --fit runs before loading (the build has it and it is not off): fit_params below
    ctx_given: bool = False  # -c given (0 included): --fit does not shrink the context
    layers_given: bool = False  # -ngl given other than auto: --fit does not change the offload
    fit_target: tuple[int, ...] = (P.LLAMACPP_FIT_TARGET,)  # --fit-target, bytes to leave free per device
    fit_min_ctx: int = P.LLAMACPP_FIT_MIN_CTX  # --fit-ctx
    from_env: tuple[tuple[str, str], ...] = ()  # (flag, LLAMA_ARG_ variable) of each value read from the env
    # -ngl's placement as the run's log showed it: True the output layer first, False last, None by the build
    # (profiles.LLAMACPP_OUTPUT_LAYER_ENV)
    output_first: bool | None = None
    pipeline_off: bool = False  # the run's log showed no pipeline copies (profiles.LLAMACPP_PIPELINE_ENV)
    slot_cap: int = 0  # --kv-unified-per-slot N: each slot's tokens at most N, the pool slots x N without -c
    unset_ctx: int | None = None  # what an unset -c counts as: None is the engine's default by build; GPUStack's
    #                               booking passes gguf-parser's (P.GPUSTACK_BOOKING_CTX)


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class DeviceUsage:
    """What llama.cpp holds on one device: layers, weights, KV and compute buffer."""

    __repr__ = fields_repr

    layers: int
    weights: int
    kv: int
    compute: int  # the one compute buffer: max(attention scratch, logits on the output device)
    output: int  # the logits part of it (0 off the output device), shown, not added
    footprint: int
    rs: int = 0  # the RS buffer: per-sequence rows of the device's recurrent layers
    attention_layers: int = 0  # of `layers`, those with a KV cache

    @property
    def total(self) -> int:
        return self.footprint + self.weights + self.kv + self.rs + self.compute


def _cache_bytes(kind: str) -> float:
    try:
        return GGUF_TYPE_BYTES[kind.lower()]
    except KeyError:
        raise ValueError(f"unknown cache type '{kind}' (f16, bf16, q8_0, q4_0, ...)") from None


def split_layers(slots: int, fractions: tuple[float, ...]) -> list[int]:
    """The device of each offloaded slot, as llama.cpp's load_tensors assigns them: the fractions become float32
    cumulative split points, and slot j goes to the first device whose point exceeds j / slots (upper_bound).
    On full offload the output layer is the last slot, so it counts in the split (llama.cpp#14075: 80 layers +
    output on four equal cards are 21/20/20/19 layers). The fractions are finite, >= 0, not all 0, and their
    float32 sum is finite (engine_flags refuses the rest), so the last point is 1.0 and each j / slots < 1 has one."""
    points, running = [], 0.0
    for f in fractions:
        running = to_float32(running + to_float32(f))
        points.append(running)
    points = [to_float32(p / running) for p in points]
    return [bisect.bisect_right(points, to_float32(j / slots)) for j in range(slots)]


def arch_key(architecture: str | None) -> str:
    """One spelling for an architecture's HF class, model type and GGUF name: gemma3 for all of
    Gemma3ForConditionalGeneration, gemma3_text and gemma3."""
    name = (architecture or "").lower()
    for suffix in ("forcausallm", "forconditionalgeneration", "_text"):
        name = name.removesuffix(suffix)
    return re.sub(r"[^a-z0-9]", "", name)


def swa_pattern(architecture: str | None) -> int | None:
    return P.LLAMACPP_SWA_PATTERNS.get(arch_key(architecture))


def windowed_layer(pattern: int | None, layer: int) -> bool:
    """Whether llama.cpp gives this layer the sliding-window cache (hparams.is_swa for set_swa_pattern(n))."""
    return pattern is not None and layer % pattern < pattern - 1


def micro_batch(batch: int | None, ubatch: int | None, version: str | None = None) -> int:
    """n_ubatch after the build's defaults (profiles.LLAMACPP_BATCH_DEFAULTS), capped at n_batch as llama.cpp
    caps it; a build before n_ubatch existed reserves n_batch tokens."""
    defaults = P.llamacpp_batch_defaults(version)
    if defaults.n_ubatch is None:
        return batch or defaults.n_batch
    return min(ubatch or defaults.n_ubatch, batch or defaults.n_batch)


def reserve_tokens(ctx: int, batch: int | None, ubatch: int | None, version: str | None = None) -> int:
    """sched_reserve's n_tokens = min(n_ctx, n_ubatch)."""
    return min(ctx, micro_batch(batch, ubatch, version))


def attention_scratch(cells: int, tokens: int, heads: int, flash_attn: bool, hidden: int = 0) -> int:
    """The largest attention intermediate of one layer over the full cache.

    Without flash attention: the f32 KQ matrix (cells x tokens x heads), the f32 KQ mask beside it and the
    hidden-size rows live with them (profiles.LLAMACPP_KQ_LIVE_HIDDEN_ROWS). With it, no KQ matrix is
    materialised; the f16 mask remains."""
    if flash_attn:
        return cells * tokens * F16
    live = P.LLAMACPP_KQ_LIVE_HIDDEN_ROWS * hidden * tokens * F32
    return cells * tokens * heads * F32 + cells * tokens * F32 + live


def logits_scratch(hidden: int, vocab: int, tokens: int) -> int:
    """f32 hidden states and logits of every reserved token on the output device (gguf-parser's Output term)."""
    return (hidden + vocab) * tokens * F32


def output_logits(facts: ModelFacts, tokens: int) -> int:
    """logits_scratch of the model's own hidden and vocabulary sizes."""
    assert facts.hidden_size is not None and facts.vocab_size is not None, \
        "engines run on facts whose missing_for_params() is empty"
    return logits_scratch(facts.hidden_size, facts.vocab_size, tokens)


def ffn_width(facts: ModelFacts, version: str | None = None) -> int:
    """The widest feed-forward moment of one layer, in f32 values per token, as the build's graph has it
    (profiles.LLAMACPP_FFN_FORMS): the gate and up outputs of a gated MLP (up only for a plain one), with the GLU
    output beside them from the build that introduced it; for MoE, all k routed experts at once plus the shared
    expert, or, in the early per-expert loop, one expert at a time with the allocator's extra slot and the running
    sum from the second expert on."""
    form = P.llamacpp_ffn_form(version)
    live = form.gated_live if facts.gated_mlp else 1
    dense = facts.intermediate_size or 0
    if not facts.num_experts:
        return live * dense
    expert = facts.moe_intermediate_size or dense
    used = facts.num_experts_per_tok or 1
    shared = live * (facts.shared_expert_intermediate_size or 0)
    if not form.expert_loop:
        routed = live * expert * used + shared
    elif used == 1:
        routed = live * expert + shared
    else:
        # the previous expert's down output holds the slot its gate freed, so the next gate goes above it (gated
        # MLPs only: a plain one frees nothing before down), and the sum of the expert outputs so far is one row
        routed = (live + 1 if facts.gated_mlp else live) * expert + (facts.hidden_size or 0) + shared
    return max(routed, live * dense if facts.first_k_dense_replace else 0)


def ffn_scratch(cells: int, tokens: int, facts: ModelFacts, flash_attn: bool, input_device: bool,
                version: str | None = None) -> int:
    """The feed-forward stage: its intermediates, the residual and the normed input (two hidden rows) and the KQ
    mask, a graph input alive throughout (f16 with flash attention). The device that takes the input from the CPU
    (token_embd stays there) also holds the copied embeddings and, with flash attention, the f32 mask before its
    f16 cast (profiles.LLAMACPP_FFN_* says where the counts come from)."""
    return _beside_hidden_rows(ffn_width(facts, version), cells, tokens, facts.hidden_size or 0, flash_attn,
                               input_device)


def _beside_hidden_rows(width: int, cells: int, tokens: int, hidden: int, flash_attn: bool,
                        input_device: bool) -> int:
    """A stage of `width` f32 values per token beside what every layer stage holds: the residual and the normed
    input (LLAMACPP_FFN_HIDDEN_ROWS) and the KQ mask, with the input device's extras (ffn_scratch)."""
    mask = cells * tokens * (F16 if flash_attn else F32)
    rows = P.LLAMACPP_FFN_HIDDEN_ROWS * hidden + width
    if input_device:
        rows += hidden
        mask += cells * tokens * F32 if flash_attn else 0
    return rows * tokens * F32 + mask


def delta_net_scratch(cells: int, tokens: int, facts: ModelFacts, flash_attn: bool, input_device: bool,
                      version: str | None = None, sequences: int = 1) -> int:
    """The Gated DeltaNet layer's widest moment (profiles.LLAMACPP_DELTA_NET_FORMS), 0 where the architecture or
    the build has no row: its conv-channel rows per token beside the feed-forward stage's hidden rows and mask,
    plus the conv states of every reserved sequence (the graph reserves n_seq_max of them, -np). A lower bound
    where one sequence's scan state is not small beside the conv rows: ggml-alloc then leaves gaps (up to 2.5
    scan states measured at -ub 128-448 on tiny shapes)."""
    form = P.llamacpp_delta_net_form(version)
    state = facts.recurrent_state
    if form.conv_rows is None or state is None or facts.architecture not in P.LLAMACPP_DELTA_NET_ARCHS:
        return 0
    channels = state.inner_size + 2 * state.group_count * state.state_size
    conv_states = form.conv_state_copies * max(state.conv_kernel - 1, 0) * channels * max(1, sequences) * F32
    return _beside_hidden_rows(form.conv_rows * channels, cells, tokens, facts.hidden_size or 0, flash_attn,
                               input_device) + conv_states


def compute_buffer(cells: int, tokens: int, facts: ModelFacts, flash_attn: bool, output_device: bool,
                   input_device: bool = False, version: str | None = None, outputs: int | None = None,
                   sequences: int = 1, recurrent_layers: bool = True) -> int:
    """The high-water mark of the reserved graph on one device: the largest of the attention stage, the
    feed-forward stage, a hybrid's delta-net stage where the device runs recurrent layers (over `sequences`
    reserved sequences) and, on the output device, the logits of the reserved outputs (all tokens unless given:
    reserved_outputs)."""
    assert facts.num_attention_heads is not None or facts.recurrent_state is not None, \
        "engines run on facts whose missing_for_params() is empty"
    attention = attention_scratch(cells, tokens, facts.num_attention_heads or 0, flash_attn, facts.hidden_size or 0)
    ffn = ffn_scratch(cells, tokens, facts, flash_attn, input_device, version)
    delta_net = delta_net_scratch(cells, tokens, facts, flash_attn, input_device, version, sequences) \
        if recurrent_layers else 0
    logits = output_logits(facts, tokens if outputs is None else outputs) if output_device else 0
    return max(attention, ffn, delta_net, logits)


def reserved_outputs(tokens: int, slots: int, batch: int, version: str | None) -> int:
    """The rows of logits llama-server's reserved prompt graph holds: from LLAMACPP_SERVER_OUTPUTS_SINCE one per
    slot (speculative drafts are not modelled), at most n_batch and the reserved tokens; before it every token."""
    if not _since(version, P.LLAMACPP_SERVER_OUTPUTS_SINCE):
        return tokens
    return min(tokens, max(1, min(batch, slots)))


def offloaded_blocks(offload: int, n_layer: int, version: str | None,
                     output_first: bool | None = None) -> tuple[int, bool]:
    """The blocks -ngl `offload` (at most n_layer + 1) puts on the GPUs, the last ones, and whether the output layer
    goes too: from profiles.LLAMACPP_OUTPUT_FIRST_SINCE the output layer is the first of the N, before that the
    last, taken only once N passes n_layer. output_first, where the run's log showed which, decides instead of the
    build (profiles.LLAMACPP_OUTPUT_LAYER_ENV)."""
    first = _since(version, P.LLAMACPP_OUTPUT_FIRST_SINCE) if output_first is None else output_first
    if offload > 0 and first:
        return min(offload - 1, n_layer), True
    return min(offload, n_layer), offload > n_layer


def pipeline_copies(cfg: LlamaCppConfig, devices_used: int, full_offload: bool, version: str | None) -> int:
    """n_copies the scheduler keeps of each split's inputs: GGML_SCHED_MAX_COPIES when llama_context enables
    pipeline parallelism (several devices, full offload, layer split, KV offloaded, no tensor overrides), else 1
    (profiles.LLAMACPP_PIPELINE_PARALLEL_SINCE); 1 where the run's log showed none (profiles.LLAMACPP_PIPELINE_ENV)."""
    parallel = (devices_used > 1 and full_offload and cfg.split_mode == "layer" and not cfg.no_kv_offload
                and not cfg.tensor_overrides and not cfg.pipeline_off
                and _since(version, P.LLAMACPP_PIPELINE_PARALLEL_SINCE))
    return P.LLAMACPP_SCHED_MAX_COPIES if parallel else 1


def split_inputs(mask_cells: tuple[int, ...], tokens: int, hidden: int, flash_attn: bool,
                 version: str | None = None, input_device: bool = True) -> int:
    """What one device receives for its split of the reserved graph: the hidden state (f32), one KQ mask per cache
    its layers attend over (cells x tokens) and the int32 positions. The mask is f32 without flash attention; with
    it, f16 from profiles.LLAMACPP_F16_MASK_INPUT_SINCE, and before that f32 on the input device, which casts it,
    while every later device receives the cast f16 copy (profiles.LLAMACPP_CAST_MASK_DOWNSTREAM)."""
    f16_mask = flash_attn and (_since(version, P.LLAMACPP_F16_MASK_INPUT_SINCE) or not input_device)
    masks = sum(mask_cells) * tokens * (F16 if f16_mask else F32)
    return hidden * tokens * F32 + masks + tokens * P.LLAMACPP_POSITION_BYTES


def padded_cells(ctx: int, flash_attn: bool, version: str | None = None) -> int:
    pad = cell_pad(flash_attn, version)
    return math.ceil(ctx / pad) * pad


def cell_pad(flash_attn: bool, version: str | None) -> int:
    """The multiple llama.cpp rounds n_ctx up to: 256 from LLAMACPP_CTX_PAD_ALWAYS_SINCE, before it 256 with
    flash attention and 32 without."""
    if _since(version, P.LLAMACPP_CTX_PAD_ALWAYS_SINCE):
        return P.LLAMACPP_CTX_PAD_ALWAYS
    return P.LLAMACPP_CELL_PAD_FLASH if flash_attn else P.LLAMACPP_CELL_PAD


def kv_streams(cfg: LlamaCppConfig, version: str | None) -> int:
    """How many separate caches llama.cpp builds: one per slot when the cache is not unified (from
    LLAMACPP_KV_STREAMS_SINCE; older builds are counted as one cache, which sizes attention over all cells)."""
    if cfg.kv_unified or not _since(version, P.LLAMACPP_KV_STREAMS_SINCE):
        return 1
    return cfg.parallel or 1


def context_cells(ctx: int, streams: int, flash_attn: bool, version: str | None) -> tuple[int, int]:
    """(cells of the whole cache, cells one stream's attention reads). With one stream per slot, llama_context
    rounds each slot's share up to the pad again, so the cache can outgrow the padded n_ctx (-c 1000 -np 3:
    1,024 -> 3 x 512 = 1,536 cells)."""
    cells = padded_cells(ctx, flash_attn, version)
    if streams == 1:
        return cells, cells
    per_stream = padded_cells(cells // streams, flash_attn, version)
    return per_stream * streams, per_stream


def slot_context(ctx: int, cfg: LlamaCppConfig, version: str | None) -> int:
    """The tokens one slot (one request) can hold: llama_context's n_ctx_seq, which the server gives each slot
    (n_ctx_slot, tools/server/server-context.cpp). With one unified cache that is the whole context, with a cache
    per slot its padded share (src/llama-context.cpp: `n_ctx_seq = kv_unified ? n_ctx : pad(n_ctx / n_seq_max)`,
    llama.cpp 0c1e57098 as llama-cpp-python 0.3.36 vendors it; the server shares it since PR #16736, and llama.cpp#23652
    logs it at b9265: -c 1024 without -np gives four slots of 1,024, -np 4 four of 256); builds before
    LLAMACPP_KV_STREAMS_SINCE split n_ctx over the slots (the server's n_ctx / n_parallel)."""
    if not _since(version, P.LLAMACPP_KV_STREAMS_SINCE):
        return ctx // (cfg.parallel or 1)
    seq = context_cells(ctx, kv_streams(cfg, version), cfg.flash_attn, version)[1]
    cap = slot_cap(cfg, version)  # server-context.cpp n_ctx_slot: min(n_ctx_seq, --kv-unified-per-slot)
    return min(seq, cap) if cap else seq


def swa_cells(cells: int, window: int, parallel: int, batch: int, flash_attn: bool) -> int:
    """The sliding-window cache: one window per slot plus one batch (n_batch before b5560, n_ubatch from it:
    swa_batch), padded, never more than the full cache."""
    return min(cells, padded_cells(window * parallel + batch, flash_attn))


def swa_batch(version: str | None, batch: int, ubatch: int) -> int:
    return ubatch if _since(version, P.LLAMACPP_SWA_UBATCH_SINCE) else batch


def _since(version: str | None, release: str) -> bool:
    return P.arithmetic_release("llamacpp", version) >= P.known_version(release)


def has_swa_cache(version: str | None) -> bool:
    return _since(version, P.LLAMACPP_SWA_CACHE_SINCE)


# The words llama.cpp's common/arg.cpp reads for its on/off flags, --flash-attn and --fit (is_truthy, is_falsey,
# is_autoy): "yes" and "no" are not among them, so args.normal_value's wider boolean reading does not apply.
TRUTHY, FALSEY, AUTOY = ("on", "enabled", "true", "1"), ("off", "disabled", "false", "0"), ("auto", "-1")


def flash_attention_on(setting: str | None, version: str | None, kv_on_host: bool = False) -> tuple[bool, bool]:
    """(on, decided by auto) for --flash-attn's value (None: not given). Raises ValueError for a value llama.cpp
    refuses. Before b6325 the flag is a switch; from it, on|off|auto with auto the default. Auto is on, except
    with the KV cache in host memory (--no-kv-offload): the attention op then lands on another device than the
    layer's cache, and llama_context's auto check turns it off (lmstudio-bug-tracker#1454 logs it)."""
    tri_state = _since(version, P.LLAMACPP_FLASH_AUTO_SINCE)
    # compared as written: common/arg.cpp's is_truthy and its kin take `on`, not `ON`, and `` is no `off`
    word = ("auto" if tri_state else "off") if setting is None else setting.strip()
    if word in TRUTHY:
        return True, False
    if word in FALSEY:
        return False, False
    if word in AUTOY and tri_state:
        return not kv_on_host, True
    build = version or P.DEFAULT_VERSIONS["llamacpp"]
    if tri_state:
        raise ValueError(f"llama.cpp {build} accepts on, off or auto")
    raise ValueError(f"llama.cpp {build} takes -fa as a switch, on or off (auto exists from "
                     f"{P.LLAMACPP_FLASH_AUTO_SINCE})")


def cell_widths(facts: ModelFacts, version: str | None) -> tuple[int, int]:
    """Elements one layer's K and V cache hold per cell. Grouped-query models: KV heads x head size for each. MLA
    (DeepSeek-2/3) by build (profiles.LLAMACPP_MLA_CACHE_SINCE): every head's nope + rope K and value V before
    llama.cpp cached the latent, then the latent + rope as K and the latent as V, then no V at all."""
    assert facts.kv_heads is not None and facts.dim_head is not None, \
        "engines run on facts whose missing_for_params() is empty"
    if not facts.is_mla:
        width = facts.kv_heads * facts.dim_head
        return width, width
    assert facts.kv_lora_rank is not None and facts.qk_rope_head_dim is not None  # is_mla
    if not _since(version, P.LLAMACPP_MLA_CACHE_SINCE):
        nope = facts.qk_nope_head_dim if facts.qk_nope_head_dim is not None else facts.dim_head
        value = facts.v_head_dim if facts.v_head_dim is not None else nope
        heads = facts.num_attention_heads or facts.kv_heads
        return heads * (nope + facts.qk_rope_head_dim), heads * value
    latent = facts.kv_lora_rank
    return latent + facts.qk_rope_head_dim, 0 if _since(version, P.LLAMACPP_MLA_V_LESS_SINCE) else latent


def recurrent_elements(facts: ModelFacts) -> tuple[int, int]:
    """(r, s): elements of one recurrent layer's conv row and scan row for one sequence, as llama_hparams
    n_embd_r / n_embd_s compute them (src/llama-hparams.cpp@0c1e57098; n_embd_k_s / n_embd_v_s@8733e0cf):
    LFM2's short conv keeps n_embd x (l_cache - 1) and no scan row; the rest (d_conv - 1) x (d_inner +
    2 x n_group x d_state) and d_state x d_inner. The first conv column is shifted out each step, hence the - 1."""
    state = facts.recurrent_state
    if state is None:
        return 0, 0
    if state.kind == "shortconv":
        return (facts.hidden_size or 0) * max(state.conv_kernel - 1, 0), 0
    conv = max(state.conv_kernel - 1, 0) * (state.inner_size + 2 * state.group_count * state.state_size)
    return conv, state.state_size * state.inner_size


def layer_kinds(facts: ModelFacts) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
    """(holds a KV cache, holds recurrent rows) per layer: every layer attention for an attention-only model."""
    layers = facts.num_hidden_layers or 0
    state = facts.recurrent_state
    if state is None:
        return (True,) * layers, (False,) * layers
    return state.attention, state.recurrent


def cell_bytes_per_layer(facts: ModelFacts, version: str | None, type_k: str, type_v: str) -> float:
    k, v = cell_widths(facts, version)
    return k * _cache_bytes(type_k) + v * _cache_bytes(type_v)


CPU_BUFFER = "CPU"  # the buffer type name of host memory in -ot (ggml_backend_cpu_buffer_type)


def expert_overrides(cpu_moe: bool, n_cpu_moe: int | None, version: str | None,
                     blocks: int | None = None) -> tuple[tuple[str, str], ...]:
    """The overrides --cpu-moe and --n-cpu-moe N add (profiles.LLAMACPP_EXPERT_PATTERNS): every layer's routed
    experts, or those of layers 0..N-1, to the CPU. With the model's block count, N is capped at it: llama.cpp adds
    a pattern per i < N, but one past the last block matches no tensor (an --n-cpu-moe of 10^9 moves what the block
    count does, without building 10^9 patterns)."""
    experts = P.llamacpp_expert_pattern(version).experts
    count = max(n_cpu_moe or 0, 0)
    if blocks is not None:
        count = min(count, blocks)
    added = [(f"blk\\.{i}{experts}", CPU_BUFFER) for i in range(count)]
    return tuple(added) + (((experts, CPU_BUFFER),) if cpu_moe else ())


def parse_override_tensor(value: str) -> tuple[tuple[str, str], ...]:
    """-ot's value as common/arg.cpp splits it: comma-separated <regex>=<buffer type>. Raises ValueError naming
    the first pair llama.cpp refuses (no '=', or a pattern std::regex would not compile, approximated by re)."""
    pairs = []
    for item in value.split(","):
        pattern, sep, buffer = item.partition("=")
        if not sep or not buffer:
            raise ValueError(f"'{item}' is not <tensor name pattern>=<buffer type>")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"'{pattern}' is not a regular expression ({exc})") from None
        pairs.append((pattern, buffer))
    return tuple(pairs)


@frozen_value(repr=True)
class Placement:
    """Where the overrides put the block tensors: bytes moved off (negative) or onto each device, what lands in host
    memory (and its CPU_REPACK part), the largest host weight each device's ops read, and the tensors moved."""

    device_delta: tuple[int, ...]
    host: int
    host_repack: int
    host_weight_copy: tuple[int, ...]
    moved: int
    matched: int
    measured: bool  # per tensor from the GGUF; False: gsg's routed-expert split of the computed layout


def _block_tensors(facts: ModelFacts) -> tuple[tuple[str, int, int], ...] | None:
    """The block tensors the overrides match: the GGUF's own, else each MoE layer's routed experts as llama.cpp
    names them, the layer's routed bytes split three ways (gate, up, down). None: gsg knows no tensor names."""
    if facts.block_tensors is not None:
        return facts.block_tensors
    routed = routed_expert_bytes(facts)
    if not routed:
        return None
    out = []
    for il, total in enumerate(routed):
        if total:
            third = total // 3
            out += [(f"blk.{il}.ffn_gate_exps.weight", third, 0), (f"blk.{il}.ffn_up_exps.weight", third, 0),
                    (f"blk.{il}.ffn_down_exps.weight", total - 2 * third, 0)]
    return tuple(out)


TOKEN_EMBD, OUTPUT = "token_embd.weight", "output.weight"  # llama.cpp's names (llama-arch.cpp LLM_TENSOR_NAMES)


def _edge_tensors(facts: ModelFacts, layout,
                  output_device: int | None) -> list[tuple[str, int, int, int | None, int]]:
    """The input and output layers' weights as (name, bytes, CPU_REPACK bytes, device or None: host, bytes in host
    memory), where
    llama-model.cpp load_tensors puts them before any override: token_embd on the CPU always (dev_input, "very
    little benefit to offloading the input layer"), the output with the output layer (dev_output: the device of
    slot n_layer when -ngl reaches it, else the CPU). A tied model's output is token_embd again (TENSOR_DUPLICATED,
    so an override of token_embd moves it too): in host memory it is the input's mapped tensor, no bytes of its
    own, on a device a tensor of its own."""
    head = layout.lm_head or layout.embedding  # a GGUF's output figure includes the output norm
    if facts.tie_word_embeddings or not layout.lm_head:
        output = (TOKEN_EMBD, head, 0, output_device, head - layout.embedding)
    else:
        output = (OUTPUT, head, facts.output_repack_bytes or 0, output_device, head)
    return [(TOKEN_EMBD, layout.embedding, 0, None, layout.embedding), output]


def place_tensors(facts: ModelFacts, cfg: LlamaCppConfig, device_layers: list[list[int]],
                  output_device: int | None = None, layout=None) -> Placement | None:
    """Each weight's buffer under cfg.buft_overrides: the first pattern re.search finds in its name decides
    (CPU: host memory; a device's buffer type, e.g. CUDA1: that device), no match leaves it with its layer. Block
    tensors by the GGUF's names (or gsg's routed experts), and with a layout the input and output layers' weights
    (_edge_tensors). None without overrides, or when no tensor gsg can name is matched."""
    if not cfg.buft_overrides:
        return None
    patterns = [(re.compile(pattern), buffer) for pattern, buffer in cfg.buft_overrides]
    edges = _edge_tensors(facts, layout, output_device) if layout is not None else []
    blocks = _block_tensors(facts)
    if blocks is None and not any(rx.search(name) for name, *_ in edges for rx, _ in patterns):
        return None
    owner = {il: d for d, layers in enumerate(device_layers) for il in layers}
    located = [(name, size, repacked, owner.get(int(m.group(1))), size)
               for name, size, repacked in blocks or () if (m := _BLOCK_INDEX.match(name))]
    delta = [0] * len(device_layers)
    copy = [0] * len(device_layers)
    host = repack = moved = matched = 0
    # None: in host memory (a block below -ngl, the input layer, the output on partial offload)
    for name, size, repacked, source, on_host in located + edges:
        buffer = next((b for rx, b in patterns if rx.search(name)), None)
        if buffer is None:
            continue
        matched += 1
        target = None if host_buffer(buffer) else _device_index(buffer, len(device_layers))
        if target == source:
            continue
        moved += 1
        if source is None:
            host, repack = host - on_host, repack - repacked
        else:
            delta[source] -= size
        if target is None:
            host, repack = host + on_host, repack + repacked
            if source is not None:  # the device still runs the layer's op on it: a copy per split
                copy[source] = max(copy[source], size)
        else:
            delta[target] += size
    return Placement(tuple(delta), host, repack, tuple(copy), moved, matched,
                     facts.block_tensors is not None or blocks is None)


def host_buffer(buffer: str) -> bool:
    """A buffer type in host memory: CPU, and the names the loader's line prints for a CPU override, which picks from
    the CPU's list (CPU_REPACK, or a GPU's pinned CUDA_Host when mmap is off)."""
    return buffer.startswith(CPU_BUFFER) or buffer.endswith("_Host")


_BLOCK_INDEX = re.compile(r"^blk\.(\d+)\.")


def block_count(facts: ModelFacts) -> int:
    """The blocks an --n-cpu-moe pattern can match: the model's layers, or past them the GGUF's highest blk.<i>
    (a next-token-prediction block stored after the decoder's)."""
    named = [int(m.group(1)) + 1 for name, *_ in facts.block_tensors or () if (m := _BLOCK_INDEX.match(name))]
    return max([facts.num_hidden_layers or 0, *named])


def _device_index(buffer: str, devices: int) -> int:
    """The device a buffer type names (CUDA0, ROCm1, Vulkan0: the trailing index). Raises FlagValueError (of -ot,
    the only flag that names a device) where llama.cpp knows no such buffer type."""
    match = re.fullmatch(r"[A-Za-z][A-Za-z_]*?(\d+)", buffer)
    if not match or int(match.group(1)) >= devices:
        raise FlagValueError("override-tensor", buffer, f"a buffer type that names none of the {devices} GPU(s) "
                                                        "(CPU, or a device's own such as CUDA0)")
    return int(match.group(1))


def host_memory(facts: ModelFacts, layout, host_layers: int, output_on_gpu: bool, cells: int, cfg: LlamaCppConfig,
                version: str | None = None, rs_bytes_per_layer: int = 0) -> dict:
    """What stays in host memory: the mmap'd weights llama.cpp does not offload (token_embd always, the first
    blocks below -ngl, the output layer unless it is offloaded too), the CPU_REPACK copy of those of them the CPU
    backend repacks, and the KV of the blocks kept on the host (all of them with --no-kv-offload). A CPU-only
    build is -ngl 0: everything is here."""
    repack = facts.layer_repack_bytes or (0,) * len(layout.per_layer)
    weights = sum(layout.per_layer[:host_layers]) + layout.embedding
    repacked = sum(repack[:host_layers])
    if not output_on_gpu:  # the output stays on the host; tied to token_embd it is the same mapped tensor, not a copy
        weights += layout.lm_head - (layout.embedding if facts.tie_word_embeddings else 0)
        repacked += facts.output_repack_bytes or 0
    on_host = len(layout.per_layer) if cfg.no_kv_offload else host_layers
    attention, recurrent = layer_kinds(facts)
    type_v = cfg.cache_type_v if cfg.flash_attn or cfg.cache_type_v.lower() not in QUANTISED_CACHE else "f16"
    cell_bytes = cell_bytes_per_layer(facts, version, cfg.cache_type_k, type_v) if any(attention) else 0
    host = {"weights": weights, "cpu_repack": repacked, "kv": int(cell_bytes * sum(attention[:on_host]) * cells)}
    if facts.recurrent_state is not None:  # without offload_kqv llama_memory_recurrent keeps every row on the CPU
        host["recurrent_state"] = rs_bytes_per_layer * sum(recurrent[:on_host])
    return host


def has_fit(version: str | None) -> bool:
    return _since(version, P.LLAMACPP_FIT_SINCE)


def fit_active(setting: str | None, version: str | None) -> bool:
    """Whether llama-server runs llama_params_fit before loading: on by default from
    profiles.LLAMACPP_FIT_SINCE unless --fit off. Raises ValueError for a value common/arg.cpp refuses."""
    if not has_fit(version):
        if setting is not None:
            raise ValueError(f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} has no --fit (it exists "
                             f"from {P.LLAMACPP_FIT_SINCE})")
        return False
    word = "on" if setting is None else setting.strip()  # case-sensitive, as common/arg.cpp compares
    if word not in TRUTHY + FALSEY:  # the words --flash-attn takes, less auto (common/arg.cpp's --fit handler)
        raise ValueError(f"llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} takes --fit on or off "
                         f"({', '.join(TRUTHY)} / {', '.join(FALSEY)})")
    return word in TRUTHY


# where the context an estimate ran at came from (extra["context"]["source"])
CTX_GIVEN, CTX_ENGINE_DEFAULT, CTX_BOOKING, CTX_FIT_SHORTENED = "given", "engine-default", "gpustack-booking", \
    "fit-shortened"
CTX_PER_SLOT = "kv-unified-per-slot"


def slot_cap(cfg: LlamaCppConfig, version: str | None) -> int:
    """--kv-unified-per-slot's N where the build reads it (profiles.LLAMACPP_KV_PER_SLOT_SINCE), else 0."""
    return cfg.slot_cap if cfg.slot_cap > 0 and _since(version, P.LLAMACPP_KV_PER_SLOT_SINCE) else 0


def server_slots(parallel: int | None) -> int:
    """llama-server's slots for -np as gsg holds it: an unset or automatic -np is 4 on the builds that read
    --kv-unified-per-slot (all after automatic slots)."""
    return parallel if parallel and parallel > 0 else P.LLAMACPP_AUTO_PARALLEL


def default_context(facts: ModelFacts, cfg: LlamaCppConfig, version: str | None) -> dict:
    """The context llama-server starts with when -c is not given, as the build reads it
    (profiles.LLAMACPP_DEFAULT_CTX_BY_BUILD): a fixed n_ctx, or 0 = the model's trained context. With one KV stream
    per slot (-np N --no-kv-unified) llama_context splits that total over the slots, while --fit, which resolves an
    unset context first, takes n_ctx_train per stream (common/fit.cpp@0c1e57098: n_ctx_max = hp_nct x n_streams).
    Returns extra["context"]: ctx_size, source, rule, file and why."""
    build = version or P.DEFAULT_VERSIONS["llamacpp"]
    if cfg.unset_ctx is not None:
        return {"ctx_size": cfg.unset_ctx, "source": CTX_BOOKING, "rule": "gguf-parser-ctx-size",
                "file": "GPUStack's scheduler (gguf-parser defaults ctx_size 8192, parallel 4)",
                "why": f"no --ctx-size: GPUStack books {cfg.unset_ctx:,} cells (gguf-parser's default)"}
    cap = slot_cap(cfg, version)
    if cap:  # tools/server/server.cpp sizes the pool before the context is made, so --fit sees it as set
        slots = server_slots(cfg.parallel)
        return {"ctx_size": slots * cap, "source": CTX_PER_SLOT, "rule": "kv-unified-per-slot-pool",
                "file": P.LLAMACPP_KV_PER_SLOT_SOURCE,
                "why": f"no --ctx-size: --kv-unified-per-slot {cap:,} sizes the KV pool to {slots} slots x {cap:,} "
                       f"= {slots * cap:,} cells"}
    row = P.llamacpp_default_ctx(version)
    if row.n_ctx:
        return {"ctx_size": row.n_ctx, "source": CTX_ENGINE_DEFAULT, "rule": row.rule, "file": row.source,
                "why": f"no --ctx-size: llama.cpp {build} starts with its default n_ctx {row.n_ctx:,}"}
    trained = facts.max_position_embeddings
    if not trained:  # a model without a trained length: no engine figure to take, GPUStack's booking instead
        return {"ctx_size": P.GPUSTACK_BOOKING_CTX, "source": CTX_BOOKING, "rule": row.rule, "file": row.source,
                "why": f"no --ctx-size: llama.cpp {build} takes the model's trained context, which gsg does not "
                       f"know here; counted at GPUStack's {P.GPUSTACK_BOOKING_CTX:,}"}
    streams = kv_streams(cfg, version)
    total = trained * streams if cfg.fit and streams > 1 else trained
    per = f" ({streams} streams of {trained:,})" if total != trained else ""
    return {"ctx_size": total, "source": CTX_ENGINE_DEFAULT, "rule": row.rule, "file": row.source,
            "why": f"no --ctx-size: llama.cpp {build} starts with the model's trained context, n_ctx {total:,}{per}"}


def _fits_with_margin(est: Estimate, gpu_totals: list[int], targets: tuple[int, ...]) -> bool:
    """llama_params_fit's test: every device keeps its --fit-target free (one value is broadcast)."""
    devices = est.extra["per_device"]
    return all(dev["total"] + targets[min(i, len(targets) - 1)] <= total
               for i, (dev, total) in enumerate(zip(devices, gpu_totals)))


# --fit's searches (context steps, then offloaded layers) halve their range each step, each step one estimate: 64
# steps cover any range below 2^64, far past the largest possible (a uint32 trained context x 2^31 slots / 256 cells)
FIT_SEARCH_MAX_STEPS = 64


def _largest(low: int, high: int, ok) -> int | None:
    """The largest n in [low, high] with ok(n), for ok true up to some n and false above it; None if ok(low) fails.
    Raises ValueError rather than search past FIT_SEARCH_MAX_STEPS."""
    if low > high or not ok(low):
        return None
    searched = f"{low:,}..{high:,}"
    for _ in range(FIT_SEARCH_MAX_STEPS):
        if low == high:
            return low
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    if low != high:
        raise ValueError(f"--fit: gsg's search of {searched} stops at FIT_SEARCH_MAX_STEPS "
                         f"({FIT_SEARCH_MAX_STEPS}) halvings")
    return low


def _fit_pinned(cfg: LlamaCppConfig, devices: int) -> bool:
    """Whether llama_params_fit may not move weights: -ngl or -ot given, or on several devices a non-zero
    --tensor-split or --split-mode row (common/fit.cpp gives up with "already set by user")."""
    several = devices > 1 and (any(f != 0 for f in cfg.tensor_split or ()) or cfg.split_mode == "row")
    return cfg.layers_given or cfg.tensor_overrides or several


def _what_fit_does(facts: ModelFacts, gpu_totals: list[int], cfg: LlamaCppConfig, version: str | None,
                   ctx: int) -> tuple[dict, Estimate] | None:
    """What llama_params_fit (common/fit.cpp) makes of a spec that does not fit: first a shorter context, down to
    --fit-ctx and in steps of 256 cells per stream, if -c was not given; then fewer offloaded layers at that
    context, unless _fit_pinned. None when it gives up (it then logs "failed to fit params" and loads what was
    asked). On several devices llama.cpp also chooses its own --tensor-split and moves MoE expert tensors before
    whole layers; gsg keeps its split by device totals and whole layers, so it may offload a little less."""
    targets, plain = cfg.fit_target, replace(cfg, fit=False)
    streams = kv_streams(cfg, version)
    align = P.LLAMACPP_FIT_CTX_ALIGN * streams
    floor = cfg.fit_min_ctx * streams

    def at(ctx_size: int, layers: int | None = cfg.gpu_layers) -> Estimate:
        return _estimate(facts, gpu_totals, replace(plain, ctx_size=ctx_size, gpu_layers=layers), version)

    if not cfg.ctx_given and ctx > floor:
        steps = _largest(floor // align, ctx // align, lambda k: _fits_with_margin(at(k * align), gpu_totals, targets))
        if steps is not None:
            return {"action": "context", "ctx_size": steps * align}, at(steps * align)
        ctx = floor  # the context stays at the minimum while the layers are fitted
    if _fit_pinned(cfg, len(gpu_totals)):
        return None
    layers = facts.num_hidden_layers or 0
    offload = _largest(0, layers, lambda n: _fits_with_margin(at(ctx, n), gpu_totals, targets))
    if offload is None:
        return None
    return {"action": "offload", "gpu_layers": offload, "ctx_size": ctx}, at(ctx, offload)


def estimate_llamacpp(facts: ModelFacts, gpu_totals: list[int], cfg: LlamaCppConfig, *,
                      version: str | None) -> Estimate:
    """The estimate for the arguments as given; where they leave a device less than --fit-target free and --fit runs,
    what llama.cpp starts with instead (extra["fit"], a note, and the figures and verdict of the fitted arguments).
    Without a build number the build is profiles.LLAMACPP_NEWEST_MODELLED, and a note says so."""
    est = _with_env_notes(_estimate_as_started(facts, gpu_totals, cfg, version), cfg)
    if parse_version(version) is not None:
        return est
    note = (f"no build given: the newest modelled, {P.DEFAULT_VERSIONS['llamacpp']}, as GPUStack's moving image tag "
            "runs" + (f" (backend_version '{version}' names no build)" if version and version.strip() else ""))
    return replace(est, notes=est.notes + (note,))


def _estimate_as_started(facts: ModelFacts, gpu_totals: list[int], cfg: LlamaCppConfig,
                         version: str | None) -> Estimate:
    if cfg.ctx_size is None:
        context = default_context(facts, cfg, version)
        cfg = replace(cfg, ctx_size=context["ctx_size"])
    else:
        variable = dict(cfg.from_env).get("ctx-size")
        context = {"ctx_size": cfg.ctx_size, "source": CTX_GIVEN, "rule": "ctx-size-given",
                   "file": f"env {variable}" if variable else "--ctx-size",
                   "why": f"ctx {cfg.ctx_size} (env {variable})" if variable else f"--ctx-size {cfg.ctx_size:,}"}
    est = _with_context(_estimate(facts, gpu_totals, cfg, version), context)
    if not cfg.fit or _fits_with_margin(est, gpu_totals, cfg.fit_target):
        return est  # llama_params_fit changes nothing while every device keeps its target free
    ctx = context["ctx_size"]
    fitted = _what_fit_does(facts, gpu_totals, cfg, version, ctx)
    build = version or P.DEFAULT_VERSIONS["llamacpp"]
    if fitted is None:
        pinned = _fit_pinned(cfg, len(gpu_totals))
        why = ("-ngl, -ot, or on several GPUs --tensor-split or --split-mode row, is given, so it may not move "
               "layers" if pinned
               else "no context down to --fit-ctx and no layer count leaves --fit-target free")
        note = f"--fit (llama.cpp {build}) cannot make it fit ({why}): it loads the arguments as given"
        return replace(est, notes=est.notes + (note,), extra={**est.extra, "fit": {"action": "none"}})
    plan, result = fitted
    if plan["ctx_size"] != ctx:
        context = {**context, "source": CTX_FIT_SHORTENED, "ctx_size": plan["ctx_size"], "from": ctx,
                   "why": f"{context['why']}; --fit shortens it to {plan['ctx_size']:,}"}
    result = _with_context(result, context)
    if plan["action"] == "context":
        note = (f"--fit (llama.cpp {build}): the arguments leave less than --fit-target free, so llama.cpp shortens "
                f"the context to {plan['ctx_size']:,} cells (linear interpolation in the engine, to the nearest "
                f"{P.LLAMACPP_FIT_CTX_ALIGN} per stream)")
    else:
        note = (f"--fit (llama.cpp {build}): llama.cpp offloads {plan['gpu_layers']} of "
                f"{facts.num_hidden_layers} layers at {plan['ctx_size']:,} cells and keeps the rest on the CPU")
        if facts.num_experts:
            note += " (it moves expert tensors to the CPU before whole layers, so more stays on the GPU)"
    return replace(result, notes=result.notes + (note,), extra={**result.extra, "fit": plan})


def _with_env_notes(est: Estimate, cfg: LlamaCppConfig) -> Estimate:
    """Where a value came from when the spec's env set it rather than a flag (profiles.LLAMACPP_ENV_ARGS)."""
    if not cfg.from_env:
        return est
    shown = {"ctx-size": "ctx", "gpu-layers": "ngl", "parallel": "parallel", "batch-size": "batch",
             "ubatch-size": "ubatch"}
    values = {"ctx-size": cfg.ctx_size, "gpu-layers": cfg.gpu_layers, "parallel": cfg.parallel,
              "batch-size": cfg.batch_size, "ubatch-size": cfg.ubatch_size}
    parts = [f"{shown[flag]} {values[flag]} (env {variable})" if values.get(flag) is not None
             else f"--{flag} (env {variable})" for flag, variable in cfg.from_env]
    note = "read from the environment, no flag given: " + ", ".join(parts)
    return replace(est, notes=est.notes + (note,), extra={**est.extra, "from_env": dict(cfg.from_env)})


def _with_context(est: Estimate, context: dict) -> Estimate:
    """The estimate says which context it ran at and why; an engine default the spec did not choose is a note."""
    notes = est.notes
    if context["source"] != CTX_GIVEN:
        notes += (f"{context['why']} ({context['file']})",)
    return replace(est, notes=notes, extra={**est.extra, "context": context})


def without_nextn_state(facts: ModelFacts, version: str | None) -> ModelFacts:
    """The facts as the build's target memory sees them: from LLAMACPP_NEXTN_OUTSIDE_CACHES_SINCE a Qwen3.5
    hybrid's trailing MTP blocks hold neither a KV cache nor recurrent rows (their weights still load)."""
    state = facts.recurrent_state
    if state is None or not state.nextn or facts.architecture not in P.LLAMACPP_DELTA_NET_ARCHS \
            or not _since(version, P.LLAMACPP_NEXTN_OUTSIDE_CACHES_SINCE):
        return facts
    trunk = len(state.recurrent) - state.nextn
    head = (False,) * state.nextn
    return replace(facts, recurrent_state=replace(state, recurrent=state.recurrent[:trunk] + head,
                                                  attention=state.attention[:trunk] + head))


def _estimate(facts: ModelFacts, gpu_totals: list[int], cfg: LlamaCppConfig, version: str | None) -> Estimate:
    facts = without_nextn_state(facts, version)
    layout = weight_layout(facts)
    L = facts.num_hidden_layers
    assert L is not None, "engines run on facts whose missing_for_params() is empty"
    assert cfg.ctx_size is not None, "estimate_llamacpp resolves an unset context before sizing"
    ctx = cfg.ctx_size
    parallel = cfg.parallel or 1
    # llama-server's slots when -np is not given: automatic (4) from the build that made it so
    slots = cfg.parallel or (P.LLAMACPP_AUTO_PARALLEL if llamacpp_auto_default(version) else 1)
    batch = cfg.batch_size or P.llamacpp_batch_defaults(version).n_batch
    tokens = reserve_tokens(ctx, cfg.batch_size, cfg.ubatch_size, version)
    offload = L + 1 if cfg.gpu_layers is None else min(cfg.gpu_layers, L + 1)
    full = offload > L
    on_gpu, output_on_gpu = offloaded_blocks(offload, L, version, cfg.output_first)
    notes = []

    type_v = cfg.cache_type_v
    if type_v.lower() in QUANTISED_CACHE and not cfg.flash_attn:
        type_v = "f16"
        notes.append("a quantised V cache needs flash attention: llama.cpp falls back to f16")
    attention, recurrent = layer_kinds(facts)
    any_attention = any(attention)
    cell_bytes: float = 0
    if not cfg.no_kv_offload and any_attention:
        cell_bytes = cell_bytes_per_layer(facts, version, cfg.cache_type_k, type_v)
    rs_rule = P.llamacpp_recurrent_rule(version)
    rs_layer = 0
    if facts.recurrent_state is not None:
        if rs_rule.state_bytes is None:
            raise UnsupportedModel(f"{facts.architecture}: llama.cpp {version or P.DEFAULT_VERSIONS['llamacpp']} "
                                   f"keeps recurrent state in its KV cache ({rs_rule.source}), which gsg has not "
                                   f"modelled before {P.LLAMACPP_RECURRENT_RULES[1].since}, so there is no verdict")
        conv, scan = recurrent_elements(facts)
        # one row per sequence: llama_memory_recurrent's mem_size = max(1, n_seq_max), n_seq_max = the slots
        rs_layer = (conv + scan) * rs_rule.state_bytes * max(1, slots)
        notes.append(f"{sum(recurrent)} recurrent layers keep F32 state for {max(1, slots)} sequences (-np), "
                     f"whatever --cache-type-k/v say: {rs_layer:,} bytes per layer (llama.cpp's RS buffer)")
        if not any_attention:
            notes.append("no attention layers: no KV cache; the compute buffer of the SSM scan is not modelled "
                         "(gsg's feed-forward and logits stages only)")
    pattern = swa_pattern(facts.architecture)
    windowed = bool(facts.sliding_window) and has_swa_cache(version) and pattern is not None
    if facts.sliding_window and not windowed:
        notes.append(f"{facts.architecture}: llama.cpp keeps a full-length cache for every layer (no SWA cache "
                     "for this architecture or build), counted so")
    window_batch = swa_batch(version, batch, micro_batch(batch, cfg.ubatch_size, version))
    if windowed and cfg.swa_full:
        notes.append("--swa-full: the sliding-window layers keep a cache as long as the full one")
    if cfg.flash_attn_auto and not cfg.flash_attn:
        notes.append("--flash-attn auto with the KV cache in host memory (--no-kv-offload): llama.cpp turns it off")
    elif cfg.flash_attn_auto:
        notes.append("--flash-attn auto: counted as on (llama.cpp enables it where the GPU runs it)")

    # llama.cpp reads one proportion per device (missing ones are 0, extra ones unused); all zeros, or none, is
    # its default split by each device's free memory (llama-model.cpp load_tensors)
    given = tuple(cfg.tensor_split or ())[: len(gpu_totals)]
    given += (0.0,) * (len(gpu_totals) - len(given))
    fractions = given if any(f > 0 for f in given) else tuple(float(t) for t in gpu_totals)
    mode = P.llamacpp_split_mode(cfg.split_mode, version)
    shares = _tensor_shares(facts, cfg, mode, len(gpu_totals))
    notes += _tensor_notes(mode, shares)
    # the output layer, when offloaded, is the last slot of the split; the Meta device (--split-mode tensor) holds
    # every offloaded layer: counted on GPU 0 as one device, then cut (devices_at)
    slot_device = _slot_devices(on_gpu + (1 if output_on_gpu else 0), fractions, bool(shares))
    first = L - on_gpu  # the last blocks go to the GPUs, slot j is layer first + j
    device_layers = [[first + j for j in range(on_gpu) if slot_device[j] == i] for i in range(len(gpu_totals))]
    output_device = slot_device[-1] if output_on_gpu else None
    input_device = slot_device[0] if slot_device else None  # the first offloaded block takes the CPU's embeddings

    placement = place_tensors(facts, cfg, device_layers, output_device, layout)
    notes += _placement_notes(cfg, placement)

    streams = kv_streams(cfg, version)
    pad = cell_pad(cfg.flash_attn, version)
    used = sum(1 for i, layers in enumerate(device_layers) if layers or i == output_device)
    copies = pipeline_copies(cfg, used, full, version)
    if copies > 1:
        notes.append(f"pipeline parallelism over {used} devices: llama.cpp keeps {copies} copies of each device's "
                     "graph inputs (hidden state, KQ mask, positions) in its compute buffer")

    def devices_at(ctx_cells: int) -> list[DeviceUsage]:
        cells, stream_cells = context_cells(ctx_cells, streams, cfg.flash_attn, version)
        # --swa-full: llama_kv_cache_iswa sizes the window cache as the full one (src/llama-kv-cache-iswa.cpp,
        # "using full-size SWA cache")
        window_cells = swa_cells(cells, facts.sliding_window or 0, parallel, window_batch, cfg.flash_attn) \
            if windowed and not cfg.swa_full else cells
        # attention reads (and masks) the cache only where the model has attention layers: Mamba has neither
        read_cells = stream_cells if any_attention else 0
        reserve = min(cells, tokens)
        outputs = reserved_outputs(reserve, slots, batch, version)
        out: list[DeviceUsage] = []
        for i, layers in enumerate(device_layers):
            is_output = i == output_device
            weights = sum(layout.per_layer[il] for il in layers) + (placement.device_delta[i] if placement else 0)
            if is_output:
                weights += layout.lm_head or layout.embedding  # tied models use token_embd as output
            kv_layers = [il for il in layers if attention[il]]  # a hybrid's recurrent layers hold no KV
            window = sum(1 for il in kv_layers if windowed and windowed_layer(pattern, il))
            kv = int(cell_bytes * ((len(kv_layers) - window) * cells + window * window_cells))
            rs = 0 if cfg.no_kv_offload else rs_layer * sum(1 for il in layers if recurrent[il])
            # attention reads one stream's cells: a split cache puts n_ubatch / streams tokens on each
            compute = compute_buffer(read_cells, reserve, facts, cfg.flash_attn, is_output, i == input_device,
                                     version, outputs, max(1, slots), any(recurrent[il] for il in layers)) \
                if layers or is_output else 0
            host_weight = placement.host_weight_copy[i] if placement else 0
            if compute and host_weight and reserve >= P.LLAMACPP_OFFLOAD_MIN_BATCH:
                # the op runs here on a copy of the host weight (profiles.LLAMACPP_HOST_WEIGHT_COPY), beside the
                # feed-forward activations: counted at their widest, an upper bound
                ffn = ffn_scratch(read_cells, reserve, facts, cfg.flash_attn, i == input_device, version)
                compute = max(compute, ffn + host_weight)
            if i == 0 and not output_on_gpu and outputs >= P.LLAMACPP_OFFLOAD_MIN_BATCH and \
                    _since(version, P.LLAMACPP_OUTPUT_OFFLOAD_SINCE):
                # the host's output layer runs here on a copy of its weight, beside the logits and the normed rows
                # (profiles.LLAMACPP_OUTPUT_OFFLOAD)
                compute = max(compute, (layout.lm_head or layout.embedding) + output_logits(facts, outputs))
            logits = output_logits(facts, outputs) if is_output else 0
            if compute and copies > 1:  # the sliding-window cache has its own mask where the device has such layers
                masks = ((read_cells, window_cells) if window else (read_cells,)) if any_attention else ()
                inputs = split_inputs(masks, reserve, facts.hidden_size or 0, cfg.flash_attn, version,
                                      input_device=i == input_device)
                # the copies are never freed (profiles.LLAMACPP_COPIES_HELD): the attention and feed-forward stages
                # count one copy already, the logits stage none, so the logits sit on a whole copy
                compute = max(compute, logits + inputs) + (copies - 1) * inputs
            out.append(DeviceUsage(len(layers), weights, kv, compute, logits, cfg.platform_footprint, rs,
                                   len(kv_layers)))
        return _tensor_cut(out, shares, facts, device_layers[0], attention, (windowed, pattern), cell_bytes,
                           (cells, window_cells))

    devices = devices_at(ctx)
    cells = context_cells(ctx, streams, cfg.flash_attn, version)[0]
    slot_ctx = slot_context(ctx, cfg, version)
    notes += _slot_cap_notes(cfg, version, slot_ctx, cells, context_cells(ctx, streams, cfg.flash_attn, version)[1])
    host = host_memory(facts, layout, first, output_on_gpu, cells, cfg, version, rs_layer)
    if placement:
        host = {**host, "weights": host["weights"] + placement.host,
                "cpu_repack": host["cpu_repack"] + placement.host_repack}
    worst = max(range(len(devices)), key=lambda i: devices[i].total - gpu_totals[i])
    usage, total = devices[worst], gpu_totals[worst]
    kv_token = int(cell_bytes) * usage.attention_layers
    verdict = FITS if all(dev.total <= t for dev, t in zip(devices, gpu_totals)) else DOES_NOT_FIT
    estimated_ctx = 0
    if usage.layers:
        fitting = longest_fitting(lambda c: devices_at(c * pad)[worst].total, total, max(ctx, 1 << 24) // pad)
        estimated_ctx = fitting * pad
    compute_per_gpu = tuple(dev.compute for dev in devices)
    form = P.llamacpp_ffn_form(version)
    base = P.term_source("llamacpp", COMPUTE_BUFFER, P.arithmetic_release("llamacpp", version))
    batch_row = P.llamacpp_batch_defaults(version)
    compute_rule = (f"{base.rule}+{form.rule}", f"{base.source}; feed-forward: {form.source}; "
                                               f"reserved tokens: {batch_row.source}")
    if delta_net_scratch(0, 1, facts, cfg.flash_attn, False, version):
        delta_form = P.llamacpp_delta_net_form(version)
        compute_rule = (f"{compute_rule[0]}+{delta_form.rule}", f"{compute_rule[1]}; delta net: {delta_form.source}")
    return Estimate(
        engine="llama.cpp", version=version or f"{P.DEFAULT_VERSIONS['llamacpp']} (assumed)", gpu_total=total,
        gpus=len(gpu_totals), requested=usage.total, weights=usage.weights, activation=usage.compute,
        non_torch=usage.footprint, cuda_graphs=0, kv_cache=usage.kv, kv_available=usage.kv,
        headroom=total - usage.total, headroom_needed=0, footprint=usage.total, kv_bytes_per_token=kv_token,
        block_size=pad,
        kv_capacity_tokens=cells, max_model_len=slot_ctx, estimated_max_model_len=estimated_ctx,
        max_num_seqs=slots, max_concurrency=cells / slot_ctx, verdict=verdict, notes=tuple(notes),
        compute_buffer_per_gpu=compute_per_gpu,
        extra={"offload_layers": on_gpu, "total_layers": L, "full_offload": full, "ctx_size": ctx,
               "output_device": output_device, "host": host,
               "output_weights": (layout.lm_head or layout.embedding) if output_on_gpu else 0,
               "ubatch_size": tokens, "output_buffer": usage.output, "flash_attn": cfg.flash_attn,
               "pipeline_copies": copies, "split_mode": cfg.split_mode,
               "ffn_form": form.rule, "ffn_width": ffn_width(facts, version),
               "term_rules": {COMPUTE_BUFFER: compute_rule},
               "per_device": [{"layers": dev.layers, "total": dev.total, "gpu_total": t, "weights": dev.weights,
                               "kv": dev.kv, "compute": dev.compute}
                              | ({"recurrent_state": dev.rs} if facts.recurrent_state is not None else {})
                              for dev, t in zip(devices, gpu_totals)],
               **_recurrent_extra(facts, rs_rule, rs_layer, max(1, slots), usage.rs),
               **_placement_extra(cfg, placement, version)},
    )


def _tensor_shares(facts: ModelFacts, cfg: LlamaCppConfig, mode: P.LlamaCppSplitMode | None,
                   devices: int) -> tuple[float, ...]:
    """Each GPU's proportion under --split-mode tensor on several GPUs (llamacpp_tensor), () otherwise."""
    if mode is None or mode.kv != "shares" or devices < 2:
        return ()
    if facts.is_mla or facts.recurrent_state is not None:
        raise UnsupportedModel(f"{facts.architecture}: gsg has not modelled --split-mode tensor for MLA or recurrent "
                               "caches (llama.cpp refuses it for DeepSeek-2/3, Mamba and most hybrids: "
                               "llm_arch_supports_sm_tensor), so there is no verdict")
    from gpustack_guard.core.memory.engines import llamacpp_tensor as TS
    return TS.tensor_fractions(cfg.tensor_split, devices)


def _tensor_notes(mode: P.LlamaCppSplitMode | None, shares: tuple[float, ...]) -> list[str]:
    if not shares or mode is None:
        return []
    return [f"--split-mode tensor over {len(shares)} GPUs ({mode.source}): weights by the proportions "
            f"{', '.join(f'{f:g}' for f in shares)}, the KV cache by whole KV heads, a whole compute buffer on each "
            "GPU (gsg's one-device size, an upper bound)"]


def _slot_devices(slots: int, fractions: tuple[float, ...], one_meta_device: bool) -> list[int]:
    return [0] * slots if one_meta_device else split_layers(slots, fractions)


def _tensor_cut(devices: list[DeviceUsage], shares: tuple[float, ...], facts: ModelFacts, layers: list[int],
                attention: tuple[bool, ...], window: tuple[bool, int | None], cell_bytes: float,
                cells: tuple[int, int]) -> list[DeviceUsage]:
    """The devices as llama.cpp holds them: under --split-mode tensor (shares) each GPU's cut of what the one
    device (GPU 0) was counted with; window: (a window cache of its own, the sliding-window pattern)."""
    if not shares:
        return devices
    from gpustack_guard.core.memory.engines import llamacpp_tensor as TS
    windows = [window[0] and windowed_layer(window[1], il) for il in range(len(attention))]
    kv = TS.kv_per_gpu(facts, [il for il in layers if attention[il]], windows, cell_bytes, cells, shares)
    return TS.per_gpu(devices[0], shares, kv)


def _slot_cap_notes(cfg: LlamaCppConfig, version: str | None, slot_ctx: int, cells: int, seq: int) -> list[str]:
    """A note where --kv-unified-per-slot binds: the slot holds fewer tokens than llama_context's n_ctx_seq."""
    cap = slot_cap(cfg, version)
    if not cap or slot_ctx != cap or cap >= seq:
        return []
    return [f"--kv-unified-per-slot {cap:,}: each slot holds at most {cap:,} tokens of the {cells:,}-cell pool "
            "(llama-server's 'capping per-slot context')"]


def _recurrent_extra(facts: ModelFacts, rule: P.LlamaCppRecurrentRule, per_layer: int, sequences: int,
                     on_gpu: int) -> dict:
    """extra["recurrent_state"]: the RS buffer of the binding device and how it was sized (none without state)."""
    if facts.recurrent_state is None:
        return {}
    conv, scan = recurrent_elements(facts)
    attention, recurrent = layer_kinds(facts)
    return {"recurrent_state": {"bytes_per_gpu": on_gpu, "bytes_per_layer": per_layer, "conv_elements": conv,
                                "scan_elements": scan, "dtype": "f32", "sequences": sequences,
                                "recurrent_layers": sum(recurrent), "attention_layers": sum(attention),
                                "rule": rule.rule, "source": rule.source}}


def _placement_notes(cfg: LlamaCppConfig, placement: Placement | None) -> list[str]:
    if not cfg.buft_overrides:
        return []
    if placement is None:
        return ["--override-tensor / --cpu-moe: gsg knows no tensor names of this model (no GGUF header, no routed "
                "experts), so the overrides are not applied: every weight is counted with its layer"]
    if not placement.matched:
        return ["--override-tensor / --cpu-moe: no pattern matches a tensor of this model, so nothing moves"]
    moved_off = -sum(d for d in placement.device_delta if d < 0)
    how = "" if placement.measured else " (gsg's routed-expert bytes, split three ways: no GGUF tensor list)"
    return [f"tensor overrides: {placement.moved} of {placement.matched} matched tensors change buffer, "
            f"{moved_off:,} bytes off the GPUs, {placement.host:,} into host memory{how}; the first pattern "
            "matching a name decides (llama.cpp's loader)"]


def _placement_extra(cfg: LlamaCppConfig, placement: Placement | None, version: str | None) -> dict:
    """extra["tensor_placement"]: the overrides as llama.cpp checks them and where they put the block tensors."""
    if not cfg.buft_overrides:
        return {}
    row = P.llamacpp_expert_pattern(version)
    out: dict = {"overrides": [list(pair) for pair in cfg.buft_overrides], "expert_rule": row.rule,
                 "source": row.source}
    if placement is not None:
        out |= {"matched": placement.matched, "moved": placement.moved, "device_delta": list(placement.device_delta),
                "host": placement.host, "host_repack": placement.host_repack,
                "host_weight_copy": list(placement.host_weight_copy), "measured": placement.measured,
                "copy_rule": P.LLAMACPP_HOST_WEIGHT_COPY}
    return {"tensor_placement": out}
