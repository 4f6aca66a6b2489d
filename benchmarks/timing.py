"""What the benchmark scripts share: interleaved timing of commands (best-of or median), and the verdict lines."""

from __future__ import annotations

import compileall
import resource
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def byte_compile_gsg() -> None:
    """pip byte-compiles an installed package; an editable install does not, and PYTHONDONTWRITEBYTECODE would
    otherwise make every timed run compile gsg from source."""
    compileall.compile_dir(str(ROOT / "gpustack_guard"), quiet=1)


def best_runs(commands: list[list[str]], runs: int) -> list[tuple[float, subprocess.CompletedProcess]]:
    """Best (minimum) wall time and last result of each command. Runs interleave, so a slow spell of the
    machine hits every command alike; the minimum, because noise from other processes only ever adds."""
    best = [float("inf")] * len(commands)
    last: list = [None] * len(commands)
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            start = time.perf_counter()
            last[i] = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            best[i] = min(best[i], time.perf_counter() - start)
    return list(zip(best, last))


def median_runs(commands: list[list[str]], runs: int) -> list[tuple[float, subprocess.CompletedProcess]]:
    """Median wall time and last result of each command, runs interleaved. The median, not the minimum, where
    the machine is shared (other CPU-heavy work on 2 cores): one lucky run of the baseline or of gsg would
    decide a best-of ratio; half the runs must be that fast for the median."""
    times: list[list[float]] = [[] for _ in commands]
    last: list = [None] * len(commands)
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            start = time.perf_counter()
            last[i] = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            times[i].append(time.perf_counter() - start)
    return [(statistics.median(t), result) for t, result in zip(times, last)]


def median_runs_cpu(commands: list[list[str]], runs: int) -> list[tuple[float, float, subprocess.CompletedProcess]]:
    """Median wall time, median CPU time (user + system of the child, from getrusage) and last result of each
    command, runs interleaved. CPU time moves by a few % where wall time moves by tens on a shared machine."""
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    last: list = [None] * len(commands)
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            last[i] = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            walls[i].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[i].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return [(statistics.median(w), statistics.median(c), result) for w, c, result in zip(walls, cpus, last)]


def versus_line(what: str, measured: float, baseline_name: str, baseline: float, target: float) -> str:
    """One verdict: the command's time beside the baseline's, the ratio and its target."""
    ratio = measured / baseline
    verdict = "OK" if ratio <= target else "OVER TARGET"
    return (f"{what}: {measured * 1000:7.1f} ms vs {baseline_name} {baseline * 1000:7.1f} ms: ratio {ratio:.2f} "
            f"(target <= {target:g}) {verdict}")


def ratio_line(ratio: float, target: float) -> str:
    return f"ratio: {ratio:.2f} (target <= {target:g}) {'OK' if ratio <= target else 'OVER TARGET'}"
