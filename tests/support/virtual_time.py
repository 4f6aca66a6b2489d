"""An asyncio event loop on a virtual clock: when nothing is ready, time jumps to the next timer instead of
being waited out. For code whose only waits are asyncio sleeps and timers and whose I/O is in-process (the
soak matrix over httpx transports): a 2 s round costs its CPU, not 2 s. Sockets still work (polled without
blocking), but a loop with nothing ready and no timer is a deadlock, and raises."""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualClock:
    """Seconds since the loop started, advanced only by the loop; pass it as the code's clock too."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Selector(selectors.DefaultSelector):
    def __init__(self, clock: VirtualClock):
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None):
        ready = super().select(0)
        if not ready:
            if timeout is None:
                raise RuntimeError("virtual-time loop: nothing ready and no timer (a deadlock)")
            self.clock.now += timeout  # the next timer is due now
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock):
        self.clock = clock
        super().__init__(_Selector(clock))

    def time(self) -> float:
        return self.clock.now


def run(main: Coroutine[Any, Any, T], clock: VirtualClock) -> T:
    """asyncio.run(main) on a virtual-time loop reading `clock`."""
    loop = VirtualTimeLoop(clock)
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
