"""gsg snapshot: write the live fleet as the snapshot file offline validation reads."""

from __future__ import annotations

from gpustack_guard import wiring
from gpustack_guard.adapters.files.fleet_file import dump_fleet
from gpustack_guard.adapters.files.output import note, write_atomic
from gpustack_guard.adapters.files.yaml_dump import comment
from gpustack_guard.core.errors import EXIT_OK, GsgError
from gpustack_guard.core.values import frozen_value


@frozen_value(eq=True, repr=True)
class SnapshotOptions:
    connection: wiring.ConnectionOptions
    out_path: str
    cluster: str | None = None


def run(opts: SnapshotOptions) -> int:
    out_path, cluster = opts.out_path, opts.cluster or wiring.context_defaults(opts.connection)[1]
    fleet = wiring.connect(opts.connection).fleet()
    if cluster:
        chosen = [c for c in fleet.clusters if c.name == cluster]
        if not chosen:
            raise GsgError(f"cluster '{cluster}' not found (known: {', '.join(c.name for c in fleet.clusters)})")
        fleet = fleet.replace(clusters=chosen)
    # The version and time are the server's words: an escaped one-line comment (they are data fields too).
    header = (comment(f"gsg fleet snapshot of {fleet.server} (GPUStack {fleet.server_version}) at "
                      f"{fleet.captured_at}")
              + comment("`used` is live usage of any process; `allocated` is GPUStack's bookings."))
    write_atomic(out_path, header + dump_fleet(fleet))
    gpus = sum(len(w.gpus) for c in fleet.clusters for w in c.workers)
    workers = sum(len(c.workers) for c in fleet.clusters)
    note(f"gsg: wrote {out_path}: {len(fleet.clusters)} cluster(s), {workers} worker(s), {gpus} GPU(s)")
    return EXIT_OK
