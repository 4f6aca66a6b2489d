"""The LoRA adapter slots vLLM and SGLang preallocate on each GPU (docs/memory-arithmetic.md, "LoRA adapters").

Under --enable-lora both engines allocate, once at start-up and before they size the KV cache, an A tensor
(rank x input) and a B tensor (output x rank) per adapter slot, target module and layer, at the largest rank they
accept. vLLM makes --max-loras slots while it loads the model (inside "Model loading took": the profile counts
them, the KV cache is what is left); SGLang makes --max-loras-per-batch slots in its LoRA memory pool right after
the weights, and profile_max_num_token measures free memory after it: its KV pool shrinks by as much. Which
modules, the embedding and LM-head slots and their vocabulary rows change by release (profiles.VLLM_LORA_ROWS,
profiles.SGLANG_LORA_ROWS). Adapters themselves are kept in host memory (vLLM --max-cpu-loras, SGLang
--max-loaded-loras) and copied into a slot when a batch needs them: they take no GPU memory of their own.
"""

from __future__ import annotations

import math

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.values import frozen_value

# The modules both engines wrap in a dense decoder layer, by the packed name they stack slices under
LINEAR = ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")
VOCAB = ("embed_tokens", "lm_head")
# a checkpoint's own projection names -> the packed module whose slots they share (SGLang
# get_normalized_target_modules; vLLM is_in_target_modules through the model's packed_modules_mapping)
PACKED = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj", "gate_proj": "gate_up_proj",
          "up_proj": "gate_up_proj"}
ALL = "all"
VOCAB_PADDING = 64  # VocabParallelEmbedding's default padding (SGLang lm_head shards: pad_vocab_size)


@frozen_value  # identity equality: cheaper to define, never compared
class LoraRequest:
    """What a deployment asks for: `slots` adapters resident on the GPU at `rank` (None: inferred by the engine
    from the adapters, which gsg does not read), the modules named (None: the engine's default set)."""

    __repr__ = fields_repr

    slots: int
    rank: int | None
    targets: frozenset[str] | None = None
    dtype: str | None = None  # vLLM --lora-dtype; None or auto: the dtype the model is served in
    fully_sharded: bool = False  # vLLM --fully-sharded-loras
    backend: str | None = None  # SGLang --lora-backend
    specialize_active: bool = False  # vLLM --specialize-active-lora: graphs per active-adapter count


def element_bytes(dtype: str | None) -> int:
    """Bytes of one slot element: the served 16-bit dtype, or four for a float32 model."""
    return 4 if (dtype or "").strip().lower() in ("float32", "float") else P.LORA_ELEMENT_BYTES


def _slot_dtype(request: LoraRequest, facts: ModelFacts) -> str | None:
    chosen = (request.dtype or "auto").strip().lower()
    return facts.dtype if chosen == "auto" else chosen


@frozen_value
class LoraSlots:
    """The slots' bytes on the heaviest rank, what they cover and what gsg left out (each a note)."""

    __repr__ = fields_repr

    bytes: int
    linear_bytes: int
    vocab_bytes: int
    modules: tuple[str, ...]
    source: str
    unread: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"bytes": self.bytes, "linear_bytes": self.linear_bytes, "vocab_bytes": self.vocab_bytes,
                "modules": list(self.modules), "source": self.source, "unread": list(self.unread)}


def target_names(text: str | None) -> frozenset[str] | None:
    """--lora-target-modules as the engine reads it: names split on spaces or commas, the packed ones folded
    into the module they share (q_proj -> qkv_proj); None when the flag is not given."""
    if text is None or not str(text).strip():
        return None
    # a list as the flag takes it (`a b`, `a,b`) or as a log prints the parsed value (['a', 'b'], {'a', 'b'})
    names = str(text).translate(str.maketrans(",[]{}'\"", "       ")).split()
    return frozenset(PACKED.get(name, name) for name in names) or None


def _rank_split(value: int, tp: int) -> int:
    return math.ceil(value / tp)


