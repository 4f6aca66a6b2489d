"""Reading a large fleet grows with the items, not clusters x workers: 200,000 instances on 20,000 workers in
100 clusters, served page by page by an in-process fake, against a tenth of it (20,000 on 2,000 in 10).

Before the lists were indexed by id, matching instances to workers grew with clusters x workers (over 100 s and
2.2 GB at full size). The ratio is the full-size time over ten times the tenth's: 1.0 is linear. Target: <= 1.5,
and peak memory growth under 1 GiB. Both run under the cyclic-collector settings of a gsg process
(wiring.tune_collector), as the command reads a fleet.

    python benchmarks/large_fleet.py [--instances 200000] [--workers 20000] [--clusters 100]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "adapters" / "gpustack"))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from test_live_fleet import PagedGPUStack  # noqa: E402
from timing import ratio_line  # noqa: E402

from gpustack_guard.adapters.gpustack.client import GPUStackClient, Limits  # noqa: E402
from gpustack_guard.adapters.gpustack.live_fleet import fetch_fleet  # noqa: E402
from gpustack_guard.wiring import tune_collector  # noqa: E402

TARGET = 1.5


def _read(clusters: int, workers: int, instances: int) -> tuple[float, int]:
    server = PagedGPUStack(clusters=clusters, workers=workers, instances=instances)
    client = GPUStackClient("http://gpustack.test", "key", transport=httpx.MockTransport(server.handle),
                            limits=Limits(page_size=1000))
    start = time.perf_counter()
    fleet, _ = fetch_fleet(client, "v2.3.0")
    elapsed = time.perf_counter() - start
    return elapsed, sum(len(c.instances) for c in fleet.clusters)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instances", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=20_000)
    parser.add_argument("--clusters", type=int, default=100)
    opts = parser.parse_args()
    tune_collector()  # the collector settings of a gsg process (cli.main), which this times in-process
    tenth, _ = _read(opts.clusters // 10, opts.workers // 10, opts.instances // 10)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    full, instances = _read(opts.clusters, opts.workers, opts.instances)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss_before
    ratio = full / (10 * tenth)
    print(f"{instances // 10:,} instances on {opts.workers // 10:,} workers: {tenth:6.2f} s")
    print(f"{instances:,} instances on {opts.workers:,} workers: {full:6.2f} s, peak memory +{grown:,.0f} MiB "
          "(target < 1024)")
    print(ratio_line(ratio, TARGET))
    return 0 if ratio <= TARGET and grown < 1024 else 1


if __name__ == "__main__":
    raise SystemExit(main())
