"""Startup cost: `gsg validate specs/ --fleet examples/fleet.yaml` against the import floor of our dependencies.

Prints the best (minimum) wall time of each over several runs and the ratio; target: ratio <= 2.
The minimum is the usual statistic for start-up time: noise from other processes only ever adds.
Run from the repository root: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.0


def best_times(commands: list[list[str]], runs: int) -> list[float]:
    """Best wall time of each command; runs are interleaved so a slow spell of the machine hits all alike."""
    best = [float("inf")] * len(commands)
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    floor_cmd = [sys.executable, "-c", "import typer, pydantic, jinja2, yaml"]
    gsg_cmd = [sys.executable, "-m", "gpustack_guard", "validate", "specs/", "--fleet", "examples/fleet.yaml",
               "--offline"]
    # pip byte-compiles the dependencies at install time; do the same for gsg (an editable install does not,
    # and PYTHONDONTWRITEBYTECODE would otherwise make every run recompile gsg from source).
    compileall.compile_dir(str(ROOT / "gpustack_guard"), quiet=1)
    best_times([gsg_cmd], 1)  # warm the template cache and the OS page cache
    floor, gsg = best_times([floor_cmd, gsg_cmd], runs)
    ratio = gsg / floor
    print(f"import floor (typer, pydantic, jinja2, yaml): {floor * 1000:7.1f} ms (best of {runs})")
    print(f"gsg validate specs/ --fleet examples/fleet.yaml: {gsg * 1000:7.1f} ms (best of {runs})")
    print(f"ratio: {ratio:.2f} (target <= {TARGET:.1f}) {'OK' if ratio <= TARGET else 'OVER TARGET'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
