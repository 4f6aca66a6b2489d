"""PyTorch's CUDA caching allocator, as far as a profile run's reserved memory needs it.

Where an engine measures its profile by the device's free memory (vLLM V0 0.2.5-0.6.3: profiles.
VLLM_V0_PROFILE_MEASURES), what it subtracts is the memory torch has reserved, not the most it had allocated at once:
a freed block stays cached in its segment, and a later request that no cached block can hold takes a new segment.
This replays a sequence of allocations and frees under the allocator's rules for large blocks
(c10/cuda/CUDACachingAllocator.cpp, profiles.ALLOC_*): the smallest free block that fits is taken (best fit), split
when more than ALLOC_SMALL_MAX would remain, and freed neighbours in a segment merge again; a request nothing holds
takes a segment of ALLOC_MID_SEGMENT under ALLOC_MID_MAX, else its size rounded up to ALLOC_LARGE_ROUND. Requests of
at most ALLOC_SMALL_MAX come from the small pool, whose 2 MiB segments are left out here.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack_guard.core.memory import profiles as P

ALLOC_ROUND = 512  # every request is rounded up to 512 B (round_size)


@dataclass
class _Block:
    size: int
    free: bool = True


class CachingAllocator:
    """Segments and blocks of the large pool; `reserved` is what mem_get_info sees torch holding."""

    def __init__(self) -> None:
        self.segments: list[list[_Block]] = []
        self.live: dict[str, _Block] = {}

    @property
    def reserved(self) -> int:
        return sum(block.size for segment in self.segments for block in segment)

    def malloc(self, name: str, size: int) -> None:
        size = -(-size // ALLOC_ROUND) * ALLOC_ROUND
        if size <= P.ALLOC_SMALL_MAX:
            return
        fits = [(block.size, s, i) for s, segment in enumerate(self.segments) for i, block in enumerate(segment)
                if block.free and block.size >= size]
        if fits:
            _, s, i = min(fits)
        else:
            span = P.ALLOC_MID_SEGMENT if size < P.ALLOC_MID_MAX else -(-size // P.ALLOC_LARGE_ROUND) * \
                P.ALLOC_LARGE_ROUND
            self.segments.append([_Block(span)])
            s, i = len(self.segments) - 1, 0
        segment = self.segments[s]
        block = segment[i]
        if block.size - size > P.ALLOC_SMALL_MAX:
            segment.insert(i + 1, _Block(block.size - size))
            block.size = size
        block.free = False
        self.live[name] = block

    def free(self, name: str) -> None:
        block = self.live.pop(name, None)
        if block is None:
            return
        block.free = True
        for segment in self.segments:
            if any(b is block for b in segment):
                merged: list[_Block] = []
                for b in segment:
                    if merged and merged[-1].free and b.free:
                        merged[-1].size += b.size
                    else:
                        merged.append(b)
                segment[:] = merged
                return


def reserved_after(held: tuple[int, ...], freed: tuple[int, ...], events: tuple[tuple[str, str, int], ...]) -> int:
    """Bytes reserved after `events` (("alloc", name, bytes) or ("free", name, 0)) run on an allocator whose cached
    segments are one per tensor of `held` (still allocated) and `freed` (cached, free): each earlier tensor's own
    segment, as a forward's intermediates of more than ALLOC_MID_MAX leave them."""
    allocator = CachingAllocator()
    for n, size in enumerate(held + freed):
        allocator.malloc(f"earlier-{n}", size)
    for n in range(len(held), len(held) + len(freed)):
        allocator.free(f"earlier-{n}")
    for kind, name, size in events:
        if kind == "alloc":
            allocator.malloc(name, size)
        else:
            allocator.free(name)
    return allocator.reserved
