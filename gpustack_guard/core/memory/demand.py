"""KV demand of declared traffic: the one rule GSG033 (validate, estimate) and gsg advise size sequences by.

A deployment's traffic is one or more streams of requests, each with a KV length per request (p99 prompt +
longest output) and, when declared, how many are in flight at its peak. The engine admits `seats` sequences
(--max-num-seqs / --max-running-requests); the worst case those seats can hold is the longest requests first,
each stream up to its own peak. One stream without a peak is the classic check: seats x its length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    from gpustack_guard.core.spec.model import Workload as GuardWorkload


@frozen_value(eq=True)
class Stream:
    """Requests of one kind: KV tokens each holds at its longest, and how many run at once at peak."""

    __repr__ = fields_repr

    name: str
    tokens: int
    in_flight: int | None = None  # None: as many as the engine admits


def declared(workload: GuardWorkload) -> bool:
    """Whether guard.workload names any traffic; without it the one stream is max_model_len-long sequences."""
    return bool(workload.mix or workload.prompt_tokens_p99 or workload.max_output_tokens)


def full_length_capacity(tokens: int, concurrency: float | None, max_model_len: int) -> int:
    """KV tokens that max_model_len-long sequences can hold at once: the engine's max concurrency x max_model_len
    where that is more than the pool's token count. Equal (less block rounding) for a model whose layers all cache
    every token; more for hybrid ones (sliding-window groups, Gated DeltaNet state pages), whose token count divides
    the blocks over every group while a long sequence fills only the full-attention group's pages. For sequences of
    max_model_len only: shorter declared traffic keeps the token count (short sequences fill the window groups)."""
    if not concurrency or concurrency != concurrency or concurrency <= 0:  # absent, NaN or not positive
        return tokens
    return max(tokens, int(concurrency * max_model_len))


def streams_of(workload: GuardWorkload, max_model_len: int) -> tuple[tuple[Stream, ...], str]:
    """The streams a spec's guard.workload declares, and how the rule's message names them."""
    if workload.mix:
        streams = tuple(Stream(s.name, s.prompt_tokens_p99 + s.max_output_tokens, s.concurrency)
                        for s in workload.mix)
        return streams, "workload mix at p99, longest first: " + " + ".join(
            f"{s.in_flight} x {s.tokens:,} ({s.name})" for s in _longest_first(streams))
    if workload.prompt_tokens_p99 or workload.max_output_tokens:
        per_seq = (workload.prompt_tokens_p99 or 0) + (workload.max_output_tokens or 0)
        return (Stream("workload", per_seq),), f"workload p99 prompt + output = {per_seq:,}"
    return (Stream("max_model_len", max_model_len),), f"max_model_len {max_model_len:,}"


def _longest_first(streams: Iterable[Stream]) -> list[Stream]:
    return sorted(streams, key=lambda s: -s.tokens)


def peak_kv_tokens(streams: Iterable[Stream], seats: int) -> int:
    """KV tokens `seats` admitted sequences need at worst: the longest requests first, each stream up to its peak.
    Seats beyond every declared peak stay empty (the traffic never sends more)."""
    needed, left = 0, seats
    for stream in _longest_first(streams):
        if left <= 0:
            break
        taken = left if stream.in_flight is None else min(left, stream.in_flight)
        needed += taken * stream.tokens
        left -= taken
    return needed


def seats_fitting(streams: Iterable[Stream], capacity: int, most: int) -> int:
    """The most seats (up to `most`) whose worst case (`peak_kv_tokens`) fits in `capacity` KV tokens."""
    fitting, used = 0, 0
    for stream in _longest_first(streams):
        wanted = most - fitting if stream.in_flight is None else min(stream.in_flight, most - fitting)
        room = max(capacity - used, 0) // max(stream.tokens, 1)
        if room < wanted:  # one more seat would hold another request of this (longer) stream
            return fitting + room
        fitting, used = fitting + wanted, used + wanted * stream.tokens
        if fitting >= most:
            break
    return most  # every declared peak fits: seats beyond them stay empty


def declared_peak(streams: Iterable[Stream]) -> int | None:
    """Requests in flight when every stream is at its peak (None when one has no declared peak)."""
    peaks = [s.in_flight for s in streams]
    return None if any(p is None for p in peaks) else sum(p for p in peaks if p is not None)
