"""What the benchmark scripts share: interleaved best-of timing of commands, and the ratio verdict line."""

from __future__ import annotations

import compileall
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


def ratio_line(ratio: float, target: float) -> str:
    return f"ratio: {ratio:.2f} (target <= {target:g}) {'OK' if ratio <= target else 'OVER TARGET'}"
