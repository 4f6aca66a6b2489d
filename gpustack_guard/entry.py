"""The `gsg` console script: switch the cyclic GC off before importing the CLI (see gpustack_guard.cli.main)."""

import gc


def main() -> int:
    gc.disable()
    from gpustack_guard.cli import main as cli_main

    return cli_main()
