"""Startup cost: `gsg validate specs/ --fleet examples/fleet.yaml --offline` against the import floor of our
dependencies, with httpx (every command that talks to a server needs it) and without (validate offline never
imports it).

Prints the median wall time of each over several interleaved runs, each baseline beside its ratio; targets:
<= 1.2 against the floor with httpx, <= 1.5 against the floor without. Medians, because this machine is shared.
Run from the repository root: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys

from timing import byte_compile_gsg, median_runs, versus_line

FLOOR = "typer, pydantic, jinja2, yaml"
TARGET_WITH_HTTPX = 1.2
TARGET_WITHOUT_HTTPX = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    floor_cmd = [sys.executable, "-c", f"import {FLOOR}"]
    floor_httpx_cmd = [sys.executable, "-c", f"import {FLOOR}, httpx"]
    gsg_cmd = [sys.executable, "-m", "gpustack_guard", "validate", "specs/", "--fleet", "examples/fleet.yaml",
               "--offline"]
    byte_compile_gsg()
    median_runs([gsg_cmd], 1)  # warm the template caches and the OS page cache
    (floor, _), (floor_httpx, _), (gsg, result) = median_runs([floor_cmd, floor_httpx_cmd, gsg_cmd], runs)
    print(f"gsg validate specs/ --fleet examples/fleet.yaml --offline: {gsg * 1000:7.1f} ms (median of {runs}, "
          f"exit {result.returncode})")
    lines = [(versus_line("with httpx   ", gsg, f"import {FLOOR}, httpx", floor_httpx, TARGET_WITH_HTTPX),
              gsg / floor_httpx <= TARGET_WITH_HTTPX),
             (versus_line("without httpx", gsg, f"import {FLOOR}       ", floor, TARGET_WITHOUT_HTTPX),
              gsg / floor <= TARGET_WITHOUT_HTTPX)]
    for line, _ in lines:
        print(line)
    return 0 if all(ok for _, ok in lines) and result.returncode in (0, 1) else 1


if __name__ == "__main__":
    raise SystemExit(main())
