"""Startup cost: `gsg validate specs/ --fleet examples/fleet.yaml` against the import floor of our dependencies.

Prints the best (minimum) wall time of each over several runs and the ratio; target: ratio <= 2.
The minimum is the usual statistic for start-up time: noise from other processes only ever adds.
Run from the repository root: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys

from timing import best_runs, byte_compile_gsg, ratio_line

TARGET = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    floor_cmd = [sys.executable, "-c", "import typer, pydantic, jinja2, yaml"]
    gsg_cmd = [sys.executable, "-m", "gpustack_guard", "validate", "specs/", "--fleet", "examples/fleet.yaml",
               "--offline"]
    byte_compile_gsg()
    best_runs([gsg_cmd], 1)  # warm the template cache and the OS page cache
    (floor, _), (gsg, _) = best_runs([floor_cmd, gsg_cmd], runs)
    ratio = gsg / floor
    print(f"import floor (typer, pydantic, jinja2, yaml): {floor * 1000:7.1f} ms (best of {runs})")
    print(f"gsg validate specs/ --fleet examples/fleet.yaml: {gsg * 1000:7.1f} ms (best of {runs})")
    print(ratio_line(ratio, TARGET))
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
