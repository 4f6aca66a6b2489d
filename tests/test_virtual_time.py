"""tests/support/virtual_time: asyncio sleeps advance the virtual clock by exactly their length, and never wait."""

import asyncio
import time

import pytest
from support.virtual_time import VirtualClock, run


def test_sleeps_advance_the_clock_exactly_and_take_no_real_time(monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: pytest.fail(f"time.sleep({s}) on the virtual loop"))
    clock = VirtualClock()
    seen = []

    async def main():
        loop = asyncio.get_running_loop()
        for delay in (2.0, 0.5, 3600.0):
            await asyncio.sleep(delay)
            seen.append((clock(), loop.time()))
        await asyncio.gather(asyncio.sleep(10.0), asyncio.sleep(4.0))  # concurrent: the longer one, not the sum
        return clock()

    started = time.monotonic()
    assert run(main(), clock) == 3612.5
    assert seen == [(2.0, 2.0), (2.5, 2.5), (3602.5, 3602.5)]
    assert time.monotonic() - started < 1.0  # an hour of virtual sleeps, not waited out


def test_nothing_ready_and_no_timer_is_a_deadlock_not_a_hang():
    async def main():
        await asyncio.get_running_loop().create_future()  # never resolved

    with pytest.raises(RuntimeError, match="deadlock"):
        run(main(), VirtualClock())
