"""`gsg advise --observed FILE`: the KV pool an engine really allocated, held against gsg's estimate of the same run.

A verify report (`gsg verify --log FILE -o json`) or a recorded vector carries both figures for one start-up: the
tokens the engine logged and the tokens gsg estimated for the logged arguments. Their ratio is how far the estimate
is off for this engine, model and configuration, so candidates of the same configuration (tensor-parallel width and
KV cache dtype: what the per-GPU bytes per token and the overheads depend on) get their pool scaled by it.

Only downwards: a pool the engine makes larger than gsg's estimate is said, not used. The emitted specs are judged by
`gsg validate`, which prices them by its own estimate; more sequences than that would warn GSG033 against them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpustack_guard.core import args as A
from gpustack_guard.core.advise.candidates import BACKEND_NAME, FAMILY, Judged
from gpustack_guard.core.values import frozen_value

# each engine's KV cache dtype when no flag sets one (sizing.FULL_PRECISION_KV is this table)
DEFAULT_KV_DTYPE = {"vllm": "auto", "sglang": "auto", "llamacpp": "f16"}
KV_DTYPE_FLAG = {"vllm": "kv-cache-dtype", "sglang": "kv-cache-dtype", "llamacpp": "cache-type-k"}


class ObservedError(ValueError):
    """A file whose observation cannot scale this advice: one line, said against the file."""


@frozen_value(eq=True, repr=True)
class ObservedPool:
    source: str  # the file as given
    kind: str  # "verify report" | "recorded vector"
    family: str  # vllm | sglang | llamacpp
    model: str | None  # as the file names it (None: the log did not print it)
    observed_tokens: int
    estimated_tokens: int  # gsg's estimate of the same logged run
    tensor_parallel: int
    kv_dtype: str

    @property
    def scale(self) -> float:
        return self.observed_tokens / self.estimated_tokens

    @property
    def lowers(self) -> bool:
        """Whether the pool is scaled at all: only an engine that allocated less than estimated changes advice."""
        return self.observed_tokens < self.estimated_tokens

    def matches(self, family: str, tensor_parallel: int, kv_dtype: str) -> bool:
        return (family, tensor_parallel, kv_dtype.lower()) == (self.family, self.tensor_parallel, self.kv_dtype)

    def configuration(self) -> str:
        return f"{BACKEND_NAME[self.family]}, tensor parallel {self.tensor_parallel}, KV {self.kv_dtype}"

    def summary(self) -> str:
        """The observation and what advise does with it, in one line."""
        head = (f"the engine allocated {self.observed_tokens:,} KV tokens where gsg estimated "
                f"{self.estimated_tokens:,} ({self.kind} {self.source}: {self.configuration()})")
        if self.lowers:
            return f"{head}: pools of that configuration scaled by {self.scale:.3f}"
        return (f"{head}: not used to raise any pool (validate prices the emitted specs by its own estimate; the "
                "extra is headroom)")

    def as_json(self) -> dict:
        return {"file": self.source, "kind": self.kind, "backend": BACKEND_NAME[self.family], "model": self.model,
                "observed_kv_capacity_tokens": self.observed_tokens,
                "estimated_kv_capacity_tokens": self.estimated_tokens, "scale": round(self.scale, 4),
                "applied": self.lowers, "tensor_parallel_size": self.tensor_parallel, "kv_cache_dtype": self.kv_dtype}


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def read_observed(document: dict, source: str, observed_tokens: int, kind: str) -> ObservedPool:
    """The observation in a verify report or vector (its observed tokens already read); ObservedError says why a
    file cannot scale advice."""
    engine = document.get("engine")
    family = FAMILY.get(engine.lower()) if isinstance(engine, str) else None
    if family is None:
        raise ObservedError(f"names no engine gsg advises (engine {engine!r})")
    estimated = document.get("estimated")
    tokens = _positive_int(estimated.get("kv_capacity_tokens")) if isinstance(estimated, dict) else None
    if tokens is None:
        raise ObservedError("holds no estimated kv_capacity_tokens to hold the engine's pool against (gsg could not "
                            "estimate the logged run: see its reasons)")
    raw = document.get("backend_args")
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        raise ObservedError("'backend_args' must be a list of strings")
    try:
        flags = A.as_dict(A.parse(list(raw), family), family)
        tensor_parallel = A.parallel_size(flags, family)[0] if family != "llamacpp" else 1
    except (A.ArgError, ValueError) as exc:
        raise ObservedError(f"backend_args cannot be read: {exc}") from None
    kv_dtype = (flags.get(KV_DTYPE_FLAG[family]) or DEFAULT_KV_DTYPE[family]).lower()
    model = document.get("model_resolved_as") or document.get("model")
    return ObservedPool(source, kind, family, model if isinstance(model, str) else None, observed_tokens, tokens,
                        tensor_parallel, kv_dtype)


def same_model(pool: ObservedPool, model: str) -> bool:
    """The file's model is the advised one (case-insensitive repo ids); a log that named none is taken at its word."""
    return pool.model is None or pool.model.strip("/").lower() == model.strip("/").lower()


def scaled(judged: Judged, pool: ObservedPool | None, family: str, tensor_parallel: int, kv_dtype: str) -> Judged:
    """The candidate with its KV pool scaled by the observation when it is of the observed configuration."""
    est = judged.estimate
    if pool is None or est is None or not pool.lowers or not pool.matches(family, tensor_parallel, kv_dtype):
        return judged
    factor = pool.scale
    fewer = replace(est, kv_capacity_tokens=int(est.kv_capacity_tokens * factor), kv_cache=int(est.kv_cache * factor),
                    max_concurrency=round(est.max_concurrency * factor, 2))
    return replace(judged, estimate=fewer, observed_scale=factor, estimated_kv_tokens=est.kv_capacity_tokens)
