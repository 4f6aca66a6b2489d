"""The flags each engine spells a tuning knob with, for hints and advice: a hint must name a flag the user's engine
takes (SGLang refuses `--kv-cache-dtype fp8`; llama.cpp has no `--max-num-seqs`).

Sources (read for the names, not copied): vLLM vllm/engine/arg_utils.py (--max-num-seqs, --kv-cache-dtype fp8);
SGLang python/sglang/srt/server_args.py (--max-running-requests; --kv-cache-dtype choices auto, fp8_e5m2, fp8_e4m3);
llama.cpp common/arg.cpp (--parallel slots; --cache-type-k/-v q8_0, a quantised V cache needing flash attention).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Knobs:
    """One engine's spelling of the tuning knobs that hints and the advisor name."""

    __repr__ = fields_repr

    engine: str  # as the metrics and GPUStack name it
    max_running: str  # how many requests run at once; the rest queue
    compact_kv: tuple[str, ...]  # the arguments that store the KV cache in 8 bits
    compact_kv_effect: str  # what that does to the pool, in a clause

    def compact_kv_args(self) -> str:
        return " ".join(self.compact_kv)


KNOBS = {
    "vllm": Knobs("vLLM", "--max-num-seqs", ("--kv-cache-dtype fp8",),
                  "fp8 halves the bytes per token, doubling what fits"),
    "sglang": Knobs("SGLang", "--max-running-requests", ("--kv-cache-dtype fp8_e5m2",),
                    "fp8_e5m2 halves the bytes per token, doubling what fits"),
    # a quantised V cache needs flash attention: the three go together
    "llamacpp": Knobs("llama.cpp", "--parallel", ("--cache-type-k q8_0", "--cache-type-v q8_0", "--flash-attn on"),
                      "q8_0 stores 32 values in 34 bytes instead of 64, nearly doubling what fits"),
}
FAMILY_OF_ENGINE = {knobs.engine: family for family, knobs in KNOBS.items()}


def family_of(engines: Iterable[str]) -> str | None:
    """The one engine family among the engine names whose metrics were seen (GPUStack's exporter names none);
    None when there is none or more than one."""
    families = {FAMILY_OF_ENGINE[e] for e in engines if e in FAMILY_OF_ENGINE}
    return families.pop() if len(families) == 1 else None
