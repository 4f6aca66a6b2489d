"""`python -m gpustack_guard` and the `gsg` console script (pyproject.toml points it at `entry` here)."""

import gc

# wiring.COLLECTOR_THRESHOLDS, repeated so that nothing is imported before they apply (a test keeps them equal)
COLLECTOR_THRESHOLDS = (100_000, 20, 100)


def entry() -> None:
    """Tune the cyclic collector before the first import, then run the CLI. Importing typer, pydantic, jinja2,
    PyYAML and gsg's modules allocates enough to trigger ~70 collector passes at the default threshold, each
    finding nothing: ~14 ms of CPU of a ~160 ms quickstart (docs/performance.md, seventh round). main() applies
    the same thresholds again and freezes what start-up built."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    import os
    import sys

    from gpustack_guard.console.quick_validate import parse

    values = parse(sys.argv[1:], os.environ)
    if values is None:  # every other run: typer's command line
        from gpustack_guard.cli import entry as run_cli

        run_cli()
        return
    # a plain validate run, read as typer reads it, without importing typer (quick_validate says why)
    from gpustack_guard.console import quick_validate
    from gpustack_guard.console.process import leave, run_guarded
    from gpustack_guard.wiring import leave_without_teardown

    leave_without_teardown()
    leave(run_guarded(lambda: quick_validate.run(values)))


if __name__ == "__main__":
    entry()