def linear_per_layer(facts: ModelFacts, tp: int, rank: int, modules: frozenset[str], fully_sharded: bool) -> int:
    """Elements of one slot's A and B over one dense layer's wrapped linears. Column-parallel modules (qkv,
    gate_up) keep A whole (rank x hidden per slice) and split B's output over TP; row-parallel ones (o, down)
    split A's input and keep B whole; vLLM's --fully-sharded-loras splits the whole sides too."""
    from gpustack_guard.core.memory.kv import kv_heads_per_gpu

    hidden, heads, head = facts.hidden_size or 0, facts.num_attention_heads or 0, facts.dim_head or 0
    whole = tp if fully_sharded else 1
    inter = _rank_split(facts.intermediate_size or 0, tp)
    attention_out = _rank_split(heads * head, tp)
    total = 0
    if "qkv_proj" in modules:
        total += 3 * rank * _rank_split(hidden, whole) + rank * (attention_out + 2 * kv_heads_per_gpu(facts, tp) * head)
    if "o_proj" in modules:
        total += rank * attention_out + rank * _rank_split(hidden, whole)
    slices = 2 if facts.gated_mlp else 1  # gate and up stacked; a plain MLP's up alone
    if "gate_up_proj" in modules:
        total += slices * rank * _rank_split(hidden, whole) + rank * slices * inter
    if "down_proj" in modules:
        total += rank * inter + rank * _rank_split(hidden, whole)
    return total


def _unmodelled_layers(facts: ModelFacts) -> str | None:
    """The layer kinds whose LoRA slots gsg has not read, named for a note."""
    kinds = [name for name, on in (("MLA attention", facts.is_mla), ("MoE experts", facts.is_moe),
                                   ("linear-attention layers", bool(facts.linear_attention_layers)),
                                   ("recurrent layers", bool(facts.recurrent_layers))) if on]
    return " and ".join(kinds) or None


def vllm_slots(facts: ModelFacts, request: LoraRequest, tp: int, stage_layers: list[int],
               version: str | None) -> list[LoraSlots]:
    """Per pipeline stage: vLLM's slots (lora/layers/*.py create_lora_weights). Every linear of the model is
    wrapped unless --lora-target-modules narrows it (0.34 row); the embedding and the LM head when the model
    class declares embedding_modules, with the extra-vocabulary rows of releases up to 0.11."""
    row = P.vllm_lora_row(version)
    rank, n = request.rank or P.DEFAULT_MAX_LORA_RANK, request.slots
    unread: list[str] = []
    chosen = frozenset(LINEAR) | frozenset(VOCAB)
    if request.targets is not None:
        if row.target_flag:
            chosen = request.targets
        else:
            unread.append(f"--lora-target-modules is not read at vLLM {P.arithmetic_version('vllm', version)} "
                          f"(read from {P.VLLM_LORA_TARGETS_SINCE}): every module booked")
    other = sorted(chosen - set(LINEAR) - set(VOCAB))
    if other:
        unread.append(f"target module(s) {', '.join(other)} not modelled: not booked")
    skipped = _unmodelled_layers(facts)
    linear = frozenset(chosen) & frozenset(LINEAR)
    if facts.is_mla or facts.linear_attention_layers or facts.recurrent_layers:  # other names and shapes
        linear -= {"qkv_proj", "o_proj"}
    if facts.is_moe:  # the experts' slots (0.34's FusedMoE wrapper) are not read; dense layers' MLPs are
        linear -= {"gate_up_proj", "down_proj"}
    if skipped:
        unread.append(f"{skipped} not counted")
    per_layer = linear_per_layer(facts, tp, rank, linear, request.fully_sharded) if facts.hidden_size else 0
    vocab = frozenset(chosen) & frozenset(VOCAB) if facts.architecture in row.vocab_architectures else frozenset()
    if facts.architecture in row.vocab_unread_architectures and chosen & frozenset(VOCAB):
        unread.append(f"whether {facts.architecture} declares embedding LoRA modules at this release is not read "
                      f"(it does at {P.VLLM_LORA_VOCAB_READ[-1]}): its embedding and LM-head slots are not booked")
    V, hidden, extra = facts.vocab_size or 0, facts.hidden_size or 0, row.extra_vocab
    size, model_size = element_bytes(_slot_dtype(request, facts)), element_bytes(facts.dtype)
    # the extra-vocabulary rows (up to 0.11) are kept in the model's dtype, the slots in --lora-dtype's
    embed = n * (rank * (V + extra) + hidden * rank) * size + n * extra * hidden * model_size
    logits_rows = math.ceil((V + extra) / row.logits_padding) * row.logits_padding
    head = n * (rank * hidden + logits_rows * rank) * size + n * extra * hidden * model_size
    out = []
    last = len(stage_layers) - 1
    for stage, layers in enumerate(stage_layers):
        linear_bytes = n * layers * per_layer * size
        vocab_bytes = (embed if "embed_tokens" in vocab and stage == 0 else 0) \
            + (head if "lm_head" in vocab and stage == last else 0)
        out.append(LoraSlots(linear_bytes + vocab_bytes, linear_bytes, vocab_bytes,
                             tuple(sorted(linear | vocab)), row.source, tuple(unread)))
    return out


