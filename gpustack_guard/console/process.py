"""What every gsg run does around its command, without typer: the collector, safe streams, SIGINT/SIGTERM as a
clean interrupt, one line for any error, and the exit without interpreter teardown. The typer command line
(cli.py) and the typer-free validate path (quick_validate.py) both run their command through here."""

from __future__ import annotations

import os
import sys
from typing import Callable

from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, GsgError


def run_guarded(command: Callable[[], object]) -> int:
    """Run one command and return its exit code: an int result as it is (anything else is 0); a GsgError, an
    interrupt or a bug becomes one line on stderr and its exit code, never a traceback (GSG_DEBUG=1 prints one
    for a bug)."""
    from gpustack_guard.wiring import tune_collector

    tune_collector()
    from gpustack_guard.adapters.files.output import err, interrupt_told, new_run, safe_streams
    from gpustack_guard.core.echo import escape, untrusted

    safe_streams()
    new_run()
    signals = _Interrupts()
    signals.install()
    try:
        result = command()
        if signals.caught and result == EXIT_INTERRUPTED and not interrupt_told():
            err("gsg: interrupted")  # typer turned the KeyboardInterrupt into a silent 130
        return result if isinstance(result, int) else EXIT_OK
    except GsgError as exc:  # one line, whatever a server's text in it holds (newlines are written as \n)
        err(f"gsg: error: {escape(str(exc))}")
        return EXIT_FAIL
    except KeyboardInterrupt:
        err("gsg: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: one line, no traceback unless asked for
        import traceback

        if os.environ.get("GSG_DEBUG"):
            traceback.print_exc()
        err(f"gsg: internal error: {type(exc).__name__}: {untrusted(str(exc))} (set GSG_DEBUG=1 for a traceback; "
            "please report)")
        return EXIT_INTERNAL
    finally:
        signals.restore()


class _Interrupts:
    """SIGTERM (CI cancelling a job, `kill`) takes the same clean path as Ctrl-C: a KeyboardInterrupt, so files
    are written whole or not at all (apply installs its own handlers, which stop new work first)."""

    def __init__(self) -> None:
        self.caught: str | None = None
        self._previous: dict = {}

    def install(self) -> None:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():  # only the main thread may
            self._previous = {s: signal.signal(s, self._interrupt) for s in (signal.SIGINT, signal.SIGTERM)}

    def _interrupt(self, signum, _frame):
        import signal

        self.caught = signal.Signals(signum).name
        raise KeyboardInterrupt

    def restore(self) -> None:
        import signal

        for number, handler in self._previous.items():
            signal.signal(number, handler)


def leave(code: int) -> None:
    """End the process without the interpreter's teardown, which frees every object one by one. Speed, proven by
    benchmarks/scale.py's trees (CPU medians, docs/performance.md third round): 1,000 specs 369 -> 347 ms,
    10,000 specs x 5,000 GPUs 2,393 -> 2,301 ms. Everything teardown does that anyone can see still happens:
    atexit handlers run and the streams are flushed; a flush that fails, or a non-daemon thread still running,
    takes the ordinary sys.exit path."""
    import atexit
    import threading

    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if others:  # the interpreter would wait for them
        sys.exit(code)
    atexit._run_exitfuncs()  # gsg registers none; a library's (logging's flush) may
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the interpreter's own exit handles it as always
        sys.exit(code)
    os._exit(code)
