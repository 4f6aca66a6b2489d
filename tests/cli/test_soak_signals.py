"""gsg soak stops on SIGINT/SIGTERM at the soak's next await (a task cancellation), never by an exception
raised inside whatever runs when the signal arrives: one landing in a finalizer was lost ("Exception ignored")."""

import asyncio
import gc
import os
import signal

import pytest

from gpustack_guard.commands.soak import _until_interrupted


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_cancels_the_work_and_ends_as_keyboard_interrupt(number):
    events = []

    class Finalised:
        def __del__(self):
            events.append("finalizer ran")

    async def work():
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, os.kill, os.getpid(), number)
        try:
            for _ in range(100):
                Finalised()  # finalizers keep running while the signal arrives
                gc.collect()
                await asyncio.sleep(0.01)
        finally:
            events.append("cleaned up")

    before = signal.getsignal(number)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(_until_interrupted(work()))
    assert events[-1] == "cleaned up" and "finalizer ran" in events
    assert signal.getsignal(number) is before  # the handlers main() installed are back for the report


def test_without_a_signal_the_work_just_finishes():
    async def work():
        await asyncio.sleep(0)
        return 7

    assert asyncio.run(_until_interrupted(work())) is None