def sglang_slots(facts: ModelFacts, request: LoraRequest, tp: int, pp: int, version: str | None) -> LoraSlots:
    """SGLang's LoRA memory pool (lora/mem_pool.py init_buffers): max_loras_per_batch slots of every target
    module over all layers, plus the embedding and LM-head buffers when targeted."""
    row = P.sglang_lora_row(version)
    release = P.arithmetic_version("sglang", version)
    if not row.modelled:
        return LoraSlots(0, 0, 0, (), row.source, (f"SGLang {release}'s LoRA pool is not read: not booked",))
    if request.rank is None:
        return LoraSlots(0, 0, 0, (), row.source, (
            "SGLang infers --max-lora-rank from the adapters, which gsg does not read: the LoRA pool is not "
            "booked (give --max-lora-rank and --lora-target-modules)",))
    unread: list[str] = []
    if request.targets is None:
        chosen = frozenset(LINEAR)
        unread.append("--lora-target-modules not given (SGLang infers them from the adapters): every linear "
                      "projection assumed")
    elif ALL in request.targets:
        chosen = row.all_targets
        if row.vocab_dropped_by and (request.backend or P.SGLANG_LORA_DEFAULT_BACKEND) == row.vocab_dropped_by:
            chosen = chosen - frozenset(VOCAB)
    else:
        chosen = request.targets
    other = sorted(chosen - set(LINEAR) - set(VOCAB))
    if other:
        unread.append(f"target module(s) {', '.join(other)} not modelled: not booked")
    if not row.vocab_modules and chosen & set(VOCAB):
        unread.append(f"SGLang {release} has no embedding or LM-head LoRA buffers: not booked")
        chosen = chosen - frozenset(VOCAB)
    skipped = _unmodelled_layers(facts)
    if skipped or pp > 1 or not facts.gated_mlp:
        why = skipped or ("pipeline stages" if pp > 1 else "a plain (ungated) MLP")
        return LoraSlots(0, 0, 0, (), row.source, (*unread, f"SGLang's LoRA pool for {why} is not read: not "
                                                              "booked (the KV pool is over-estimated)"))
    kv = facts.kv_heads or 0
    linear = chosen & frozenset(LINEAR)
    if "qkv_proj" in linear and tp > 1 and kv % tp:  # replicated KV heads: the B split differs by release
        return LoraSlots(0, 0, 0, (), row.source, (*unread, f"SGLang's qkv_proj LoRA buffer with {kv} KV heads "
                                                              f"over TP {tp} is not read: not booked"))
    n, rank, layers = request.slots, request.rank, facts.num_hidden_layers or 0
    size = element_bytes(facts.dtype)  # the pool is allocated in the model's dtype
    linear_bytes = n * layers * linear_per_layer(facts, tp, rank, linear, False) * size
    V, hidden = facts.vocab_size or 0, facts.hidden_size or 0
    vocab_bytes = 0
    if "embed_tokens" in chosen:  # A (rank x vocab) and B (hidden x rank), both whole on every rank
        vocab_bytes += n * rank * (V + hidden) * size
    if "lm_head" in chosen:  # A (rank x hidden) whole; B (vocab x rank), its rows per rank from 0.5.10
        rows = V if tp == 1 or not row.lm_head_sharded else \
            min(V, math.ceil(V / VOCAB_PADDING) * VOCAB_PADDING // tp)
        vocab_bytes += n * rank * (hidden + rows) * size
    if chosen & set(VOCAB):
        unread.append("tokens the adapters add to the vocabulary are not read (none assumed)")
    return LoraSlots(linear_bytes + vocab_bytes, linear_bytes, vocab_bytes,
                     tuple(sorted(linear | (chosen & set(VOCAB)))), row.source, tuple(unread))
